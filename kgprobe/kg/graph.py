"""k-hop subgraphs of a KG, Personalized PageRank (PPR) pruning, and the statistics of both.

This is the retrieval step of OKGQA (Sui et al.): around the seed entities of a question, take the 2-hop
subgraph of the KG, then keep only the part that PPR from the seeds ranks as relevant. The k-hop expansion
runs in DuckDB over the warehouse's ``triples`` table (the KG is never pulled into Python); PPR is a scipy power
iteration that reproduces ``networkx.pagerank`` node for node, and runs many queries at once.

    >>> sub = khop(con, [seed_a, seed_b], hops=2)
    >>> small = ppr_prune(sub, [seed_a, seed_b], threshold=1e-5)

Batches are set-based: :func:`khop_batch` expands every query in one SQL pass per hop, and
:func:`ppr_prune_batch` runs one sparse mat-vec per iteration over all queries' subgraphs stacked into one
block-diagonal matrix. 2-hop subgraphs of dense KGs are large (about 20,000 triples per two-seed query on
FB15k-237, 120,000 induced), so stream big batches with :func:`iter_khop_batch` rather than holding them all.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import duckdb
import numpy as np
import pyarrow as pa
import scipy.sparse as sp

from kgprobe.errors import KGProbeError
from kgprobe.sql import load_sql

__all__ = [
    "GraphError",
    "Labels",
    "PPRConvergenceError",
    "Subgraph",
    "Triple",
    "iter_khop_batch",
    "khop",
    "khop_batch",
    "personalized_pagerank",
    "personalized_pagerank_batch",
    "ppr_prune",
    "ppr_prune_batch",
    "subgraph_stats",
]

#: (head, relation, tail): entity and relation ids of the warehouse.
Triple: TypeAlias = tuple[int, int, int]

#: Entity-id -> label and relation-id -> label maps, for :func:`subgraph_stats`.
Labels: TypeAlias = tuple[Mapping[int, str], Mapping[int, str]]

# A two-seed 2-hop query on FB15k-237 reaches ~7,500 nodes and ~20,000 triples (120,000 induced); 64 queries per
# pass keep both DuckDB's intermediate tables and the Python tuples of one chunk in the hundreds of MB.
_KHOP_CHUNK = 64
# Edges per block-diagonal PPR pass: 4M edges is ~100 MB of CSR (8M entries undirected).
_PPR_CHUNK_EDGES = 4_000_000
# Largest (query x reached node) bitmap that picks a pass's induced triples: 256 MB of bools at most.
_BITMAP_KEYS = 1 << 28


class GraphError(KGProbeError):
    """A subgraph or PageRank input is unusable: missing KG tables, bad ids, no seeds, a bad option value."""


class PPRConvergenceError(GraphError):
    """The PageRank power iteration did not converge within ``max_iter`` iterations (networkx raises here too)."""


@dataclass(frozen=True)
class Subgraph:
    """A set of nodes and the triples among them, as retrieved for one query.

    ``nodes`` always holds every endpoint of ``triples`` and may hold isolated nodes (seeds absent from the KG,
    nodes kept by PPR whose edges were pruned). ``triples`` are sorted by (head, relation, tail) and unique.
    ``capped_nodes`` counts the nodes whose expansion was cut down to the fan-out cap (0 without a cap), so that
    a pipeline can report how much of the neighbourhood was sampled rather than taken whole.
    """

    nodes: frozenset[int]
    triples: list[Triple]
    capped_nodes: int = 0

    def __getstate__(self) -> dict[str, object]:
        # pickle the fields only, not the private array cache (see _attach_array)
        return {"nodes": self.nodes, "triples": self.triples, "capped_nodes": self.capped_nodes}


# The functions that build Subgraphs from arrays (k-hop extraction, PPR pruning) keep the (m, 3) int64 array of
# the triples beside the list, so that the next step (pruning, statistics) does not convert the Python tuples back.
# The cache is tied to the list object and its length; like the frozen dataclass, it assumes that the list is not
# changed in place afterwards.
_ARRAY_CACHE = "_kgprobe_triple_array"


def _attach_array(sub: Subgraph, array: np.ndarray) -> Subgraph:
    object.__setattr__(sub, _ARRAY_CACHE, (sub.triples, array))
    return sub


def _subgraph_array(sub: Subgraph, key: str) -> np.ndarray:
    """The (m, 3) int64 array of ``sub.triples``: the cached one when it is still that list's, else converted."""
    cached = sub.__dict__.get(_ARRAY_CACHE)
    if cached is not None and cached[0] is sub.triples and len(cached[1]) == len(sub.triples):
        return cached[1]
    return _triple_array(sub.triples, key)


# --------------------------------------------------------------------------------------------------------------
# k-hop expansion in DuckDB
# --------------------------------------------------------------------------------------------------------------


