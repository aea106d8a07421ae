"""GraphEval's statements: positives from KG triples, and k negatives per positive made by corrupting the head,
the relation or the tail, each verified false against the KG. The draws and checks run vectorised in NumPy over
integer keys of the whole KG (hash sets built once per KG; sorted arrays, a quarter of the memory, when a sample of
positives has few candidates to check), attempt by attempt, in blocks of positives that run on threads (NumPy lets
go of the GIL; a block's result does not depend on the others, so the output does not depend on the number of
threads); no Python loop touches a triple. DuckDB reads the KG. The item table is built a chunk of positives at a
time (its chunks are the table's), so only one chunk's working strings are alive beside it; as an
:class:`ItemStream` (``stream=True``) a chunk is built when it is read, so no more than one is ever in memory.

Positives: per relation a seeded sample of at most ``per_relation`` triples (every triple when None), so a few
huge relations do not dominate, then, with ``positives``, a uniform seeded sample of that many of them (the
paper's protocol: every triple, or a uniform sample, so its means are triple-weighted), rendered with the relation's template
(:mod:`.templates`). A positive whose text equals another positive's is dropped (reason ``duplicate_statement``)
when ``dedup`` is on (the kgprobe profile; the paper keeps every triple).

Negatives, k per positive: each slot draws the part to corrupt (uniformly among ``parts``) and a replacement from
a pool: ``typed`` corruption (the default) draws an entity of the replaced entity's primary type (its rarest type),
or, for an untyped entity, another head / tail of the same relation, and a relation used by entities of the head's
type; ``uniform`` draws any entity or relation. A candidate is rejected, first reason that applies, when it is:

* ``unchanged``: the draw gave back the original;
* ``in_kg``: a triple of the KG (closed world: a KG fact is not a negative);
* ``same_label``: the surface form of a KG triple (normalised head label, relation, normalised tail label): it
  states a fact through another entity of the same name, which for a 1-to-1 relation would be a contradiction in
  form only. Checked for every relation, which includes the 1-to-1 ones;
* ``duplicate_text``: the text of a positive statement;
* ``duplicate_negative``: the text of another negative of the same positive;
* ``symmetric_reversal`` (only with ``symmetric_reversals``, checked right after ``same_label``): the reverse of a
  KG triple of a relation whose triples are mostly symmetric (at least that share of them have their reverse in
  the KG): "B is married to A" is likely true where "A is married to B" is.

Two statements have the same text when they put the same two labels, in the same order, into the same template
pattern (the text around the labels); two different patterns that happen to spell the same sentence are not
detected.

A rejected slot is drawn again, up to ``max_attempts`` attempts (then ``exhausted``). A positive left without any
negative is not written (its group would score F(τ) alone); one with fewer than k is, and is counted. The draws are
64-bit hashes (SplitMix64's mix) of (seed, triple, slot, attempt) over the KG's ids, so a positive's negatives do not
depend on which other triples were sampled.

    >>> result = build_statements(con, StatementOptions(per_relation=5, negatives=3), snapshot_id="s1", seed=0)
    >>> result.items.num_rows, result.reject_counts

:func:`draw_statements` is the narrow core (ids only, no item table) for runs over a whole KG where only the
statements and their counts are wanted; :func:`build_statements` renders its result as items.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from kgprobe.arrays import in_sorted, sorted_unique
from kgprobe.kg.readable import LABEL_CLEANUPS, clean_labels
from kgprobe.sql import load_sql
from kgprobe.suites.base import ITEM_SCHEMA
from kgprobe.suites.grapheval.templates import (
    RelationTemplate,
    resolve_templates,
    split_template,
    template_table,
)

__all__ = ["PARTS", "REASONS", "DrawnStatements", "ItemStream", "StatementOptions", "StatementSet",
           "build_statements", "draw_statements", "item_schema", "verify_negatives"]

#: The parts of a triple a negative may corrupt.
PARTS: tuple[str, ...] = ("head", "relation", "tail")
#: Why a negative candidate (or a positive) was not written, in the order the checks apply.
REASONS: tuple[str, ...] = ("unchanged", "in_kg", "same_label", "duplicate_text", "duplicate_negative",
                            "symmetric_reversal", "exhausted", "duplicate_statement")
_CHECKS = REASONS[:6]  # reason codes 1..6 of a candidate; 0 = accepted
_TEMP = ("_ge_ent", "_ge_label_triples")
_REGISTERED = ("_ge_templates", "_ge_pos", "_ge_neg", "_ge_rej", "_ge_drop")

_OWN = pa.schema([
    ("polarity", pa.string()), ("corrupted", pa.string()), ("head_key", pa.string()), ("relation_key", pa.string()),
    ("tail_key", pa.string()), ("head_label", pa.string()), ("relation_label", pa.string()),
    ("tail_label", pa.string()), ("template_source", pa.string()), ("attempt", pa.int64()),
    ("negatives", pa.int64()), ("mean_degree", pa.float64()),
])
_REJECT_SCHEMA = pa.schema([
    ("kind", pa.string()), ("reason", pa.string()), ("part", pa.string()), ("head_key", pa.string()),
    ("relation_key", pa.string()), ("tail_key", pa.string()), ("text", pa.string()), ("attempt", pa.int64()),
    ("positive_head_key", pa.string()), ("positive_relation_key", pa.string()), ("positive_tail_key", pa.string()),
])


def item_schema() -> pa.Schema:
    """The schema of GraphEval's items: :data:`~kgprobe.suites.base.ITEM_SCHEMA`, then its own columns."""
    return pa.schema(list(ITEM_SCHEMA) + list(_OWN))


@dataclass(frozen=True)
class StatementOptions:
    """How statements are made (the suite's settings carry the same fields; see the module docstring)."""

    per_relation: int | None = 50
    positives: int | None = None
    negatives: int = 3
    parts: Sequence[str] = PARTS
    corruption: str = "typed"
    max_attempts: int = 10
    templates: Mapping[str, str] = field(default_factory=dict)
    dbpedia: Mapping[str, str] = field(default_factory=dict)
    dbpedia_match: str = "iri"
    symmetric_reversals: float | None = None
    task: str = "statement"
    proposed: Mapping[str, str] = field(default_factory=dict)
    label_cleanup: Sequence[str] = LABEL_CLEANUPS
    dedup: bool = True
    templated_only: bool = False

    def __post_init__(self) -> None:
        if set(self.label_cleanup) - set(LABEL_CLEANUPS):
            raise ValueError(f"label_cleanup must be a subset of {list(LABEL_CLEANUPS)}, got {list(self.label_cleanup)}")
        if self.per_relation is not None and self.per_relation < 1:
            raise ValueError(f"per_relation must be a positive number of triples or None (all), got {self.per_relation}")
        if self.positives is not None and self.positives < 1:
            raise ValueError(f"positives must be a positive number of triples or None (all), got {self.positives}")
        if self.symmetric_reversals is not None and not 0 < self.symmetric_reversals <= 1:
            raise ValueError(f"symmetric_reversals must be a share in (0, 1] or None, got {self.symmetric_reversals}")
        if self.negatives < 1:
            raise ValueError(f"negatives (k) must be at least 1, got {self.negatives}")
        if not self.parts or set(self.parts) - set(PARTS):
            raise ValueError(f"parts must be a non-empty subset of {list(PARTS)}, got {list(self.parts)}")
        if self.corruption not in ("typed", "uniform"):
            raise ValueError(f"corruption must be typed or uniform, got {self.corruption!r}")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")


