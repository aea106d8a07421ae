"""A write killed between writing its hidden temporary folder and renaming it leaves ``.model=<name>.<id>.tmp/``
beside the partition. Readers skip it (with a warning naming it), so the leaderboard does not see its rows twice,
and the next write of that partition removes it once it is old enough not to belong to a write still running."""

from __future__ import annotations

import os
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from kgprobe import warehouse as wh


def _metric(model: str, value: float) -> pa.Table:
    return pa.table({"model": [model], "metric": ["accuracy"], "value": [value]})


@pytest.mark.parametrize("model", ["oracle", "openai/x"])
def test_a_leftover_temporary_folder_is_skipped_reported_and_cleaned(tmp_path: Path, model: str) -> None:
    final = wh.write_partition(tmp_path, "fpq_scores_metrics", _metric(model, 1.0), {"model": model})
    stale = final.parent / f".{final.name}.0123456789abcdef.tmp"  # a write killed before its rename
    fresh = final.parent / f".{final.name}.fedcba9876543210.tmp"  # another write, running now
    for folder in (stale, fresh):
        folder.mkdir()
        pa.parquet.write_table(_metric(model, 0.0), folder / "part-0.parquet")
    old = time.time() - 7200  # two hours ago: no write runs that long
    os.utime(stale, (old, old))

    with pytest.warns(RuntimeWarning, match=r"leftover folder.*0123456789abcdef\.tmp"):
        found = wh.partitions(tmp_path, "fpq_scores_metrics")
    assert found == [{"model": model}]  # one partition, not a second one named after the hidden folder
    assert sorted(p.name for p in wh.leftovers(tmp_path, "fpq_scores_metrics")) == sorted([stale.name, fresh.name])
    con = duckdb.connect()
    with pytest.warns(RuntimeWarning, match="leftover"):
        wh.register_views(con, tmp_path)
    assert con.execute("SELECT model, value FROM fpq_scores_metrics").fetchall() == [(model, 1.0)]

    wh.write_partition(tmp_path, "fpq_scores_metrics", _metric(model, 0.5), {"model": model})
    assert not stale.exists() and fresh.exists()  # the stale one is cleaned; the young one may still be in use
    assert wh.read_partition(tmp_path, "fpq_scores_metrics", {"model": model}).column("value").to_pylist() == [0.5]
