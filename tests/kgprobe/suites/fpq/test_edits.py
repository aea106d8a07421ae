"""kgprobe.suites.fpq.edits: the six KG-FPQ edit methods, the multi-source BFS, true-triple selection, templates and questions,
checked on a hand-made graph with known distances, on random graphs against networkx, on the authors' KG-FPQ
records, and end to end on FB15k-237."""

from __future__ import annotations

import json
from collections import Counter
import random
from collections.abc import Iterable
from pathlib import Path

import duckdb
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from kgprobe.suites.fpq import edits as fpq
from kgprobe.errors import ConfigError, KGProbeError
from kgprobe.suites.fpq.edits import ALL_METHODS, DomainSpec, Edit, TrueTriple
from kgprobe.sql import create_kg_tables

# ---------------------------------------------------------------- a hand-made typed graph
#
#   0 -R0-> 1 -R1-> 2 -R1-> 3 <-R1- 4 -R1-> 5 -R1-> 6 -R1-> 7      2 -R2-> 13      0 -R0-> 12
#   8 -R0-> 9          10 -R2-> 11
#
# Undirected distances from 0: 1:1 12:1 2:2 3:3 13:3 4:4 5:5 6:6 7:7; 8..11 unreachable.
# Directed (head -> tail) distances from 0: 1:1 12:1 2:2 3:3 13:3; 4..11 unreachable (4 -> 3 points the other way).
# Types: A = {1, 3, 6, 9, 12, 13}, B = {2, 4, 7, 11, 13} (13 has both); 0, 5, 8, 10 are untyped.

NAMES = ["Avalon", "Brixton", "Camelot", "Dunmore", "Elmira", "Fairhope", "Glenrock", "Harlow", "Ivydale",
         "Jasper", "Kenmare", "Lindau", "Mayfield", "Norwich"]  # fmt: skip
HAND_TRIPLES = [(0, 0, 1), (0, 0, 12), (1, 1, 2), (2, 1, 3), (4, 1, 3), (4, 1, 5), (5, 1, 6), (6, 1, 7),
                (2, 2, 13), (8, 0, 9), (10, 2, 11)]  # fmt: skip
TYPE_A = {1, 3, 6, 9, 12, 13}
TYPE_B = {2, 4, 7, 11, 13}
DIST_FROM_0 = {0: 0, 1: 1, 12: 1, 2: 2, 3: 3, 13: 3, 4: 4, 5: 5, 6: 6, 7: 7}
DIRECTED_FROM_0 = {0: 0, 1: 1, 12: 1, 2: 2, 3: 3, 13: 3}


def _fill(con: duckdb.DuckDBPyConnection, n_entities: int, n_relations: int, triples: Iterable[tuple[int, int, int]],
          types: dict[int, set[str]], labels: list[str] | None = None, relation_keys: list[str] | None = None) -> None:  # fmt: skip
    create_kg_tables(con)
    labels = labels or [f"entity {i}" for i in range(n_entities)]
    relation_keys = relation_keys or [f"r{i}" for i in range(n_relations)]
    con.executemany("INSERT INTO entities VALUES (?, ?, ?)", [(i, f"e{i}", labels[i]) for i in range(n_entities)])
    con.executemany("INSERT INTO relations VALUES (?, ?, ?)", [(i, k, k.upper()) for i, k in enumerate(relation_keys)])
    con.executemany("INSERT INTO triples VALUES (?, ?, ?)", list(triples))
    rows = [(e, t, t.lower()) for e, ts in types.items() for t in sorted(ts)]
    if rows:
        con.executemany("INSERT INTO entity_types VALUES (?, ?, ?)", rows)


@pytest.fixture(scope="module")
def hand() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    types = {e: set() for e in range(14)}
    for e in TYPE_A:
        types[e].add("A")
    for e in TYPE_B:
        types[e].add("B")
    _fill(con, 14, 3, HAND_TRIPLES, types, labels=NAMES)
    yield con
    con.close()


def _chosen(con, triple, method, seeds=range(64), **kw) -> set[int | None]:
    return {fpq.edit(con, [triple], methods=(method,), seed=s, **kw)[0].false_object for s in seeds}


# Every candidate of each method, worked out by hand from the picture above. Over 64 seeds a uniform choice among
# at most 8 candidates misses one with probability < 1e-3 per case; the expected sets are exact. Directed (the
# default) and undirected hops, each with both hop samplings, which change the odds but never the candidates.
DIRECTED_CANDIDATES = [
    ((0, 0, 1), "NSC", {3, 13}),
    ((0, 0, 1), "NDC", {2}),  # 4 is reached only against the edge 4 -> 3
    ((0, 0, 1), "NNSC", {6, 9}),
    ((0, 0, 1), "NNDC", {4, 7, 11}),
    ((0, 0, 1), "NNSR", {9}),
    ((0, 0, 1), "NNDR", {5, 6, 7, 11}),
    ((8, 0, 9), "NNSC", {1, 3, 6, 12, 13}),
    ((8, 0, 9), "NNDR", {2, 3, 5, 6, 7, 11, 13}),
    ((4, 1, 5), "NNSR", {2}),  # 4 reaches 3, 5, 6, 7 forwards; 2 only backwards
    ((4, 1, 5), "NNDR", {1, 9, 11, 12, 13}),  # undirected only 9 and 11 lie beyond 5 hops
]


@pytest.mark.parametrize("hop_sampling", fpq.HOP_SAMPLING)
@pytest.mark.parametrize(("triple", "method", "expected"), DIRECTED_CANDIDATES)
def test_each_method_picks_exactly_its_directed_candidates(hand, triple, method, expected, hop_sampling) -> None:
    assert _chosen(hand, triple, method, hop_sampling=hop_sampling) == expected


@pytest.mark.parametrize("hop_sampling", fpq.HOP_SAMPLING)
@pytest.mark.parametrize(
    ("triple", "method", "expected"),
    [
        ((0, 0, 1), "NSC", {3, 13}),  # 12 is type A at hop 1 but (0, R0, 12) is in the KG
        ((0, 0, 1), "NDC", {2, 4}),  # 13 shares A with 1; 5 is untyped
        ((0, 0, 1), "NNSC", {6, 9}),  # 6 is 6 hops away, 9 unreachable
        ((0, 0, 1), "NNDC", {7, 11}),
        ((0, 0, 1), "NNSR", {9}),  # objects of R0: 1, 12 (near), 9
        ((0, 0, 1), "NNDR", {6, 7, 11}),  # 9 is an object of R0; 8 and 10 are never objects
        ((8, 0, 9), "NNSC", {1, 3, 6, 12, 13}),
        ((8, 0, 9), "NNDC", {2, 4, 7, 11}),
        ((8, 0, 9), "NNSR", {1, 12}),
        ((8, 0, 9), "NNDR", {2, 3, 5, 6, 7, 11, 13}),
        ((4, 1, 5), "NNDR", {9, 11}),
    ],
)
def test_each_method_picks_exactly_its_undirected_candidates(hand, triple, method, expected, hop_sampling) -> None:
    assert _chosen(hand, triple, method, directed=False, hop_sampling=hop_sampling) == expected