def khop(
    con: duckdb.DuckDBPyConnection,
    seeds: Iterable[int] | int,
    hops: int = 2,
    *,
    fanout_cap: int | None = None,
    seed: int = 0,
    induced: bool = False,
) -> Subgraph:
    """Return the ``hops``-hop subgraph around ``seeds``, following edges in both directions.

    Call it to retrieve the KG context of one question. By default (the OKGQA paper's construction) the triples
    are the edges a breadth-first search of depth ``hops`` from the seeds walks along: every triple with at least
    one endpoint at distance <= ``hops - 1`` from a seed. With ``induced=True`` they are all triples whose two
    endpoints are both within ``hops`` (what ``networkx.ego_graph(G, s, radius=hops)`` returns, for several seeds
    the induced subgraph on the union of their balls); that is a superset, typically several times larger.
    In both modes the nodes are the seeds plus every node within ``hops``. Distances ignore edge direction.

    Seeds that occur in no triple are kept as isolated nodes rather than rejected, so that one unknown entity
    does not sink a whole batch of questions. The KG is the ``triples`` table of the connection's current schema
    (``con.execute('USE kg')`` selects another KG loaded by :func:`kgprobe.kg.ingest.load_kg`).

    ``fanout_cap`` bounds hubs: each expanded node follows at most that many of its distinct neighbours,
    a sample fixed by ``seed`` (md5 order of (seed, node, neighbour), so it is the same in every query, run and
    DuckDB version). Under a cap the default triples are those between an expanded node and the neighbours it
    follows (plus its self loops); ``induced=True`` still takes all triples among the reached nodes. The result's
    ``capped_nodes`` counts the expanded nodes that were sampled.

        >>> khop(con, [42], hops=1).triples      # every triple with 42 as head or tail
    """
    return khop_batch(con, {"": _seed_list(seeds, "")}, hops, fanout_cap=fanout_cap, seed=seed, induced=induced)[""]


def khop_batch(
    con: duckdb.DuckDBPyConnection,
    queries: Mapping[str, Iterable[int]],
    hops: int = 2,
    *,
    fanout_cap: int | None = None,
    seed: int = 0,
    induced: bool = False,
    chunk_size: int = _KHOP_CHUNK,
) -> dict[str, Subgraph]:
    """Return :func:`khop` of every query (query id -> seeds), computed set-based for all queries at once.

    Call it instead of a loop over :func:`khop`: the seeds of all queries go into one temporary table that is
    joined with the KG hop by hop, so a thousand queries cost a few SQL statements per ``chunk_size`` queries,
    not thousands. Results equal :func:`khop` per query (the fan-out sample depends on the node, not the query).
    Everything is returned at once; for large batches prefer :func:`iter_khop_batch`.
    """
    out: dict[str, Subgraph] = {}
    for part in iter_khop_batch(
        con, queries, hops, fanout_cap=fanout_cap, seed=seed, induced=induced, chunk_size=chunk_size
    ):
        out.update(part)
    return out


def iter_khop_batch(
    con: duckdb.DuckDBPyConnection,
    queries: Mapping[str, Iterable[int]],
    hops: int = 2,
    *,
    fanout_cap: int | None = None,
    seed: int = 0,
    induced: bool = False,
    chunk_size: int = _KHOP_CHUNK,
) -> Iterator[dict[str, Subgraph]]:
    """Yield :func:`khop_batch` results ``chunk_size`` queries at a time, in the order of ``queries``.

    Call it to stream a large batch (prune, write and drop each chunk) with memory bounded by one chunk.
    """
    hops = _check_int(hops, "hops", minimum=0)
    if fanout_cap is not None:
        fanout_cap = _check_int(fanout_cap, "fanout_cap", minimum=1)
    seed = _check_int(seed, "seed", minimum=None)
    chunk_size = _check_int(chunk_size, "chunk_size", minimum=1)
    items = [(key, _seed_list(seeds, key)) for key, seeds in queries.items()]
    for start in range(0, len(items), chunk_size):
        yield _khop_pass(con, items[start : start + chunk_size], hops, fanout_cap, seed, induced)


