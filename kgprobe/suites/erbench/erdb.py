"""Load a relational database into the warehouse's ``erdb`` schema, with its declared FDs and foreign keys checked.

Sources: CSV or Parquet files (DuckDB's readers), a DuckDB file (opened read-only), a SQLite file and a PostgreSQL
database (the Arrow-native ADBC drivers ``adbc-driver-sqlite`` / ``adbc-driver-postgresql``; the PostgreSQL URI is
read from the environment variable the spec names, and never logged or stored).

Every row read is accounted for, as in KG ingestion (:mod:`kgprobe.kg.ingest`): it is loaded into
``erdb.<relation>`` or written to ``erdb._rejects`` with its relation, row number, values and a reason, so that
``read == loaded + rejected`` per relation. Rows are rejected, in this order, for a NULL in a column that a key, an
FD or a foreign key uses; for repeating an earlier row exactly; with ``fd_violations="drop"``, for violating a
declared FD (every row of a left-hand side that maps to two or more right-hand sides: which one is true cannot be
told); and for a foreign-key value with no match in the referenced relation (declared order, one pass). By default
(``fd_violations="keep"``) FD-violating rows are loaded and only counted, as the paper asks about its tables as
they are. Bad input is an :class:`~kgprobe.errors.IngestError` naming the table and column: a missing
column, a table with no rows, a key that is not unique after the rejects above, and an FD that fails on most rows
(more than half: the FD is wrong, not the data). Each load gets a snapshot id (a hash of the spec and the loaded
rows), appended to ``erdb._snapshots``; ``erdb._constraints`` lists every FD and FK with its violating rows.

    >>> report = load_erdb(con, load_spec("sample/erdb/erdb.yaml", config_dir="examples"))
    >>> report.tables["movies"]   # {'read': 110, 'loaded': 110, 'rejected': 0}
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from kgprobe.errors import IngestError
from kgprobe.kg.ingest import _check_file, _registered
from kgprobe.secrets import register_secret
from kgprobe.sql import load_sql, quote_identifier
from kgprobe.suites.erbench.spec import ERSpec, Relation, identifier

__all__ = ["FD_VIOLATIONS", "SCHEMA", "ErdbReport", "current_erdb_snapshot", "load_erdb", "read_relation"]

#: The warehouse schema the relational database is loaded into.
SCHEMA = "erdb"
#: What a load does with rows that violate a declared FD: keep them (the paper) or reject them.
FD_VIOLATIONS = ("keep", "drop")
#: An FD that fails on more than this share of its rows is an error, not a data problem.
FD_ERROR_SHARE = 0.5


@dataclass(frozen=True)
class ErdbReport:
    """What one :func:`load_erdb` call did: per relation ``{read, loaded, rejected}`` (read == loaded + rejected),
    the rows each FD and FK check excluded, the reject reasons and the snapshot id."""

    snapshot_id: str
    source: str
    tables: Mapping[str, Mapping[str, int]]
    fd_violations: Mapping[str, int] = field(default_factory=dict)
    fk_violations: Mapping[str, int] = field(default_factory=dict)
    reasons: Mapping[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def read(self) -> int:
        return sum(t["read"] for t in self.tables.values())

    @property
    def loaded(self) -> int:
        return sum(t["loaded"] for t in self.tables.values())

    @property
    def rejected(self) -> int:
        return sum(t["rejected"] for t in self.tables.values())

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(read=self.read, loaded=self.loaded, rejected=self.rejected)
        return out


# ------------------------------------------------------------------------------------------------------ reading
def _q(name: str) -> str:
    return quote_identifier(identifier(name, "identifier"))


def read_relation(con: duckdb.DuckDBPyConnection, spec: ERSpec, rel: Relation) -> pa.Table:
    """The rows of one relation as Arrow, read from the spec's source (all source columns, as stored there)."""
    src = spec.source
    if src.kind in ("csv", "parquet"):
        path = Path(src.path or ".") / rel.source
        _check_file(path, f"relation {rel.name}")
        reader = "read_csv(?, header = true)" if src.kind == "csv" else "read_parquet(?)"
        try:
            return con.execute(f"SELECT * FROM {reader}", [str(path)]).to_arrow_table()
        except duckdb.Error as exc:
            raise IngestError(f"relation {rel.name}: cannot read {path} ({str(exc).splitlines()[0]})") from exc
    table = identifier(rel.source, f"relation {rel.name}: source table")
    if src.kind == "duckdb":
        _check_file(Path(src.path or ""), f"DuckDB database of relation {rel.name}")
        with duckdb.connect(str(src.path), read_only=True) as other:
            try:
                return other.execute(f"SELECT * FROM {quote_identifier(table)}").to_arrow_table()
            except duckdb.Error as exc:
                raise IngestError(f"relation {rel.name}: table {table} not readable in {src.path} "
                                  f"({str(exc).splitlines()[0]})") from exc
    if src.kind == "sqlite":
        import adbc_driver_sqlite.dbapi as sqlite

        _check_file(Path(src.path or ""), f"SQLite database of relation {rel.name}")
        uri = f"file:{src.path}?mode=ro"
        with sqlite.connect(uri) as conn, conn.cursor() as cur:
            try:
                cur.execute(f"SELECT * FROM {quote_identifier(table)}")
                return cur.fetch_arrow_table()
            except Exception as exc:  # the driver raises its own DB-API errors
                raise IngestError(f"relation {rel.name}: table {table} not readable in SQLite file {src.path} "
                                  f"({str(exc).splitlines()[0]})") from exc
    if src.kind == "postgres":
        import adbc_driver_postgresql.dbapi as pg

        uri = os.environ.get(src.uri_env or "")
        register_secret(uri)
        if not uri:
            raise IngestError(f"relation {rel.name}: environment variable {src.uri_env} (the PostgreSQL connection "
                              "URI) is not set; export it before loading")
        qualified = (f"{quote_identifier(identifier(src.schema, 'source.schema'))}.{quote_identifier(table)}"
                     if src.schema else quote_identifier(table))
        try:
            with pg.connect(uri) as conn, conn.cursor() as cur:
                cur.execute(f"SELECT * FROM {qualified}")
                return cur.fetch_arrow_table()
        except Exception as exc:
            # the message of a failed connection may echo the URI; name the variable instead
            msg = str(exc).splitlines()[0].replace(uri, f"${src.uri_env}")
            raise IngestError(f"relation {rel.name}: cannot read table {table} from PostgreSQL "
                              f"(${src.uri_env}): {msg}") from exc
    raise IngestError(f"unknown source kind {src.kind!r}")