@pytest.mark.parametrize(
    ("triple", "method", "directed", "reason"),
    [
        ((4, 1, 5), "NSC", True, "true object has no entity type"),
        ((4, 1, 5), "NNDC", False, "true object has no entity type"),
        # objects of R1 are all within 4 undirected hops of 4
        ((4, 1, 5), "NNSR", False, "no object of the relation beyond 5 hops (undirected)"),
        ((8, 0, 9), "NSC", True, "no same-type entity within 5 directed hops"),
        ((8, 0, 9), "NDC", False, "no different-type entity within 5 hops (undirected)"),
    ],
)
def test_reason_when_no_candidate(hand, triple, method, directed, reason) -> None:
    (e,) = fpq.edit(hand, [triple], methods=(method,), directed=directed)
    assert (e.false_object, e.hop, e.path, e.reason) == (None, None, None, reason)


def test_max_hops_moves_the_boundary(hand) -> None:
    (e,) = fpq.edit(hand, [(0, 0, 1)], methods=("NSC",), max_hops=2)
    assert e.reason == "no same-type entity within 2 directed hops"  # only 1 and 12 are type A within 2 hops
    assert _chosen(hand, (0, 0, 1), "NNSC", max_hops=2) == {3, 6, 9, 13}
    assert _chosen(hand, (0, 0, 1), "NNSC", max_hops=6) == {6, 9}  # 6 is never reached forwards
    assert _chosen(hand, (0, 0, 1), "NNSC", max_hops=6, directed=False) == {9}


def test_directed_hops_and_paths_walk_head_to_tail(hand) -> None:
    edits = {e.false_object: e for s in range(64) for e in fpq.edit(hand, [(0, 0, 1)], methods=("NSC", "NDC"), seed=s)}
    assert {o: e.hop for o, e in edits.items()} == {o: DIRECTED_FROM_0[o] for o in (2, 3, 13)}
    assert edits[3].path == ((0, 0, 1), (1, 1, 2), (2, 1, 3))
    assert edits[13].path == ((0, 0, 1), (1, 1, 2), (2, 2, 13))
    for e in edits.values():
        assert e.path[0][0] == 0 and e.path[-1][2] == e.false_object and len(e.path) == e.hop
        assert all(a[2] == b[0] for a, b in zip(e.path, e.path[1:]))


def test_undirected_hops_and_shortest_paths(hand) -> None:
    edits = {e.false_object: e for s in range(64)
             for e in fpq.edit(hand, [(0, 0, 1)], methods=("NSC", "NDC"), seed=s, directed=False)}  # fmt: skip
    assert {o: e.hop for o, e in edits.items()} == {o: DIST_FROM_0[o] for o in (2, 3, 4, 13)}
    assert edits[3].path == ((0, 0, 1), (1, 1, 2), (2, 1, 3))
    assert edits[13].path == ((0, 0, 1), (1, 1, 2), (2, 2, 13))
    assert edits[4].path == ((0, 0, 1), (1, 1, 2), (2, 1, 3), (4, 1, 3))  # the last triple is walked backwards
    for e in fpq.edit(hand, [(0, 0, 1)], methods=("NNSC", "NNDC", "NNSR", "NNDR"), directed=False):
        assert e.hop is None and e.path is None


def _fan(con: duckdb.DuckDBPyConnection, far: int) -> None:
    """Subject 0 -> 1 (the true object) and 0 -> 2 (the one 1-hop candidate), 2 -> 3..3+far (2-hop candidates);
    every entity has type A."""
    triples = [(0, 0, 1), (0, 1, 2)] + [(2, 1, 3 + k) for k in range(far)]
    n = 3 + far
    _fill(con, n, 2, triples, {e: {"A"} for e in range(n)})


@pytest.mark.parametrize(("hop_sampling", "low", "high"), [("uniform_hop", 80, 120), ("uniform_candidate", 0, 15)])
def test_hop_sampling_draws_the_hop_first_or_a_candidate(hop_sampling: str, low: int, high: int) -> None:
    con = duckdb.connect()
    _fan(con, 30)  # 1 candidate at hop 1, 30 at hop 2
    edits = [fpq.edit(con, [(0, 0, 1)], methods=("NSC",), seed=s, hop_sampling=hop_sampling)[0] for s in range(200)]
    at_one = sum(e.hop == 1 for e in edits)
    # uniform_hop: hop 1 half the time (binomial(200, 1/2): 80..120 holds with probability > 0.99);
    # uniform_candidate: 1 in 31 (expected 6.5)
    assert low <= at_one <= high, at_one
    assert {e.false_object for e in edits if e.hop == 1} == {2}


def test_hop_sampling_is_checked(hand) -> None:
    with pytest.raises(ConfigError, match="unknown hop_sampling 'by_hop'"):
        fpq.edit(hand, [(0, 0, 1)], hop_sampling="by_hop")


def test_seeded_and_independent_of_order_batching_and_method_subset(hand) -> None:
    triples = [(0, 0, 1), (8, 0, 9), (4, 1, 5), (0, 0, 12), (2, 1, 3)]
    a = fpq.edit(hand, triples, seed=7)
    assert a == fpq.edit(hand, triples, seed=7)
    assert [(e.subject, e.relation, e.true_object, e.method) for e in a] == [t + (m,) for t in triples for m in ALL_METHODS]
    b = fpq.edit(hand, list(reversed(triples)), seed=7, batch_size=1)
    assert sorted(a, key=repr) == sorted(b, key=repr)
    only = fpq.edit(hand, triples, methods=("NNDR", "NSC"), seed=7)
    assert set(only) == {e for e in a if e.method in ("NNDR", "NSC")}
    several = {tuple(e.false_object for e in fpq.edit(hand, triples, seed=s)) for s in range(8)}
    assert len(several) > 1  # the seed matters


def test_edit_rejects_bad_input(hand) -> None:
    with pytest.raises(KGProbeError, match=r"not in the KG's triples table, e.g. \[\(0, 0, 3\)\]"):
        fpq.edit(hand, [(0, 0, 1), (0, 0, 3)])
    with pytest.raises(KGProbeError, match="not in the KG"):
        fpq.edit(hand, [(99, 0, 1)])
    with pytest.raises(ConfigError, match="unknown KG-FPQ edit method"):
        fpq.edit(hand, [(0, 0, 1)], methods=("NSX",))
    with pytest.raises(ConfigError, match="max_hops"):
        fpq.edit(hand, [(0, 0, 1)], max_hops=0)
    assert fpq.edit(hand, []) == []