def _khop_pass(
    con: duckdb.DuckDBPyConnection,
    items: list[tuple[str, list[int]]],
    hops: int,
    cap: int | None,
    seed: int,
    induced: bool,
) -> dict[str, Subgraph]:
    """One set-based expansion of a chunk of queries; query ``i`` of the chunk is ``qid = i`` in SQL."""
    qids = [i for i, (_, seeds) in enumerate(items) for _ in seeds]
    nodes = [node for _, seeds in items for node in seeds]
    try:
        seed_rows = pa.table({"qid": pa.array(qids, pa.int64()), "node": pa.array(nodes, pa.int64())})
    except (OverflowError, pa.ArrowInvalid) as exc:
        raise GraphError(f"seed ids must fit in a BIGINT like the warehouse's entity ids ({exc})") from exc
    try:
        con.register("_khop_seed_rows", seed_rows)
        try:
            con.execute(load_sql("kg/khop_start"))
        finally:
            con.unregister("_khop_seed_rows")
        con.execute(load_sql("kg/khop_choice_create"))
        for depth in range(hops):
            if cap is None:
                con.execute(load_sql("kg/khop_choose_all"), {"depth": depth})
            else:
                con.execute(load_sql("kg/khop_choose_capped"), {"depth": depth, "cap": cap, "seed": seed})
            con.execute(load_sql("kg/khop_step"), {"depth": depth})
        node_cols = con.execute(load_sql("kg/khop_nodes")).fetchnumpy()
        if induced:
            triple_cols = _induced_triples(con, len(items), node_cols)
        elif cap is None:
            triple_cols = con.execute(load_sql("kg/khop_triples_incident"), {"hops": hops}).fetchnumpy()
        else:
            triple_cols = con.execute(load_sql("kg/khop_triples_traversed"), {"hops": hops}).fetchnumpy()
        capped: dict[int, int] = {}
        if cap is not None:
            capped = dict(con.execute(load_sql("kg/khop_capped_counts"), {"hops": hops, "cap": cap}).fetchall())
    except duckdb.CatalogException as exc:
        raise GraphError(
            f"k-hop expansion needs the KG table 'triples' in the connection's current schema ({exc}). Load a KG "
            "with kgprobe.kg.ingest.load_kg, or select its schema with con.execute('USE <name>')."
        ) from exc
    finally:
        con.execute(load_sql("kg/khop_drop_reached"))
        con.execute(load_sql("kg/khop_drop_choice"))

    n = len(items)
    query_range = np.arange(n + 1)
    node_bounds = np.searchsorted(np.asarray(node_cols["qid"]), query_range).tolist()
    triple_bounds = np.searchsorted(np.asarray(triple_cols["qid"]), query_range).tolist()
    node_ids = np.asarray(node_cols["node"]).tolist()
    if "distinct" in triple_cols:
        # row i of the chunk is distinct triple index[i]: one tuple per distinct triple, shared by the queries' lists
        distinct, index = triple_cols["distinct"], triple_cols["index"]
        array = distinct[index]
        shared = np.fromiter(_records(distinct).tolist(), dtype=object, count=len(distinct))

        def tuples(a: int, b: int) -> list[Triple]:
            return shared[index[a:b]].tolist()
    else:
        array = np.empty((len(triple_cols["qid"]), 3), dtype=np.int64)
        for column, name in enumerate(("head", "relation", "tail")):
            array[:, column] = np.asarray(triple_cols[name])
        records = _records(array)

        def tuples(a: int, b: int) -> list[Triple]:
            return records[a:b].tolist()

    out: dict[str, Subgraph] = {}
    for i, (key, _) in enumerate(items):
        a, b = triple_bounds[i], triple_bounds[i + 1]
        out[key] = _attach_array(
            Subgraph(
                nodes=frozenset(node_ids[node_bounds[i] : node_bounds[i + 1]]),
                triples=tuples(a, b),
                capped_nodes=int(capped.get(i, 0)),
            ),
            array[a:b],
        )
    return out


def _induced_triples(
    con: duckdb.DuckDBPyConnection, n_queries: int, node_cols: Mapping[str, np.ndarray]
) -> Mapping[str, np.ndarray]:
    """The induced triples of the reached nodes, per query, sorted by (qid, head, relation, tail).

    The queries of a pass share most of their triples (a 2-hop ball of a dense KG holds a good part of it), so
    DuckDB returns once the triples among all reached nodes (``kg/khop_triples_among_reached``, sorted), and
    NumPy keeps for each query the rows whose two ends it reached, read off a (query x reached node) bitmap.
    The result holds those rows as ``distinct`` ((d, 3), one row per KG row) and each output row's ``index``
    into them, with its ``qid``. When that bitmap would be too big, DuckDB joins per query instead
    (``kg/khop_triples_induced``, the same rows in the same order, as columns qid, head, relation, tail).
    """
    qid_of_node = np.asarray(node_cols["qid"], dtype=np.int64)
    node = np.asarray(node_cols["node"], dtype=np.int64)
    reached = np.unique(node)
    if max(n_queries, 1) * len(reached) > _BITMAP_KEYS:
        return con.execute(load_sql("kg/khop_triples_induced")).fetchnumpy()
    cols = con.execute(load_sql("kg/khop_triples_among_reached")).fetchnumpy()
    distinct = np.empty((len(cols["head"]), 3), dtype=np.int64)
    for column, name in enumerate(("head", "relation", "tail")):
        distinct[:, column] = np.asarray(cols[name])
    in_ball = np.zeros((max(n_queries, 1), len(reached)), dtype=bool)
    in_ball[qid_of_node, np.searchsorted(reached, node)] = True
    head = np.searchsorted(reached, distinct[:, 0])
    tail = np.searchsorted(reached, distinct[:, 2])
    rows = [np.flatnonzero(in_ball[q, head] & in_ball[q, tail]) for q in range(n_queries)]
    index = np.concatenate(rows) if rows else np.empty(0, np.int64)
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), [len(r) for r in rows])
    return {"qid": qid, "index": index, "distinct": distinct}


