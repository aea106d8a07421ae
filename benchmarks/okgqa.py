"""OKGQA retrieval benchmark: triplet, path and PCST retrieval for 1,000 FB15k-237 queries x 13 perturbations.

    python benchmarks/okgqa.py [--queries 1000] [--nx-queries 30] [--data PATH] [--seed 0]

Subgraphs: seeded random queries of two seed entities, their 2-hop subgraph pruned by Personalized PageRank
(threshold 1e-5), as in ``benchmarks/perturb.py``; each is perturbed 13 ways (none; RS, RR, ER, ED at 0.2, 0.5,
1.0; RR with an untrained, seeded DistMult scorer, since the benchmark times retrieval, not the scorer).

Prizes come from the similarity of the query to each node and edge. Both implementations receive the same
similarities, so the benchmark times retrieval alone: each entity and relation label is embedded once with
all-MiniLM-L6-v2 (the FB15k-237 mid -> name file) and the query is the mean of its seeds' vectors (the pipeline
embeds the question and each verbalised edge text
instead; embedding 10^7 edge texts on two CPU cores is not a retrieval cost) and an edge's similarity is the mean
of its head's, relation's and tail's cosine with the query. Embedding time is reported apart.

kgprobe (``kgprobe.grounding.retrieval``): NumPy prizes, triplets, beam path search and G-Retriever's PCST input,
then ``pcst_fast``. Baseline (:func:`networkx_retrieve`): what a user writes per query: a networkx MultiGraph,
Python loops for ranks and prizes, a heapq-ordered path search and G-Retriever's per-edge loop for the PCST input,
then the same ``pcst_fast`` (the numpy-2 build, PyPI ``pcst-fast2``: pcst_fast 1.0.10 returns wrong indices under
numpy 2, and ``retrieve_subgraph`` refuses it). The baseline runs on ``--nx-queries`` queries (all 13 perturbations each); triplets,
paths and the PCST output must be identical there. Goal: >= 10x the baseline's subgraphs per second.
"""

from __future__ import annotations

import argparse
import heapq
import time
from pathlib import Path

import numpy as np

from kgprobe.grounding.retrieval import (
    RetrievalConfig,
    prizes,
    retrieve_paths,
    retrieve_subgraph,
    retrieve_triplets,
    subgraph_nodes,
)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "kg" / "fb15k-237"
SETTINGS = [("none", 0.0)] + [(m, lvl) for m in ("RS", "RR", "ER", "ED") for lvl in (0.2, 0.5, 1.0)]


# --------------------------------------------------------------------------------------------- the networkx baseline
def networkx_retrieve(triples: np.ndarray, node_sim: dict[int, float], edge_sim: list[float],
                      cfg: RetrievalConfig) -> tuple[list[int], list[tuple[int, ...]], tuple[list[int], list[int]]]:  # fmt: skip
    """Triplets, paths (edge positions) and the PCST (node positions, edge positions) of one subgraph, the
    per-query way: a networkx MultiGraph and Python loops. ``node_sim`` maps node id -> similarity."""
    import networkx as nx
    import pcst_fast

    g = nx.MultiGraph()
    for i, (h, r, t) in enumerate(triples.tolist()):
        g.add_edge(h, t, key=i, relation=r)
    nodes = sorted(g.nodes)
    pos = {v: i for i, v in enumerate(nodes)}
    ranked = sorted(nodes, key=lambda v: (-node_sim[v], pos[v]))
    node_prize = {v: 0.0 for v in nodes}
    for rank, v in enumerate(ranked[: cfg.k_nodes], start=1):
        node_prize[v] = float(max(0, cfg.k_nodes - rank + 1))
    ranked_e = sorted(range(len(triples)), key=lambda i: (-edge_sim[i], i))
    edge_prize = [0.0] * len(triples)
    for rank, i in enumerate(ranked_e[: cfg.k_edges], start=1):
        edge_prize[i] = float(max(0, cfg.k_edges - rank + 1))
    heads = [int(h) for h in triples[:, 0]]
    tails = [int(t) for t in triples[:, 2]]
    # triplets
    total = [(-(node_prize[heads[i]] + edge_prize[i] + node_prize[tails[i]]), i) for i in range(len(triples))]
    triplets = [i for _, i in sorted(total)[: cfg.n_triplets]]
    # paths: a priority queue of extensions per length, the beam best kept
    frontier = [(-node_prize[v], (), (v,)) for v in ranked[: cfg.start_nodes]]
    kept = []
    for _ in range(cfg.max_path_length):
        heap = []
        for neg, edges, path in frontier:
            u = path[-1]
            for _, w, key in g.edges(u, keys=True):
                if w in path:
                    continue
                score = -neg + edge_prize[key] + node_prize[w] - cfg.edge_cost
                heapq.heappush(heap, (-score, edges + (key,), path + (w,)))
        frontier = [heapq.heappop(heap) for _ in range(min(cfg.beam, len(heap)))]
        if not frontier:
            break
        kept += frontier
    kept.sort(key=lambda c: (c[0], len(c[1]), c[1], c[2]))
    paths, seen = [], set()
    for _, edges, _ in kept:
        if frozenset(edges) not in seen:
            seen.add(frozenset(edges))
            paths.append(edges)
        if len(paths) == cfg.n_paths:
            break
    # PCST, G-Retriever's per-edge loop
    prize_list = [node_prize[v] for v in nodes]
    edges_in, costs, mapping_e, v_prizes, v_edges, v_costs, mapping_n = [], [], {}, [], [], [], {}
    for i in range(len(triples)):
        src, dst, p = pos[heads[i]], pos[tails[i]], edge_prize[i]
        if p <= cfg.edge_cost:
            mapping_e[len(edges_in)] = i
            edges_in.append((src, dst))
            costs.append(cfg.edge_cost - p)
        else:
            vid = len(nodes) + len(v_prizes)
            mapping_n[vid] = i
            v_edges += [(src, vid), (vid, dst)]
            v_costs += [0.0, 0.0]
            v_prizes.append(p - cfg.edge_cost)
    n_real = len(edges_in)
    all_edges = np.array(edges_in + v_edges, dtype=np.int64).reshape(-1, 2)
    vertices, chosen = pcst_fast.pcst_fast(all_edges, np.array(prize_list + v_prizes), np.array(costs + v_costs),
                                           -1, 1, "gw", 0)
    sel = sorted({mapping_e[e] for e in chosen if e < n_real} | {mapping_n[v] for v in vertices if v >= len(nodes)})
    sel_nodes = sorted({v for v in vertices if v < len(nodes)} | {pos[heads[i]] for i in sel} | {pos[tails[i]] for i in sel})
    return triplets, paths, ([int(v) for v in sel_nodes], sel)