def test_edit_as_row() -> None:
    e = Edit(0, 0, 1, 3, "NSC", 2, ((0, 0, 1), (1, 1, 3)), None)
    assert e.as_row() == {"subject": 0, "relation": 0, "true_object": 1, "false_object": 3, "method": "NSC", "hop": 2,
                          "path": [[0, 0, 1], [1, 1, 3]], "reason": None}  # fmt: skip
    assert e.false_triple == (0, 0, 3)


# ---------------------------------------------------------------- multi-source BFS against networkx


def _random_edges(rng: random.Random, n: int, m: int) -> list[tuple[int, int]]:
    return [(rng.randrange(n), rng.randrange(n)) for _ in range(m)]


@pytest.mark.parametrize(("seed", "n", "m", "max_hops"), [(0, 60, 70, 5), (1, 300, 330, 5), (2, 300, 600, 3), (3, 500, 520, 9)])
def test_hop_matrix_equals_networkx(seed: int, n: int, m: int, max_hops: int) -> None:
    rng = random.Random(seed)
    edges = _random_edges(rng, n, m)  # sparse, so many pairs lie beyond max_hops or in other components
    rows, cols = zip(*edges, strict=True)
    adjacency = sp.coo_matrix((np.ones(m), (rows, cols)), shape=(n, n))  # directed: hop_matrix symmetrises
    graph = nx.Graph(edges)
    graph.add_nodes_from(range(n))
    sources = [rng.randrange(n) for _ in range(150)] + [0, 0]  # several bit words, a partial batch, a duplicate
    got = fpq.hop_matrix(adjacency, sources, max_hops=max_hops, batch_size=100)
    assert got.shape == (len(sources), n)
    for i, s in enumerate(sources):
        want = np.full(n, -1)
        for v, d in nx.single_source_shortest_path_length(graph, s, cutoff=max_hops).items():
            want[v] = d
        assert (got[i] == want).all(), f"source {s}"


def test_hop_matrix_reads_structure_only() -> None:
    # a weight below 1, a duplicate, a self loop and an edge given backwards are all one plain undirected edge
    adjacency = sp.coo_matrix(([0.5, 2.0, 1.0, 1.0], ([0, 0, 2, 3], [1, 1, 2, 2])), shape=(5, 5))
    assert fpq.hop_matrix(adjacency, [0, 3, 4], max_hops=2).tolist() == [
        [0, 1, -1, -1, -1], [-1, -1, 1, 0, -1], [-1, -1, -1, -1, 0]]  # fmt: skip


def test_bfs_in_row_blocks_equals_one_block(monkeypatch) -> None:
    rng = random.Random(5)
    n, edges = 400, _random_edges(rng, 400, 900)
    rows, cols = zip(*edges, strict=True)
    adjacency = sp.coo_matrix((np.ones(len(edges)), (rows, cols)), shape=(n, n))
    whole = fpq.hop_matrix(adjacency, range(0, n, 3), max_hops=5)
    monkeypatch.setattr(fpq, "_GATHER_WORDS", 37)  # many small blocks, rows split at odd places
    assert (fpq.hop_matrix(adjacency, range(0, n, 3), max_hops=5) == whole).all()


# ---------------------------------------------------------------- random typed KGs: every invariant, against networkx


def _check_edits(edits: list[Edit], triples: list[tuple[int, int, int]], types: dict[int, set[str]],
                 dist: dict[int, dict[int, int]], max_hops: int, n: int, *, directed: bool = True) -> int:  # fmt: skip
    """Assert each edit satisfies its method's definition, independently of kgprobe; return how many found one."""
    kg = set(triples)
    objects_of: dict[int, set[int]] = {}
    for _, r, o in triples:
        objects_of.setdefault(r, set()).add(o)
    all_objects = set().union(*objects_of.values())
    found = 0
    for e in edits:
        s, r, o, x = e.subject, e.relation, e.true_object, e.false_object
        d = dist[s]
        near_ok = lambda v: v in d and 1 <= d[v] <= max_hops  # noqa: E731
        same = lambda v: bool(types.get(v)) and bool(types[v] & types.get(o, set()))  # noqa: E731
        differ = lambda v: bool(types.get(v)) and bool(types.get(o)) and not (types[v] & types[o])  # noqa: E731
        rule = {
            "NSC": lambda v: near_ok(v) and same(v),
            "NDC": lambda v: near_ok(v) and differ(v),
            "NNSC": lambda v: v not in d and same(v),
            "NNDC": lambda v: v not in d and differ(v),
            "NNSR": lambda v: v not in d and v in objects_of[r],
            "NNDR": lambda v: v not in d and v in all_objects and v not in objects_of[r],
        }[e.method]
        candidates = {v for v in range(n) if v not in (s, o) and (s, r, v) not in kg and rule(v)}
        if x is None:
            assert not candidates and e.reason, e
            continue
        found += 1
        assert x in candidates and e.reason is None, e
        if e.method in ("NSC", "NDC"):
            assert e.hop == d[x] and len(e.path) == e.hop, e
            at = s
            for h, rel, t in e.path:
                assert (h, rel, t) in kg and at in (h, t), e
                assert not directed or at == h, e  # a directed path walks every triple head -> tail
                at = t if at == h else h
            assert at == x, e
        else:
            assert e.hop is None and e.path is None, e
    return found


def _random_kg(rng: random.Random, triples: list, n: int, n_rel: int, max_hops: int, directed: bool) -> tuple:
    """``triples`` without self-loops, random types (none, one or two of P, Q, R) per entity, the KG loaded into a
    new DuckDB connection, and networkx's distances (up to ``max_hops``) from every subject."""
    triples = [t for t in triples if t[0] != t[2]]
    types = {v: set(rng.sample(["P", "Q", "R"], rng.choice([0, 1, 1, 2]))) for v in range(n)}
    con = duckdb.connect()
    _fill(con, n, n_rel, triples, types)
    graph = (nx.DiGraph if directed else nx.Graph)((h, t) for h, _, t in triples)
    dist = {s: nx.single_source_shortest_path_length(graph, s, cutoff=max_hops) for s in {t[0] for t in triples}}
    return triples, types, con, dist


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_kg_edits_satisfy_every_definition(seed: int, directed: bool) -> None:
    rng = random.Random(seed)
    n, n_rel, max_hops = 120, 4, 3
    triples = sorted({(rng.randrange(n), rng.randrange(n_rel), rng.randrange(n)) for _ in range(150)})
    triples, types, con, dist = _random_kg(rng, triples, n, n_rel, max_hops, directed)
    edits = fpq.edit(con, triples, max_hops=max_hops, seed=seed, batch_size=64, directed=directed)
    assert len(edits) == 6 * len(triples)
    assert _check_edits(edits, triples, types, dist, max_hops, n, directed=directed) > 2 * len(triples)


