"""Candidate functional dependencies of a table, found in its data, for an ERBench spec a person reviews.

A standard level-wise pass (as TANE's, without its partitions): for every column ``A`` and every set ``X`` of other
columns of at most ``max_lhs`` columns, smallest first, ``X -> A`` is a candidate when the rows that break it (the
g3 error: rows to drop so that each ``X`` value has one ``A`` value) are at most ``max_violation_share`` of the
rows; a superset of a candidate's left-hand side is not tried again for the same ``A`` (only minimal FDs). Each
candidate carries its evidence: ``groups`` (distinct ``X`` values), ``support`` (those shared by two or more rows,
where the data could have broken the FD), ``violations`` and whether ``X`` is a key of the table (a key FD,
``iata -> name``: it holds by construction in the data, and in the world when the key is an identifier). Row-number
columns (an unnamed pandas index) are left out. Two rules keep the candidates to those that say something:

* a right-hand side that is **nearly constant** is left out: when its most common value is in at least
  ``max_constant_share`` (default :data:`CONSTANT_SHARE`, 90%) of the rows, any left side "determines" it, and a
  model that always names that value is right nine times in ten without knowing the record (3,372 of 3,376
  airports in the USA: ``city -> country`` says nothing);
* a **measurement** column (numbers with a fractional part: a latitude, a price) is on a left side only together
  with one other measurement and nothing else (``latitude, longitude -> name``): alone it is unique in the data
  only by the precision of its digits, and ``latitude -> name`` holds in no world.

Tables come from a CSV file, a SQLite file or a DuckDB file (:func:`read_table`, which tells them apart by their
first bytes); :func:`choose_fds` picks the FDs a starter spec asks and :func:`erbench_spec` writes that spec.

    >>> [(c.lhs, c.rhs) for c in discover_fds(read_table("soccer.csv"), relation="soccer")][:1]
    [(('entity1', 'entity2', 'entity3'), 'common_entity')]
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import polars as pl

from kgprobe.errors import ConfigError

__all__ = ["CONSTANT_SHARE", "FDCandidate", "TableRef", "choose_fds", "database_kind", "discover_fds",
           "entity_name_column", "erbench_spec", "identifying_fd", "list_tables", "read_table", "table_frame"]

#: A right-hand side whose most common value is in at least this share of the rows is nearly constant: no FD to it.
CONSTANT_SHARE = 0.9
_NUMBER = re.compile(r"^[+-]?\d+(\.\d*)?([eE][+-]?\d+)?$")
_FRACTION = re.compile(r"^[+-]?\d*\.\d*[1-9]\d*([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class FDCandidate:
    """``lhs -> rhs`` on ``relation``, with its evidence in the data."""

    relation: str
    lhs: tuple[str, ...]
    rhs: str
    rows: int
    groups: int
    support: int
    violations: int
    lhs_is_key: bool

    def as_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["lhs"] = list(self.lhs)
        return row


@dataclass(frozen=True)
class TableRef:
    """One table of a database file: ``path`` (SQLite or DuckDB), its ``kind`` and the ``table`` name there."""

    path: Path
    kind: str
    table: str


def database_kind(path: str | Path) -> str | None:
    """``sqlite`` or ``duckdb`` for a database file (told by its first bytes, whatever its name), else None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return None
    if head.startswith(b"SQLite format 3\x00"):
        return "sqlite"
    if head[8:12] == b"DUCK":
        return "duckdb"
    return None


def list_tables(path: str | Path, kind: str) -> list[str]:
    """The tables (and views) of a SQLite or DuckDB file, by name."""
    if kind == "sqlite":
        import sqlite3

        with sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True) as con:
            rows = con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE "
                               "'sqlite_%' ORDER BY name").fetchall()
        return [r[0] for r in rows]
    import duckdb

    with duckdb.connect(str(path), read_only=True) as con:
        rows = con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
                           "ORDER BY table_name").fetchall()
    return [r[0] for r in rows]