def kgprobe_retrieve(triples: np.ndarray, node_sim_all: np.ndarray, edge_sim: np.ndarray, cfg: RetrievalConfig):
    """kgprobe's three retrievals of one subgraph; ``node_sim_all`` is indexed by entity id."""
    nodes, heads, tails = subgraph_nodes(triples)
    node_prize = prizes(node_sim_all[nodes], cfg.k_nodes)
    edge_prize = prizes(edge_sim, cfg.k_edges)
    triplets = retrieve_triplets(heads, tails, node_prize, edge_prize, cfg.n_triplets)
    paths = [e for e, _, _ in retrieve_paths(heads, tails, node_prize, edge_prize, cfg)]
    tree = retrieve_subgraph(heads, tails, node_prize, edge_prize, cfg.edge_cost)
    return triplets, paths, tree


class _RandomDistMult:
    """A seeded, untrained DistMult: RR needs some scorer; the benchmark times retrieval, not the scorer."""

    def __init__(self, n_ent: int, n_rel: int, dim: int = 16, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.e = rng.normal(size=(n_ent, dim)).astype(np.float32)
        self.r = rng.normal(size=(n_rel, dim)).astype(np.float32)

    @property
    def num_relations(self) -> int:
        return len(self.r)

    def score(self, heads, relations, tails) -> np.ndarray:
        x = (self.e[np.asarray(heads)] * self.r[np.asarray(relations)] * self.e[np.asarray(tails)]).sum(-1)
        return 1 / (1 + np.exp(-x))

    def score_all_relations(self, heads, tails) -> np.ndarray:
        x = (self.e[np.asarray(heads)] * self.e[np.asarray(tails)]) @ self.r.T
        return 1 / (1 + np.exp(-x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--nx-queries", type=int, default=30, help="queries also run by the networkx baseline")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threshold", type=float, default=1e-5)
    parser.add_argument("--random-vectors", action="store_true",
                        help="seeded random label vectors instead of all-MiniLM-L6-v2 (retrieval timing is the same)")
    args = parser.parse_args()

    import duckdb

    from kgprobe.embedding import Embedder
    from kgprobe.grounding.perturb import perturb
    from kgprobe.kg.graph import iter_khop_batch, ppr_prune_batch
    from kgprobe.kg.ingest import KGSource, load_kg

    cfg = RetrievalConfig()
    con = duckdb.connect()
    files = [args.data / "train.txt.gz", args.data / "valid.txt", args.data / "test.txt"]
    report = load_kg(con, KGSource(triples=files, format="tsv", name="fb"))
    con.execute("USE fb")
    ent = con.execute("SELECT id, key FROM entities ORDER BY id").fetchall()
    rel = con.execute("SELECT id, key FROM relations ORDER BY id").fetchall()
    names = {}
    mid2name = args.data / "FB15k_mid2name.txt"
    if mid2name.exists():
        for line in mid2name.read_text(encoding="utf-8").splitlines():
            mid, _, name = line.partition("\t")
            names[mid] = name.replace("_", " ")
    print(f"FB15k-237: {report.triples:,} triples, {len(ent):,} entities, {len(rel)} relations")

    t0 = time.perf_counter()
    if args.random_vectors:
        vec_rng = np.random.default_rng(args.seed + 1)
        e_vec = vec_rng.normal(size=(len(ent), 384)).astype(np.float32)
        r_vec = vec_rng.normal(size=(len(rel), 384)).astype(np.float32)
        e_vec /= np.linalg.norm(e_vec, axis=1, keepdims=True)
        r_vec /= np.linalg.norm(r_vec, axis=1, keepdims=True)
    else:
        embedder = Embedder()
        e_vec = embedder.embed([names.get(k, k) for _, k in ent])
        r_vec = embedder.embed([k.strip("/").replace("/", " ").replace("_", " ") for _, k in rel])
    embed_s = time.perf_counter() - t0
    print(f"embedded {len(ent) + len(rel):,} labels in {embed_s:.1f} s")

    rng = np.random.default_rng(args.seed)
    queries = {f"q{i:05d}": rng.choice(len(ent), 2, replace=False).tolist() for i in range(args.queries)}
    q_vec = np.stack([e_vec[s].mean(0) for s in queries.values()])
    q_vec /= np.linalg.norm(q_vec, axis=1, keepdims=True)
    node_sim = q_vec @ e_vec.T  # (queries, entities)
    rel_sim = q_vec @ r_vec.T  # (queries, relations)
    scorer = _RandomDistMult(len(ent), len(rel), seed=args.seed)
    timers = {"subgraphs": 0.0, "perturb": 0.0, "similarity": 0.0, "kgprobe": 0.0, "networkx": 0.0}
    n_work = n_compared = n_triples = 0
    same = {"triplets": 0, "paths": 0, "pcst": 0}
    index = 0
    tick = time.perf_counter()
    for part in iter_khop_batch(con, queries, 2, chunk_size=50):
        pruned = ppr_prune_batch(part, {k: queries[k] for k in part}, args.threshold)
        timers["subgraphs"] += time.perf_counter() - tick
        for qid, sub in pruned.items():
            qi = int(qid[1:])
            g = np.array(sub.triples, dtype=np.int64).reshape(-1, 3)
            for method, level in SETTINGS:
                t0 = time.perf_counter()
                p = g if method == "none" else np.asarray(perturb(g, method, level, seed=qi, scorer=scorer),
                                                          dtype=np.int64).reshape(-1, 3)
                t1 = time.perf_counter()
                # cosine of the query with the mean of the head, relation and tail vectors, up to its norm
                sim = (node_sim[qi, p[:, 0]] + rel_sim[qi, p[:, 1]] + node_sim[qi, p[:, 2]]) / 3.0
                t2 = time.perf_counter()
                ours = kgprobe_retrieve(p, node_sim[qi], sim, cfg)
                t3 = time.perf_counter()
                timers["perturb"] += t1 - t0
                timers["similarity"] += t2 - t1
                timers["kgprobe"] += t3 - t2
                n_work += 1
                n_triples += len(p)
                if qi < args.nx_queries:
                    nodes = np.unique(np.concatenate([p[:, 0], p[:, 2]])).tolist()
                    t0 = time.perf_counter()
                    trip, paths, tree = networkx_retrieve(p, {v: float(node_sim[qi, v]) for v in nodes}, sim.tolist(), cfg)
                    timers["networkx"] += time.perf_counter() - t0
                    n_compared += 1
                    same["triplets"] += trip == ours[0]
                    same["paths"] += [tuple(x) for x in paths] == [tuple(x) for x in ours[1]]
                    same["pcst"] += tree == (ours[2][0], ours[2][1])
            index += 1
        print(f"  {index:5d}/{len(queries)} queries  kgprobe {timers['kgprobe']:7.1f} s  networkx {timers['networkx']:6.1f} s",
              flush=True)
        tick = time.perf_counter()

    our_rate = n_work / timers["kgprobe"]
    nx_rate = n_compared / timers["networkx"] if n_compared else float("nan")
    print()
    print(f"{index} queries x {len(SETTINGS)} perturbations = {n_work:,} subgraphs, mean {n_triples / max(n_work, 1):,.0f} "
          f"triples; extraction {timers['subgraphs']:.0f} s, perturbation {timers['perturb']:.0f} s, "
          f"similarities {timers['similarity']:.1f} s (label embedding {embed_s:.0f} s)")
    print(f"kgprobe retrieval (triplets + paths + PCST): {timers['kgprobe']:.1f} s = {our_rate:,.1f} subgraphs/s")
    print(f"networkx + Python: {n_compared} subgraphs in {timers['networkx']:.1f} s = {nx_rate:,.2f} subgraphs/s")
    print(f"identical on the {n_compared} compared subgraphs: triplets {same['triplets']}, paths {same['paths']}, "
          f"PCST {same['pcst']}")
    print(f"speed-up: {our_rate / nx_rate:.1f}x (goal >= 10x); networkx extrapolated to the grid: {n_work / nx_rate:,.0f} s")


if __name__ == "__main__":
    main()
