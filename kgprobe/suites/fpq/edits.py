"""KG-FPQ: false-premise questions from a knowledge graph (Zhu et al., "KG-FPQ").

A true triple ``(s, r, o)`` becomes a true-premise question (TPQ) through a template for ``r``; each edit
replaces ``o`` by another entity ``o'`` such that ``(s, r, o')`` is not in the KG, and the false-premise question
(FPQ) is the TPQ with ``o``'s label replaced by ``o'``'s. The six edit methods of the paper:

======  =========================================================================================
NSC     ``o'`` within 1..max_hops hops of ``s``, of the same type as ``o``
NDC     ``o'`` within 1..max_hops hops of ``s``, of a different type from ``o``
NNSC    ``o'`` not within max_hops hops of ``s``, of the same type as ``o``
NNDC    ``o'`` not within max_hops hops of ``s``, of a different type from ``o``
NNSR    ``o'`` not within max_hops hops of ``s``, an object of ``r`` elsewhere in the KG
NNDR    ``o'`` not within max_hops hops of ``s``, an object of another relation and never an object of ``r``
======  =========================================================================================

Hops are shortest-path distances over the whole KG (all relations) that follow edge direction, head -> tail from
the subject (``directed=True``, the default), or ignore it (``directed=False``). Directed is what the paper's data
does: every one of the NSC/NDC paths in the released KG-FPQ files walks its triples head -> tail from the subject,
with the path's length as its hop. It matters most for the four NN* methods: an undirected 5-hop ball covers nearly
every entity of a real KG (FB15k-237, CoDEx), leaving them almost no candidates, while most entities lie beyond 5
directed hops of a subject. The same setting decides NSC/NDC paths and the NN* exclusion, so the two never disagree.

Distances come from one bit-parallel multi-source BFS per batch of subjects over the CSR arrays of a scipy.sparse
adjacency matrix: every node holds one bit per source, and a hop ORs the bit words of the node's predecessors (a
boolean sparse-matrix product on 64 sources per machine word), so a batch of 512 subjects costs a handful of passes
over the edges instead of 512 BFS.

Hop sampling (NSC/NDC): ``"uniform_hop"`` (the default) draws the hop first, uniformly among the hops 1..max_hops
that have a candidate, then the object uniformly among the candidates at that hop; ``"uniform_candidate"`` draws
uniformly over every candidate within max_hops. On a real KG the number of entities grows steeply with the hop, so
uniform_candidate almost never yields a 1-hop edit (CoDEx-S: 10 of 586), while the paper's data is rich in them
(57 of the 136 released NSC/NDC edits are at hop 1). The paper's hop is the length of the walk it sampled, which is
not always the shortest distance (3 of the released edits walk past their false object before reaching it again);
ours is always the shortest directed distance, so an edit is never reported farther than it is.

Types: ``o`` and ``o'`` are of the *same type* when they share at least one ``entity_types.type_key`` and of a
*different type* when both are typed and share none. An entity without types has no known type, so it is never a
candidate of NSC, NDC, NNSC or NNDC, and a true object without types gets none of those four edits (the reason
says so). Candidates are never ``s``, ``o``, or any ``o'`` with ``(s, r, o')`` in the KG.

    >>> edits = edit(con, [(12, 3, 40)], seed=0)               # directed hops, hop drawn first
    >>> [(e.method, e.false_object, e.hop) for e in edits]   # one seeded choice per method
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import scipy.sparse as sp

from kgprobe.arrays import in_sorted
from kgprobe.errors import ConfigError, KGProbeError
from kgprobe.sql import load_sql
from kgprobe.suites.base import content_id

__all__ = [
    "ALL_METHODS",
    "ANSWERS",
    "DomainSpec",
    "Edit",
    "FPQItem",
    "FORMATS",
    "HOP_SAMPLING",
    "ObjectNotUnique",
    "EXACT_BELOW",
    "SEARCH_BUDGET",
    "SEARCH_DRAWS",
    "QuestionReject",
    "TrueTriple",
    "edit",
    "PREMISE_CHECKS",
    "check_premises",
    "reject_unnamed_objects",
    "entity_labels",
    "group_edits",
    "hop_matrix",
    "infer_types_from_relations",
    "inferred_type_sources",
    "load_templates",
    "replace_object",
    "select_true_triples",
    "write_questions",
]

Triple = tuple[int, int, int]

ALL_METHODS: tuple[str, ...] = ("NSC", "NDC", "NNSC", "NNDC", "NNSR", "NNDR")
#: How NSC/NDC draw their false object: the hop first, then an object at it (default), or over all candidates.
HOP_SAMPLING: tuple[str, ...] = ("uniform_hop", "uniform_candidate")
#: Question formats: Yes-No (discriminative) and WH (generative).
FORMATS: tuple[str, ...] = ("yn", "wh")
#: Gold answer per (format, premise). A WH question is judged on whether the answer accepts or rejects its premise.
ANSWERS: dict[tuple[str, str], str] = {
    ("yn", "tpq"): "yes",
    ("yn", "fpq"): "no",
    ("wh", "tpq"): "valid premise",
    ("wh", "fpq"): "false premise",
}

_UNREACHED = np.uint8(255)
_ONE = np.uint64(1)
_NEAR = frozenset({"NSC", "NDC"})
_TYPED = frozenset({"NSC", "NDC", "NNSC", "NNDC"})
# Cap on the words gathered at once by one BFS hop (8 bytes each), so memory stays bounded on large KGs.
_GATHER_WORDS = 1 << 22
#: Default of :func:`edit`'s ``search_budget``: the adjacency entries one subject's bounded search may scan (2^15),
#: and each search back from a drawn entity.
SEARCH_BUDGET = 1 << 15
#: A KG whose BFS adjacency has at most this many times ``search_budget`` entries (2M by default) is searched
#: exactly by the batched BFS, whose cost per subject grows with the KG (about 3.7 ms of CPU per subject per million
#: entries on the synthetic KG of ``benchmarks/scale.py``) but is below the bounded search's (about 9 ms, flat) there.
EXACT_BELOW = 64
#: Uniform draws from a method's pool when a subject's ball is truncated: NN* take the first one verified beyond
#: max_hops, NSC/NDC sort those within max_hops by their verified hop.
SEARCH_DRAWS = 256
# Bytes of the entity lists of multi-type objects (the union of their types' entities) kept between triples.
_CACHE_BYTES = 1 << 24


# --------------------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """One edit of a true triple ``(subject, relation, true_object)`` by one method.

    ``false_object`` is None and ``reason`` says why when the method found no candidate. ``hop`` is the
    shortest-path distance from the subject to ``false_object`` (directed or not, as :func:`edit` was asked; None
    beyond ``max_hops``); ``path`` is one shortest path for NSC and NDC: KG triples in their stored direction,
    ordered from the subject to ``false_object``, each sharing an entity with the next. A directed path walks head
    -> tail: its first head is the subject, each head is the previous tail, its last tail is ``false_object``.
    """

    subject: int
    relation: int
    true_object: int
    false_object: int | None
    method: str
    hop: int | None
    path: tuple[Triple, ...] | None
    reason: str | None = None

    @property
    def true_triple(self) -> Triple:
        return (self.subject, self.relation, self.true_object)

    @property
    def false_triple(self) -> Triple | None:
        return None if self.false_object is None else (self.subject, self.relation, self.false_object)

    def as_row(self) -> dict[str, Any]:
        """A flat dict for Parquet: ``path`` as a list of ``[head, relation, tail]`` lists."""
        row = asdict(self)
        row["path"] = None if self.path is None else [list(t) for t in self.path]
        return row


@dataclass(frozen=True)
class DomainSpec:
    """A question domain: subjects with one of ``types`` (type labels or type keys), optionally limited to the
    relation keys in ``allow_relations`` and never using those in ``deny_relations``."""

    types: Sequence[str]
    allow_relations: Sequence[str] | None = None
    deny_relations: Sequence[str] = ()

    @classmethod
    def from_config(cls, name: str, value: Mapping[str, Any] | Sequence[str]) -> DomainSpec:
        """Build from a config value: a list of types, or a mapping with ``types`` and optional relation lists."""
        if isinstance(value, Mapping):
            unknown = set(value) - {"types", "allow_relations", "deny_relations"}
            if unknown or "types" not in value:
                raise ConfigError(
                    f"domain {name!r}: expected keys types, allow_relations, deny_relations; got {sorted(value)}"
                )
            return cls(
                types=_str_list(name, "types", value["types"]),
                allow_relations=None
                if value.get("allow_relations") is None
                else _str_list(name, "allow_relations", value["allow_relations"]),
                deny_relations=_str_list(name, "deny_relations", value.get("deny_relations") or []),
            )
        return cls(types=_str_list(name, "types", value))


def _str_list(domain: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"domain {domain!r}: {key} must be a list of strings, got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class TrueTriple:
    """A true triple chosen for questions, with its domain and the labels the templates need."""

    domain: str
    subject: int
    relation: int
    object: int
    subject_label: str
    relation_key: str
    relation_label: str
    object_label: str

    @property
    def triple(self) -> Triple:
        return (self.subject, self.relation, self.object)

    def as_row(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FPQItem:
    """One question: the TPQ of a true triple (``premise="tpq"``) or an FPQ of one of its edits (``"fpq"``).

    ``answer`` is the gold label from :data:`ANSWERS`. ``false_*`` fields, ``method``, ``hop`` and ``path`` are
    None for a TPQ. Lineage: ``snapshot_id`` of the KG, ``seed`` of the edits, ``template_id``
    (``template:<relation key>:<format>``). ``id`` is a hash of the content, stable across runs.
    """

    id: str
    domain: str
    format: str
    premise: str
    method: str | None
    hop: int | None
    question: str
    answer: str
    subject: int
    relation: int
    true_object: int
    false_object: int | None
    subject_label: str
    relation_key: str
    relation_label: str
    true_object_label: str
    false_object_label: str | None
    path: tuple[Triple, ...] | None
    snapshot_id: str
    seed: int
    template_id: str

    def as_row(self) -> dict[str, Any]:
        """A flat dict for Parquet: ``path`` as a list of ``[head, relation, tail]`` lists."""
        row = asdict(self)
        row["path"] = None if self.path is None else [list(t) for t in self.path]
        return row


@dataclass(frozen=True)
class QuestionReject:
    """A question that was not written, and why (missing template, object not exactly once in the TPQ, ...)."""

    domain: str
    format: str
    subject: int
    relation: int
    true_object: int
    false_object: int | None
    method: str | None
    template_id: str
    reason: str

    def as_row(self) -> dict[str, Any]:
        return asdict(self)


class ObjectNotUnique(KGProbeError, ValueError):
    """The true object's surface string does not occur exactly once in a question; ``reason`` says how often."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------------------------------------------