def _read_database(path: Path, kind: str, table: str | None) -> pl.DataFrame:
    from kgprobe.sql import quote_identifier

    tables = list_tables(path, kind)
    if table is None:
        if len(tables) != 1:
            raise ConfigError(f"{path} holds {len(tables)} tables ({', '.join(tables) or 'none'}); name the one to "
                              f"ask about after a '#': db: {path.name}#{tables[0] if tables else '<table>'}")
        table = tables[0]
    if table not in tables:
        raise ConfigError(f"{path} has no table {table!r}; its tables: {', '.join(tables) or 'none'}")
    if kind == "sqlite":
        import sqlite3

        with sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True) as con:
            cur = con.execute(f"SELECT * FROM {quote_identifier(table)}")
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
        return pl.DataFrame([[None if v is None else str(v) for v in col] for col in zip(*rows, strict=True)]
                            if rows else [[] for _ in names], schema=dict.fromkeys(names, pl.String), orient="col")
    import duckdb

    with duckdb.connect(str(path), read_only=True) as con:
        columns = [r[0] for r in con.execute(f"DESCRIBE {quote_identifier(table)}").fetchall()]
        select = ", ".join(f"CAST({quote_identifier(c)} AS VARCHAR) AS {quote_identifier(c)}" for c in columns)
        return pl.from_arrow(con.execute(f"SELECT {select} FROM {quote_identifier(table)}").to_arrow_table())


def read_table(path: str | Path | TableRef, table: str | None = None) -> pl.DataFrame:
    """A table as strings (values compared as written): a CSV file with a header row, or ``table`` of a SQLite or
    DuckDB file (the only one when ``table`` is None); a :class:`ConfigError` naming the file otherwise."""
    if isinstance(path, TableRef):
        path, table = path.path, path.table
    path = Path(path)
    kind = database_kind(path)
    if kind is not None:
        try:
            return _read_database(path, kind, table)
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - sqlite3 and duckdb raise their own kinds
            raise ConfigError(f"cannot read {path} as a {kind} database ({str(exc).splitlines()[0]})") from exc
    try:
        return pl.read_csv(path, infer_schema_length=0)
    except Exception as exc:  # noqa: BLE001 - polars raises several kinds for a bad file
        raise ConfigError(f"cannot read {path} as CSV ({exc}); give a CSV file with a header row, or a SQLite or "
                          "DuckDB file") from exc


def table_frame(where: str | Path | TableRef) -> tuple[pl.DataFrame, dict[str, str]]:
    """A table as :func:`read_table` reads it, without row-number columns, its columns renamed to SQL identifiers
    (``Airport Name`` -> ``airport_name``), and the names (identifier -> the column in the source)."""
    frame = read_table(where)
    names: dict[str, str] = {}
    for c in (c for c in frame.columns if not _row_number(frame, c)):
        safe = c if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", c) else \
            (re.sub(r"\W+", "_", c).strip("_").lower() or "column")[:60]
        safe = f"c_{safe}" if safe[0].isdigit() else safe
        while safe in names:
            safe += "_"
        names[safe] = c
    return frame.select(list(names.values())).rename({v: k for k, v in names.items()}), names


def _row_number(frame: pl.DataFrame, column: str) -> bool:
    if column == "" or column.lower() in ("index", "unnamed: 0") or column.startswith("Unnamed"):
        return True
    values = frame.get_column(column)
    if values.null_count() or values.n_unique() != frame.height:
        return False
    as_int = values.cast(pl.Int64, strict=False)
    return as_int.null_count() == 0 and sorted(as_int.to_list()) == list(range(as_int.min(), as_int.min() + frame.height))


def _g3(frame: pl.DataFrame, lhs: list[str], rhs: str) -> tuple[int, int, int]:
    """(violations, groups, support) of ``lhs -> rhs``."""
    counts = frame.group_by([*lhs, rhs]).len()
    per_lhs = counts.group_by(lhs).agg(pl.col("len").max().alias("top"), pl.col("len").sum().alias("rows"))
    violations = frame.height - int(per_lhs.get_column("top").sum())
    return violations, per_lhs.height, int((per_lhs.get_column("rows") >= 2).sum())


def _values(frame: pl.DataFrame, column: str) -> list[str]:
    return [v for v in frame.get_column(column).cast(pl.String).to_list() if v is not None and v.strip()]


def measurements(frame: pl.DataFrame, columns: Sequence[str]) -> list[str]:
    """The columns whose values are all numbers and mostly have a fractional part (a latitude, a price)."""
    out = []
    for c in columns:
        values = _values(frame, c)
        if values and all(_NUMBER.match(v.strip()) for v in values) and \
                sum(bool(_FRACTION.match(v.strip())) for v in values) > len(values) / 2:
            out.append(c)
    return out


