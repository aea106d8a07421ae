"""Benchmark the subgraph stage (2-hop extraction + PPR pruning) against networkx on FB15k-237.

    python benchmarks/subgraph.py [--queries 1000] [--nx-queries 100] [--data PATH]

Each query is two seed entities drawn with a fixed seed. kgprobe runs ``iter_khop_batch(induced=True)`` in DuckDB
and ``ppr_prune_batch`` over all queries; networkx does what a user would write: one undirected MultiGraph of the
KG, built once, then per query the union of the seeds' radius-2 balls (``single_source_shortest_path_length`` with
``cutoff=2``, which is what ``ego_graph(radius=2)`` does before copying; the copy is skipped because it is slower),
``nx.pagerank`` on that induced subgraph, and the threshold. The pruned node sets must be identical. networkx is
timed on a seeded subset of the queries (about 2-3 s each on a laptop core) and extrapolated per query.

Also reported: peak RSS, and the paper-style table of mean subgraph sizes before and after pruning for the
induced subgraphs and for kgprobe's default BFS-traversal subgraphs (the pipeline's default).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import duckdb
import networkx as nx

from kgprobe.kg.graph import Subgraph, iter_khop_batch, ppr_prune_batch, subgraph_stats
from kgprobe.kg.ingest import KGSource, load_kg

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
STAT_KEYS = ("nodes", "edges", "avg_degree", "clustering", "density", "tokens")


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


class Means:
    """Running means of subgraph_stats over queries."""

    def __init__(self) -> None:
        self.total = dict.fromkeys(STAT_KEYS, 0.0)
        self.count = 0

    def add(self, stats: dict[str, float]) -> None:
        for key in STAT_KEYS:
            self.total[key] += stats[key]
        self.count += 1

    def row(self) -> list[str]:
        means = {k: v / max(self.count, 1) for k, v in self.total.items()}
        return [
            f"{means['nodes']:,.1f}",
            f"{means['edges']:,.1f}",
            f"{means['avg_degree']:.2f}",
            f"{means['clustering']:.4f}",
            f"{means['density']:.5f}",
            f"{means['tokens']:,.0f}",
        ]


def run_kgprobe(
    con: duckdb.DuckDBPyConnection,
    queries: dict[str, list[int]],
    *,
    induced: bool,
    threshold: float,
    chunk: int,
    labels: tuple[dict[int, str], dict[int, str]],
    keep: set[str],
) -> tuple[float, float, Means, Means, dict[str, tuple[frozenset[int], frozenset[int], int]]]:
    """Extract and prune all queries chunk by chunk; time only the kgprobe calls (statistics are not timed), in
    seconds and in CPU seconds of this process (all threads)."""
    seconds = cpu = 0.0
    before, after = Means(), Means()
    kept: dict[str, tuple[frozenset[int], frozenset[int], int]] = {}
    start, cpu_start = time.perf_counter(), time.process_time()
    for subs in iter_khop_batch(con, queries, 2, induced=induced, chunk_size=chunk):
        pruned = ppr_prune_batch(subs, {k: queries[k] for k in subs}, threshold)
        seconds += time.perf_counter() - start
        cpu += time.process_time() - cpu_start
        for key, sub in subs.items():
            before.add(subgraph_stats(sub, labels=labels))
            after.add(subgraph_stats(pruned[key], labels=labels))
            if key in keep:
                kept[key] = (pruned[key].nodes, sub.nodes, len(sub.triples))
        del subs, pruned
        start, cpu_start = time.perf_counter(), time.process_time()
    seconds += time.perf_counter() - start
    cpu += time.process_time() - cpu_start
    return seconds, cpu, before, after, kept


def networkx_prune(
    graph: nx.MultiGraph, seeds: Iterable[int], threshold: float
) -> tuple[frozenset[int], frozenset[int], int]:
    """What a networkx user writes: the seeds' 2-hop ego graph, PageRank personalised on the seeds, a threshold."""
    seeds = list(seeds)
    nodes: set[int] = set()
    for seed in seeds:
        nodes.update(nx.single_source_shortest_path_length(graph, seed, cutoff=2))
    ego = graph.subgraph(nodes)
    scores = nx.pagerank(ego, alpha=0.85, personalization={s: 1 for s in seeds}, tol=1e-6, max_iter=100)
    pruned = frozenset(n for n, s in scores.items() if s >= threshold) | frozenset(seeds)
    return pruned, frozenset(nodes), ego.number_of_edges()


