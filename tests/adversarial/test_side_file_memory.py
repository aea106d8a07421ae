"""Side files far larger than what they add to a KG: a label file of millions of rows, most for entities the KG does
not hold, and a TSV of triples with one stray carriage return (which sends it past DuckDB's reader). Each is read
a chunk at a time, so the memory the reader holds in Python stays the same whatever the file's size; before, a
1 GB label file took 7.8 GB.

Each case runs in a fresh interpreter and measures the peak of Python allocations (tracemalloc) during
``load_kg``; the rows themselves go to DuckDB, whose memory is its own ``memory_limit``'s business."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: What the reader may hold in Python at its peak, whatever the file's size (docs/kgs.md states it).
PEAK_MB = 40
FILE_MB = 20

_MEASURE = """
import json, sys, time, tracemalloc
from pathlib import Path
import duckdb
from kgprobe import KGSource, load_kg
folder, kw = Path(sys.argv[1]), json.loads(sys.argv[2])
source = dict(triples=[folder / "t.tsv"], lenient=True, **{k: folder / v for k, v in kw.items()})
con = duckdb.connect()
load_kg(con, KGSource(triples=[folder / "small.tsv"], name="warm"))  # DuckDB, Arrow and Polars set up
tracemalloc.start()
started = time.perf_counter()
report = load_kg(con, KGSource(**source))
print(json.dumps({"peak_mb": tracemalloc.get_traced_memory()[1] / 1e6, "seconds": time.perf_counter() - started,
                  "read": report.read, "rejected": report.rejected, "labelled": report.labelled_entities,
                  "side": report.side_files}))
"""


def _write_lines(path: Path, line, n: int) -> int:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(line(i))
    return path.stat().st_size


def _measure(folder: Path, **side: str) -> dict:
    (folder / "small.tsv").write_text("x\tr\ty\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(folder), json.dumps(side)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


LABELS = {
    # the fast path (ASCII), the line loop (other text) and a JSON object
    "tsv": ("l.tsv", lambda i: f"e{i}\tEntity number {i}, a label of average length\n"),
    "tsv-utf8": ("l.tsv", lambda i: f"e{i}\tEntité numéro {i}, un libellé de longueur moyenne\n"),
    "json": ("l.json", lambda i: ("{" if i == 0 else ",\n") + f'"e{i}": "Entity number {i}, a label of average length"'),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(LABELS))
def test_a_large_label_file_is_read_in_bounded_memory(tmp_path: Path, case: str) -> None:
    name, line = LABELS[case]
    n = FILE_MB * 1_000_000 // len(line(10**6))
    size = _write_lines(tmp_path / name, line, n)
    if case == "json":
        with open(tmp_path / name, "a", encoding="utf-8") as fh:
            fh.write("}\n")
    (tmp_path / "t.tsv").write_text("e1\tr\te2\ne3\tr\tunlabelled\n", encoding="utf-8")
    got = _measure(tmp_path, entity_labels=name)
    assert size > FILE_MB * 900_000
    assert got["side"]["entity_labels"]["read"] == n and got["labelled"] == 3  # every row read, three used
    assert got["peak_mb"] < PEAK_MB, got


@pytest.mark.slow
def test_a_stray_carriage_return_does_not_read_the_triples_whole(tmp_path: Path) -> None:
    n = FILE_MB * 1_000_000 // 40
    size = _write_lines(tmp_path / "t.tsv", lambda i: f"entity_{i}\trelation_{i % 50}\tentity_{i + 1}x\n"
                        if i != n // 2 else "a\tr\rx\tb\n", n)
    got = _measure(tmp_path)
    assert size > FILE_MB * 900_000
    assert (got["read"], got["rejected"]) == (n, 1)
    assert got["peak_mb"] < PEAK_MB, got