def _constant(frame: pl.DataFrame, column: str, share: float) -> bool:
    if frame.height == 0:
        return True
    top = frame.get_column(column).value_counts(sort=True).row(0)[1]
    return top >= share * frame.height


def discover_fds(frame: pl.DataFrame, *, relation: str, max_lhs: int = 3, max_violation_share: float = 0.01,
                 max_constant_share: float = CONSTANT_SHARE) -> list[FDCandidate]:  # fmt: skip
    """The minimal candidate FDs of ``frame`` (see the module docstring), those with the most support first."""
    if max_lhs < 1:
        raise ConfigError(f"max_lhs must be at least 1, got {max_lhs}")
    columns = [c for c in frame.columns if not _row_number(frame, c)]
    frame = frame.select(columns)
    measured = set(measurements(frame, columns))
    out: list[FDCandidate] = []
    for rhs in columns:
        if _constant(frame, rhs, max_constant_share):
            continue
        others = [c for c in columns if c != rhs]
        found: list[frozenset[str]] = []
        for size in range(1, min(max_lhs, len(others)) + 1):
            for lhs in itertools.combinations(others, size):
                if measured & set(lhs) and not (size == 2 and set(lhs) <= measured):
                    continue  # a measurement only as a pair of them (latitude, longitude)
                if any(f <= set(lhs) for f in found):
                    continue
                violations, groups, support = _g3(frame, list(lhs), rhs)
                if violations <= max_violation_share * frame.height:
                    found.append(frozenset(lhs))
                    out.append(FDCandidate(relation, tuple(lhs), rhs, frame.height, groups, support, violations,
                                           groups == frame.height))
    return sorted(out, key=lambda c: (c.lhs_is_key, -c.support, c.violations, len(c.lhs), c.lhs, c.rhs))


def identifying_fd(frame: pl.DataFrame, *, relation: str, max_violation_share: float = 0.01) -> FDCandidate | None:
    """The FD ERBench builds most questions on: every other column determines the entity's name, taken to be the
    column with the most distinct values ("nationality, club, jersey number -> player name"); None when the data
    breaks it. It is rarely minimal (a subset of its left-hand side is often a key already), so
    :func:`discover_fds` does not list it."""
    columns = [c for c in frame.columns if not _row_number(frame, c)]
    if len(columns) < 2:
        return None
    frame = frame.select(columns)
    rhs = max(columns, key=lambda c: (frame.get_column(c).n_unique(), -columns.index(c)))
    lhs = [c for c in columns if c != rhs]
    violations, groups, support = _g3(frame, lhs, rhs)
    if violations > max_violation_share * frame.height:
        return None
    return FDCandidate(relation, tuple(lhs), rhs, frame.height, groups, support, violations, groups == frame.height)


def entity_name_column(frame: pl.DataFrame) -> str | None:
    """The column that names the table's entity: one headed ``name`` / ``title`` / ``label`` (or ending so), else
    the text column (not numbers, not short codes) with the most distinct values; None when there is none."""
    columns = [c for c in frame.columns if not _row_number(frame, c)]
    measured = set(measurements(frame, columns))

    def score(c: str) -> tuple:
        values = _values(frame, c)
        words = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", c).lower().replace(" ", "_").split("_")
        named = words[-1] in ("name", "title", "label") or c.lower() in ("name", "title", "label", "common_entity")
        numeric = c in measured or bool(values) and all(_NUMBER.match(v.strip()) for v in values)
        code = bool(values) and all(re.fullmatch(r"[A-Z0-9]{1,5}", v.strip()) for v in values)
        return (named, not numeric and not code, frame.get_column(c).n_unique(), -columns.index(c))

    best = max(columns, key=score, default=None)
    return best if best is not None and score(best)[:2] != (False, False) else None


def _empty_share(frame: pl.DataFrame, column: str) -> float:
    if frame.height == 0:
        return 1.0
    return 1 - len(_values(frame, column)) / frame.height


