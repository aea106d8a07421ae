"""One claim checker for free-text answers: answer -> atomic facts -> (subject, relation, object, negated) claims ->
mentions linked to KG entities -> each claim checked against the unperturbed KG.

    >>> kg = KGFacts.from_triples([("Guernica", "painted_by", "Picasso")], functional_share=0.95)
    >>> check_fact("Guernica was painted by Picasso.", kg).label
    'supported'

**Extraction.** :func:`extract_claims` asks a judge model (a callable ``prompt -> reply``) for the answer's atomic
facts as JSON (:data:`CLAIMS_JSON_SCHEMA`, validated by :class:`ClaimList`); without a judge, or when its reply does
not validate, the offline heuristic (:func:`split_facts`, then the KG's entity mentions of each fact with the words
between them as the relation phrase) extracts them, and says so: the extractor is ``"heuristic"``.

**Linking.** A mention names an entity when it is the entity's label, normalised label (case, accents, punctuation)
or an alias; a mention that names two entities is ambiguous and stays unlinked (reason ``"ambiguous"``).

**Verification** (:func:`check_claim`). The relation phrase alone (never the whole sentence) is read as a KG
relation: its label, key, a phrasing ("born in", "X is the director of Y", "Picasso painted Guernica"), or, with
an embedder, the closest relation label at cosine >= ``threshold``. Then:

1. the KG holds the claim (as stated, as a declared inverse reversed, or reversed for a symmetric relation): a
   positive claim is **supported** (reason ``"triple"``), a negated one **contradicted** (``"negated"``);
2. the relation is functional in practice (at least ``functional_share`` of its subjects have one object) and the
   KG gives the subject another object: a positive claim is **contradicted** (``"functional"``), a negated one
   supported;
3. else **not in KG**: the KG holds the reverse of a non-symmetric claim (``"reversed"``), or is silent
   (``"no_triple"``), or a mention does not link (``"unlinked"`` / ``"ambiguous"``), or the phrase names no KG
   relation (``"relation"``), or the fact yields no claim (``"no_claim"``).
"""

from __future__ import annotations

import itertools
import json
import re
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kgprobe.generation.prompts import DATA_NOTICE, fence
from kgprobe.kg.queries import normalise_label
from kgprobe.scoring.lexicon import (
    COUNTRIES,
    DEMONYMS,
    EVALUATIVE,
    GENDERED_KIN,
    MAKER_WORDS,
    SAME_KIND_CONCEPTS,
    content_words,
    covered,
    forms,
    known,
    participle,
    parts_of_speech,
)
from kgprobe.scoring.literals import Literal, agree, parse_literal
from kgprobe.scoring.relations import (
    CONTAINMENT_HOPS,
    MEANING_SHARE,
    MIN_SUBJECTS,
    SINGLE_VALUED_SHARE,
    RelationProfile,
    by_meaning,
    compatibility,
    containment,
    direction,
    most_values,
    phrase_file,
    profile_of,
    reads_both_ways,
)

__all__ = [
    "CLAIMS_JSON_SCHEMA",
    "CLAIMS_TEMPLATE_ID",
    "CONTRADICTED",
    "CONTRADICTION_THRESHOLD",
    "DEFAULT_SETTINGS",
    "PHRASE_THRESHOLD",
    "CheckerSettings",
    "HEURISTIC",
    "VERIFY_JSON_SCHEMA",
    "VERIFY_TEMPLATE_ID",
    "NOT_IN_KG",
    "SUPPORTED",
    "Claim",
    "ClaimList",
    "KGFacts",
    "Verdict",
    "check_claim",
    "check_fact",
    "claims_prompt",
    "extract_claims",
    "factscore",
    "heuristic_claims",
    "judge_claim",
    "parse_claims",
    "parse_verification",
    "split_facts",
    "subject_triples",
    "verify_prompt",
]

SUPPORTED, CONTRADICTED, NOT_IN_KG = "supported", "contradicted", "not_in_kg"
#: The extractor name of the offline fallback, shown wherever its numbers appear.
HEURISTIC = "heuristic"
#: The claim-extraction prompt's id: ``-v2`` fences the answer as data (``-v1``, unfenced, is no longer asked).
CLAIMS_TEMPLATE_ID = "claims-extract-v2"

_STOP = {"a", "an", "the", "of", "in", "on", "at", "by", "to", "for", "and", "or", "s"}
_AUX = {"is", "was", "are", "were", "be", "been", "being", "has", "have", "had", "did", "does", "do", "also",
        "the", "a", "an", "its", "his", "her", "their", "which", "who", "that", "one", "then", "later", "first",
        "famously", "originally"}
_PREP_END = {"of", "in", "by", "at", "to", "with", "from", "on", "for", "into", "through", "after", "under"}
_NEGATION = re.compile(r"\b(?:not|never|no longer|cannot)\b|n['\u2019]t\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<!\b[A-Z]\.)(?<!\b(?:Dr|Mr|Ms|St|Jr|Sr|vs|Mt|No|Op|op|no)\.)(?<!\bVol\.)(?<=[.!?])\s+(?=[A-Z0-9\"\u201c(])"
                       r"|\s*\n+\s*|;\s+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]+|\d+[.)]|\(\d+\))\s+")


