"""Column and table names that come from data are names, never SQL: every loader that puts such a name into SQL text
loads the data literally or stops with a clear error, and no hostile name runs a statement of its own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from kgprobe import KGSource, load_kg
from kgprobe.errors import ConfigError, IngestError
from kgprobe.sql import quote_identifier
from kgprobe.suites.erbench.erdb import load_erdb

# reads a file the loader was never asked to read; if it ran, its content would land in the loaded values
SECRET = Path("/etc/hostname")
INJECT = ("c\" AS VARCHAR) || (SELECT string_agg(content, '') FROM read_text('/etc/hostname')) || CAST(\"c")
HOSTILE = [INJECT, 'he"ad', 'x"; DROP TABLE t; --', "a)) UNION SELECT 1 --", "semi;colon", "new\nline", "ünï cödé"]


@pytest.mark.parametrize("name", HOSTILE)
def test_the_helper_quotes_any_name_into_one_identifier(name: str) -> None:
    con = duckdb.connect()
    q = quote_identifier(name)
    row = con.execute(f"SELECT {q} FROM (SELECT 42 AS {q})")
    assert row.fetchall() == [(42,)]
    assert row.description[0][0] == name


@pytest.mark.parametrize("name", ["", "nul\x00byte"])
def test_names_that_cannot_be_quoted_are_a_clear_error(name: str) -> None:
    with pytest.raises(IngestError, match="cannot be used as an SQL name"):
        quote_identifier(name, what="column")


def _secret_text() -> str | None:
    try:
        return SECRET.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


@pytest.mark.parametrize("names", [
    [INJECT, 'he"ad', "tail"],
    ['he"ad', INJECT, 'ta"il'],
    ["head", "relation", "tail", INJECT],          # recognised names, a hostile extra column
    ["s", "p", "o\"'); --"],
])
@pytest.mark.parametrize("lenient", [False, True])
def test_parquet_triples_with_hostile_column_names_load_literally(tmp_path: Path, names: list[str], lenient: bool) -> None:
    rows = [("alice", "knows", "bob"), ("bob", "knows", "carol"), (" dave ", "likes", "erin")]
    columns = {n: [r[i] if i < 3 else "x" for r in rows] for i, n in enumerate(names)}
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table(columns), path)
    con = duckdb.connect()
    report = load_kg(con, KGSource(triples=[path], format="parquet", name="kg", lenient=lenient))
    assert (report.read, report.loaded, report.rejected) == (3, 3, 0)
    keys = {k for (k,) in con.execute("SELECT key FROM kg.entities").fetchall()}
    assert keys == {"alice", "bob", "carol", "dave", "erin"}
    stored = "".join(str(v) for r in con.execute("SELECT key, label FROM kg.entities").fetchall() for v in r)
    secret = _secret_text()
    if secret:
        assert secret not in stored
    assert {k for (k,) in con.execute("SELECT key FROM kg.relations").fetchall()} == {"knows", "likes"}


def test_parquet_with_an_empty_row_and_hostile_names_reports_the_row(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({INJECT: ["a", ""], 'he"ad': ["r", "r"], "t": ["b", "c"]}), path)
    con = duckdb.connect()
    report = load_kg(con, KGSource(triples=[path], format="parquet", name="kg", lenient=True))
    assert (report.loaded, report.rejected) == (1, 1)
    assert con.execute("SELECT line FROM kg.rejects").fetchall() == [(2,)]


@pytest.mark.parametrize("fmt,delim", [("csv", ","), ("tsv", "\t")])
def test_delimited_triples_with_a_hostile_header_load_it_as_a_row(tmp_path: Path, fmt: str, delim: str) -> None:
    # a header of unknown names is not recognised as one, so it is data: loaded as written, never run
    header = ['he"ad', "rel", "tail;--"]
    path = tmp_path / f"t.{fmt}"
    path.write_text(delim.join(header) + "\n" + delim.join(["a", "r", "b"]) + "\n", encoding="utf-8")
    con = duckdb.connect()
    report = load_kg(con, KGSource(triples=[path], format=fmt, name="kg", lenient=True))
    assert report.read == 2
    keys = {k for (k,) in con.execute("SELECT key FROM kg.entities").fetchall()}
    assert {"a", "b"} <= keys


# ----------------------------------------------------------------------------------------------- ERBench's loaders
def _people() -> pa.Table:
    return pa.table({INJECT: ["Ada", "Alan", "Grace"], 'he"ad': ["UK", "UK", "US"], "year": [1815, 1912, 1906]})


def _spec(kind: str, path: Path, source: str) -> dict:
    return {"name": "hostile", "source": {"kind": kind, "path": str(path)},
            "relations": {"people": {("file" if kind in ("csv", "parquet") else "table"): source,
                                     "columns": {"name": INJECT, "country": 'he"ad', "year": "year"},
                                     "key": ["name"]}},
            "fds": [{"name": "born", "relation": "people", "lhs": ["name"], "rhs": ["year"],
                     "basic": "Is there a person named {name} whose birth year is recorded?",
                     "negated": "Is there no person named {name} whose birth year is recorded?"}]}


def _write(kind: str, tmp_path: Path) -> tuple[Path, str]:
    table = _people()
    if kind == "csv":
        pacsv.write_csv(table, tmp_path / "people.csv")
        return tmp_path, "people.csv"
    if kind == "parquet":
        pq.write_table(table, tmp_path / "people.parquet")
        return tmp_path, "people.parquet"
    if kind == "duckdb":
        path = tmp_path / "src.duckdb"
        with duckdb.connect(str(path)) as con:
            con.register("t", table)
            con.execute("CREATE TABLE people AS SELECT * FROM t")
        return path, "people"
    path = tmp_path / "src.sqlite"
    with sqlite3.connect(path) as con:
        name, country = (quote_identifier(c) for c in table.column_names[:2])
        con.execute(f"CREATE TABLE people ({name} TEXT, {country} TEXT, year INT)")
        con.executemany("INSERT INTO people VALUES (?, ?, ?)", zip(*(c.to_pylist() for c in table.columns)))
    return path, "people"


@pytest.mark.parametrize("kind", ["csv", "parquet", "duckdb", "sqlite"])
def test_erbench_source_columns_with_hostile_names_load_literally(tmp_path: Path, kind: str) -> None:
    if kind == "sqlite":
        pytest.importorskip("adbc_driver_sqlite")
    path, source = _write(kind, tmp_path)
    con = duckdb.connect()
    report = load_erdb(con, _spec(kind, path, source))
    assert report.tables["people"] == {"read": 3, "loaded": 3, "rejected": 0}
    rows = con.execute("SELECT name, country, year FROM erdb.people ORDER BY name").fetchall()
    assert rows == [("Ada", "UK", 1815), ("Alan", "UK", 1912), ("Grace", "US", 1906)]


@pytest.mark.parametrize("table", [INJECT, 'peo"ple', "people; DROP TABLE x"])
def test_erbench_hostile_source_table_names_are_rejected_clearly(tmp_path: Path, table: str) -> None:
    path, _ = _write("duckdb", tmp_path)
    con = duckdb.connect()
    with pytest.raises(ConfigError, match="not a valid identifier"):
        load_erdb(con, _spec("duckdb", path, table))