def choose_fds(frame: pl.DataFrame, candidates: Sequence[FDCandidate], *, relation: str, per_relation: int = 5,
               max_naming: int = 3) -> list[FDCandidate]:  # fmt: skip
    """The FDs a starter spec asks about ``relation``, at most ``per_relation``, **one per left-hand side** (two FDs
    with one left side would ask one question twice, expecting two answers): first those that name the entity
    (``X -> name``, :func:`entity_name_column`), at most ``max_naming``, fewest columns and exact keys first
    (``iata -> name``, ``latitude, longitude -> name``; minimal, so not "every other column -> name", which
    repeats them with more clues); then one fact per further left side that holds the name or is a key (``name, state ->
    city``), its right side a column of words (not a code or a measurement) with the most distinct values; then
    the other FDs that the data could have broken (``zip -> city``, support above 0), most support first, of two
    one-to-one columns (a country code and a country) one direction only. A left side with an empty value in some row
    is not used (its question would have an empty slot)."""
    name = entity_name_column(frame)
    usable = [c for c in candidates if c.relation == relation
              and all(_empty_share(frame, x) == 0 for x in c.lhs) and _empty_share(frame, c.rhs) <= 0.01]
    chosen: list[FDCandidate] = []
    if name is not None:
        naming = sorted((c for c in usable if c.rhs == name),
                        key=lambda c: (len(c.lhs), not c.lhs_is_key, c.violations, -c.groups, c.lhs))
        chosen += naming[:max_naming]
    n_unique = {c: frame.get_column(c).n_unique() for c in frame.columns}
    facts = [c for c in usable if c.rhs != name and (name in c.lhs or c.lhs_is_key)]
    codes = set(measurements(frame, frame.columns)) | {c for c in frame.columns if _column_words(frame, c).isupper()}
    # a fact a person would name in words (a city before an IATA code or a latitude), then the most informative
    facts.sort(key=lambda c: (name not in c.lhs, len(c.lhs), c.violations, c.rhs in codes, -n_unique[c.rhs], c.lhs,
                              c.rhs))
    chosen += facts
    # then the FDs between other columns that the data could have broken (zip -> city), most support first
    chosen += [c for c in usable if c.rhs != name and c.support > 0]
    out, seen = [], set()
    for c in chosen:
        if frozenset(c.lhs) in seen or any(o.lhs == (c.rhs,) and c.lhs == (o.rhs,) for o in out):
            continue  # one question per left side; of two one-to-one columns (code <-> country), one direction
        seen.add(frozenset(c.lhs))
        out.append(c)
    return out[:per_relation]


#: Abbreviations in column names that a question spells out ("whose latitude is", not "whose lat is").
_SPELLED = {"lat": "latitude", "lon": "longitude", "lng": "longitude", "elev": "elevation", "dob": "date of birth",
            "qty": "quantity"}


def _words(column: str) -> str:
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", column).replace("_", " ").lower().split()
    if words == ["long"]:
        return "longitude"
    return " ".join(_SPELLED.get(w, w) for w in words) or column


def _column_words(frame: pl.DataFrame, column: str) -> str:
    """A column's name as words in a question; a short name whose values are codes in capitals reads as an
    acronym (``iata`` -> "IATA")."""
    values = _values(frame, column)[:1000]
    if len(column) <= 4 and values and all(re.fullmatch(r"[A-Z0-9]{2,5}", v.strip()) for v in values) and \
            any(re.search(r"[A-Z]", v) for v in values):  # a year (1997) is no code
        return column.upper()
    return _words(column)


def singular(noun: str) -> str:
    """"airports" -> "airport", "cities" -> "city"; a noun that does not look plural is kept."""
    words = noun.split()
    if not words:
        return noun
    last = words[-1]
    if last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith(("sses", "shes", "ches", "xes")):
        last = last[:-2]
    elif last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3:
        last = last[:-1]
    return " ".join([*words[:-1], last])


def with_article(noun: str) -> str:
    """"an airport", "a city", "a university"."""
    from kgprobe.kg.verbalise import indefinite_article

    return f"{indefinite_article(noun)} {noun}"


