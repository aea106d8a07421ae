"""Benchmark: KG-FPQ edits with kgprobe.suites.fpq.edits.edit against a per-triple networkx BFS.

    python benchmarks/fpq.py [--n 15000] [--baseline-n 500] [--data ../shared/data] [--seed 0] [--coverage-only]

For FB15k-237 (train, 272k triples), the YAGO3 subset yago3-mte100 (train+valid+test) and CoDEx-S (train, with
its Wikidata types), a seeded sample of ``--n`` true triples gets all six edits (NSC NDC NNSC NNDC NNSR NNDR,
5 hops).

Speed: kgprobe's defaults (directed hops, the hop drawn first) run one bit-parallel multi-source BFS per 512
subjects; the baseline is what one would write with networkx: an ``nx.DiGraph``,
``nx.single_source_shortest_path_length(G, s, cutoff=5)`` per triple (successors only), the same candidate rules
over Python sets, ``nx.shortest_path`` for the NSC/NDC path, and the same seeded choice (hop first, then the object).
The baseline is timed on the first ``--baseline-n`` triples of the sample and extrapolated per triple (it is linear
in the number of triples); both implementations must pick the same false objects and hops on those triples, and the
script checks that. Each implementation runs in a fresh process; memory is the process's peak RSS during the run
(Linux VmHWM, reset after loading the KG), so the numbers do not include DuckDB's loading of the KG.

Coverage: the share of true triples each method finds a false object for, and the NSC/NDC hop histogram, with the
old settings (undirected hops, a uniform draw over all candidates) beside the defaults, and the paper's Table 11
hop shares for comparison. ``--coverage-only`` skips the speed comparison.
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
    codex = data / "kg" / "codex"
    return {
        "FB15k-237": {"triples": [fb / "train.txt.gz"], "entity_labels": fb / "FB15k_mid2name.txt"},
        "YAGO3 mte100": {"triples": [yago / f"{s}.txt" for s in ("train", "valid", "test")]},
        "CoDEx-S": {"triples": [codex / "codex-s" / "train.txt"], "entity_types": codex / "types" / "entity2types.json",
                    "type_labels": codex / "types" / "en" / "types.json"},
    }


def _load(spec: dict[str, Any]):
    import duckdb

    from kgprobe.suites.fpq import edits as fpq
    from kgprobe.kg.ingest import KGSource, load_kg

    con = duckdb.connect()
    report = load_kg(con, KGSource(format="tsv", **spec))
    if "entity_types" not in spec:
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

    from kgprobe.suites.fpq.edits import _choice_states, _object_states

    start = time.perf_counter()
    graph = nx.DiGraph()
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
    second = _object_states(states)
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
            if method in ("NSC", "NDC"):  # the hop first, among those with a candidate; then an object at it
                hops = sorted({dist[v] for v in candidates})
                hop = hops[int(states[i, k]) % len(hops)]
                at_hop = [v for v in candidates if dist[v] == hop]
                x = at_hop[int(second[i, k]) % len(at_hop)]
            else:
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
    import networkx  # noqa: F401 - imported before the clock starts, like kgprobe.suites.fpq.edits

    from kgprobe.suites.fpq import edits as fpq

    con, report = _load(spec)
    triples = _sample(con, n, seed)[:n_timed]
    if impl == "coverage":
        queue.put({"entities": report.entities, "triples": report.triples, "settings": _coverage(con, triples, seed)})
        return
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


SETTINGS = {"before: undirected, uniform_candidate": {"directed": False, "hop_sampling": "uniform_candidate"},
            "after: directed, uniform_hop": {"directed": True, "hop_sampling": "uniform_hop"}}


def _coverage(con, triples: Sequence[tuple[int, int, int]], seed: int) -> dict[str, dict[str, Any]]:
    """Per setting: coverage per method and the NSC/NDC hop histogram."""
    from kgprobe.suites.fpq import edits as fpq
    from kgprobe.suites.fpq.quality import hop_histogram, method_coverage

    out = {}
    for name, options in SETTINGS.items():
        rows = [e.as_row() for e in fpq.edit(con, triples, methods=METHODS, max_hops=MAX_HOPS, seed=seed, **options)]
        out[name] = {"coverage": method_coverage(rows), "hops": hop_histogram(rows, max_hops=MAX_HOPS)}
    return out


def _print_coverage(name: str, result: dict[str, Any], n: int) -> None:
    print(f"\n{name}: coverage per method ({n:,} true triples) and NSC/NDC hop shares")
    print(f"{'setting':<38}" + "".join(f"{m:>7}" for m in METHODS))
    for setting, r in result["settings"].items():
        print(f"{setting:<38}" + "".join(f"{r['coverage'].get(m, 0):>7.1%}" for m in METHODS))
    for method in ("NSC", "NDC"):
        print(f"{method + ' hop':<38}" + "".join(f"{h:>7}" for h in range(1, MAX_HOPS + 1)))
        for setting, r in result["settings"].items():
            hops = [h for h in r["hops"] if h["method"] == method]
            print(f"  {setting:<36}" + "".join(f"{h['share']:>7.1%}" for h in hops) + f"   n={sum(h['edits'] for h in hops):,}")
        paper = [h for h in next(iter(result["settings"].values()))["hops"] if h["method"] == method]
        print(f"  {'paper, Table 11 (3 domains pooled)':<36}" + "".join(f"{h['paper_share']:>7.1%}" for h in paper))


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
    parser.add_argument("--coverage-only", action="store_true", help="only coverage and hop histograms, no timing")
    args = parser.parse_args(argv)
    if not (args.data / "kg").is_dir():
        print(f"data folder {args.data} has no kg/; pass --data", file=sys.stderr)
        return 2

    print(f"KG-FPQ edits: {len(METHODS)} methods, max_hops={MAX_HOPS}, seed={args.seed}, n={args.n}")
    header = f"{'KG':<14}{'impl':<10}{'triples':>9}{'edits':>9}{'found':>8}{'seconds':>10}{'edits/s':>11}{'peak MiB':>10}{'run MiB':>9}"
    for name, spec in _kgs(args.data).items():
        cover = _measure("coverage", spec, args.n, args.n, args.seed)
        _print_coverage(f"{name} ({cover['entities']:,} entities, {cover['triples']:,} triples)", cover,
                        min(args.n, cover["triples"]))
        if args.coverage_only:
            continue
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