_TRIPLE_RECORD = np.dtype([("head", np.int64), ("relation", np.int64), ("tail", np.int64)])


def _records(array: np.ndarray) -> np.ndarray:
    """A C-contiguous (m, 3) int64 array seen as m records, whose ``tolist()`` gives (head, relation, tail) tuples of
    Python ints in one C loop (about a third faster than zipping three lists)."""
    return np.ascontiguousarray(array).view(_TRIPLE_RECORD).reshape(-1)


# --------------------------------------------------------------------------------------------------------------
# Personalized PageRank
# --------------------------------------------------------------------------------------------------------------


def personalized_pagerank(
    edges: Iterable[tuple[int, int]],
    seeds: Iterable[int] | int,
    alpha: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    directed: bool = False,
    *,
    nodes: Iterable[int] | None = None,
) -> dict[int, float]:
    """Return the Personalized PageRank of every node of the graph ``edges``, restarting at ``seeds``.

    Call it to rank the nodes of a retrieved subgraph by relevance to the question's entities. The iteration is
    OKGQA's ``p = alpha * A^T p + (1 - alpha) * s`` with ``s`` uniform on the seeds, computed exactly as
    ``networkx.pagerank(G, alpha, personalization={s: 1 for s in seeds}, tol=tol, max_iter=max_iter)``:
    the same start vector (uniform), dangling nodes sending their mass along ``s``, and the same stopping test
    (L1 change < ``len(G) * tol``). Results agree with networkx to about 1e-15, which matters because that test
    stops long before the fixed point on large graphs, so only the same iteration gives the same scores.

    The graph is undirected unless ``directed=True`` (then edges go u -> v, i.e. head -> tail): the OKGQA
    paper's released code loses edge direction by accident when it builds its graph, and we make undirected
    the explicit default. Parallel edges add up (two relations between the same pair weigh 2, like an
    ``nx.MultiGraph``) and a self loop counts once. The nodes are the edges' endpoints, the seeds (a seed
    without edges is an isolated node) and ``nodes``. Returns ``{}`` for a graph with no nodes.

        >>> personalized_pagerank([(1, 2), (2, 3)], [1])
        {1: 0.345..., 2: 0.459..., 3: 0.195...}
    """
    return personalized_pagerank_batch(
        {"": edges},
        {"": _seed_list(seeds, "")},
        alpha=alpha,
        tol=tol,
        max_iter=max_iter,
        directed=directed,
        nodes=None if nodes is None else {"": nodes},
    )[""]


def personalized_pagerank_batch(
    graphs: Mapping[str, Iterable[tuple[int, int]]],
    seeds: Mapping[str, Iterable[int]],
    *,
    alpha: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    directed: bool = False,
    nodes: Mapping[str, Iterable[int]] | None = None,
    chunk_edges: int = _PPR_CHUNK_EDGES,
) -> dict[str, dict[int, float]]:
    """Return :func:`personalized_pagerank` of every query (query id -> edges, query id -> seeds) at once.

    Call it for many queries: their graphs are stacked into one block-diagonal sparse matrix, so each power
    iteration is a single sparse mat-vec for all of them; each query stops at its own convergence test and gets
    exactly the scores the single-query function (and networkx) would give. ``chunk_edges`` bounds the edges
    per stacked matrix.
    """
    _check_ppr_options(alpha, tol, max_iter)
    keys = list(graphs)
    out: dict[str, dict[int, float]] = {}
    for chunk in _chunks_by_size(keys, [len(g) if hasattr(g, "__len__") else 0 for g in graphs.values()], chunk_edges):
        blocks = [
            _Block(
                key,
                _edge_array(graphs[key], key),
                _id_array(_seeds_for(seeds, key), key, "seeds"),
                None if nodes is None or key not in nodes else _id_array(nodes[key], key, "nodes"),
            )
            for key in chunk
        ]
        stacked = _Stacked.build(blocks, directed)
        x = stacked.pagerank(alpha, tol, max_iter)
        ids = stacked.node_id.tolist()
        scores = x.tolist()
        for b, block in enumerate(blocks):
            lo, hi = int(stacked.starts[b]), int(stacked.starts[b + 1])
            out[block.key] = dict(zip(ids[lo:hi], scores[lo:hi]))
    return out


def ppr_prune(
    subgraph: Subgraph,
    seeds: Iterable[int] | int,
    threshold: float = 1e-5,
    *,
    alpha: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    directed: bool = False,
) -> Subgraph:
    """Return ``subgraph`` cut down to the nodes whose PPR score from ``seeds`` is >= ``threshold``.

    Call it to shrink a k-hop subgraph to the part relevant to the question before it goes into a prompt.
    Scores are :func:`personalized_pagerank` over the subgraph's triples (head -> tail when ``directed``); the
    seeds are always kept (a seed missing from ``subgraph.nodes`` is added as an isolated node), and so are the
    triples whose head and tail are both kept. ``capped_nodes`` carries over from the input.
    """
    return ppr_prune_batch(
        {"": subgraph},
        {"": _seed_list(seeds, "")},
        threshold,
        alpha=alpha,
        tol=tol,
        max_iter=max_iter,
        directed=directed,
    )[""]


