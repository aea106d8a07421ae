"""Loading a relational database into the erdb schema: accounting, FD / FK checks, bad input, and the same items
from every source kind (CSV, Parquet, DuckDB, SQLite and a real PostgreSQL server)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgprobe.errors import ConfigError, IngestError
from kgprobe.suites.erbench.erdb import current_erdb_snapshot, load_erdb
from kgprobe.suites.erbench.quality import erdb_violations
from kgprobe.suites.erbench.questions import QuestionOptions, build_items
from kgprobe.suites.erbench.spec import parse_spec


def _load(spec_data: dict, **kwargs) -> tuple[duckdb.DuckDBPyConnection, object]:
    con = duckdb.connect()
    spec = parse_spec(spec_data)
    return con, load_erdb(con, spec, **kwargs)


def test_sample_loads_with_accounting_and_snapshot(sample_spec_data) -> None:
    con, report = _load(sample_spec_data)
    assert report.tables == {"countries": {"read": 52, "loaded": 52, "rejected": 0},
                             "directors": {"read": 49, "loaded": 49, "rejected": 0},
                             "movies": {"read": 145, "loaded": 145, "rejected": 0},
                             "olympics": {"read": 29, "loaded": 29, "rejected": 0}}
    assert report.read == report.loaded + report.rejected == 275
    assert len(report.snapshot_id) == 16 and current_erdb_snapshot(con) == report.snapshot_id
    assert con.execute("SELECT count(*) FROM erdb._constraints").fetchone()[0] == 9
    assert erdb_violations(con, parse_spec(sample_spec_data)) == []
    # the same data gives the same snapshot id
    _, again = _load(sample_spec_data)
    assert again.snapshot_id == report.snapshot_id


def _tiny(tmp_path: Path, rows: str, **fd) -> dict:
    (tmp_path / "people.csv").write_text(rows, encoding="utf-8")
    (tmp_path / "cities.csv").write_text("city,country\nParis,France\nRome,Italy\nLyon,France\n", encoding="utf-8")
    return {
        "name": "tiny", "source": {"kind": "csv", "path": str(tmp_path)},
        "relations": {"people": {"columns": ["name", "born", "city"], "key": fd.pop("key", [])},
                      "cities": {"columns": ["city", "country"], "key": ["city"]}},
        "foreign_keys": ["people.city -> cities.city"],
        "fds": [{"name": "born_in", "relation": "people", "lhs": fd.pop("lhs", ["name"]), "rhs": fd.pop("rhs", ["city"]),
                 "basic": "Is there a city where {name} was born?",
                 "negated": "Is it true that there is no city where {name} was born?"}],
    }


def test_violating_rows_are_rejected_with_reasons(tmp_path: Path) -> None:
    rows = ("name,born,city\nAda,1815,Paris\nAda,1815,Rome\nBob,1900,Lyon\nBob,1900,Lyon\nCy,,Berlin\nDi,1950,\n"
            "Ed,1960,Rome\nFay,1970,Paris\nGus,1980,Lyon\nHal,1990,Rome\n")
    con, report = _load(_tiny(tmp_path, rows), fd_violations="drop")
    t = report.tables["people"]
    assert t == {"read": 10, "loaded": 5, "rejected": 5}
    reasons = dict(con.execute("SELECT record, reason FROM erdb._rejects WHERE relation = 'people'").fetchall())
    by_name = {json.loads(r)["name"]: why for r, why in reasons.items()}
    assert "NULL in column city" in by_name["Di"]
    assert "exact duplicate" in by_name["Bob"]
    assert "violates FD born_in" in by_name["Ada"]
    assert "foreign key people.city -> cities.city" in by_name["Cy"]
    assert report.fd_violations["born_in"] == 2 and report.fk_violations["people.city -> cities.city"] == 1
    assert sorted(n for (n,) in con.execute("SELECT name FROM erdb.people").fetchall()) == ["Bob", "Ed", "Fay", "Gus", "Hal"]


def test_fd_violations_are_kept_by_default_and_asked_once_with_their_first_row(tmp_path: Path) -> None:
    rows = ("name,born,city\nAda,1815,Paris\nAda,1815,Rome\nBob,1900,Lyon\nBob,1900,Lyon\nCy,,Berlin\nDi,1950,\n"
            "Ed,1960,Rome\nFay,1970,Paris\nGus,1980,Lyon\nHal,1990,Rome\n")
    spec = _tiny(tmp_path, rows)
    con, report = _load(spec)
    assert report.tables["people"] == {"read": 10, "loaded": 7, "rejected": 3}
    assert report.fd_violations["born_in"] == 2   # counted, not rejected
    assert erdb_violations(con, parse_spec(spec)) == []
    assert erdb_violations(con, parse_spec(spec), fd_violations="drop")[0]["problem"] == "FD violated"
    items = build_items(con, parse_spec(spec), QuestionOptions(known=False)).to_pylist()
    ada = [it for it in items if it["entity"] == "Ada"]
    assert len(ada) == 2 and {tuple(it["inferred"]) for it in ada} == {("Paris",)}   # BN(Y), BN(N): the first row


def test_an_fd_failing_on_most_rows_is_an_error_naming_it(tmp_path: Path) -> None:
    rows = "name,born,city\nAda,1,Paris\nAda,1,Rome\nBob,2,Lyon\nBob,2,Rome\nCy,3,Paris\n"
    with pytest.raises(IngestError, match=r"table people: FD born_in \(name -> city\) fails on 4 of 5 rows"):
        _load(_tiny(tmp_path, rows))


@pytest.mark.parametrize("case,change,error,match", [
    ("missing column", lambda d: d["relations"]["people"].update(columns={"name": "name", "born": "born", "city": "town"}),
     IngestError, r"table people: missing column\(s\) city \(source column 'town'\)"),
    ("fd over an absent column", lambda d: d["fds"][0].update(lhs=["nickname"]), ConfigError,
     r"FD born_in names column 'nickname', which table people does not have"),
    ("non-unique key", lambda d: d["relations"]["people"].update(key=["born"]), IngestError,
     r"table people: key \(born\) is not unique"),
    ("bad identifier", lambda d: d["relations"]["people"].update(columns=["name", "born", "city; DROP"]), ConfigError,
     r"is not a valid identifier"),
])
def test_bad_input_names_table_and_column(tmp_path: Path, case, change, error, match) -> None:
    data = _tiny(tmp_path, "name,born,city\nAda,1815,Paris\nBob,1815,Rome\n")
    change(data)
    with pytest.raises(error, match=match):
        _load(data)


def test_a_table_with_zero_rows_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"table people: no rows to load"):
        _load(_tiny(tmp_path, "name,born,city\n"))


def test_null_in_an_fd_column_is_a_recorded_reject(tmp_path: Path) -> None:
    _con, report = _load(_tiny(tmp_path, "name,born,city\nAda,1815,Paris\n,1900,Rome\n"))
    assert report.tables["people"] == {"read": 2, "loaded": 1, "rejected": 1}
    assert report.reasons == {"NULL in column name (FD born_in)": 1}


# ------------------------------------------------------------------------------------------------ other sources
def _items(con) -> list[dict]:
    spec = parse_spec(_SPEC_FOR_ITEMS)
    rows = build_items(con, spec, QuestionOptions(limit=12, none_of_the_above=0.2, seed=3)).to_pylist()
    for r in rows:
        r["evidence"] = json.loads(r["evidence"])["record"]
    return sorted(rows, key=lambda r: r["item_id"])


_SPEC_FOR_ITEMS: dict = {}


@pytest.fixture(scope="module")
def csv_items(sample_spec_data) -> list[dict]:
    _SPEC_FOR_ITEMS.clear()
    _SPEC_FOR_ITEMS.update(copy.deepcopy(sample_spec_data))
    con, _ = _load(sample_spec_data)
    return _items(con)


def _tables(sample_spec_data) -> dict[str, pa.Table]:
    con = duckdb.connect()
    base = Path(sample_spec_data["source"]["path"])
    return {name: con.execute("SELECT * FROM read_csv(?, header = true)", [str(base / f"{name}.csv")]).to_arrow_table()
            for name in sample_spec_data["relations"]}


def _respec(sample_spec_data, source: dict) -> dict:
    data = copy.deepcopy(sample_spec_data)
    data["source"] = source
    for rel in data["relations"].values():
        rel.pop("file", None)
    return data


def test_parquet_and_duckdb_files_give_the_csv_items(tmp_path: Path, sample_spec_data, csv_items) -> None:
    tables = _tables(sample_spec_data)
    for name, t in tables.items():
        pq.write_table(t, tmp_path / f"{name}.parquet")
    con, _ = _load(_respec(sample_spec_data, {"kind": "parquet", "path": str(tmp_path)}))
    assert _items(con) == csv_items
    db = tmp_path / "src.duckdb"
    with duckdb.connect(str(db)) as src:
        for name, t in tables.items():
            src.register("t", t)
            src.execute(f'CREATE TABLE "{name}" AS SELECT * FROM t')
            src.unregister("t")
    con, _ = _load(_respec(sample_spec_data, {"kind": "duckdb", "path": str(db)}))
    assert _items(con) == csv_items


def test_sqlite_file_gives_the_csv_items(tmp_path: Path, sample_spec_data, csv_items) -> None:
    import adbc_driver_sqlite.dbapi as sqlite

    db = tmp_path / "sample.sqlite"
    with sqlite.connect(str(db)) as conn:
        with conn.cursor() as cur:
            for name, t in _tables(sample_spec_data).items():
                cur.adbc_ingest(name, t, mode="create")
        conn.commit()
    con, report = _load(_respec(sample_spec_data, {"kind": "sqlite", "path": str(db)}))
    assert report.loaded == 275
    assert _items(con) == csv_items


# ------------------------------------------------------------------------------------------------ PostgreSQL
# the `postgres_uri` fixture (a real server on a temporary data directory) is in tests/conftest.py
@pytest.mark.slow
def test_postgresql_gives_the_csv_items(postgres_uri, monkeypatch, sample_spec_data, csv_items) -> None:
    import adbc_driver_postgresql.dbapi as pg

    with pg.connect(postgres_uri) as conn:
        with conn.cursor() as cur:
            for name, t in _tables(sample_spec_data).items():
                cur.adbc_ingest(name, t, mode="replace")
        conn.commit()
    monkeypatch.setenv("KGPROBE_TEST_PG_URI", postgres_uri)
    spec = _respec(sample_spec_data, {"kind": "postgres", "uri_env": "KGPROBE_TEST_PG_URI"})
    con, report = _load(spec)
    assert report.tables["movies"] == {"read": 145, "loaded": 145, "rejected": 0}
    assert _items(con) == csv_items
    # an unset variable is a clear error naming the variable, not the URI
    monkeypatch.delenv("KGPROBE_TEST_PG_URI")
    with pytest.raises(IngestError, match="environment variable KGPROBE_TEST_PG_URI"):
        _load(spec)


def test_postgres_spec_needs_an_environment_variable(sample_spec_data) -> None:
    with pytest.raises(ConfigError, match="source.uri_env"):
        parse_spec(_respec(sample_spec_data, {"kind": "postgres"}))
