"""Atomic facts checked against the KG itself: FActScore with the KG as the knowledge source.

The checker is :mod:`kgprobe.scoring.claims` (shared with every suite that judges free text); its names are
re-exported here. What stays OKGQA's own: the sentence split of the judge-free Figure 6 fallback
(:func:`split_sentences`), the decomposition parser of a judge's bullet list (:func:`parse_fact_list`), and the two
per-answer scores: :func:`factscore` (supported / all atomic facts, the paper's §4.1) and :func:`precision`
(supported / decidable facts, shown beside it with the share the KG cannot decide).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from kgprobe.scoring.claims import (
    CONTRADICTED,
    HEURISTIC,
    NOT_IN_KG,
    SUPPORTED,
    Claim,
    KGFacts,
    Verdict,
    check_claim,
    check_fact,
    factscore,
    split_facts,
)

__all__ = [
    "CONTRADICTED",
    "HEURISTIC",
    "NOT_IN_KG",
    "SUPPORTED",
    "Claim",
    "FactVerdict",
    "KGFacts",
    "Verdict",
    "check_claim",
    "check_fact",
    "factscore",
    "parse_fact_list",
    "precision",
    "split_facts",
    "split_sentences",
    "statement",
]

#: The verdict record's earlier name.
FactVerdict = Verdict


def statement(head: str, relation: str, tail: str) -> str:
    """A triple as an atomic fact sentence: ``"Head relation tail."`` (what the oracle states)."""
    return f"{head} {relation} {tail}."


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
    """The sentences of ``text`` with at least ``min_words`` words (a bare "Yes." states no fact)."""
    if not text:
        return []
    parts = [p.strip() for p in _SENTENCE.split(text) if p and p.strip()]
    return [p for p in parts if len(p.split()) >= min_words]


def precision(verdicts: Iterable[Any]) -> float | None:
    """Supported / decidable facts of one answer's verdicts; None when no fact is decidable."""
    decided = [x for x in verdicts if x.label != NOT_IN_KG]
    return sum(x.label == SUPPORTED for x in decided) / len(decided) if decided else None


def fact_lines(kg: KGFacts, triples: Sequence[tuple[int, int, int]]) -> list[str]:
    """The triples as fact sentences."""
    return [kg.verbalise(t) for t in triples]