def ppr_prune_batch(
    subgraphs: Mapping[str, Subgraph],
    seeds: Mapping[str, Iterable[int]],
    threshold: float = 1e-5,
    *,
    alpha: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    directed: bool = False,
    chunk_edges: int = _PPR_CHUNK_EDGES,
) -> dict[str, Subgraph]:
    """Return :func:`ppr_prune` of every query (query id -> subgraph, query id -> seeds), using batched PPR.

    Call it on the output of :func:`khop_batch`; the result equals :func:`ppr_prune` per query.
    """
    _check_ppr_options(alpha, tol, max_iter)
    if not isinstance(threshold, (int, float)) or math.isnan(threshold):
        raise GraphError(f"threshold must be a number, got {threshold!r}")
    keys = list(subgraphs)
    out: dict[str, Subgraph] = {}
    for chunk in _chunks_by_size(keys, [len(s.triples) for s in subgraphs.values()], chunk_edges):
        blocks = []
        for key in chunk:
            sub = subgraphs[key]
            triples = _subgraph_array(sub, key)
            key_seeds = _id_array(_seeds_for(seeds, key), key, "seeds")
            blocks.append(_Block(key, triples[:, [0, 2]], key_seeds, _id_array(sub.nodes, key, "nodes"), triples))
        stacked = _Stacked.build(blocks, directed)
        x = stacked.pagerank(alpha, tol, max_iter)
        keep = x >= threshold
        keep[stacked.seed_index] = True
        keep_edge = keep[stacked.u] & keep[stacked.v]
        keep_edge_list = keep_edge.tolist()
        kept_ids = stacked.node_id.tolist()
        keep_list = keep.tolist()
        for b, block in enumerate(blocks):
            sub = subgraphs[block.key]
            lo, hi = int(stacked.starts[b]), int(stacked.starts[b + 1])
            elo, ehi = int(stacked.edge_starts[b]), int(stacked.edge_starts[b + 1])
            out[block.key] = _attach_array(
                Subgraph(
                    nodes=frozenset(itertools.compress(kept_ids[lo:hi], keep_list[lo:hi])),
                    triples=list(itertools.compress(sub.triples, keep_edge_list[elo:ehi])),
                    capped_nodes=sub.capped_nodes,
                ),
                block.triples[keep_edge[elo:ehi]],
            )
    return out


@dataclass
class _Block:
    """One query's PPR input: an (m, 2) edge array, its seeds and extra nodes, as int64 ids."""

    key: str
    edges: np.ndarray
    seeds: np.ndarray
    nodes: np.ndarray | None
    triples: np.ndarray | None = None  # the (m, 3) triples when the edges are theirs (ppr_prune_batch)


