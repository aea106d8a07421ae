"""k-hop extraction, Personalized PageRank and pruning (kgprobe.kg.graph), checked against networkx."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from collections.abc import Iterable, Sequence

import duckdb
import networkx as nx
import numpy as np
import pytest

from kgprobe.kg.graph import (
    GraphError,
    PPRConvergenceError,
    Subgraph,
    Triple,
    iter_khop_batch,
    khop,
    khop_batch,
    personalized_pagerank,
    personalized_pagerank_batch,
    ppr_prune,
    ppr_prune_batch,
    subgraph_stats,
)
from kgprobe.sql import create_kg_tables

# dist from 1: 1:0, 2:1, 6:1, 3:2, 9:2, 4:3, 5:4; 7-8 is another component.
# (2,0,2) is a self loop, (1,0,2)/(1,1,2) parallel edges, (6,0,1)/(9,0,6) point towards the seed,
# (6,2,2) joins two distance-1 nodes and (3,1,9) two distance-2 nodes.
SMALL: list[Triple] = [
    (1, 0, 2), (1, 1, 2), (6, 0, 1), (2, 0, 2), (2, 1, 3), (6, 2, 2),
    (9, 0, 6), (3, 1, 9), (3, 0, 4), (4, 0, 5), (7, 0, 8),
]  # fmt: skip


def _connect(triples: Iterable[Triple]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    create_kg_tables(con)
    con.executemany("INSERT INTO triples VALUES (?, ?, ?)", list(triples))
    return con


@pytest.fixture(scope="module")
def small() -> duckdb.DuckDBPyConnection:
    return _connect(SMALL)


def _random_triples(rng: random.Random, n_nodes: int, n_triples: int, n_relations: int = 3) -> list[Triple]:
    triples = {(rng.randrange(n_nodes), rng.randrange(n_relations), rng.randrange(n_nodes)) for _ in range(n_triples)}
    return sorted(triples)


def _ball(graph: nx.Graph, seeds: Sequence[int], radius: int) -> dict[int, int]:
    """Distance of every node within ``radius`` of any seed (seeds absent from the graph at distance 0)."""
    dist: dict[int, int] = {s: 0 for s in seeds}
    for s in seeds:
        if s in graph:
            for node, d in nx.single_source_shortest_path_length(graph, s, cutoff=radius).items():
                dist[node] = min(d, dist.get(node, d))
    return dist


# ---------------------------------------------------------------------------------------------------------------
# khop
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seeds", "hops", "induced", "nodes", "triples"),
    [
        ([1], 0, False, {1}, []),
        ([2], 0, True, {2}, [(2, 0, 2)]),
        ([1], 1, False, {1, 2, 6}, [(1, 0, 2), (1, 1, 2), (6, 0, 1)]),
        ([1], 1, True, {1, 2, 6}, [(1, 0, 2), (1, 1, 2), (2, 0, 2), (6, 0, 1), (6, 2, 2)]),
        (
            [1], 2, False, {1, 2, 3, 6, 9},
            [(1, 0, 2), (1, 1, 2), (2, 0, 2), (2, 1, 3), (6, 0, 1), (6, 2, 2), (9, 0, 6)],
        ),
        (
            [1], 2, True, {1, 2, 3, 6, 9},
            [(1, 0, 2), (1, 1, 2), (2, 0, 2), (2, 1, 3), (3, 1, 9), (6, 0, 1), (6, 2, 2), (9, 0, 6)],
        ),
        # 5 only has an incoming edge: expansion must follow it backwards
        ([5], 1, False, {4, 5}, [(4, 0, 5)]),
        ([5], 2, False, {3, 4, 5}, [(3, 0, 4), (4, 0, 5)]),
        ([1, 7], 1, False, {1, 2, 6, 7, 8}, [(1, 0, 2), (1, 1, 2), (6, 0, 1), (7, 0, 8)]),
        ([1, 1, 2], 0, True, {1, 2}, [(1, 0, 2), (1, 1, 2), (2, 0, 2)]),
        # seeds absent from the KG stay as isolated nodes
        ([100], 2, False, {100}, []),
        ([100, 5], 1, True, {4, 5, 100}, [(4, 0, 5)]),
        ([], 2, False, set(), []),
    ],
)  # fmt: skip
def test_khop_small_graph(
    small: duckdb.DuckDBPyConnection,
    seeds: list[int],
    hops: int,
    induced: bool,
    nodes: set[int],
    triples: list[Triple],
) -> None:
    sub = khop(small, seeds, hops, induced=induced)
    assert sub == Subgraph(frozenset(nodes), triples, capped_nodes=0)


def test_khop_accepts_a_single_id(small: duckdb.DuckDBPyConnection) -> None:
    assert khop(small, 5, 1) == khop(small, [5], 1)


@pytest.mark.parametrize("hops", [1, 2, 3])
@pytest.mark.parametrize("graph_seed", [0, 1, 2])
def test_khop_matches_networkx_on_random_graphs(hops: int, graph_seed: int) -> None:
    rng = random.Random(graph_seed)
    triples = _random_triples(rng, 40, 70)
    con = _connect(triples)
    graph = nx.Graph()
    graph.add_edges_from((h, t) for h, _, t in triples)
    queries = {f"q{i}": rng.sample(range(45), rng.choice([1, 2, 3])) for i in range(8)}  # ids 40.. are absent
    default = khop_batch(con, queries, hops)
    induced = khop_batch(con, queries, hops, induced=True)
    for key, seeds in queries.items():
        dist = _ball(graph, seeds, hops)
        assert default[key].nodes == induced[key].nodes == frozenset(dist)
        assert induced[key].triples == [tr for tr in triples if tr[0] in dist and tr[2] in dist]
        traversed = [tr for tr in triples if min(dist.get(tr[0], hops), dist.get(tr[2], hops)) < hops]
        assert default[key].triples == traversed
        if len(seeds) == 1 and seeds[0] in graph:
            # the induced mode is exactly networkx's ego graph
            ego = nx.ego_graph(graph, seeds[0], radius=hops)
            assert induced[key].nodes == frozenset(ego)


def test_khop_batch_equals_khop(small: duckdb.DuckDBPyConnection) -> None:
    queries = {"a": [1], "b": [5, 7], "c": [], "d": [100, 3], "e": [9]}
    for kwargs in ({}, {"induced": True}, {"fanout_cap": 1, "seed": 3}):
        batch = khop_batch(small, queries, 2, **kwargs)
        assert list(batch) == list(queries)
        assert batch == {key: khop(small, seeds, 2, **kwargs) for key, seeds in queries.items()}
        # chunked passes give the same subgraphs
        chunks = list(iter_khop_batch(small, queries, 2, chunk_size=2, **kwargs))
        assert [len(c) for c in chunks] == [2, 2, 1]
        assert {k: v for c in chunks for k, v in c.items()} == batch


def _star() -> list[Triple]:
    # hub 0 with leaves 1..12 (six pointing in, six out), each leaf i with its own leaf 100 + i, and a self loop
    triples = [(0, 0, i) if i % 2 else (i, 0, 0) for i in range(1, 13)]
    triples += [(i, 1, 100 + i) for i in range(1, 13)] + [(0, 2, 0)]
    return sorted(triples)


def _md5_sample(node: int, neighbours: Iterable[int], cap: int, seed: int) -> set[int]:
    order = sorted(neighbours, key=lambda nbr: (hashlib.md5(f"{seed}:{node}:{nbr}".encode()).hexdigest(), nbr))
    return set(order[:cap])


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_fanout_cap_samples_by_md5_and_is_deterministic(seed: int) -> None:
    con = _connect(_star())
    sub = khop(con, [0], 1, fanout_cap=3, seed=seed)
    chosen = _md5_sample(0, range(1, 13), 3, seed)
    assert sub.nodes == frozenset({0} | chosen)
    assert sub.triples == sorted([tr for tr in _star() if {tr[0], tr[2]} <= {0} | chosen and 0 in (tr[0], tr[2])])
    assert sub.capped_nodes == 1
    assert khop(con, [0], 1, fanout_cap=3, seed=seed) == sub

    two = khop(con, [0], 2, fanout_cap=3, seed=seed)
    # leaves have degree 2 (hub + own leaf): under the cap, so only the hub is capped
    assert two.capped_nodes == 1
    assert two.nodes == frozenset({0} | chosen | {100 + i for i in chosen})
    induced = khop(con, [0], 2, fanout_cap=3, seed=seed, induced=True)
    assert induced.nodes == two.nodes
    assert induced.triples == two.triples  # no edges among reached nodes beyond the traversed ones here


def test_fanout_cap_varies_with_seed_and_respects_cap() -> None:
    con = _connect(_star())
    samples = {khop(con, [0], 1, fanout_cap=4, seed=s).nodes for s in range(8)}
    assert len(samples) > 1
    # a cap above every degree changes nothing and caps nothing
    assert khop(con, [0], 2, fanout_cap=50) == khop(con, [0], 2)
    leaf = khop(con, [1], 2, fanout_cap=1, seed=0)
    # each expanded node follows at most one neighbour: seed 1 -> one node -> one more
    assert len(leaf.nodes) <= 3
    assert leaf.capped_nodes >= 1


@pytest.mark.parametrize("graph_seed", [3, 4])
def test_fanout_cap_bounds_every_expansion(graph_seed: int) -> None:
    rng = random.Random(graph_seed)
    triples = _random_triples(rng, 30, 150)
    con = _connect(triples)
    cap = 2
    for s in range(5):
        sub = khop(con, [s], 2, fanout_cap=cap, seed=11)
        neighbours: dict[int, set[int]] = {}
        for h, _, t in triples:
            if h != t:
                neighbours.setdefault(h, set()).add(t)
                neighbours.setdefault(t, set()).add(h)
        first = _md5_sample(s, neighbours.get(s, ()), cap, 11)
        second = set().union(*(_md5_sample(n, neighbours[n], cap, 11) for n in first)) if first else set()
        assert sub.nodes == frozenset({s} | first | second)
        assert len(sub.nodes) <= 1 + cap + cap * cap
        assert sub.capped_nodes == sum(len(neighbours.get(n, ())) > cap for n in {s} | first)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"hops": -1}, "hops"), ({"fanout_cap": 0}, "fanout_cap"), ({"hops": 1.5}, "hops")],
)
def test_khop_rejects_bad_options(small: duckdb.DuckDBPyConnection, kwargs: dict, message: str) -> None:
    with pytest.raises(GraphError, match=message):
        khop(small, [1], **kwargs)


def test_khop_without_kg_tables_names_the_fix() -> None:
    with pytest.raises(GraphError, match="load_kg"):
        khop(duckdb.connect(), [1])


def test_khop_rejects_string_seeds(small: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(GraphError, match="entity ids"):
        khop(small, "Q42")


# ---------------------------------------------------------------------------------------------------------------
# Personalized PageRank
# ---------------------------------------------------------------------------------------------------------------


def _nx_ppr(
    edges: Iterable[tuple[int, int]], seeds: Iterable[int], *, directed: bool, nodes: Iterable[int] = ()
) -> dict[int, float]:
    graph = nx.MultiDiGraph() if directed else nx.MultiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    graph.add_nodes_from(seeds)
    return nx.pagerank(graph, alpha=0.85, personalization={s: 1 for s in seeds}, tol=1e-6, max_iter=100)


def _assert_close(ours: dict[int, float], theirs: dict[int, float]) -> None:
    assert ours.keys() == theirs.keys()
    assert max(abs(ours[n] - theirs[n]) for n in theirs) <= 1e-6
    assert sum(ours.values()) == pytest.approx(1.0, abs=1e-9)


PPR_CASES = {
    "path with dangling end": ([(1, 2), (2, 3)], [1]),
    "parallel edges": ([(1, 2), (1, 2), (2, 1), (2, 3), (3, 1), (3, 4)], [1]),
    "self loops": ([(1, 1), (1, 2), (2, 2), (2, 2), (2, 3), (4, 4)], [2]),
    "isolated seed": ([(1, 2), (2, 3)], [1, 9]),
    "only a seed": ([], [5]),
    "sink and source": ([(1, 2), (3, 2), (2, 4), (5, 1)], [1, 3]),
    "two components": ([(1, 2), (2, 3), (3, 1), (7, 8), (8, 9)], [9]),
    "star": ([(0, i) for i in range(1, 30)] + [(i, 100 + i) for i in range(1, 30)], [100]),
    # ids outside the dense lookup table's range take the binary-search path
    "negative and huge ids": ([(-5, 2**40), (2**40, 7), (7, -5), (7, 8)], [-5]),
}


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("case", list(PPR_CASES))
def test_ppr_matches_networkx(case: str, directed: bool) -> None:
    edges, seeds = PPR_CASES[case]
    _assert_close(personalized_pagerank(edges, seeds, directed=directed), _nx_ppr(edges, seeds, directed=directed))


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("graph_seed", range(6))
def test_ppr_matches_networkx_on_random_multigraphs(graph_seed: int, directed: bool) -> None:
    rng = random.Random(graph_seed)
    n = rng.choice([5, 20, 60])
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.choice([3, 2 * n, 5 * n]))]
    seeds = rng.sample(range(n + 3), rng.choice([1, 2, 4]))
    extra = [n + 10, n + 11]
    ours = personalized_pagerank(edges, seeds, directed=directed, nodes=extra)
    theirs = _nx_ppr(edges, seeds, directed=directed, nodes=extra)
    _assert_close(ours, theirs)


def test_ppr_is_not_the_fixed_point_but_networkx_iteration() -> None:
    # on a 200-node graph networkx stops at L1 change < 200 * 1e-6, far from the fixed point; a different
    # iteration (or a solver) would differ by more than 1e-6, so matching here means matching the iteration
    rng = random.Random(5)
    edges = [(rng.randrange(200), rng.randrange(200)) for _ in range(600)]
    ours = personalized_pagerank(edges, [0])
    tight = personalized_pagerank(edges, [0], tol=1e-12, max_iter=1000)
    _assert_close(ours, _nx_ppr(edges, [0], directed=False))
    assert max(abs(ours[n] - tight[n]) for n in ours) > 1e-6


def test_ppr_accepts_numpy_edges_and_extra_nodes() -> None:
    edges = np.array([[1, 2], [2, 3], [3, 1]])
    ours = personalized_pagerank(edges, [1], nodes=[10])
    _assert_close(ours, _nx_ppr([(1, 2), (2, 3), (3, 1)], [1], directed=False, nodes=[10]))
    assert ours[10] == 0.0  # isolated and not a seed: its start mass leaves in the first step, nothing comes back


def test_ppr_prune_adds_endpoints_missing_from_nodes() -> None:
    # a hand-built subgraph whose node set forgets an endpoint: scored as a node all the same
    sub = Subgraph(frozenset({1, 2}), [(1, 0, 2), (2, 0, 3)])
    assert ppr_prune(sub, [1], 0.0) == Subgraph(frozenset({1, 2, 3}), [(1, 0, 2), (2, 0, 3)])
    assert ppr_prune(sub, [1], 0.0) == _nx_prune(sub, [1], 0.0)


def test_ppr_errors() -> None:
    with pytest.raises(GraphError, match="no seeds"):
        personalized_pagerank([(1, 2)], [])
    assert personalized_pagerank([], []) == {}
    with pytest.raises(PPRConvergenceError, match="max_iter=2"):
        personalized_pagerank([(1, 2), (2, 3)], [1], max_iter=2)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        _nx_ppr_iter = nx.MultiGraph([(1, 2), (2, 3)])
        nx.pagerank(_nx_ppr_iter, personalization={1: 1}, max_iter=2)
    with pytest.raises(GraphError, match="alpha"):
        personalized_pagerank([(1, 2)], [1], alpha=1.5)
    with pytest.raises(GraphError, match="pairs"):
        personalized_pagerank([(1, 2, 3)], [1])  # type: ignore[list-item]


@pytest.mark.parametrize("directed", [False, True])
def test_ppr_batch_equals_single(directed: bool) -> None:
    rng = random.Random(9)
    graphs: dict[str, list[tuple[int, int]]] = {}
    seeds: dict[str, list[int]] = {}
    for i in range(25):
        # sizes from 1 to ~400 nodes so that blocks converge at different iterations (and get compacted away)
        n = rng.choice([1, 3, 10, 50, 400])
        graphs[f"q{i}"] = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randrange(0, 4 * n + 1))]
        seeds[f"q{i}"] = rng.sample(range(n), min(n, rng.choice([1, 2])))
    batch = personalized_pagerank_batch(graphs, seeds, directed=directed)
    single = {k: personalized_pagerank(graphs[k], seeds[k], directed=directed) for k in graphs}
    assert batch == single  # bit-identical: the stacked system does the same arithmetic per block
    small_chunks = personalized_pagerank_batch(graphs, seeds, directed=directed, chunk_edges=100)
    assert small_chunks == single


# ---------------------------------------------------------------------------------------------------------------
# Pruning
# ---------------------------------------------------------------------------------------------------------------


def _nx_prune(sub: Subgraph, seeds: Sequence[int], threshold: float, *, directed: bool = False) -> Subgraph:
    scores = _nx_ppr(((h, t) for h, _, t in sub.triples), seeds, directed=directed, nodes=sub.nodes)
    keep = {n for n, s in scores.items() if s >= threshold} | set(seeds)
    return Subgraph(frozenset(keep), [tr for tr in sub.triples if tr[0] in keep and tr[2] in keep], sub.capped_nodes)


@pytest.mark.parametrize("threshold", [1e-5, 0.02, 0.08, 0.3])
@pytest.mark.parametrize("directed", [False, True])
def test_ppr_prune_matches_networkx(small: duckdb.DuckDBPyConnection, threshold: float, directed: bool) -> None:
    sub = khop(small, [1, 100], 3)
    pruned = ppr_prune(sub, [1, 100], threshold, directed=directed)
    assert pruned == _nx_prune(sub, [1, 100], threshold, directed=directed)
    assert {1, 100} <= pruned.nodes


def test_ppr_prune_known_values(small: duckdb.DuckDBPyConnection) -> None:
    sub = khop(small, [1], 2)
    assert ppr_prune(sub, [1], 0.0) == sub
    # at threshold 0.1 only the seed's close neighbourhood survives; 3 and 9 (distance 2) fall below
    pruned = ppr_prune(sub, [1], 0.1)
    assert pruned.nodes == frozenset({1, 2, 6})
    assert pruned.triples == [(1, 0, 2), (1, 1, 2), (2, 0, 2), (6, 0, 1), (6, 2, 2)]
    # a threshold above every score keeps the seeds alone
    assert ppr_prune(sub, [1], 2.0) == Subgraph(frozenset({1}), [], 0)


def test_ppr_prune_batch_equals_single(small: duckdb.DuckDBPyConnection) -> None:
    queries = {"a": [1], "b": [5, 7], "c": [100], "d": [3, 9], "e": []}
    subs = khop_batch(small, queries, 2, fanout_cap=2)
    batch = ppr_prune_batch(subs, queries, 0.05)
    assert batch == {k: ppr_prune(subs[k], queries[k], 0.05) for k in queries}
    assert batch["e"] == Subgraph(frozenset(), [], 0)
    with pytest.raises(GraphError, match="no seeds given for query 'a'"):
        ppr_prune_batch(subs, {"b": [5]})


# ---------------------------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------------------------


def test_subgraph_stats_known_values(small: duckdb.DuckDBPyConnection) -> None:
    sub = khop(small, [1], 1, induced=True)  # nodes 1, 2, 6; triangle 1-2-6 plus a parallel edge and a loop
    labels = ({1: "Ada Lovelace", 2: "London", 6: ""}, {0: "born in", 1: "lived in", 2: "visited"})
    stats = subgraph_stats(sub, labels=labels)
    assert stats == {
        "nodes": 3.0,
        "edges": 5.0,
        "avg_degree": 10 / 3,
        "clustering": 1.0,
        "density": 1.0,
        # (1,0,2) 2+2+1, (1,1,2) 2+2+1, (2,0,2) 1+2+1, (6,0,1) 0+2+2, (6,2,2) 0+1+1
        "tokens": 5 + 5 + 4 + 4 + 2,
    }
    assert subgraph_stats(sub)["tokens"] == 15.0
    assert subgraph_stats(Subgraph(frozenset(), [])) == dict.fromkeys(
        ["nodes", "edges", "avg_degree", "clustering", "density", "tokens"], 0.0
    )


@pytest.mark.parametrize("graph_seed", range(5))
def test_subgraph_stats_match_networkx(graph_seed: int) -> None:
    rng = random.Random(graph_seed)
    triples = _random_triples(rng, rng.choice([10, 40, 120]), rng.choice([30, 200, 900]))
    nodes = frozenset({n for h, _, t in triples for n in (h, t)} | {1000})
    stats = subgraph_stats(Subgraph(nodes, triples))
    simple = nx.Graph()
    simple.add_nodes_from(nodes)
    simple.add_edges_from((h, t) for h, _, t in triples if h != t)
    assert stats["clustering"] == pytest.approx(nx.average_clustering(simple), abs=1e-12)
    assert stats["density"] == pytest.approx(nx.density(simple), abs=1e-12)
    multi = nx.MultiGraph([(h, t) for h, _, t in triples])
    assert stats["avg_degree"] == pytest.approx(sum(d for _, d in multi.degree()) / len(nodes))


def test_graph_module_does_not_import_dagster() -> None:
    code = "import sys, kgprobe.kg.graph; sys.exit('dagster' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ---------------------------------------------------------------------------------------------------------------
# FB15k-237 (real data)
# ---------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fb15k(shared_data) -> duckdb.DuckDBPyConnection:
    from kgprobe.kg.ingest import KGSource, load_kg

    con = duckdb.connect()
    load_kg(con, KGSource(triples=[shared_data / "kg/fb15k-237/train.txt.gz"], format="tsv"))
    return con


def _fb15k_queries(con: duckdb.DuckDBPyConnection, n: int, seed: int) -> dict[str, list[int]]:
    ids = [row[0] for row in con.execute("SELECT id FROM entities ORDER BY id").fetchall()]
    rng = random.Random(seed)
    return {f"q{i}": rng.sample(ids, rng.choice([1, 2])) for i in range(n)}


@pytest.mark.slow
@pytest.mark.shared_data
def test_fb15k_ppr_prune_matches_networkx(fb15k: duckdb.DuckDBPyConnection) -> None:
    assert fb15k.execute("SELECT count(*) FROM triples").fetchone() == (272_115,)
    queries = _fb15k_queries(fb15k, 300, seed=0)
    # a fan-out cap keeps 300 queries fast (FB15k-237 2-hop neighbourhoods hold ~5,000 nodes per seed)
    subs = khop_batch(fb15k, queries, 2, fanout_cap=12, seed=0)
    assert any(s.capped_nodes for s in subs.values())
    assert all(len(s.nodes) <= len(queries[k]) * (1 + 12 + 144) for k, s in subs.items())
    edges = {k: [(h, t) for h, _, t in s.triples] for k, s in subs.items()}
    scores = personalized_pagerank_batch(edges, queries, nodes={k: s.nodes for k, s in subs.items()})
    pruned = ppr_prune_batch(subs, queries, 1e-3)
    for key, sub in subs.items():
        theirs = _nx_ppr(((h, t) for h, _, t in sub.triples), queries[key], directed=False, nodes=sub.nodes)
        _assert_close(scores[key], theirs)
        keep = {n for n, s in theirs.items() if s >= 1e-3} | set(queries[key])
        assert pruned[key].nodes == frozenset(keep)
        assert pruned[key].triples == [tr for tr in sub.triples if tr[0] in keep and tr[2] in keep]
    assert sum(len(p.nodes) for p in pruned.values()) < sum(len(s.nodes) for s in subs.values())


@pytest.mark.slow
@pytest.mark.shared_data
def test_fb15k_uncapped_khop_and_prune_match_networkx(fb15k: duckdb.DuckDBPyConnection) -> None:
    triples = fb15k.execute("SELECT head, relation, tail FROM triples ORDER BY ALL").fetchall()
    graph = nx.Graph()
    graph.add_edges_from((h, t) for h, _, t in triples)
    queries = _fb15k_queries(fb15k, 3, seed=1)
    default = khop_batch(fb15k, queries, 2)
    induced = khop_batch(fb15k, queries, 2, induced=True)
    assert default["q0"] == khop(fb15k, queries["q0"], 2)
    for key, seeds in queries.items():
        dist = _ball(graph, seeds, 2)
        assert induced[key].nodes == default[key].nodes == frozenset(dist)
        assert induced[key].triples == [tr for tr in triples if tr[0] in dist and tr[2] in dist]
        assert default[key].triples == [tr for tr in triples if min(dist.get(tr[0], 2), dist.get(tr[2], 2)) < 2]
        for threshold in (1e-5, 1e-4):
            assert ppr_prune(default[key], seeds, threshold) == _nx_prune(default[key], seeds, threshold)


def test_subgraphs_hold_python_int_tuples_and_their_array_cache_follows_the_list(small: duckdb.DuckDBPyConnection) -> None:
    import dataclasses
    import pickle

    sub = khop(small, [1, 100], 3)
    assert sub.triples and all(type(t) is tuple and all(type(x) is int for x in t) for t in sub.triples)
    # a Subgraph built from the same triples without the cached array prunes and measures the same
    plain = Subgraph(frozenset(sub.nodes), [tuple(t) for t in sub.triples], sub.capped_nodes)
    assert ppr_prune(sub, [1, 100], 0.01) == ppr_prune(plain, [1, 100], 0.01)
    assert subgraph_stats(sub) == subgraph_stats(plain)
    # the cache belongs to the list object: a replaced list is read, not the stale array
    fewer = dataclasses.replace(sub, triples=sub.triples[: len(sub.triples) // 2])
    assert subgraph_stats(fewer)["edges"] == len(sub.triples) // 2
    assert ppr_prune(fewer, [1, 100], 0.0).triples == fewer.triples
    # pickling keeps the fields only
    again = pickle.loads(pickle.dumps(sub))
    assert again == sub and "_kgprobe_triple_array" not in again.__dict__
    assert ppr_prune(again, [1, 100], 0.01) == ppr_prune(sub, [1, 100], 0.01)


@pytest.mark.parametrize("big", [0, 2**40])
def test_induced_khop_is_sorted_and_complete_with_small_and_huge_ids(big: int) -> None:
    # small ids take the one-code-per-triple path, ids near 2**40 (codes past a BIGINT) the four-column ORDER BY
    triples = [(big + 3, 1, big + 1), (big + 1, 0, big + 2), (big + 2, 2, big + 1), (big + 1, 1, big + 2), (big + 4, 0, big + 9)]
    con = _connect(triples)
    subs = khop_batch(con, {"a": [big + 1], "b": [big + 2, big + 4]}, 1, induced=True)
    assert subs["a"].triples == sorted(triples[:4])
    assert subs["b"].triples == sorted(t for t in triples if t[0] != big + 3)  # 3 is two hops from 2
    assert subs["b"].nodes == frozenset({big + 1, big + 2, big + 4, big + 9})