@dataclass(frozen=True)
class StatementSet:
    """The items (positives and their verified negatives, :func:`item_schema`), every rejected candidate and
    dropped positive with its reason (``rejects``), rejected candidates counted per reason and part, the relations'
    templates and metadata (counts, template sources, relations on the fallback template)."""

    items: pa.Table | ItemStream
    rejects: pa.Table
    reject_counts: list[dict[str, Any]]
    templates: list[RelationTemplate]
    metadata: dict[str, Any]


@dataclass(frozen=True)
class DrawnStatements:
    """The statements as KG ids. Positives (in (relation, head, tail) order): ``head``, ``relation``, ``tail``.
    Negatives: ``neg_*`` arrays of shape (positives, k), -1 where a slot has none; ``neg_part`` indexes
    :data:`PARTS`. ``dropped``: the (head, relation, tail) rows of positives dropped for their text. ``rejected``:
    every rejected candidate (positive index, slot, attempt, part, head, relation, tail, reason code 1..5 of
    ``REASONS``) when asked for, and ``exhausted``: (positive index, slot) of slots given up."""

    head: np.ndarray
    relation: np.ndarray
    tail: np.ndarray
    neg_head: np.ndarray
    neg_relation: np.ndarray
    neg_tail: np.ndarray
    neg_part: np.ndarray
    neg_attempt: np.ndarray
    dropped: np.ndarray
    rejected: dict[str, np.ndarray] | None
    exhausted: np.ndarray
    reject_counts: list[dict[str, Any]]
    metadata: dict[str, Any]
    templates: list[RelationTemplate]
    label_cleanup: tuple[str, ...] = ()

    def texts(self, con: duckdb.DuckDBPyConnection) -> tuple[pl.Series, pl.Series]:
        """The positive statements' texts (one per positive) and the negatives' (row-major over (positive, slot),
        slots without a negative left out), rendered from the labels of the KG ``con`` reads."""
        ent = con.execute("SELECT id, label FROM entities ORDER BY id").to_arrow_table()
        labels = pl.Series("label", clean_labels(ent.column("label"), self.label_cleanup))
        ids = ent.column("id").to_numpy()
        row = np.full(int(ids.max()) + 1 if len(ids) else 0, -1, np.int64)
        row[ids] = np.arange(len(ids))
        has = self.neg_part.ravel() >= 0
        h, r, t = (np.concatenate([pos, neg.ravel()[has]]) for pos, neg in
                   ((self.head, self.neg_head), (self.relation, self.neg_relation), (self.tail, self.neg_tail)))
        with ThreadPoolExecutor(_THREADS) as threads:  # Polars lets go of the GIL: blocks rendered side by side
            rendered = pl.concat(list(threads.map(
                lambda first: _render(self.templates, labels, row, h[first:first + _BLOCK * 2],
                                      r[first:first + _BLOCK * 2], t[first:first + _BLOCK * 2]),
                range(0, len(h), _BLOCK * 2))) or [pl.Series("text", [], pl.String)], rechunk=False)
        return rendered[:len(self.head)], rendered[len(self.head):]