# --------------------------------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Claim:
    """One atomic claim: surface mentions of its subject and object, the relation phrase as written."""

    subject: str
    relation: str
    object: str
    negated: bool = False
    fact: str = ""


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict: ``label`` (supported / contradicted / not_in_kg), ``reason`` (triple, inverse, symmetric,
    negated, functional, reversed, no_triple, unlinked, ambiguous, relation, no_claim, gendered, another_time,
    another_entity), the claim, and the KG triple that decided it as keys (``triple``) and as the KG's ids
    (``ids``)."""

    label: str
    reason: str
    claim: Claim | None
    triple: tuple[str, str, str] | None = None
    ids: tuple[Any, Any, Any] | None = None
    fact: str = ""

    @property
    def decidable(self) -> bool:
        return self.label != NOT_IN_KG


# --------------------------------------------------------------------------------------------------- the KG


_NON_WORD = re.compile(r"[\W_]+")


def _norm_tokens(text: str) -> tuple[str, ...]:
    """The words of :func:`normalise_label` (a fast path for plain ASCII text, which needs no unquoting or accent
    folding)."""
    if text.isascii() and "%" not in text:
        return tuple(_NON_WORD.sub(" ", text.lower()).split())
    return tuple(normalise_label(text).split())


def _int_columns(triples: Iterable[tuple[Any, Any, Any]]) -> np.ndarray | None:
    """The triples as an ``(n, 3)`` int64 array in their iteration order, or None when one of their ids is not an
    int (keys, as :meth:`KGFacts.from_triples` has them) or there are none: the indexes below are then built in
    Python."""
    flat = list(itertools.chain.from_iterable(triples))
    if not flat or set(map(type, flat)) != {int}:
        return None
    try:
        return np.array(flat, dtype=np.int64).reshape(-1, 3)
    except OverflowError:
        return None


def _grouped(keys: Sequence[np.ndarray], values: np.ndarray) -> dict[Any, set[Any]]:
    """key -> set of values, the same dict (keys in order of first occurrence, each set's values added in the rows'
    order) as ``out.setdefault(key, set()).add(value)`` over the rows, built from sorted arrays: a key is one
    column's value, or the tuple of several columns' values."""
    if not len(values):
        return {}
    order = np.lexsort(tuple(keys)[::-1])  # stable: within a key, the rows' own order
    cols = [k[order] for k in keys]
    change = np.zeros(len(order), dtype=bool)
    change[0] = True
    for c in cols:
        change[1:] |= c[1:] != c[:-1]
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], len(order)).tolist()
    first = np.argsort(order[starts], kind="stable").tolist()  # keys by their first row
    vals = values[order].tolist()
    names = [c[starts].tolist() for c in cols]
    key_of = names[0] if len(names) == 1 else list(zip(*names))
    begin = starts.tolist()
    return {key_of[g]: set(vals[begin[g]:ends[g]]) for g in first}


def _subject_counts(triples: Iterable[tuple[Any, Any, Any]], cols: np.ndarray | None = None
                    ) -> dict[Any, tuple[int, int]]:  # fmt: skip
    """Per relation: how many subjects it has, and how many of them have one object (the triples distinct)."""
    if cols is None:
        cols = _int_columns(triples)
    if cols is None:
        tails: dict[tuple[Any, Any], set[Any]] = {}
        for h, r, t in triples:
            tails.setdefault((r, h), set()).add(t)
        out: dict[Any, list[int]] = {}
        for (r, _), ts in tails.items():
            n = out.setdefault(r, [0, 0])
            n[0] += 1
            n[1] += len(ts) == 1
        return {r: (n, single) for r, (n, single) in out.items()}
    pairs, counts = np.unique(cols[:, [1, 0]], axis=0, return_counts=True)  # (relation, subject): its objects
    rels, subjects = np.unique(pairs[:, 0], return_counts=True)
    singles = np.bincount(np.searchsorted(rels, pairs[:, 0]), weights=counts == 1, minlength=len(rels))
    return {r: (n, int(k)) for r, n, k in zip(rels.tolist(), subjects.tolist(), singles.tolist())}


def _valued(triples: Iterable[tuple[Any, Any, Any]], value_set: set[Any], cols: np.ndarray | None = None
            ) -> dict[Any, bool]:  # fmt: skip
    """Per relation: whether every object of it is a value (a year, a date, a number)."""
    if cols is None or any(type(v) is not int for v in value_set):
        valued: dict[Any, bool] = {}
        for h, r, t in triples:
            valued[r] = valued.get(r, True) and t in value_set
        return valued
    rels, idx = np.unique(cols[:, 1], return_inverse=True)
    values = np.fromiter(value_set, dtype=np.int64, count=len(value_set))
    other = np.bincount(idx.ravel(), weights=~np.isin(cols[:, 2], values), minlength=len(rels))
    return {r: not n for r, n in zip(rels.tolist(), other.tolist())}


def _signatures(cols: np.ndarray, rels: Sequence[Any]) -> dict[Any, tuple[frozenset[Any], ...]]:
    """Per relation of ``rels``: the relations its heads leave and enter, and those its tails leave and enter (the
    fourth index of :attr:`KGFacts._roles`), as products of sparse entity x relation incidence matrices."""
    from scipy import sparse

    ents, ends = np.unique(cols[:, [0, 2]], return_inverse=True)
    ids, rel = np.unique(cols[:, 1], return_inverse=True)
    ends, rel = ends.reshape(-1, 2), rel.ravel()
    ones = np.ones(len(rel), dtype=np.int64)
    side = []
    for k in (0, 1):  # entity x relation: the entity is a head (0) or a tail (1) of the relation
        m = sparse.csr_matrix((ones, (ends[:, k], rel)), shape=(len(ents), len(ids)))
        m.data[:] = 1
        side.append(m)
    prods = [(side[a].T.tocsr() @ side[b]).tocsr() for a in (0, 1) for b in (0, 1)]
    ids_list = ids.tolist()
    pos = {r: i for i, r in enumerate(ids_list)}
    out: dict[Any, tuple[frozenset[Any], ...]] = {}
    for r in rels:
        i = pos[r]
        out[r] = tuple(frozenset(ids[p.indices[p.indptr[i]:p.indptr[i + 1]]].tolist()) for p in prods)
    return out


def _functional(triples: Iterable[tuple[Any, Any, Any]], share: float, min_subjects: int = MIN_SUBJECTS,
                labels: Mapping[Any, str] | None = None, keys: Mapping[Any, str] | None = None,
                values: Iterable[Any] = (), columns: np.ndarray | None = None) -> frozenset[Any]:  # fmt: skip
    """Relations single-valued in practice: at least ``min_subjects`` subjects, of which at least ``share`` have one
    object (fewer subjects say little: one item's small KG would make every relation functional); with fewer
    subjects, none of them with two objects, a relation whose label names something single-valued by meaning
    (:func:`kgprobe.scoring.relations.by_meaning`: a birth date, a publication date) given ``labels``; with enough
    subjects, such a relation at :data:`~kgprobe.scoring.relations.MEANING_SHARE` of them (a ``share`` stricter
    than the default is kept for it too). Counted over arrays when the ids are ints (a KG from DuckDB)."""
    if not isinstance(triples, (set, frozenset, list, tuple)):
        triples = list(triples)
    cols = _int_columns(triples) if columns is None else columns
    heads = _subject_counts(triples, cols)
    valued = _valued(triples, set(values), cols)
    out = {r for r, (n, single) in heads.items() if n >= min_subjects and single / n >= share}
    if labels is not None:
        def meant(r: Any) -> bool:
            return by_meaning(profile_of(labels.get(r, str(r)), key=(keys or {}).get(r, str(r))),
                              values=valued.get(r, False))

        out |= {r for r, (n, single) in heads.items() if 0 < n < min_subjects and single == n and meant(r)}
        out |= {r for r, (n, single) in heads.items() if n >= min_subjects
                and single / n >= (min(share, MEANING_SHARE) if share <= SINGLE_VALUED_SHARE else share)
                and meant(r)}
    return frozenset(out)


@dataclass(frozen=True)
class KGFacts:
    """What claims are checked against: entity labels (and aliases), relation labels and keys, the triples,
    relations functional in practice, declared inverses and symmetric relations, relation phrasings besides
    a user's phrase file (relation id -> phrase -> reversed). Ids are whatever the source uses (DuckDB ids,
    keys)."""

    entities: Mapping[Any, str]
    relations: Mapping[Any, str]
    triples: frozenset[tuple[Any, Any, Any]]
    functional: frozenset[Any] = frozenset()
    relation_keys: Mapping[Any, str] = field(default_factory=dict)
    entity_keys: Mapping[Any, str] = field(default_factory=dict)
    aliases: Mapping[Any, tuple[str, ...]] = field(default_factory=dict)
    inverses: Mapping[Any, frozenset[Any]] = field(default_factory=dict)
    symmetric: frozenset[Any] = frozenset()
    phrasings: Mapping[Any, Mapping[str, bool]] = field(default_factory=dict)
    declared: Mapping[Any, bool] = field(default_factory=dict)

    # -------------------------------------------------------------------------------------------- builders
    @classmethod
    def from_triples(cls, triples: Iterable[tuple[str, str, str]], *, entity_labels: Mapping[str, str] | None = None,
                     relation_labels: Mapping[str, str] | None = None,
                     aliases: Mapping[str, Sequence[str]] | None = None, inverses: Mapping[str, str] | None = None,
                     symmetric: Iterable[str] = (), functional_share: float = SINGLE_VALUED_SHARE,
                     phrasings: Mapping[str, Mapping[str, bool]] | None = None, min_subjects: int = MIN_SUBJECTS,
                     single_valued: Mapping[str, bool] | Iterable[str] = ()) -> KGFacts:  # fmt: skip
        """From ``(head, relation, tail)`` keys; labels default to the keys (underscores as spaces).
        ``single_valued`` declares relations single-valued (a mapping may also declare one many-valued), whatever
        the data say; otherwise a relation is single-valued when ``min_subjects`` subjects or more, ``functional_share``
        of them with one object, say so."""
        trip = frozenset((str(h), str(r), str(t)) for h, r, t in triples)
        ents = {e for h, _, t in trip for e in (h, t)} | set(entity_labels or {})
        rels = {r for _, r, _ in trip} | set(relation_labels or {})
        elab = {e: str((entity_labels or {}).get(e, e.replace("_", " "))) for e in ents}
        rlab = {r: str((relation_labels or {}).get(r, r.replace("_", " "))) for r in rels}
        return cls(entities=elab, relations=rlab, triples=trip,
                   functional=_declare(_functional(trip, functional_share, min_subjects, rlab, {r: r for r in rels},
                                                   values={e for e, lab in elab.items() if parse_literal(lab)}),
                                       single_valued, rels),
                   relation_keys={r: r for r in rels}, entity_keys={e: e for e in ents},
                   aliases={k: tuple(v) for k, v in (aliases or {}).items()},
                   inverses=_inverse_sets(inverses or {}), symmetric=frozenset(symmetric),
                   phrasings=_phrasings(rlab, {r: r for r in rels}, phrasings),
                   declared=_declared(single_valued, {r: r for r in rels}))

    @classmethod
    def from_duckdb(cls, con: Any, kg: str | None = None, *, functional_share: float = SINGLE_VALUED_SHARE,
                    inverses: Mapping[str, str] | None = None, symmetric: Iterable[str] = (),
                    phrasings: Mapping[str, Mapping[str, bool]] | None = None, min_share: float | None = None,
                    min_subjects: int = MIN_SUBJECTS,
                    single_valued: Mapping[str, bool] | Iterable[str] = ()) -> KGFacts:  # fmt: skip
        """The whole unperturbed KG ``kg`` (a schema; None: the current one) from a DuckDB connection or file path.
        ``inverses`` / ``symmetric`` / ``phrasings`` / ``single_valued`` are keyed by relation key; entity keys'
        local names are aliases. ``min_share`` is the old name of ``functional_share``."""
        import duckdb

        from kgprobe.sql import quote_identifier

        own = isinstance(con, (str, Path))
        conn = duckdb.connect(str(con), read_only=True) if own else con
        try:
            prefix = quote_identifier(str(kg)) + "." if kg else ""
            ents = conn.execute(f"SELECT id, key, label FROM {prefix}entities").fetchall()
            rels = conn.execute(f"SELECT id, key, label FROM {prefix}relations").fetchall()
            trip = frozenset(tuple(map(int, t)) for t in
                             conn.execute(f"SELECT head, relation, tail FROM {prefix}triples").fetchall())
        finally:
            if own:
                conn.close()
        share = functional_share if min_share is None else min_share
        rel_by_key = {str(k): int(i) for i, k, _ in rels}
        inv = {rel_by_key[a]: rel_by_key[b] for a, b in (inverses or {}).items() if a in rel_by_key and b in rel_by_key}
        rlab = {int(i): str(lab) for i, _, lab in rels}
        rkey = {int(i): str(k) for i, k, _ in rels}
        declared = _declared(single_valued, rkey)
        cols = _int_columns(trip)
        functional = _functional(trip, share, min_subjects, rlab, rkey,
                                 values={int(i) for i, _, lab in ents if parse_literal(str(lab))}, columns=cols)
        functional = frozenset({r for r in functional if declared.get(r, True)} | {r for r, v in declared.items() if v})
        out = cls(entities={int(i): str(lab) for i, _, lab in ents}, relations=rlab, triples=trip,
                   functional=functional, relation_keys=rkey,
                   entity_keys={int(i): str(k) for i, k, _ in ents},
                   aliases={int(i): (_local_name(str(k)),) for i, k, _ in ents if _local_name(str(k))},
                   inverses=_inverse_sets(inv), symmetric=frozenset(rel_by_key[s] for s in symmetric if s in rel_by_key),
                   phrasings=_phrasings(rlab, rkey, phrasings), declared=declared)
        out.__dict__["_columns"] = cols  # the triples' array, in their iteration order: read once
        return out

    @classmethod
    def from_evidence(cls, evidence: Mapping[str, Any]) -> KGFacts:
        """From the JSON-able form :meth:`to_evidence` writes (an item's evidence, or its ``kg`` entry)."""
        kg = evidence.get("kg", evidence)
        rels = kg.get("relations", [])
        rkey = {int(r[0]): str(r[2]) for r in rels if len(r) > 2}
        rlab = {int(r[0]): str(r[1]) for r in rels}
        return cls(entities={int(e[0]): str(e[1]) for e in kg.get("entities", [])}, relations=rlab,
                   triples=frozenset((int(h), int(r), int(t)) for h, r, t in kg.get("triples", [])),
                   functional=frozenset(int(r) for r in kg.get("functional", [])), relation_keys=rkey,
                   entity_keys={int(e[0]): str(e[2]) for e in kg.get("entities", []) if len(e) > 2},
                   aliases={int(k): tuple(v) for k, v in (kg.get("aliases") or {}).items()},
                   inverses=_inverse_sets({int(a): int(b) for a, b in kg.get("inverses", [])}),
                   symmetric=frozenset(int(r) for r in kg.get("symmetric", [])),
                   phrasings={int(k): {str(p): bool(v) for p, v in d.items()}
                              for k, d in (kg.get("phrasings") or {}).items()})

    def to_evidence(self) -> dict[str, Any]:
        """The JSON-able form :meth:`from_evidence` reads (integer ids)."""
        out: dict[str, Any] = {
            "entities": sorted([i, lab] + ([self.entity_keys[i]] if i in self.entity_keys else [])
                               for i, lab in self.entities.items()),
            "relations": sorted([i, lab, self.relation_keys.get(i, lab)] for i, lab in self.relations.items()),
            "triples": sorted(list(t) for t in self.triples), "functional": sorted(self.functional)}
        if self.aliases:
            out["aliases"] = {str(k): list(v) for k, v in sorted(self.aliases.items())}
        if self.inverses:
            out["inverses"] = sorted([a, b] for a, bs in self.inverses.items() for b in bs)
        if self.symmetric:
            out["symmetric"] = sorted(self.symmetric)
        if self.phrasings:
            out["phrasings"] = {str(k): dict(v) for k, v in sorted(self.phrasings.items())}
        return out

    # -------------------------------------------------------------------------------------------- indexes
    @cached_property
    def _names(self) -> dict[tuple[str, ...], tuple[tuple[Any, ...], tuple[Any, ...]]]:
        """Normalised name -> (entities whose label it is, entities whose alias it is)."""
        labels: dict[tuple[str, ...], list[Any]] = {}
        for eid, label in self.entities.items():
            toks = _norm_tokens(label)
            if _nameable(toks):
                labels.setdefault(toks, []).append(eid)
        out = {k: (tuple(dict.fromkeys(v)), ()) for k, v in labels.items()}
        aliases: dict[tuple[str, ...], list[Any]] = {}
        for eid, names in self.aliases.items():
            if eid not in self.entities:
                continue
            for name in names:
                toks = _norm_tokens(name)
                if _nameable(toks):
                    aliases.setdefault(toks, []).append(eid)
        for k, v in aliases.items():
            out[k] = (out.get(k, ((), ()))[0], tuple(dict.fromkeys(v)))
        return out

    @cached_property
    def _loose_names(self) -> dict[tuple[str, ...], tuple[Any, ...]]:
        """Names read loosely, for mentions no label or alias names exactly: the words in any order without stop
        words and club suffixes ("Summer Olympics in 1992" for "1992 Summer Olympics", "Real Madrid" for "Real
        Madrid CF"), and a given name cut to its initial ("Robert Lewandowski" for "R. Lewandowski")."""
        out: dict[tuple[str, ...], list[Any]] = {}
        for eid, label in self.entities.items():
            if eid in self._literals:
                continue
            for name in (label, *self.aliases.get(eid, ())):
                for key in {_loose_key(_norm_tokens(name)), _loose_key(_norm_tokens(name), suffixes=True)}:
                    if key and len(key) > 1 or key and len(key[0]) > 3:
                        out.setdefault(key, [])
                        if eid not in out[key]:
                            out[key].append(eid)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def _surnames(self) -> dict[tuple[str, ...], tuple[Any, ...]]:
        """The surname of a label written with an initial ("C. Tolisso" -> "tolisso"), when it is no other name."""
        out: dict[tuple[str, ...], list[Any]] = {}
        for toks, ids in self._initial_names.items():
            out.setdefault(toks[1:], []).extend(ids)
        return {k[0]: tuple(dict.fromkeys(v)) for k, v in out.items() if len(k) == 1 and k not in self._names}

    @cached_property
    def _initial_names(self) -> dict[tuple[str, ...], tuple[Any, ...]]:
        """Labels written with an initial ("R. Lewandowski") by (initial, the other words)."""
        out: dict[tuple[str, ...], list[Any]] = {}
        for eid, label in self.entities.items():
            for name in (label, *self.aliases.get(eid, ())):
                toks = _norm_tokens(name)
                if len(toks) > 1 and len(toks[0]) == 1 and toks[0].isalpha():
                    out.setdefault(toks, [])
                    if eid not in out[toks]:
                        out[toks].append(eid)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def _exact(self) -> dict[str, tuple[Any, ...]]:
        out: dict[str, list[Any]] = {}
        for eid, label in self.entities.items():
            out.setdefault(label, []).append(eid)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def _longest(self) -> int:
        return max((len(k) for k in self._names), default=0)

    @cached_property
    def _columns(self) -> np.ndarray | None:
        """The triples as an ``(n, 3)`` int64 array in their iteration order (None when the ids are not ints): the
        indexes below are built from it with sorts, not a dict operation per triple."""
        return _int_columns(self.triples)

    @cached_property
    def _subject_counts(self) -> dict[Any, tuple[int, int]]:
        """Per relation: its subjects, and how many of them have one object."""
        return _subject_counts(self.triples, self._columns)

    @cached_property
    def _by_head(self) -> dict[tuple[Any, Any], set[Any]]:
        cols = self._columns
        if cols is not None:
            return _grouped((cols[:, 0], cols[:, 1]), cols[:, 2])
        out: dict[tuple[Any, Any], set[Any]] = {}
        for h, r, t in self.triples:
            out.setdefault((h, r), set()).add(t)
        return out

    @cached_property
    def _literals(self) -> dict[Any, Literal]:
        """Entities that are values (a year, a date, a number: their label parses as one and they are never a
        triple's head) -> the value."""
        heads = set(self._columns[:, 0].tolist()) if self._columns is not None else {h for h, _, _ in self.triples}
        out: dict[Any, Literal] = {}
        for eid, label in self.entities.items():
            if eid in heads:
                continue
            lit = parse_literal(label)
            if lit is not None:
                out[eid] = lit
        return out

    @cached_property
    def _tail_kinds(self) -> dict[Any, tuple[int, list[str]]]:
        """Per relation: how many distinct tails it has, and the value kinds of those that are literals: what
        :attr:`profiles` reads of :attr:`_roles`, from one sort of (relation, tail) keys instead of every role index
        (on a 20M-triple KG the relation file waited minutes for indexes it did not read)."""
        cols, lits = self._columns, self._literals
        low = base = span = 0
        if cols is not None and len(cols):
            low, base = int(cols[:, 2].min()), int(cols[:, 1].min())
            span = int(cols[:, 2].max()) - low + 1
        if (cols is None or not len(cols) or "_roles" in self.__dict__ or not all(type(e) is int for e in lits)
                or int(cols[:, 1].max()) - base + 1 > (1 << 62) // span):  # no int columns, or the keys overflow
            _, tails, _, _, _ = self._roles
            return {r: (len(ts), [lits[t].kind for t in ts if t in lits]) for r, ts in tails.items()}
        keys = np.unique((cols[:, 1] - base) * span + (cols[:, 2] - low))  # distinct (relation, tail), sorted
        rels, tails = keys // span + base, keys % span + low
        ids, counts = np.unique(rels, return_counts=True)
        out: dict[Any, tuple[int, list[str]]] = {r: (n, []) for r, n in zip(ids.tolist(), counts.tolist())}
        if lits:
            literal = np.isin(tails, np.fromiter(lits, dtype=np.int64, count=len(lits)))
            for r, t in zip(rels[literal].tolist(), tails[literal].tolist()):
                out[r][1].append(lits[t].kind)
        return out

    @cached_property
    def _roles(self) -> tuple[dict[Any, set[Any]], dict[Any, set[Any]], dict[Any, set[Any]], dict[Any, set[Any]],
                              dict[Any, tuple[frozenset[Any], ...]]]:  # fmt: skip
        """Per relation its heads and tails; per entity the relations it leaves and enters; per relation the
        relations its heads and its tails take part in (what "an entity like a head of R" means, without types)."""
        heads: dict[Any, set[Any]] = {}
        tails: dict[Any, set[Any]] = {}
        out_r: dict[Any, set[Any]] = {}
        in_r: dict[Any, set[Any]] = {}
        cols = self._columns
        if cols is not None:
            h_, r_, t_ = cols[:, 0], cols[:, 1], cols[:, 2]
            heads, tails, out_r, in_r = _grouped((r_,), h_), _grouped((r_,), t_), _grouped((h_,), r_), \
                _grouped((t_,), r_)
        for h, r, t in self.triples if cols is None else ():
            heads.setdefault(r, set()).add(h)
            tails.setdefault(r, set()).add(t)
            out_r.setdefault(h, set()).add(r)
            in_r.setdefault(t, set()).add(r)
        sig: dict[Any, tuple[frozenset[Any], ...]] = {}
        if cols is not None:
            return heads, tails, out_r, in_r, _signatures(cols, list(heads))
        for r in heads:
            parts: list[frozenset[Any]] = []
            for side in (heads[r], tails[r]):
                o: set[Any] = set()
                i: set[Any] = set()
                for e in side:
                    o |= out_r.get(e, set())
                    i |= in_r.get(e, set())
                parts += [frozenset(o), frozenset(i)]
            sig[r] = tuple(parts)
        return heads, tails, out_r, in_r, sig

    def _can_be(self, e: Any, rid: Any, side: int) -> bool:
        """Whether entity ``e`` can be the head (``side`` 0) or tail (1) of ``rid``: it is one, or it takes part in
        a relation that the relation's heads (tails) take part in, or the KG says nothing of it."""
        heads, tails, out_r, in_r, sig = self._roles
        if e in (heads if side == 0 else tails).get(rid, ()):
            return True
        if e in self._literals:
            return False
        o, i = out_r.get(e, set()), in_r.get(e, set())
        if not o and not i:
            return True
        so, si = sig.get(rid, (frozenset(),) * 4)[2 * side: 2 * side + 2]
        if side == 1 and rid in self.profiles and self.profiles[rid].value != "entity":
            return False  # a relation of values takes values
        if side == 1 and any(self._places[end] & tails.get(rid, set()) for end in (0, 1) if e in self._places[end]):
            # things that lie in others (Milan, Auckland) are of one kind, and things that hold others (Italy, New
            # Zealand): whichever containment relation the KG happens to use for each
            return True
        if (not so and si <= {rid}) if side == 1 else (not si and so <= {rid}):
            # the relation's tails (heads) do nothing else here: nothing to compare with, unless the entity is
            # the tail (head) of another relation
            return not ((i if side == 1 else o) - {rid})
        return bool((o | i) & (so | si))  # it takes part in a relation its like do, either way

    def _possible(self, h: Any, rid: Any, t: Any) -> bool:
        """Whether nothing rules out (h, rid, t): a value is never a head, and an entity that is only ever the
        relation's tail (head) is not its head (tail)."""
        heads, tails, _, _, _ = self._roles
        if rid not in heads:
            return any(self._possible(t, inv, h) for inv in self.inverses.get(rid, ()) if inv in heads)
        if h in self._literals:
            return False
        if _same_kind(self, rid):  # a person can be a parent and a child: the roles prove nothing
            return True
        hs, ts = heads[rid], tails[rid]
        return not (h in ts and h not in hs) and not (t in hs and t not in ts)

    def _plausible(self, h: Any, rid: Any, t: Any) -> bool:
        """Whether (h, rid, t) is a triple the KG could hold by the roles its entities play; a relation with no
        triples of its own is read through a declared inverse."""
        if rid in self._roles[0]:
            return self._can_be(h, rid, 0) and self._can_be(t, rid, 1)
        return any(self._can_be(t, inv, 0) and self._can_be(h, inv, 1) for inv in self.inverses.get(rid, ()))

    @cached_property
    def profiles(self) -> dict[Any, RelationProfile]:
        """Every relation as the checker reads it (:class:`kgprobe.scoring.relations.RelationProfile`): phrase set
        from its label (its key's words when it has no label), value kind and single-valued verdict from the data
        (or a declaration), symmetric when declared, when its words say so, or when the data do."""
        tail_kinds = self._tail_kinds
        counts = self._subject_counts
        out: dict[Any, RelationProfile] = {}
        for rid, label in self.relations.items():
            key = self.relation_keys.get(rid, str(rid))
            prof = profile_of(label, key=key, phrases=dict(self.phrasings.get(rid) or {}))
            n_tails, kinds = tail_kinds.get(rid, (0, []))
            value = "entity"
            if n_tails and len(kinds) >= 0.5 * n_tails:
                value = max(sorted(set(kinds)), key=kinds.count)  # a tie: the first kind by name, every run
            subjects, single = counts.get(rid, (0, 0))
            share = single / subjects if subjects else 0.0
            sym = rid in self.symmetric or prof.symmetric
            out[rid] = replace(prof, value=value, subjects=subjects, share=share, symmetric=sym,
                               single_valued=rid in self.functional, declared=rid in self.declared)
        return out

    # -------------------------------------------------------------------------------------------- linking
    def candidates(self, mention: str) -> tuple[tuple[Any, ...], str]:
        """(entities, status) a whole mention may name: by exact label, normalised label, alias or demonym; a
        mention that holds one name and otherwise only lower-case descriptors, a year or a parenthesis ("the film
        Avatar", "Avatar (2009 film)") names it too. ``linked`` (one entity), ``ambiguous`` (several), ``unlinked``."""
        text = mention.strip().strip("\"'“”‘’")
        text = re.sub(r"['’]s$", "", text)
        exact = self._exact.get(text, ())
        if len(exact) == 1:
            return exact, "linked"
        toks = _norm_tokens(text)
        while toks and toks[0] in {"the", "a", "an"}:
            toks = toks[1:]
        for cand in (toks, _norm_tokens(text)):
            labels, aliases = self._names.get(cand, ((), ()))
            if labels:
                return labels, "linked" if len(labels) == 1 else "ambiguous"
            if aliases:
                return aliases, "linked" if len(aliases) == 1 else "ambiguous"
        loose = self._loose_names.get(_loose_key(toks), ())
        if not loose:
            loose = self._loose_names.get(_loose_key(toks, suffixes=True), ())
        if not loose and len(toks) > 1 and len(toks[0]) > 1:  # "Robert Lewandowski" for "R. Lewandowski"
            loose = self._initial_names.get((toks[0][0],) + tuple(toks[1:]), ())
        if loose:
            return loose, "linked" if len(loose) == 1 else "ambiguous"
        if len(toks) == 1 and toks[0] in DEMONYMS:
            return self.candidates(DEMONYMS[toks[0]]) if DEMONYMS[toks[0]].lower() != toks[0] else ((), "unlinked")
        bare = re.sub(r"\s*\([^)]*\)\s*$", "", text)
        if bare != text and bare:
            return self.candidates(bare)
        if len(toks) == 1 and toks[0] in self._surnames:  # "Tolisso" for "C. Tolisso"
            ids = self._surnames[toks[0]]
            return ids, "linked" if len(ids) == 1 else "ambiguous"
        found = self.mentions(text)
        extended = _extended_name(text, found, self)
        if extended is not None:
            return (extended,), "linked"
        if len(found) == 1:
            i, j, eid = found[0]
            rest = _norm_tokens(text)[:i] + _norm_tokens(text)[j:]
            words = re.findall(r"[\w'’-]+", text)
            if len(words) == len(_norm_tokens(text)):  # the descriptors must be written in lower case
                extra = words[:i] + words[j:]
                if all(w.islower() or (w.isdigit() and len(w) == 4) for w in extra) and rest:
                    if eid is None:
                        labels, aliases = self._names.get(_norm_tokens(text)[i:j], ((), ()))
                        return labels or aliases, "ambiguous"
                    return (eid,), "linked"
        return (), "unlinked"

    def resolve(self, mention: str) -> tuple[Any | None, str]:
        """(entity id or None, status) of a whole mention (:meth:`candidates`): ``linked``, ``ambiguous`` (it
        names several entities) or ``unlinked``."""
        ids, status = self.candidates(mention)
        return (ids[0], status) if len(ids) == 1 else (None, status)

    def mentions(self, text: str) -> list[tuple[int, int, Any | None]]:
        """The entity names in ``text`` as (first token, end token, entity id or None when ambiguous), left to
        right, longest match first, no overlaps (tokens of :func:`normalise_label`)."""
        toks = _norm_tokens(text)
        out: list[tuple[int, int, Any | None]] = []
        i = 0
        while i < len(toks):
            for n in range(min(self._longest, len(toks) - i), 0, -1):
                hit = self._names.get(toks[i:i + n])
                if hit is None:
                    continue
                labels, aliases = hit
                ids = labels or aliases
                out.append((i, i + n, next(iter(ids)) if len(ids) == 1 else None))
                i += n
                break
            else:
                i += 1
        return out

    def link(self, text: str) -> list[Any]:
        """The entities ``text`` names, in order of mention, without repeats (ambiguous mentions left out)."""
        return list(dict.fromkeys(e for _, _, e in self.mentions(text) if e is not None))

    # -------------------------------------------------------------------------------------------- relations
    def relation_candidates(self, phrase: str, *, embedder: Any = None,
                            threshold: float = 0.75) -> list[tuple[Any, bool]]:  # fmt: skip
        """The KG relations a relation phrase states, each with whether it reads reversed: those whose phrase set
        (label words, their forms and synonyms, the user's phrases) holds the most of the phrase's content words;
        else, with an embedder, the closest relation label (the phrase alone) at cosine >= ``threshold``."""
        words = content_words(_possessive_free(phrase))
        if not words and re.search(r"\b(?:in|within|inside)\s*$", phrase.strip().lower()):
            words = ("located",)  # "X is in Y", "Y, which is in Z": where X is
        if not words:
            return []
        scored = [(compatibility(words, p), rid) for rid, p in self.profiles.items()]
        best = max((c for c, _ in scored if c), default=0.0)
        if best > 0:
            return [(rid, direction(phrase, self.profiles[rid]) == "rev") for c, rid in
                    sorted(scored, key=lambda x: str(x[1])) if c == best]
        if embedder is None or not self.relations:
            return []
        hit = self._embedded(" ".join(words), embedder, threshold)
        return [] if hit is None else [(hit, direction(phrase, self.profiles[hit]) == "rev")]

    def _embedded(self, phrase: str, embedder: Any, threshold: float) -> Any | None:
        """The relation whose label is closest to ``phrase`` (the phrase alone, never the sentence) at cosine >=
        ``threshold``, or None."""
        rids = sorted(self.relations, key=str)
        sims = embedder.similarity([phrase], [self.profiles[r].label for r in rids])
        best = None
        for j, r in enumerate(rids):
            v = float(sims[0][j])
            if v >= threshold and (best is None or v > best[0]):
                best = (v, r)
        return None if best is None else best[1]

    def holds(self, head: Any, relation: Any, tail: Any) -> str | None:
        """How the KG states relation(head, tail): ``triple``, ``inverse`` (a declared inverse reversed),
        ``symmetric`` (reversed, the relation symmetric), or None."""
        if (head, relation, tail) in self.triples:
            return "triple"
        if any((tail, inv, head) in self.triples for inv in self.inverses.get(relation, ())):
            return "inverse"
        if relation in self.symmetric and (tail, relation, head) in self.triples:
            return "symmetric"
        return None

    def other_object(self, head: Any, relation: Any, tail: Any) -> Any | None:
        """The KG's object of a single-valued ``relation`` for ``head`` when it is not ``tail`` (else None); also
        via a single-valued declared inverse read from the tail's side."""
        if relation in self.functional:
            objs = self._by_head.get((head, relation), set())
            if objs and tail not in objs:
                return (head, relation, sorted(objs, key=str)[0])
        prof = self.profiles.get(relation)
        if prof is not None and prof.value == "entity":  # a person's parents are two: a third is wrong when the
            # KG holds both, read from the parent relation, or from a child relation's tail by its parent relation
            for who, by, nope in [(head, relation, tail)] + \
                    [(tail, r, head) for r in self._roles[2].get(tail, ()) if "child" in prof.concepts]:
                bound = most_values(self.profiles[by])
                objs = self._by_head.get((who, by), set())
                if bound is not None and len(objs) >= bound and nope not in objs:
                    return (who, by, sorted(objs, key=str)[0])
        for inv in self.inverses.get(relation, ()):
            if inv in self.functional:
                objs = self._by_head.get((tail, inv), set())
                if objs and head not in objs:
                    return (tail, inv, sorted(objs, key=str)[0])
        return None

    @cached_property
    def _containment(self) -> dict[Any, str]:
        """Relations that say one place (or thing) lies in another, each with its direction
        (:func:`kgprobe.scoring.relations.containment`)."""
        return {r: d for r, p in self.profiles.items() if (d := containment(p)) is not None}

    @cached_property
    def _places(self) -> tuple[frozenset[Any], frozenset[Any]]:
        """Two kinds of place, each one kind whichever relations the KG happens to hold of its members: the
        countries a demonym names (:data:`~kgprobe.scoring.lexicon.COUNTRIES`: Italy, New Zealand, Australia) and the
        other things a containment triple places inside another (Milan in Italy, Auckland in New Zealand)."""
        countries = frozenset(e for e, label in self.entities.items() if label.lower() in _COUNTRIES)
        cols = self._columns
        if cols is None:
            inner = frozenset(h if self._containment[r] == "inward" else t
                              for h, r, t in self.triples if r in self._containment)
        else:
            way = [[r for r, d in self._containment.items() if d == w] for w in ("inward", "outward")]
            inner = frozenset(cols[np.isin(cols[:, 1], way[0]), 0].tolist()
                              + cols[np.isin(cols[:, 1], way[1]), 2].tolist())
        return inner - countries, countries

    def within(self, inner: Any, outer: Any, *, hops: int = CONTAINMENT_HOPS) -> int:
        """In how many containment triples (at most ``hops``) the KG places ``inner`` inside ``outer`` ("located
        in", "country" read from the inside, "contains" from the outside); 0 when it does not."""
        if not self._containment:
            return 0
        frontier, seen = {inner}, {inner}
        heads, _, out_r, in_r, _ = self._roles
        for step in range(1, hops + 1):
            nxt: set[Any] = set()
            for e in frontier:
                for r in out_r.get(e, set()) & self._containment.keys():
                    if self._containment[r] == "inward":
                        nxt |= self._by_head.get((e, r), set())
                for r in in_r.get(e, set()) & self._containment.keys():
                    if self._containment[r] == "outward":
                        nxt |= {h for h in heads.get(r, ()) if e in self._by_head.get((h, r), ())}
            if outer in nxt:
                return step
            frontier = nxt - seen
            seen |= nxt
        return 0

    def _by_head_any(self, head: Any, relation: Any) -> bool:
        return bool(self._by_head.get((head, relation)))

    def joined(self, a: Any, b: Any) -> bool:
        """Whether some triple joins ``a`` and ``b`` (either way)."""
        _, _, out_r, _, _ = self._roles
        return any(b in self._by_head.get((a, r), ()) for r in out_r.get(a, ())) or \
            any(a in self._by_head.get((b, r), ()) for r in out_r.get(b, ()))

    def keys(self, triple: tuple[Any, Any, Any]) -> tuple[str, str, str]:
        h, r, t = triple
        return (self.entity_keys.get(h, str(h)), self.relation_keys.get(r, str(r)), self.entity_keys.get(t, str(t)))

    def verbalise(self, triple: tuple[Any, Any, Any]) -> str:
        """A triple as an atomic fact sentence: ``"Head relation tail."``."""
        h, r, t = triple
        rel = self.profiles[r].label if r in self.relations else str(r)
        return f"{self.entities.get(h, str(h))} {rel} {self.entities.get(t, str(t))}."

    def relation_file(self) -> str:
        """The reviewable YAML phrase file of this KG's relations (:func:`kgprobe.scoring.relations.phrase_file`):
        ``kgprobe init`` writes it beside the config; a suite's ``relations`` setting reads a user's edits back."""
        return phrase_file(self.profiles, self.relation_keys)

    def with_relation_settings(self, settings: Mapping[str, Mapping[str, Any]]) -> KGFacts:
        """This KG with a phrase file's declarations (:func:`kgprobe.scoring.relations.read_phrase_file`, keyed by
        relation key): extra phrases, single-valued or many-valued, symmetric."""
        by_key = {k: r for r, k in self.relation_keys.items()}
        functional, symmetric = set(self.functional), set(self.symmetric)
        phrasings = {r: dict(v) for r, v in self.phrasings.items()}
        declared = dict(self.declared)
        for key, decl in settings.items():
            rid = by_key.get(key)
            if rid is None:
                continue
            if decl.get("phrases"):
                phrasings.setdefault(rid, {}).update(decl["phrases"])
            if "single_valued" in decl:
                declared[rid] = bool(decl["single_valued"])
                (functional.add if decl["single_valued"] else functional.discard)(rid)
            if decl.get("symmetric"):
                symmetric.add(rid)
        return replace(self, functional=frozenset(functional), symmetric=frozenset(symmetric), phrasings=phrasings,
                       declared=declared)

    # kept for callers of the earlier checker
    def states_relation(self, text: str, relation: Any) -> bool:
        """Whether the relation phrase ``text`` states ``relation`` (either direction)."""
        return any(r == relation for r, _ in self.relation_candidates(text))


_SUFFIXES = {"fc", "cf", "afc", "sc", "ac", "club", "football", "inc", "ltd", "co", "corp", "plc", "llc"}
_LOOSE_STOP = _STOP | {"de", "del", "da", "di", "du", "la", "le"}


_COUNTRIES = frozenset(c.lower() for c in COUNTRIES)


def _loose_key(toks: Sequence[str], *, suffixes: bool = False) -> tuple[str, ...]:
    """A name's words in a canonical order, stop words dropped and runs of single letters joined ("F. C." ->
    "fc"); with ``suffixes``, club and company suffixes dropped too ("Real Madrid CF" -> "madrid real")."""
    merged: list[str] = []
    run = False  # the last merged word is a run of single letters
    for t in toks:
        if len(t) == 1 and t.isalpha() and run:
            merged[-1] += t
        else:
            merged.append(t)
            run = len(t) == 1 and t.isalpha()
    words = [t for t in merged if t not in _LOOSE_STOP and not (suffixes and t in _SUFFIXES)]
    return tuple(sorted(words))


def _extended_name(text: str, found: Sequence[tuple[int, int, Any]], kg: KGFacts) -> Any | None:
    """The entity a mention names when it is the entity's label extended by one or two capitalised words ("Alisson
    Becker" for "Alisson", "Coeroeni Airport" for "Coeroeni", "Inter Milan" for "Inter"), or by one word before a
    label of two words or more ("David De Gea" for "De Gea"); never across a colon, a number or a numeral
    ("Maleficent: Mistress of Evil", "Toy Story 2", "Rocky II" name other works)."""
    if len(found) != 1 or found[0][2] is None or re.search(r"[:\d]|\b(?:II|III|IV|V|VI)\b", text):
        return None
    i, j, eid = found[0]
    words = _case_tokens(text)
    if len(words) != len(_norm_tokens(text)):
        return None
    extra = words[:i] + words[j:]
    if not extra or not all(w[:1].isupper() for w in extra):
        return None
    if i == 0 and len(extra) <= 2 or i == 1 and j == len(words) and j - i >= 2:
        return eid
    return None


def _possessive_free(phrase: str) -> str:
    return re.sub(r"['’]s\b", " ", phrase)


def _nameable(toks: tuple[str, ...]) -> bool:
    """Whether a normalised name can name an entity in text (not empty, not one letter, not only stop words)."""
    return bool(toks) and (len(toks) > 1 or len(toks[0]) > 1) and not all(t in _STOP for t in toks)


def _local_name(key: str) -> str:
    local = re.split(r"[/#:]", key.rstrip("/"))[-1]
    return local if re.search(r"[A-Za-z]{2}", local) else ""


def _declared(single_valued: Mapping[str, bool] | Iterable[str], keys: Mapping[Any, str]) -> dict[Any, bool]:
    """Relation id -> declared single-valued (True) or many-valued (False), from declarations keyed by relation
    key."""
    decl = dict(single_valued) if isinstance(single_valued, Mapping) else {str(k): True for k in single_valued}
    by_key = {v: k for k, v in keys.items()}
    return {by_key[k]: bool(v) for k, v in decl.items() if k in by_key}


def _declare(found: frozenset[Any], single_valued: Mapping[str, bool] | Iterable[str],
             rels: Iterable[Any]) -> frozenset[Any]:  # fmt: skip
    decl = _declared(single_valued, {r: r for r in rels})
    return frozenset({r for r in found if decl.get(r, True)} | {r for r, v in decl.items() if v})


def _inverse_sets(pairs: Mapping[Any, Any]) -> dict[Any, frozenset[Any]]:
    out: dict[Any, set[Any]] = {}
    for a, b in pairs.items():
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


def _phrasings(labels: Mapping[Any, str], keys: Mapping[Any, str],
               extra: Mapping[str, Mapping[str, bool]] | None) -> dict[Any, dict[str, bool]]:  # fmt: skip
    out: dict[Any, dict[str, bool]] = {}
    for rid in labels:
        key = keys.get(rid, str(rid))
        merged = dict((extra or {}).get(key, {}))
        if merged:
            out[rid] = merged
    return out


def _strip_aux(toks: tuple[str, ...]) -> tuple[str, ...]:
    i = 0
    while i < len(toks) and toks[i] in _AUX:
        if toks[i] == "one" and toks[i + 1:i + 2] == ("of",):
            i += 2
            continue
        i += 1
    return toks[i:]


# --------------------------------------------------------------------------------------------------- extraction


def split_facts(answer: str | None) -> list[str]:
    """The heuristic atomic facts of an answer: its sentences, lines and "; " clauses, bullets removed (never
    split after an initial, "I. M. Pei", or a title, "Dr.")."""
    if not answer:
        return []
    out = []
    for part in _SENTENCE.split(answer):
        part = _BULLET.sub("", part or "").strip()
        if part and re.search(r"\w", part):
            out.append(part)
    return out


_CONJ = {"and", "or", "but", "nor", "as", "well", "also", "both", "either", "neither", "then"}
_NEG_TOKENS = {"not", "never", "hardly", "neither", "nor", "no"}


_LEAD_NEG = re.compile(r"^\W*(?:it\s+is|it\s+was|it['’]s)\s+(?:not\s+true|false|untrue|incorrect|wrong|not\s+the\s+case)"
                       r"\s+that\b", re.IGNORECASE)
_MONTH_WORDS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
                "dec"}
_PRONOUN_START = {"it", "he", "she", "they", "his", "her", "its", "their", "this", "these"}
_COPULA = {"is", "was", "are", "were"}
_INCLUDES = {"includes", "include", "included", "including", "comprises", "comprised", "features", "featured"}
_COMMA = "xcommax"


def _loose_mentions(text: str, toks: Sequence[str], ments: list[tuple[int, int, Any]],
                    kg: KGFacts) -> list[tuple[int, int, Any]]:  # fmt: skip
    """``ments`` with the names the exact scan misses, in the stretches no mention covers: a label's words in another
    order or without a club suffix ("the Summer Olympics in 1992", "Real Madrid" for "Real Madrid CF"), a given name
    for an initial ("Eden Hazard" for "E. Hazard"), a demonym ("Brazilian"); each written capitalised, longest first.
    A run of capitalised words no entity has is kept as a name the KG lacks (its id None's stand-in), so "X was sung
    by Ella Fitzgerald" is still a claim."""
    cased = _case_tokens(text)
    if len(cased) != len(toks):
        return ments
    covered = {k for i, j, _ in ments for k in range(i, j)}
    out = list(ments)
    i = 0
    while i < len(toks):
        if i in covered or not cased[i][:1].isupper() or toks[i] == _COMMA:
            i += 1
            continue
        hit = None
        for n in range(min(6, len(toks) - i), 0, -1):
            span = range(i, i + n)
            if any(k in covered or toks[k] == _COMMA for k in span):
                continue
            window = tuple(toks[i:i + n])
            ids: tuple[Any, ...] = ()
            if n > 1:
                ids = kg._loose_names.get(_loose_key(window), ()) or \
                    kg._loose_names.get(_loose_key(window, suffixes=True), ())
                if not ids and len(window[0]) > 1:
                    ids = kg._initial_names.get((window[0][0],) + window[1:], ())
            elif window[0] in DEMONYMS:
                ids = kg.candidates(window[0])[0]
            elif window[0] in kg._surnames:
                ids = kg._surnames[window[0]]
            if len(ids) == 1:
                hit = (i, i + n, ids[0])
                break
        if hit is None:  # a proper name the KG lacks: a run of capitalised words not at the sentence's start
            j = i
            while j < len(toks) and j not in covered and cased[j][:1].isupper() and toks[j] != _COMMA:
                j += 1
            if i > 0 and j - i >= 2 and not any(_common_word(t) for t in toks[i:j]):
                hit = (i, j, ("name", " ".join(cased[i:j])))
        if hit is not None:
            out.append(hit)
            covered |= set(range(hit[0], hit[1]))
            i = hit[1]
        else:
            i += 1
    return sorted(out, key=lambda m: m[0])


def _verb_form(word: str) -> bool:
    """Whether ``word`` is a verb form (a finite verb or a participle): "stars", "directed"."""
    return ("VERB" in parts_of_speech(word) and (word.endswith(("s", "ed", "en")) or participle(word))
            and word not in _STOP)


def _literal_spans(toks: Sequence[str]) -> list[tuple[int, int, str]]:
    """Years, dates ("december 2009", "18 december 2009", "december 18 2009") and numbers in normalised tokens, as
    (first token, end token, text)."""
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        span = None
        if t in _MONTH_WORDS:
            j = i + 1
            if j < len(toks) and toks[j].isdigit() and len(toks[j]) <= 2:
                j += 1
            if j < len(toks) and toks[j].isdigit() and len(toks[j]) == 4:
                span = (i, j + 1)
        elif t.isdigit() and len(t) <= 2 and i + 2 < len(toks) and toks[i + 1] in _MONTH_WORDS \
                and toks[i + 2].isdigit() and len(toks[i + 2]) == 4:
            span = (i, i + 3)
        elif t.isdigit():
            span = (i, i + 1)
        if span is not None:
            out.append((span[0], span[1], " ".join(toks[span[0]:span[1]])))
            i = span[1]
        else:
            i += 1
    return out


def _case_tokens(text: str) -> list[str]:
    """The tokens of :func:`_norm_tokens` with their case kept (same count, same order)."""
    import unicodedata

    t = urllib.parse.unquote(text).replace("_", " ") if "%" in text else text.replace("_", " ")
    t = "".join(c for c in unicodedata.normalize("NFKD", t) if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", " ", t).split()


def _common_word(word: str) -> bool:
    return word in _STOP or bool(parts_of_speech(word))


def _written_as_name(m: tuple[int, int, Any], text: str, toks: Sequence[str], kg: KGFacts) -> bool:
    """Whether a mention of an entity whose name is common words ("Up", "Home", "Rush", "Fever") is written as a
    name: capitalised, or the first word of the sentence. "Pete Docter grew up in Minnesota" names no film by
    itself (the caller keeps such a mention only when the KG joins it to a name beside it)."""
    i, j, _ = m
    if j - i > 2 or not all(_common_word(t) for t in toks[i:j]) or any(t.isdigit() for t in toks[i:j]):
        return True
    cased = _case_tokens(text)
    if len(cased) != len(toks):
        return True
    return i == 0 or any(w[:1].isupper() for w in cased[i:j])


def _tokens_with_commas(text: str, kg: KGFacts) -> tuple[list[str], list[tuple[int, int, Any]]]:
    """The normalised tokens of ``text`` with a comma kept as a word between names (it tells an apposition from a
    verb phrase), never inside a name ("Washington, D.C."), and the KG's mentions over those tokens."""
    toks = list(_norm_tokens(text))
    found = kg.mentions(text)
    marked = _norm_tokens(re.sub(r",\s+", f" {_COMMA} ", text))
    before: set[int] = set()  # original token indices a comma precedes
    k = 0
    for t in marked:
        if t == _COMMA:
            before.add(k)
        else:
            k += 1
    before = {k for k in before if not any(i < k < j for i, j, _ in found)}
    if not before:
        return toks, list(found)
    new_index: dict[int, int] = {}
    out: list[str] = []
    for k, t in enumerate(toks + [""]):
        if k in before:
            out.append(_COMMA)
        new_index[k] = len(out)
        if k < len(toks):
            out.append(t)
    return out, [(new_index[i], new_index[j - 1] + 1, e) for i, j, e in found]


def heuristic_claims(fact: str, kg: KGFacts, *, topic: str | None = None) -> list[Claim]:
    """The claims of one fact sentence, offline: the KG entity names and the values (years, dates, numbers) it
    mentions, and the words between two consecutive ones as the relation phrase. "The R of X is Y" and "X's R is Y"
    read as R(X, Y); "A r B and C" and "A r B, not C" as r(A, B), r(A, C) (the second denied); "A and B r C" as
    r(A, C), r(B, C); "A is B" as a claim of its own, and after "A is a ..." the description's name is no subject
    ("Renoir was a French painter born in Paris": Renoir born in Paris). A sentence that opens with a pronoun or
    "the film" and no name before its verb is about ``topic`` (the answer's subject so far). Negation words (not,
    never, n't, cannot, no longer, hardly, neither / nor, no) between two mentions deny that claim; before the first
    mention, or "it is false that ...", every claim."""
    lead_false = bool(_LEAD_NEG.match(fact))
    text = _LEAD_NEG.sub(" ", fact)
    text = re.sub(r"n['\u2019]t\b", " not", text)
    text = re.sub(r"\bno longer\b", "not", text, flags=re.IGNORECASE)
    text = re.sub(r"\bcannot\b", "can not", text, flags=re.IGNORECASE)
    toks, found = _tokens_with_commas(text, kg)
    ments: list[tuple[int, int, Any]] = [
        m for k, m in enumerate(found) if _written_as_name(m, text, toks, kg)
        or any(m[2] is not None and n[2] is not None and kg.joined(m[2], n[2]) for n in found[max(0, k - 1):k + 2]
               if n is not m)]  # a common word names an entity when the KG joins it to a name beside it
    ments = _loose_mentions(text, toks, ments, kg)
    lits = _literal_spans(toks)
    literal_at: dict[int, str] = {}
    if lits:
        taken = [(i, j) for i, j, _ in lits]
        ments = [m for m in ments if not any(i < m[1] and m[0] < j for i, j in taken)
                 or (m[2] is not None and not isinstance(m[2], tuple) and m[2] not in kg._literals
                     and parse_literal(kg.entities[m[2]]) is None)]
        for i, j, lit in lits:
            if not any(i < m[1] and m[0] < j for m in ments):
                ments.append((i, j, ("literal", lit)))
                literal_at[i] = lit
        ments.sort(key=lambda m: m[0])
    first = ments[0][0] if ments else len(toks)
    if topic and (not ments or first > 0) and toks and toks[0] in _PRONOUN_START | {"the"} \
            and not (toks[0] == "the" and first <= 1):
        ments.insert(0, (0, 1 if toks[0] in _PRONOUN_START else 2, ("topic", topic)))
    out: list[Claim] = []
    if len(ments) < 2:
        return out

    def surface(m: tuple[int, int, Any]) -> str:
        if isinstance(m[2], tuple):
            return m[2][1]
        return kg.entities[m[2]] if m[2] is not None else " ".join(toks[m[0]:m[1]])

    lead = toks[:ments[0][0]]
    lead_neg = lead_false != any(t in _NEG_TOKENS for t in lead)
    lead = _strip_aux(tuple(t for t in lead if t not in _NEG_TOKENS))
    prev: tuple[tuple[int, int, Any], str] | None = None
    pending: list[tuple[int, int, Any]] = []
    described: tuple[tuple[int, int, Any], str] | None = None  # "A is a B ...": A, "is a"
    apposed: tuple[int, int, Any] | None = None  # "A, directed by B, stars C": A
    for a, b in zip(ments, ments[1:]):
        between = toks[a[1]:b[0]]
        if between and between[0] == _COMMA and apposed is not None and _COMMA not in between[1:]:
            a, apposed = apposed, None  # the clause after the apposition is about its head
        elif between and between[0] == _COMMA and a is ments[0] and len(between) > 1 and between[1] not in _CONJ:
            apposed = a
        if between and between[0] in {"and", "but"} and len(between) > 1 and prev is not None \
                and _verb_form(between[1]) and not isinstance(prev[0][2], tuple):
            a = prev[0]  # "A was directed by B and stars C": A stars C
            between = between[1:]
        between = tuple(t for k, t in enumerate(between) if t != _COMMA)
        neg = lead_neg != (sum(t in _NEG_TOKENS for t in between) % 2 == 1)
        between = tuple(t for t in between if t not in _NEG_TOKENS)
        core = _strip_aux(between)
        if a is ments[0] and lead and lead[-1] == "of" and len(lead) > 1 and (not core or set(core) <= _INCLUDES):
            rel = " ".join(lead[:-1])  # "The place of birth of Renoir is Limoges", "The cast of X includes Y"
            out.append(Claim(surface(a), rel, surface(b), neg, fact))
            prev = (a, rel)
            continue
        if described is not None and core and not set(core) <= _CONJ:
            subj, cop = described  # "Renoir was a French painter born in Paris": Renoir, not French
            out.append(Claim(surface(subj), f"{cop} {' '.join(between)}", surface(b), neg, fact))
            described = None
            prev = (subj, f"{cop} {' '.join(between)}")
            continue
        described = None
        if between and between[0] in _COPULA and set(between[1:]) <= {"a", "an", "the", "also"} \
                and not isinstance(a[2], tuple) or (between and between[0] in _COPULA and not core
                                                    and isinstance(b[2], tuple)):
            out.append(Claim(surface(a), " ".join(between), surface(b), neg, fact))  # "A is B", "A is a 2009 film"
            if len(between) > 1:
                described = (a, " ".join(between))
            prev = (a, " ".join(between))
            continue
        after = toks[b[1]:(ments[ments.index(b) + 1][0] if b is not ments[-1] else len(toks))]
        if between and between[-1] in {"has", "had", "have"} and after[:1] == ["as"] and len(after) > 2:
            rel = " ".join(list(between) + [t for t in after if t != _COMMA])  # "X has Y as its capital"
            out.append(Claim(surface(a), rel, surface(b), neg, fact))
            prev = (a, rel)
            continue
        if set(core) <= _CONJ or (neg and len(core) <= 2 and set(core) <= _CONJ | _PREP_END):
            upto = ments[ments.index(b) + 1][0] if b is not ments[-1] else len(toks)
            verb = [t for t in toks[b[1]:upto] if t != _COMMA and t not in _NEG_TOKENS][:1]
            if set(core) & {"and", "but"} and prev is not None and verb and b is not ments[-1] \
                    and not isinstance(b[2], tuple) and (verb[0] in _COPULA or (
                        _verb_form(verb[0]) and verb[0].endswith(("s", "ed")))):  # "songwriter born in": no clause
                continue  # "A r B, and C r D": C opens a clause of its own, it is no second object of r
            if prev is not None:  # "A r B and C", "A r B, not C"
                out.append(Claim(surface(prev[0]), prev[1], surface(b), neg, fact))
            elif set(core) <= _CONJ:  # "A and B r C": A waits for the relation
                pending.append(a)
            continue
        rel = " ".join(between)
        for subject in [*pending, a]:
            out.append(Claim(surface(subject), rel, surface(b), neg, fact))
        pending = []
        prev = (a, rel)
    return out


class _ClaimItem(BaseModel):
    model_config = ConfigDict(extra="ignore")
    fact: str = ""
    subject: str = ""
    relation: str = ""
    object: str = ""
    negated: bool = False


class ClaimList(BaseModel):
    """What a judge returns: ``{"facts": [{"fact", "subject", "relation", "object", "negated"}, ...]}``, one entry
    per atomic fact (subject, relation and object empty when the fact is not a relation between two things)."""

    model_config = ConfigDict(extra="ignore")
    facts: list[_ClaimItem] = Field(default_factory=list)


#: The JSON schema of a judge's reply, for backends with structured output (``response_format``).
CLAIMS_JSON_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["facts"],
    "properties": {"facts": {"type": "array", "items": {
        "type": "object", "additionalProperties": False,
        "required": ["fact", "subject", "relation", "object", "negated"],
        "properties": {"fact": {"type": "string"}, "subject": {"type": "string"}, "relation": {"type": "string"},
                       "object": {"type": "string"}, "negated": {"type": "boolean"}}}}},
}  # fmt: skip

_DEMO_ANSWER = ("Guernica, which Pablo Picasso painted in 1937, hangs in the Museo Reina Sofia in Madrid. It was not "
                "shown in Paris after the war.")
_DEMO_REPLY = json.dumps({"facts": [
    {"fact": "Guernica was painted by Pablo Picasso.", "subject": "Guernica", "relation": "was painted by",
     "object": "Pablo Picasso", "negated": False},
    {"fact": "Guernica was painted in 1937.", "subject": "Guernica", "relation": "was painted in", "object": "1937",
     "negated": False},
    {"fact": "Guernica hangs in the Museo Reina Sofia.", "subject": "Guernica", "relation": "hangs in",
     "object": "Museo Reina Sofia", "negated": False},
    {"fact": "The Museo Reina Sofia is in Madrid.", "subject": "Museo Reina Sofia", "relation": "is located in",
     "object": "Madrid", "negated": False},
    {"fact": "Guernica was not shown in Paris after the war.", "subject": "Guernica", "relation": "was shown in",
     "object": "Paris", "negated": True}]})


def claims_prompt(answer: str) -> str:
    """The judge's prompt: break ``answer`` into atomic facts, each one (subject, relation, object, negated), as
    JSON of :data:`CLAIMS_JSON_SCHEMA`. The answer is fenced as data
    (:func:`~kgprobe.generation.prompts.fence`), the demonstration's too."""
    return ("Break the answer below into independent atomic facts. For each fact give its subject, the relation "
            "phrase exactly as the answer states it, its object, and whether the answer denies it (negated). Name "
            "the subject and object as the answer names them, with pronouns replaced by what they refer to; keep the "
            "direction of the relation as written. Reply with JSON only, of the form "
            '{"facts": [{"fact": ..., "subject": ..., "relation": ..., "object": ..., "negated": false}]}. '
            f"{DATA_NOTICE}\n\nAnswer: {fence(_DEMO_ANSWER, 'answer')}\nJSON: {_DEMO_REPLY}\n\n"
            f"Answer: {fence(answer, 'answer')}\nJSON:")


def _reply_text(reply: Any) -> str | None:
    """The text of a judge's reply: a string, a mapping's ``"text"`` or an object's ``.text``."""
    if isinstance(reply, str):
        return reply
    return reply.get("text") if isinstance(reply, Mapping) else getattr(reply, "text", None)


def _judge_name(judge: Any) -> str:
    """What a judge is called in the extractor / verifier column: its ``name``, else its ``model``, else "judge"."""
    return str(getattr(judge, "name", None) or getattr(judge, "model", None) or "judge")


def _first_json(reply: str | None, model: type[BaseModel]) -> Any | None:
    """The first JSON object of a judge's reply validated as ``model``, or None."""
    if not reply:
        return None
    start = reply.find("{")
    if start < 0:
        return None
    try:
        obj, _ = json.JSONDecoder().raw_decode(reply[start:])
        return model.model_validate(obj)
    except (ValueError, ValidationError):
        return None


def parse_claims(reply: str | None, answer: str | None = None) -> list[Claim] | None:
    """The claims of a judge's reply (its first JSON object, validated by :class:`ClaimList`); None when the
    reply holds none that validates. A fact without subject, relation and object becomes a claim of empty parts
    (it counts as a fact the KG cannot judge). With ``answer``, facts whose subject and object do not occur in the
    answer are dropped (a small judge copies its demonstration)."""
    parsed = _first_json(reply, ClaimList)
    if parsed is None:
        return None
    said = set(_norm_tokens(answer)) if answer is not None else None
    out = []
    for f in parsed.facts:
        relation, negated = f.relation, f.negated
        if _NEGATION.search(relation):
            relation, negated = " ".join(_NEGATION.sub(" ", relation).split()), True
        if said is not None:
            words = [w for w in _norm_tokens(f"{f.subject} {f.object}") if w not in _STOP] or \
                [w for w in _norm_tokens(f.fact) if w not in _STOP]
            if words and sum(w in said for w in words) < 0.5 * len(words):
                continue
        out.append(Claim(f.subject.strip(), relation.strip(), f.object.strip(), negated, f.fact.strip()))
    return out


def extract_claims(answer: str, kg: KGFacts, *, judge: Callable[[str], Any] | Any = None) -> tuple[list[Claim], str]:
    """(claims, extractor) of an answer: the judge's (``judge(prompt) -> reply``, the reply a string, a dict with
    ``"text"`` or an object with ``.text``; the extractor is the judge's ``name`` or ``model``, else ``"judge"``)
    when it replies valid JSON, else the heuristic's (extractor ``"heuristic"``). A judge's fact that is not a
    relation between two things stays as a claim with empty parts (its ``fact`` kept; :func:`check_claim` calls it
    not in KG, reason ``no_claim``); the heuristic returns whole claims only (:func:`split_facts` gives its facts)."""
    if judge is not None:
        reply = judge(claims_prompt(answer))
        claims = parse_claims(_reply_text(reply), answer)
        if claims is not None:
            return claims, _judge_name(judge)
    out: list[Claim] = []
    topic: str | None = None
    for fact in split_facts(answer):
        claims = heuristic_claims(fact, kg, topic=topic)
        out += claims
        if claims:
            topic = claims[0].subject  # "It ...", "The film ..." in the next sentence is about this
    return out, HEURISTIC


# --------------------------------------------------------------------------------------------------- verification


#: A relation phrase states a KG relation when at least this share of its content words are the relation's (word
#: forms, derivations, synonyms); measured on the labelled claims, leave-one-source-out (benchmarks/claims.py).
PHRASE_THRESHOLD = 0.5
#: A wrong value is contradicted only when this share of the phrase's content words state the relation: a word the
#: relation does not explain ("bid to host", "became popular in") may change what the phrase claims.
CONTRADICTION_THRESHOLD = 1.0


@dataclass(frozen=True)
class CheckerSettings:
    """The checker's two measured thresholds (see :data:`PHRASE_THRESHOLD`, :data:`CONTRADICTION_THRESHOLD`);
    ``benchmarks/claims.py`` chooses them leave-one-source-out."""

    phrase_threshold: float = PHRASE_THRESHOLD
    contradiction_threshold: float = CONTRADICTION_THRESHOLD


DEFAULT_SETTINGS = CheckerSettings()
#: The score of a phrase none of whose content words belongs to any relation the two entities could have ("grew
#: up with"): below the threshold, so such a phrase never decides a verdict on a triple it does not name.
UNKNOWN_PHRASE = 0.0

_NEG_WORDS = re.compile(r"\b(?:not|never|no|hardly|neither|nor|cannot|none)\b|n['’]t\b", re.IGNORECASE)


def _phrase_negation(relation: str, negated: bool) -> tuple[str, bool]:
    """The relation phrase without its negation words, and whether the claim is denied (each negation word in the
    phrase turns it around once: "did not fail to" is positive)."""
    n = len(_NEG_WORDS.findall(relation))
    rel = " ".join(_NEG_WORDS.sub(" ", relation).split())
    return rel, negated != (n % 2 == 1)


def check_claim(claim: Claim, kg: KGFacts, *, embedder: Any = None, threshold: float = 0.75,
                context: Iterable[Any] = (), settings: CheckerSettings | None = None) -> Verdict:  # fmt: skip
    """The verdict of one claim against ``kg`` (see the module docstring). ``context``: entities the answer is about
    (the question's), used to tell apart entities that share a label; ``settings``: the thresholds (the measured
    defaults when None). A wrong value is not contradicted when the claim's fact sets its entity apart from the
    KG's one of that name (:func:`_set_apart`: "Cliff Richard's *Congratulations*", "a song titled", "a cover of")."""
    v = _check_claim(claim, kg, embedder=embedder, threshold=threshold, context=context, settings=settings)
    if v.label == CONTRADICTED and v.reason == "functional" and v.ids is not None and claim.fact \
            and _set_apart(kg, claim.fact, v.ids[0]):
        return Verdict(NOT_IN_KG, "another_entity", claim, fact=claim.fact)
    return v


_APART_BEFORE = re.compile(
    r"(?:\b(?:a|an)\s+(?:[a-z]+\s+){0,2}(?:titled|called|named|entitled)"        # a song titled "X"
    r"|\b(?:a|an|another|the|its|their|his|her)\s+(?:[a-z]+\s+)?(?:cover|version|remake|rendition|remix)\s+of"
    r"(?:\s+the\s+[a-z]+)?)\s*[\"“”'‘]?\s*$", re.IGNORECASE)
_POSSESSOR = re.compile(r"((?:[A-Z][\w.&-]*\s+){0,4}[A-Z][\w.&-]*)(?:['’]s|s['’])\s*[\"“”'‘]?\s*$")


def _set_apart(kg: KGFacts, fact: str, entity: Any) -> bool:
    """Whether ``fact`` names ``entity``'s label as another thing of that name (RULES.md, "Same name, another
    entity"): introduced as new ("a song titled X"), as another recording ("a cover of X", "the original version
    of X"), or as someone's whom the KG does not join to it ("Cliff Richard's X", when the KG's X is Reba
    McEntire's)."""
    names = [kg.entities.get(entity, "")] + list(kg.aliases.get(entity, ()))
    for name in (n for n in names if n.strip()):
        for m in re.finditer(re.escape(name), fact, re.IGNORECASE):
            before = fact[:m.start()]
            if _APART_BEFORE.search(before):
                return True
            pm = _POSSESSOR.search(before)
            if pm:
                owners, _ = kg.candidates(pm.group(1))
                if not any(kg.joined(entity, o) for o in owners):
                    return True
    return False


def _check_claim(claim: Claim, kg: KGFacts, *, embedder: Any = None, threshold: float = 0.75,
                 context: Iterable[Any] = (), settings: CheckerSettings | None = None) -> Verdict:  # fmt: skip
    st = settings or DEFAULT_SETTINGS
    if not (claim.subject and claim.relation and claim.object):
        return Verdict(NOT_IN_KG, "no_claim", claim, fact=claim.fact)
    phrase, negated = _phrase_negation(claim.relation, claim.negated)
    subj, obj = claim.subject, claim.object
    s_lit, o_lit = parse_literal(subj), parse_literal(obj)
    flipped = False
    if s_lit is not None and o_lit is None:  # "In 2009 came Avatar"
        subj, obj, s_lit, o_lit, flipped = obj, subj, o_lit, s_lit, True
    subjects, s_status = kg.candidates(subj)
    said = set(_norm_tokens(phrase)) | (set(_norm_tokens(obj)) - set(_norm_tokens(" ".join(
        kg.entities.get(e, "") for e in kg.candidates(obj)[0]))))
    if said & EVALUATIVE:  # "best known for", "a prolific writer": no triple says that
        return Verdict(NOT_IN_KG, "evaluative", claim, fact=claim.fact)
    words = _core_words(phrase, content_words(_possessive_free(phrase)))
    if not subjects:
        objects, _ = kg.candidates(obj) if o_lit is None else ((), "")
        if s_status == "unlinked" and len(objects) == 1:  # "Van Morrison sang In the Garden"
            return _check_unlinked(kg, objects[0], subj, "rev", phrase, words, negated, claim, s_status, st)
        return Verdict(NOT_IN_KG, s_status, claim, fact=claim.fact)
    if o_lit is not None:
        v = _check_literal(kg, subjects, o_lit, phrase, words, negated, claim, embedder, threshold, context, st)
        if v is not None:
            return v
    objects, o_status = kg.candidates(obj)
    if not objects:
        if o_status == "unlinked" and o_lit is None and len(subjects) == 1:
            return _check_unlinked(kg, subjects[0], obj, "fwd", phrase, words, negated, claim, o_status, st)
        return Verdict(NOT_IN_KG, o_status, claim, fact=claim.fact)
    pairs = [(a, b) for a in subjects for b in objects if a != b]
    if len(pairs) > 1:
        pairs = _disambiguate(kg, pairs, context)
        if len(pairs) != 1:
            return Verdict(NOT_IN_KG, "ambiguous", claim, fact=claim.fact)
    if not pairs:
        return Verdict(NOT_IN_KG, "no_triple", claim, fact=claim.fact)
    s, o = pairs[0]
    if flipped:
        s, o = o, s
    return _check_entities(kg, s, o, phrase, words, negated, claim, embedder, threshold, st)


def _disambiguate(kg: KGFacts, pairs: list[tuple[Any, Any]], context: Iterable[Any]) -> list[tuple[Any, Any]]:
    """Of the (subject, object) readings of mentions that name several entities, the one among the answer's context
    entities (the question's). Never the one a triple joins: that would read every ambiguous claim as true."""
    ctx = set(context)
    if ctx:
        near = [p for p in pairs if p[0] in ctx or p[1] in ctx]
        if len(near) == 1:
            return near
    return pairs


def _scores(kg: KGFacts, phrase: str, words: tuple[str, ...], rids: Iterable[Any], embedder: Any,
            threshold: float) -> dict[Any, float | None]:  # fmt: skip
    """Each relation's phrase compatibility (None: the phrase has no content word); a phrase whose words no
    candidate relation claims scores :data:`UNKNOWN_PHRASE`, or, with an embedder, 1.0 for the relation whose label
    is closest to the phrase at cosine >= ``threshold``."""
    rids = list(rids)
    bare = tuple(t for t in _norm_tokens(phrase) if t not in {"is", "was", "are", "were"})
    exact = [r for r in rids if bare and _norm_tokens(kg.profiles[r].label) == bare]
    if exact:  # the phrase is a relation's label: that relation, not its converse or synonyms
        return {r: 1.0 if r in exact else 0.0 for r in rids}
    out = {r: _suffix_compatibility(words, kg.profiles[r]) for r in rids}
    if words and not any(out.values()):
        hit = kg._embedded(" ".join(words), embedder, threshold) if embedder is not None else None
        for r in rids:
            out[r] = 1.0 if r == hit else UNKNOWN_PHRASE
    return out


def _core_words(phrase: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """The words that say what a phrase claims of its subject: after "is a" / "was an", the description of the
    subject ("a French painter") is not part of it, the verb after it is ("born in")."""
    toks = re.findall(r"[a-z'’-]+", phrase.lower())
    if len(toks) > 2 and toks[0] in {"is", "was", "are", "were"} and toks[1] in {"a", "an", "the"}:
        for i in range(2, len(toks)):
            if participle(toks[i]):
                return content_words(" ".join(toks[i:]))
        if toks[-1] == "by" and toks[1] in {"a", "an"}:
            return ()  # "is an adventure novel by": a work by someone, whichever way the KG says it
        if toks[-1] in {"in", "within"} and toks[1] in {"a", "an"}:
            return ("located",)  # "is an ancient city in": where it is
    return words


def _full(core: tuple[str, ...], prof: RelationProfile, score: float | None, *, entity: bool = False) -> float:
    """The share of a phrase's core words that state the relation (an embedder's match counts whole); general
    kinship words ("related to") do not: they state no value of the relation."""
    c = compatibility(core, prof, general=False) or 0.0
    if entity and c:  # a verb of making names no value of a designer, an inventor (MAKER_WORDS)
        own = {f for w in prof.words for f in forms(w)}
        makers = [w for w in core if forms(w) & MAKER_WORDS and not forms(w) & own]
        c = max(0.0, c - len(makers) / len(core))
    return 1.0 if (score == 1.0 and c == 0.0 and not any(known(w) or covered(w) for w in core)) else c


def _suffix_compatibility(words: tuple[str, ...], prof: RelationProfile) -> float | None:
    """A phrase's compatibility with a relation, read from its end: prose puts a description before the verb ("was
    a French painter born in"), so the best of the phrase and each of its endings counts."""
    if not words:
        return None
    return max(compatibility(words[i:], prof) or 0.0 for i in range(len(words)))


def _check_entities(kg: KGFacts, s: Any, o: Any, phrase: str, words: tuple[str, ...], negated: bool, claim: Claim,
                    embedder: Any, threshold: float, st: CheckerSettings = DEFAULT_SETTINGS) -> Verdict:  # fmt: skip
    pos, neg = (CONTRADICTED, SUPPORTED) if negated else (SUPPORTED, CONTRADICTED)
    loose: dict[Any, list[str]] = {}   # orientations nothing rules out (an entity that is only ever a tail is no head)
    strict: dict[Any, list[str]] = {}  # orientations the roles its entities play elsewhere make likely
    for rid in kg.profiles:
        ways = [w for w, (h, t) in (("fwd", (s, o)), ("rev", (o, s))) if kg._possible(h, rid, t)]
        if ways:
            loose[rid] = ways
            sure = [w for w in ways if kg._plausible(*((s, rid, o) if w == "fwd" else (o, rid, s)))]
            if sure:
                strict[rid] = sure
    if not loose:
        return Verdict(NOT_IN_KG, "no_triple", claim, fact=claim.fact)
    score = _scores(kg, phrase, words, loose, embedder, threshold)

    def states(rid: Any) -> bool:
        c = score[rid]
        return c >= st.phrase_threshold if c is not None else rid in strict

    def way(rid: Any) -> list[str]:
        ways = loose[rid]
        prof = kg.profiles[rid]
        if len(ways) == 1 or prof.symmetric or rid in kg.symmetric or reads_both_ways(words, prof):
            return ways
        if len(strict.get(rid, ())) == 1 and not _same_kind(kg, rid):
            return strict[rid]
        cue = direction(phrase, prof) if words else None
        return [cue or "fwd"]

    reversed_hit = None
    gendered = False
    for rid in sorted(loose, key=lambda r: -(score[r] or 0.0)):
        if not states(rid):
            continue
        for w in loose[rid]:
            h, t = (s, o) if w == "fwd" else (o, s)
            how = kg.holds(h, rid, t)
            if how is None:
                continue
            if w in way(rid):
                if negated and not _gender_entailed(words, kg.profiles[rid]):
                    gendered = True  # "not the father" of a has-child triple: another relation may name him
                    continue
                return _verdict(kg, pos, "negated" if negated else how, claim, (h, rid, t))
            reversed_hit = reversed_hit or (h, rid, t)
    if gendered:
        return Verdict(NOT_IN_KG, "gendered", claim, fact=claim.fact)
    # a single-valued relation the phrase states, whose head has another object
    named = [r for r in loose if score[r] is not None and score[r] >= st.phrase_threshold]
    if not named and not words:  # a bare "is" / "is from": the one single-valued relation the two could have
        named = [r for r in strict if kg.profiles[r].single_valued and len(strict[r]) == 1]
        named = named if len(named) == 1 else []
    core = _core_words(phrase, words)
    named = [r for r in named
             if (score[r] is None or _full(core, kg.profiles[r], score[r], entity=True) >= st.contradiction_threshold)
             and _gender_stated(words, kg.profiles[r])]
    if named:
        top = max(score[r] or 0.0 for r in named)
        others = []
        for rid in [r for r in named if (score[r] or 0.0) == top]:
            for w in [w for w in (strict[rid] if not words else way(rid)) if w in strict.get(rid, ())]:
                h, t = (s, o) if w == "fwd" else (o, s)
                others.append(kg.other_object(h, rid, t))
        if others and all(x is not None for x in others):
            hops = min((kg.within(other[2], o) or 99) for other in others)
            if hops == 1:  # born in Spain, the KG's Málaga lying in Spain: a coarser value that holds
                return _verdict(kg, pos, "coarser", claim, others[0])
            if hops <= 3:  # Samoa for Vailima, through its district: not wrong, but no triple says it
                return Verdict(NOT_IN_KG, "coarser", claim, fact=claim.fact)
            if _another_time(phrase):  # "previously played for", "was first performed by"
                return Verdict(NOT_IN_KG, "another_time", claim, fact=claim.fact)
            return _verdict(kg, neg, "functional", claim, others[0])
    if reversed_hit is not None:
        return _verdict(kg, NOT_IN_KG, "reversed", claim, reversed_hit)
    if negated and words:  # "A8X was not designed by Helvetica": the object cannot be a value of the relation
        heads, tails, _, _, _ = kg._roles
        for rid, prof in kg.profiles.items():
            if (_suffix_compatibility(words, prof) or 0.0) >= st.phrase_threshold and kg._by_head_any(s, rid) \
                    and o in heads.get(rid, ()) and o not in tails.get(rid, ()):
                return _verdict(kg, SUPPORTED, "kind", claim, (s, rid, sorted(kg._by_head[(s, rid)], key=str)[0]))
    if words and not any(score[r] for r in loose):
        return Verdict(NOT_IN_KG, "relation", claim, fact=claim.fact)
    return Verdict(NOT_IN_KG, "no_triple", claim, fact=claim.fact)


def _same_kind(kg: KGFacts, rid: Any) -> bool:
    """Whether a relation joins two things of one kind (people, places), by its words or by its data (an entity
    that is both a head and a tail of it): then only the phrase tells which way a claim reads it."""
    prof = kg.profiles[rid]
    if any(forms(w) & SAME_KIND_CONCEPTS for w in prof.words):
        return True
    heads, tails, _, _, _ = kg._roles
    return bool(heads.get(rid, set()) & tails.get(rid, set()))


#: Words that set a claim at another time than the KG's ("previously played for", "was first performed by",
#: "formerly known as"): a single-valued relation has one value at a time, so another value then is no contradiction
#: of the KG's (RULES.md, "Another time"). Dates are values of their own and keep their check.
_ANOTHER_TIME = frozenset({"first", "originally", "previously", "formerly", "former", "initially", "once", "earlier",
                           "later"})


def _another_time(phrase: str) -> bool:
    return bool(set(_norm_tokens(phrase)) & _ANOTHER_TIME)


def _gender_stated(words: Sequence[str], prof: RelationProfile) -> bool:
    """Whether a phrase names the gender a gendered kinship relation adds, as a wrong value of it must: "X is the son
    of Z" contradicts no ``father`` triple (Z may be the mother), "X's father is Z" does."""
    own = {f for w in prof.words for f in forms(w) if f in GENDERED_KIN}
    return not own or bool(own & {f for w in words for f in forms(w)})


def _gender_entailed(words: Sequence[str], prof: RelationProfile) -> bool:
    """Whether a triple of ``prof``'s relation entails the gender the phrase's kinship words add: "X is not the
    father of Y" denies a parent triple only when the relation itself is gendered (``father``; not ``has child``,
    which leaves open whether X is the father or the mother, nor ``mother``). A gendered word of the other end's
    kinship ("X is not the daughter of Y" for (X, mother, Y)) is read as the kinship it specifies."""
    said = {GENDERED_KIN[f] + ":" + f for w in words for f in forms(w) if f in GENDERED_KIN}
    if not said:
        return True
    own = {GENDERED_KIN[f] + ":" + f for w in prof.words for f in forms(w) if f in GENDERED_KIN}
    if not own:
        return False
    kinds = {x.split(":")[0] for x in own}
    return all(x in own or x.split(":")[0] not in kinds for x in said)


_MEASURES = frozenset("""
m km kilometres kilometers kilometre kilometer metres meters metre meter square sq mi mile miles ft feet foot kg
tonnes tons % percent per cent degrees degree ° north south east west years year minutes minute hours hour seconds
usd dollars dollar eur euros people inhabitants
""".split())


#: Words of a number that say how much, not of what ("approximately 2.3 million"): a number's other words
#: ("over 300 different ancestries") say what it counts, as its unit does.
_SCALE_WORDS = frozenset("""
approximately approx around roughly nearly almost estimated least up under below above exceeding less fewer
hundred hundreds thousand thousands million millions billion billions trillion trillions
""".split())


def _plain_unit(value: Literal, prof: RelationProfile) -> bool:
    """Whether a value's unit words (without a unit the literal reads, the words it counts) fit a relation chosen
    only because it is the subject's one relation of that kind: none, a unit of measure, or words of the relation
    ("over 300 different ancestries" is no area)."""
    words = content_words(value.unit)
    if not words and value.kind == "number":
        words = tuple(w for w in content_words(value.text) if w not in _SCALE_WORDS)
    return not words or all(w in _MEASURES for w in words) or bool(compatibility(words, prof))


def _check_unlinked(kg: KGFacts, e: Any, other: str, side: str, phrase: str, words: tuple[str, ...], negated: bool,
                    claim: Claim, status: str, st: CheckerSettings = DEFAULT_SETTINGS) -> Verdict:  # fmt: skip
    """A claim between a KG entity ``e`` and a name the KG does not hold (``other``; ``side`` says which end of the
    claim ``e`` is): contradicted when the phrase names a single-valued relation whose value for ``e`` is another
    entity and the name shares no word with that value's names (a wrong value is wrong whatever else the KG
    holds); otherwise not in KG."""
    if not words:
        return Verdict(NOT_IN_KG, status, claim, fact=claim.fact)
    _, _, out_r, _, _ = kg._roles
    rids = [r for r in out_r.get(e, ()) if r in kg.functional and kg.profiles[r].value == "entity"]
    score = {r: compatibility(words, kg.profiles[r], general=False) or 0.0 for r in rids}
    core = _core_words(phrase, words)
    named = [r for r in rids if _full(core, kg.profiles[r], score[r], entity=True) >= st.contradiction_threshold
             and (direction(phrase, kg.profiles[r]) or "fwd") == side and _gender_stated(words, kg.profiles[r])]
    if not named or _another_time(phrase):
        return Verdict(NOT_IN_KG, status, claim, fact=claim.fact)
    heads, _, _, _, _ = kg._roles
    if any(r not in rids and kg.profiles[r].value == "entity" and kg._can_be(e, r, 0)
           and _full(core, kg.profiles[r], None, entity=True) >= st.contradiction_threshold
           and (direction(phrase, kg.profiles[r]) or "fwd") == side and _gender_stated(words, kg.profiles[r])
           for r in kg.functional if r in heads):
        # the phrase states as well a single-valued relation the KG holds no value of for it ("a secretary in"
        # reads as where it is: a place of birth, of death, of work): the name may be that one's value
        return Verdict(NOT_IN_KG, status, claim, fact=claim.fact)
    said = {w for w in _norm_tokens(other) if w not in _STOP}
    if re.search(r"\d", other) and not any(re.search(r"\d", kg.entities.get(v, "")) for rid in named
                                            for v in kg._by_head.get((e, rid), ())):
        return Verdict(NOT_IN_KG, status, claim, fact=claim.fact)  # a date or a number is no name of the value
    for rid in named:
        for value in kg._by_head.get((e, rid), ()):
            names = [kg.entities.get(value, "")] + list(kg.aliases.get(value, ()))
            if said & {w for n in names for w in _norm_tokens(n)} - _kind_words(kg, rid):
                return Verdict(NOT_IN_KG, status, claim, fact=claim.fact)
    rid = named[0]
    value = sorted(kg._by_head[(e, rid)], key=str)[0]
    label = SUPPORTED if negated else CONTRADICTED
    return _verdict(kg, label, "functional", claim, (e, rid, value))


def _kind_words(kg: KGFacts, rid: Any) -> frozenset[str]:
    """Words the labels of several of a relation's values share ("asteroid" of "S-type asteroid" and "C-type
    asteroid"): they name the kind of value, not which one, so a name sharing only them ("metallic asteroid") is
    another value."""
    _, tails, _, _, _ = kg._roles
    seen: Counter[str] = Counter()
    for t in tails.get(rid, ()):
        seen.update({w for w in _norm_tokens(kg.entities.get(t, "")) if w not in _STOP})
    return frozenset(w for w, n in seen.items() if n >= 2)


def _check_literal(kg: KGFacts, subjects: Sequence[Any], value: Literal, phrase: str, words: tuple[str, ...],
                   negated: bool, claim: Claim, embedder: Any, threshold: float,
                   context: Iterable[Any], st: CheckerSettings = DEFAULT_SETTINGS) -> Verdict | None:  # fmt: skip
    """A claim whose object is a value: the subject's values of the relations the phrase states (or, for a phrase
    that names none, its one relation with values of that kind). None when the subject has no such values (the
    object is then read as an entity name)."""
    pos, neg = (CONTRADICTED, SUPPORTED) if negated else (SUPPORTED, CONTRADICTED)
    _, _, out_r, _, _ = kg._roles
    found: list[tuple[Any, Any, list[tuple[Any, Literal]]]] = []
    for s in subjects:
        for rid in out_r.get(s, ()):
            vals = [(t, kg._literals[t]) for t in kg._by_head.get((s, rid), ()) if t in kg._literals]
            vals = [(t, v) for t, v in vals if agree(value, v) is not None]
            if vals:
                found.append((s, rid, vals))
    if len(subjects) > 1:
        ctx = set(context)
        agreeing = {s for s, _, vals in found if any(agree(value, v) for _, v in vals)}
        keep = agreeing if len(agreeing) == 1 else ({s for s in subjects if s in ctx} if ctx else set())
        if len(keep) != 1:
            return Verdict(NOT_IN_KG, "ambiguous", claim, fact=claim.fact) if found else None
        found = [f for f in found if f[0] in keep]
    if not found:
        return None
    score = _scores(kg, phrase, words, {rid for _, rid, _ in found}, embedder, threshold)
    chosen = [f for f in found if score[f[1]] is not None and score[f[1]] >= st.phrase_threshold]
    if chosen:
        top = max(score[f[1]] or 0.0 for f in chosen)
        chosen = [f for f in chosen if (score[f[1]] or 0.0) == top]
    elif not any(score[f[1]] for f in found) and len({f[1] for f in found}) == 1 \
            and not any(known(w) for w in words) and _plain_unit(value, kg.profiles[found[0][1]]):
        chosen = found  # "X is a 2009 film": the subject's one relation with dates
    if not chosen:
        return Verdict(NOT_IN_KG, "relation", claim, fact=claim.fact)
    for s, rid, vals in chosen:
        for t, v in vals:
            if agree(value, v):
                return _verdict(kg, pos, "negated" if negated else "triple", claim, (s, rid, t))
    core = _core_words(phrase, words)
    if all(rid in kg.functional and (score[rid] is None or
                                     _full(core, kg.profiles[rid], score[rid]) >= st.contradiction_threshold)
           for _, rid, _ in chosen) and any(agree(value, v) is not None for _, _, vals in chosen for _, v in vals):
        s, rid, vals = chosen[0]
        return _verdict(kg, neg, "functional", claim, (s, rid, vals[0][0]))
    return Verdict(NOT_IN_KG, "no_triple", claim, fact=claim.fact)


def _verdict(kg: KGFacts, label: str, reason: str, claim: Claim, triple: tuple[Any, Any, Any]) -> Verdict:
    return Verdict(label, reason, claim, kg.keys(triple), triple, claim.fact)


def check_fact(fact: str, kg: KGFacts, *, embedder: Any = None, threshold: float = 0.75,
               settings: CheckerSettings | None = None) -> Verdict:
    """One atomic fact's verdict: heuristic extraction, then :func:`check_claim` of each claim (a contradicted claim
    wins, then a supported one); a fact that yields no claim is not in KG with reason ``"no_claim"``."""
    claims = heuristic_claims(fact, kg)
    if not claims:
        return Verdict(NOT_IN_KG, "no_claim", None, fact=fact)
    verdicts = [check_claim(c, kg, embedder=embedder, threshold=threshold, settings=settings) for c in claims]
    for label in (CONTRADICTED, SUPPORTED):
        for v in verdicts:
            if v.label == label:
                return v
    return verdicts[0]


def factscore(verdicts: Sequence[Verdict]) -> float | None:
    """FActScore of one answer: supported / all atomic facts (None without facts)."""
    return sum(v.label == SUPPORTED for v in verdicts) / len(verdicts) if verdicts else None


# --------------------------------------------------------------------------------------------------- judge verification

#: The template id of :func:`verify_prompt` (stored with every judge verdict).
VERIFY_TEMPLATE_ID = "claims-verify-v1"
_VERDICTS = {"agrees": SUPPORTED, "conflicts": CONTRADICTED, "absent": NOT_IN_KG}


class _VerifyReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    triple: int | None = None
    verdict: str


#: The JSON schema of a verification reply, for backends with structured output.
VERIFY_JSON_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["triple", "verdict"],
    "properties": {"triple": {"type": ["integer", "null"]},
                   "verdict": {"type": "string", "enum": sorted(_VERDICTS)}},
}  # fmt: skip


def subject_triples(kg: KGFacts, entity: Any, *, limit: int = 40) -> list[tuple[Any, Any, Any]]:
    """The KG's triples about ``entity`` (as head, then as tail), at most ``limit``, in a stable order: what a judge
    is shown to verify a claim about it."""
    heads, _, out_r, in_r, _ = kg._roles
    own = sorted(((entity, r, t) for r in out_r.get(entity, ()) for t in kg._by_head.get((entity, r), ())), key=str)
    other = sorted(((h, r, entity) for r in in_r.get(entity, ()) for h in heads.get(r, ())
                    if entity in kg._by_head.get((h, r), ())), key=str)
    return (own + other)[:limit]


def verify_prompt(claim: Claim | str, kg: KGFacts, triples: Sequence[tuple[Any, Any, Any]]) -> str:
    """The judge's prompt to verify one claim (or fact sentence) against the subject's KG triples, verbalised and
    numbered from 1 (FActScore's verification against a knowledge source): which triple the claim states, and
    whether it agrees with it, conflicts with it (the same relation, another value, or a denied triple) or is
    absent. Claim and triples are fenced as data."""
    from kgprobe.generation.prompts import DATA_NOTICE, fence

    if isinstance(claim, Claim):
        said = claim.fact or f"{claim.subject} {'not ' if claim.negated else ''}{claim.relation} {claim.object}"
    else:
        said = claim
    facts = "\n".join(f"{i}. {kg.verbalise(t)}" for i, t in enumerate(triples, 1))
    return ("Below are numbered facts from a knowledge graph and a claim. Which fact does the claim state? Answer "
            '"agrees" if the claim says what that fact says, "conflicts" if the claim gives the same relation another '
            'value or denies the fact, and "absent" if no fact states the claim\'s relation between its subject and '
            'object. Reply with JSON only: {"triple": <the fact\'s number, or null>, "verdict": "agrees" | '
            f'"conflicts" | "absent"}}. {DATA_NOTICE}\n\n{fence(facts, "facts", lines=True)}\n\n'
            f"Claim: {fence(said, 'claim')}\nJSON:")


def parse_verification(reply: str | None, n_triples: int) -> tuple[int | None, str] | None:
    """(triple index from 0 or None, label) of a judge's verification reply (its first JSON object, validated); None
    when it holds none, names a verdict outside agrees / conflicts / absent, or a triple number out of range, or
    agrees / conflicts without a triple."""
    parsed = _first_json(reply, _VerifyReply)
    if parsed is None:
        return None
    label = _VERDICTS.get(parsed.verdict.strip().lower())
    if label is None:
        return None
    if parsed.triple is None:
        return (None, NOT_IN_KG) if label == NOT_IN_KG else None
    if not 1 <= parsed.triple <= n_triples:
        return None
    return parsed.triple - 1, label


def judge_claim(claim: Claim, kg: KGFacts, judge: Callable[[str], Any], *, embedder: Any = None,
                limit: int = 40) -> tuple[Verdict, str]:  # fmt: skip
    """(verdict, verifier) of one claim checked by a judge shown the subject's KG triples (:func:`verify_prompt`);
    the offline :func:`check_claim` decides (verifier ``"heuristic"``) when the subject does not link, it has no
    triple, or the judge's reply does not validate. The verdict's triple is the one the judge named."""
    s, _ = kg.resolve(claim.subject) if claim.subject else (None, "")
    triples = subject_triples(kg, s, limit=limit) if s is not None else []
    if triples:
        reply = judge(verify_prompt(claim, kg, triples))
        got = parse_verification(_reply_text(reply), len(triples))
        if got is not None:
            index, label = got
            name = _judge_name(judge)
            if index is None:
                return Verdict(label, "judge", claim, fact=claim.fact), name
            return _verdict(kg, label, "judge", claim, triples[index]), name
    return check_claim(claim, kg, embedder=embedder), HEURISTIC
