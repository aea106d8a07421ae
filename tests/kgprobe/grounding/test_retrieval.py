"""G-retrieval: prizes, triplets, beam path search and G-Retriever's PCST, checked by hand, against brute force and
against the per-query networkx implementation of benchmarks/okgqa.py (identical output required)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from kgprobe.errors import ConfigError
from kgprobe.grounding.retrieval import (
    GraphRetriever,
    RetrievalConfig,
    pcst_inputs,
    prizes,
    retrieve_paths,
    retrieve_subgraph,
    retrieve_triplets,
    subgraph_nodes,
)

REPO = Path(__file__).resolve().parents[3]


def _bench():
    spec = importlib.util.spec_from_file_location("okgqa_bench", REPO / "benchmarks" / "okgqa.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("sim,k,want", [
    ([0.1, 0.9, 0.5, 0.7], 2, [0, 2, 0, 1]),
    ([0.3, 0.3, 0.3], 2, [2, 1, 0]),            # ties ranked by position
    ([0.2, 0.1], 5, [5, 4]),                    # fewer elements than k
    ([], 3, []),
])  # fmt: skip
def test_prizes_are_k_minus_rank_plus_one(sim, k, want):
    assert prizes(np.array(sim), k).tolist() == want


def test_triplets_take_the_highest_total_prize():
    heads, tails = np.array([0, 1, 2, 0]), np.array([1, 2, 3, 3])
    node_prize = np.array([3.0, 0.0, 1.0, 2.0])
    edge_prize = np.array([0.0, 2.0, 0.0, 1.0])
    # totals: 3, 3, 3, 6 -> edge 3 first, then ties by position
    assert retrieve_triplets(heads, tails, node_prize, edge_prize, 3) == [3, 0, 1]


def _brute_paths(heads, tails, node_prize, edge_prize, cfg):
    """Every simple path up to max length from the start nodes, scored: the exhaustive search a wide beam equals."""
    adj = {}
    for e, (h, t) in enumerate(zip(heads.tolist(), tails.tolist())):
        if h != t:
            adj.setdefault(h, []).append((e, t))
            adj.setdefault(t, []).append((e, h))
    starts = np.argsort(-node_prize, kind="stable")[: cfg.start_nodes].tolist()
    found = []

    def grow(nodes, edges, score):
        if edges:
            found.append((score, edges, nodes))
        if len(edges) == cfg.max_path_length:
            return
        for e, w in adj.get(nodes[-1], []):
            if w not in nodes:
                grow(nodes + (w,), edges + (e,), score + edge_prize[e] + node_prize[w] - cfg.edge_cost)

    for s in starts:
        grow((s,), (), float(node_prize[s]))
    found.sort(key=lambda c: (-c[0], len(c[1]), c[1], c[2]))
    out, seen = [], set()
    for score, edges, nodes in found:
        if frozenset(edges) not in seen:
            seen.add(frozenset(edges))
            out.append((edges, nodes, score))
    return out[: cfg.n_paths]


def _random_graph(rng, n_nodes, n_edges):
    triples = np.stack([rng.integers(0, n_nodes, n_edges), rng.integers(0, 5, n_edges),
                        rng.integers(0, n_nodes, n_edges)], axis=1)
    return triples


@pytest.mark.parametrize("seed", range(6))
def test_paths_with_a_wide_beam_equal_exhaustive_search(seed):
    rng = np.random.default_rng(seed)
    triples = _random_graph(rng, 9, 14)
    nodes, heads, tails = subgraph_nodes(triples)
    node_prize = prizes(rng.random(len(nodes)), 4)
    edge_prize = prizes(rng.random(len(triples)), 4)
    cfg = RetrievalConfig(beam=10_000, max_path_length=3, n_paths=6)
    got = retrieve_paths(heads, tails, node_prize, edge_prize, cfg)
    want = _brute_paths(heads, tails, node_prize, edge_prize, cfg)
    assert [(e, v) for e, v, _ in got] == [(e, v) for e, v, _ in want]
    assert all(len(set(v)) == len(v) for _, v, _ in got)  # no cycles
    # a path's score is its prizes minus the edge costs
    for edges, verts, score in got:
        assert score == pytest.approx(node_prize[list(verts)].sum() + edge_prize[list(edges)].sum() - 0.5 * len(edges))


def test_pcst_input_turns_dear_edges_into_virtual_nodes():
    heads, tails = np.array([0, 1, 2]), np.array([1, 2, 0])
    edges, all_prizes, costs, real, dear = pcst_inputs(heads, tails, np.array([2.0, 0.0, 1.0]),
                                                       np.array([0.0, 3.0, 0.5]), 0.5)
    assert real.tolist() == [0, 2] and dear.tolist() == [1]
    assert edges.tolist() == [[0, 1], [2, 0], [1, 3], [3, 2]]
    assert costs.tolist() == [0.5, 0.0, 0.0, 0.0]
    assert all_prizes.tolist() == [2.0, 0.0, 1.0, 2.5]


def test_pcst_connects_the_prized_nodes_cheaply():
    # a star around node 0 (prized) with one prized leaf; the cheap tree is the one edge between them
    triples = np.array([[0, 0, 1], [0, 0, 2], [0, 0, 3], [2, 0, 3]])
    _, heads, tails = subgraph_nodes(triples)
    node_prize = np.array([3.0, 0.0, 0.0, 2.0])
    edge_prize = np.zeros(4)
    got_nodes, got_edges = retrieve_subgraph(heads, tails, node_prize, edge_prize, 0.5)
    assert got_edges == [2] and got_nodes == [0, 3]


@pytest.mark.parametrize("seed", range(8))
def test_identical_to_the_networkx_implementation(seed):
    bench = _bench()
    rng = np.random.default_rng(100 + seed)
    triples = _random_graph(rng, 30, 80)
    cfg = RetrievalConfig(k_nodes=6, k_edges=6, beam=5)
    nodes = np.unique(np.concatenate([triples[:, 0], triples[:, 2]]))
    node_sim_all = rng.random(40).round(2)  # rounding makes ties, which both must break alike
    edge_sim = rng.random(len(triples)).round(2)
    ours = bench.kgprobe_retrieve(triples, node_sim_all, edge_sim, cfg)
    theirs = bench.networkx_retrieve(triples, {int(v): float(node_sim_all[v]) for v in nodes}, edge_sim.tolist(), cfg)
    assert ours[0] == theirs[0]
    assert [tuple(p) for p in ours[1]] == [tuple(p) for p in theirs[1]]
    assert (ours[2][0], ours[2][1]) == theirs[2]


class _Vec:
    """Embeds a text as a one-hot of its first word, so the query "Picasso ..." is nearest to Picasso's items."""

    words = ("picasso", "guernica", "madrid", "spain", "museo", "painted", "located")

    def embed(self, texts):
        out = np.full((len(texts), len(self.words) + 1), 0.01, dtype=np.float32)
        for i, t in enumerate(texts):
            for j, w in enumerate(self.words):
                if w in t.lower():
                    out[i, j] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_graph_retriever_verbalises_each_method():
    ents = {1: "Guernica", 2: "Pablo Picasso", 3: "Museo Reina Sofia", 4: "Madrid", 5: "Spain"}
    rels = {0: "painted by", 1: "housed in", 2: "located in"}
    triples = [(1, 0, 2), (1, 1, 3), (3, 2, 4), (4, 2, 5)]
    r = GraphRetriever(_Vec(), ents, rels, config=RetrievalConfig(k_nodes=2, k_edges=2, n_triplets=2))
    trip = r.retrieve("Who painted Guernica, Picasso?", triples, "triplets")
    assert trip.text.splitlines()[0] == "Guernica painted by Pablo Picasso" and len(trip.edges) == 2
    paths = r.retrieve("Who painted Guernica, Picasso?", triples, "paths")
    assert paths.paths and all("; " in line or len(p) == 1 for line, p in zip(paths.text.splitlines(), paths.paths))
    sub = r.retrieve("Who painted Guernica, Picasso?", triples, "subgraph")
    assert "Guernica painted by Pablo Picasso" in sub.text.splitlines() and set(sub.nodes) >= {1, 2}
    assert r.retrieve("q", [], "paths").text == "(no facts)"
    with pytest.raises(ConfigError, match="unknown retrieval method"):
        r.retrieve("q", triples, "bfs")