# ------------------------------------------------------------------------------------------------------ loading
def _stage(con: duckdb.DuckDBPyConnection, rel: Relation, data: pa.Table) -> int:
    present = set(data.column_names)
    missing = [f"{name} (source column {src!r})" if src != name else name
               for name, src in rel.columns.items() if src not in present]
    if missing:
        raise IngestError(f"table {rel.name}: missing column(s) {', '.join(missing)}; the source has "
                          f"{', '.join(data.column_names) or 'no columns'}. Fix the spec's columns or the data")
    if data.num_rows == 0:
        raise IngestError(f"table {rel.name}: no rows to load (source {rel.source}); a relation needs rows to ask "
                          "questions about")
    cols = ", ".join(f"{quote_identifier(src, what=f'table {rel.name}: source column')} AS {_q(name)}"
                     for name, src in rel.columns.items())
    with _registered(con, data) as view:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {_q('_st_' + rel.name)} AS "
                    f"SELECT row_number() OVER () AS _row, {cols} FROM {view}")
    return data.num_rows


def _reject(con: duckdb.DuckDBPyConnection, rel: str, where: str, reason_sql: str,
            params: Mapping[str, Any] | None = None) -> int:
    """Record every row of ``rel`` that ``where`` selects and no earlier check rejected; returns how many."""
    st = _q("_st_" + rel)
    before = con.execute("SELECT count(*) FROM _erdb_rejects").fetchone()[0]
    con.execute(f"INSERT INTO _erdb_rejects SELECT $rel, s._row, {reason_sql} FROM {st} s WHERE ({where}) "
                "AND s._row NOT IN (SELECT row FROM _erdb_rejects WHERE relation = $rel)", {"rel": rel, **(params or {})})
    return con.execute("SELECT count(*) FROM _erdb_rejects").fetchone()[0] - before


def _live(rel: str) -> str:
    return f"(SELECT * FROM {_q('_st_' + rel)} WHERE _row NOT IN (SELECT row FROM _erdb_rejects WHERE relation = '{rel}'))"