def _reference_edits(triples: list[tuple[int, int, int]], types: dict[int, set[str]], n: int, max_hops: int, seed: int,
                     *, directed: bool, hop_sampling: str) -> list[Edit]:  # fmt: skip
    """The edit methods written out plainly: a boolean mask over every entity per candidate set, networkx distances,
    and the documented draws (candidates in id order; the hop first with uniform_hop)."""
    graph = (nx.DiGraph if directed else nx.Graph)()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((h, t) for h, _, t in triples)
    kg = set(triples)
    typed = np.array([bool(types.get(v)) for v in range(n)])
    is_object = np.zeros(n, dtype=bool)
    is_object[[t for _, _, t in triples]] = True
    arr = np.asarray(triples, dtype=np.int64)
    states = fpq._choice_states(seed, arr)
    second = fpq._object_states(states)
    out = []
    for i, (s, r, o) in enumerate(triples):
        reach = nx.single_source_shortest_path_length(graph, s, cutoff=max_hops)
        dist = np.full(n, -1)
        dist[list(reach)] = list(reach.values())
        near = (dist > 0) & np.array([(s, r, v) not in kg for v in range(n)])
        far = dist < 0
        same = np.array([bool(types.get(v, set()) & types.get(o, set())) for v in range(n)])
        of_r = np.zeros(n, dtype=bool)
        of_r[[t for _, rel, t in triples if rel == r]] = True
        pools = {"NSC": same, "NDC": typed & ~same, "NNSC": same, "NNDC": typed & ~same, "NNSR": of_r, "NNDR": is_object & ~of_r}
        for col, m in enumerate(ALL_METHODS):
            if m in ("NSC", "NDC", "NNSC", "NNDC") and not types.get(o):
                out.append((s, r, o, None, m))
                continue
            candidates = np.flatnonzero((near if m in ("NSC", "NDC") else far) & pools[m])
            if len(candidates) == 0:
                out.append((s, r, o, None, m))
                continue
            if m in ("NSC", "NDC") and hop_sampling == "uniform_hop":
                hops = np.unique(dist[candidates])
                candidates = candidates[dist[candidates] == hops[int(states[i, col]) % len(hops)]]
                x = candidates[int(second[i, col]) % len(candidates)]
            else:
                x = candidates[int(states[i, col]) % len(candidates)]
            out.append((s, r, o, int(x), m))
    return out


@pytest.mark.parametrize("hop_sampling", fpq.HOP_SAMPLING)
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_edits_equal_whole_table_masks(seed: int, directed: bool, hop_sampling: str) -> None:
    # edit() reads candidates through sorted pools and skips; this is the definition with masks over every entity
    rng = random.Random(100 + seed)
    n, n_rel, max_hops = 90, 3, 2 + seed % 2
    hubs = [rng.randrange(n) for _ in range(3)]  # skewed degrees: most triples touch a hub
    triples = sorted({(rng.choice(hubs + [rng.randrange(n)]), rng.randrange(n_rel), rng.choice(hubs + [rng.randrange(n)]))
                      for _ in range(160)})  # fmt: skip
    triples = [t for t in triples if t[0] != t[2]]
    types = {v: set(rng.sample(["P", "Q", "R", "S"], rng.choice([0, 1, 1, 1, 2, 3]))) for v in range(n)}
    con = duckdb.connect()
    _fill(con, n, n_rel, triples, types)
    edits = fpq.edit(con, triples, max_hops=max_hops, seed=seed, batch_size=16, directed=directed, hop_sampling=hop_sampling)
    got = [(e.subject, e.relation, e.true_object, e.false_object, e.method) for e in edits]
    expected = _reference_edits(triples, types, n, max_hops, seed, directed=directed, hop_sampling=hop_sampling)
    assert got == expected
    assert sum(x is not None for *_, x, _ in got) > 2 * len(triples)


# ---------------------------------------------------------------- the bounded search (large KGs)


def _skewed_kg(seed: int, n: int = 90, n_rel: int = 3, m: int = 200) -> tuple[duckdb.DuckDBPyConnection, list, dict]:
    rng = random.Random(100 + seed)
    hubs = [rng.randrange(n) for _ in range(3)]  # skewed degrees: most triples touch a hub
    triples = sorted({(rng.choice(hubs + [rng.randrange(n)]), rng.randrange(n_rel), rng.choice(hubs + [rng.randrange(n)]))
                      for _ in range(m)})  # fmt: skip
    triples = [t for t in triples if t[0] != t[2]]
    types = {v: set(rng.sample(["P", "Q", "R", "S"], rng.choice([0, 1, 1, 1, 2, 3]))) for v in range(n)}
    con = duckdb.connect()
    _fill(con, n, n_rel, triples, types)
    return con, triples, types


def test_small_kgs_are_searched_exactly_by_default(hand) -> None:
    # the sample and the benchmark KGs lie far below EXACT_BELOW * SEARCH_BUDGET entries: the default is the exact
    # search, whatever the budget says
    triples = [(0, 0, 1), (8, 0, 9), (4, 1, 5)]
    assert fpq.edit(hand, triples, seed=3) == fpq.edit(hand, triples, seed=3, search_budget=None)
    with pytest.raises(ConfigError, match="search_budget must be positive"):
        fpq.edit(hand, triples, search_budget=0)


@pytest.mark.parametrize("hop_sampling", fpq.HOP_SAMPLING)
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", [0, 1])
def test_bounded_search_of_complete_balls_equals_the_exact_search(monkeypatch, seed, directed, hop_sampling) -> None:
    # every ball fits in the budget: the bounded search reads its pools through the ball, and must draw exactly what
    # the batched BFS over the whole entity table draws
    con, triples, _ = _skewed_kg(seed)
    exact = fpq.edit(con, triples, max_hops=3, seed=seed, directed=directed, hop_sampling=hop_sampling, search_budget=None)
    monkeypatch.setattr(fpq, "EXACT_BELOW", 0)
    bounded = fpq.edit(con, triples, max_hops=3, seed=seed, directed=directed, hop_sampling=hop_sampling,
                       search_budget=10**9)  # fmt: skip
    assert bounded == exact
    assert sum(e.false_object is not None for e in exact) > 2 * len(triples)