@dataclass
class _Stacked:
    """Several queries' graphs numbered into one block-diagonal system.

    Node numbers run block after block (``starts[b]`` to ``starts[b + 1]``), sorted by id within a block;
    ``u``/``v`` are the edges' endpoint numbers in the blocks' edge order (``edge_starts``).
    """

    keys: list[str]
    starts: np.ndarray
    node_block: np.ndarray
    node_id: np.ndarray
    u: np.ndarray
    v: np.ndarray
    edge_starts: np.ndarray
    seed_index: np.ndarray
    directed: bool

    @classmethod
    def build(cls, blocks: list[_Block], directed: bool) -> _Stacked:
        """Number each block's nodes by sorted id, block after block.

        Edge endpoints are located with a binary search in the block's known nodes (its ``nodes`` and seeds),
        which avoids sorting the edges: a pruned subgraph's triples only touch its own nodes.
        """
        empty = np.empty(0, np.int64)
        ids_parts: list[np.ndarray] = []
        u_parts: list[np.ndarray] = []
        v_parts: list[np.ndarray] = []
        seed_parts: list[np.ndarray] = []
        starts = [0]
        locate = _Locator(blocks)
        for block in blocks:
            ids = np.unique(np.concatenate([block.nodes if block.nodes is not None else empty, block.seeds]))
            flat = block.edges.reshape(-1)
            pos = locate(ids, flat)
            if pos is None:
                ids = np.union1d(ids, flat)
                pos = np.searchsorted(ids, flat)
            if len(ids) and not len(block.seeds):
                # networkx divides by the personalization sum here (ZeroDivisionError): say what is wrong instead
                raise GraphError(f"query {block.key!r} has a graph but no seeds: PPR needs at least one seed entity")
            offset = starts[-1]
            ids_parts.append(ids)
            u_parts.append(pos[0::2] + offset)
            v_parts.append(pos[1::2] + offset)
            seed_parts.append(np.searchsorted(ids, np.unique(block.seeds)) + offset)
            starts.append(offset + len(ids))
        sizes = np.diff(np.asarray(starts, dtype=np.int64))
        return cls(
            keys=[b.key for b in blocks],
            starts=np.asarray(starts, dtype=np.int64),
            node_block=np.repeat(np.arange(len(blocks)), sizes),
            node_id=np.concatenate(ids_parts) if blocks else empty,
            u=np.concatenate(u_parts) if blocks else empty,
            v=np.concatenate(v_parts) if blocks else empty,
            edge_starts=np.concatenate([[0], np.cumsum([len(b.edges) for b in blocks])]).astype(np.int64),
            seed_index=np.concatenate(seed_parts) if blocks else empty,
            directed=directed,
        )

    def pagerank(self, alpha: float, tol: float, max_iter: int) -> np.ndarray:
        """Power-iterate all blocks at once; return the scores by node number.

        Mirrors ``networkx.algorithms.link_analysis.pagerank_alg._pagerank_scipy`` step for step, per block:
        A = row-normalised weighted adjacency, x0 = 1/N, p = seeds / |seeds|, dangling mass sent along p,
        x = alpha * (x A + sum(x[dangling]) p) + (1 - alpha) p, stop when sum |x - x_prev| < N * tol.
        """
        n = len(self.node_id)
        n_blocks = len(self.keys)
        result = np.zeros(n)
        if n == 0:
            return result
        if self.directed:
            rows, cols = self.u, self.v
        else:
            # networkx symmetrises an undirected graph but counts a self loop once, not twice
            loop = self.u == self.v
            rows = np.concatenate([self.u, self.v[~loop]])
            cols = np.concatenate([self.v, self.u[~loop]])
        out_weight = np.bincount(rows, minlength=n).astype(np.float64)
        inverse = np.zeros(n)
        inverse[out_weight != 0] = 1.0 / out_weight[out_weight != 0]
        # Store A^T (row = target) so that x A is one CSR mat-vec; entries are W[u, v] * (1 / S[u]) as in networkx.
        at = sp.coo_array((np.ones(len(rows)), (cols, rows)), shape=(n, n)).tocsr()  # sums parallel edges
        at.data *= inverse[at.indices]

        sizes = np.diff(self.starts)
        seed_block = self.node_block[self.seed_index]
        seeds_per_block = np.bincount(seed_block, minlength=n_blocks)
        p = np.zeros(n)
        p[self.seed_index] = 1.0 / seeds_per_block[seed_block]
        x = 1.0 / sizes[self.node_block].astype(np.float64)

        # Working set: the blocks still iterating. Converged blocks are written to `result` and frozen; the
        # matrix is compacted once they make up a quarter of it, so small slow blocks do not drag big ones along.
        live_blocks = np.flatnonzero(sizes > 0)
        work_sizes = sizes[live_blocks]
        work_starts = np.concatenate([[0], np.cumsum(work_sizes)[:-1]])
        work_nodes = np.arange(n)
        work_block = self.node_block
        live = np.ones(len(live_blocks), dtype=bool)
        dangling = np.flatnonzero(out_weight == 0)
        for _ in range(max_iter):
            x_last = x
            dangling_mass = np.bincount(work_block[dangling], weights=x[dangling], minlength=n_blocks)
            x = alpha * (at @ x + dangling_mass[work_block] * p) + (1 - alpha) * p
            err = np.add.reduceat(np.abs(x - x_last), work_starts)
            done = live & (err < work_sizes * tol)
            if not done.any():
                continue
            done_nodes = np.repeat(done, work_sizes)
            result[work_nodes[done_nodes]] = x[done_nodes]
            live &= ~done
            if not live.any():
                return result
            frozen = ~live
            if work_sizes[frozen].sum() * 4 >= len(x):
                keep_nodes = np.repeat(live, work_sizes)
                at = _take_block_rows(at, keep_nodes)
                x, p = x[keep_nodes], p[keep_nodes]
                work_nodes, work_block = work_nodes[keep_nodes], work_block[keep_nodes]
                live_blocks, work_sizes = live_blocks[live], work_sizes[live]
                work_starts = np.concatenate([[0], np.cumsum(work_sizes)[:-1]])
                dangling = np.flatnonzero(out_weight[work_nodes] == 0)
                live = np.ones(len(live_blocks), dtype=bool)
        failed = [self.keys[b] for b in live_blocks[live]]
        shown = ", ".join(repr(k) for k in failed[:5]) + (" ..." if len(failed) > 5 else "")
        raise PPRConvergenceError(
            f"PageRank did not converge in max_iter={max_iter} iterations for {len(failed)} quer"
            f"{'y' if len(failed) == 1 else 'ies'} ({shown}); raise max_iter or tol, or lower alpha"
        )


