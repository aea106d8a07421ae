"""Ingest benchmark: FB15k-237 loaded by kgprobe vs the tools a Python user would otherwise pick.

    python benchmarks/ingest.py [--data ../shared/data/kg/fb15k-237] [--skip-rdflib]

* N-Triples (written here from the TSV): kgprobe vs rdflib ``Graph().parse``. Strict mode parses every line with
  pyoxigraph (which validates IRIs); lenient mode, like rdflib, does not validate IRIs, and lets DuckDB split
  the plain lines in bulk.
* TSV: kgprobe (DuckDB's CSV reader) vs pandas ``read_csv`` + networkx ``MultiDiGraph``.

Each measurement runs in a fresh child process so that its peak memory (max RSS) is its own. Goals: >= 20x the
triples/s of rdflib on N-Triples, >= 3x pandas + networkx on TSV, < 1.5 GB peak for FB15k-237.
"""

from __future__ import annotations

import argparse
import gzip
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "kg" / "fb15k-237"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _kgprobe(path: str, fmt: str, q: mp.Queue) -> None:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    lenient = fmt.endswith("-lenient")
    t = time.perf_counter()
    report = load_kg(duckdb.connect(), KGSource(triples=path, format=fmt.removesuffix("-lenient"), lenient=lenient))
    q.put((time.perf_counter() - t, report.triples, _peak_mb()))


def _rdflib(path: str, fmt: str, q: mp.Queue) -> None:
    import rdflib

    t = time.perf_counter()
    g = rdflib.Graph()
    g.parse(path, format="nt")
    q.put((time.perf_counter() - t, len(g), _peak_mb()))


def _pandas_networkx(path: str, fmt: str, q: mp.Queue) -> None:
    import networkx as nx
    import pandas as pd

    t = time.perf_counter()
    df = pd.read_csv(path, sep="\t", header=None, names=["h", "r", "t"], dtype=str)
    g = nx.from_pandas_edgelist(df, "h", "t", edge_attr="r", create_using=nx.MultiDiGraph)
    q.put((time.perf_counter() - t, g.number_of_edges(), _peak_mb()))


def _measure(fn, path: Path, fmt: str) -> tuple[float, int, float]:
    """(seconds, triples, peak RSS in MB) of ``fn`` run in a child process."""
    ctx = mp.get_context("spawn")
    q: mp.Queue = ctx.Queue()
    p = ctx.Process(target=fn, args=(str(path), fmt, q))
    p.start()
    seconds, n, peak_mb = q.get()
    p.join()
    return seconds, n, peak_mb


def _write_ntriples(tsv_gz: Path, out: Path) -> int:
    n = 0
    with gzip.open(tsv_gz, "rt", encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            h, r, t = line.rstrip("\n").split("\t")
            dst.write(f"<http://fb15k.example{h}> <http://fb15k.example/rel{r}> <http://fb15k.example{t}> .\n")
            n += 1
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--skip-rdflib", action="store_true", help="skip the slow rdflib baseline")
    args = ap.parse_args()
    tsv_gz = args.data / "train.txt.gz"
    if not tsv_gz.exists():
        print(f"FB15k-237 not found at {tsv_gz}; pass --data", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        tsv = Path(tmp) / "train.tsv"
        tsv.write_bytes(gzip.decompress(tsv_gz.read_bytes()))
        nt = Path(tmp) / "train.nt"
        n = _write_ntriples(tsv_gz, nt)
        print(f"FB15k-237 train: {n:,} triples ({tsv.stat().st_size / 1e6:.0f} MB TSV, {nt.stat().st_size / 1e6:.0f} MB N-Triples)\n")
        rows = []
        for name, fn, path, fmt in [
            ("kgprobe TSV", _kgprobe, tsv, "tsv"),
            ("pandas + networkx TSV", _pandas_networkx, tsv, "tsv"),
            ("kgprobe N-Triples", _kgprobe, nt, "ntriples"),
            ("kgprobe N-Triples lenient", _kgprobe, nt, "ntriples-lenient"),
            *([] if args.skip_rdflib else [("rdflib N-Triples", _rdflib, nt, "nt")]),
        ]:
            seconds, count, peak = _measure(fn, path, fmt)
            rows.append((name, seconds, count, peak))
            print(f"{name:<27} {seconds:7.2f} s  {count / seconds:>11,.0f} triples/s  peak RSS {peak:,.0f} MB  ({count:,} triples)")
    speed = {name: count / seconds for name, seconds, count, _ in rows}
    print()
    print(f"TSV:       kgprobe / (pandas + networkx) = {speed['kgprobe TSV'] / speed['pandas + networkx TSV']:.1f}x  (goal >= 3x)")
    if "rdflib N-Triples" in speed:
        print(f"N-Triples: kgprobe / rdflib             = {speed['kgprobe N-Triples'] / speed['rdflib N-Triples']:.1f}x strict, "
              f"{speed['kgprobe N-Triples lenient'] / speed['rdflib N-Triples']:.1f}x lenient  (goal >= 20x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
