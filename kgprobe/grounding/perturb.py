"""OKGQA-P: perturb a subgraph's triples (RS, RR, ER, ED) and measure how far the result moved (ATS, SC2D, SD2).

OKGQA-P (Sui et al.) asks how LLM answers degrade when the KG they are grounded in is wrong. Four perturbations
of a retrieved subgraph's triples T, each at a level p in (0, 1], the share of edges perturbed:

* ``RS`` relation swapping: floor(p |T| / 2) times, two edges exchange their relations;
* ``RR`` relation replacement: floor(p |T|) edges each get the relation the triple scorer s_G finds least
  plausible for their (head, tail), the "hardest negative";
* ``ER`` edge rewiring: floor(p |T|) edges (h, r, t) become (h, r, t') with t' a node of the subgraph outside
  the 1-hop neighbourhood of h;
* ``ED`` edge deletion: floor(p |T|) edges are removed.

    >>> perturb(triples, "ER", 0.3, seed=7)                      # a new list of (head, relation, tail)
    >>> result = perturb_detailed(triples, "RR", 0.5, scorer=s)   # plus the per-edge change log and shares
    >>> ats(s, result.triples), sc2d(triples, result.triples), sd2(triples, result.triples)

and three measures of the perturbed graph G' against G, after Raman et al. 2020 as used in the OKGQA appendix:
ATS, the mean of s_G over the triples of G'; SC2D and SD2, similarities of the per-relation local clustering
coefficient and degree distributions, 1 - d / (d + 1) with d the L2 distance of the relation-averaged vectors.
:func:`similarity_batch` computes all three for many (G, G') pairs at once with sparse matrix products.

Everything is a function of (T, method, level, seed, scorer) only: a numpy ``Generator`` seeded with ``seed``
draws every random choice, and ties are broken by position or id, never by hash order. Perturbed triples keep
the order of T (a deleted edge is dropped; a changed edge stays at its index), so ``changes[i].index`` is
lineage back to the source triple. A change never creates a duplicate: a swap, replacement or rewiring that
would recreate a triple already in T (or one created by an earlier change) is not made and another one is
drawn instead, so a T of distinct triples stays distinct. When the level asks for more than the graph allows (ER with no node outside a head's
neighbourhood, RS on a graph with one relation, RR with no unused relation), as many edges as possible are
perturbed and the result says how many fell short (``shortfall``) and which drawn edges had no valid change
(``skipped``); ``actual_share`` is always the share of edges really changed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, Protocol, TypeAlias, overload

import numpy as np
import scipy.sparse as sp

from kgprobe.arrays import DENSE_SLACK, in_sorted, sorted_unique
from kgprobe.errors import KGProbeError

__all__ = [
    "LEVELS",
    "METHODS",
    "PERTURBATIONS",
    "Change",
    "ChangeLog",
    "PerturbError",
    "PerturbResult",
    "Scorer",
    "Triple",
    "ats",
    "parse_perturbation",
    "perturb",
    "perturb_detailed",
    "perturbation_keys",
    "sc2d",
    "sd2",
    "similarity_batch",
]

#: (head, relation, tail): entity and relation ids of the warehouse.
Triple: TypeAlias = tuple[int, int, int]

#: The perturbation methods, in the paper's order.
METHODS: tuple[str, ...] = ("RS", "RR", "ER", "ED")
#: The default perturbation levels 0.1 .. 1.0.
LEVELS: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(1, 11))

Denominator = Literal["union", "own"]
_KIND = {"RS": "relation", "RR": "relation", "ER": "tail", "ED": "deleted"}
# Vectorised rejection-sampling rounds before ER falls back to enumerating a head's candidate tails, and
# re-pairing rounds before RS gives up on the pairs that keep recreating existing triples.
_ER_ROUNDS = 16
_RS_ROUNDS = 16


class PerturbError(KGProbeError):
    """A perturbation input is unusable: an unknown method or key, a level outside [0, 1], RR without a scorer."""


class Scorer(Protocol):
    """What RR and ATS need of a triple scorer (:class:`kgprobe.grounding.scorer.TripleScorer` is one)."""

    @property
    def num_relations(self) -> int: ...

    def score(self, heads: Any, relations: Any, tails: Any) -> np.ndarray: ...

    def score_all_relations(self, heads: Any, tails: Any) -> np.ndarray: ...

    # Optional: ``logits_all_relations(heads, tails)``, any strictly increasing transform of
    # score_all_relations; RR prefers it when present (same argmin, no sigmoid over n x relations values).


# --------------------------------------------------------------------------------------------------------------
# Perturbation keys
# --------------------------------------------------------------------------------------------------------------


def perturbation_keys(methods: Iterable[str] = METHODS, levels: Iterable[float] = LEVELS) -> list[str]:
    """Return ``["none", "RS-0.1", ..., "ED-1.0"]``: the values of the ``perturbation`` partition dimension.

    ``none`` comes first, then every method at every level (methods outer). Levels print with at least one
    decimal (``1.0``, ``0.25``) and :func:`parse_perturbation` reads every key back.
    """
    keys = ["none"]
    for method in methods:
        method = _check_method(method)
        if method == "none":
            continue
        for level in levels:
            keys.append(f"{method}-{_format_level(_check_level(level, nonzero=True))}")
    return keys


def parse_perturbation(key: str) -> tuple[str, float]:
    """Return (method, level) of a perturbation key: ``"RS-0.1"`` -> ``("RS", 0.1)``, ``"none"`` -> ``("none", 0.0)``.

    Raises :class:`PerturbError` for anything else (an unknown method, a level outside (0, 1]).
    """
    if not isinstance(key, str):
        raise PerturbError(f"a perturbation key is a string like 'RS-0.1' or 'none', got {key!r}")
    if key.strip().lower() == "none":
        return "none", 0.0
    method, sep, level_text = key.strip().partition("-")
    try:
        level = float(level_text) if sep else math.nan
    except ValueError:
        level = math.nan
    if not sep or math.isnan(level):
        raise PerturbError(f"bad perturbation key {key!r}: expected 'none' or METHOD-LEVEL such as 'ER-0.3' "
                           f"with METHOD in {METHODS}")
    method = _check_method(method)
    if method == "none":
        raise PerturbError(f"bad perturbation key {key!r}: 'none' takes no level")
    return method, _check_level(level, nonzero=True)


# --------------------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One perturbed edge: the index of its source triple in T, the triple before and after, what changed.

    ``new`` is None for a deleted edge; ``changed`` is ``relation`` (RS, RR), ``tail`` (ER) or ``deleted`` (ED).
    """

    index: int
    original: Triple
    new: Triple | None
    changed: str


