"""OKGQA-P perturbation benchmark: RS, RR, ER, ED at ten levels on 1,000 PPR-pruned FB15k-237 subgraphs.

    python benchmarks/perturb.py [--subgraphs 1000] [--scorer DIR] [--nx-pairs 40] [--chunk 10] [--data PATH]

Subgraphs: seeded random queries of two seed entities, their 2-hop subgraph (``kgprobe.kg.graph.iter_khop_batch``,
the pipeline's default BFS-traversal triples) pruned by Personalized PageRank (``ppr_prune_batch``, threshold
1e-5). Each subgraph is perturbed by all four methods at levels 0.1 .. 1.0 (seed = subgraph index), and every
(original, perturbed) pair gets ATS, SC2D and SD2. RR and ATS use the triple scorer saved by
``benchmarks/scorer.py`` (``--scorer``, default ``benchmarks/results/fb15k237-distmult``); without one, a quick
DistMult (dim 64, 2 epochs, on all KG triples) is trained first and the script says so. ATS is computed from
the PerturbResults (``similarity_batch`` scores each original once and rescores only the changed edges; checked
against ``ats()`` on a sample).

Baseline: SC2D and SD2 the way a networkx user computes them per pair (group the triples by relation; per
relation ``nx.clustering`` of the undirected simple ``nx.Graph`` and the degrees of the ``nx.MultiDiGraph``; sum,
divide by the relation count, L2 distance). It is timed on ``--nx-pairs`` pairs spread over the 40 settings
(values must equal kgprobe's within 1e-9) and extrapolated per pair. Goal: >= 10x networkx's pairs/s.
The whole grid's wall time (perturbation + measures + ATS) and the peak RSS are reported, as well as the mean
share perturbed, ATS, SC2D and SD2 per method and level.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import duckdb
import networkx as nx
import numpy as np

from kgprobe.kg.graph import iter_khop_batch, ppr_prune_batch
from kgprobe.kg.ingest import KGSource, load_kg
from kgprobe.grounding.perturb import LEVELS, METHODS, ats, perturb_detailed, similarity_batch
from kgprobe.grounding.scorer import TrainConfig, TripleScorer, train_scorer

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "kg" / "fb15k-237"
DEFAULT_SCORER = REPO / "benchmarks" / "results" / "fb15k237-distmult"
SETTINGS = [(m, lvl) for m in METHODS for lvl in LEVELS]


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def networkx_measures(original: np.ndarray, perturbed: np.ndarray) -> tuple[float, float]:
    """SC2D and SD2 of one pair the networkx way (each graph's own relation count as its denominator, the paper's
    definition and kgprobe's default)."""

    def sums(triples: list[list[int]]) -> tuple[dict[int, float], dict[int, float], set[int]]:
        by_relation: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for h, r, t in triples:
            by_relation[r].append((h, t))
        clustering: dict[int, float] = defaultdict(float)
        degree: dict[int, float] = defaultdict(float)
        for edges in by_relation.values():
            simple = nx.Graph(edges)
            for v, c in nx.clustering(simple).items():
                clustering[v] += c
            for v, d in nx.MultiDiGraph(edges).degree():
                degree[v] += d
        return clustering, degree, set(by_relation)

    c_o, d_o, r_o = sums(original.tolist())
    c_p, d_p, r_p = sums(perturbed.tolist())
    n_o, n_p = max(len(r_o), 1), max(len(r_p), 1)
    out = []
    for a, b in ((c_o, c_p), (d_o, d_p)):
        nodes = set(a) | set(b)
        dist = float(np.sqrt(sum((a.get(v, 0.0) / n_o - b.get(v, 0.0) / n_p) ** 2 for v in nodes)))
        out.append(1 - dist / (dist + 1))
    return out[0], out[1]


def get_scorer(path: Path, con: duckdb.DuckDBPyConnection, num_entities: int, num_relations: int) -> TripleScorer:
    if (path / "scorer.json").is_file():
        scorer = TripleScorer.load(path)
        if (scorer.num_entities, scorer.num_relations) == (num_entities, num_relations):
            test = scorer.metadata.get("test", {})
            print(f"scorer: loaded {path} ({scorer!r}; test MRR {test.get('mrr', float('nan')):.4f})")
            return scorer
        print(f"scorer at {path} has another id space ({scorer.num_entities} entities); training a quick one")
    triples = con.execute("SELECT head, relation, tail FROM fb.triples").fetchnumpy()
    arr = np.stack([triples["head"], triples["relation"], triples["tail"]], axis=1).astype(np.int64)
    config = TrainConfig(dim=64, epochs=2, batch_size=512, lr=0.01, label_smoothing=0.0)
    tick = time.perf_counter()
    scorer = train_scorer(arr, num_entities, num_relations, config)
    print(f"scorer: none saved at {path}; trained a quick DistMult ({config}) on all {len(arr):,} KG triples in "
          f"{time.perf_counter() - tick:.0f} s (run benchmarks/scorer.py first for the full one)")
    return scorer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subgraphs", type=int, default=1000, help="number of 2-seed queries (default 1000)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="FB15k-237 folder")
    parser.add_argument("--scorer", type=Path, default=DEFAULT_SCORER,
                        help="saved triple scorer (see benchmarks/scorer.py)")
    parser.add_argument("--nx-pairs", type=int, default=40, help="pairs timed with networkx (default 40)")
    parser.add_argument("--chunk", type=int, default=10, help="subgraphs perturbed and measured together (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="query sampling seed (default 0)")
    parser.add_argument("--threshold", type=float, default=1e-5, help="PPR pruning threshold (default 1e-5)")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(2)
    con = duckdb.connect()
    files = [args.data / "train.txt.gz", args.data / "valid.txt", args.data / "test.txt"]
    report = load_kg(con, KGSource(triples=files, format="tsv", name="fb"))
    con.execute("USE fb")
    num_entities = con.execute("SELECT count(*) FROM entities").fetchone()[0]
    num_relations = con.execute("SELECT count(*) FROM relations").fetchone()[0]
    print(f"FB15k-237 (train + valid + test): {report.triples:,} triples, {num_entities:,} entities, "
          f"{num_relations} relations")
    scorer = get_scorer(args.scorer, con, num_entities, num_relations)

    rng = np.random.default_rng(args.seed)
    queries = {f"q{i:05d}": rng.choice(num_entities, 2, replace=False).tolist() for i in range(args.subgraphs)}
    print(f"{len(queries):,} queries of 2 seed entities (seed {args.seed}); 2 hops; PPR threshold {args.threshold:g}; "
          f"{len(SETTINGS)} perturbations each = {len(queries) * len(SETTINGS):,} (original, perturbed) pairs")

    totals: dict[tuple[str, float], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    none_ats: list[float] = []
    sizes: list[int] = []
    timers: dict[str, float] = defaultdict(float)
    cpu_timers: dict[str, float] = defaultdict(float)

    class timed:
        """Add the block's wall and CPU seconds to timers[name] and cpu_timers[name]."""

        def __init__(self, name: str) -> None:
            self.name = name

        def __enter__(self) -> None:
            self.wall, self.cpu = time.perf_counter(), time.process_time()

        def __exit__(self, *exc: object) -> None:
            timers[self.name] += time.perf_counter() - self.wall
            cpu_timers[self.name] += time.process_time() - self.cpu

    # The networkx sample: settings spread over all methods and levels, setting j compared on subgraph j.
    spread = np.unique(np.linspace(0, len(SETTINGS) - 1, max(1, min(args.nx_pairs, len(SETTINGS)))).round().astype(int))
    nx_plan = {SETTINGS[k]: j for j, k in enumerate(spread.tolist())}
    nx_done: list[tuple[float, float, float, float, float]] = []  # (seconds, nx sc2d, nx sd2, ours sc2d, ours sd2)
    extract_seconds = 0.0
    index = 0
    tick = time.perf_counter()
    for part in iter_khop_batch(con, queries, 2, chunk_size=100):
        pruned = ppr_prune_batch(part, {k: queries[k] for k in part}, args.threshold)
        graphs = [np.array(sub.triples, dtype=np.int64).reshape(-1, 3) for sub in pruned.values()]
        extract_seconds += time.perf_counter() - tick
        for lo in range(0, len(graphs), args.chunk):
            chunk = graphs[lo : lo + args.chunk]
            first = index + lo
            sizes.extend(len(g) for g in chunk)
            with timed("ats"):
                none_ats.extend(ats(scorer, g) for g in chunk)
            pairs, keys, results = [], [], []
            for method, level in SETTINGS:
                with timed(f"perturb {method}"):
                    for j, g in enumerate(chunk):
                        res = perturb_detailed(g, method, level, seed=first + j, scorer=scorer)
                        pairs.append((g, res))
                        keys.append((method, level, first + j))
                        results.append(res)
            with timed("sc2d+sd2"):
                sims = similarity_batch(pairs, measures=("sc2d", "sd2"))
            with timed("ats"):
                ats_values = similarity_batch(pairs, scorer=scorer, measures=("ats",))["ats"]
            if first < 3 * args.chunk:  # the incremental ATS equals ats() of the perturbed triples
                for k in range(0, len(pairs), 37):
                    assert abs(ats_values[k] - ats(scorer, results[k].array)) < 1e-9
            for k, (method, level, gi) in enumerate(keys):
                acc = totals[(method, level)]
                acc["n"] += 1
                acc["share"] += results[k].actual_share
                acc["short"] += results[k].shortfall > 0
                acc["ats"] += ats_values[k]
                acc["sc2d"] += sims["sc2d"][k]
                acc["sd2"] += sims["sd2"][k]
                if len(nx_done) < args.nx_pairs and nx_plan.get((method, level)) == gi:
                    t0 = time.perf_counter()
                    want = networkx_measures(pairs[k][0], results[k].array)
                    nx_done.append((time.perf_counter() - t0, *want, sims["sc2d"][k], sims["sd2"][k]))
            del pairs, results, sims
        index += len(graphs)
        done = time.perf_counter() - tick
        print(f"  {index:5d}/{len(queries)} subgraphs  {done:7.1f} s  peak RSS {peak_rss_mb():,.0f} MiB", flush=True)
        tick = time.perf_counter()

    grid = sum(timers.values())
    n_pairs = index * len(SETTINGS)
    print()
    sizes_arr = np.array(sizes)
    print(f"subgraphs: {index:,}; triples per subgraph mean {sizes_arr.mean():,.0f}, "
          f"median {np.median(sizes_arr):,.0f}, max {sizes_arr.max():,}; "
          f"extraction (khop + PPR, not in the grid time) {extract_seconds:.1f} s")
    cpu = sum(cpu_timers.values())
    print(f"grid wall time (all {len(SETTINGS)} perturbations x {index:,} subgraphs, perturb + ATS + SC2D/SD2): "
          f"{grid:.1f} s ({grid / 60:.1f} min), CPU {cpu:.1f} s; peak RSS {peak_rss_mb():,.0f} MiB")
    for name in sorted(timers):
        print(f"  {name:<12} {timers[name]:8.1f} s wall  {cpu_timers[name]:8.1f} s CPU")
    ours_per_pair = timers["sc2d+sd2"] / n_pairs
    if nx_done:
        nx_seconds = np.array([x[0] for x in nx_done])
        worst = max(max(abs(x[1] - x[3]), abs(x[2] - x[4])) for x in nx_done)
        nx_per_pair = float(nx_seconds.mean())
        print(f"SC2D+SD2 (wall): kgprobe {ours_per_pair * 1000:.2f} ms/pair ({1 / ours_per_pair:,.1f} pairs/s) "
              f"vs networkx "
              f"{nx_per_pair * 1000:.1f} ms/pair ({1 / nx_per_pair:,.2f} pairs/s, timed on {len(nx_done)} pairs, "
              f"extrapolated: {nx_per_pair * n_pairs / 3600:.1f} h for the grid) -> "
              f"{nx_per_pair / ours_per_pair:.1f}x; "
              f"max |difference| {worst:.2e}")
        assert worst <= 1e-9, "kgprobe and networkx disagree"
    print()
    print(f"none: ATS {np.mean(none_ats):.4f}, SC2D 1.0000, SD2 1.0000")
    print("method level  share   short  ATS     SC2D    SD2")
    for method, level in SETTINGS:
        acc = totals[(method, level)]
        n = acc["n"]
        print(f"{method:<6} {level:4.1f}  {acc['share'] / n:.4f}  {int(acc['short']):5d}  {acc['ats'] / n:.4f}  "
              f"{acc['sc2d'] / n:.4f}  {acc['sd2'] / n:.4f}")


if __name__ == "__main__":
    main()