# ---- hashing and keys -------------------------------------------------------------------------------------------

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, elementwise on uint64 (wrapping arithmetic)."""
    x = x ^ (x >> _S30)
    x = x * _M1
    x = x ^ (x >> _S27)
    x = x * _M2
    return x ^ (x >> _S31)


def _hash(seed: int, *columns: np.ndarray | int) -> np.ndarray:
    """A 64-bit hash per row of ``columns`` (int arrays or scalars), seeded."""
    h = _mix(np.asarray([seed & 0xFFFFFFFFFFFFFFFF], np.uint64) + _GOLDEN)
    for c in columns:
        h = _mix(h ^ _mix(np.atleast_1d(c).astype(np.uint64) + _GOLDEN))
    return h


def _key(a: np.ndarray, b: np.ndarray, c: np.ndarray, nb: int, nc: int, na: int) -> np.ndarray:
    """One int64 per row of (a, b, c) with a < na, b < nb, c < nc: exact packing when it fits in 63 bits, else a
    64-bit hash. A hash collision can only make a candidate look like a KG fact or a duplicate (it is then rejected
    and drawn again), never let a KG fact through."""
    if na * nb * nc < 2**62:
        return (a.astype(np.int64) * nb + b) * nc + c
    return _hash(0x5EED, a, b, c).view(np.int64)


_EMPTY = np.iinfo(np.int64).min
#: Positives per block of the draw: a block's working arrays (k slots per positive) stay in the CPU's cache.
_BLOCK = 65_536
_THREADS = min(4, os.cpu_count() or 1)


class _KeySet:
    """A set of int64 keys for vectorised membership: an open-addressing hash table (linear probing, at most half
    full) built and probed in NumPy rounds, one gather per round, behind a filter of 8 flags per key (one gather
    from an array small enough for the CPU's cache answers "no" for most keys that are not in the set). Built once
    per KG; each probe of a million candidates is a few gathers instead of building a hash table per call."""

    def __init__(self, keys: np.ndarray) -> None:
        keys = np.asarray(keys, np.int64)  # repeated keys are fine: each lands on the first copy's slot
        empty = keys == _EMPTY
        self.has_empty = bool(empty.any())  # the sentinel itself, kept apart
        keys = keys[~empty] if self.has_empty else keys
        bits = max(4, (2 * len(keys)).bit_length())
        self.mask = np.uint64((1 << bits) - 1)
        self.shift = np.uint64(64 - bits)
        self.filter_shift = np.uint64(64 - max(6, (8 * len(keys)).bit_length()))
        self.table = np.full(1 << bits, _EMPTY, np.int64)
        hashed = _fibonacci(keys)
        self.filter = np.zeros(1 << (64 - int(self.filter_shift)), bool)
        self.filter[hashed >> self.filter_shift] = True
        slot = (hashed >> self.shift).astype(np.int64)
        pending = np.arange(len(keys))
        while len(pending):
            s = slot[pending]
            free = self.table[s] == _EMPTY
            self.table[s[free]] = keys[pending[free]]  # of keys that share a free slot, one wins
            pending = pending[self.table[s] != keys[pending]]
            slot[pending] = (slot[pending] + 1) & int(self.mask)

    def contains(self, x: np.ndarray) -> np.ndarray:
        """Whether each of ``x`` (int64) is in the set."""
        x = np.asarray(x, np.int64)
        found = np.zeros(len(x), bool)
        hashed = _fibonacci(x)
        todo = np.flatnonzero(self.filter[hashed >> self.filter_shift])
        slot = np.zeros(len(x), np.int64)
        slot[todo] = (hashed[todo] >> self.shift).astype(np.int64)
        todo = todo[x[todo] != _EMPTY]  # the sentinel would "find" any empty slot
        while len(todo):
            value = self.table[slot[todo]]
            hit = value == x[todo]
            found[todo[hit]] = True
            todo = todo[~hit & (value != _EMPTY)]
            slot[todo] = (slot[todo] + 1) & int(self.mask)
        if self.has_empty:
            found |= x == _EMPTY
        return found


class _SortedKeys:
    """The membership of :class:`_KeySet` from a sorted array of the keys (8 bytes a key, one sort to build, a
    binary search per probe): for a few probes of a large set."""

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = np.sort(np.asarray(keys, np.int64))

    def contains(self, x: np.ndarray) -> np.ndarray:
        """Whether each of ``x`` (int64) is in the set."""
        return in_sorted(self.keys, np.asarray(x, np.int64))


def _fibonacci(x: np.ndarray) -> np.ndarray:
    """Fibonacci hashing: key * 2^64 / golden ratio, whose top bits index a table (two operations where a full mix
    is seven)."""
    return x.view(np.uint64) * _GOLDEN


def _codes(values: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, int]:
    """Dense integer codes of non-null strings (equal strings, equal codes) and how many distinct there are."""
    enc = pc.dictionary_encode(values)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), len(enc.dictionary)


# ---- the KG as arrays -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _KG:
    n_ent: int  # entity ids are < n_ent (arrays indexed by id)
    n_rel: int
    head: np.ndarray
    relation: np.ndarray
    tail: np.ndarray
    label: np.ndarray  # label code per entity id
    n_label: int
    norm: np.ndarray  # normalised-label code per entity id
    n_norm: int
    ptype: np.ndarray  # primary type code per entity id, -1 untyped
    n_type: int
    type_pairs: tuple[np.ndarray, np.ndarray]  # (type code, entity) of every typing, unique
    entity_ids: np.ndarray
    relation_ids: np.ndarray


def _read_kg(con: duckdb.DuckDBPyConnection, label_cleanup: Sequence[str] = ()) -> _KG:
    ent = con.execute(load_sql("grapheval/entity_arrays")).to_arrow_table()
    ids = ent.column("id").to_numpy()
    rel_ids = con.execute("SELECT id FROM relations ORDER BY id").fetchnumpy()["id"].astype(np.int64)
    n_ent = int(ids.max()) + 1 if len(ids) else 0
    n_rel = int(rel_ids.max()) + 1 if len(rel_ids) else 0
    tr = con.execute("SELECT head, relation, tail FROM triples").fetchnumpy()
    types = con.execute("SELECT DISTINCT type FROM entity_types ORDER BY type").to_arrow_table().column("type")
    pairs = con.execute("SELECT DISTINCT type, entity FROM entity_types").to_arrow_table()

    def by_id(codes: np.ndarray) -> np.ndarray:
        out = np.full(n_ent, -1, np.int64)
        out[ids] = codes
        return out

    label, n_label = _codes(clean_labels(ent.column("label"), label_cleanup))  # the labels statements show
    norm, n_norm = _codes(ent.column("norm"))
    ptype = pc.fill_null(pc.index_in(ent.column("type"), value_set=types), -1).to_numpy().astype(np.int64)
    pair_type = pc.index_in(pairs.column("type"), value_set=types).to_numpy().astype(np.int64)
    return _KG(n_ent=n_ent, n_rel=n_rel, head=np.asarray(tr["head"], np.int64),
               relation=np.asarray(tr["relation"], np.int64), tail=np.asarray(tr["tail"], np.int64),
               label=by_id(label), n_label=max(n_label, 1), norm=by_id(norm), n_norm=max(n_norm, 1),
               ptype=by_id(ptype), n_type=len(types), type_pairs=(pair_type, pairs.column("entity").to_numpy()),
               entity_ids=ids.astype(np.int64), relation_ids=rel_ids)


@dataclass(frozen=True)
class _Pools:
    """Every pool a replacement is drawn from, as one CSR array: members of pool p are
    ``members[offsets[p]:offsets[p + 1]]`` in ascending order."""

    offsets: np.ndarray
    members: np.ndarray


def _pools(kg: _KG, typed: bool, relations: np.ndarray | None = None) -> tuple[_Pools, int, int, int]:
    """Pools, numbered: 0 every entity, 1 every relation; when typed, 2 + t the entities of type t, then per relation
    its heads (dom), its tails (rng), then per type t the relations whose heads have primary type t (rt). Returns
    the pools and the first numbers of the dom, rng and rt blocks. ``relations`` (a mask by relation id), when
    given, keeps the relation pools to those relations (a relation corruption draws only from them)."""
    pool_id = [np.zeros(len(kg.entity_ids), np.int64), np.ones(len(kg.relation_ids), np.int64)]
    member = [kg.entity_ids, kg.relation_ids]
    if relations is not None:
        pool_id[1], member[1] = pool_id[1][relations[kg.relation_ids]], kg.relation_ids[relations[kg.relation_ids]]
    t, r = kg.n_type, kg.n_rel
    dom, rng, rt = 2 + t, 2 + t + r, 2 + t + 2 * r
    if typed:
        pool_id.append(2 + kg.type_pairs[0])
        member.append(kg.type_pairs[1].astype(np.int64))
        for base, ent in ((dom, kg.head), (rng, kg.tail)):
            pairs = sorted_unique(kg.relation * kg.n_ent + ent)
            pool_id.append(base + pairs // kg.n_ent)
            member.append(pairs % kg.n_ent)
        typed_head = kg.ptype[kg.head] >= 0
        if relations is not None:
            typed_head &= relations[kg.relation]
        pairs = sorted_unique(kg.ptype[kg.head[typed_head]] * max(r, 1) + kg.relation[typed_head])
        pool_id.append(rt + pairs // max(r, 1))
        member.append(pairs % max(r, 1))
    ids, members = np.concatenate(pool_id), np.concatenate(member)
    width = max(kg.n_ent, kg.n_rel, 1)  # members are entity or relation ids
    if (rt + t + 1) * width < 2**62:  # one packed sort, unpacked again
        ids, members = np.divmod(np.sort(ids * width + members), width)
    else:
        order = np.lexsort((members, ids))
        ids, members = ids[order], members[order]
    offsets = np.searchsorted(ids, np.arange(rt + t + 1))
    return _Pools(offsets=offsets, members=members), dom, rng, rt


def _render(templates: Sequence[RelationTemplate], labels: pl.Series, row: np.ndarray, head: np.ndarray,
            relation: np.ndarray, tail: np.ndarray) -> pl.Series:  # fmt: skip
    """Statement texts of (head, relation, tail) ids: ``pre + first label + mid + second label + post`` (in Polars:
    its string gathers and concatenation run on every core), a doubled final full stop made one."""
    n_rel = max((t.relation for t in templates), default=-1) + 1
    pre, mid, post = ([""] * n_rel for _ in range(3))
    head_first = np.ones(n_rel, bool)
    for t in templates:
        pre[t.relation], head_first[t.relation], mid[t.relation], post[t.relation] = split_template(t.template)
    hf = head_first[relation]
    rel = pl.Series(relation)

    def part(values: list[str]) -> pl.Series | pl.Expr:
        return pl.lit(values[0]) if len(set(values)) <= 1 else pl.Series(values).gather(rel)

    # a label that ends a sentence with its own full stop ("Sheffield Wednesday F.C.") takes no second one
    return pl.select(pl.concat_str([part(pre), labels.gather(pl.Series(row[np.where(hf, head, tail)])), part(mid),
                                    labels.gather(pl.Series(row[np.where(hf, tail, head)])), part(post)])
                     .str.replace(r"([^.])\.\.$", "${1}.")).to_series().alias("text")


# ---- the draw ---------------------------------------------------------------------------------------------------

def draw_statements(con: duckdb.DuckDBPyConnection, options: StatementOptions = StatementOptions(), *,
                    seed: int = 0, rejects: bool = False) -> DrawnStatements:  # fmt: skip
    """Positives and verified negatives of the KG whose tables ``con`` reads unqualified, as ids (see the module
    docstring); ``rejects=True`` also keeps every rejected candidate. Only reads ``con``."""
    with ThreadPoolExecutor(_THREADS) as threads:  # NumPy lets go of the GIL in its loops: sets, pools, blocks
        return _draw(con, options, seed=seed, rejects=rejects, threads=threads)


def _draw(con: duckdb.DuckDBPyConnection, options: StatementOptions, *, seed: int, rejects: bool,
          threads: ThreadPoolExecutor) -> DrawnStatements:  # fmt: skip
    relations = con.execute("SELECT id, key, label FROM relations ORDER BY id").fetchall()
    templates, template_meta = resolve_templates(relations, config=options.templates, dbpedia=options.dbpedia,
                                                 dbpedia_match=options.dbpedia_match, proposed=options.proposed)
    kg = _read_kg(con, tuple(options.label_cleanup))
    typed = options.corruption == "typed"
    # what a negative must not be, and where replacements come from, built while the positives are chosen. With
    # few positives against a large KG (a sample: `positives`, or `per_relation` times the relations) the KG's keys
    # are a sorted array instead of a hash set: the same answers, a quarter of the memory and a sort instead of the
    # set's build, for candidates too few for the slower probes to matter
    asked = len(kg.head)
    if options.positives is not None:
        asked = min(asked, options.positives)
    if options.per_relation is not None:
        asked = min(asked, options.per_relation * kg.n_rel)
    key_set = _SortedKeys if asked * options.negatives * 8 <= len(kg.head) and options.symmetric_reversals is None \
        else _KeySet
    kg_keys = threads.submit(lambda: key_set(_key(kg.head, kg.relation, kg.tail, kg.n_rel, kg.n_ent, kg.n_ent)))
    surface = threads.submit(lambda: key_set(_key(kg.norm[kg.head], kg.relation, kg.norm[kg.tail], kg.n_rel,
                                                  kg.n_norm, kg.n_norm)))
    allowed = None  # templated_only: the relations the project's templates file names, for positives and pools
    if options.templated_only:
        allowed = np.zeros(max(kg.n_rel, 1), bool)
        allowed[[t.relation for t in templates if t.source == "config" and t.relation < len(allowed)]] = True
    pooled = threads.submit(_pools, kg, typed, allowed)
    k = options.negatives

    # templates: a pattern code per relation (the text around the labels) and which label comes first
    pattern = np.zeros(max(kg.n_rel, 1), np.int64)
    head_first = np.ones(max(kg.n_rel, 1), bool)
    codes: dict[tuple[str, str, str], int] = {}
    for t in templates:
        pre, first, mid, post = split_template(t.template)
        pattern[t.relation] = codes.setdefault((pre, mid, post), len(codes))
        head_first[t.relation] = first
    n_pattern = max(len(codes), 1)

    def text_key(h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        hf = head_first[r]
        return _key(pattern[r], kg.label[np.where(hf, h, t)], kg.label[np.where(hf, t, h)], kg.n_label, kg.n_label,
                    n_pattern)

    # positives: per relation in seeded order, the first `cap`; then (relation, head, tail) order, first text wins
    h0, r0, t0 = kg.head, kg.relation, kg.tail
    if allowed is not None:
        asked = allowed[r0]
        h0, r0, t0 = h0[asked], r0[asked], t0[asked]
    if options.per_relation is not None and len(h0):
        order = np.lexsort((t0, h0, _hash(seed, h0, r0, t0), r0))
        rs = r0[order]
        start = np.searchsorted(rs, rs, side="left")
        chosen = order[(np.arange(len(rs)) - start) < options.per_relation]
        h0, r0, t0 = h0[chosen], r0[chosen], t0[chosen]
    if options.positives is not None and len(h0) > options.positives:
        # a uniform sample of triples: the `positives` smallest hashes (a triple's draw depends on it alone)
        chosen = np.argsort(_hash(seed ^ 0x5A3B1E, h0, r0, t0), kind="stable")[:options.positives]
        h0, r0, t0 = h0[chosen], r0[chosen], t0[chosen]
    if kg.n_rel * kg.n_ent * kg.n_ent < 2**62:  # one packed sort, unpacked again
        packed = np.sort((r0 * kg.n_ent + h0) * kg.n_ent + t0)
        r0, rest = np.divmod(packed, kg.n_ent * kg.n_ent)
        h0, t0 = np.divmod(rest, kg.n_ent)
    else:
        order = np.lexsort((t0, h0, r0))
        h0, r0, t0 = h0[order], r0[order], t0[order]
    pos_text = text_key(h0, r0, t0)
    keep = np.ones(len(pos_text), bool)
    ordered = np.sort(pos_text)
    repeated = sorted_unique(ordered[1:][ordered[1:] == ordered[:-1]]) if options.dedup else ordered[:0]
    if len(repeated):  # rare: among the positives sharing a text, the first in (relation, head, tail) order
        shared = np.flatnonzero(_KeySet(repeated).contains(pos_text))
        keep[shared] = False
        keep[shared[np.unique(pos_text[shared], return_index=True)[1]]] = True
    dropped = np.stack([h0[~keep], r0[~keep], t0[~keep]], axis=1)
    ph, pr, pt = h0[keep], r0[keep], t0[keep]
    positive_texts = _KeySet(pos_text[keep])
    n_pos = len(ph)

    kg_keys, surface = kg_keys.result(), surface.result()
    # relations whose triples are mostly symmetric: the share of a relation's triples whose reverse is a KG triple
    symmetric = np.zeros(max(kg.n_rel, 1), bool)
    if options.symmetric_reversals is not None:  # (a probe of every triple's reverse: only when it is asked for)
        reversed_in_kg = kg_keys.contains(_key(kg.tail, kg.relation, kg.head, kg.n_rel, kg.n_ent, kg.n_ent))
        per_rel = np.bincount(kg.relation, minlength=max(kg.n_rel, 1)).astype(np.float64)
        reversed_per_rel = np.bincount(kg.relation, weights=reversed_in_kg, minlength=max(kg.n_rel, 1))
        symmetric = reversed_per_rel / np.maximum(per_rel, 1) >= options.symmetric_reversals
    pools, dom, rng, rt = pooled.result()
    # the pool of each part of each positive, flat: pool_of[positive * 3 + part] (part indexes PARTS)
    if typed:
        typed_head, typed_tail = kg.ptype[ph] >= 0, kg.ptype[pt] >= 0
        pool_of = np.stack([np.where(typed_head, 2 + kg.ptype[ph], dom + pr),
                            np.where(typed_head, rt + kg.ptype[ph], 1),
                            np.where(typed_tail, 2 + kg.ptype[pt], rng + pr)], axis=1).ravel()
    else:
        pool_of = np.tile(np.array([0, 1, 0], np.int64), n_pos)
    original = np.stack([ph, pr, pt], axis=1).ravel()
    part_codes = np.array([PARTS.index(p) for p in options.parts], np.int64)

    # the slots, flat: slot = positive * k + j; a positive's draws hash its triple once, then (slot, attempt)
    neg = {name: np.full(n_pos * k, -1, np.int64) for name in ("head", "relation", "tail", "part", "attempt")}
    neg_text = np.full(n_pos * k, -1, np.int64)
    base = _hash(seed, ph, pr, pt)

    def attempt_block(first: int, last: int) -> tuple[np.ndarray, list[dict[str, np.ndarray]], np.ndarray, int]:
        """Every attempt for the slots of positives ``first`` to ``last`` (a positive's slots depend on nothing
        outside it, so blocks are independent and write apart): reject counts, rejected candidates, the slots
        given up and the attempts made. Blocks keep the working arrays small enough to stay in cache."""
        counts = np.zeros((len(_CHECKS) + 1, len(PARTS)), np.int64)
        kept: list[dict[str, np.ndarray]] = []
        slots = np.arange(first * k, last * k, dtype=np.int64)
        attempts = 0
        for attempt in range(options.max_attempts):
            if not len(slots):
                break
            attempts = attempt + 1
            sp, sj = slots // k, slots % k
            # one mix per draw; its high 32 bits choose the part and its low 32 bits the pool member, each by a
            # multiply-shift range reduction (no division)
            r1 = _mix(base[sp] + (sj * options.max_attempts + attempt + 1).astype(np.uint64) * _GOLDEN)
            part = part_codes[(((r1 >> _S32) * np.uint64(len(part_codes))) >> _S32).astype(np.int64)]
            at = sp * 3 + part
            pool = pool_of[at]
            lo = pools.offsets[pool]
            size = pools.offsets[pool + 1] - lo
            drawn = pools.members[lo + (((r1 & _LOW32) * size.astype(np.uint64)) >> _S32).astype(np.int64)]
            ch = np.where(part == 0, drawn, ph[sp])
            cr = np.where(part == 1, drawn, pr[sp])
            ct = np.where(part == 2, drawn, pt[sp])
            # the checks in order, each on the candidates no earlier check rejected. A KG triple always has its own
            # surface form, so the KG keys are probed only for candidates whose surface form is a KG one
            unchanged = drawn == original[at]
            reason = unchanged.astype(np.int64)
            i = np.flatnonzero(surface.contains(_key(kg.norm[ch], cr, kg.norm[ct], kg.n_rel, kg.n_norm, kg.n_norm))
                               & ~unchanged)
            reason[i] = np.where(kg_keys.contains(_key(ch[i], cr[i], ct[i], kg.n_rel, kg.n_ent, kg.n_ent)), 2, 3)
            if symmetric.any():  # the reverse of a KG triple of a mostly-symmetric relation is likely true
                i = np.flatnonzero((reason == 0) & symmetric[cr])
                reason[i[kg_keys.contains(_key(ct[i], cr[i], ch[i], kg.n_rel, kg.n_ent, kg.n_ent))]] = 6
            i = np.flatnonzero(reason == 0)
            ctext = text_key(ch[i], cr[i], ct[i])
            reason[i[positive_texts.contains(ctext)]] = 4
            # the text of a negative this positive already has (from an earlier attempt), or that a lower slot of
            # the same positive draws in this attempt
            open_ = reason[i] == 0
            i, ctext = i[open_], ctext[open_]
            # (a slot o of the positive is "lower" than this one when its index is j + d - k for d in 1..k-1; a slot
            # rejected in this attempt holds -1 in `now`, which no text key equals)
            block_text = neg_text[first * k:last * k]
            now = block_text.copy()
            local = slots[i] - first * k
            now[local] = ctext
            j_i = sj[i]
            own = local - j_i
            same = np.zeros(len(i), bool)
            for d in range(1, k):
                oj = j_i + d
                lower = oj >= k
                o = own + np.where(lower, oj - k, oj)
                same |= (now[o] == ctext) & (lower | (block_text[o] != -1))
            reason[i[same]] = 5
            ok = reason == 0
            accepted = np.flatnonzero(ok)
            done = slots[accepted]
            for name, values in (("head", ch), ("relation", cr), ("tail", ct), ("part", part)):
                neg[name][done] = values[accepted]
            neg["attempt"][done] = attempt
            neg_text[slots[i[~same]]] = ctext[~same]
            counts += np.bincount(reason[~ok] * len(PARTS) + part[~ok], minlength=counts.size).reshape(counts.shape)
            if rejects:
                bad = ~ok
                kept.append({"p": sp[bad], "j": sj[bad], "attempt": np.full(int(bad.sum()), attempt, np.int64),
                             "part": part[bad], "head": ch[bad], "relation": cr[bad], "tail": ct[bad],
                             "reason": reason[bad]})
            slots = slots[~ok]
        return counts, kept, slots, attempts

    n_blocks = -(-n_pos // _BLOCK)
    n_blocks = -(-n_blocks // _THREADS) * _THREADS  # equal blocks, as many per thread
    edges = np.linspace(0, n_pos, n_blocks + 1).astype(np.int64).tolist()
    blocks = list(threads.map(attempt_block, edges[:-1], edges[1:]))
    counts = sum((b[0] for b in blocks), np.zeros((len(_CHECKS) + 1, len(PARTS)), np.int64))
    kept = [x for b in blocks for x in b[1]]
    slots = np.concatenate([b[2] for b in blocks]) if blocks else np.zeros(0, np.int64)
    attempts = max((b[3] for b in blocks), default=0)

    neg = {name: values.reshape(n_pos, k) for name, values in neg.items()}
    per_positive = (neg["part"] >= 0).sum(axis=1)
    reject_counts = [{"reason": _CHECKS[c - 1], "part": PARTS[pp], "candidates": int(counts[c, pp])}
                     for c in range(1, len(_CHECKS) + 1) for pp in range(len(PARTS)) if counts[c, pp]]
    reject_counts.sort(key=lambda x: (x["reason"], x["part"]))
    summary = {"positives_drawn": len(h0), "positives_unique": n_pos,
               "positives_full": int((per_positive == k).sum()),
               "positives_partial": int(((per_positive > 0) & (per_positive < k)).sum()),
               "positives_without_negatives": int((per_positive == 0).sum()), "negatives": int(per_positive.sum())}
    by_reason: dict[str, int] = {}
    for c in reject_counts:
        by_reason[c["reason"]] = by_reason.get(c["reason"], 0) + c["candidates"]
    by_reason["exhausted"] = len(slots)
    by_reason["duplicate_statement"] = len(dropped)
    metadata = {**summary, **template_meta, "rejected_by_reason": by_reason, "attempts": attempts,
                "options": {"per_relation": options.per_relation, "negatives": options.negatives,
                            "parts": list(options.parts), "corruption": options.corruption,
                            "max_attempts": options.max_attempts, "dbpedia_match": options.dbpedia_match,
                            "positives": options.positives, "symmetric_reversals": options.symmetric_reversals,
                            "task": options.task, "seed": seed, "label_cleanup": list(options.label_cleanup)},
                "symmetric_relations": int(symmetric[kg.relation_ids].sum()) if len(kg.relation_ids) else 0}
    rejected = None
    if rejects:
        rejected = {name: np.concatenate([x[name] for x in kept]) if kept else np.zeros(0, np.int64)
                    for name in ("p", "j", "attempt", "part", "head", "relation", "tail", "reason")}
        order = np.lexsort((rejected["p"] * k + rejected["j"], rejected["attempt"]))  # attempt, then slot
        rejected = {name: values[order] for name, values in rejected.items()}
    return DrawnStatements(head=ph, relation=pr, tail=pt, neg_head=neg["head"], neg_relation=neg["relation"],
                           neg_tail=neg["tail"], neg_part=neg["part"], neg_attempt=neg["attempt"], dropped=dropped,
                           rejected=rejected, exhausted=np.stack([slots // k, slots % k], axis=1),
                           reject_counts=reject_counts, metadata=metadata, templates=templates,
                           label_cleanup=tuple(options.label_cleanup))


_BUCKETS = ((2, "<=2"), (8, "2-8"), (32, "8-32"), (128, "32-128"), (512, "128-512"))


#: Rows per chunk of the items: every column of a chunk is built (and its working arrays and strings freed) before
#: the next, so the draw's output is never held twice over as Python, Polars and Arrow copies; the chunks are the
#: table's chunks (a string array holds at most 2 GiB of text: a chunk of evidence is far below).
_ROWS_PER_CHUNK = 1 << 17


def _hex_ids(h: np.ndarray) -> pa.Array:
    """16 hexadecimal digits per 64-bit hash."""
    raw = np.ascontiguousarray(h.astype(">u8")).tobytes().hex().encode("ascii")
    return pa.array(np.frombuffer(raw, dtype="S16"), pa.binary(16)).cast(pa.string())


class ItemStream:
    """The items of a :class:`StatementSet` built a chunk of positives at a time when they are read, for a KG whose
    items outgrow memory (two statements a triple at about 790 bytes each: ~30 GB for 20M triples). ``num_rows`` is
    known before any is built; :meth:`batches` builds them in table order (each call anew: the same rows), and
    :meth:`take` builds only the positives that hold the rows asked for. :meth:`read_all` is the whole table."""

    def __init__(self, build: Callable[[np.ndarray], pa.Table], has: np.ndarray, relation: np.ndarray,
                 neg_relation: np.ndarray) -> None:  # fmt: skip
        self._build = build
        self._keep = has.any(axis=1)  # a positive without a verified negative is not written
        sizes = np.where(self._keep, 1 + has.sum(axis=1), 0).astype(np.int64)
        self._start = np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes)])  # each positive's first row
        # rows per relation id (a negative may corrupt the relation): counts without building a row
        ids = np.concatenate([relation[self._keep], neg_relation[has]]).astype(np.int64)
        self.rows_by_relation = np.bincount(ids) if len(ids) else np.zeros(0, np.int64)
        self._relation = relation
        self._step = max(1, _ROWS_PER_CHUNK // (has.shape[1] + 1))  # positives per chunk: at most that many rows
        self.schema = item_schema()
        self.num_rows = int(self._start[-1])

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The items in table order, about :data:`_ROWS_PER_CHUNK` rows a batch."""
        n_pos = len(self._keep)
        for first in range(0, n_pos, self._step):
            yield from self._build(np.arange(first, min(first + self._step, n_pos))).to_batches()

    def reader(self) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(self.schema, self.batches())

    def read_all(self) -> pa.Table:
        """Every item as one table (its chunks are the batches)."""
        return pa.Table.from_batches(list(self.batches()), schema=self.schema)

    def positive_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The table row of every written positive and its relation id, in table order."""
        kept = np.flatnonzero(self._keep)
        return self._start[kept], self._relation[kept]

    def take(self, rows: np.ndarray) -> pa.Table:
        """The items at table rows ``rows`` (in that order), building only the positives that hold them."""
        rows = np.asarray(rows, np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= self.num_rows):
            raise IndexError(f"row index out of bounds for {self.num_rows} items")
        owner = np.searchsorted(self._start, rows, side="right") - 1  # the positive whose group holds each row
        built = np.unique(owner)
        table = self._build(built)
        first = np.concatenate([np.zeros(1, np.int64), np.cumsum(self._start[built + 1] - self._start[built])])
        local = first[np.searchsorted(built, owner)] + rows - self._start[owner]
        return table.take(pa.array(local, pa.int64()))


def _item_stream(con: duckdb.DuckDBPyConnection, drawn: DrawnStatements, *, snapshot_id: str, seed: int,
                 task: str = "statement") -> ItemStream:  # fmt: skip
    """The items of ``drawn``: each positive with at least one verified negative, then its negatives (slot order);
    a positive and its negatives share ``group_id``. Built column by column with NumPy, Arrow takes from small
    vocabularies and Polars string concatenation (no per-row SQL or Python), a chunk of positives at a time (about
    :data:`_ROWS_PER_CHUNK` rows) when the :class:`ItemStream` is read; what a chunk needs from the KG (labels,
    keys, JSON pieces per entity and relation) is read here, so the stream outlives ``con``'s temporary tables:
    ids are 64-bit hashes of the snapshot and the
    statement's KG ids; the breakdown is the group's (relation label, primary head and tail type, degree bucket of
    the positive: the mean of head and tail degree) plus the item's polarity and corrupted part; the evidence JSON
    names the triple, its labels, its positive, the template and its source, the seed and the attempt, and for a
    positive the triple it asserts (read by the consistency view). Every string in the JSON is encoded once per
    entity or relation with :func:`json.dumps`."""
    ent = con.execute("SELECT id, key, label, coalesce(type, 'untyped') AS type, deg FROM _ge_ent ORDER BY id"
                      ).to_arrow_table()
    rel = con.execute("SELECT id, key, label FROM relations ORDER BY id").to_arrow_table()
    ent_id, rel_id = ent.column("id").to_numpy(), rel.column("id").to_numpy()
    e_row = np.full(int(ent_id.max()) + 1 if len(ent_id) else 0, -1, np.int64)
    e_row[ent_id] = np.arange(len(ent_id))
    has = drawn.neg_part >= 0
    used = sorted_unique(np.concatenate([drawn.head, drawn.tail, drawn.neg_head[has], drawn.neg_tail[has]]))
    if 2 * len(used) < len(ent_id):  # a sample of positives: labels cleaned and JSON-encoded for its entities only
        ent = ent.take(pa.array(e_row[used], pa.int64()))
        e_row[:] = -1
        e_row[used] = np.arange(len(used))
    r_row = np.full(int(rel_id.max()) + 1 if len(rel_id) else 0, -1, np.int64)
    r_row[rel_id] = np.arange(len(rel_id))
    deg = ent.column("deg").to_numpy()
    templates = {x.relation: x for x in drawn.templates}
    template = pa.array([templates[i].template for i in rel_id], pa.string())
    source = pa.array([templates[i].source for i in rel_id], pa.string())
    keys, types = ent.column("key").combine_chunks(), ent.column("type").combine_chunks()
    labels = clean_labels(ent.column("label"), drawn.label_cleanup)
    rkeys, rlabels = rel.column("key").combine_chunks(), rel.column("label").combine_chunks()
    del ent, rel

    def take(values: pa.Array, rows: np.ndarray) -> pa.Array:
        return values.take(pa.array(rows, pa.int64()))

    # the breakdown: six (key, value) pairs per row, every value taken from one small vocabulary
    type_vocab, type_code = np.unique(types.to_numpy(zero_copy_only=False).astype(str), return_inverse=True)
    del types
    vocab = pa.concat_arrays([rlabels, pa.array(type_vocab.tolist(), pa.string()),
                              pa.array([name for _, name in _BUCKETS] + [">512"], pa.string()),
                              pa.array(["positive", "negative", "none", *PARTS], pa.string())])
    nr, nt, nb = len(rlabels), len(type_vocab), len(_BUCKETS) + 1
    breakdown_keys = pa.array(["relation", "head_type", "tail_type", "degree_bucket", "polarity", "corrupted"])

    # the evidence: JSON pieces per entity / relation, joined per row
    def js(values: pa.Array) -> pl.Series:
        return pl.Series([json.dumps(v, ensure_ascii=False) for v in values.to_pylist()], dtype=pl.String)

    jkey, jlabel, jrkey, jrlabel = js(keys), js(labels), js(rkeys), js(rlabels)
    jtemplate, jsource = js(template), js(source)
    jcorrupted = pa.array([json.dumps(x) for x in ("none", *PARTS)])
    plabels = pl.Series(labels)

    def g(series: pl.Series, rows: np.ndarray) -> pl.Series:
        return series.gather(pl.Series(rows))

    def arrow(series: pl.Series) -> pa.Array:
        return series.to_arrow().cast(pa.string())

    # the ids of another task (another profile's statements of the same triples) differ from the main task's
    scope = snapshot_id if task == "statement" else f"{snapshot_id}|{task}"
    snapshot = int.from_bytes(hashlib.sha256(scope.encode("utf-8")).digest()[:8], "little")
    lit = pl.lit
    n_neg = has.sum(axis=1).astype(np.int64)
    schema = item_schema()

    def chunk(positives: np.ndarray) -> pa.Table:
        """The items of ``positives`` (ascending positive indices)."""
        sub = has[positives]
        pos, j = np.nonzero(np.concatenate([sub.any(axis=1)[:, None], sub], axis=1))  # a positive, then its negatives
        pos = positives[pos]
        n = len(pos)
        neg = j > 0
        jn = np.maximum(j - 1, 0)
        ph, pr, pt = drawn.head[pos], drawn.relation[pos], drawn.tail[pos]
        h = np.where(neg, drawn.neg_head[pos, jn], ph) if n else ph
        r = np.where(neg, drawn.neg_relation[pos, jn], pr) if n else pr
        t = np.where(neg, drawn.neg_tail[pos, jn], pt) if n else pt
        part = np.where(neg, drawn.neg_part[pos, jn], -1) if n else np.zeros(0, np.int64)  # -1: none
        attempt = np.where(neg, drawn.neg_attempt[pos, jn], 0) if n else np.zeros(0, np.int64)
        mean_degree = (deg[e_row[ph]] + deg[e_row[pt]]) / 2.0
        bucket = np.full(n, len(_BUCKETS), np.int64)
        for b, (limit, _) in reversed(list(enumerate(_BUCKETS))):
            bucket[mean_degree <= limit] = b
        eh, et, rr, eph, ept, rpr = e_row[h], e_row[t], r_row[r], e_row[ph], e_row[pt], r_row[pr]

        def constant(text: str) -> pa.Array:
            return take(pa.array([text], pa.string()), np.zeros(n, np.int64))

        codes = np.stack([rpr, nr + type_code[eph], nr + type_code[ept], nr + nt + bucket,
                          nr + nt + nb + neg, nr + nt + nb + 3 + part], axis=1).ravel()
        breakdown = pa.MapArray.from_arrays(pa.array(np.arange(0, 6 * n + 1, 6, dtype=np.int32)),
                                            take(breakdown_keys, np.tile(np.arange(6), n)), take(vocab, codes))
        del codes
        evidence = pl.select(pl.concat_str([
            lit('{"snapshot_id":' + json.dumps(snapshot_id, ensure_ascii=False) + ',"triple":['), g(jkey, eh),
            lit(","), g(jrkey, rr), lit(","), g(jkey, et), lit('],"labels":['), g(jlabel, eh), lit(","),
            g(jrlabel, rr), lit(","), g(jlabel, et), lit('],"positive":['), g(jkey, eph), lit(","), g(jrkey, rpr),
            lit(","), g(jkey, ept), lit('],"corrupted":'), pl.Series(take(jcorrupted, part + 1)),
            lit(',"template":'), g(jtemplate, rr), lit(',"template_source":'), g(jsource, rr),
            lit(f',"seed":{int(seed)},"attempt":'),
            pl.when(pl.Series(neg)).then(pl.Series(attempt).cast(pl.String)).otherwise(lit("null")),
            lit(',"asserts":'),
            pl.when(pl.Series(~neg)).then(pl.concat_str([lit("["), g(jlabel, eh), lit(","), g(jrkey, rr), lit(","),
                                                          g(jlabel, et), lit("]")])).otherwise(lit("null")),
            lit("}"),
        ])).to_series()
        columns = {
            "item_id": _hex_ids(_hash(snapshot, neg, h, r, t, ph, pr, pt)),
            "suite": constant("grapheval"), "task": constant(task), "answer_format": constant("true_false_idk"),
            "question": arrow(_render(drawn.templates, plabels, e_row, h, r, t)),
            "expected": take(pa.array(["true", "false"]), neg.astype(np.int64)),
            "group_id": _hex_ids(_hash(snapshot, ph, pr, pt)),
            "breakdown": breakdown, "evidence": arrow(evidence),
            "polarity": take(pa.array(["positive", "negative"]), neg.astype(np.int64)),
            "corrupted": take(pa.array(["none", *PARTS]), part + 1),
            "head_key": take(keys, eh), "relation_key": take(rkeys, rr), "tail_key": take(keys, et),
            "head_label": take(labels, eh), "relation_label": take(rlabels, rr), "tail_label": take(labels, et),
            "template_source": take(source, rr),
            "attempt": pa.array(attempt, pa.int64(), mask=~neg),
            "negatives": pa.array(n_neg[pos]),
            "mean_degree": pa.array(mean_degree, pa.float64()),
        }
        return pa.table(columns).cast(schema)

    return ItemStream(chunk, has, drawn.relation, drawn.neg_relation)


def _entities_sql() -> str:
    """``sql/grapheval/entities.sql`` (the temp table ``_ge_ent``), built on ``entity_arrays.sql``: one definition of
    the normalised label and the primary type for the draw and the items."""
    return load_sql("grapheval/entities").replace("{entity_arrays}", load_sql("grapheval/entity_arrays"))


def build_statements(con: duckdb.DuckDBPyConnection, options: StatementOptions = StatementOptions(), *,
                     snapshot_id: str = "", seed: int = 0, rejects: bool = True,
                     stream: bool = False) -> StatementSet:  # fmt: skip
    """The GraphEval statements of the KG whose tables ``con`` reads unqualified (``entities``, ``relations``,
    ``triples``, ``entity_types``) as items: see the module docstring. ``rejects=False`` skips building the table
    of rejected rows (the counts are kept), for runs over a whole KG where only the counts are wanted.
    ``stream=True`` gives the items as an :class:`ItemStream` (built when read) instead of a table.

    The temporary table ``_ge_ent`` is created on ``con`` and dropped before returning; ``con`` may be read-only.
    """
    try:
        drawn = draw_statements(con, options, seed=seed, rejects=rejects)
        con.execute(_entities_sql())  # keys, labels, primary types and degrees for the items
        n_pos = len(drawn.head)
        con.register("_ge_templates", template_table(drawn.templates))
        # the rejects first: their joins then run before the items take their memory
        if rejects:
            assert drawn.rejected is not None
            rej, ex = drawn.rejected, drawn.exhausted
            con.register("_ge_pos", pa.table({"pos": np.arange(n_pos, dtype=np.int64), "head": drawn.head,
                                              "relation": drawn.relation, "tail": drawn.tail}))
            con.register("_ge_rej", pa.table({
                "pos": np.concatenate([rej["p"], ex[:, 0]]), "j": np.concatenate([rej["j"], ex[:, 1]]),
                "attempt": pa.array(np.concatenate([rej["attempt"], np.zeros(len(ex), np.int64)]),
                                    mask=np.arange(len(rej["p"]) + len(ex)) >= len(rej["p"])),
                "part": pa.array(PARTS).take(pa.array(np.concatenate([rej["part"], np.full(len(ex), -1)]),
                                                      mask=np.arange(len(rej["p"]) + len(ex)) >= len(rej["p"]))),
                "head": np.concatenate([rej["head"], np.full(len(ex), -1)]),
                "relation": np.concatenate([rej["relation"], np.full(len(ex), -1)]),
                "tail": np.concatenate([rej["tail"], np.full(len(ex), -1)]),
                "reason": pa.array([*(_CHECKS[c - 1] for c in rej["reason"]), *["exhausted"] * len(ex)], pa.string()),
            }))
            con.register("_ge_drop", pa.table({"head": drawn.dropped[:, 0], "relation": drawn.dropped[:, 1],
                                               "tail": drawn.dropped[:, 2]}))
            dropped = con.execute(load_sql("grapheval/positives_dropped")).to_arrow_table()
            rejected = con.execute(load_sql("grapheval/rejects")).to_arrow_table()
            reject_table = pa.concat_tables([dropped.cast(_REJECT_SCHEMA), rejected.cast(_REJECT_SCHEMA)])
        else:
            reject_table = _REJECT_SCHEMA.empty_table()
        items = _item_stream(con, drawn, snapshot_id=snapshot_id, seed=seed, task=options.task)
    finally:
        for name in _TEMP:
            con.execute(f"DROP TABLE IF EXISTS temp.main.{name}")
        for name in _REGISTERED:
            con.unregister(name)  # a no-op for a name an error kept from being registered
    return StatementSet(items=items if stream else items.read_all(), rejects=reject_table,
                        reject_counts=drawn.reject_counts, templates=drawn.templates, metadata=drawn.metadata)


def verify_negatives(con: duckdb.DuckDBPyConnection, triples: Sequence[tuple[str, str, str]]) -> list[str | None]:
    """Why each ``(head key, relation key, tail key)`` would be rejected as a negative by the KG checks of
    :func:`build_statements` (``in_kg``, ``same_label``, or ``unknown_key`` for a key the KG lacks), None for a
    triple verified false. Use it to check negatives from elsewhere (e.g. CoDEx's human-checked hard negatives)."""
    check = pa.table({"row": pa.array(range(len(triples)), pa.int64()),
                      "head": pa.array([t[0] for t in triples], pa.string()),
                      "relation": pa.array([t[1] for t in triples], pa.string()),
                      "tail": pa.array([t[2] for t in triples], pa.string())})
    con.register("_ge_check", check)
    try:
        con.execute(_entities_sql())
        con.execute(load_sql("grapheval/label_triples"))
        reasons = [r for _, r in con.execute(load_sql("grapheval/verify")).fetchall()]
    finally:
        for name in ("_ge_ent", "_ge_label_triples"):
            con.execute(f"DROP TABLE IF EXISTS temp.main.{name}")
        con.unregister("_ge_check")
    return reasons