def load_erdb(con: duckdb.DuckDBPyConnection, spec: ERSpec | str | Path | Mapping[str, Any], *,
              config_dir: str | Path = ".", schema: str = SCHEMA, fd_violations: str = "keep") -> ErdbReport:
    """Load every relation of ``spec`` (an :class:`ERSpec`, or a YAML file / mapping read with
    :func:`~kgprobe.suites.erbench.spec.load_spec` relative to ``config_dir``) into ``schema`` of ``con`` (a
    writable warehouse connection), check the declared FDs and FKs, and return the :class:`ErdbReport` (see the
    module docstring). Re-loading replaces the tables; the snapshot id is the same whenever the spec and the loaded
    rows are. ``fd_violations``: ``keep`` loads the rows that violate an FD (the paper asks about its tables as they
    are; they are counted in the report and in ``_constraints``), ``drop`` rejects them."""
    if fd_violations not in FD_VIOLATIONS:
        raise ValueError(f"fd_violations must be one of {', '.join(FD_VIOLATIONS)}, got {fd_violations!r}")
    from kgprobe.suites.erbench.spec import load_spec

    started = time.perf_counter()
    if not isinstance(spec, ERSpec):
        spec = load_spec(spec, config_dir=config_dir)
    schema = identifier(schema, "erdb schema")
    data = {name: read_relation(con, spec, rel) for name, rel in spec.relations.items()}
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE _erdb_rejects (relation VARCHAR, row BIGINT, reason VARCHAR)")
        read = {name: _stage(con, spec.relations[name], table) for name, table in data.items()}
        violating: dict[str, int] = {}
        fk_violations: dict[str, int] = {}
        for name, rel in spec.relations.items():
            used: dict[str, str] = {c: f"key of {name}" for c in rel.key}
            for fd in spec.fds_of(name):
                for c in (*fd.lhs, *fd.rhs):
                    used.setdefault(c, f"FD {fd.name}")
            for fk in spec.foreign_keys:
                if fk.relation == name and fk.checked:
                    used.setdefault(fk.column, f"foreign key {fk.label}")
            for col, why in used.items():
                _reject(con, name, f"s.{_q(col)} IS NULL", "$reason", {"reason": f"NULL in column {col} ({why})"})
            cols = ", ".join(_q(c) for c in rel.columns)
            _reject(con, name, f"s._row IN (SELECT _row FROM (SELECT _row, row_number() OVER (PARTITION BY {cols} "
                               f"ORDER BY _row) AS k FROM {_q('_st_' + name)}) WHERE k > 1)",
                    "'exact duplicate of an earlier row'")
            for fd in spec.fds_of(name):
                lhs = ", ".join(_q(c) for c in fd.lhs)
                differs = " OR ".join(f"min({_q(c)}) IS DISTINCT FROM max({_q(c)})" for c in fd.rhs)
                # the rows of every left-hand side with two or more right-hand sides, computed once
                con.execute(f"CREATE OR REPLACE TEMP TABLE _erdb_fd AS SELECT s._row FROM {_live(name)} s SEMI JOIN "
                            f"(SELECT {lhs} FROM {_live(name)} l GROUP BY {lhs} HAVING {differs}) v ON "
                            + " AND ".join(f"v.{_q(c)} = s.{_q(c)}" for c in fd.lhs))
                candidates = con.execute(f"SELECT count(*) FROM {_live(name)}").fetchone()[0]
                n_bad = con.execute("SELECT count(*) FROM _erdb_fd").fetchone()[0]
                if candidates and n_bad > FD_ERROR_SHARE * candidates:
                    raise IngestError(f"table {name}: FD {fd.name} ({', '.join(fd.lhs)} -> {', '.join(fd.rhs)}) fails on "
                                      f"{n_bad} of {candidates} rows; the dependency does not hold in this data. Fix "
                                      "the FD's columns in the spec")
                if fd_violations == "keep":
                    violating[fd.name] = n_bad
                    continue
                violating[fd.name] = _reject(
                    con, name, "s._row IN (SELECT _row FROM _erdb_fd)", "$reason",
                    {"reason": f"violates FD {fd.name} ({', '.join(fd.lhs)} -> {', '.join(fd.rhs)}): its left-hand "
                               "side has more than one right-hand side"})
            if rel.key:
                key = ", ".join(_q(c) for c in rel.key)
                dup = con.execute(f"SELECT {key}, count(*) AS n FROM {_live(name)} GROUP BY {key} HAVING count(*) > 1 "
                                  "ORDER BY n DESC LIMIT 3").fetchall()
                if dup:
                    raise IngestError(f"table {name}: key ({', '.join(rel.key)}) is not unique; e.g. {dup[0][:-1]} occurs "
                                      f"{dup[0][-1]} times. Fix the data or declare the right key")
        for fk in spec.foreign_keys:
            if not fk.checked:
                continue
            ref = _live(fk.ref_relation)
            fk_violations[fk.label] = _reject(
                con, fk.relation, f"s.{_q(fk.column)} NOT IN (SELECT {_q(fk.ref_column)} FROM {ref} "
                                  f"WHERE {_q(fk.ref_column)} IS NOT NULL)",
                "$reason", {"reason": f"foreign key {fk.label}: no matching {fk.ref_relation} row"})
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {_q(schema)}")
        tables: dict[str, dict[str, int]] = {}
        for name, rel in spec.relations.items():
            cols = ", ".join(_q(c) for c in rel.columns)
            con.execute(f"CREATE OR REPLACE TABLE {_q(schema)}.{_q(name)} AS SELECT {cols} FROM {_live(name)} "
                        "ORDER BY _row")
            loaded = con.execute(f"SELECT count(*) FROM {_q(schema)}.{_q(name)}").fetchone()[0]
            rejected = con.execute("SELECT count(*) FROM _erdb_rejects WHERE relation = $r", {"r": name}).fetchone()[0]
            if loaded + rejected != read[name]:
                raise AssertionError(f"row accounting is off for {name}: read {read[name]}, loaded {loaded}, "
                                     f"rejected {rejected}")
            tables[name] = {"read": read[name], "loaded": loaded, "rejected": rejected}
        parts = [_rejects_select(spec, name) for name in spec.relations]
        con.execute(f"CREATE OR REPLACE TABLE {_q(schema)}._rejects AS " + " UNION ALL ".join(parts)
                    + " ORDER BY relation, row")
        reasons = dict(Counter(dict(con.execute("SELECT reason, count(*) FROM _erdb_rejects GROUP BY reason").fetchall())))
        snapshot = _snapshot(con, spec, schema)
        con.execute(load_sql("erbench/create_snapshots").replace("erdb.", f"{_q(schema)}."))
        constraints = ([{"kind": "fd", "name": fd.name, "relation": fd.relation,
                         "definition": f"{', '.join(fd.lhs)} -> {', '.join(fd.rhs)}", "violations": violating[fd.name]}
                        for fd in spec.fds]
                       + [{"kind": "fk", "name": fk.label, "relation": fk.relation, "definition": fk.label,
                           "violations": fk_violations.get(fk.label, 0)} for fk in spec.foreign_keys])
        con.execute(f"CREATE OR REPLACE TABLE {_q(schema)}._constraints (kind VARCHAR, name VARCHAR, relation VARCHAR, "
                    "definition VARCHAR, violations BIGINT)")
        if constraints:
            with _registered(con, pa.Table.from_pylist(constraints)) as view:
                con.execute(f"INSERT INTO {_q(schema)}._constraints SELECT kind, name, relation, definition, violations "
                            f"FROM {view}")
        report = ErdbReport(snapshot_id=snapshot, source=spec.source.kind, tables=tables, fd_violations=violating,
                            fk_violations=fk_violations, reasons=reasons,
                            seconds=round(time.perf_counter() - started, 3))
        con.execute(f"INSERT INTO {_q(schema)}._snapshots VALUES ($id, $spec, $kind, $read, $loaded, $rejected, $at, "
                    "$report)", {"id": snapshot, "spec": spec.name, "kind": spec.source.kind, "read": report.read,
                                 "loaded": report.loaded, "rejected": report.rejected,
                                 "at": _dt.datetime.now(_dt.UTC).replace(tzinfo=None),
                                 "report": json.dumps(report.as_dict())})
        for name in spec.relations:
            con.execute(f"DROP TABLE IF EXISTS {_q('_st_' + name)}")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return report


