"""The warehouse layout: atomic partition writes (also by several writers at once) and DuckDB opens that wait out
another process's lock."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from kgprobe import warehouse as wh


def _holder(db: Path, hold_s: float) -> subprocess.Popen:
    """A process that opens ``db`` for writing, says so on stdout, holds it ``hold_s`` seconds and exits."""
    code = ("import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); con.execute('CREATE TABLE IF NOT EXISTS t "
            "AS SELECT 42 AS x'); con.execute('CHECKPOINT'); print('locked', flush=True); time.sleep(float(sys.argv[2]))")
    proc = subprocess.Popen([sys.executable, "-c", code, str(db), str(hold_s)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_connect_waits_for_another_process_lock_then_reads(tmp_path: Path) -> None:
    db = tmp_path / "kg.duckdb"
    proc = _holder(db, 1.5)
    try:
        with pytest.raises(duckdb.IOException) as plain:
            duckdb.connect(str(db), read_only=True)  # what a run saw before: a lock error
        assert wh.is_lock_conflict(plain.value)
        con = wh.connect(db, read_only=True, timeout_s=60)
        try:
            assert con.execute("SELECT x FROM t").fetchall() == [(42,)]
        finally:
            con.close()
    finally:
        proc.wait(30)


def test_connect_gives_up_after_its_timeout_with_the_lock_error(tmp_path: Path) -> None:
    db = tmp_path / "kg.duckdb"
    proc = _holder(db, 30)
    waits: list[float] = []
    try:
        with pytest.raises(duckdb.IOException, match="lock"):
            wh.connect(db, timeout_s=0.5, sleep=waits.append)  # no real sleeping: the backoff is recorded
    finally:
        proc.kill()
        proc.wait(30)
    assert waits and all(w > 0 for w in waits)


def test_connect_raises_other_errors_at_once(tmp_path: Path) -> None:
    waits: list[float] = []
    with pytest.raises(duckdb.Error):
        wh.connect(tmp_path / "missing" / "x.duckdb", read_only=True, sleep=waits.append)
    assert waits == []


def test_write_partition_replaces_exactly_one_partition(tmp_path: Path) -> None:
    wh.write_partition(tmp_path, "a", pa.table({"x": [1, 2]}), {"model": "m"})
    wh.write_partition(tmp_path, "a", pa.table({"x": [3]}), {"model": "n"})
    wh.write_partition(tmp_path, "a", pa.table({"x": [4]}), {"model": "m"})
    assert wh.read_partition(tmp_path, "a", {"model": "m"}).column("x").to_pylist() == [4]
    assert wh.read_partition(tmp_path, "a", {"model": "n"}).column("x").to_pylist() == [3]
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]


def test_writers_of_one_partition_at_once_leave_one_whole_table(tmp_path: Path) -> None:
    tables = [pa.table({"x": list(range(w * 100, w * 100 + 50))}) for w in range(6)]
    errors: list[BaseException] = []

    def write(w: int) -> None:
        try:
            for _ in range(20):
                wh.write_partition(tmp_path, "a", tables[w], {"model": "m"})
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    result = wh.read_partition(tmp_path, "a", {"model": "m"})
    assert result in tables  # one writer's table, whole: no mix, no loss of the folder
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["model=m"]


def test_register_views_on_a_read_only_connection(tmp_path: Path) -> None:
    root = tmp_path / "warehouse"
    wh.write_partition(root, "fpq_scores_metrics", pa.table({"metric": ["a", "b"], "n": [3, 4]}), {"model": "oracle"})
    wh.write_partition(root, "fpq_scores_metrics", pa.table({"metric": ["a"], "n": [5]}), {"model": "random"})
    db = tmp_path / "kg.duckdb"
    duckdb.connect(str(db)).execute("CREATE TABLE t AS SELECT 1 AS x").close()
    with duckdb.connect(str(db), read_only=True) as con:
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("CREATE VIEW v AS SELECT 1")  # what a plain view does here
        assert wh.register_views(con, root) == ["fpq_scores_metrics"]
        got = con.execute("SELECT model, sum(n) FROM fpq_scores_metrics GROUP BY model ORDER BY model").fetchall()
        assert got == [("oracle", 7), ("random", 5)]
    with duckdb.connect(str(db)) as con:  # the views were temporary: the file is unchanged
        assert wh.register_views(con, root) == ["fpq_scores_metrics"]
        assert con.execute("SELECT count(*) FROM fpq_scores_metrics").fetchone() == (3,)
        assert con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT temporary AND NOT internal").fetchone() == (1,)
