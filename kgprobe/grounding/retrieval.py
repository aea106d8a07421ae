"""G-retrieval (OKGQA §3.2, A.3): the KG facts a grounded prompt puts before an open question, retrieved from the
question's (perturbed) subgraph as triplets, paths or a prize-collecting Steiner tree.

The query and every node and verbalised edge (``"head relation tail"``) of the subgraph are embedded
(:class:`kgprobe.embedding.Embedder`, all-MiniLM-L6-v2); the top-k nodes and the top-k edges by cosine similarity get
prizes ``p = max(0, k - rank + 1)`` (rank 1 = most similar, ties broken by position), every other one 0. Then:

* **triplets** (:func:`retrieve_triplets`): the ``n_triplets`` triples with the highest total prize
  ``p_head + p_edge + p_tail``;
* **paths** (:func:`retrieve_paths`): from the ``start_nodes`` highest-prize nodes, paths grow one edge at a time
  (edges followed in either direction, no node twice) scored ``S(P) = sum p_v + sum p_e - (|P| - 1) * c_e``; at
  each length the ``beam`` best extensions are kept (the priority queue, bounded so a hub cannot blow it up), up to
  ``max_path_length`` edges; the ``n_paths`` best paths of any length, one per edge set, are returned;
* **subgraph** (:func:`retrieve_subgraph`): PCST with ``pcst_fast`` (the numpy-2 build, PyPI ``pcst-fast2``) exactly as G-Retriever builds its input: an edge
  whose prize is at most the cost ``c_e`` costs ``c_e - p_e``; a dearer one becomes a virtual node of prize
  ``p_e - c_e`` joined to its ends by free edges; root -1, one cluster, and GW pruning by default as G-Retriever
  (``pruning="strong"`` for pcst_fast's strong pruning, which also cuts subtrees whose prize does not pay their cost).

Ties are broken by position (node order, triple order, then lexicographic edge sequence), so the output is a
function of the inputs alone. Everything is vectorised with NumPy; ``benchmarks/okgqa.py`` checks it against a
per-query networkx + Python implementation of the same algorithms.

    >>> retriever = GraphRetriever(embedder, entity_labels, relation_labels)      # doctest: +SKIP
    >>> r = retriever.retrieve("Who painted Guernica?", triples, "subgraph")     # doctest: +SKIP
    >>> r.text                                                                    # doctest: +SKIP
    'Guernica painted by Pablo Picasso\\nGuernica housed in Museo Reina Sofia'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kgprobe.errors import ConfigError

__all__ = [
    "PRUNINGS",
    "RETRIEVAL_METHODS",
    "GraphRetriever",
    "RetrievalConfig",
    "Retrieved",
    "edge_text",
    "prizes",
    "retrieve_paths",
    "retrieve_subgraph",
    "retrieve_triplets",
    "subgraph_nodes",
]

#: The three G-retrieval variants, in the paper's order.
RETRIEVAL_METHODS: tuple[str, ...] = ("triplets", "paths", "subgraph")
#: pcst_fast's pruning methods that PCST retrieval offers: ``gw`` (G-Retriever's, the default) and ``strong``.
PRUNINGS: tuple[str, ...] = ("gw", "strong")


@dataclass(frozen=True)
class RetrievalConfig:
    """Retrieval parameters. ``k_nodes`` / ``k_edges``: the k of the prizes; ``edge_cost``: c_e (G-Retriever: 0.5);
    ``n_triplets``: triples of triplet retrieval; ``start_nodes``, ``beam``, ``max_path_length`` (edges) and
    ``n_paths``: path retrieval; ``pruning``: pcst_fast's pruning of the PCST tree, ``gw`` (G-Retriever's) or
    ``strong``."""

    k_nodes: int = 5
    k_edges: int = 5
    edge_cost: float = 0.5
    n_triplets: int = 10
    start_nodes: int = 3
    beam: int = 8
    max_path_length: int = 3
    n_paths: int = 5
    pruning: str = "gw"

    def __post_init__(self) -> None:
        for name in ("k_nodes", "k_edges", "n_triplets", "start_nodes", "beam", "max_path_length", "n_paths"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"retrieval.{name} must be at least 1, got {getattr(self, name)!r}")
        if not self.edge_cost >= 0:
            raise ConfigError(f"retrieval.edge_cost must be >= 0, got {self.edge_cost!r}")
        if self.pruning not in PRUNINGS:
            raise ConfigError(f"retrieval.pruning must be one of {', '.join(PRUNINGS)}, got {self.pruning!r}")


@dataclass(frozen=True)
class Retrieved:
    """One retrieval: ``method``, the retrieved triples' positions in the subgraph (``edges``, in retrieval
    order), ``paths`` (path retrieval: each path's edge positions, and ``path_nodes`` its node sequence), the
    nodes a PCST tree holds (``nodes``, node ids), and ``text``, the context as the model reads it."""

    method: str
    edges: tuple[int, ...]
    paths: tuple[tuple[int, ...], ...] = ()
    path_nodes: tuple[tuple[int, ...], ...] = ()
    nodes: tuple[int, ...] = ()
    text: str = ""
    triples: tuple[tuple[int, int, int], ...] = field(default=())


def prizes(similarity: np.ndarray, k: int) -> np.ndarray:
    """``max(0, k - rank + 1)`` per element (rank 1 = most similar; equal values ranked by position): the
    OKGQA / G-Retriever prize of the top-k nodes or edges, 0 for the rest."""
    sim = np.asarray(similarity, dtype=np.float64)
    out = np.zeros(len(sim), dtype=np.float64)
    if len(sim) == 0:
        return out
    order = np.argsort(-sim, kind="stable")[:k]
    out[order] = k - np.arange(len(order), dtype=np.float64)
    return out


def subgraph_nodes(triples: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted distinct node ids, head positions, tail positions) of an ``(m, 3)`` triple array: node prizes are
    indexed by position in the first array."""
    arr = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    nodes, inverse = np.unique(np.concatenate([arr[:, 0], arr[:, 2]]), return_inverse=True)
    return nodes, inverse[: len(arr)], inverse[len(arr):]


def retrieve_triplets(heads: np.ndarray, tails: np.ndarray, node_prize: np.ndarray, edge_prize: np.ndarray,
                      n: int) -> list[int]:  # fmt: skip
    """Positions of the ``n`` triples with the highest ``p_head + p_edge + p_tail`` (ties: earlier first)."""
    total = node_prize[heads] + edge_prize + node_prize[tails]
    return np.argsort(-total, kind="stable")[:n].tolist()


def retrieve_paths(heads: np.ndarray, tails: np.ndarray, node_prize: np.ndarray, edge_prize: np.ndarray,
                   cfg: RetrievalConfig) -> list[tuple[tuple[int, ...], tuple[int, ...], float]]:  # fmt: skip
    """The best paths as ``(edge positions, node positions, score)``, best first (see the module docstring).

    Paths grow from the ``start_nodes`` highest-prize nodes along edges in either direction, never revisiting a
    node; at each length the ``beam`` best candidates (score, then the edge and node sequences) are kept and grown.
    Of every path kept, the ``n_paths`` best are returned, one per set of edges."""
    m, n_nodes = len(heads), len(node_prize)
    if m == 0:
        return []
    # undirected adjacency in CSR form: for node u, the incident edges and the node at their other end
    ends = np.concatenate([heads, tails])
    others = np.concatenate([tails, heads])
    edge_of = np.concatenate([np.arange(m), np.arange(m)])
    keep = ends != others  # a self-loop revisits its node
    ends, others, edge_of = ends[keep], others[keep], edge_of[keep]
    order = np.lexsort((edge_of, ends))
    ends, others, edge_of = ends[order], others[order], edge_of[order]
    start = np.searchsorted(ends, np.arange(n_nodes + 1))
    starts = np.argsort(-node_prize, kind="stable")[: cfg.start_nodes]
    # the frontier: node sequences (width L+1), edge sequences (width L), scores
    f_nodes = starts.reshape(-1, 1)
    f_edges = np.zeros((len(starts), 0), dtype=np.int64)
    f_score = node_prize[starts].astype(np.float64)
    kept_edges: list[np.ndarray] = []
    kept_nodes: list[np.ndarray] = []
    kept_score: list[np.ndarray] = []
    for _ in range(cfg.max_path_length):
        last = f_nodes[:, -1]
        counts = start[last + 1] - start[last]
        if counts.sum() == 0:
            break
        parent = np.repeat(np.arange(len(last)), counts)
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        slot = start[last][parent] + offsets
        nxt, via = others[slot], edge_of[slot]
        fresh = ~(f_nodes[parent] == nxt[:, None]).any(axis=1)
        parent, nxt, via = parent[fresh], nxt[fresh], via[fresh]
        if len(parent) == 0:
            break
        score = f_score[parent] + edge_prize[via] + node_prize[nxt] - cfg.edge_cost
        edges = np.concatenate([f_edges[parent], via[:, None]], axis=1)
        nodes = np.concatenate([f_nodes[parent], nxt[:, None]], axis=1)
        # score first, then the edge sequence, then the node sequence: the order a heap of tuples pops in
        keys = ([nodes[:, j] for j in range(nodes.shape[1] - 1, -1, -1)]
                + [edges[:, j] for j in range(edges.shape[1] - 1, -1, -1)] + [-score])
        best = np.lexsort(keys)[: cfg.beam]
        f_nodes, f_edges, f_score = nodes[best], edges[best], score[best]
        kept_edges.append(f_edges)
        kept_nodes.append(f_nodes)
        kept_score.append(f_score)
    candidates = [(float(s), tuple(e.tolist()), tuple(v.tolist()))
                  for E, V, S in zip(kept_edges, kept_nodes, kept_score) for e, v, s in zip(E, V, S)]
    candidates.sort(key=lambda c: (-c[0], len(c[1]), c[1], c[2]))
    out, seen = [], set()
    for score, edges_t, nodes_t in candidates:
        key = frozenset(edges_t)
        if key in seen:
            continue
        seen.add(key)
        out.append((edges_t, nodes_t, score))
        if len(out) == cfg.n_paths:
            break
    return out


def pcst_inputs(heads: np.ndarray, tails: np.ndarray, node_prize: np.ndarray, edge_prize: np.ndarray,
                edge_cost: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """G-Retriever's PCST input: (edges, prizes, costs, real edge positions, virtual node's edge positions).
    Cheap edges (prize <= cost) keep their place and cost ``cost - prize``; each dear edge becomes a virtual node
    (prize ``prize - cost``) after the real nodes, joined to its head and tail by free edges listed after the
    cheap ones, in edge order."""
    n = len(node_prize)
    cheap = edge_prize <= edge_cost
    real = np.flatnonzero(cheap)
    dear = np.flatnonzero(~cheap)
    virtual = n + np.arange(len(dear))
    v_edges = np.empty((2 * len(dear), 2), dtype=np.int64)
    v_edges[0::2, 0], v_edges[0::2, 1] = heads[dear], virtual
    v_edges[1::2, 0], v_edges[1::2, 1] = virtual, tails[dear]
    edges = np.concatenate([np.stack([heads[real], tails[real]], axis=1).reshape(-1, 2), v_edges])
    costs = np.concatenate([edge_cost - edge_prize[real], np.zeros(2 * len(dear))])
    all_prizes = np.concatenate([node_prize, edge_prize[dear] - edge_cost])
    return edges, all_prizes, costs, real, dear


_PCST: Any = None


def _pcst_fast() -> Any:
    """The ``pcst_fast`` function, once checked on a 3-node path: pcst_fast 1.0.10's wheels return wrong indices
    under numpy 2 (fraenkel-lab/pcst_fast#16), and a silent wrong tree is worse than an error."""
    global _PCST
    if _PCST is None:
        try:
            import pcst_fast
        except ImportError as exc:  # pragma: no cover - a dependency
            raise ConfigError("subgraph retrieval needs pcst_fast: pip install pcst-fast2") from exc
        vertices, edges = pcst_fast.pcst_fast(np.array([[0, 1], [1, 2]], dtype=np.int64), np.array([2.0, 0.0, 1.0]),
                                              np.array([0.1, 0.1]), -1, 1, "gw", 0)
        if sorted(np.asarray(vertices).tolist()) != [0, 1, 2] or sorted(np.asarray(edges).tolist()) != [0, 1]:
            raise ConfigError(f"the installed pcst_fast ({pcst_fast.__file__}) returns wrong indices with numpy "
                              f"{np.__version__} (fraenkel-lab/pcst_fast#16); install the numpy-2 build: "
                              "pip uninstall pcst_fast && pip install pcst-fast2")
        _PCST = pcst_fast.pcst_fast
    return _PCST


def retrieve_subgraph(heads: np.ndarray, tails: np.ndarray, node_prize: np.ndarray, edge_prize: np.ndarray,
                      edge_cost: float, *, pruning: str = "gw") -> tuple[list[int], list[int]]:  # fmt: skip
    """PCST (``pcst_fast``, root -1, one cluster, ``pruning`` ``gw`` as G-Retriever or ``strong``) on G-Retriever's
    input (:func:`pcst_inputs`): (node positions, edge positions) of the tree, both sorted; the nodes include every
    selected edge's ends."""
    if pruning not in PRUNINGS:
        raise ConfigError(f"PCST pruning must be one of {', '.join(PRUNINGS)}, got {pruning!r}")
    if len(heads) == 0:
        return [], []
    pcst = _pcst_fast()
    edges, all_prizes, costs, real, dear = pcst_inputs(heads, tails, node_prize, edge_prize, edge_cost)
    vertices, chosen = pcst(edges, all_prizes, costs, -1, 1, pruning, 0)
    n = len(node_prize)
    vertices = np.asarray(vertices, dtype=np.int64)
    chosen = np.asarray(chosen, dtype=np.int64)
    sel = np.concatenate([real[chosen[chosen < len(real)]], dear[vertices[vertices >= n] - n]])
    sel = np.unique(sel)
    nodes = np.unique(np.concatenate([vertices[vertices < n], heads[sel], tails[sel]]))
    return nodes.tolist(), sel.tolist()


def edge_text(head: str, relation: str, tail: str) -> str:
    """A triple verbalised as the model and the embedder read it: ``"head relation tail"``."""
    return f"{head} {relation} {tail}"


class GraphRetriever:
    """Retrieval over labelled subgraphs with one embedder: ``retrieve(query, triples, method)``.

    ``entity_labels`` / ``relation_labels`` map ids to labels. Texts are embedded once per process (the embedder's
    cache); :meth:`load_cache` / :meth:`save_cache` keep them per KG snapshot across runs."""

    def __init__(self, embedder: Any, entity_labels: Mapping[int, str], relation_labels: Mapping[int, str], *,
                 config: RetrievalConfig | None = None) -> None:  # fmt: skip
        self.embedder = embedder
        self.entity_labels = entity_labels
        self.relation_labels = relation_labels
        self.config = config or RetrievalConfig()

    def cache_path(self, folder: str | Path, snapshot_id: str) -> Path:
        """Where the vectors of one KG snapshot are kept under ``folder``."""
        return Path(folder) / f"okgqa-embeddings-{snapshot_id}.npz"

    def load_cache(self, folder: str | Path, snapshot_id: str) -> int:
        """Read the snapshot's saved vectors into the embedder (none when absent); how many were read."""
        return int(self.embedder.load_cache(self.cache_path(folder, snapshot_id)))

    def save_cache(self, folder: str | Path, snapshot_id: str) -> Path:
        """Write the embedder's vectors for the snapshot, so the next run embeds nothing twice."""
        return self.embedder.save(self.cache_path(folder, snapshot_id))

    def _label(self, eid: int) -> str:
        return str(self.entity_labels.get(int(eid), eid))

    def _rel(self, rid: int) -> str:
        return str(self.relation_labels.get(int(rid), rid))

    def scores(self, query: str, triples: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                np.ndarray]:  # fmt: skip
        """(node ids, head positions, tail positions, node prizes, edge prizes) of one query on one subgraph."""
        arr = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
        nodes, heads, tails = subgraph_nodes(arr)
        if len(arr) == 0:
            empty = np.zeros(0)
            return nodes, heads, tails, empty, empty
        node_texts = [self._label(v) for v in nodes]
        edge_texts = [edge_text(self._label(h), self._rel(r), self._label(t)) for h, r, t in arr]
        q = self.embedder.embed([query])
        node_sim = (self.embedder.embed(node_texts) @ q.T).ravel()
        edge_sim = (self.embedder.embed(edge_texts) @ q.T).ravel()
        cfg = self.config
        return nodes, heads, tails, prizes(node_sim, cfg.k_nodes), prizes(edge_sim, cfg.k_edges)

    def retrieve(self, query: str, triples: Sequence[tuple[int, int, int]] | np.ndarray, method: str) -> Retrieved:
        """The ``method`` retrieval (one of :data:`RETRIEVAL_METHODS`) of ``query`` on ``triples``."""
        if method not in RETRIEVAL_METHODS:
            raise ConfigError(f"unknown retrieval method {method!r}; use one of {', '.join(RETRIEVAL_METHODS)}")
        arr = np.asarray(list(triples) if not isinstance(triples, np.ndarray) else triples, dtype=np.int64).reshape(-1, 3)
        if len(arr) == 0:
            return Retrieved(method=method, edges=(), text="(no facts)")
        nodes, heads, tails, node_prize, edge_prize = self.scores(query, arr)
        cfg = self.config

        def line(e: int) -> str:
            h, r, t = arr[e]
            return edge_text(self._label(h), self._rel(r), self._label(t))

        if method == "triplets":
            chosen = retrieve_triplets(heads, tails, node_prize, edge_prize, cfg.n_triplets)
            text = "\n".join(line(e) for e in chosen)
            return Retrieved(method, tuple(chosen), text=text, triples=tuple(tuple(map(int, arr[e])) for e in chosen))
        if method == "paths":
            found = retrieve_paths(heads, tails, node_prize, edge_prize, cfg)
            edges = tuple(dict.fromkeys(e for p, _, _ in found for e in p))
            text = "\n".join("; ".join(line(e) for e in p) for p, _, _ in found)
            return Retrieved(method, edges, paths=tuple(p for p, _, _ in found),
                             path_nodes=tuple(tuple(int(nodes[v]) for v in vs) for _, vs, _ in found),
                             text=text or "(no facts)", triples=tuple(tuple(map(int, arr[e])) for e in edges))
        node_pos, chosen = retrieve_subgraph(heads, tails, node_prize, edge_prize, cfg.edge_cost,
                                            pruning=cfg.pruning)
        lines = [line(e) for e in chosen] or [self._label(nodes[v]) for v in node_pos]
        return Retrieved(method, tuple(chosen), nodes=tuple(int(nodes[v]) for v in node_pos),
                         text="\n".join(lines) or "(no facts)", triples=tuple(tuple(map(int, arr[e])) for e in chosen))