def _rejects_select(spec: ERSpec, name: str) -> str:
    cols = ", ".join(f"{_q(c)} := s.{_q(c)}" for c in spec.relations[name].columns)
    return (f"SELECT r.relation, r.row, r.reason, CAST(to_json(struct_pack({cols})) AS VARCHAR) AS record "
            f"FROM _erdb_rejects r JOIN {_q('_st_' + name)} s ON s._row = r.row WHERE r.relation = '{name}'")


def _snapshot(con: duckdb.DuckDBPyConnection, spec: ERSpec, schema: str) -> str:
    h = hashlib.sha256()
    plain = spec.as_dict()
    plain.pop("origin", None)
    plain.pop("source", None)
    h.update(json.dumps(plain, sort_keys=True, default=str).encode())
    for name, rel in spec.relations.items():
        cols = ", ".join(f"CAST({_q(c)} AS VARCHAR)" for c in rel.columns)
        n, digest = con.execute(f"SELECT count(*), CAST(coalesce(sum(hash({cols})), 0) AS VARCHAR) "
                                f"FROM {_q(schema)}.{_q(name)}").fetchone()
        h.update(f"{name}:{n}:{digest};".encode())
    return h.hexdigest()[:16]


def current_erdb_snapshot(con: duckdb.DuckDBPyConnection, schema: str = SCHEMA) -> str | None:
    """The id of the latest load of ``schema`` (None when it was never loaded)."""
    try:
        row = con.execute(f"SELECT id FROM {_q(schema)}._snapshots ORDER BY loaded_at DESC LIMIT 1").fetchone()
    except duckdb.CatalogException:
        return None
    return row[0] if row else None