# Seeded choices: a hash of (seed, triple, method), so a choice does not depend on batching or input order.
# --------------------------------------------------------------------------------------------------------------

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, vectorised (uint64 arithmetic wraps, which is what the hash wants)."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


def _hash64(seed: int, *columns: np.ndarray | int) -> np.ndarray:
    with np.errstate(over="ignore"):
        h = _mix(np.asarray([seed], dtype=np.int64).astype(np.uint64) + _GOLDEN)
        for col in columns:
            h = _mix(h ^ (np.asarray(col, dtype=np.int64).astype(np.uint64) + _GOLDEN))
    return h


def _choice_states(seed: int, triples: np.ndarray) -> np.ndarray:
    """(len(triples), len(ALL_METHODS)) uint64 draws; method k of triple i picks ``candidates[state % n]``."""
    s, r, o = triples[:, 0], triples[:, 1], triples[:, 2]
    base = _hash64(seed, s, r, o)
    with np.errstate(over="ignore"):
        return np.stack([_mix(base ^ (np.uint64(k + 1) * _GOLDEN)) for k in range(len(ALL_METHODS))], axis=1)


def _object_states(states: np.ndarray) -> np.ndarray:
    """A second, independent draw per (triple, method): with ``hop_sampling="uniform_hop"`` the first draw picks
    the hop and this one the object at that hop."""
    with np.errstate(over="ignore"):
        return _mix(states ^ (np.uint64(len(ALL_METHODS) + 1) * _GOLDEN))


# --------------------------------------------------------------------------------------------------------------
# Bit-parallel multi-source BFS
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Adjacency:
    """CSR arrays of a 0/1 "pull" adjacency: row v lists the nodes a BFS reaches v from (its predecessors, or every
    neighbour when undirected), plus the row starts reduceat needs."""

    n: int
    indptr: np.ndarray
    indices: np.ndarray
    rows: np.ndarray = field(repr=False)  # rows with at least one neighbour
    starts: np.ndarray = field(repr=False)  # indptr of those rows

    @classmethod
    def from_matrix(cls, matrix: sp.sparray | sp.spmatrix, *, directed: bool = False) -> _Adjacency:
        coo = sp.coo_matrix(matrix)
        if coo.shape[0] != coo.shape[1]:
            raise ValueError(f"adjacency matrix must be square, got shape {coo.shape}")
        keep = (coo.data != 0) & (coo.row != coo.col)  # the structure only: no weights, no self loops
        rows, cols = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64)
        if directed:  # an edge i -> j lets the BFS reach j from i: row j lists i
            both = (cols, rows)
        else:
            both = (np.concatenate([rows, cols]), np.concatenate([cols, rows]))
        a = sp.csr_matrix((np.ones(len(both[0]), dtype=np.int32), both), shape=coo.shape)  # sums duplicates
        a.sort_indices()
        return cls._build(a.shape[0], a.indptr.astype(np.int64), a.indices.astype(np.int64))

    @classmethod
    def _build(cls, n: int, indptr: np.ndarray, indices: np.ndarray) -> _Adjacency:
        rows = np.flatnonzero(np.diff(indptr) > 0)
        return cls(n=n, indptr=indptr, indices=indices, rows=rows, starts=indptr[rows])