class _Locator:
    """Positions of ids in a block's sorted node array, or None when some id is not among them.

    Warehouse ids are small dense integers, so a lookup table indexed by id (reset after each block) beats a
    binary search per edge endpoint by an order of magnitude; other ids fall back to the binary search.
    """

    _MAX_TABLE = 1 << 26

    def __init__(self, blocks: list[_Block]) -> None:
        high = max((int(a.max()) for b in blocks for a in (b.edges, b.nodes) if a is not None and a.size), default=-1)
        low = min((int(a.min()) for b in blocks for a in (b.edges, b.nodes) if a is not None and a.size), default=0)
        self.table = np.full(high + 1, -1, dtype=np.int64) if low >= 0 and high < self._MAX_TABLE else None

    def __call__(self, ids: np.ndarray, flat: np.ndarray) -> np.ndarray | None:
        if not len(flat):
            return flat.astype(np.int64)
        if not len(ids):
            return None
        table = self.table
        if table is None or ids[0] < 0 or ids[-1] >= len(table) or flat.min() < 0 or flat.max() >= len(table):
            pos = np.searchsorted(ids, flat)
            return pos if (ids[np.minimum(pos, len(ids) - 1)] == flat).all() else None
        table[ids] = np.arange(len(ids))
        pos = table[flat]
        table[ids] = -1
        return None if (pos < 0).any() else pos


def _take_block_rows(matrix: sp.csr_array, keep: np.ndarray) -> sp.csr_array:
    """Restrict a block-diagonal CSR matrix to whole blocks: their rows, and (being block-diagonal) columns."""
    index = np.flatnonzero(keep)
    renumber = np.full(len(keep), -1, dtype=np.int64)
    renumber[index] = np.arange(len(index))
    rows = matrix[index, :]
    return sp.csr_array((rows.data, renumber[rows.indices], rows.indptr), shape=(len(index), len(index)))


def _chunks_by_size(keys: list[str], sizes: list[int], limit: int) -> Iterator[list[str]]:
    """Group keys in order so that each group's total size stays within ``limit`` (a lone big key is its own group)."""
    limit = _check_int(limit, "chunk_edges", minimum=1)
    chunk: list[str] = []
    total = 0
    for key, size in zip(keys, sizes):
        if chunk and total + size > limit:
            yield chunk
            chunk, total = [], 0
        chunk.append(key)
        total += size
    if chunk:
        yield chunk


# --------------------------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------------------------