def _given(frame: pl.DataFrame, lhs: Sequence[str]) -> str:
    parts = [f"whose {_column_words(frame, x)} is {{{x}}}" for x in lhs]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def templates(frame: pl.DataFrame, fd: FDCandidate, entity: str, name: str | None) -> dict[str, str]:
    """The binary templates of ``fd``: "Is there an airport whose IATA is {iata}?" when the right side names the
    entity; a fact of it names its right side ("Is there an airport whose name is {name} and whose state is
    {state}? If so, what is its city?"), so FDs with one left side never share a question."""
    given = _given(frame, fd.lhs)
    if fd.rhs == name:
        return {"basic": f"Is there {with_article(entity)} {given}?",
                "negated": f"Is it true that there is no {entity} {given}?",
                "explain": f"The {entity} is {{{fd.rhs}}}."}
    what = _column_words(frame, fd.rhs)
    return {"basic": f"Is there {with_article(entity)} {given}? If so, what is its {what}?",
            "negated": f"Is it true that there is no {entity} {given}? If there is one, what is its {what}?",
            "explain": (f"It is {{{name}}}, whose {what} is {{{fd.rhs}}}." if name and name not in fd.lhs
                        else f"Its {what} is {{{fd.rhs}}}.")}


def _relative(path: Path, folder: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), Path(folder).resolve())).as_posix()


def erbench_spec(name: str, tables: Mapping[str, Path | TableRef], candidates: list[FDCandidate], *, folder: Path,
                 per_relation: int = 5, spec_folder: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """An ERBench spec (:mod:`kgprobe.suites.erbench.spec`) of ``tables`` (relation -> CSV path, or a table of a
    SQLite / DuckDB file) with the FDs :func:`choose_fds` picks from ``candidates``, each with binary templates that
    read as questions (an article, the entity noun in the singular, the columns as words; measurements on a left
    side shown with 4 decimals, more where 4 would make two records read alike) to check by hand. CSV
    files are named relative to ``folder``; the source path is written relative to ``spec_folder`` (the folder of
    the spec file, default ``folder``), so the project can move. Raises :class:`ConfigError` if two FDs of a
    relation would share a question."""
    spec_folder = Path(spec_folder or folder)
    refs = [t for t in tables.values() if isinstance(t, TableRef)]
    if refs and (len({(r.path.resolve(), r.kind) for r in refs}) != 1 or len(refs) != len(tables)):
        raise ConfigError("an ERBench spec reads one source: CSV files, or tables of one database file")
    if refs:
        source = {"kind": refs[0].kind, "path": _relative(refs[0].path, spec_folder)}
    else:
        source = {"kind": "csv", "path": _relative(folder, spec_folder)}
    relations, fds, formats = {}, [], {}
    for rel, where in tables.items():
        frame, names = table_frame(where)
        columns = list(names)
        entity = singular(_words(rel))
        relations[rel] = ({"table": where.table} if isinstance(where, TableRef) else {"file": _relative(where, folder)}) \
            | {"columns": columns if all(k == v for k, v in names.items()) else names, "entity": entity}
        name_column = entity_name_column(frame.select(columns))
        asked: dict[str, str] = {}
        for i, c in enumerate(choose_fds(frame.select(columns), candidates, relation=rel, per_relation=per_relation)):
            fd = {"name": f"{rel}_{c.rhs}_{i}", "dataset": rel, "relation": rel, "lhs": list(c.lhs), "rhs": [c.rhs],
                  **templates(frame, c, entity, name_column)}
            if fd["basic"] in asked:
                raise ConfigError(f"FDs {asked[fd['basic']]} and {fd['name']} of {rel} would ask one question "
                                  f"({fd['basic']!r}) expecting different answers")
            asked[fd["basic"]] = fd["name"]
            fds.append(fd)
            for x, digits in _rounding(frame, c.lhs).items():
                formats[f"{rel}.{x}"] = {"round": digits}
    spec: dict[str, Any] = {"name": name, "source": source, "relations": relations, "fds": fds}
    if formats:
        spec["formats"] = formats
    return spec


def _rounding(frame: pl.DataFrame, lhs: Sequence[str]) -> dict[str, int]:
    """Decimals to show the measurements of a left side with (as the paper shows coordinates: 4): the fewest of 4
    to 6 at which no two records' left sides read alike; none where even 6 merge two."""
    measured = measurements(frame, lhs)
    if not measured:
        return {}
    distinct = frame.select(list(lhs)).unique().height
    for digits in (4, 5, 6):
        shown = frame.select([pl.col(x).cast(pl.Float64, strict=False).round(digits) if x in measured else pl.col(x)
                              for x in lhs])
        if shown.unique().height == distinct:
            return dict.fromkeys(measured, digits)
    return {}
