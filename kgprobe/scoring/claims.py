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

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kgprobe.generation.prompts import DATA_NOTICE, fence
from kgprobe.kg.queries import normalise_label

__all__ = [
    "CLAIMS_JSON_SCHEMA",
    "CLAIMS_TEMPLATE_ID",
    "CONTRADICTED",
    "DEFAULT_PHRASINGS",
    "HEURISTIC",
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
    "parse_claims",
    "split_facts",
]

SUPPORTED, CONTRADICTED, NOT_IN_KG = "supported", "contradicted", "not_in_kg"
#: The extractor name of the offline fallback, shown wherever its numbers appear.
HEURISTIC = "heuristic"
#: The claim-extraction prompt's id: ``-v2`` fences the answer as data (``-v1``, unfenced, is no longer asked).
CLAIMS_TEMPLATE_ID = "claims-extract-v2"

#: Phrasings of common relation keys besides their labels: phrase -> reversed (True: "X <phrase> Y" states
#: relation(Y, X)). A KG adds its own with ``phrasings``.
DEFAULT_PHRASINGS: dict[str, dict[str, bool]] = {
    "born_in": {"born in": False, "birthplace": False, "birthplace of": True},
    "died_in": {"died in": False, "passed away in": False},
    "buried_in": {"buried in": False, "buried at": False, "interred in": False},
    "citizen_of": {"citizen of": False, "national of": False},
    "educated_at": {"studied at": False, "educated at": False, "attended": False, "graduated from": False},
    "employer": {"worked for": False, "worked at": False, "employed by": False},
    "spouse": {"married to": False, "married": False, "spouse of": False, "husband of": False, "wife of": False},
    "child": {"parent of": False, "father of": False, "mother of": False, "son of": True, "daughter of": True,
              "has child": False, "had child": False},
    "father": {"son of": False, "daughter of": False, "child of": False},
    "mother": {"son of": False, "daughter of": False, "child of": False},
    "sibling": {"sibling of": False, "brother of": False, "sister of": False},
    "composed_by": {"composed by": False, "composed": True, "written by": False},
    "written_by": {"written by": False, "wrote": True, "authored by": False},
    "directed_by": {"directed by": False, "directed": True},
    "painted_by": {"painted by": False, "painted": True, "created by": False},
    "sculpted_by": {"sculpted by": False, "sculpted": True, "created by": False},
    "founded_by": {"founded by": False, "founded": True, "established by": False, "established": True},
    "architect": {"designed by": False, "designed": True},
    "housed_in": {"housed in": False, "housed at": False, "held in": False, "kept in": False, "displayed in": False,
                  "displayed at": False, "exhibited in": False, "exhibited at": False},
    "located_in": {"located in": False, "situated in": False, "lies in": False, "in": False},
    "located_in_city": {"located in": False, "situated in": False, "lies in": False, "in": False},
    "country": {"located in": False, "situated in": False, "country": False, "in": False},
    "continent": {"located in": False, "situated in": False, "located on": False},
    "shares_border_with": {"borders": False, "shares a border with": False, "borders with": False},
    "capital_of": {"capital of": False, "the capital of": False},
    "headquarters": {"headquartered in": False, "based in": False, "headquarters in": False},
    "flows_through": {"flows through": False, "runs through": False},
    "mouth": {"flows into": False, "empties into": False},
    "on_river": {"on the": False, "lies on": False, "located on": False},
    "member_of": {"member of": False},
    "part_of": {"part of": False},
    "student_of": {"student of": False, "studied under": False, "pupil of": False, "taught by": False},
    "named_after": {"named after": False, "named for": False},
    "premiered_in": {"premiered in": False, "first performed in": False},
    "premiere_venue": {"premiered at": False, "first performed at": False},
    "depicts": {"depicts": False, "portrays": False, "shows": False},
    "commissioned_by": {"commissioned by": False, "commissioned": True},
    "award_received": {"received": False, "won": False, "awarded": False, "was awarded": False},
    "official_language": {"official language": False, "spoken in": True},
    "original_language": {"written in": False, "original language": False},
    "based_on": {"based on": False, "adapted from": False},
    "movement": {"associated with": False, "part of the": False},
    "main_subject": {"about": False},
}

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
    negated, functional, reversed, no_triple, unlinked, ambiguous, relation, no_claim), the claim, and the KG triple
    that decided it as keys (``triple``) and as the KG's ids (``ids``)."""

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