def table(rows: list[tuple[str, list[str]]]) -> str:
    header = ["subgraphs", "nodes", "edges", "avg degree", "clustering", "density", "tokens"]
    cells = [header] + [[name, *values] for name, values in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000, help="number of two-seed queries (default 1000)")
    parser.add_argument("--nx-queries", type=int, default=100, help="seeded subset timed with networkx (default 100)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder (holds kg/fb15k-237)")
    parser.add_argument("--threshold", type=float, default=1e-5, help="PPR pruning threshold (default 1e-5)")
    parser.add_argument("--chunk", type=int, default=16, help="queries per kgprobe pass (bounds memory; default 16)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    kg = args.data / "kg" / "fb15k-237"
    if not (kg / "train.txt.gz").is_file():
        parser.error(f"FB15k-237 not found at {kg}/train.txt.gz; pass --data pointing at the shared data folder")

    con = duckdb.connect()
    start = time.perf_counter()
    source = KGSource(
        triples=[kg / "train.txt.gz"],
        format="tsv",
        entity_labels=kg / "entity2text.txt",
        relation_labels=kg / "relation2text.txt",
    )
    report = load_kg(con, source)
    load_seconds = time.perf_counter() - start
    entity_labels = dict(con.execute("SELECT id, label FROM entities").fetchall())
    relation_labels = dict(con.execute("SELECT id, label FROM relations").fetchall())
    labels = (entity_labels, relation_labels)
    print(f"FB15k-237: {report.triples:,} triples, {report.entities:,} entities, into DuckDB in {load_seconds:.1f} s")

    rng = random.Random(args.seed)
    entity_ids = [row[0] for row in con.execute("SELECT id FROM entities ORDER BY id").fetchall()]
    queries = {f"q{i:04d}": rng.sample(entity_ids, 2) for i in range(args.queries)}
    nx_keys = sorted(rng.sample(sorted(queries), min(args.nx_queries, len(queries))))
    n = len(queries)
    print(f"{n:,} queries of 2 seed entities (seed {args.seed}); 2 hops; PPR alpha 0.85, threshold {args.threshold:g}")
    print()

    options = {"threshold": args.threshold, "chunk": args.chunk, "labels": labels}
    seconds, cpu, induced_before, induced_after, ours = run_kgprobe(con, queries, induced=True, keep=set(nx_keys), **options)
    rss_induced = peak_rss_mb()
    per_query = seconds / n
    print(
        f"kgprobe  iter_khop_batch(induced=True) + ppr_prune_batch: {seconds:7.1f} s for {n:,} queries"
        f" = {per_query * 1000:7.1f} ms/query ({cpu / n * 1000:.1f} ms CPU)"
    )
    print(f"         peak RSS (DuckDB with the KG + {args.chunk} subgraphs at a time): {rss_induced:,.0f} MiB")
    default_seconds, _, default_before, default_after, _ = run_kgprobe(con, queries, induced=False, keep=set(), **options)
    rss_kgprobe = peak_rss_mb()
    print(
        f"kgprobe  default BFS-traversal mode, same queries:         {default_seconds:7.1f} s"
        f" = {default_seconds / n * 1000:7.1f} ms/query"
    )
    print(f"         peak RSS after both kgprobe runs: {rss_kgprobe:,.0f} MiB")

    triples = con.execute("SELECT head, tail FROM triples").fetchnumpy()
    start = time.perf_counter()
    graph = nx.MultiGraph()
    graph.add_nodes_from(entity_ids)
    graph.add_edges_from(zip(triples["head"].tolist(), triples["tail"].tolist()))
    build_seconds = time.perf_counter() - start
    # nx.ego_graph itself on a few queries: the node sets compared below must be its node sets
    for key in nx_keys[:3]:
        ego_nodes = set().union(*(nx.ego_graph(graph, s, radius=2).nodes for s in queries[key]))
        assert frozenset(ego_nodes) == ours[key][1], f"{key}: kgprobe's induced 2-hop nodes differ from ego_graph's"
    start, cpu_start = time.perf_counter(), time.process_time()
    mismatches = [key for key in nx_keys if networkx_prune(graph, queries[key], args.threshold) != ours[key]]
    nx_seconds, nx_cpu = time.perf_counter() - start, time.process_time() - cpu_start
    nx_per_query = nx_seconds / len(nx_keys)
    print(f"networkx MultiGraph of the KG built once in {build_seconds:.1f} s (not counted, like the DuckDB load)")
    print(
        f"networkx ego graph + pagerank + threshold:                {nx_seconds:7.1f} s for {len(nx_keys):,} queries"
        f" = {nx_per_query * 1000:7.1f} ms/query ({nx_cpu / len(nx_keys) * 1000:.1f} ms CPU)"
    )
    if len(nx_keys) < n:
        print(f"         (a seeded subset; extrapolated to {n:,} queries: {nx_per_query * n:,.0f} s)")
    print(f"         peak RSS after networkx (process-wide high-water mark): {peak_rss_mb():,.0f} MiB")
    print()
    if mismatches:
        print(f"MISMATCH: pruned node sets or subgraph sizes differ for {len(mismatches)} queries: {mismatches[:10]}")
        return 1
    print(f"identical 2-hop node sets, induced edge counts and pruned node sets on all {len(nx_keys)} queries compared")
    ratio = nx_per_query / per_query
    cpu_ratio = (nx_cpu / len(nx_keys)) / (cpu / n)
    print(f"speed:  kgprobe is {ratio:.1f}x faster per query (goal >= 30x): {'OK' if ratio >= 30 else 'BELOW GOAL'};"
          f" {cpu_ratio:.1f}x in CPU seconds (DuckDB's threads included); load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    verdict = "OK" if rss_kgprobe < 2048 else "ABOVE GOAL"
    print(f"memory: kgprobe peak RSS {rss_kgprobe:,.0f} MiB (goal < 2048 MiB): {verdict}")
    print()
    print(f"mean per query over {n:,} queries (tokens: whitespace words of the 'head relation tail' label lines)")
    rows = [
        ("2-hop induced (= ego_graph)", induced_before.row()),
        (f"  PPR-pruned ({args.threshold:g})", induced_after.row()),
        ("2-hop BFS traversal (default)", default_before.row()),
        (f"  PPR-pruned ({args.threshold:g})", default_after.row()),
    ]
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