@pytest.mark.parametrize("budget", [1, 6])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_truncated_balls_keep_every_definition(monkeypatch, seed, directed, budget) -> None:
    # balls cut after a level or two: the farther candidates are drawn and verified, so every edit made still
    # satisfies its method against networkx distances (exact hops, paths walked from the subject)
    monkeypatch.setattr(fpq, "EXACT_BELOW", 0)
    rng = random.Random(seed)
    n, n_rel, max_hops = 120, 4, 3
    hubs = [rng.randrange(n) for _ in range(3)]
    triples = sorted({(rng.choice(hubs + [rng.randrange(n)]), rng.randrange(n_rel), rng.choice(hubs + [rng.randrange(n)]))
                      for _ in range(200)})  # fmt: skip
    triples, types, con, dist = _random_kg(rng, triples, n, n_rel, max_hops, directed)
    edits = fpq.edit(con, triples, max_hops=max_hops, seed=seed, directed=directed, search_budget=budget)
    missed = [e for e in edits if e.reason and "bounded search" in e.reason]
    assert all(e.false_object is None and e.reason.endswith(f"in {fpq.SEARCH_DRAWS} draws (bounded search)") for e in missed)
    kept = [e for e in edits if e not in missed]
    assert _check_edits(kept, triples, types, dist, max_hops, n, directed=directed) > len(triples)
    # seeded, and independent of order and of the other methods asked for
    again = fpq.edit(con, list(reversed(triples)), max_hops=max_hops, seed=seed, directed=directed, search_budget=budget)
    assert sorted(edits, key=repr) == sorted(again, key=repr)
    only = fpq.edit(con, triples, methods=("NNDR", "NSC"), max_hops=max_hops, seed=seed, directed=directed,
                    search_budget=budget)  # fmt: skip
    assert set(only) == {e for e in edits if e.method in ("NNDR", "NSC")}


def test_truncated_ball_draws_are_uniform(monkeypatch) -> None:
    # 0 -> 1 (the true object), 0 -> 2 (the one hop-1 candidate), 2 -> 3..32 (30 at hop 2), 33..52 unreachable; all
    # type A. A budget of 2 entries stops the ball after level 1 (level 2 would scan 2's 30 entries).
    monkeypatch.setattr(fpq, "EXACT_BELOW", 0)
    con = duckdb.connect()
    triples = [(0, 0, 1), (0, 1, 2)] + [(2, 1, 3 + k) for k in range(30)]
    _fill(con, 53, 2, triples, {e: {"A"} for e in range(53)})
    nsc = [fpq.edit(con, [(0, 0, 1)], methods=("NSC",), seed=s, search_budget=2)[0] for s in range(200)]
    assert 80 <= sum(e.hop == 1 for e in nsc) <= 120  # the hop first: hop 1 or 2, half each (binomial(200, 1/2))
    assert {e.false_object for e in nsc if e.hop == 1} == {2}
    at_two = [e for e in nsc if e.hop == 2]
    assert {e.false_object for e in at_two} <= set(range(3, 33)) and len({e.false_object for e in at_two}) >= 20
    assert all(e.path == ((0, 1, 2), (2, 1, e.false_object)) for e in at_two)
    far = Counter(fpq.edit(con, [(0, 0, 1)], methods=("NNSC",), seed=s, search_budget=2)[0].false_object
                  for s in range(400))
    # uniform over the 20 unreachable entities: 20 each expected; every one met, none more than twice as often
    assert set(far) == set(range(33, 53)) and max(far.values()) <= 40


@pytest.mark.parametrize("seed", range(6))
def test_sort_rows_is_lexsort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 300))
    wide = seed % 2 == 1  # wider than 63 bits together: the lexsort fallback
    columns = [rng.integers(0, 2**40 if wide else 50, size), rng.integers(0, 7, size), rng.integers(0, 2**30 if wide else 3, size)]
    order = np.lexsort(tuple(reversed(columns)))
    for got, column in zip(fpq._sort_rows(columns), columns, strict=True):
        assert np.array_equal(got, column[order])


@pytest.mark.parametrize("seed", range(8))
def test_select_excluding_and_without(seed: int) -> None:
    rng = np.random.default_rng(seed)
    base = np.unique(rng.integers(0, 400, int(rng.integers(1, 120))))
    excluded = np.sort(rng.choice(base, int(rng.integers(0, len(base))), replace=False))
    kept = np.setdiff1d(base, excluded)
    assert [fpq._select_excluding(base, excluded, k) for k in range(len(kept))] == kept.tolist()
    removed = np.unique(rng.integers(0, 400, 9))
    assert np.array_equal(fpq._without(base, removed), np.setdiff1d(base, removed))


# ---------------------------------------------------------------- replace_object and the authors' KG-FPQ records


@pytest.mark.parametrize(
    ("question", "true", "false", "expected"),
    [
        ('Is "Heat" directed by Michael Mann?', "Michael Mann", "Ridley Scott", 'Is "Heat" directed by Ridley Scott?'),
        ("Is Paris the capital of France?", "France", "Peru", "Is Paris the capital of Peru?"),
        ("Is Paris in France, near France?", "France", "Peru", "occurs 2 times"),
        ("Is Paris the capital of France?", "Spain", "Peru", "occurs 0 times"),
        ("Was aaa born in aa?", "aa", "b", "occurs 3 times"),  # overlapping occurrences count
        ("Is Paris the capital of France?", "france", "Peru", "occurs 0 times"),  # case-sensitive
    ],
)
def test_replace_object(question: str, true: str, false: str, expected: str) -> None:
    if expected.startswith("occurs"):
        with pytest.raises(fpq.ObjectNotUnique, match=expected) as info:
            fpq.replace_object(question, true, false)
        assert expected in info.value.reason
    else:
        assert fpq.replace_object(question, true, false) == expected


@pytest.mark.shared_data
def test_kgfpq_records_are_reproduced_by_replacing_the_object(shared_data: Path) -> None:
    files = sorted((shared_data / "kgfpq").glob("*.json"))
    assert len(files) == 6
    matched = total = 0
    for path in files:
        for record in json.loads(path.read_text(encoding="utf-8")):
            true_object = record["Ttriple"][2]
            for k in range(1, 7):
                assert record[f"Ftriple_{k}"][:2] == record["Ttriple"][:2]  # only the object is edited
                total += 1
                try:
                    matched += fpq.replace_object(record["TPQ"], true_object, record[f"Ftriple_{k}"][2]) == record[f"FPQ_{k}"]
                except fpq.ObjectNotUnique:
                    pass
    # Measured on the 68 records of ../shared/data/kgfpq (the first 10-13 of each of the authors' six files):
    # every FPQ is its TPQ with the object's surface string replaced, so the paper's method reproduces all 408.
    assert (matched, total) == (408, 408)


