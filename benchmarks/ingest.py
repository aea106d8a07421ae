"""Ingest benchmark: FB15k-237 loaded by kgprobe vs the tools a Python user would otherwise pick.

    python benchmarks/ingest.py [--data ../shared/data/kg/fb15k-237] [--repeat 3] [--skip-rdflib]

* N-Triples (written here from the TSV): kgprobe vs rdflib ``Graph().parse``. Every line links two IRIs, so in
  both modes kgprobe reads the file with Polars' CSV reader and checks and strips its distinct terms (a file with
  other lines is split by DuckDB in bulk and pyoxigraph parses the rest); strict mode also validates every distinct
  IRI (as pyoxigraph's strict parser does), lenient mode, like rdflib, does not.
* TSV: kgprobe (DuckDB's CSV reader) vs pandas ``read_csv`` + networkx ``MultiDiGraph``.

Each measurement runs in a fresh child process so that its peak memory (max RSS) is its own. Before the timed load
each tool loads a one-line file of the same format, so that what is timed is loading, not the libraries' lazy
imports on first use (DuckDB imports pandas on its first Python parameter, rdflib its parser plugin). The tools
take turns ``--repeat`` times and every run is printed, with the load average; the ratios are taken run by run (the
tools of one run share the machine's load) and reported as the median and the worst run, not the best. CPU seconds
(user + system, all threads) are printed beside the wall-clock seconds, and the ratios in CPU seconds too. Goals:
>= 20x the triples/s of rdflib on N-Triples on every run, >= 3x pandas + networkx on TSV, < 1.5 GB peak for
FB15k-237.
"""

from __future__ import annotations

import argparse
import gzip
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "kg" / "fb15k-237"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _kgprobe(path: str, fmt: str, q: mp.Queue) -> None:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    lenient = fmt.endswith("-lenient")
    load_kg(duckdb.connect(), KGSource(triples=_tiny(path), format=fmt.removesuffix("-lenient"), lenient=lenient))
    t, c = time.perf_counter(), _cpu()
    report = load_kg(duckdb.connect(), KGSource(triples=path, format=fmt.removesuffix("-lenient"), lenient=lenient))
    q.put((time.perf_counter() - t, _cpu() - c, report.triples, _peak_mb()))


def _rdflib(path: str, fmt: str, q: mp.Queue) -> None:
    import rdflib

    rdflib.Graph().parse(_tiny(path), format="nt")
    t, c = time.perf_counter(), _cpu()
    g = rdflib.Graph()
    g.parse(path, format="nt")
    q.put((time.perf_counter() - t, _cpu() - c, len(g), _peak_mb()))


def _pandas_networkx(path: str, fmt: str, q: mp.Queue) -> None:
    import networkx as nx
    import pandas as pd

    nx.from_pandas_edgelist(pd.read_csv(_tiny(path), sep="\t", header=None, names=["h", "r", "t"], dtype=str), "h", "t",
                            edge_attr="r", create_using=nx.MultiDiGraph)
    t, c = time.perf_counter(), _cpu()
    df = pd.read_csv(path, sep="\t", header=None, names=["h", "r", "t"], dtype=str)
    g = nx.from_pandas_edgelist(df, "h", "t", edge_attr="r", create_using=nx.MultiDiGraph)
    q.put((time.perf_counter() - t, _cpu() - c, g.number_of_edges(), _peak_mb()))


def _tiny(path: str) -> str:
    """A file beside ``path`` holding its first line, for the warm-up load."""
    tiny = Path(path).with_name("warmup" + Path(path).suffix)
    with open(path, encoding="utf-8") as fh:
        tiny.write_text(fh.readline(), encoding="utf-8")
    return str(tiny)


def _measure(fn, path: Path, fmt: str) -> tuple[float, float, int, float]:
    """(seconds, CPU seconds, triples, peak RSS in MB) of ``fn`` run in a child process."""
    ctx = mp.get_context("spawn")
    q: mp.Queue = ctx.Queue()
    p = ctx.Process(target=fn, args=(str(path), fmt, q))
    p.start()
    result = q.get()
    p.join()
    return result


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
    ap.add_argument("--repeat", type=int, default=3, help="runs per tool, taking turns (default 3)")
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
        print(f"FB15k-237 train: {n:,} triples ({tsv.stat().st_size / 1e6:.0f} MB TSV, {nt.stat().st_size / 1e6:.0f} MB "
              f"N-Triples); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
        tools = [
            ("kgprobe TSV", _kgprobe, tsv, "tsv"),
            ("pandas + networkx TSV", _pandas_networkx, tsv, "tsv"),
            ("kgprobe N-Triples", _kgprobe, nt, "ntriples"),
            ("kgprobe N-Triples lenient", _kgprobe, nt, "ntriples-lenient"),
            *([] if args.skip_rdflib else [("rdflib N-Triples", _rdflib, nt, "nt")]),
        ]
        runs: dict[str, list[tuple[float, float, int, float]]] = {name: [] for name, *_ in tools}
        for round_ in range(1, max(1, args.repeat) + 1):
            for name, fn, path, fmt in tools:
                seconds, cpu, count, peak = run = _measure(fn, path, fmt)
                runs[name].append(run)
                print(f"run {round_}  {name:<27} {seconds:7.2f} s ({cpu:6.2f} s CPU)  {count / seconds:>11,.0f} triples/s  "
                      f"peak RSS {peak:,.0f} MB  ({count:,} triples)  load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    # Ratios are taken run by run (the tools of one run share the machine's load) and reported as the median and the
    # worst of the runs: a goal met by the median is met by most runs, by the worst by every run.
    _ratio("TSV:       kgprobe / (pandas + networkx)", runs["pandas + networkx TSV"], runs["kgprobe TSV"], 3)
    if not args.skip_rdflib:
        for mode in ("strict", "lenient"):
            name = "kgprobe N-Triples" + (" lenient" if mode == "lenient" else "")
            _ratio(f"N-Triples: kgprobe / rdflib, {mode:<7}", runs["rdflib N-Triples"], runs[name], 20)
    return 0


def _ratio(label: str, baseline: list[tuple[float, float, int, float]], ours: list[tuple[float, float, int, float]],
           goal: float) -> None:
    """Print the run-by-run speed ratios of ``ours`` over ``baseline`` (triples/s, and CPU seconds per triple): every
    run's, the median and the worst, against ``goal``."""
    wall = [(o[2] / o[0]) / (b[2] / b[0]) for b, o in zip(baseline, ours, strict=True)]
    cpu = [(b[1] / b[2]) / (o[1] / o[2]) for b, o in zip(baseline, ours, strict=True)]
    print(f"{label} = {statistics.median(wall):.1f}x median, {min(wall):.1f}x worst (goal >= {goal:g}x on every run: "
          f"{'OK' if min(wall) >= goal else 'BELOW GOAL'}); runs {', '.join(f'{r:.1f}x' for r in wall)}; "
          f"in CPU seconds {statistics.median(cpu):.1f}x median, {min(cpu):.1f}x worst")


if __name__ == "__main__":
    sys.exit(main())