def _functional(triples: Iterable[tuple[Any, Any, Any]], share: float) -> frozenset[Any]:
    tails: dict[tuple[Any, Any], set[Any]] = {}
    for h, r, t in triples:
        tails.setdefault((r, h), set()).add(t)
    heads: dict[Any, list[bool]] = {}
    for (r, _), ts in tails.items():
        heads.setdefault(r, []).append(len(ts) == 1)
    return frozenset(r for r, flags in heads.items() if flags and sum(flags) / len(flags) >= share)


@dataclass(frozen=True)
class KGFacts:
    """What claims are checked against: entity labels (and aliases), relation labels and keys, the triples,
    relations functional in practice, declared inverses and symmetric relations, relation phrasings besides
    :data:`DEFAULT_PHRASINGS` (relation id -> phrase -> reversed). Ids are whatever the source uses (DuckDB ids,
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

    # -------------------------------------------------------------------------------------------- builders
    @classmethod
    def from_triples(cls, triples: Iterable[tuple[str, str, str]], *, entity_labels: Mapping[str, str] | None = None,
                     relation_labels: Mapping[str, str] | None = None,
                     aliases: Mapping[str, Sequence[str]] | None = None, inverses: Mapping[str, str] | None = None,
                     symmetric: Iterable[str] = (), functional_share: float = 0.95,
                     phrasings: Mapping[str, Mapping[str, bool]] | None = None) -> KGFacts:  # fmt: skip
        """From ``(head, relation, tail)`` keys; labels default to the keys (underscores as spaces)."""
        trip = frozenset((str(h), str(r), str(t)) for h, r, t in triples)
        ents = {e for h, _, t in trip for e in (h, t)} | set(entity_labels or {})
        rels = {r for _, r, _ in trip} | set(relation_labels or {})
        elab = {e: str((entity_labels or {}).get(e, e.replace("_", " "))) for e in ents}
        rlab = {r: str((relation_labels or {}).get(r, r.replace("_", " "))) for r in rels}
        return cls(entities=elab, relations=rlab, triples=trip, functional=_functional(trip, functional_share),
                   relation_keys={r: r for r in rels}, entity_keys={e: e for e in ents},
                   aliases={k: tuple(v) for k, v in (aliases or {}).items()},
                   inverses=_inverse_sets(inverses or {}), symmetric=frozenset(symmetric),
                   phrasings=_phrasings(rlab, {r: r for r in rels}, phrasings))

    @classmethod
    def from_duckdb(cls, con: Any, kg: str | None = None, *, functional_share: float = 0.95,
                    inverses: Mapping[str, str] | None = None, symmetric: Iterable[str] = (),
                    phrasings: Mapping[str, Mapping[str, bool]] | None = None, min_share: float | None = None) -> KGFacts:  # fmt: skip
        """The whole unperturbed KG ``kg`` (a schema; None: the current one) from a DuckDB connection or file path.
        ``inverses`` / ``symmetric`` / ``phrasings`` are keyed by relation key; entity keys' local names are
        aliases. ``min_share`` is the old name of ``functional_share``."""
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
        return cls(entities={int(i): str(lab) for i, _, lab in ents}, relations=rlab, triples=trip,
                   functional=_functional(trip, share), relation_keys=rkey,
                   entity_keys={int(i): str(k) for i, k, _ in ents},
                   aliases={int(i): (_local_name(str(k)),) for i, k, _ in ents if _local_name(str(k))},
                   inverses=_inverse_sets(inv), symmetric=frozenset(rel_by_key[s] for s in symmetric if s in rel_by_key),
                   phrasings=_phrasings(rlab, rkey, phrasings))

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
    def _exact(self) -> dict[str, tuple[Any, ...]]:
        out: dict[str, list[Any]] = {}
        for eid, label in self.entities.items():
            out.setdefault(label, []).append(eid)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def _longest(self) -> int:
        return max((len(k) for k in self._names), default=0)

    @cached_property
    def _by_head(self) -> dict[tuple[Any, Any], set[Any]]:
        out: dict[tuple[Any, Any], set[Any]] = {}
        for h, r, t in self.triples:
            out.setdefault((h, r), set()).add(t)
        return out

    @cached_property
    def _forms(self) -> dict[tuple[str, ...], list[tuple[Any, bool]]]:
        """Relation phrase (normalised tokens) -> [(relation, reversed)]."""
        out: dict[tuple[str, ...], list[tuple[Any, bool]]] = {}

        def add(phrase: str, rid: Any, rev: bool) -> None:
            toks = _strip_aux(_norm_tokens(phrase))
            if toks and (rid, rev) not in out.setdefault(toks, []):
                out[toks].append((rid, rev))

        for rid, label in sorted(self.relations.items(), key=lambda kv: str(kv[0])):
            for base in {label, self.relation_keys.get(rid, label)}:
                add(base, rid, False)
                toks = _norm_tokens(base)
                if toks and toks[-1] == "by" and len(toks) > 1:
                    add(" ".join(toks[:-1]), rid, True)          # "painted by" -> "Picasso painted Guernica"
                if toks and toks[-1] not in _PREP_END:
                    add(" ".join(toks) + " of", rid, True)       # "director" -> "X is the director of Y"
            key = self.relation_keys.get(rid, str(rid))
            for phrase, rev in {**DEFAULT_PHRASINGS.get(key, {}), **dict(self.phrasings.get(rid) or {})}.items():
                add(phrase, rid, bool(rev))
        return out

    # -------------------------------------------------------------------------------------------- linking
    def resolve(self, mention: str) -> tuple[Any | None, str]:
        """(entity id or None, status) of a whole mention: ``linked`` by label, normalised label or alias;
        ``ambiguous`` when it names two entities; ``unlinked`` otherwise."""
        exact = self._exact.get(mention.strip(), ())
        if len(exact) == 1:
            return exact[0], "linked"
        toks = _norm_tokens(mention)
        while toks and toks[0] in {"the", "a", "an"}:
            toks = toks[1:]
        for cand in (toks, _norm_tokens(mention)):
            labels, aliases = self._names.get(cand, ((), ()))
            if len(labels) == 1:
                return next(iter(labels)), "linked"
            if len(labels) > 1:
                return None, "ambiguous"
            if len(aliases) == 1:
                return next(iter(aliases)), "linked"
            if len(aliases) > 1:
                return None, "ambiguous"
        # a longer mention ("the painting Guernica") that holds exactly one entity name
        found = [m for m in self.mentions(mention)]
        if len(found) == 1:
            return found[0][2], "linked" if found[0][2] is not None else "ambiguous"
        return None, "unlinked"

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
        """The KG relations a relation phrase states, each with whether it reads reversed: by label, key or a
        phrasing (of the whole phrase, else of its longest ending that is one); else, with an embedder, the closest
        relation label (the phrase alone) at cosine >= ``threshold``."""
        toks = _strip_aux(_norm_tokens(phrase))
        if not toks:
            return []
        possessive = toks[0] == "s"
        if possessive:  # "Renoir's place of birth is Limoges"
            toks = _strip_aux(toks[1:])
            while toks and toks[-1] in {"is", "was", "are", "were"}:
                toks = toks[:-1]
        while toks and toks[-1] in {"the", "a", "an"}:  # "housed in the Museo Reina Sofia"
            toks = toks[:-1]
        if not toks:
            return []
        found = self._forms.get(toks)
        if found:
            return list(found)
        # prose puts a description before the verb ("was a French painter born in"): the longest ending that is a
        # relation phrase, of two words at least, or one that is not a bare preposition
        for i in range(1, len(toks)):
            tail = toks[i:]
            if (len(tail) >= 2 or tail[0] not in _PREP_END) and tail in self._forms:
                return list(self._forms[tail])
        if embedder is None or not self.relations:
            return []
        rids = sorted(self.relations, key=str)
        texts = [self.relations[r] for r in rids]
        queries = [" ".join(toks)]
        if toks[-1] == "of" and len(toks) > 1:
            queries.append(" ".join(toks[:-1]))
        sims = embedder.similarity(queries, texts)
        best = None
        for qi in range(len(queries)):
            for j, r in enumerate(rids):
                s = float(sims[qi][j])
                if s >= threshold and (best is None or s > best[0]):
                    rev = qi == 1 and _norm_tokens(self.relations[r])[-1:] not in [(p,) for p in _PREP_END]
                    best = (s, r, rev)
        return [] if best is None else [(best[1], best[2])]

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
        """The KG's object of a functional ``relation`` for ``head`` when it is not ``tail`` (else None); also via
        a functional declared inverse read from the tail's side."""
        if relation in self.functional:
            objs = self._by_head.get((head, relation), set())
            if objs and tail not in objs:
                return (head, relation, sorted(objs, key=str)[0])
        for inv in self.inverses.get(relation, ()):
            if inv in self.functional:
                objs = self._by_head.get((tail, inv), set())
                if objs and head not in objs:
                    return (tail, inv, sorted(objs, key=str)[0])
        return None

    def keys(self, triple: tuple[Any, Any, Any]) -> tuple[str, str, str]:
        h, r, t = triple
        return (self.entity_keys.get(h, str(h)), self.relation_keys.get(r, str(r)), self.entity_keys.get(t, str(t)))

    def verbalise(self, triple: tuple[Any, Any, Any]) -> str:
        """A triple as an atomic fact sentence: ``"Head relation tail."``."""
        h, r, t = triple
        return f"{self.entities.get(h, str(h))} {self.relations.get(r, str(r))} {self.entities.get(t, str(t))}."

    # kept for callers of the earlier checker
    def states_relation(self, text: str, relation: Any) -> bool:
        """Whether the relation phrase ``text`` states ``relation`` (either direction)."""
        return any(r == relation for r, _ in self.relation_candidates(text))


