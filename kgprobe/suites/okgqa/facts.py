"""Atomic facts checked against the KG itself: FActScore's precision with the KG as the knowledge source.

An answer is split into atomic facts (by a judge model, FActScore's decomposition, or by sentences for the
judge-free verdict, :func:`split_sentences`); each fact is checked against the *unperturbed* KG
(:func:`check_fact`):

1. entity mentions are linked to KG entities (labels matched on normalised text, longest first, no overlaps);
2. the claim is matched to a KG triple between two linked entities whose relation the fact states (every content
   word of the relation's label or key occurs in the fact, or, with an embedder, the fact's cosine with the
   verbalised triple reaches ``threshold``) -> **supported**;
3. else, when a linked entity's relation is functional (one object per subject in the KG), the fact states it and
   names another linked entity than the KG's object -> **contradicted**;
4. else -> **not in KG** (the KG is silent: open world, so the fact is undecidable, not false).

Fact precision is supported / (supported + contradicted) per answer; the share not in KG says how much of an
answer the KG can judge at all.

:class:`KGFacts` is what the check reads: labels, triples and functional relations, from a DuckDB KG
(:meth:`KGFacts.from_duckdb`) or from an item's evidence (:meth:`KGFacts.from_evidence`: the question's clean
subgraph plus the KG's triples about its entities), so scoring needs no connection.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from kgprobe.kg.queries import normalise_label

__all__ = [
    "CONTRADICTED",
    "NOT_IN_KG",
    "SUPPORTED",
    "FactVerdict",
    "KGFacts",
    "check_fact",
    "parse_fact_list",
    "split_sentences",
    "statement",
]

SUPPORTED, CONTRADICTED, NOT_IN_KG = "supported", "contradicted", "not_in_kg"
_STOP = {"a", "an", "the", "of", "in", "on", "at", "by", "to", "for", "is", "was", "as", "with", "and", "from", "has",
         "had", "its", "his", "her", "their"}


def statement(head: str, relation: str, tail: str) -> str:
    """A triple as an atomic fact sentence: ``"Head relation tail."`` (what the oracle states)."""
    return f"{head} {relation} {tail}."


@dataclass(frozen=True)
class KGFacts:
    """What facts are checked against: entity labels, relation labels (and keys), triples, functional relations."""

    entities: Mapping[int, str]
    relations: Mapping[int, str]
    triples: frozenset[tuple[int, int, int]]
    functional: frozenset[int] = frozenset()
    relation_keys: Mapping[int, str] = field(default_factory=dict)

    @classmethod
    def from_evidence(cls, evidence: Mapping[str, Any]) -> KGFacts:
        """From an item's evidence (``kg``: ``entities`` [[id, label]], ``relations`` [[id, label, key]],
        ``triples`` [[h, r, t]], ``functional`` [id])."""
        kg = evidence.get("kg", evidence)
        return cls(entities={int(i): str(lab) for i, lab in kg.get("entities", [])},
                   relations={int(r[0]): str(r[1]) for r in kg.get("relations", [])},
                   triples=frozenset((int(h), int(r), int(t)) for h, r, t in kg.get("triples", [])),
                   functional=frozenset(int(r) for r in kg.get("functional", [])),
                   relation_keys={int(r[0]): str(r[2]) for r in kg.get("relations", []) if len(r) > 2})

    @classmethod
    def from_duckdb(cls, con_or_path: Any, kg: str | None = None, *, min_share: float = 1.0) -> KGFacts:
        """The whole KG from a DuckDB connection or file path (``kg``: its schema; None: the current one);
        relations are functional when at least ``min_share`` of their heads have one tail."""
        import duckdb

        from kgprobe.sql import load_sql, quote_identifier

        own = isinstance(con_or_path, (str, Path))
        con = duckdb.connect(str(con_or_path), read_only=True) if own else con_or_path
        try:
            if kg:
                con.execute(f"USE {quote_identifier(kg)}")
            ents = dict(con.execute("SELECT id, label FROM entities").fetchall())
            rels = {int(i): (lab, key) for i, lab, key in con.execute("SELECT id, label, key FROM relations").fetchall()}
            triples = frozenset(tuple(map(int, t)) for t in con.execute("SELECT head, relation, tail FROM triples").fetchall())
            functional = frozenset(int(r) for r, _ in con.execute(load_sql("okgqa/functional_relations"),
                                                                  {"min_share": min_share}).fetchall())
        finally:
            if own:
                con.close()
        return cls(entities={int(k): str(v) for k, v in ents.items()}, relations={k: v[0] for k, v in rels.items()},
                   triples=triples, functional=functional, relation_keys={k: v[1] for k, v in rels.items()})

    def to_evidence(self) -> dict[str, Any]:
        """The JSON-able form :meth:`from_evidence` reads."""
        return {"entities": sorted([i, lab] for i, lab in self.entities.items()),
                "relations": sorted([i, lab, self.relation_keys.get(i, lab)] for i, lab in self.relations.items()),
                "triples": sorted(list(t) for t in self.triples), "functional": sorted(self.functional)}

    @cached_property
    def _by_head(self) -> dict[int, list[tuple[int, int]]]:
        out: dict[int, list[tuple[int, int]]] = {}
        for h, r, t in self.triples:
            out.setdefault(h, []).append((r, t))
        return out

    @cached_property
    def _pairs(self) -> dict[tuple[int, int], list[tuple[int, int, int]]]:
        out: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        for h, r, t in self.triples:
            out.setdefault((h, t), []).append((h, r, t))
            out.setdefault((t, h), []).append((h, r, t))
        return out

    @cached_property
    def _labels(self) -> list[tuple[str, int]]:
        # longest label first, so "Museo Reina Sofia" wins over "Sofia"; equal lengths by id for determinism
        norm = {}
        for eid, label in sorted(self.entities.items()):
            n = normalise_label(label)
            if n and len(n) > 1:
                norm.setdefault(n, eid)
        return sorted(norm.items(), key=lambda kv: (-len(kv[0]), kv[1]))

    @cached_property
    def _relation_words(self) -> dict[int, list[set[str]]]:
        out = {}
        for rid, label in self.relations.items():
            variants = {label, self.relation_keys.get(rid, label)}
            out[rid] = [w for w in (_content(normalise_label(v)) for v in variants) if w]
        return out

    def link(self, text: str) -> list[int]:
        """The KG entities ``text`` names, in order of mention (longest labels first, no overlapping mentions)."""
        norm = f" {normalise_label(text)} "
        taken = [False] * len(norm)
        found: list[tuple[int, int]] = []
        for label, eid in self._labels:
            needle = f" {label} "
            start = norm.find(needle)
            while start >= 0:
                span = range(start + 1, start + 1 + len(label))
                if not any(taken[i] for i in span):
                    for i in span:
                        taken[i] = True
                    found.append((start, eid))
                    break
                start = norm.find(needle, start + 1)
        return list(dict.fromkeys(eid for _, eid in sorted(found)))

    def states_relation(self, text: str, relation: int) -> bool:
        """Whether every content word of the relation's label (or key) occurs in ``text`` (crude stems)."""
        words = {_stem(w) for w in normalise_label(text).split()}
        return any(all(_stem(w) in words for w in variant) for variant in self._relation_words.get(relation, []))

    def verbalise(self, triple: tuple[int, int, int]) -> str:
        h, r, t = triple
        return statement(self.entities.get(h, str(h)), self.relations.get(r, str(r)), self.entities.get(t, str(t)))


