"""Benchmark: KG-FPQ edits with kgprobe.fpq.edit against a per-triple networkx BFS.

    python benchmarks/fpq.py [--n 15000] [--baseline-n 500] [--data ../shared/data] [--seed 0]

For FB15k-237 (train, 272k triples) and the YAGO3 subset yago3-mte100 (train+valid+test), a seeded sample of
``--n`` true triples gets all six edits (NSC NDC NNSC NNDC NNSR NNDR, 5 hops). kgprobe runs one bit-parallel
multi-source BFS per 512 subjects; the baseline is what one would write with networkx: an undirected ``nx.Graph``,
``nx.single_source_shortest_path_length(G, s, cutoff=5)`` per triple, the same candidate rules over Python sets,
``nx.shortest_path`` for the NSC/NDC path, and the same seeded choice. The baseline is timed on the first
``--baseline-n`` triples of the sample and extrapolated per triple (it is linear in the number of triples); both
implementations must pick the same false objects and hops on those triples, and the script checks that.

Each implementation runs in a fresh process; memory is the process's peak RSS during the run (Linux VmHWM,
reset after loading the KG), so the numbers do not include DuckDB's loading of the KG, which both share.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
METHODS = ("NSC", "NDC", "NNSC", "NNDC", "NNSR", "NNDR")
MAX_HOPS = 5


def _kgs(data: Path) -> dict[str, dict[str, Any]]:
    fb = data / "kg" / "fb15k-237"
    yago = data / "kg" / "yago3-10" / "yago3-mte100"
    return {
        "FB15k-237": {"triples": [fb / "train.txt.gz"], "entity_labels": fb / "FB15k_mid2name.txt"},
        "YAGO3 mte100": {"triples": [yago / f"{s}.txt" for s in ("train", "valid", "test")], "entity_labels": None},
    }


def _load(spec: dict[str, Any]):
    import duckdb

    from kgprobe import fpq
    from kgprobe.ingest import KGSource, load_kg

    con = duckdb.connect()
    report = load_kg(con, KGSource(triples=spec["triples"], format="tsv", entity_labels=spec["entity_labels"]))
    fpq.infer_types_from_relations(con)
    return con, report


def _sample(con, n: int, seed: int) -> list[tuple[int, int, int]]:
    import numpy as np

    rows = np.asarray(con.execute("SELECT head, relation, tail FROM triples ORDER BY ALL").fetchall(), dtype=np.int64)
    pick = np.random.default_rng(seed).choice(len(rows), size=min(n, len(rows)), replace=False)
    return [tuple(map(int, t)) for t in rows[pick]]


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _rss_mib() -> tuple[float, float]:
    """(current RSS, peak RSS since the last reset) in MiB."""
    try:
        status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
        return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024
    except (OSError, KeyError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return peak, peak


# ---------------------------------------------------------------- the straightforward networkx implementation


def _networkx_edits(con, triples: Sequence[tuple[int, int, int]], seed: int) -> tuple[list[tuple], float]:
    """Per-triple BFS with networkx and the KG-FPQ candidate rules over Python sets.

    Returns ``(subject, relation, true_object, method, false_object, hop, path)`` tuples and the seconds spent
    building the graph and the sets; the choice among the sorted candidates uses the same per-(seed, triple,
    method) draw as kgprobe, so the two must agree.
    """
    import networkx as nx
    import numpy as np

    from kgprobe.fpq import _choice_states

    start = time.perf_counter()
    graph = nx.Graph()
    graph.add_nodes_from(int(i) for (i,) in con.execute("SELECT id FROM entities").fetchall())
    objects_sr: dict[tuple[int, int], set[int]] = {}
    objects_r: dict[int, set[int]] = {}
    for h, r, t in con.execute("SELECT head, relation, tail FROM triples").fetchall():
        if h != t and not graph.has_edge(h, t):
            graph.add_edge(h, t, triple=(h, r, t))
        objects_sr.setdefault((h, r), set()).add(t)
        objects_r.setdefault(r, set()).add(t)
    all_objects = set().union(*objects_r.values())
    types: dict[int, set[str]] = {}
    members: dict[str, set[int]] = {}
    for e, k in con.execute("SELECT DISTINCT entity, type_key FROM entity_types").fetchall():
        types.setdefault(e, set()).add(k)
        members.setdefault(k, set()).add(e)
    typed = set(types)
    states = _choice_states(seed, np.asarray(triples, dtype=np.int64).reshape(-1, 3))
    setup = time.perf_counter() - start

    out = []
    for i, (s, r, o) in enumerate(triples):
        dist = nx.single_source_shortest_path_length(graph, s, cutoff=MAX_HOPS)
        excluded = objects_sr[(s, r)] | {s, o}
        same = set().union(*(members[k] for k in types[o])) if o in types else None
        pools = {
            "NSC": None if same is None else [v for v in dist if dist[v] >= 1 and v in same],
            "NDC": None if same is None else [v for v in dist if dist[v] >= 1 and v in typed and v not in same],
            "NNSC": None if same is None else [v for v in same if v not in dist],
            "NNDC": None if same is None else [v for v in typed if v not in dist and v not in same],
            "NNSR": [v for v in objects_r[r] if v not in dist],
            "NNDR": [v for v in all_objects if v not in dist and v not in objects_r[r]],
        }
        for k, method in enumerate(METHODS):
            pool = pools[method]
            candidates = sorted(v for v in pool or () if v not in excluded)
            if not candidates:
                out.append((s, r, o, method, None, None, None))
                continue
            x = candidates[int(states[i, k]) % len(candidates)]
            if method in ("NSC", "NDC"):
                nodes = nx.shortest_path(graph, s, x)
                path = tuple(graph.edges[u, v]["triple"] for u, v in zip(nodes, nodes[1:], strict=False))
                out.append((s, r, o, method, x, dist[x], path))
            else:
                out.append((s, r, o, method, x, None, None))
    return out, setup


# ---------------------------------------------------------------- one measured run per process


def _run(impl: str, spec: dict[str, Any], n: int, n_timed: int, seed: int, queue) -> None:
    import networkx  # noqa: F401 - imported before the clock starts, like kgprobe.fpq

    from kgprobe import fpq

    con, report = _load(spec)
    triples = _sample(con, n, seed)[:n_timed]
    reset = _reset_peak()
    rss_before, _ = _rss_mib()
    start = time.perf_counter()
    if impl == "kgprobe":
        edits = fpq.edit(con, triples, methods=METHODS, max_hops=MAX_HOPS, seed=seed)
        result = [(e.subject, e.relation, e.true_object, e.method, e.false_object, e.hop) for e in edits]
        setup = 0.0
    else:
        rows, setup = _networkx_edits(con, triples, seed)
        result = [row[:6] for row in rows]
    seconds = time.perf_counter() - start
    _, peak = _rss_mib()
    queue.put({
        "entities": report.entities, "triples": report.triples, "timed": len(triples), "seconds": seconds,
        "setup": setup, "edits": len(result), "found": sum(r[4] is not None for r in result), "peak_mib": peak,
        "extra_mib": peak - rss_before if reset else float("nan"), "result": result,
    })  # fmt: skip


def _measure(impl: str, spec: dict[str, Any], n: int, n_timed: int, seed: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_run, args=(impl, spec, n, n_timed, seed, queue))
    proc.start()
    out = queue.get()
    proc.join()
    if proc.exitcode:
        raise SystemExit(f"{impl} run failed with exit code {proc.exitcode}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=15_000, help="true triples to edit (default 15000)")
    parser.add_argument("--baseline-n", type=int, default=500, help="triples the networkx baseline is timed on")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the shared data folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not (args.data / "kg").is_dir():
        print(f"data folder {args.data} has no kg/; pass --data", file=sys.stderr)
        return 2

    print(f"KG-FPQ edits: {len(METHODS)} methods, max_hops={MAX_HOPS}, seed={args.seed}, n={args.n}")
    header = f"{'KG':<14}{'impl':<10}{'triples':>9}{'edits':>9}{'found':>8}{'seconds':>10}{'edits/s':>11}{'peak MiB':>10}{'run MiB':>9}"
    for name, spec in _kgs(args.data).items():
        ours = _measure("kgprobe", spec, args.n, args.n, args.seed)
        base = _measure("networkx", spec, args.n, min(args.baseline_n, args.n), args.seed)
        print(f"\n{name}: {ours['entities']:,} entities, {ours['triples']:,} triples")
        print(header)
        for impl, r in (("kgprobe", ours), ("networkx", base)):
            print(f"{name:<14}{impl:<10}{r['timed']:>9,}{r['edits']:>9,}{r['found']:>8,}{r['seconds']:>10.2f}"
                  f"{r['edits'] / r['seconds']:>11,.0f}{r['peak_mib']:>10.0f}{r['extra_mib']:>9.0f}")  # fmt: skip
        per_triple = (base["seconds"] - base["setup"]) / base["timed"]
        extrapolated = base["setup"] + per_triple * ours["timed"]
        same = ours["result"][: len(base["result"])] == base["result"]
        print(f"networkx extrapolated to {ours['timed']:,} triples: {extrapolated:,.0f} s = {base['setup']:.1f} s "
              f"graph building + {per_triple * 1000:.1f} ms per triple (timed on the first {base['timed']:,})")  # fmt: skip
        print(f"speed-up (edits/s): {extrapolated / ours['seconds']:.1f}x;  same false objects and hops on the "
              f"{base['timed']:,} shared triples: {'yes' if same else 'NO'}")  # fmt: skip
        if not same:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
