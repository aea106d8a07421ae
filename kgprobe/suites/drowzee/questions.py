"""Drowzee's questions as item rows: from rule-derived facts (Table 2, positive and opposite phrasings) and from MTL
formulas over dated events (Table 3, query years balanced between true and false), each with its proof and the
exact text a perfect answer gives (``gold_answer``: the answer word, then the proof's facts as declarative
sentences, one per line)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from kgprobe.suites.base import content_id
from kgprobe.suites.drowzee.facts import DatedEvent
from kgprobe.suites.drowzee.rules import DerivedFact
from kgprobe.suites.drowzee.templates import (
    fact_sentence,
    mtl2nl,
    phrase_type,
    rule_question,
    year_sentences,
)
from kgprobe.suites.drowzee.temporal import (
    DOMAIN,
    And,
    Atom,
    Finally,
    Formula,
    Globally,
    Next,
    Not,
    Or,
    Until,
    atoms,
    depth,
    operator,
    satisfying_years,
)

__all__ = ["OPERATORS", "formula_from_json", "formula_to_json", "gold_answer", "rule_items", "sample_formula",
           "temporal_items"]

#: The operators a temporal question's outermost operator is drawn from (uniformly).
OPERATORS: tuple[str, ...] = ("not", "and", "or", "next", "finally", "globally", "until")


def gold_answer(expected: str, sentences: Sequence[str]) -> str:
    """The perfect answer: "Yes." or "No.", then each fact of the proof as a declarative sentence on its own line."""
    return "\n".join([("Yes." if expected == "yes" else "No."), *(f"- {s}" for s in sentences)])


def _label(relation: str, labels: Mapping[str, str]) -> str:
    return labels.get(relation) or relation.replace("_", " ")


def rule_items(facts: Sequence[DerivedFact], *, entity_labels: Mapping[int, str], relation_labels: Mapping[str, str],
               relation_ids: Mapping[int, str], phrase_types: Mapping[str, str] | None = None,
               snapshot_id: str = "") -> list[dict[str, Any]]:  # fmt: skip
    """Two items per derived fact (positive and opposite-semantics phrasing), task ``rule``."""
    rows = []
    for f in facts:
        rel_label = _label(f.relation, relation_labels)
        kind = phrase_type(rel_label, phrase_types, f.relation)
        s, o = entity_labels[f.subject], entity_labels[f.object]
        premises = []
        sentences = []
        for h, r, t in f.premises:
            key = relation_ids[r]
            lab = _label(key, relation_labels)
            premises.append({"head": h, "relation": key, "tail": t})
            sentences.append(fact_sentence(phrase_type(lab, phrase_types, key), entity_labels[h], lab, entity_labels[t]))
        ents = {str(i): entity_labels[i] for i in sorted({f.subject, f.object, *(x for p in f.premises for x in (p[0], p[2]))})}
        rels = {key: _label(key, relation_labels) for key in sorted({f.relation, *(relation_ids[p[1]] for p in f.premises)})}
        group = content_id(snapshot_id, "drowzee", f.rule, f.relation, f.subject, f.object)
        for phrasing in ("positive", "opposite"):
            opposite = phrasing == "opposite"
            expected = "yes" if f.truth != opposite else "no"
            question = rule_question(kind, s, rel_label, o, opposite=opposite, same=f.rule == "same")
            rows.append({
                "item_id": content_id(snapshot_id, "drowzee", f.rule, f.relation, f.subject, f.object, phrasing),
                "suite": "drowzee", "task": "rule", "answer_format": "yes_no", "question": question,
                "expected": expected, "group_id": group,
                "breakdown": {"rule": f.rule, "relation": f.relation, "phrasing": phrasing,
                              "in_kg": str(f.in_kg).lower()},
                "evidence": json.dumps({
                    "snapshot_id": snapshot_id, "rule": f.rule, "source_relation": f.source,
                    "derived": {"subject": f.subject, "relation": f.relation, "object": f.object, "truth": f.truth},
                    "in_kg": f.in_kg, "premises": premises, "sentences": sentences, "entities": ents,
                    "relations": rels, "phrase_type": kind,
                    "phrase_types": {k: phrase_type(v, phrase_types, k) for k, v in rels.items()},
                    # a true derived fact that is itself a KG triple, asked positively: a "yes" affirms the triple
                    # (the cross-suite consistency view reads this)
                    **({"asserts": [s, f.relation, o]} if f.in_kg and f.truth and not opposite else {}),
                }, separators=(",", ":"), ensure_ascii=False),
                "gold_answer": gold_answer(expected, sentences),
            })  # fmt: skip
    return rows


# ------------------------------------------------------------------------------------------------ temporal


def formula_to_json(f: Formula) -> Any:
    """A formula as JSON-ready nested lists (``["finally", 0, 40, ["atom", "x"]]``)."""
    if isinstance(f, Atom):
        return ["atom", f.name]
    if isinstance(f, (Not, Next)):
        return [operator(f), formula_to_json(f.f)]
    if isinstance(f, (Finally, Globally)):
        return [operator(f), f.lo, f.hi, formula_to_json(f.f)]
    if isinstance(f, Until):
        return ["until", f.lo, f.hi, formula_to_json(f.a), formula_to_json(f.b)]
    return [operator(f), formula_to_json(f.a), formula_to_json(f.b)]  # type: ignore[union-attr]


def formula_from_json(j: Any) -> Formula:
    """The inverse of :func:`formula_to_json`."""
    op = j[0]
    if op == "atom":
        return Atom(j[1])
    if op == "not":
        return Not(formula_from_json(j[1]))
    if op == "next":
        return Next(formula_from_json(j[1]))
    if op == "finally":
        return Finally(j[1], j[2], formula_from_json(j[3]))
    if op == "globally":
        return Globally(j[1], j[2], formula_from_json(j[3]))
    if op == "until":
        return Until(j[1], j[2], formula_from_json(j[3]), formula_from_json(j[4]))
    return (And if op == "and" else Or)(formula_from_json(j[1]), formula_from_json(j[2]))


def sample_formula(rng: random.Random, names: Sequence[str], *, max_depth: int = 2, near: Mapping[str, Sequence[str]] | None = None,
                   top: str | None = None, max_bound: int = 20) -> Formula:  # fmt: skip
    """A random formula of nesting depth <= ``max_depth`` (>= 1): the outermost operator ``top`` (or uniform over
    :data:`OPERATORS`), its operands atoms or, below the depth limit, formulas of one operator; a second atom is
    drawn among the first one's ``near`` events (overlapping in time) when there are any, so that binary
    operators relate events that meet."""
    first = rng.choice(list(names))
    pool = list((near or {}).get(first, ())) or list(names)

    def operand(d: int, anchor: str) -> Formula:
        if d <= 1 or rng.random() < 0.6:
            return Atom(anchor)
        return build(rng.choice(OPERATORS), d - 1, anchor)

    def bounds() -> tuple[int, int]:
        lo = rng.randint(0, max_bound // 2)
        return lo, lo + rng.randint(0, max_bound // 2)

    def build(op: str, d: int, anchor: str) -> Formula:
        if op == "not":
            return Not(operand(d, anchor))
        if op == "next":
            return Next(operand(d, anchor))
        if op in ("finally", "globally"):
            lo, hi = bounds()
            return (Finally if op == "finally" else Globally)(lo, hi, operand(d, anchor))
        other = rng.choice(pool)
        if op == "until":
            lo, hi = bounds()
            return Until(lo, hi, operand(d, anchor), operand(d, other))
        return (And if op == "and" else Or)(operand(d, anchor), operand(d, other))

    return build(top or rng.choice(OPERATORS), max_depth, first)


def _pick_year(rng: random.Random, spans: Sequence[tuple[int, int]], lo: int, hi: int) -> int | None:
    spans = [(max(s, lo), min(e, hi)) for s, e in spans if e >= lo and s <= hi]
    spans = [(s, e) for s, e in spans if s <= e]
    total = sum(e - s + 1 for s, e in spans)
    if total <= 0:
        return None
    k = rng.randrange(total)
    for s, e in spans:
        if k < e - s + 1:
            return s + k
        k -= e - s + 1
    return None  # pragma: no cover


def _complement(spans: Sequence[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    out, cur = [], lo
    for s, e in spans:
        if s > cur:
            out.append((cur, min(s - 1, hi)))
        cur = max(cur, e + 1)
    if cur <= hi:
        out.append((cur, hi))
    return [(s, e) for s, e in out if s <= e]


def temporal_items(events: Sequence[DatedEvent], *, n_formulas: int = 60, max_depth: int = 2, seed: int = 0,
                   domain: tuple[int, int] = DOMAIN, margin: int = 60, snapshot_id: str = "",
                   max_intervals: int = 3) -> list[dict[str, Any]]:  # fmt: skip
    """Temporal items, task ``temporal``: ``n_formulas`` random formulas (depth <= ``max_depth``, outermost operators
    in turn over :data:`OPERATORS`), each asked at one year where it holds and one where it does not (both drawn
    within ``margin`` years of its events and inside the domain), so true and false answers are balanced."""
    usable = [e for e in events if 1 <= len(e.intervals) <= max_intervals]
    if not usable:
        return []
    by_name = {e.name: e for e in usable}
    spans = {e.name: list(e.intervals) for e in usable}
    names = sorted(by_name)
    near: dict[str, list[str]] = {}
    ordered = sorted(usable, key=lambda e: e.intervals[0][0])
    starts = [e.intervals[0][0] for e in ordered]
    import bisect

    for e in usable:
        s0, e0 = e.intervals[0][0], e.intervals[-1][1]
        i = bisect.bisect_left(starts, s0 - 60)
        cands = []
        while i < len(ordered) and ordered[i].intervals[0][0] <= e0 + 30 and len(cands) < 40:
            if ordered[i].name != e.name:
                cands.append(ordered[i].name)
            i += 1
        near[e.name] = cands
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    attempts = 0
    while len(seen) < n_formulas and attempts < n_formulas * 20:
        attempts += 1
        top = OPERATORS[len(seen) % len(OPERATORS)]
        f = sample_formula(rng, names, max_depth=max_depth, near=near, top=top)
        key = str(f)
        if key in seen or depth(f) > max_depth:
            continue
        sat = satisfying_years(f, spans, lo=domain[0], hi=domain[1])
        names_f = atoms(f)
        first = min(s for n in names_f for s, _ in spans[n])
        last = max(e for n in names_f for _, e in spans[n])
        lo, hi = max(domain[0], first - margin), min(domain[1], last + margin)
        yes = _pick_year(rng, sat, lo, hi)
        no = _pick_year(rng, _complement([(max(s, lo), min(e, hi)) for s, e in sat if e >= lo and s <= hi], lo, hi), lo, hi)
        if yes is None or no is None:
            continue
        seen.add(key)
        labels = {n: by_name[n].label for n in names_f}
        sentences = [s for n in names_f for a, b in spans[n] for s in year_sentences(labels[n], a, b)]
        group = content_id(snapshot_id, "drowzee", "temporal", formula_to_json(f))
        for year, expected in ((yes, "yes"), (no, "no")):
            rows.append({
                "item_id": content_id(snapshot_id, "drowzee", "temporal", formula_to_json(f), year),
                "suite": "drowzee", "task": "temporal", "answer_format": "yes_no",
                "question": mtl2nl(f, year, labels), "expected": expected, "group_id": group,
                "breakdown": {"operator": operator(f), "depth": str(depth(f)),
                              "source": "events" if all(by_name[n].tail is None for n in names_f) else "kg"},
                "evidence": json.dumps({
                    "snapshot_id": snapshot_id, "formula": formula_to_json(f), "formula_text": key, "year": year,
                    "satisfying_years": sat, "domain": list(domain),
                    "events": {n: {"label": labels[n], "intervals": spans[n]} for n in names_f},
                    "sentences": sentences,
                }, separators=(",", ":"), ensure_ascii=False),
                "gold_answer": gold_answer(expected, sentences),
            })  # fmt: skip
    return rows