def test_config_rejects_nonsense():
    with pytest.raises(ConfigError, match="beam"):
        RetrievalConfig(beam=0)


@pytest.mark.slow
def test_real_embedder_and_cache_round_trip(tmp_path):
    from kgprobe.embedding import Embedder

    ents = {1: "Guernica", 2: "Pablo Picasso", 3: "Museo Reina Sofia", 4: "Madrid", 5: "Vienna"}
    rels = {0: "painted by", 1: "housed in", 2: "located in"}
    triples = [(1, 0, 2), (1, 1, 3), (3, 2, 4), (5, 2, 5)]
    e = Embedder()
    r = GraphRetriever(e, ents, rels, config=RetrievalConfig(n_triplets=1))
    got = r.retrieve("Who painted Guernica?", triples, "triplets")
    assert got.text == "Guernica painted by Pablo Picasso"
    path = r.save_cache(tmp_path, "snap")
    assert path.name == "okgqa-embeddings-snap.npz"
    fresh = Embedder()
    assert GraphRetriever(fresh, ents, rels).load_cache(tmp_path, "snap") >= 5
    GraphRetriever(fresh, ents, rels, config=RetrievalConfig(n_triplets=1)).retrieve("Who painted Guernica?", triples, "triplets")
    assert fresh.encoded == 0  # every text came from the cache