def subgraph_stats(subgraph: Subgraph, *, labels: Labels | None = None) -> dict[str, float]:
    """Return the size and shape of a subgraph: the columns of OKGQA's subgraph table, for one query.

    Call it before and after pruning and average over queries to report how much PPR removed. Keys:

    - ``nodes``, ``edges``: node and triple counts (parallel triples count separately);
    - ``avg_degree``: 2 * edges / nodes, the mean multigraph degree;
    - ``clustering``: networkx's ``average_clustering`` of the undirected simple graph (direction, parallel
      edges and self loops dropped), averaged over all nodes, isolated ones counting 0;
    - ``density``: distinct undirected node pairs joined by a triple / (nodes * (nodes - 1) / 2);
    - ``tokens``: whitespace tokens of the triples written as ``"head relation tail"`` lines, i.e. for each
      triple the number of ``str.split()`` words of its head, relation and tail labels. ``labels`` is a pair
      (entity id -> label, relation id -> label); without it, or for an id missing from it, the id's decimal
      digits stand in for the label (one token). A cheap, tokenizer-free proxy for prompt length.

    Raises :class:`GraphError` when a triple's head or tail is missing from ``subgraph.nodes``.
    """
    n = len(subgraph.nodes)
    triples = _subgraph_array(subgraph, "subgraph")
    m = len(triples)
    stats = {
        "nodes": float(n),
        "edges": float(m),
        "avg_degree": 2.0 * m / n if n else 0.0,
        "clustering": 0.0,
        "density": 0.0,
        "tokens": float(_token_count(triples, labels)),
    }
    if n < 2 or m == 0:
        return stats
    node_ids = np.fromiter(subgraph.nodes, dtype=np.int64, count=n)
    node_ids.sort()
    u = np.searchsorted(node_ids, triples[:, 0])
    v = np.searchsorted(node_ids, triples[:, 2])
    missing = (node_ids[np.minimum(u, n - 1)] != triples[:, 0]) | (node_ids[np.minimum(v, n - 1)] != triples[:, 2])
    if missing.any():
        raise GraphError("subgraph has a triple whose head or tail is not in subgraph.nodes")
    proper = u != v
    pairs = np.unique(np.minimum(u, v)[proper] * n + np.maximum(u, v)[proper])
    stats["density"] = 2.0 * len(pairs) / (n * (n - 1))
    stats["clustering"] = _average_clustering(pairs // n, pairs % n, n)
    return stats


def _average_clustering(a: np.ndarray, b: np.ndarray, n: int) -> float:
    """Mean local clustering coefficient of the simple undirected graph with unique edges (a[i], b[i]), a < b.

    Triangles are counted with the edges oriented from lower to higher (degree, number) rank, which keeps every
    out-degree below sqrt(2m): hubs in KG neighbourhoods would make the plain (A @ A) * A product quadratic.
    For a triangle x < y < z in rank order, (L @ L) * L finds it at (x, z) and (L^T @ L) * L at (y, z).
    """
    degree = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), degree))] = np.arange(n)
    low = np.where(rank[a] < rank[b], a, b)
    high = np.where(rank[a] < rank[b], b, a)
    oriented = sp.csr_array((np.ones(len(low)), (low, high)), shape=(n, n))
    closing = (oriented @ oriented).multiply(oriented)
    middle = (oriented.T @ oriented).multiply(oriented)
    triangles = (
        np.asarray(closing.sum(axis=1)).ravel()
        + np.asarray(closing.sum(axis=0)).ravel()
        + np.asarray(middle.sum(axis=1)).ravel()
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        local = np.where(degree > 1, 2.0 * triangles / (degree * (degree - 1.0)), 0.0)
    return float(local.sum() / n)


def _token_count(triples: np.ndarray, labels: Labels | None) -> int:
    """Whitespace tokens of the triples verbalised as label lines; each distinct id's label is split once."""
    if len(triples) == 0:
        return 0
    if labels is None:
        return 3 * len(triples)
    entity_labels, relation_labels = labels
    total = 0
    entities = np.concatenate([triples[:, 0], triples[:, 2]])
    for column, names in ((entities, entity_labels), (triples[:, 1], relation_labels)):
        ids, counts = np.unique(column, return_counts=True)
        words = np.fromiter(
            (len(names[i].split()) if i in names else 1 for i in ids.tolist()), dtype=np.int64, count=len(ids)
        )
        total += int(words @ counts)
    return total


# --------------------------------------------------------------------------------------------------------------
# Input checking
# --------------------------------------------------------------------------------------------------------------


def _check_int(value: object, name: str, *, minimum: int | None) -> int:
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise GraphError(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and number < minimum:
        raise GraphError(f"{name} must be >= {minimum}, got {number}")
    return number


def _check_ppr_options(alpha: float, tol: float, max_iter: int) -> None:
    if not isinstance(alpha, (int, float)) or not 0.0 <= alpha <= 1.0:
        raise GraphError(f"alpha must be a number in [0, 1] (the damping factor, 0.85 in OKGQA), got {alpha!r}")
    if not isinstance(tol, (int, float)) or not tol > 0.0:
        raise GraphError(f"tol must be a positive number, got {tol!r}")
    _check_int(max_iter, "max_iter", minimum=1)


def _seed_list(seeds: Iterable[int] | int, key: object) -> list[int]:
    """Seeds as a list of ints; a bare id is accepted as one seed."""
    if isinstance(seeds, (str, bytes)):
        raise GraphError(f"seeds of query {key!r} must be entity ids (ints), got the string {seeds!r}")
    try:
        items = [seeds] if not isinstance(seeds, Iterable) else list(seeds)
        return [operator.index(s) for s in items]
    except TypeError:
        raise GraphError(f"seeds of query {key!r} must be integer entity ids, got {seeds!r}") from None


def _seeds_for(seeds: Mapping[str, Iterable[int]], key: str) -> list[int]:
    if key not in seeds:
        raise GraphError(f"no seeds given for query {key!r}: pass seeds for every query id of the batch")
    return _seed_list(seeds[key], key)


def _id_array(ids: Iterable[int], key: str, what: str) -> np.ndarray:
    if isinstance(ids, (set, frozenset)) and all(type(i) is int for i in itertools.islice(ids, 1)):
        # the common case, a Subgraph's node set: one C-level pass
        try:
            return np.fromiter(ids, dtype=np.int64, count=len(ids))
        except (TypeError, ValueError, OverflowError):
            pass
    try:
        return np.fromiter((operator.index(i) for i in ids), dtype=np.int64)
    except (TypeError, OverflowError):
        raise GraphError(f"{what} of query {key!r} must be integer ids") from None


def _edge_array(edges: Iterable[tuple[int, int]], key: str) -> np.ndarray:
    """An (m, 2) int64 array of (u, v) pairs; the common list-of-tuples input goes through one fromiter."""
    if isinstance(edges, np.ndarray):
        if edges.ndim == 2 and edges.shape[1] == 2:
            return edges.astype(np.int64, copy=False)
    else:
        pairs = list(edges)
        if all(len(e) == 2 for e in pairs):
            try:
                flat = np.fromiter(itertools.chain.from_iterable(pairs), dtype=np.int64, count=2 * len(pairs))
            except (TypeError, ValueError, OverflowError):
                pass
            else:
                return flat.reshape(-1, 2)
    raise GraphError(f"edges of query {key!r} must be (u, v) pairs of integer node ids")


def _triple_array(triples: Sequence[Triple], key: str) -> np.ndarray:
    """An (m, 3) int64 array of a subgraph's triples."""
    try:
        flat = np.fromiter(itertools.chain.from_iterable(triples), dtype=np.int64, count=3 * len(triples))
    except (TypeError, ValueError):
        raise GraphError(f"triples of {key!r} must be (head, relation, tail) tuples of integer ids") from None
    return flat.reshape(-1, 3)