def _released_paths(shared_data: Path) -> list[tuple[str, str, list[list[str]], int]]:
    """(subject, false object, path, hop) of every NSC/NDC edit (``Ftriple_6`` / ``Ftriple_5``) in the released
    KG-FPQ records; a 1-hop path is stored as a single triple."""
    out = []
    for path in sorted((shared_data / "kgfpq").glob("*.json")):
        for record in json.loads(path.read_text(encoding="utf-8")):
            for k in (6, 5):
                steps = record[f"path_{k}"]
                steps = [steps] if isinstance(steps[0], str) else steps
                out.append((record["Ttriple"][0], record[f"Ftriple_{k}"][2], steps, record[f"hop_{k}"]))
    return out


@pytest.mark.shared_data
def test_released_kgfpq_hops_are_directed_path_lengths(shared_data: Path) -> None:
    paths = _released_paths(shared_data)
    assert len(paths) == 136
    shorter = []
    for subject, false_object, steps, hop in paths:
        # every released path is a walk head -> tail from the subject to the false object, its length the hop
        assert len(steps) == hop and steps[0][0] == subject and steps[-1][2] == false_object
        assert all(a[2] == b[0] for a, b in zip(steps, steps[1:], strict=False)), steps
        names = sorted({subject} | {x for h, _, t in steps for x in (h, t)})
        ids = {name: i for i, name in enumerate(names)}
        heads, tails = [ids[h] for h, _, _ in steps], [ids[t] for _, _, t in steps]
        adjacency = sp.coo_matrix((np.ones(len(steps)), (heads, tails)), shape=(len(names), len(names)))
        forward = fpq.hop_matrix(adjacency, [ids[subject], ids[false_object]], directed=True)
        undirected = fpq.hop_matrix(adjacency, [ids[false_object]], directed=False)
        # Followed head -> tail, the path's own triples reach the false object from the subject and nothing leads
        # back; ignoring direction walks back just as far.
        assert forward[1, ids[subject]] == -1 and undirected[0, ids[subject]] == forward[0, ids[false_object]]
        if forward[0, ids[false_object]] != hop:
            shorter.append((subject, false_object, int(forward[0, ids[false_object]]), hop))
    # The released hop is the length of the sampled walk: 3 edits (each in the YN and the WH file) pass their false
    # object early, so its shortest distance is less than the hop; kgprobe reports the shortest distance.
    assert sorted(set(shorter)) == [
        ("United States of America", "Brazil", 2, 5),
        ("Woody Allen", "59th Academy Awards", 1, 3),
        ("Woody Allen", "Academy Award for Best Actress", 3, 5),
    ]
    assert len(shorter) == 6
    # The hops of the released subset: heavy at 1 and at 5, as the paper's Table 11 is for most domains.
    assert Counter(hop for *_, hop in paths) == {1: 57, 2: 6, 3: 12, 4: 14, 5: 47}