@dataclass(frozen=True, eq=False)
class ChangeLog(Sequence[Change]):
    """The per-edge records of a perturbation, held column-wise (a sequence of :class:`Change` to Python).

    Columns: ``source`` (source triple positions in T, ascending), ``original`` and ``new`` ((k, 3) int64; ``new`` rows
    are -1 for deletions). A level-1.0 perturbation of a 20,000-edge subgraph logs 20,000 changes, so the
    records are built only when read; :meth:`to_columns` gives the arrays for a Parquet writer.
    """

    changed: str
    source: np.ndarray
    original: np.ndarray
    new: np.ndarray

    def __len__(self) -> int:
        return len(self.source)

    @overload
    def __getitem__(self, i: int) -> Change: ...

    @overload
    def __getitem__(self, i: slice) -> list[Change]: ...

    def __getitem__(self, i: int | slice) -> Change | list[Change]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        j = range(len(self))[i]
        new = None if self.changed == "deleted" else _triple(self.new[j])
        return Change(int(self.source[j]), _triple(self.original[j]), new, self.changed)

    def __iter__(self) -> Iterator[Change]:
        for j in range(len(self)):
            yield self[j]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChangeLog):
            return NotImplemented
        return (self.changed == other.changed and np.array_equal(self.source, other.source)
                and np.array_equal(self.original, other.original) and np.array_equal(self.new, other.new))

    def __hash__(self) -> int:
        return hash((self.changed, self.source.tobytes(), self.new.tobytes()))

    def __repr__(self) -> str:
        return f"ChangeLog({self.changed!r}, {len(self)} edges)"

    def to_columns(self) -> dict[str, np.ndarray]:
        """Columns ``source, head, relation, tail, new_head, new_relation, new_tail`` (new_* = -1 for deletions)."""
        return {
            "source": self.source,
            "head": self.original[:, 0],
            "relation": self.original[:, 1],
            "tail": self.original[:, 2],
            "new_head": self.new[:, 0],
            "new_relation": self.new[:, 1],
            "new_tail": self.new[:, 2],
        }


@dataclass(frozen=True, eq=False)
class PerturbResult:
    """A perturbed copy of T and the record of what was done.

    ``array`` is the perturbed triples as an (m, 3) int64 array and ``triples`` the same as a list of tuples,
    in the order of T. ``target`` is the number of edges the level asks for (floor(p |T|), for RS twice the
    floor(p |T| / 2) swaps); ``changes`` logs every edge really changed, ``actual_share`` is len(changes) / |T|
    (0.0 for an empty T) and ``shortfall`` = target - len(changes). ``skipped`` lists the source indices of
    edges that were drawn but had no valid change (ER: no node outside the head's 1-hop neighbourhood; RR: no
    unused relation left); other edges were drawn in their place.
    """

    method: str
    requested_level: float
    target: int
    actual_share: float
    array: np.ndarray
    changes: ChangeLog
    skipped: tuple[int, ...] = ()

    @cached_property
    def triples(self) -> list[Triple]:
        """The perturbed triples as (head, relation, tail) tuples of Python ints."""
        return list(map(tuple, self.array.tolist()))

    @property
    def shortfall(self) -> int:
        """How many fewer edges were perturbed than the level asks for (0 unless the graph did not allow more)."""
        return self.target - len(self.changes)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PerturbResult):
            return NotImplemented
        return (self.method == other.method and self.requested_level == other.requested_level
                and self.target == other.target and self.actual_share == other.actual_share
                and np.array_equal(self.array, other.array) and self.changes == other.changes
                and self.skipped == other.skipped)

    def __hash__(self) -> int:
        return hash((self.method, self.requested_level, self.array.tobytes()))

    def __repr__(self) -> str:
        return (f"PerturbResult({self.method!r}, level={self.requested_level}, changed={len(self.changes)}/"
                f"{self.target} requested, share={self.actual_share:.4f}, triples={len(self.array)})")


# --------------------------------------------------------------------------------------------------------------
# Perturbations
# --------------------------------------------------------------------------------------------------------------