def _content(norm: str) -> set[str]:
    return {w for w in norm.split() if w not in _STOP}


def _stem(word: str) -> str:
    return word[:5]


@dataclass(frozen=True)
class FactVerdict:
    """A fact's verdict: ``label`` (supported / contradicted / not_in_kg), the KG triple behind it (the supporting
    triple, or the KG's own object of a contradicted functional relation), the linked entities and why."""

    fact: str
    label: str
    triple: tuple[int, int, int] | None
    entities: tuple[int, ...]
    reason: str

    @property
    def decidable(self) -> bool:
        return self.label != NOT_IN_KG


def check_fact(fact: str, kg: KGFacts, *, embedder: Any = None, threshold: float = 0.8) -> FactVerdict:
    """The verdict of one atomic fact against ``kg`` (see the module docstring)."""
    linked = kg.link(fact)
    if not linked:
        return FactVerdict(fact, NOT_IN_KG, None, (), "names no KG entity")
    candidates = []
    for i, a in enumerate(linked):
        for b in linked[i + 1:]:
            candidates += kg._pairs.get((a, b), [])
    candidates = sorted(set(candidates))
    for triple in candidates:
        if kg.states_relation(fact, triple[1]):
            return FactVerdict(fact, SUPPORTED, triple, tuple(linked), "a KG triple joins the entities by the stated relation")
    if candidates and embedder is not None:
        sims = embedder.similarity([fact], [kg.verbalise(t) for t in candidates])[0]
        best = int(sims.argmax())
        if float(sims[best]) >= threshold:
            return FactVerdict(fact, SUPPORTED, candidates[best], tuple(linked),
                               f"a KG triple joins the entities and reads alike (cosine {float(sims[best]):.2f})")
    for h in linked:
        for r, x in sorted(kg._by_head.get(h, [])):
            if r not in kg.functional or not kg.states_relation(fact, r):
                continue
            others = [y for y in linked if y not in (h, x) and (h, r, y) not in kg.triples]
            if others and x not in linked:
                return FactVerdict(fact, CONTRADICTED, (h, r, x), tuple(linked),
                                   f"the KG's {kg.relations.get(r, r)} of {kg.entities.get(h, h)} is "
                                   f"{kg.entities.get(x, x)}, not {kg.entities.get(others[0], others[0])}")
    return FactVerdict(fact, NOT_IN_KG, None, tuple(linked), "no KG triple states or contradicts it")


_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+(.*\S)\s*$")


def parse_fact_list(text: str | None) -> list[str] | None:
    """The atomic facts of a decomposition answer: its bullet or numbered lines; without any, its sentences. None
    when there is nothing (a failed decomposition, read as unknown rather than as zero facts)."""
    if not text or not text.strip():
        return None
    facts = [m.group(1).strip() for m in map(_BULLET.match, text.splitlines()) if m]
    facts = facts or split_sentences(text)
    return facts or None


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def split_sentences(text: str | None, *, min_words: int = 3) -> list[str]:
    """The sentences of ``text`` with at least ``min_words`` words: the judge-free decomposition (a bare "Yes."
    states no fact)."""
    if not text:
        return []
    parts = [p.strip() for p in _SENTENCE.split(text) if p and p.strip()]
    return [p for p in parts if len(p.split()) >= min_words]


def precision(verdicts: Iterable[FactVerdict]) -> float | None:
    """Supported / decidable of one answer's verdicts; None when no fact is decidable."""
    v = list(verdicts)
    decided = [x for x in v if x.decidable]
    return sum(x.label == SUPPORTED for x in decided) / len(decided) if decided else None


def fact_lines(kg: KGFacts, triples: Sequence[tuple[int, int, int]]) -> list[str]:
    """The triples as fact sentences."""
    return [kg.verbalise(t) for t in triples]