def _bfs_levels(adj: _Adjacency, sources: np.ndarray, max_hops: int) -> list[np.ndarray]:
    """Frontier bitsets of a multi-source BFS: ``levels[k][v, j // 64]`` has bit ``j % 64`` set when node v is at
    distance exactly k from ``sources[j]``. Levels stop early when every frontier is empty."""
    n, b = adj.n, len(sources)
    words = max(1, (b + 63) // 64)
    cols = np.arange(b)
    frontier = np.zeros((n, words), dtype=np.uint64)
    np.bitwise_or.at(frontier, (sources, cols // 64), np.left_shift(_ONE, (cols % 64).astype(np.uint64)))
    visited = frontier.copy()
    levels = [frontier]
    # Row blocks whose edges fit in _GATHER_WORDS words: the gather below is the only large temporary.
    per_block = max(1, _GATHER_WORDS // words)
    bounds = [0]
    while bounds[-1] < len(adj.rows):
        lo = bounds[-1]
        limit = adj.starts[lo] + per_block
        hi = int(np.searchsorted(adj.starts, limit, side="left"))
        bounds.append(max(hi, lo + 1))
    out_degree = np.bincount(adj.indices, minlength=n)
    for _ in range(max_hops):
        nxt = np.zeros_like(frontier)
        active = frontier.any(axis=1)
        if int(out_degree[active].sum()) * 4 < len(adj.indices):
            # A small frontier (the first hops): only the edges out of it can set a bit, so gather those alone.
            edges = np.flatnonzero(active[adj.indices])
            for lo in range(0, len(edges), per_block):
                part = edges[lo : lo + per_block]
                rows = np.searchsorted(adj.indptr, part, side="right") - 1
                starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
                nxt[rows[starts]] |= np.bitwise_or.reduceat(frontier[adj.indices[part]], starts, axis=0)
        else:
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
                rows, starts = adj.rows[lo:hi], adj.starts[lo:hi]
                end = adj.indptr[rows[-1] + 1]
                gathered = frontier[adj.indices[starts[0] : end]]
                nxt[rows] = np.bitwise_or.reduceat(gathered, starts - starts[0], axis=0)
        nxt &= ~visited
        if not nxt.any():
            break
        visited |= nxt
        levels.append(nxt)
        frontier = nxt
    return levels


def _unpack_word(column: np.ndarray) -> np.ndarray:
    """The 64 bits of each of n words as a ``(64, n)`` uint8 array of 0/1: row j holds bit j of every word."""
    n = len(column)
    # little-endian bytes: byte i of a word holds its bits 8i..8i+7; shifting whole byte rows is several times
    # faster than np.unpackbits followed by a transpose
    as_bytes = np.ascontiguousarray(column.astype("<u8", copy=False).view(np.uint8).reshape(n, 8).T)
    out = np.empty((64, n), dtype=np.uint8)
    for i in range(8):
        for k in range(8):
            np.bitwise_and(np.right_shift(as_bytes[i], k), 1, out=out[8 * i + k])
    return out


def _distance_block(levels: list[np.ndarray], word: int) -> np.ndarray:
    """Distances (uint8, 255 beyond the last level) from the 64 sources of bit word ``word`` of a
    :func:`_bfs_levels` batch, as a ``(64, n)`` array: row ``j`` is source ``64 * word + j``."""
    n = levels[0].shape[0]
    # Bit planes first (plane b: the nodes whose distance has bit b set), so only a few words are unpacked per
    # source instead of one per level.
    acc = np.zeros((64, n), dtype=np.uint8)
    reached = levels[0][:, word].copy()
    for level in levels[1:]:
        reached |= level[:, word]
    for b in range(max(1, (len(levels) - 1).bit_length())):
        plane = np.zeros(n, dtype=np.uint64)
        for k in range(1, len(levels)):
            if k >> b & 1:
                plane |= levels[k][:, word]
        if plane.any():
            acc |= _unpack_word(plane) << np.uint8(b)
    unreached = _unpack_word(~reached)
    unreached *= _UNREACHED
    acc |= unreached
    return acc


def hop_matrix(
    adjacency: sp.sparray | sp.spmatrix,
    sources: Iterable[int],
    *,
    max_hops: int = 5,
    batch_size: int = 512,
    directed: bool = False,
) -> np.ndarray:
    """Hop distances from each source, as an int16 array ``(len(sources), n)``; -1 beyond ``max_hops``.

    ``adjacency`` is any square scipy.sparse matrix whose non-zero ``[i, j]`` is an edge i -> j. Undirected (the
    default for a bare matrix) an edge in either direction counts; ``directed=True`` follows i -> j only, as
    :func:`edit` does by default. One bit-parallel BFS serves ``batch_size`` sources at once. Why call it: it is
    the distance oracle behind :func:`edit`.

        >>> hop_matrix(sp.csr_matrix(([1, 1], ([0, 1], [1, 2])), shape=(3, 3)), [0], max_hops=5)
        array([[0, 1, 2]], dtype=int16)
    """
    adj = _Adjacency.from_matrix(adjacency, directed=directed)
    src = np.asarray(list(sources), dtype=np.int64)
    _check_max_hops(max_hops)
    if len(src) and (src.min() < 0 or src.max() >= adj.n):
        raise ValueError(f"sources must be node ids in [0, {adj.n}), got {src.min()}..{src.max()}")
    out = np.full((len(src), adj.n), -1, dtype=np.int16)
    for lo in range(0, len(src), batch_size):
        batch = src[lo : lo + batch_size]
        levels = _bfs_levels(adj, batch, max_hops)
        for word in range((len(batch) + 63) // 64):
            block = _distance_block(levels, word)[: len(batch) - 64 * word]
            rows = slice(lo + 64 * word, lo + 64 * word + len(block))
            wide = block.astype(np.int16)
            wide[block == _UNREACHED] = -1
            out[rows] = wide
    return out


def _check_max_hops(max_hops: int) -> None:
    if not 1 <= max_hops < int(_UNREACHED):
        raise ConfigError(f"max_hops must be between 1 and {int(_UNREACHED) - 1}, got {max_hops}")


# --------------------------------------------------------------------------------------------------------------
# The KG as arrays
# --------------------------------------------------------------------------------------------------------------


def _sort_rows(columns: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The columns (non-negative integers, equal lengths) with their rows sorted by the first column, then the
    second, ...: what ``np.lexsort(columns[::-1])`` orders, done as one sort of packed 64-bit keys when the columns
    fit in 63 bits (several times faster on millions of rows), else with lexsort."""
    widths = [max(1, int(c.max()).bit_length()) if len(c) else 1 for c in columns]
    if sum(widths) > 63 or any(len(c) and int(c.min()) < 0 for c in columns):
        order = np.lexsort(tuple(reversed(columns)))
        return [np.asarray(c)[order] for c in columns]
    key = np.zeros(len(columns[0]), dtype=np.uint64)
    for c, w in zip(columns, widths, strict=True):
        key <<= np.uint64(w)
        key |= np.asarray(c).astype(np.uint64)
    key.sort()
    out: list[np.ndarray] = []
    for w in reversed(widths):
        out.append((key & np.uint64((1 << w) - 1)).astype(np.int64))
        key >>= np.uint64(w)
    return out[::-1]


def _csr(keys: np.ndarray, size: int) -> np.ndarray:
    """Row starts of a CSR whose rows are the sorted ``keys`` (ids in [0, size))."""
    ptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=size), out=ptr[1:])
    return ptr


def _without(values: np.ndarray, removed: np.ndarray) -> np.ndarray:
    """The sorted array ``values`` less the elements of the (short) sorted array ``removed``."""
    if len(removed) == 0 or len(values) == 0:
        return values
    at = np.searchsorted(values, removed)
    hit = at < len(values)
    hit[hit] = values[at[hit]] == removed[hit]
    return np.delete(values, at[hit]) if hit.any() else values


def _select_excluding(base: np.ndarray, excluded: np.ndarray, k: int) -> int:
    """The k-th (from 0) element of the sorted array ``base`` that is not in ``excluded``, a sorted subset of it:
    what ``np.setdiff1d(base, excluded)[k]`` is, found by bisection (each step counts the excluded elements up to a
    position of ``base``), so neither the difference nor the ranks of ``excluded`` are built."""
    if len(excluded) == 0:
        return int(base[k])
    lo, hi = k, min(k + len(excluded), len(base) - 1)  # the answer's position lies in [k, k + len(excluded)]
    while lo < hi:
        mid = (lo + hi) // 2
        kept = mid + 1 - int(np.searchsorted(excluded, base[mid], side="right"))  # kept elements in base[: mid + 1]
        if kept >= k + 1:
            hi = mid
        else:
            lo = mid + 1
    return int(base[lo])


class _KG:
    """Triples, labelled neighbourhoods (both directions), types and relation objects of one KG, as numpy arrays.

    The candidate pools of the edit methods are sorted id arrays (the entities of each type, the distinct objects of
    each relation), so that a triple's edits cost about the size of its object's type and its relation's objects;
    the passes over the whole entity table are made once per subject (:class:`_Ball`), not once per triple."""

    def __init__(self, n: int, n_rel: int, heads: np.ndarray, rels: np.ndarray, tails: np.ndarray,
                 type_entities: np.ndarray, type_ids: np.ndarray, range_type: np.ndarray | None = None,
                 ) -> None:  # fmt: skip
        self.n, self.n_rel = n, n_rel
        # relation -> the type id of its range (-1: none), when typed edits draw from the relation's range
        self.range_type = range_type
        self.heads, self.rels, self.tails = _sort_rows([heads, rels, tails])
        self.hr = self.heads * max(n_rel, 1) + self.rels  # sorted: objects of (s, r) are one slice

        # Labelled undirected neighbourhoods (for paths): entry i of row v is the neighbour nbr[i] reached by the
        # triple (v, rel[i], nbr[i]) when fwd[i], else (nbr[i], rel[i], v); sorted by (neighbour, relation), the
        # forward entry first.
        m = len(self.heads)
        rows, nbr, rel, back = _sort_rows([
            np.concatenate([self.heads, self.tails]), np.concatenate([self.tails, self.heads]),
            np.concatenate([self.rels, self.rels]), np.repeat(np.array([0, 1], dtype=np.int64), m),
        ])  # fmt: skip
        self.nbr, self.nbr_rel, self.nbr_fwd = nbr, rel, back == 0
        self.nbr_ptr = _csr(rows, n)
        self._rows = rows
        self._adj: dict[bool | str, _Adjacency] = {}

        # Types: entity -> type ids (CSR) and type id -> its entities (CSR, sorted by entity).
        type_ids = np.asarray(type_ids, dtype=np.int64)
        n_types = int(type_ids.max()) + 1 if len(type_ids) else 0
        ents, self.et_types = _sort_rows([type_entities, type_ids])
        self.et_ptr = _csr(ents, n)
        tids, self.te_ents = _sort_rows([type_ids, type_entities])
        self.te_ptr = _csr(tids, n_types)
        self.typed = np.zeros(n, dtype=bool)
        self.typed[type_entities] = True
        self.typed_ids = np.flatnonzero(self.typed)

        # Relation -> its distinct objects (CSR, sorted), and every entity that is an object.
        ro_rel, ro_obj = _sort_rows([self.rels, self.tails])
        first = np.ones(len(ro_rel), dtype=bool)
        first[1:] = (ro_rel[1:] != ro_rel[:-1]) | (ro_obj[1:] != ro_obj[:-1])
        self.ro_obj = ro_obj[first]
        self.ro_ptr = _csr(ro_rel[first], max(n_rel, 1))
        self.is_object = np.zeros(n, dtype=bool)
        self.is_object[self.tails] = True
        self.object_ids = np.flatnonzero(self.is_object)
        self._same: dict[tuple[int, ...], np.ndarray] = {}
        self._same_bytes = 0

    def adjacency(self, directed: bool) -> _Adjacency:
        """The BFS (pull) adjacency: row v lists, once each and without v itself, the nodes v is reached from: its
        predecessors (heads of triples whose tail is v) when ``directed``, else every neighbour."""
        if directed not in self._adj:
            keep = self._rows != self.nbr
            if directed:
                keep &= ~self.nbr_fwd  # entries (nbr, rel, v): nbr is a head pointing at v
            rows, nbr = self._rows[keep], self.nbr[keep]
            distinct = np.ones(len(rows), dtype=bool)  # sorted by (row, neighbour): drop repeats of a pair
            distinct[1:] = (rows[1:] != rows[:-1]) | (nbr[1:] != nbr[:-1])
            rows, nbr = rows[distinct], nbr[distinct]
            self._adj[directed] = _Adjacency._build(self.n, _csr(rows, self.n), nbr.astype(np.int64))
        return self._adj[directed]

    def successors(self, directed: bool) -> _Adjacency:
        """The "push" adjacency a single-source search walks forwards: row v lists, once each and without v, the
        nodes v reaches in one hop (the tails of its triples when ``directed``, else every neighbour)."""
        if not directed:
            return self.adjacency(False)
        if "push" not in self._adj:
            keep = (self._rows != self.nbr) & self.nbr_fwd  # entries (v, rel, nbr): v is the head
            rows, nbr = self._rows[keep], self.nbr[keep]
            distinct = np.ones(len(rows), dtype=bool)
            distinct[1:] = (rows[1:] != rows[:-1]) | (nbr[1:] != nbr[:-1])
            rows, nbr = rows[distinct], nbr[distinct]
            self._adj["push"] = _Adjacency._build(self.n, _csr(rows, self.n), nbr.astype(np.int64))
        return self._adj["push"]

    def step(self, u: int, v: int, *, directed: bool) -> Triple:
        """The triple a path steps over from u to v (u -> v; either way round when undirected): the one of the
        smallest relation, as :meth:`path` chooses."""
        lo, hi = self.nbr_ptr[v], self.nbr_ptr[v + 1]
        fits = self.nbr[lo:hi] == u
        if directed:
            fits &= ~self.nbr_fwd[lo:hi]
        i = lo + int(fits.argmax())
        rel = int(self.nbr_rel[i])
        return (v, rel, u) if self.nbr_fwd[i] else (u, rel, v)

    @classmethod
    def from_connection(cls, con: duckdb.DuckDBPyConnection, *, ranges: bool = False) -> _KG:
        import pyarrow.compute as pc

        n, n_rel = con.execute(load_sql("fpq/graph_size")).fetchone()  # type: ignore[misc]
        t = con.execute(load_sql("fpq/triples")).fetchnumpy()
        et = con.execute(load_sql("fpq/entity_types")).to_arrow_table()
        # type keys as small ids: equal keys share an id, which is all "same type" asks
        encoded = pc.dictionary_encode(et.column("type_key").combine_chunks())
        keys = encoded.indices
        range_type = None
        if ranges:
            ids = {k: i for i, k in enumerate(encoded.dictionary.to_pylist())}
            range_type = np.full(max(int(n_rel), 1), -1, dtype=np.int64)
            for rel, key in con.execute(load_sql("fpq/relation_ranges")).fetchall():
                if rel < len(range_type):
                    range_type[rel] = ids.get(key, -1)
        return cls(
            int(n), int(n_rel),
            np.asarray(t["head"], dtype=np.int64), np.asarray(t["relation"], dtype=np.int64),
            np.asarray(t["tail"], dtype=np.int64),
            et.column("entity").to_numpy().astype(np.int64), keys.to_numpy(zero_copy_only=False).astype(np.int64),
            range_type,
        )  # fmt: skip

    def object_slices(self, arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each (s, r, ...) row, the slice ``tails[lo:hi]`` of the objects of (s, r) in the KG."""
        key = arr[:, 0] * max(self.n_rel, 1) + arr[:, 1]
        return np.searchsorted(self.hr, key, side="left"), np.searchsorted(self.hr, key, side="right")

    def same_type(self, o: int, r: int | None = None) -> np.ndarray | None:
        """The sorted ids of the entities that share a type with o (o included), or None when o has no type. With
        relation ranges (inferred types) and ``r``, only the entities of r's range when o has it: an object of
        /film/film/genre is compared with genres, not with every type it also has (a country that is a Netflix
        genre is not a film genre)."""
        types = tuple(self.et_types[self.et_ptr[o] : self.et_ptr[o + 1]].tolist())
        if not types:
            return None
        if r is not None and self.range_type is not None and 0 <= r < len(self.range_type):
            t = int(self.range_type[r])
            if t >= 0 and t in types:
                return self.te_ents[self.te_ptr[t] : self.te_ptr[t + 1]]
        if len(types) == 1:
            return self.te_ents[self.te_ptr[types[0]] : self.te_ptr[types[0] + 1]]
        if types not in self._same:
            if self._same_bytes > _CACHE_BYTES:
                self._same.clear()
                self._same_bytes = 0
            pool = np.unique(np.concatenate([self.te_ents[self.te_ptr[t] : self.te_ptr[t + 1]] for t in types]))
            self._same[types] = pool
            self._same_bytes += pool.nbytes
        return self._same[types]

    def relation_objects(self, r: int) -> np.ndarray:
        """The sorted ids of the distinct objects of relation r."""
        return self.ro_obj[self.ro_ptr[r] : self.ro_ptr[r + 1]]

    def path(self, dist: np.ndarray, target: int, *, directed: bool) -> tuple[Triple, ...]:
        """One shortest path from the BFS source of ``dist`` to ``target``: at each step back, the neighbour with
        the smallest id one hop closer (then the smallest relation), so the path is deterministic. Directed, only
        triples that point at the current node are stepped back over, so the path walks head -> tail."""
        steps: list[Triple] = []
        v = target
        for k in range(int(dist[target]), 0, -1):
            lo, hi = self.nbr_ptr[v], self.nbr_ptr[v + 1]
            closer = dist[self.nbr[lo:hi]] == k - 1
            if directed:
                closer &= ~self.nbr_fwd[lo:hi]
            i = lo + int(closer.argmax())
            u, rel = int(self.nbr[i]), int(self.nbr_rel[i])
            steps.append((v, rel, u) if self.nbr_fwd[i] else (u, rel, v))
            v = u
        return tuple(reversed(steps))


class _Ball:
    """What the edits of one subject's triples share: its distances and, built on first use, the typed entities and
    the objects near it (with their hops) and beyond max_hops, as sorted id arrays."""

    def __init__(self, kg: _KG, dist: np.ndarray) -> None:
        self.kg, self.dist = kg, dist
        self._typed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._far_objects: np.ndarray | None = None
        self._at_hop: dict[int, np.ndarray] = {}
        self.typed_per_hop = np.zeros(0, dtype=np.int64)  # near typed entities per hop, once typed() has run

    def typed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(near typed ids, their hops, far typed ids)."""
        if self._typed is None:
            dist, kg = self.dist, self.kg
            near = (dist - np.uint8(1)) < np.uint8(int(_UNREACHED) - 1)  # 1..max_hops: 0 and 255 wrap out of range
            far = dist == _UNREACHED
            if len(kg.typed_ids) < kg.n:
                near &= kg.typed
                far &= kg.typed
            near_ids = np.flatnonzero(near)
            near_hops = dist[near_ids]
            self._typed = (near_ids, near_hops, np.flatnonzero(far))
            self.typed_per_hop = np.bincount(near_hops, minlength=int(_UNREACHED))
        return self._typed

    def typed_at_hop(self, hop: int) -> np.ndarray:
        if hop not in self._at_hop:
            ids, hops, _ = self.typed()
            self._at_hop[hop] = ids[hops == hop]
        return self._at_hop[hop]

    def far_objects(self) -> np.ndarray:
        if self._far_objects is None:
            self._far_objects = np.flatnonzero((self.dist == _UNREACHED) & self.kg.is_object)
        return self._far_objects


# --------------------------------------------------------------------------------------------------------------
# Edits
# --------------------------------------------------------------------------------------------------------------


def edit(
    con: duckdb.DuckDBPyConnection,
    triples: Iterable[Triple],
    methods: Sequence[str] = ALL_METHODS,
    max_hops: int = 5,
    seed: int = 0,
    *,
    directed: bool = True,
    hop_sampling: str = "uniform_hop",
    batch_size: int = 512,
    ranges: bool = False,
    search_budget: int | None = SEARCH_BUDGET,
) -> list[Edit]:
    """Return one seeded :class:`Edit` per method for each true triple, in input order (triple, then method).

    ``triples`` are ``(head, relation, tail)`` ids of the KG in ``con``'s current schema; each must be in its
    ``triples`` table. Hops follow edge direction from the subject unless ``directed=False`` (see the module
    docstring); the same distances decide NSC/NDC ("within max_hops") and NN* ("not within"). NSC/NDC draw their
    object by ``hop_sampling`` (:data:`HOP_SAMPLING`: the hop first, then an object at it; or uniformly over all
    candidates); NN* draw uniformly over their candidates. A choice depends only on the KG, ``seed``, the triple,
    the method and these options, never on input order, batching or the other methods asked for. Distances come
    from one multi-source BFS per ``batch_size`` distinct subjects.

        >>> [e.method for e in edit(con, [(0, 1, 2)], methods=("NSC", "NNSR"))]
        ['NSC', 'NNSR']

    With ``ranges`` (for types from :func:`infer_types_from_relations`), the typed methods (NSC, NDC, NNSC, NNDC)
    take "the true object's type" to be the range of the triple's relation (``relation_ranges.sql``: the key's last
    component), when the object has it, instead of every type the object has.

    ``search_budget`` bounds the search per subject on a large KG (None: no bound, every KG searched exactly). A
    KG whose BFS adjacency has at most :data:`EXACT_BELOW` times that many entries is searched exactly by the
    batched BFS. On a larger one each subject grows its ball level by level while the next level's adjacency
    entries fit in the budget: a ball complete within max_hops gives exactly what the exact search gives (the same
    candidates in id order, the same draws); a truncated one (levels 1..h exact) draws :data:`SEARCH_DRAWS`
    members of the method's pool uniformly and verifies the hop of each beyond level h with a search back from it
    that stays outside the ball (any shortest path enters the ball's outside through level h) within the same
    budget. NN* take the first draw verified beyond max_hops, so their choice is uniform over their candidates;
    NSC/NDC draw the hop among the hops with a candidate (those of the ball, and those the draws met) and then a
    candidate at it. A hop reported is always the shortest distance and an NN* object always lies beyond max_hops;
    what the bound costs is that a method whose candidates are a small share of its pool may find none in its
    draws (the reason says "bounded search"). The work per subject is bounded by the budget, not the KG.
    """
    methods = tuple(methods)
    unknown = [m for m in methods if m not in ALL_METHODS]
    if unknown:
        raise ConfigError(f"unknown KG-FPQ edit method(s) {unknown}; choose from {', '.join(ALL_METHODS)}")
    _check_max_hops(max_hops)
    if seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed}")
    if batch_size < 1:
        raise ConfigError(f"batch_size must be positive, got {batch_size}")
    if hop_sampling not in HOP_SAMPLING:
        raise ConfigError(f"unknown hop_sampling {hop_sampling!r}; use one of {', '.join(HOP_SAMPLING)}")
    if not isinstance(directed, bool):
        raise ConfigError(f"directed must be true or false, got {directed!r}")
    if search_budget is not None and search_budget < 1:
        raise ConfigError(f"search_budget must be positive (or None: no bound), got {search_budget}")
    arr = np.asarray([tuple(t) for t in triples], dtype=np.int64).reshape(-1, 3)
    if len(arr) == 0 or not methods:
        return []
    kg = _KG.from_connection(con, ranges=ranges)
    if search_budget is not None and len(kg.adjacency(directed).indices) > EXACT_BELOW * search_budget:
        return _edit_bounded(kg, arr, methods, max_hops, seed, search_budget, directed=directed,
                             hop_sampling=hop_sampling)
    return _edit_arrays(kg, arr, methods, max_hops, seed, batch_size, directed=directed, hop_sampling=hop_sampling)


def _edit_arrays(kg: _KG, arr: np.ndarray, methods: tuple[str, ...], max_hops: int, seed: int, batch_size: int,
                 *, directed: bool = True, hop_sampling: str = "uniform_hop") -> list[Edit]:  # fmt: skip
    lo, hi = kg.object_slices(arr)
    _check_in_kg(kg, arr, lo, hi)
    states = _choice_states(seed, arr)
    second = _object_states(states)
    by_hop = hop_sampling == "uniform_hop"
    adjacency = kg.adjacency(directed)
    columns = [ALL_METHODS.index(m) for m in methods]
    reasons = {m: _no_candidate(m, max_hops, directed) for m in methods}
    needs_types = not _TYPED.isdisjoint(methods)
    results: list[list[Edit]] = [[] for _ in range(len(arr))]
    subjects, first = np.unique(arr[:, 0], return_index=True)
    subjects = subjects[np.argsort(first)]  # first-seen order; results do not depend on it
    by_subject: dict[int, list[int]] = {}
    for i, s in enumerate(arr[:, 0].tolist()):
        by_subject.setdefault(s, []).append(i)
    for start in range(0, len(subjects), batch_size):
        batch = subjects[start : start + batch_size]
        levels = _bfs_levels(adjacency, batch, max_hops)
        block = np.empty((0, kg.n), dtype=np.uint8)
        for j, s in enumerate(batch.tolist()):
            if j % 64 == 0:
                block = _distance_block(levels, j // 64)
            ball = _Ball(kg, block[j % 64])
            for i in by_subject[s]:
                results[i] = _edit_triple(kg, ball, arr[i], methods, columns, states[i], second[i], reasons,
                                          by_hop=by_hop, needs_types=needs_types, objects=kg.tails[lo[i] : hi[i]],
                                          directed=directed)  # fmt: skip
        del levels, block
    return [e for group in results for e in group]


def _edit_triple(kg: _KG, ball: _Ball, triple: np.ndarray, methods: tuple[str, ...], columns: list[int],
                 states: np.ndarray, second: np.ndarray, reasons: dict[str, str], *, by_hop: bool, needs_types: bool,
                 objects: np.ndarray, directed: bool) -> list[Edit]:  # fmt: skip
    """The edits of one triple. The candidates of a method are its pool (the true object's type, the typed entities
    of other types, the relation's objects, the objects of other relations) within 1..max_hops of the subject (less
    the objects of (s, r)) or beyond; a candidate list is materialised only for the small pools, and the others
    (all typed entities but one type's, all objects but one relation's) are read through the subject's sorted
    near and far arrays with the small pool's members skipped, so no step per triple walks the entity table."""
    s, r, o = (int(x) for x in triple)
    dist = ball.dist
    same = kg.same_type(o, r) if needs_types else None
    near_same_all = far_same = near_same = None
    if same is not None:
        d = dist[same]
        near_mask = (d != _UNREACHED) & (d > 0)
        near_same_all, far_same = same[near_mask], same[d == _UNREACHED]
        near_same = _without(near_same_all, objects)
    far_relation: np.ndarray | None = None
    out: list[Edit] = []
    for m, col in zip(methods, columns, strict=True):
        state, other = int(states[col]), int(second[col])
        if m in _TYPED and same is None:
            out.append(Edit(s, r, o, None, m, None, None, "true object has no entity type"))
            continue
        x: int | None = None
        if m == "NSC":
            candidates = near_same
            if len(candidates):
                if by_hop:
                    at = dist[candidates]
                    hops = np.flatnonzero(np.bincount(at, minlength=int(_UNREACHED)))  # the hops with a candidate
                    candidates = candidates[at == hops[state % len(hops)]]
                    x = int(candidates[other % len(candidates)])
                else:
                    x = int(candidates[state % len(candidates)])
        elif m == "NDC":
            near_ids, _, _ = ball.typed()
            # near typed entities that are not candidates: those of o's type, and the objects of (s, r)
            obj = objects[kg.typed[objects]]
            d_obj = dist[obj]
            obj = obj[(d_obj != _UNREACHED) & (d_obj > 0) & ~in_sorted(same, obj)]
            skipped = np.insert(near_same_all, np.searchsorted(near_same_all, obj), obj) if len(obj) else near_same_all
            count = len(near_ids) - len(skipped)
            if count > 0:
                if by_hop:
                    per_hop = ball.typed_per_hop - np.bincount(dist[skipped], minlength=int(_UNREACHED))
                    hops = np.flatnonzero(per_hop > 0)
                    hop = int(hops[state % len(hops)])
                    x = _select_excluding(ball.typed_at_hop(hop), skipped[dist[skipped] == hop], other % int(per_hop[hop]))
                else:
                    x = _select_excluding(near_ids, skipped, state % count)
        elif m == "NNSC":
            if len(far_same):
                x = int(far_same[state % len(far_same)])
        elif m == "NNDC":
            _, _, far_ids = ball.typed()
            count = len(far_ids) - len(far_same)
            if count > 0:
                x = _select_excluding(far_ids, far_same, state % count)
        else:
            if far_relation is None:
                pool = kg.relation_objects(r)
                far_relation = pool[dist[pool] == _UNREACHED]
            if m == "NNSR":
                if len(far_relation):
                    x = int(far_relation[state % len(far_relation)])
            else:
                far_objects = ball.far_objects()
                count = len(far_objects) - len(far_relation)
                if count > 0:
                    x = _select_excluding(far_objects, far_relation, state % count)
        if x is None:
            out.append(Edit(s, r, o, None, m, None, None, reasons[m]))
        elif m in _NEAR:
            out.append(Edit(s, r, o, x, m, int(dist[x]), kg.path(dist, x, directed=directed), None))
        else:
            out.append(Edit(s, r, o, x, m, None, None, None))
    return out


# --------------------------------------------------------------------------------------------------------------
# Bounded search (large KGs): one subject's ball, grown level by level within a budget, and verified draws
# --------------------------------------------------------------------------------------------------------------

_BEYOND, _UNKNOWN = -1, -2
#: Each search back from a drawn entity may scan this share of the budget (1/CHECK_SHARE); one that would scan
#: more (it met a hub outside the ball) leaves its entity out, as if it had not been drawn.
CHECK_SHARE = 16


def _gather(indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The concatenated CSR rows ``rows`` (neighbour lists), without a Python loop."""
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return indices[offsets + np.arange(total)]


def _select_excluding_two(base: np.ndarray, a: np.ndarray, b: np.ndarray, both: np.ndarray, k: int) -> int:
    """The k-th (from 0) element of the sorted array ``base`` in neither ``a`` nor ``b`` (sorted subsets of it;
    ``both`` their intersection): :func:`_select_excluding` with two excluded sets, neither merged."""
    lo, hi = k, len(base) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        v = base[mid]
        dropped = (int(np.searchsorted(a, v, side="right")) + int(np.searchsorted(b, v, side="right"))
                   - int(np.searchsorted(both, v, side="right")))  # fmt: skip
        if mid + 1 - dropped >= k + 1:
            hi = mid
        else:
            lo = mid + 1
    return int(base[lo])


class _Pool:
    """A method's candidate pool as a sorted ``base`` less a sorted subset ``minus`` (the objects of other
    relations are every object less the relation's), read without building the difference."""

    def __init__(self, base: np.ndarray, minus: np.ndarray | None = None) -> None:
        self.base = base
        self.minus = np.zeros(0, dtype=np.int64) if minus is None else minus
        self.size = len(base) - len(self.minus)

    def inside(self, ball: _BoundedBall) -> np.ndarray:
        """The pool's members in the ball (the subject included), sorted: cached per ball, as the pools of a
        subject's triples repeat."""
        a = ball.within(self.base)
        return a if len(self.minus) == 0 else ball.within_less(a, self.minus)

    def without(self, ball: _BoundedBall) -> tuple[int, Any]:
        """(count, k -> element) of the pool less the ball."""
        a = ball.within(self.base)
        if len(self.minus) == 0:
            return self.size - len(a), lambda k: _select_excluding(self.base, a, k)
        both = ball.within(self.minus)
        return self.size - len(a) + len(both), lambda k: _select_excluding_two(self.base, a, self.minus, both, k)


class _BoundedBall:
    """One subject's ball within ``budget`` scanned adjacency entries: levels 1..h exactly (``levels``), and
    ``complete`` when that is the whole ball within max_hops. Beyond a truncated ball, :meth:`hop_of` verifies an
    entity's distance by a search back from it that stays outside the ball (any shortest path enters it through
    level h), so a hop it reports is the exact shortest distance."""

    def __init__(self, search: _Search, s: int) -> None:
        self.search, self.s = search, s
        push, dist, budget = search.push, search.dist, search.budget
        dist[s] = 0
        levels = [np.array([s], dtype=np.int64)]
        scanned, complete = 0, True
        for k in range(search.max_hops):
            frontier = levels[-1]
            cost = int((push.indptr[frontier + 1] - push.indptr[frontier]).sum())
            if scanned + cost > budget:
                complete = False
                break
            scanned += cost
            reached = _gather(push.indptr, push.indices, frontier)
            reached = np.unique(reached[dist[reached] == _UNREACHED])
            if len(reached) == 0:
                break
            dist[reached] = k + 1
            levels.append(reached)
        self.levels, self.complete = levels, complete
        self.h = len(levels) - 1
        self.inside = np.sort(np.concatenate(levels))  # the subject too
        self._hops: dict[int, int] = {}
        self._trails: dict[int, list[np.ndarray]] = {}
        # cached per pool array, keyed by where its data lies; the arrays are kept, so no key is reused
        self._within: dict[tuple[int, ...], tuple[tuple[np.ndarray, ...], np.ndarray]] = {}

    def within(self, base: np.ndarray) -> np.ndarray:
        """The ball's members (the subject included) in the sorted array ``base``, sorted."""
        key = (base.__array_interface__["data"][0], len(base))
        if key not in self._within:
            self._within[key] = ((base,), self.inside[in_sorted(base, self.inside)])
        return self._within[key][1]

    def within_less(self, a: np.ndarray, minus: np.ndarray) -> np.ndarray:
        """``a`` (a result of :meth:`within`) less the sorted array ``minus``."""
        key = (a.__array_interface__["data"][0], len(a), minus.__array_interface__["data"][0], len(minus))
        if key not in self._within:
            self._within[key] = ((a, minus), a[~in_sorted(minus, a)])
        return self._within[key][1]

    def release(self) -> None:
        self.search.dist[self.inside] = _UNREACHED

    def hop_of(self, x: int) -> int:
        """x's exact distance when it is within max_hops, else _BEYOND; _UNKNOWN when the search back from x would
        pass the budget (x is then skipped as if it had not been drawn)."""
        d = int(self.search.dist[x])
        if d != _UNREACHED:
            return d
        if self.complete:
            return _BEYOND
        if x not in self._hops:
            self._hops[x] = self._search_back(x)
        return self._hops[x]

    def hops_of(self, xs: np.ndarray) -> np.ndarray:
        """:meth:`hop_of` of many entities at once: one search back per entity, all advanced together level by
        level as (entity, node) pairs, each entity within its own budget (the same answers as one by one)."""
        dist, search = self.search.dist, self.search
        d0 = dist[xs]
        out = np.where(d0 == _UNREACHED, _BEYOND, d0.astype(np.int64))
        todo = np.flatnonzero(d0 == _UNREACHED)
        if self.complete or len(todo) == 0:
            return out
        pull, n = search.pull, np.int64(search.kg.n)
        owner, nodes = todo, xs[todo].astype(np.int64)
        alive = np.zeros(len(xs), dtype=bool)
        alive[todo] = True
        cost = np.zeros(len(xs), dtype=np.int64)
        for d in range(1, search.max_hops - self.h + 1):
            deg = pull.indptr[nodes + 1] - pull.indptr[nodes]
            cost += np.bincount(owner, weights=deg, minlength=len(xs)).astype(np.int64)
            over = alive & (cost > search.check_budget)
            out[over] = _UNKNOWN
            alive &= ~over
            keep = alive[owner]
            owner, nodes, deg = owner[keep], nodes[keep], deg[keep]
            preds = _gather(pull.indptr, pull.indices, nodes)
            by = np.repeat(owner, deg)
            hit = dist[preds] != _UNREACHED  # a node of the ball: of level h, so the entity is at h + d
            found = by[hit]
            out[found] = self.h + d
            alive[found] = False
            more = ~hit & alive[by]
            # each entity's next frontier, once each: an earlier level's node met again is expanded again, which
            # costs a little and changes no answer (the first level that meets the ball is the entity's)
            keys = np.unique(by[more] * n + preds[more])
            if len(keys) == 0:
                break
            owner, nodes = keys // n, keys % n
        return out

    def _search_back(self, x: int) -> int:
        search = self.search
        pull, dist, mark = search.pull, search.dist, search.mark
        frontier = np.array([x], dtype=np.int64)
        layers = [frontier]
        touched = [frontier]
        mark[x] = True
        scanned, out = 0, _BEYOND
        try:
            for d in range(1, search.max_hops - self.h + 1):
                cost = int((pull.indptr[frontier + 1] - pull.indptr[frontier]).sum())
                if scanned + cost > search.check_budget:
                    return _UNKNOWN
                scanned += cost
                preds = _gather(pull.indptr, pull.indices, frontier)
                if (dist[preds] != _UNREACHED).any():  # a node of the ball: of level h, so x is at h + d
                    self._trails[x] = layers
                    out = self.h + d
                    break
                preds = np.unique(preds[~mark[preds]])
                if len(preds) == 0:
                    break
                mark[preds] = True
                touched.append(preds)
                layers.append(preds)
                frontier = preds
            return out
        finally:
            for t in touched:
                mark[t] = False

    def path(self, x: int) -> tuple[Triple, ...]:
        """One shortest path from the subject to x (within max_hops): through the ball as :meth:`_KG.path` walks
        it, then forwards along the layers of x's search back, the smallest id at each step."""
        kg, search = self.search.kg, self.search
        if search.dist[x] != _UNREACHED:
            return kg.path(search.dist, x, directed=search.directed)
        layers = self._trails[x]
        pull = search.pull
        last = layers[-1]
        preds = _gather(pull.indptr, pull.indices, last)
        entry = int(preds[search.dist[preds] != _UNREACHED].min())
        steps = list(kg.path(search.dist, entry, directed=search.directed))
        at = entry
        for layer in reversed(layers):
            nxt = [int(v) for v in layer.tolist() if at in pull.indices[pull.indptr[v] : pull.indptr[v + 1]]]
            v = min(nxt)
            steps.append(kg.step(at, v, directed=search.directed))
            at = v
        return tuple(steps)


class _Search:
    """Scratch arrays shared by the subjects' bounded searches (reset after each subject)."""

    def __init__(self, kg: _KG, directed: bool, max_hops: int, budget: int) -> None:
        self.kg, self.directed, self.max_hops = kg, directed, max_hops
        self.budget, self.check_budget = budget, max(1, budget // CHECK_SHARE)
        self.pull, self.push = kg.adjacency(directed), kg.successors(directed)
        self.dist = np.full(kg.n, _UNREACHED, dtype=np.uint8)
        self.mark = np.zeros(kg.n, dtype=bool)


def _draws(state: int, count: int) -> np.ndarray:
    """The first ``count`` draws of a (triple, method): hashes of its state, so they depend on nothing else."""
    k = np.arange(count, dtype=np.uint64) + np.uint64(2 * len(ALL_METHODS) + 2)
    with np.errstate(over="ignore"):
        return _mix(np.uint64(state) ^ (k * _GOLDEN))


def _pool_draws(pool: _Pool, state: int, *, outside: _BoundedBall | None = None) -> np.ndarray:
    """:data:`SEARCH_DRAWS` uniform draws from ``pool`` (from ``pool.base``, those in ``pool.minus`` dropped), in
    draw order; with ``outside``, only those beyond that ball. A uniform draw of ``base`` that lands in the pool is
    a uniform draw of the pool."""
    if len(pool.base) == 0:
        return np.zeros(0, dtype=np.int64)
    ys = pool.base[(_draws(state, SEARCH_DRAWS) % np.uint64(len(pool.base))).astype(np.int64)]
    if len(pool.minus):
        ys = ys[~in_sorted(pool.minus, ys)]
    if outside is not None:
        ys = ys[outside.search.dist[ys] == _UNREACHED]
    return ys


def _edit_bounded(kg: _KG, arr: np.ndarray, methods: tuple[str, ...], max_hops: int, seed: int, budget: int,
                  *, directed: bool, hop_sampling: str) -> list[Edit]:  # fmt: skip
    lo, hi = kg.object_slices(arr)
    _check_in_kg(kg, arr, lo, hi)
    states = _choice_states(seed, arr)
    second = _object_states(states)
    columns = [ALL_METHODS.index(m) for m in methods]
    reasons = {m: _no_candidate(m, max_hops, directed) for m in methods}
    search = _Search(kg, directed, max_hops, budget)
    results: list[list[Edit]] = [[] for _ in range(len(arr))]
    by_subject: dict[int, list[int]] = {}
    for i, s in enumerate(arr[:, 0].tolist()):
        by_subject.setdefault(s, []).append(i)
    for s, rows in by_subject.items():
        ball = _BoundedBall(search, s)
        try:
            for i in rows:
                results[i] = _edit_triple_bounded(kg, ball, arr[i], methods, columns, states[i], second[i], reasons,
                                                  by_hop=hop_sampling == "uniform_hop", objects=kg.tails[lo[i] : hi[i]])
        finally:
            ball.release()
    return [e for group in results for e in group]


def _edit_triple_bounded(kg: _KG, ball: _BoundedBall, triple: np.ndarray, methods: tuple[str, ...],
                         columns: list[int], states: np.ndarray, second: np.ndarray, reasons: dict[str, str], *,
                         by_hop: bool, objects: np.ndarray) -> list[Edit]:  # fmt: skip
    """The edits of one triple from a bounded ball. A complete ball gives what :func:`_edit_triple` gives (the same
    candidates in id order, the same draws), reading the pools through the ball instead of the entity table.
    Beyond a truncated ball, a method draws up to :data:`SEARCH_DRAWS` pool members uniformly and verifies their
    hop (:meth:`_BoundedBall.hop_of`)."""
    s, r, o = (int(x) for x in triple)
    dist = ball.search.dist
    same = kg.same_type(o, r) if not _TYPED.isdisjoint(methods) else None
    out: list[Edit] = []
    for m, col in zip(methods, columns, strict=True):
        state, other = int(states[col]), int(second[col])
        if m in _TYPED and same is None:
            out.append(Edit(s, r, o, None, m, None, None, "true object has no entity type"))
            continue
        if m in ("NSC", "NNSC"):
            pool = _Pool(same)
        elif m in ("NDC", "NNDC"):
            pool = _Pool(kg.typed_ids, same)
        elif m == "NNSR":
            pool = _Pool(kg.relation_objects(r))
        else:
            pool = _Pool(kg.object_ids, kg.relation_objects(r))
        x: int | None = None
        if m in _NEAR:
            cand = pool.inside(ball)
            cand = _without(cand[cand != s], objects)
            if ball.complete:
                if len(cand):
                    if by_hop:
                        at = dist[cand]
                        hops = np.flatnonzero(np.bincount(at, minlength=int(_UNREACHED)))
                        cand = cand[at == hops[state % len(hops)]]
                        x = int(cand[other % len(cand)])
                    else:
                        x = int(cand[state % len(cand)])
            else:
                x = _near_beyond_ball(ball, pool, cand, objects, state, other, by_hop=by_hop)
        elif ball.complete:
            count, element = pool.without(ball)
            if count > 0:
                x = element(state % count)
        else:
            ys = _pool_draws(pool, state, outside=ball)  # the ball's members are near: never kept
            far = ys[ball.hops_of(ys) == _BEYOND]
            if len(far):
                x = int(far[0])
        if x is None:
            reason = reasons[m] if ball.complete else f"{reasons[m]} in {SEARCH_DRAWS} draws (bounded search)"
            out.append(Edit(s, r, o, None, m, None, None, reason))
        elif m in _NEAR:
            out.append(Edit(s, r, o, x, m, ball.hop_of(x), ball.path(x), None))
        else:
            out.append(Edit(s, r, o, x, m, None, None, None))
    return out


def _near_beyond_ball(ball: _BoundedBall, pool: _Pool, exact: np.ndarray, objects: np.ndarray, state: int,
                      other: int, *, by_hop: bool) -> int | None:  # fmt: skip
    """NSC/NDC for a truncated ball: the candidates of levels 1..h are ``exact``; those farther are met by uniform
    draws from the pool, each verified. ``uniform_hop``: the hop uniformly among the hops with a candidate (levels
    1..h, and the farther hops a draw from the pool less the ball met), then uniformly among that hop's candidates
    (those of the ball, or the distinct draws at it: a uniform sample of the hop's candidates). ``uniform_candidate``:
    the first draw from the whole pool that is a candidate (uniform over every candidate), else one of ``exact``."""
    dist = ball.search.dist
    if not by_hop:
        ys = _pool_draws(pool, state)
        ys = ys[(ys != ball.s) & ~in_sorted(objects, ys)]
        d = ball.hops_of(ys)
        hit = ys[d >= 1]
        if len(hit):
            return int(hit[0])
        return int(exact[state % len(exact)]) if len(exact) else None
    ys = _pool_draws(pool, state, outside=ball)  # beyond the ball only: its own candidates are ``exact``
    ys = ys[~in_sorted(objects, ys)]
    d = ball.hops_of(ys)
    met: dict[int, set[int]] = {}
    for y, hop in zip(ys.tolist(), d.tolist(), strict=True):
        if hop >= 1:
            met.setdefault(hop, set()).add(y)
    at = dist[exact]
    hops = sorted(set(np.unique(at).tolist()) | set(met))
    if not hops:
        return None
    hop = hops[state % len(hops)]
    if hop <= ball.h:
        cand = exact[at == hop]
    else:
        cand = np.array(sorted(met[hop]), dtype=np.int64)
    return int(cand[other % len(cand)])


def _no_candidate(method: str, max_hops: int, directed: bool = True) -> str:
    what = {
        "NSC": "same-type entity", "NDC": "different-type entity", "NNSC": "same-type entity",
        "NNDC": "different-type entity", "NNSR": "object of the relation", "NNDR": "object of only other relations",
    }[method]  # fmt: skip
    hops = f"{max_hops} directed hops" if directed else f"{max_hops} hops (undirected)"
    return f"no {what} {'within' if method in _NEAR else 'beyond'} {hops}"


def _check_in_kg(kg: _KG, arr: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    bad = (arr[:, [0, 2]] < 0).any(axis=1) | (arr[:, [0, 2]] >= kg.n).any(axis=1)
    bad |= (arr[:, 1] < 0) | (arr[:, 1] >= kg.n_rel)
    for i in np.flatnonzero(~bad).tolist():
        objects = kg.tails[lo[i] : hi[i]]
        k = np.searchsorted(objects, arr[i, 2])
        bad[i] = k == len(objects) or objects[k] != arr[i, 2]
    if bad.any():
        missing = [tuple(t) for t in arr[bad][:3].tolist()]
        raise KGProbeError(
            f"{int(bad.sum())} of the {len(arr)} triples to edit are not in the KG's triples table, e.g. {missing}; "
            "pass (head, relation, tail) ids of this warehouse schema (for example from select_true_triples)"
        )


#: How false premises are checked: ``kg`` (default) rejects an edit whose false object the KG already links to the
#: subject (:func:`check_premises`); ``paper`` keeps every edit the method drew, as KG-FPQ does.
PREMISE_CHECKS: tuple[str, ...] = ("kg", "paper")


def check_premises(con: duckdb.DuckDBPyConnection, edits: Sequence[Edit]) -> list[Edit]:
    """``edits`` with every false premise that the KG makes true or near-true turned into a rejected edit
    (``false_object`` None, ``reason`` saying why): the false object is another object of the same relation for the
    subject (by id, or by name: two entities called "United States"), or the subject reaches it through another
    relation, in either direction ("Is Casino Royale a United Kingdom film?" where the KG holds Casino Royale ->
    country -> United Kingdom; "Was she born in the USA?" where it holds her nationality), or the false object is a
    coarser place that holds one of the subject's objects of the relation ("Is William Shakespeare buried in the United
    Kingdom?" where the KG holds Holy Trinity Church -> located in city -> Stratford-upon-Avon -> country -> United
    Kingdom). Order is kept; an edit without a false object is returned as it is.

    The tests run in DuckDB as joins of the edits' (subject, false object) pairs against the triples, both ways,
    by id and by name (``sql/fpq/premise_*``), so only the triples that reject an edit come back: the cost follows
    the edits, not the degree of their subjects (a hub's million edges are never read into Python).

        >>> [e.reason for e in check_premises(con, edits) if e.false_object is None]
    """
    import pyarrow as pa

    pairs = sorted({(e.subject, e.false_object) for e in edits if e.false_object is not None})
    if not pairs:
        return list(edits)
    false_ids = sorted({o for _, o in pairs})
    labels = dict(con.execute(load_sql("fpq/entity_labels"), {"ids": false_ids}).fetchall())
    # the false object's name as a neighbour's is compared with it (the SQL's lower(trim(label)) on the other side)
    names = {o: str(labels.get(o, "")).strip().lower() for o in false_ids}
    table = pa.table({"subject": pa.array([s for s, _ in pairs], pa.int64()),
                      "false_object": pa.array([o for _, o in pairs], pa.int64()),
                      "name": pa.array([names[o] for _, o in pairs], pa.string())})
    linked: dict[tuple[int, int], set[int]] = {}  # (subject, false object) -> relations linking them, either way
    named: dict[tuple[int, int], set[int]] = {}  # (subject, false object) -> relations to an entity of its name
    for subject, false_object, relation in _query_registered(con, {"_fpq_premises": table},
                                                             ["fpq/premise_ids_out", "fpq/premise_ids_in"]):
        linked.setdefault((subject, false_object), set()).add(relation)
    # the entities of each pair's name, then their triples with the subject, either way
    same_name = _query_registered(con, {"_fpq_premises": table}, ["fpq/premise_named"])
    if same_name:
        columns = list(zip(*same_name))
        named_table = pa.table({name: pa.array(col, pa.int64())
                                for name, col in zip(("subject", "false_object", "neighbour"), columns)})
        for subject, false_object, relation in _query_registered(con, {"_fpq_named": named_table},
                                                                 ["fpq/premise_names_out", "fpq/premise_names_in"]):
            named.setdefault((subject, false_object), set()).add(relation)
    held = _holders(con, edits)
    out = []
    for e in edits:
        if e.false_object is None:
            out.append(e)
            continue
        by_id = linked.get((e.subject, e.false_object), set())
        by_name = named.get((e.subject, e.false_object), set())
        reason = None
        if e.relation in by_name:
            reason = "the false object is another object of the same relation for the subject (same name)"
        elif by_id:  # another relation, or this one pointing back at the subject (a symmetric relation)
            reason = "the subject reaches the false object through another relation (the premise is not false)"
        elif by_name - {e.relation}:
            reason = ("the subject reaches an entity of the false object's name through another relation "
                      "(the premise is not false)")
        elif e.false_object in held(e.subject, e.relation):
            reason = ("the false object holds the true object: a coarser place the KG's containment relations put it "
                      "in (the premise is not false)")
        out.append(e if reason is None else replace(e, false_object=None, hop=None, path=None, reason=reason))
    return out


def _query_registered(con: duckdb.DuckDBPyConnection, tables: Mapping[str, Any],
                      queries: Sequence[str | tuple[str, Mapping[str, Any]]]) -> list[tuple]:
    """The rows of the SQL files ``queries`` (a name, or a name and its parameters), run one after the other with
    ``tables`` (Arrow tables) registered on ``con`` under their names, which are unregistered after."""
    for name, table in tables.items():
        con.register(name, table)
    rows: list[tuple] = []
    try:
        for query in queries:
            name, params = (query, None) if isinstance(query, str) else query
            rows += con.execute(load_sql(name), params).fetchall()
        return rows
    finally:
        for name in tables:
            con.unregister(name)


def _holders(con: duckdb.DuckDBPyConnection, edits: Sequence[Edit]) -> Callable[[int, int], frozenset[int]]:
    """``held(subject, relation)``: every entity that the KG's containment relations (``located in``, ``country``,
    ``part of`` read from the inside, ``contains`` from the outside; :func:`kgprobe.scoring.relations.containment`)
    place one of the subject's objects of that relation in (its neighbours through the relation, either way, and
    the true objects of its edits), within :data:`~kgprobe.scoring.relations.CONTAINMENT_HOPS` triples of the
    objects of all the edits' (subject, relation) pairs: one walk for all of them, each pair's set computed when
    first asked for."""
    import pyarrow as pa

    from kgprobe.scoring.relations import CONTAINMENT_HOPS, containment_relations

    ways = containment_relations(con)
    if not ways:
        return lambda subject, relation: frozenset()
    starts: dict[tuple[int, int], set[int]] = {}
    for e in edits:
        if e.false_object is not None:
            starts.setdefault((e.subject, e.relation), set()).add(e.true_object)
    keys = sorted(starts)
    table = pa.table({"subject": pa.array([s for s, _ in keys], pa.int64()),
                      "relation": pa.array([r for _, r in keys], pa.int64())})
    for subject, relation, obj in _query_registered(con, {"_fpq_premise_relations": table},
                                                    ["fpq/premise_objects_out", "fpq/premise_objects_in"]):
        starts[(subject, relation)].add(obj)
    steps = [(f"fpq/premise_holders_{way}", {"relations": rels}) for way in ("inward", "outward")
             if (rels := sorted(r for r, w in ways.items() if (w == "inward") == (way == "inward")))]
    up: dict[int, set[int]] = {}  # entity -> the entities that hold it, one step out
    frontier = set().union(*starts.values())
    seen = set(frontier)
    for _ in range(CONTAINMENT_HOPS):
        if not frontier:
            break
        found: set[int] = set()
        frontier_table = pa.table({"entity": pa.array(sorted(frontier), pa.int64())})
        for inner, outer in _query_registered(con, {"_fpq_frontier": frontier_table}, steps):
            up.setdefault(inner, set()).add(outer)
            found.add(outer)
        frontier = found - seen
        seen |= found

    @cache
    def held(subject: int, relation: int) -> frozenset[int]:
        objects = starts.get((subject, relation), set())
        out: set[int] = set()
        todo = list(objects)
        while todo:
            for outer in up.get(todo.pop(), ()):
                if outer not in out and outer not in objects:
                    out.add(outer)
                    todo.append(outer)
        return frozenset(out)

    return held


def reject_unnamed_objects(con: duckdb.DuckDBPyConnection, edits: Sequence[Edit]) -> list[Edit]:
    """``edits`` with every false object that has no readable name (an id-like label, as a KG with partial labels
    has) turned into a rejected edit with that reason: its question would show the id. Order is kept."""
    from kgprobe.kg.readable import is_id_like

    ids = sorted({e.false_object for e in edits if e.false_object is not None})
    labels = dict(con.execute(load_sql("fpq/entity_labels"), {"ids": ids}).fetchall()) if ids else {}
    return [replace(e, false_object=None, hop=None, path=None,
                    reason="the false object has no readable name (only an id-like key)")
            if e.false_object is not None and is_id_like(str(labels.get(e.false_object, ""))) else e
            for e in edits]


# --------------------------------------------------------------------------------------------------------------
# True triples
# --------------------------------------------------------------------------------------------------------------


def infer_types_from_relations(con: duckdb.DuckDBPyConnection) -> int:
    """Fill ``entity_types`` from relation keys, for KGs without types (FB15k-237); return the rows inserted.

    A Freebase-style key ``/domain/type/property`` types its heads with the component just before the property,
    the Freebase type (``/film/film/genre`` -> ``film``; the second component for ordinary keys, the right one for
    ``/base/<x>/<type>/...`` and ``/user/...`` keys; for a mediated key ``a./b/c/d`` the part before the dot), and
    its tails with the last component (``genre``). Bare components are the ``type_key`` and the label has spaces
    for underscores, so a head type and a tail type with the same name (``film``) are one type. Any other key ``r``
    (YAGO's ``isLocatedIn``) types its heads ``subject of r`` and its tails ``object of r``. Pairs already present
    are not inserted again, so the call is idempotent.

        >>> infer_types_from_relations(con)   # FB15k-237 train: every entity gets a few types
    """
    row = con.execute(load_sql("fpq/infer_types")).fetchone()
    return int(row[0]) if row else 0


def inferred_type_sources(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Per relation (most triples first): the type :func:`infer_types_from_relations` gives its heads (its domain)
    and its tails (its range), and its triple count: which relations type inference used, to log beside it."""
    cur = con.execute(load_sql("fpq/infer_types_sources"))
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def select_true_triples(
    con: duckdb.DuckDBPyConnection,
    domains: Mapping[str, DomainSpec],
    n_per_domain: int,
    seed: int = 0,
    *,
    named_only: bool = False,
) -> list[TrueTriple]:
    """Return a seeded sample of up to ``n_per_domain`` true triples per domain, domain by domain.

    A triple belongs to the domain of its subject: the first domain (in ``domains`` order) one of whose ``types``
    (type labels or keys) the subject has, so a triple is never in two domains; then that domain's relation
    filters apply. Triples whose object label equals or is a substring of the subject label (case-insensitive; the
    paper's rule i) are left out. The sample ranks triples by a hash of ``(seed, triple)``: deterministic,
    independent of storage order, and adding triples to the KG never reshuffles those already chosen.

        >>> select_true_triples(con, {"film": DomainSpec(types=["film"])}, 100, seed=0)

    With ``named_only``, triples whose subject or object has no readable name (its label is an id-like key such as
    a Wikidata QID: :func:`kgprobe.kg.readable.is_id_like`) are left out before the sample, so a KG with partial
    labels gives questions about the entities it names rather than questions rejected later.

    Raises :class:`ConfigError` when none of a domain's types occurs in ``entity_types`` (a typo, or a KG
    without types: see :func:`infer_types_from_relations`).
    """
    if n_per_domain < 0:
        raise ConfigError(f"n_per_domain must be non-negative, got {n_per_domain}")
    specs = {name: spec if isinstance(spec, DomainSpec) else DomainSpec.from_config(name, spec)
             for name, spec in domains.items()}  # fmt: skip
    all_types = sorted({t for spec in specs.values() for t in spec.types})
    if not all_types or n_per_domain == 0:
        return []
    known = {name for (name,) in con.execute(load_sql("fpq/known_types"), {"types": all_types}).fetchall()}
    for name, spec in specs.items():
        if known.isdisjoint(spec.types):
            raise ConfigError(
                f"domain {name!r}: none of its types {list(spec.types)} is an entity type of this KG (entity_types "
                "type or type_key); fix the names, or for a KG without types call infer_types_from_relations first"
            )
    # the pool as id columns (the KG's triples of typed subjects), each domain ranked in numpy and only what the
    # sample keeps read with its labels: a Python row per candidate triple cost minutes on a 20M-triple KG
    names = list(specs)
    pairs = [(pos, t) for pos, name in enumerate(names) for t in dict.fromkeys(specs[name].types)]
    pool = con.execute(load_sql("fpq/true_triple_pool"), {"domain_pos": [p for p, _ in pairs],
                                                         "domain_type": [t for _, t in pairs]}).fetchnumpy()
    heads, rels, tails, where = (np.asarray(pool[c], dtype=np.int64) for c in ("head", "relation", "tail", "pos"))
    rel_keys = dict(con.execute("SELECT id, key FROM relations").fetchall())
    if named_only:
        from kgprobe.kg.readable import is_id_like
    out: list[TrueTriple] = []
    for pos, name in enumerate(names):
        spec = specs[name]
        ok = [rid for rid, key in rel_keys.items()
              if (spec.allow_relations is None or key in spec.allow_relations) and key not in spec.deny_relations]
        keep = (where == pos) & np.isin(rels, np.asarray(ok, dtype=np.int64))
        ids = np.stack([heads[keep], rels[keep], tails[keep]], axis=1)
        if not len(ids):
            continue
        rank = np.lexsort((ids[:, 2], ids[:, 1], ids[:, 0], _hash64(seed, ids[:, 0], ids[:, 1], ids[:, 2])))
        chosen: list[TrueTriple] = []
        start, step = 0, n_per_domain
        while len(chosen) < n_per_domain and start < len(rank):
            part = ids[rank[start : start + step]]
            start += step
            step = min(step * 4, 1 << 20)  # the unnamed ones skipped: read further, in growing steps
            wanted = {"heads": part[:, 0].tolist(), "relations": part[:, 1].tolist(), "tails": part[:, 2].tolist()}
            for h, r, t, sl, rk, rl, ol in con.execute(load_sql("fpq/true_triple_labels"), wanted).fetchall():
                if named_only and (is_id_like(sl) or is_id_like(ol)):
                    continue
                chosen.append(TrueTriple(name, int(h), int(r), int(t), sl, rk, rl, ol))
                if len(chosen) == n_per_domain:
                    break
        out += chosen
    return out


def entity_labels(con: duckdb.DuckDBPyConnection, ids: Iterable[int]) -> dict[int, str]:
    """Labels of the given entity ids (ids not in ``entities`` are absent from the result)."""
    wanted = sorted({int(i) for i in ids if i is not None})
    if not wanted:
        return {}
    return {int(i): str(label) for i, label in con.execute(load_sql("fpq/entity_labels"), {"ids": wanted}).fetchall()}


def group_edits(true_triples: Iterable[TrueTriple], edits: Iterable[Edit]) -> dict[TrueTriple, list[Edit]]:
    """Map each true triple to its edits (in the order given), the input :func:`write_questions` takes."""
    by_triple: dict[Triple, list[Edit]] = {}
    for e in edits:
        by_triple.setdefault(e.true_triple, []).append(e)
    return {tt: by_triple.get(tt.triple, []) for tt in true_triples}


# --------------------------------------------------------------------------------------------------------------
# Templates and questions
# --------------------------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def load_templates(path: str | Path) -> dict[str, dict[str, str]]:
    """Read question templates ``{relation_key: {yn: "...", wh: "..."}}`` from a YAML file.

    A template holds ``{subject}`` at least once and ``{object}`` exactly once (FPQs are made by replacing the
    object in the TPQ) and no other placeholder; anything else raises :class:`ConfigError` naming the file and
    relation. Placeholders are replaced literally, so other braces in the text are kept as they are.
    """
    from kgprobe.yaml_io import load_yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read question templates {path}: {exc}") from exc
    data = load_yaml(text, what=f"question templates {path}")
    if not isinstance(data, Mapping) or not data:
        raise ConfigError(f"question templates {path} must be a non-empty mapping {{relation_key: {{yn: ..., wh: ...}}}}")
    out: dict[str, dict[str, str]] = {}
    for relation, formats in data.items():
        where = f"question templates {path}, relation {relation!r}"
        if not isinstance(formats, Mapping) or not formats:
            raise ConfigError(f"{where}: expected a mapping of formats ({', '.join(FORMATS)}) to templates")
        out[str(relation)] = {}
        for fmt, text in formats.items():
            if fmt not in FORMATS:
                raise ConfigError(f"{where}: unknown format {fmt!r}; use {' or '.join(FORMATS)}")
            if not isinstance(text, str):
                raise ConfigError(f"{where}, format {fmt}: the template must be a string, got {text!r}")
            names = _PLACEHOLDER.findall(text)
            if "subject" not in names:
                raise ConfigError(f"{where}, format {fmt}: the template lacks {{subject}}: {text!r}")
            if names.count("object") != 1:
                raise ConfigError(
                    f"{where}, format {fmt}: the template must hold {{object}} exactly once, "
                    f"found {names.count('object')}: {text!r}"
                )
            other = sorted(set(names) - {"subject", "object"})
            if other:
                raise ConfigError(f"{where}, format {fmt}: unknown placeholder(s) {other}; use {{subject}} and {{object}}")
            out[str(relation)][fmt] = text
    return out


def _occurrences(text: str, needle: str) -> int:
    count, at = 0, text.find(needle)
    while at != -1:
        count += 1
        at = text.find(needle, at + 1)
    return count


def replace_object(question: str, true_object: str, false_object: str) -> str:
    """Return ``question`` with its one occurrence of ``true_object`` replaced by ``false_object`` (the paper's
    way of writing an FPQ from its TPQ). Raises :class:`ObjectNotUnique` when ``true_object`` occurs zero or
    several times (overlapping occurrences count), since a guess there could edit the wrong words.

        >>> replace_object('Is "Heat" directed by Michael Mann?', "Michael Mann", "Ridley Scott")
        'Is "Heat" directed by Ridley Scott?'
    """
    if not true_object:
        raise ObjectNotUnique("the true object's label is empty")
    count = _occurrences(question, true_object)
    if count != 1:
        raise ObjectNotUnique(f"the true object {true_object!r} occurs {count} times in the question, not once")
    return question.replace(true_object, false_object, 1)


def _fill(template: str, subject: str, obj: str) -> str:
    """Substitute both placeholders in one pass, so a label that contains ``{object}`` is left alone."""
    values = {"subject": subject, "object": obj}
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _reject(tt: TrueTriple, fmt: str, template_id: str, reason: str, e: Edit | None = None) -> QuestionReject:
    return QuestionReject(
        tt.domain, fmt, tt.subject, tt.relation, tt.object, None if e is None else e.false_object,
        None if e is None else e.method, template_id, reason,
    )  # fmt: skip


def write_questions(
    edits_by_triple: Mapping[TrueTriple, Sequence[Edit]],
    templates: Mapping[str, Mapping[str, str]],
    labels: Mapping[int, str],
    *,
    formats: Sequence[str] = FORMATS,
    snapshot_id: str = "",
    seed: int = 0,
) -> tuple[list[FPQItem], list[QuestionReject]]:
    """Write the TPQ of each true triple and one FPQ per successful edit, per format; return ``(items, rejects)``.

    The TPQ fills the relation's template with the subject and object labels; each FPQ is the TPQ with the true
    object's label replaced by the false object's (``labels`` maps entity ids to labels, e.g. from
    :func:`entity_labels`). Nothing is guessed: a relation without a template, an edit without a candidate, a
    TPQ in which the object's label is not exactly once, or a false object with the true object's label each
    yield a :class:`QuestionReject` with the reason. ``snapshot_id`` and ``seed`` are recorded as lineage.

        >>> items, rejects = write_questions(group_edits(tts, edits), load_templates("fpq.yaml"), labels)
    """
    formats = tuple(formats)
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ConfigError(f"unknown question format(s) {bad}; use {' or '.join(FORMATS)}")
    items: list[FPQItem] = []
    rejects: list[QuestionReject] = []
    for tt, edits in edits_by_triple.items():
        for e in edits:
            if e.true_triple != tt.triple:
                raise KGProbeError(f"edit {e} does not belong to true triple {tt.triple}; build the input with group_edits")
        template = templates.get(tt.relation_key, {})
        for fmt in formats:
            template_id = f"template:{tt.relation_key}:{fmt}"
            text = template.get(fmt)
            if text is None:
                rejects.append(_reject(tt, fmt, template_id, f"no {fmt} template for relation {tt.relation_key!r}"))
                continue
            tpq = _fill(text, tt.subject_label, tt.object_label)
            common = dict(
                domain=tt.domain, format=fmt, subject=tt.subject, relation=tt.relation, true_object=tt.object,
                subject_label=tt.subject_label, relation_key=tt.relation_key, relation_label=tt.relation_label,
                true_object_label=tt.object_label, snapshot_id=snapshot_id, seed=seed, template_id=template_id,
            )  # fmt: skip
            items.append(FPQItem(
                id=content_id(snapshot_id, template_id, "tpq", None, tt.triple, None, tpq), premise="tpq", method=None,
                hop=None, question=tpq, answer=ANSWERS[(fmt, "tpq")], false_object=None, false_object_label=None,
                path=None, **common,
            ))  # fmt: skip
            for e in edits:
                if e.false_object is None:
                    rejects.append(_reject(tt, fmt, template_id, f"{e.method}: {e.reason}", e))
                    continue
                if e.false_object not in labels:
                    raise KGProbeError(
                        f"no label for entity {e.false_object} (false object of {e.method} for {tt.triple}); "
                        "pass labels that cover every false object, e.g. entity_labels(con, ids)"
                    )
                false_label = labels[e.false_object]
                if false_label.casefold() == tt.object_label.casefold():
                    reason = f"the false object's label {false_label!r} equals the true object's label"
                    rejects.append(_reject(tt, fmt, template_id, reason, e))
                    continue
                try:
                    fpq = replace_object(tpq, tt.object_label, false_label)
                except ObjectNotUnique as exc:
                    rejects.append(_reject(tt, fmt, template_id, exc.reason, e))
                    continue
                items.append(FPQItem(
                    id=content_id(snapshot_id, template_id, "fpq", e.method, tt.triple, e.false_object, fpq),
                    premise="fpq", method=e.method, hop=e.hop, question=fpq, answer=ANSWERS[(fmt, "fpq")],
                    false_object=e.false_object, false_object_label=false_label, path=e.path, **common,
                ))  # fmt: skip
    return items, rejects