# ---------------------------------------------------------------- templates and questions


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "templates.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_templates(tmp_path: Path) -> None:
    path = _yaml(tmp_path, 'r0:\n  yn: "Is {subject} linked to {object}?"\n  wh: "Why is {subject} linked to {object}?"\n'
                           'r1:\n  yn: "Does {subject} {x} precede {object}?"\n')  # fmt: skip
    with pytest.raises(ConfigError, match=r"templates.yaml, relation 'r1', format yn: unknown placeholder\(s\) \['x'\]"):
        fpq.load_templates(path)
    path = _yaml(tmp_path, 'r0:\n  yn: "Is {subject} linked to {object} {as written}?"\n')
    assert fpq.load_templates(path) == {"r0": {"yn": "Is {subject} linked to {object} {as written}?"}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('r7:\n  yn: "Is it linked to {object}?"\n', r"relation 'r7', format yn: the template lacks \{subject\}"),
        ('r7:\n  wh: "Is {subject} {object} or {object}?"\n', r"relation 'r7', format wh: .*exactly once, found 2"),
        ('r7:\n  yn: "Is {subject} linked?"\n', r"relation 'r7', format yn: .*exactly once, found 0"),
        ('r7:\n  YN: "Is {subject} linked to {object}?"\n', r"relation 'r7': unknown format 'YN'"),
        ('r7: "Is {subject} linked to {object}?"\n', r"relation 'r7': expected a mapping of formats"),
        ("- just\n- a list\n", "must be a non-empty mapping"),
        ("r7: [unclosed\n", "not valid YAML"),
    ],
)
def test_load_templates_errors_name_file_and_relation(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        fpq.load_templates(_yaml(tmp_path, text))
    assert str(tmp_path / "templates.yaml") in str(info.value)


def test_load_templates_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read question templates .*nope.yaml"):
        fpq.load_templates(tmp_path / "nope.yaml")


def test_write_questions(hand) -> None:
    templates = {"r0": {"yn": "Is {subject} twinned with {object}?", "wh": "When was {subject} twinned with {object}?"}}
    tts = [
        TrueTriple("towns", 0, 0, 1, "Avalon", "r0", "R0", "Brixton"),
        TrueTriple("towns", 4, 1, 5, "Elmira", "r1", "R1", "Fairhope"),  # no template for r1
    ]
    edits = fpq.edit(hand, [tt.triple for tt in tts], methods=("NSC", "NNSR", "NNSC"), seed=3)
    labels = fpq.entity_labels(hand, [e.false_object for e in edits])
    assert labels == {e.false_object: NAMES[e.false_object] for e in edits if e.false_object is not None}
    items, rejects = fpq.write_questions(fpq.group_edits(tts, edits), templates, labels, snapshot_id="snap", seed=3)

    by_key = {(i.format, i.premise, i.method): i for i in items}
    assert len(items) == len(by_key) == 2 * 4  # (TPQ + NSC + NNSR + NNSC) x (yn, wh) for the triple with a template
    tpq = by_key[("yn", "tpq", None)]
    assert (tpq.question, tpq.answer, tpq.hop, tpq.false_object) == ("Is Avalon twinned with Brixton?", "yes", None, None)
    nnsr = by_key[("wh", "fpq", "NNSR")]
    assert (nnsr.question, nnsr.answer, nnsr.false_object, nnsr.false_object_label) == (
        "When was Avalon twinned with Jasper?", "false premise", 9, "Jasper")  # fmt: skip
    nsc = by_key[("yn", "fpq", "NSC")]
    assert nsc.answer == "no" and nsc.hop == DIST_FROM_0[nsc.false_object] and nsc.path[-1][2] == nsc.false_object
    assert by_key[("wh", "tpq", None)].answer == "valid premise"
    assert {(i.snapshot_id, i.seed, i.template_id, i.domain) for i in items} == {
        ("snap", 3, "template:r0:yn", "towns"), ("snap", 3, "template:r0:wh", "towns")}  # fmt: skip
    assert len({i.id for i in items}) == len(items)
    again, _ = fpq.write_questions(fpq.group_edits(tts, edits), templates, labels, snapshot_id="snap", seed=3)
    assert [i.id for i in again] == [i.id for i in items]
    row = nsc.as_row()
    assert row["path"] == [list(t) for t in nsc.path] and row["question"] == nsc.question

    assert sorted((r.format, r.template_id, r.reason) for r in rejects) == [
        ("wh", "template:r1:wh", "no wh template for relation 'r1'"),
        ("yn", "template:r1:yn", "no yn template for relation 'r1'"),
    ]


def test_write_questions_rejects_instead_of_patching() -> None:
    tt = TrueTriple("d", 0, 0, 1, "Avalon", "r0", "R0", "Brixton")
    edits = [
        Edit(0, 0, 1, 2, "NSC", 2, ((0, 0, 1), (1, 1, 2)), None),
        Edit(0, 0, 1, 3, "NDC", 1, ((0, 5, 3),), None),
        Edit(0, 0, 1, None, "NNSR", None, None, "no object of the relation beyond 5 hops"),
    ]
    labels = {2: "Camelot", 3: "brixton"}
    twice = {"r0": {"yn": "Is {subject} (not Brixton) twinned with {object}?"}}
    items, rejects = fpq.write_questions({tt: edits}, twice, labels, formats=("yn",))
    assert [i.premise for i in items] == ["tpq"]
    assert [(r.method, r.false_object, r.reason) for r in rejects] == [
        ("NSC", 2, "the true object 'Brixton' occurs 2 times in the question, not once"),
        ("NDC", 3, "the false object's label 'brixton' equals the true object's label"),
        ("NNSR", None, "NNSR: no object of the relation beyond 5 hops"),
    ]
    with pytest.raises(ConfigError, match="unknown question format"):
        fpq.write_questions({tt: edits}, twice, labels, formats=("mc",))
    with pytest.raises(KGProbeError, match="no label for entity 2"):
        fpq.write_questions({tt: edits}, {"r0": {"yn": "Is {subject} near {object}?"}}, {}, formats=("yn",))


# ---------------------------------------------------------------- true triples and inferred types


def test_infer_types_from_relations() -> None:
    con = duckdb.connect()
    keys = ["/film/film/genre", "/base/popstra/celebrity/dated",
            "/film/film/release_date_s./film/film_regional_release_date/film_release_region", "isLocatedIn"]  # fmt: skip
    _fill(con, 6, 4, [(0, 0, 1), (2, 1, 3), (0, 2, 4), (4, 3, 5)], {}, relation_keys=keys)
    assert fpq.infer_types_from_relations(con) == 7  # entity 0 is a film by two relations, stored once
    assert con.execute("SELECT entity, type, type_key FROM entity_types ORDER BY ALL").fetchall() == [
        (0, "film", "film"), (1, "genre", "genre"), (2, "celebrity", "celebrity"), (3, "dated", "dated"),
        (4, "film release region", "film_release_region"), (4, "subject of ISLOCATEDIN", "subject of isLocatedIn"),
        (5, "object of ISLOCATEDIN", "object of isLocatedIn"),
    ]  # fmt: skip
    assert fpq.infer_types_from_relations(con) == 0  # idempotent


def test_select_true_triples() -> None:
    labels = ["Heat", "Michael Mann", "HEAT Wave", "Collateral", "Los Angeles", "Tom Cruise", "Cruise", "USA", "Vienna"]
    #             0        1             2            3              4             5         6       7        8
    triples = [(0, 0, 1), (2, 1, 0), (3, 0, 1), (3, 2, 4), (5, 3, 6), (5, 4, 7), (4, 5, 7), (8, 5, 7), (1, 3, 4),
               (8, 3, 4)]  # fmt: skip
    types = {0: {"Film"}, 2: {"Film"}, 3: {"Film"}, 5: {"Person"}, 1: {"Person", "Film"}, 4: {"City"}, 8: {"City"}}
    keys = ["directed_by", "remake_of", "set_in", "knows", "citizen_of", "in_country"]
    con = duckdb.connect()
    _fill(con, 9, 6, triples, types, labels=labels, relation_keys=keys)
    domains = {
        "art": DomainSpec(types=["Film"], deny_relations=["set_in"]),
        "people": DomainSpec(types=["person"]),  # type keys match too
        "place": DomainSpec(types=["City"], allow_relations=["in_country"]),
    }
    got = fpq.select_true_triples(con, domains, 10, seed=0)
    assert sorted((t.domain, t.triple) for t in got) == [
        ("art", (0, 0, 1)), ("art", (1, 3, 4)), ("art", (3, 0, 1)),  # 1 is a Film and a Person; "art" comes first
        ("people", (5, 4, 7)), ("place", (4, 5, 7)), ("place", (8, 5, 7)),
    ]  # dropped by rule (i), case-insensitive: (2, 1, 0) and (5, 3, 6); (3, 2, 4) denied; (8, 3, 4) not allowed
    assert [t.domain for t in got] == ["art"] * 3 + ["people"] + ["place"] * 2
    assert fpq.select_true_triples(con, domains, 1, seed=0) == [next(t for t in got if t.domain == k) for k in domains]
    with pytest.raises(ConfigError, match=r"domain 'art': none of its types \['Flim'\] is an entity type"):
        fpq.select_true_triples(con, {"people": DomainSpec(types=["Person"]), "art": DomainSpec(types=["Flim"])}, 5)
    config = {"types": ["City"], "allow_relations": ["in_country"]}
    assert fpq.DomainSpec.from_config("place", config) == DomainSpec(types=("City",), allow_relations=("in_country",))
    with pytest.raises(ConfigError, match="domain 'place': types must be a list of strings"):
        fpq.DomainSpec.from_config("place", {"types": "City"})
    tt = next(t for t in got if t.triple == (0, 0, 1))
    assert tt == TrueTriple("art", 0, 0, 1, "Heat", "directed_by", "DIRECTED_BY", "Michael Mann")
    assert fpq.select_true_triples(con, domains, 10, seed=0) == got


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_select_true_triples_sample_is_seeded_and_order_free(seed: int) -> None:
    triples = [(i, i % 3, i + 1) for i in range(0, 80, 2)]
    types = {i: {"T"} for i in range(0, 80, 2)}
    a, b = duckdb.connect(), duckdb.connect()
    _fill(a, 81, 3, triples, types)
    _fill(b, 81, 3, list(reversed(triples)), types)
    got = fpq.select_true_triples(a, {"d": DomainSpec(types=["T"])}, 7, seed=seed)
    assert len(got) == 7 and got == fpq.select_true_triples(b, {"d": DomainSpec(types=["T"])}, 7, seed=seed)
    bigger = fpq.select_true_triples(a, {"d": DomainSpec(types=["T"])}, 12, seed=seed)
    assert bigger[:7] == got  # a larger sample extends a smaller one
    others = {tuple(t.triple for t in fpq.select_true_triples(a, {"d": DomainSpec(types=["T"])}, 7, seed=s)) for s in range(5)}
    assert len(others) > 1


def test_select_true_triples_named_only_reads_past_the_unnamed() -> None:
    # 9 in 10 entities are named by an id: the sample walks its ranking past them in growing steps and keeps the
    # same triples, in the same order, as ranking the named ones alone (the ranking is of the ids, not the pool)
    rng = np.random.default_rng(5)
    n = 600
    labels = [f"Q{1000 + i}" if i % 10 else f"name {i}" for i in range(n)]
    triples = sorted({(int(h), int(r), int(t)) for h, r, t in zip(rng.integers(0, n, 4000), rng.integers(0, 4, 4000),
                                                                   rng.integers(0, n, 4000), strict=True) if h != t})
    types = {i: {"T"} if i % 3 else {"U"} for i in range(n)}
    con = duckdb.connect()
    _fill(con, n, 4, triples, types, labels=labels)
    domains = {"u": DomainSpec(types=["U"]), "t": DomainSpec(types=["T", "U"], deny_relations=["r2"])}
    every = fpq.select_true_triples(con, domains, 10_000, seed=1)
    assert {t.domain for t in every} == {"u", "t"} and not any(t.domain == "t" and t.relation_key == "r2" for t in every)
    named = [t for t in every if not t.subject_label.startswith("Q") and not t.object_label.startswith("Q")]
    for k in (1, 3, 40):
        want = [t for d in domains for t in [x for x in named if x.domain == d][:k]]
        assert fpq.select_true_triples(con, domains, k, seed=1, named_only=True) == want
    assert 3 < sum(t.domain == "t" for t in named) < 40  # k = 40 takes every named triple of "t"


# ---------------------------------------------------------------- FB15k-237 end to end


@pytest.mark.shared_data
@pytest.mark.slow
def test_fb15k237_end_to_end(shared_data: Path, tmp_path: Path) -> None:
    from kgprobe.kg.ingest import KGSource, load_kg

    d = shared_data / "kg" / "fb15k-237"
    con = duckdb.connect()
    load_kg(con, KGSource(triples=[d / "train.txt.gz"], format="tsv", entity_labels=d / "FB15k_mid2name.txt"))
    assert fpq.infer_types_from_relations(con) > 14_000
    domains = {"art": DomainSpec(types=["film"]), "people": DomainSpec(types=["person"]),
               "place": DomainSpec(types=["location"], deny_relations=["/location/location/contains"])}  # fmt: skip
    tts = fpq.select_true_triples(con, domains, 100, seed=0)
    assert [sum(t.domain == k for t in tts) for k in domains] == [100, 100, 100]
    assert all(t.object_label.lower() not in t.subject_label.lower() for t in tts)
    assert not any(t.relation_key == "/location/location/contains" for t in tts)

    edits = fpq.edit(con, [t.triple for t in tts], seed=0)
    assert len(edits) == 6 * len(tts)

    # Independent checks: scipy's BFS for every subject, the KG as Python sets.
    n = con.execute("SELECT max(id) + 1 FROM entities").fetchone()[0]
    h, r, t = (np.asarray(c) for c in zip(*con.execute("SELECT head, relation, tail FROM triples").fetchall(), strict=True))
    kg = set(zip(h.tolist(), r.tolist(), t.tolist(), strict=True))
    graph = sp.coo_matrix((np.ones(len(h)), (h, t)), shape=(n, n)).tocsr()
    subjects = sorted({tt.subject for tt in tts})
    hops = csgraph.shortest_path(graph, directed=True, unweighted=True, indices=subjects)
    row = dict(zip(subjects, range(len(subjects)), strict=True))
    types: dict[int, set[str]] = {}
    for e, k in con.execute("SELECT entity, type_key FROM entity_types").fetchall():
        types.setdefault(e, set()).add(k)
    objects_of: dict[int, set[int]] = {}
    for rel, obj in zip(r.tolist(), t.tolist(), strict=True):
        objects_of.setdefault(rel, set()).add(obj)
    found = Counter()
    for e in edits:
        if e.false_object is None:
            assert e.reason
            continue
        found[e.method] += 1
        x, dist = e.false_object, hops[row[e.subject]]
        assert x not in (e.subject, e.true_object) and (e.subject, e.relation, x) not in kg
        if e.method in ("NSC", "NDC"):
            assert e.hop == dist[x] and 1 <= e.hop <= 5 and len(e.path) == e.hop
            assert all(step in kg for step in e.path)
            assert e.path[0][0] == e.subject and e.path[-1][2] == x
            assert all(a[2] == b[0] for a, b in zip(e.path, e.path[1:], strict=False))
        else:
            assert dist[x] > 5 and e.hop is None
        share = types.get(x, set()) & types[e.true_object]
        assert {"NSC": share, "NNSC": share, "NDC": not share, "NNDC": not share}.get(e.method, True)
        if e.method == "NNSR":
            assert x in objects_of[e.relation]
        if e.method == "NNDR":
            assert x not in objects_of[e.relation] and any(x in objs for objs in objects_of.values())
    # Directed, most of FB15k-237 lies beyond 5 hops of a subject, so the NN* methods find candidates (undirected,
    # the 5-hop ball covers nearly the whole graph: NNSR found 3 in 15,000). Measured: NNSC 270, NNDC 300, NNSR 115,
    # NNDR 300 of 300; NNSR stays lowest because the objects of a relation cluster near its subjects.
    assert all(found[m] > 0.8 * len(tts) for m in ("NNSC", "NNDC", "NNDR")), found
    assert found["NNSR"] > 0.25 * len(tts), found

    genre = "/film/film/genre"
    templates = {genre: {"yn": "Is {subject} a {object} film?", "wh": "Which studio made the {object} film {subject}?"}}
    labels = fpq.entity_labels(con, [e.false_object for e in edits])
    items, rejects = fpq.write_questions(fpq.group_edits(tts, edits), templates, labels, snapshot_id="fb", seed=0)
    genre_triples = [tt for tt in tts if tt.relation_key == genre]
    assert genre_triples and {i.subject for i in items} <= {tt.subject for tt in genre_triples}
    assert sum(i.premise == "tpq" for i in items) == 2 * len(genre_triples)
    for item in items:
        assert (item.true_object_label if item.premise == "tpq" else item.false_object_label) in item.question
    missing = [r for r in rejects if r.reason.startswith("no ") and "template" in r.reason]
    assert len(missing) == 2 * (len(tts) - len(genre_triples))