def _nameable(toks: tuple[str, ...]) -> bool:
    """Whether a normalised name can name an entity in text (not empty, not one letter, not only stop words)."""
    return bool(toks) and (len(toks) > 1 or len(toks[0]) > 1) and not all(t in _STOP for t in toks)


def _local_name(key: str) -> str:
    local = re.split(r"[/#:]", key.rstrip("/"))[-1]
    return local if re.search(r"[A-Za-z]{2}", local) else ""


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
_NEG_TOKENS = {"not", "never"}


def heuristic_claims(fact: str, kg: KGFacts) -> list[Claim]:
    """The claims of one fact sentence, offline: the KG entity names it mentions, and the words between two
    consecutive ones as the relation phrase. "The R of X is Y" and "X's R is Y" read as R(X, Y); "A r B and C" and
    "A r B, not C" as r(A, B), r(A, C) (the second denied); "A and B r C" as r(A, C), r(B, C). Negation words (not,
    never, n't, cannot, no longer) between two mentions deny that claim, before the first mention every claim; they leave
    the phrase."""
    text = re.sub(r"n['\u2019]t\b", " not", fact)
    text = re.sub(r"\bno longer\b", "not", text, flags=re.IGNORECASE)
    text = re.sub(r"\bcannot\b", "can not", text, flags=re.IGNORECASE)
    toks = _norm_tokens(text)
    ments = kg.mentions(text)
    out: list[Claim] = []
    if len(ments) < 2:
        return out

    def surface(m: tuple[int, int, Any]) -> str:
        return kg.entities[m[2]] if m[2] is not None else " ".join(toks[m[0]:m[1]])

    lead = toks[:ments[0][0]]
    lead_neg = any(t in _NEG_TOKENS for t in lead)
    lead = _strip_aux(tuple(t for t in lead if t not in _NEG_TOKENS))
    prev: tuple[tuple[int, int, Any], str] | None = None
    pending: list[tuple[int, int, Any]] = []
    for a, b in zip(ments, ments[1:]):
        between = toks[a[1]:b[0]]
        neg = lead_neg != any(t in _NEG_TOKENS for t in between)
        between = tuple(t for t in between if t not in _NEG_TOKENS)
        core = _strip_aux(between)
        if a is ments[0] and lead and lead[-1] == "of" and len(lead) > 1 and not core:
            rel = " ".join(lead[:-1])  # "The place of birth of Renoir is Limoges"
            out.append(Claim(surface(a), rel, surface(b), neg, fact))
            prev = (a, rel)
            continue
        if set(core) <= _CONJ or (neg and len(core) <= 2 and set(core) <= _CONJ | _PREP_END):
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


