"""How well the offline extractor recovers triples: sentences written from KG triples in several phrasings (other
than the one the gold answers use, and some it is not built for), and the precision and recall of the triples it
extracts from them.

    >>> scores = measure_extractor(extractor, triples, labels, relation_labels)
    >>> scores["precision"], scores["recall"]
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from kgprobe.suites.drowzee.oracle import Extractor
from kgprobe.suites.drowzee.templates import phrase_type

__all__ = ["EVAL_TEMPLATES", "measure_extractor", "write_sentences"]

#: Phrasings per phrase type ({s}, {r}, {o}); the last ones of each are ones the extractor has no pattern for.
EVAL_TEMPLATES: dict[str, tuple[str, ...]] = {
    "noun": ("{s}'s {r} is {o}.", "{o} is the {r} of {s}.", "The {r} of {s} was {o}.", "{o} was the {r} of {s}.",
             "As far as I know, the {r} of {s} is {o}.", "{s} has {o} as its {r}."),
    "passive": ("{s} was {r} {o}.", "{s} is {r} {o}.", "{s} has been {r} {o}.", "{s}, as is well known, is {r} {o}."),
    "active": ("{s} {r} {o}.", "Indeed {s} {r} {o}.", "{s} certainly {r} {o}."),
}


def write_sentences(triples: Sequence[tuple[int, str, int]], entity_labels: Mapping[int, str],
                    relation_labels: Mapping[str, str], *, phrase_types: Mapping[str, str] | None = None,
                    seed: int = 0) -> list[tuple[str, tuple[int, str, int]]]:  # fmt: skip
    """One sentence per triple ``(head id, relation key, tail id)``, its phrasing drawn (seeded) from
    :data:`EVAL_TEMPLATES` for the relation's phrase type; with the triple it states."""
    rng = random.Random(seed)
    out = []
    for h, r, t in triples:
        label = relation_labels[r]
        template = rng.choice(EVAL_TEMPLATES[phrase_type(label, phrase_types, r)])
        out.append((template.format(s=entity_labels[h], r=label, o=entity_labels[t]), (h, r, t)))
    return out


def measure_extractor(extractor: Extractor, cases: Sequence[tuple[str, tuple[int, str, int]]]) -> dict[str, Any]:
    """Precision (extracted triples that are the stated one, by entity ids and relation key) and recall (stated
    triples extracted) over ``cases`` (sentence, triple), with the counts and the misses."""
    extracted = correct = 0
    misses = []
    for sentence, (h, r, t) in cases:
        edges = extractor.extract(sentence, prefer=(h, t))
        got = [(e.head.key, e.relation, e.tail.key) for e in edges]
        extracted += len(got)
        hit = (str(h), r, str(t)) in got
        correct += hit
        if not hit:
            misses.append({"sentence": sentence, "extracted": got})
    return {"n": len(cases), "extracted": extracted, "correct": correct,
            "precision": correct / extracted if extracted else float("nan"),
            "recall": correct / len(cases) if cases else float("nan"), "misses": misses}