def perturb(
    triples: Sequence[Triple] | np.ndarray,
    method: str,
    level: float,
    seed: int = 0,
    scorer: Scorer | None = None,
    *,
    nodes: Iterable[int] | None = None,
) -> list[Triple]:
    """Return the triples of T perturbed by ``method`` (RS, RR, ER, ED, or none) at ``level``.

    Call it to build one perturbed KG of an OKGQA-P partition; :func:`perturb_detailed` returns the same
    triples with the change log. ``scorer`` is required by RR; ``nodes`` adds nodes of the subgraph that are in
    no triple (ER may rewire to them).

        >>> perturb([(0, 5, 1), (1, 6, 2), (2, 5, 3), (3, 7, 0)], "ED", 0.5, seed=1)
        [(2, 5, 3), (3, 7, 0)]
    """
    return perturb_detailed(triples, method, level, seed, scorer, nodes=nodes).triples


def perturb_detailed(
    triples: Sequence[Triple] | np.ndarray,
    method: str,
    level: float,
    seed: int = 0,
    scorer: Scorer | None = None,
    *,
    nodes: Iterable[int] | None = None,
) -> PerturbResult:
    """Return the :class:`PerturbResult` of ``perturb(triples, method, level, seed, scorer)``.

    Deterministic: the result depends only on the arguments. ED, ER and RR draw their edges as a prefix of
    one seeded permutation of T, so at a fixed seed a higher level perturbs a superset of the edges of a lower
    one (ER's new tails are drawn afresh per level; an edge with no valid change is replaced by the next one).
    """
    method = _check_method(method)
    level = _check_level(level, nonzero=False)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise PerturbError(f"seed must be an integer, got {seed!r}")
    arr = _as_array(triples)
    n = len(arr)
    if method == "RR" and scorer is None and level > 0:
        raise PerturbError("relation replacement (RR) needs the triple scorer s_G: pass scorer=TripleScorer "
                           "(train one with kgprobe.grounding.scorer.train_scorer or load the triple_scorer asset)")
    if method == "none" or level == 0 or n == 0:
        empty = ChangeLog(_KIND.get(method, "relation"), np.zeros(0, np.int64), np.zeros((0, 3), np.int64),
                          np.zeros((0, 3), np.int64))
        target = 0 if method == "none" else _count(level, n, method)
        return PerturbResult(method, level, target, 0.0, _readonly(arr.copy()), empty, ())
    rng = np.random.default_rng(int(seed))
    target = _count(level, n, method)
    if method == "ED":
        new_arr, index, new, skipped = _edge_deletion(arr, target, rng)
    elif method == "RS":
        new_arr, index, new, skipped = _relation_swapping(arr, target // 2, rng)
    elif method == "RR":
        new_arr, index, new, skipped = _relation_replacement(arr, target, rng, scorer)
    else:
        extra = None if nodes is None else np.fromiter((int(x) for x in nodes), dtype=np.int64)
        new_arr, index, new, skipped = _edge_rewiring(arr, target, rng, extra)
    changes = ChangeLog(_KIND[method], _readonly(index), _readonly(arr[index]), _readonly(new))
    return PerturbResult(method, level, target, len(index) / n, _readonly(new_arr), changes, skipped)


def _edge_deletion(
    arr: np.ndarray, m: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    order = rng.permutation(len(arr))
    index = np.sort(order[:m])
    keep = np.ones(len(arr), dtype=bool)
    keep[index] = False
    return arr[keep], index, np.full((len(index), 3), -1, dtype=np.int64), ()


def _relation_swapping(
    arr: np.ndarray, pairs: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """Swap the relations of ``pairs`` disjoint pairs of edges with different relations.

    Edges are drawn in a seeded permutation order. The drawn 2k edges are laid out grouped by relation (groups in
    random order) and position i is paired with position i + k: a group never spans k positions once no relation
    holds more than k of the 2k edges (the draw is adjusted to ensure that), so no pair shares a relation and
    every swap changes both edges. A pair whose swap would recreate a triple of T (a parallel edge (h, r', t)
    exists) or of another swap is undone; later rounds redraw from the unused edges, putting a few random
    accepted pairs back into the pool so that the last edges are not left with only each other to pair with.
    Edges whose (h, t) already carries every relation of T can never change and are left out from the start.
    """
    n = len(arr)
    rel = arr[:, 1]
    enc = _Encoder(arr[:, [0, 2]].ravel(), rel)
    existing = np.sort(enc.keys(arr[:, 0], rel, arr[:, 2]))
    _, pair_of = _factorize(enc.pair_keys(arr[:, 0], arr[:, 2]))
    stuck = np.bincount(pair_of)[pair_of] >= len(enc.relations)
    free_rel = rel[~stuck]
    if len(free_rel):
        most = int(np.bincount(_factorize(free_rel)[1]).max())
        pairs = min(pairs, len(free_rel) // 2, len(free_rel) - most)
    else:
        pairs = 0
    priority = np.empty(n, dtype=np.int64)
    priority[rng.permutation(n)] = np.arange(n)
    penalty = np.zeros(n, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    a_acc, b_acc, ka_acc, kb_acc = empty, empty, empty, empty
    idle = 0
    for round_ in range(_RS_ROUNDS):
        if len(a_acc) >= pairs or idle >= 3:
            break
        before = (a_acc, b_acc, ka_acc, kb_acc)
        if round_ > 0 and len(a_acc):
            keep = np.ones(len(a_acc), dtype=bool)
            keep[rng.choice(len(a_acc), size=min(len(a_acc), max(4, pairs - len(a_acc))), replace=False)] = False
            a_acc, b_acc, ka_acc, kb_acc = a_acc[keep], b_acc[keep], ka_acc[keep], kb_acc[keep]
            priority = rng.permutation(n)
        used = stuck.copy()
        used[a_acc] = True
        used[b_acc] = True
        pool = np.flatnonzero(~used)
        pool = pool[np.lexsort((priority[pool], penalty[pool]))]
        chosen, k = _draw_pairable(pool, rel, pairs - len(a_acc))
        if k:
            group = _factorize(rel[chosen])[1]
            group_rank = rng.permutation(int(group.max()) + 1)
            layout = chosen[np.lexsort((np.arange(len(chosen)), group_rank[group]))]
            a, b = layout[:k], layout[k:]
            ka = enc.keys(arr[a, 0], rel[b], arr[a, 2])
            kb = enc.keys(arr[b, 0], rel[a], arr[b, 2])
            keys = np.concatenate([ka, kb])
            accepted = np.sort(np.concatenate([ka_acc, kb_acc]))
            bad = in_sorted(existing, keys) | in_sorted(accepted, keys) | ~_first_occurrence(keys)
            ok = ~(bad[:k] | bad[k:])
            penalty[a[~ok]] += 1
            penalty[b[~ok]] += 1
            a_acc, b_acc = np.concatenate([a_acc, a[ok]]), np.concatenate([b_acc, b[ok]])
            ka_acc, kb_acc = np.concatenate([ka_acc, ka[ok]]), np.concatenate([kb_acc, kb[ok]])
        if len(a_acc) <= len(before[0]):
            idle += 1
        else:
            idle = 0
        if len(a_acc) < len(before[0]):
            a_acc, b_acc, ka_acc, kb_acc = before
    out = arr.copy()
    out[a_acc, 1], out[b_acc, 1] = arr[b_acc, 1], arr[a_acc, 1]
    index = np.sort(np.concatenate([a_acc, b_acc]))
    return out, index, out[index], ()


def _draw_pairable(pool: np.ndarray, rel: np.ndarray, need: int) -> tuple[np.ndarray, int]:
    """The first 2k edges of ``pool`` (k <= need as large as the relations allow) with no relation held by more
    than k of them: surplus edges of the dominant relation are exchanged for the next edges of other relations."""
    if len(pool) < 2 or need <= 0:
        return pool[:0], 0
    _, inverse = _factorize(rel[pool])
    counts = np.bincount(inverse)
    k = min(need, len(pool) // 2, len(pool) - int(counts.max()))
    if k <= 0:
        return pool[:0], 0
    chosen = pool[: 2 * k]
    chosen_groups = inverse[: 2 * k]
    sub_counts = np.bincount(chosen_groups, minlength=len(counts))
    top = int(sub_counts.argmax())
    surplus = int(sub_counts[top]) - k
    if surplus > 0:
        drop = np.flatnonzero(chosen_groups == top)[-surplus:]
        later = np.flatnonzero(inverse[2 * k :] != top)[:surplus] + 2 * k
        keep = np.ones(2 * k, dtype=bool)
        keep[drop] = False
        chosen = np.concatenate([chosen[keep], pool[later]])
    return chosen, k


def _relation_replacement(
    arr: np.ndarray, m: int, rng: np.random.Generator, scorer: Scorer
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """Give ``m`` edges the least plausible other relation: r' = argmin_{r' != r} s_G(h, r', t).

    Candidates are the relations the scorer knows (``scorer.num_relations``), minus the edge's own relation and
    minus any r' for which (h, r', t) is already a triple of T or of an earlier replacement (a replacement must
    be a new, false triple). Ties go to the lower relation id. Edges are drawn in a seeded permutation order;
    an edge with no candidate left is skipped and the next one drawn.
    """
    num_rel = int(scorer.num_relations)
    if num_rel < 1:
        raise PerturbError("the scorer knows no relations; RR needs one with num_relations >= 1")
    n = len(arr)
    enc = _Encoder(arr[:, [0, 2]].ravel(), np.concatenate([arr[:, 1], np.arange(num_rel)]))
    pair_key = enc.pair_keys(arr[:, 0], arr[:, 2])
    by_pair = np.argsort(pair_key, kind="stable")
    sorted_pairs = pair_key[by_pair]
    order = rng.permutation(n)
    taken: list[np.ndarray] = []
    taken_rel: list[np.ndarray] = []
    skipped: list[int] = []
    accepted_keys = np.zeros(0, dtype=np.int64)  # sorted
    pos = 0
    need = m
    while need > 0 and pos < n:
        batch = order[pos : pos + need]
        pos += len(batch)
        h, r, t = arr[batch, 0], arr[batch, 1], arr[batch, 2]
        # s_G is monotone in the logit, so its argmin is the logits' argmin; logits skip the sigmoid.
        all_relations = getattr(scorer, "logits_all_relations", None) or scorer.score_all_relations
        probs = np.array(all_relations(h, t))  # a copy: the masks below write into it
        if not np.issubdtype(probs.dtype, np.floating):
            probs = probs.astype(np.float64)
        if probs.shape != (len(batch), num_rel):
            raise PerturbError(f"the scorer's all-relation scores have shape {probs.shape}, expected "
                               f"{(len(batch), num_rel)}")
        rows = np.arange(len(batch))
        inside = r < num_rel
        probs[rows[inside], r[inside]] = np.inf
        # Relations that already link this (h, t) in T.
        lo = np.searchsorted(sorted_pairs, pair_key[batch], side="left")
        hi = np.searchsorted(sorted_pairs, pair_key[batch], side="right")
        hit_rows = np.repeat(rows, hi - lo)
        hit_rel = arr[by_pair[_ranges(lo, hi - lo)], 1]
        known = hit_rel < num_rel
        probs[hit_rows[known], hit_rel[known]] = np.inf
        choice = probs.argmin(axis=1)
        alive = np.isfinite(probs[rows, choice])
        # Two drawn edges on the same (h, t), or an earlier batch, may want the same r': later ones move on.
        while True:
            keys = enc.keys(h, choice, t)
            clash = alive & (in_sorted(accepted_keys, keys) | ~_first_occurrence(np.where(alive, keys, -1 - rows)))
            if not clash.any():
                break
            probs[rows[clash], choice[clash]] = np.inf
            choice[clash] = probs[clash].argmin(axis=1)
            alive &= np.isfinite(probs[rows, choice])
        skipped.extend(batch[~alive].tolist())
        taken.append(batch[alive])
        taken_rel.append(choice[alive])
        accepted_keys = np.sort(np.concatenate([accepted_keys, enc.keys(h[alive], choice[alive], t[alive])]))
        need -= int(alive.sum())
    index = np.concatenate(taken) if taken else np.zeros(0, np.int64)
    new_rel = np.concatenate(taken_rel) if taken_rel else np.zeros(0, np.int64)
    out = arr.copy()
    out[index, 1] = new_rel
    index = np.sort(index)
    return out, index, out[index], tuple(sorted(skipped))


def _edge_rewiring(
    arr: np.ndarray, m: int, rng: np.random.Generator, extra_nodes: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """Move the tail of ``m`` edges (h, r, t) to a node t' of the subgraph outside N1(h) in G.

    N1(h) is h's 1-hop neighbourhood in the original graph, in both directions, plus h itself, so t' is never
    an old neighbour and (h, r, t') is never a triple of T. t' is uniform over the allowed nodes (vectorised
    rejection sampling, then exact enumeration for the few edges it has not placed); two rewired edges never
    become the same triple. Edges whose head is adjacent to every node are skipped and the next one drawn.
    """
    n = len(arr)
    ends = arr[:, [0, 2]].ravel()
    node_ids = sorted_unique(ends if extra_nodes is None else np.concatenate([ends, extra_nodes]))
    v_count = len(node_ids)
    head = np.searchsorted(node_ids, arr[:, 0])
    tail = np.searchsorted(node_ids, arr[:, 2])
    loops = head == tail
    u = np.concatenate([head[~loops], tail[~loops]])
    w = np.concatenate([tail[~loops], head[~loops]])
    neighbour_keys = sorted_unique(u * v_count + w)
    degree = np.bincount(neighbour_keys // v_count, minlength=v_count)
    free = v_count - 1 - degree  # allowed new tails per head
    enc = _Encoder(node_ids, arr[:, 1])
    order = rng.permutation(n)
    taken: list[np.ndarray] = []
    taken_tail: list[np.ndarray] = []
    skipped: list[int] = []
    accepted_keys = np.zeros(0, dtype=np.int64)
    pos = 0
    need = m
    while need > 0 and pos < n:
        batch = order[pos : pos + need]
        pos += len(batch)
        hopeless = free[head[batch]] <= 0
        skipped.extend(batch[hopeless].tolist())
        batch = batch[~hopeless]
        a = head[batch]
        new_tail = np.full(len(batch), -1, dtype=np.int64)
        pending = np.arange(len(batch))
        for _ in range(_ER_ROUNDS):
            if len(pending) == 0:
                break
            draw = rng.integers(0, v_count, size=len(pending))
            ok = (draw != a[pending]) & ~in_sorted(neighbour_keys, a[pending] * v_count + draw)
            keys = enc.keys(arr[batch[pending], 0], arr[batch[pending], 1], node_ids[draw])
            ok &= ~in_sorted(accepted_keys, keys)
            ok &= _first_occurrence(np.where(ok, keys, -1 - np.arange(len(pending))))
            new_tail[pending[ok]] = draw[ok]
            accepted_keys = np.sort(np.concatenate([accepted_keys, keys[ok]]))
            pending = pending[~ok]
        for j in pending.tolist():
            # Rare: heads adjacent to almost every node. Enumerate what is left for this edge.
            e = batch[j]
            lo = np.searchsorted(neighbour_keys, a[j] * v_count)
            hi = np.searchsorted(neighbour_keys, (a[j] + 1) * v_count)
            allowed = np.ones(v_count, dtype=bool)
            allowed[neighbour_keys[lo:hi] - a[j] * v_count] = False
            allowed[a[j]] = False
            cand = np.flatnonzero(allowed)
            cand = cand[~in_sorted(accepted_keys, enc.keys(np.full(len(cand), arr[e, 0]), np.full(len(cand), arr[e, 1]),
                                                           node_ids[cand]))]
            if len(cand) == 0:
                skipped.append(int(e))
                continue
            pick = cand[rng.integers(0, len(cand))]
            new_tail[j] = pick
            accepted_keys = np.sort(np.append(accepted_keys, enc.keys(arr[e:e + 1, 0], arr[e:e + 1, 1],
                                                                      node_ids[pick:pick + 1])))
        placed = new_tail >= 0
        taken.append(batch[placed])
        taken_tail.append(node_ids[new_tail[placed]])
        need -= int(placed.sum())
    index = np.concatenate(taken) if taken else np.zeros(0, np.int64)
    tails = np.concatenate(taken_tail) if taken_tail else np.zeros(0, np.int64)
    out = arr.copy()
    out[index, 2] = tails
    index = np.sort(index)
    return out, index, out[index], tuple(sorted(skipped))


# --------------------------------------------------------------------------------------------------------------
# Measures: ATS, SC2D, SD2
# --------------------------------------------------------------------------------------------------------------


def ats(scorer: Scorer, triples: Sequence[Triple] | np.ndarray) -> float:
    """Return the aggregated triple score of G': the mean of s_G over its triples (0.0 when it has none).

    Values are in [0, 1]; a KG of true facts scores high, RR (which picks the least plausible relations) low.
    """
    arr = _as_array(triples)
    if len(arr) == 0:
        return 0.0
    return float(np.mean(scorer.score(arr[:, 0], arr[:, 1], arr[:, 2])))


def sc2d(original: Sequence[Triple] | np.ndarray, perturbed: Sequence[Triple] | np.ndarray, *,
         denominator: Denominator = "own") -> float:
    """Return the similarity in clustering-coefficient distribution of G' (``perturbed``) to G (``original``).

    Per relation r, the local clustering coefficient of every entity in r's subgraph (undirected, simple: no
    self loops, parallel edges and both directions count once; 0 below degree 2) is averaged over each graph's
    own relations, |R(G)| for G and |R(G')| for G' (``denominator="own"``, the default); d is the L2 distance of
    G's and G''s averaged vectors over the entities of both, and the similarity 1 - d / (d + 1) is 1.0 for
    identical graphs. "own" is the paper's definition and what the authors' ``comprehensive_metrics.csv`` holds.
    ``denominator="union"`` averages both over |R(G) ∪ R(G')| instead (a relation absent from one graph
    contributes zeros there), which hides a changed relation set: see :func:`sd2`.
    """
    return float(similarity_batch([(original, perturbed)], denominator=denominator)["sc2d"][0])


def sd2(original: Sequence[Triple] | np.ndarray, perturbed: Sequence[Triple] | np.ndarray, *,
        denominator: Denominator = "own") -> float:
    """Return the similarity in degree distribution of G' (``perturbed``) to G (``original``).

    As :func:`sc2d` with the degree of each entity in r's subgraph instead of its clustering coefficient:
    in-degree plus out-degree, counting every triple (a self loop counts twice). The averaged vector is each
    entity's total degree over the graph's own relation count (the default, the paper's): RS, which keeps every
    degree and the relation set, has SD2 = 1.0, and RR, which brings in relations the subgraph did not have, has
    SD2 < 1 (the authors' ``comprehensive_metrics.csv``: 0.32-0.39). With ``denominator="union"`` both graphs
    divide by |R(G) ∪ R(G')|, under which RR's SD2 is always 1.0 however many relations it replaced, so it is not
    the default.
    """
    return float(similarity_batch([(original, perturbed)], denominator=denominator)["sd2"][0])


def similarity_batch(
    pairs: Sequence[tuple[Sequence[Triple] | np.ndarray, Sequence[Triple] | np.ndarray | PerturbResult]],
    *,
    scorer: Scorer | None = None,
    denominator: Denominator = "own",
    measures: Iterable[str] = ("ats", "sc2d", "sd2"),
) -> dict[str, np.ndarray]:
    """Return ATS, SC2D and SD2 of many (original, perturbed) pairs: float64 arrays ``ats``, ``sc2d``, ``sd2``.

    Call it for a whole partition of perturbed subgraphs. Each distinct graph (by object identity: pass the
    same original object for all its perturbations) is profiled once, with linear-time factorisation and two
    sparse products per graph for the clustering coefficients of all its relations. ``perturbed`` may be the
    :class:`PerturbResult` of ``original``: ATS then scores the original's triples once and only the changed
    edges of each result (the same mean as :func:`ats` up to float rounding). ``ats`` is NaN without a scorer;
    ``measures`` selects what to compute (the others are returned as NaN).

        >>> results = [perturb_detailed(g, "ED", 0.3, seed=i) for i, g in enumerate(graphs)]
        >>> similarity_batch(list(zip(graphs, results)), scorer=s)["sd2"].mean()
    """
    if denominator not in ("union", "own"):
        raise PerturbError(f"denominator must be 'union' or 'own', got {denominator!r}")
    wanted = set(measures)
    if not wanted <= {"ats", "sc2d", "sd2"}:
        raise PerturbError(f"unknown measures {sorted(wanted - {'ats', 'sc2d', 'sd2'})}; use ats, sc2d, sd2")
    structural = bool(wanted & {"sc2d", "sd2"})
    arrays: dict[int, np.ndarray] = {}
    profiles: dict[int, _Profile] = {}
    scored: dict[int, tuple[np.ndarray, float]] = {}

    def array_of(graph: Any) -> np.ndarray:
        key = id(graph)
        if key not in arrays:
            arrays[key] = graph.array if isinstance(graph, PerturbResult) else _as_array(graph)
        return arrays[key]

    def profile_of(graph: Any) -> _Profile:
        key = id(graph)
        if key not in profiles:
            profiles[key] = _profile(array_of(graph))
        return profiles[key]

    out = {name: np.full(len(pairs), np.nan) for name in ("ats", "sc2d", "sd2")}
    for i, pair in enumerate(pairs):
        if len(pair) != 2:
            raise PerturbError(f"pair {i} must be (original, perturbed), got {len(pair)} items")
        original, perturbed = pair
        if structural:
            po, pp = profile_of(original), profile_of(perturbed)
            if denominator == "union":
                n_o = n_p = len(np.union1d(po.relations, pp.relations))
            else:
                n_o, n_p = len(po.relations), len(pp.relations)
            nodes, at_o, at_p = _node_union(po.nodes, pp.nodes)
            if "sc2d" in wanted:
                out["sc2d"][i] = _similarity(len(nodes), at_o, po.clustering, n_o, at_p, pp.clustering, n_p)
            if "sd2" in wanted:
                out["sd2"][i] = _similarity(len(nodes), at_o, po.degree, n_o, at_p, pp.degree, n_p)
        if scorer is not None and "ats" in wanted:
            if isinstance(perturbed, PerturbResult):
                out["ats"][i] = _ats_from_changes(scorer, array_of(original), perturbed, scored, id(original), i)
            else:
                out["ats"][i] = ats(scorer, array_of(perturbed))
    return out


def _ats_from_changes(scorer: Scorer, original: np.ndarray, result: PerturbResult,
                      scored: dict[int, tuple[np.ndarray, float]], key: int, i: int) -> float:
    """ATS of a PerturbResult from its original's cached scores: remove the changed edges', add the new ones'."""
    changes = result.changes
    if len(original) - (len(changes) if changes.changed == "deleted" else 0) != len(result.array) or not (
        np.array_equal(original[changes.source], changes.original)
    ):
        raise PerturbError(f"pair {i}: the PerturbResult was not made from this original (its change log does not "
                           "match the original's triples); pass the triples it was computed from")
    if len(result.array) == 0:
        return 0.0
    if key not in scored:
        scores = np.asarray(scorer.score(original[:, 0], original[:, 1], original[:, 2]), dtype=np.float64)
        scored[key] = (scores, float(scores.sum()))
    scores, total = scored[key]
    total -= float(scores[changes.source].sum())
    if changes.changed != "deleted" and len(changes):
        new = changes.new
        total += float(np.sum(scorer.score(new[:, 0], new[:, 1], new[:, 2])))
    return min(1.0, max(0.0, total / len(result.array)))


@dataclass(frozen=True)
class _Profile:
    """Per-entity sums over relations of one graph: clustering coefficient and degree, and its relation set."""

    relations: np.ndarray
    nodes: np.ndarray
    clustering: np.ndarray
    degree: np.ndarray


def _node_union(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sorted union of two sorted node arrays and the positions of each in it (cheap when b is within a)."""
    pos = np.searchsorted(a, b)
    if len(b) == 0 or (pos[-1] < len(a) and np.array_equal(a[np.minimum(pos, len(a) - 1)], b)):
        return a, np.arange(len(a)), pos
    union = np.union1d(a, b)
    return union, np.searchsorted(union, a), np.searchsorted(union, b)


def _similarity(size: int, at_a: np.ndarray, values_a: np.ndarray, n_a: int,
                at_b: np.ndarray, values_b: np.ndarray, n_b: int) -> float:
    diff = np.zeros(size)
    if n_a:
        diff[at_a] += values_a / n_a
    if n_b:
        diff[at_b] -= values_b / n_b
    d = float(np.sqrt(np.dot(diff, diff)))
    return 1.0 - d / (d + 1.0)


def _profile(arr: np.ndarray) -> _Profile:
    """Per-entity degree and clustering coefficient, each summed over the graph's relations."""
    if len(arr) == 0:
        empty = np.zeros(0)
        return _Profile(np.zeros(0, np.int64), np.zeros(0, np.int64), empty, empty)
    nodes, ends = _factorize(arr[:, [0, 2]].ravel())
    v = len(nodes)
    h, t = ends[0::2], ends[1::2]
    # Degree: every triple adds one to its head and one to its tail (a self loop two to its node).
    degree = np.bincount(ends, minlength=v).astype(np.float64)
    relations, r = _factorize(arr[:, 1])
    # Clustering: the simple undirected graph of each relation, its nodes numbered as (relation, node) members.
    loop = h == t
    lo, hi, rel = np.minimum(h, t)[~loop], np.maximum(h, t)[~loop], r[~loop]
    members, member_of = _factorize(np.concatenate([rel * v + lo, rel * v + hi]))
    m = len(members)
    edges = sorted_unique(member_of[: len(lo)] * m + member_of[len(lo):])  # first < second: same relation
    a, b = edges // max(m, 1), edges % max(m, 1)
    k = np.bincount(a, minlength=m) + np.bincount(b, minlength=m)
    triangles = np.zeros(m)
    if len(edges):
        # Orient each edge from the lower (degree, index) end: every triangle then appears exactly once, as
        # x -> y -> z with x -> z, and no node has more than sqrt(2 |E|) out-edges, which keeps the products
        # small even around hubs (a relation's star with thousands of leaves costs nothing).
        forward = (k[a] < k[b]) | ((k[a] == k[b]) & (a < b))
        src, dst = np.where(forward, a, b), np.where(forward, b, a)
        oriented = sp.csr_array((np.ones(len(src), dtype=np.int64), (src, dst)), shape=(m, m))
        low_high = (oriented @ oriented) * oriented   # [x, z]: triangles with x lowest, z highest
        mid = (oriented.T @ oriented) * oriented      # [y, z]: triangles with y in the middle (x -> y, x -> z)
        triangles = (np.asarray(low_high.sum(axis=1)).ravel() + np.asarray(low_high.sum(axis=0)).ravel()
                     + np.asarray(mid.sum(axis=1)).ravel())
    with np.errstate(divide="ignore", invalid="ignore"):
        coeff = np.where(k >= 2, 2.0 * triangles / (k * (k - 1.0)), 0.0)
    clustering = np.bincount(members % v, weights=coeff, minlength=v)
    return _Profile(relations, nodes, clustering, degree)


# --------------------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------------------


class _Encoder:
    """Injective int64 keys of (head, relation, tail) and (head, tail) over given entity and relation ids."""

    def __init__(self, entities: np.ndarray, relations: np.ndarray) -> None:
        self.entities = sorted_unique(entities)
        self.relations = sorted_unique(relations)
        self.ne = max(len(self.entities), 1)
        self.nr = max(len(self.relations), 1)
        if self.ne * self.ne * self.nr >= 2**62:
            raise PerturbError(f"subgraph too large to perturb: {self.ne} entities x {self.nr} relations")
        self._entity_position = _positions(self.entities)
        self._relation_position = _positions(self.relations)

    def keys(self, h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        return ((self._entity_position(h) * self.nr + self._relation_position(r)) * self.ne
                + self._entity_position(t))

    def pair_keys(self, h: np.ndarray, t: np.ndarray) -> np.ndarray:
        return self._entity_position(h) * self.ne + self._entity_position(t)


def _positions(distinct: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """A function mapping members of the sorted array ``distinct`` to their positions in it.

    Dense ids get a lookup table (one gather per call) instead of a binary search per value.
    """
    if len(distinct) == 0:
        return lambda values: np.zeros(len(values), dtype=np.int64)
    low = int(distinct[0])
    span = int(distinct[-1]) - low + 1
    if span > 4 * len(distinct) + DENSE_SLACK:
        return lambda values: np.searchsorted(distinct, values)
    table = np.zeros(span, dtype=np.int64)
    table[distinct - low] = np.arange(len(distinct))
    return lambda values: table[np.asarray(values, dtype=np.int64) - low]


def _first_occurrence(keys: np.ndarray) -> np.ndarray:
    """Mask of the entries that are the first (lowest-index) occurrence of their value."""
    first = np.zeros(len(keys), dtype=bool)
    if len(keys):
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        starts = np.ones(len(keys), dtype=bool)
        starts[1:] = ordered[1:] != ordered[:-1]
        first[order[starts]] = True
    return first




def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, position of each value among them), like np.unique(return_inverse=True)."""
    values = np.asarray(values, dtype=np.int64).ravel()
    if len(values) == 0:
        return values, np.zeros(0, dtype=np.int64)
    low = int(values.min())
    span = int(values.max()) - low + 1
    if span <= 4 * len(values) + DENSE_SLACK:
        shifted = values - low
        present = np.zeros(span, dtype=bool)
        present[shifted] = True
        distinct = np.flatnonzero(present)
        lookup = np.empty(span, dtype=np.int64)
        lookup[distinct] = np.arange(len(distinct))
        return distinct + low, lookup[shifted]
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.ones(len(values), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse




def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + c) for each (s, c), without a Python loop."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - counts), counts)


def _count(level: float, n: int, method: str) -> int:
    # The epsilon keeps floor(0.3 * 10) at 3 although 0.3 * 10 is 3.0000000000000004 or 2.9999999999999996.
    edges = int(math.floor(level * n + 1e-9))
    return 2 * int(math.floor(level * n / 2 + 1e-9)) if method == "RS" else edges


def _check_method(method: object) -> str:
    if not isinstance(method, str):
        raise PerturbError(f"method must be one of none, {', '.join(METHODS)}; got {method!r}")
    name = method.strip()
    if name.lower() == "none":
        return "none"
    if name.upper() in METHODS:
        return name.upper()
    raise PerturbError(f"unknown perturbation method {method!r}: use one of none, {', '.join(METHODS)}")


def _check_level(level: object, *, nonzero: bool) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise PerturbError(f"level must be a number in (0, 1], got {level!r}")
    value = float(level)
    if math.isnan(value) or value < 0 or value > 1 or (nonzero and value == 0):
        raise PerturbError(f"level must lie in {'(0' if nonzero else '[0'}, 1] (the share of edges perturbed), "
                           f"got {level!r}")
    return value


def _format_level(level: float) -> str:
    text = f"{level:g}"
    return text if "." in text or "e" in text else f"{text}.0"


def _as_array(triples: Iterable[Triple] | np.ndarray) -> np.ndarray:
    if isinstance(triples, np.ndarray):
        arr = triples
    else:
        arr = np.asarray(list(triples) if not isinstance(triples, Sequence) else triples, dtype=np.int64)
    if arr.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 3 or not np.issubdtype(arr.dtype, np.integer):
        raise PerturbError(f"triples must be (head, relation, tail) integer ids: a list of 3-tuples or an (n, 3) "
                           f"int array; got shape {arr.shape} dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def _triple(row: np.ndarray) -> Triple:
    h, r, t = row.tolist()
    return (h, r, t)


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


#: Every perturbation key of the default grid: ``none`` and the four methods at levels 0.1 .. 1.0.
PERTURBATIONS: tuple[str, ...] = tuple(perturbation_keys())