def parse_claims(reply: str | None, answer: str | None = None) -> list[Claim] | None:
    """The claims of a judge's reply (its first JSON object, validated by :class:`ClaimList`); None when the
    reply holds none that validates. A fact without subject, relation and object becomes a claim of empty parts
    (it counts as a fact the KG cannot judge). With ``answer``, facts whose subject and object do not occur in the
    answer are dropped (a small judge copies its demonstration)."""
    if not reply:
        return None
    start = reply.find("{")
    if start < 0:
        return None
    try:
        obj, _ = json.JSONDecoder().raw_decode(reply[start:])
        parsed = ClaimList.model_validate(obj)
    except (ValueError, ValidationError):
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
        text = reply if isinstance(reply, str) else (reply.get("text") if isinstance(reply, Mapping)
                                                    else getattr(reply, "text", None))
        claims = parse_claims(text, answer)
        if claims is not None:
            name = getattr(judge, "name", None) or getattr(judge, "model", None) or "judge"
            return claims, str(name)
    return [c for fact in split_facts(answer) for c in heuristic_claims(fact, kg)], HEURISTIC


# --------------------------------------------------------------------------------------------------- verification


def check_claim(claim: Claim, kg: KGFacts, *, embedder: Any = None, threshold: float = 0.75) -> Verdict:
    """The verdict of one claim against ``kg`` (see the module docstring)."""
    if not (claim.subject and claim.relation and claim.object):
        return Verdict(NOT_IN_KG, "no_claim", claim, fact=claim.fact)
    s, s_status = kg.resolve(claim.subject)
    o, o_status = kg.resolve(claim.object)
    if s is None or o is None:
        reason = "ambiguous" if "ambiguous" in (s_status, o_status) else "unlinked"
        return Verdict(NOT_IN_KG, reason, claim, fact=claim.fact)
    cands = kg.relation_candidates(claim.relation, embedder=embedder, threshold=threshold)
    if not cands:
        return Verdict(NOT_IN_KG, "relation", claim, fact=claim.fact)
    pos = SUPPORTED if not claim.negated else CONTRADICTED
    neg = CONTRADICTED if not claim.negated else SUPPORTED
    for rid, rev in cands:
        h, t = (o, s) if rev else (s, o)
        how = kg.holds(h, rid, t)
        if how is not None:
            return _verdict(kg, pos, "negated" if claim.negated else how, claim, (h, rid, t))
    others = []
    for rid, rev in cands:
        h, t = (o, s) if rev else (s, o)
        others.append(kg.other_object(h, rid, t))
    if all(x is not None for x in others):
        return _verdict(kg, neg, "functional", claim, others[0])
    for rid, rev in cands:
        h, t = (o, s) if rev else (s, o)
        if (t, rid, h) in kg.triples:
            return _verdict(kg, NOT_IN_KG, "reversed", claim, (t, rid, h))
    return Verdict(NOT_IN_KG, "no_triple", claim, fact=claim.fact)


def _verdict(kg: KGFacts, label: str, reason: str, claim: Claim, triple: tuple[Any, Any, Any]) -> Verdict:
    return Verdict(label, reason, claim, kg.keys(triple), triple, claim.fact)


def check_fact(fact: str, kg: KGFacts, *, embedder: Any = None, threshold: float = 0.75) -> Verdict:
    """One atomic fact's verdict: heuristic extraction, then :func:`check_claim` of each claim (a contradicted claim
    wins, then a supported one); a fact that yields no claim is not in KG with reason ``"no_claim"``."""
    claims = heuristic_claims(fact, kg)
    if not claims:
        return Verdict(NOT_IN_KG, "no_claim", None, fact=fact)
    verdicts = [check_claim(c, kg, embedder=embedder, threshold=threshold) for c in claims]
    for label in (CONTRADICTED, SUPPORTED):
        for v in verdicts:
            if v.label == label:
                return v
    return verdicts[0]


def factscore(verdicts: Sequence[Verdict]) -> float | None:
    """FActScore of one answer: supported / all atomic facts (None without facts)."""
    return sum(v.label == SUPPORTED for v in verdicts) / len(verdicts) if verdicts else None