def test_pcst_pruning_is_gw_by_default_and_strong_on_request():
    # node 1 (prize 3) hangs on a dear edge 0-1; the branch 1-2-3 costs 1.0 for node 3's prize 1: GW pruning keeps
    # that zero-net branch as G-Retriever does, strong pruning cuts it
    triples = np.array([[0, 0, 1], [2, 0, 3], [2, 0, 1]])
    _, heads, tails = subgraph_nodes(triples)
    node_prize, edge_prize = np.array([0.0, 3.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    assert RetrievalConfig().pruning == "gw"
    assert retrieve_subgraph(heads, tails, node_prize, edge_prize, 0.5) == ([0, 1, 2, 3], [0, 1, 2])
    assert retrieve_subgraph(heads, tails, node_prize, edge_prize, 0.5, pruning="gw") == ([0, 1, 2, 3], [0, 1, 2])
    assert retrieve_subgraph(heads, tails, node_prize, edge_prize, 0.5, pruning="strong") == ([0, 1], [0])


class _RecordingEmbedder:
    """Embeds a text by its length and remembers every text it was asked for."""

    def __init__(self):
        self.seen = []

    def embed(self, texts):
        self.seen += list(texts)
        return np.array([[1.0, float(len(t))] for t in texts]) / 100.0


_LABELS = {0: "Ada", 1: "Byron", 2: "London", 3: "England"}


@pytest.mark.parametrize("pruning", ["gw", "strong"])
def test_pcst_pruning_reaches_the_retriever(monkeypatch, pruning):
    import kgprobe.grounding.retrieval as retrieval

    asked = []
    real = retrieval.retrieve_subgraph
    monkeypatch.setattr(retrieval, "retrieve_subgraph",
                        lambda *a, **kw: asked.append(kw.get("pruning")) or real(*a, **kw))
    r = GraphRetriever(_RecordingEmbedder(), _LABELS, {0: "near"}, config=RetrievalConfig(pruning=pruning))
    r.retrieve("q", [(0, 0, 1), (2, 0, 3), (2, 0, 1)], "subgraph")
    assert asked == [pruning]
    with pytest.raises(ConfigError, match="pruning"):
        RetrievalConfig(pruning="weak")


def test_an_edge_is_embedded_as_its_verbalised_triple():
    # what the README says of edge prizes: the query's cosine with "head relation tail", one text per edge (not a
    # mean of the head's, relation's and tail's cosines)
    emb = _RecordingEmbedder()
    GraphRetriever(emb, _LABELS, {0: "near"}).scores("q", np.array([[0, 0, 1], [2, 0, 3]]))
    assert "Ada near Byron" in emb.seen and "London near England" in emb.seen
    assert "near" not in emb.seen
