"""Drowzee's questions as item rows: from rule-derived facts (Table 2, positive and opposite phrasings) and from MTL
formulas over dated events (Table 3, query years balanced between true and false), each with its proof and the
exact text a perfect answer gives (``gold_answer``: the answer word, then the proof's facts as declarative
sentences, one per line); and the optional rewording of questions by a model (§3.5), checked to keep every
entity, number and negation."""

from __future__ import annotations

import bisect
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

from kgprobe.suites.base import content_id
from kgprobe.suites.drowzee.facts import DatedEvent
from kgprobe.suites.drowzee.rules import DerivedFact
from kgprobe.suites.drowzee.templates import (
    fact_sentence,
    mtl2nl,
    phrase_type,
    relation_phrase,
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
    horizon,
    operator,
    satisfying_bounds,
)

__all__ = ["DROP_REASONS", "OPERATORS", "REWORD_TEMPLATE", "formula_from_json", "formula_to_json", "gold_answer",
           "reword_items", "rewording_problems", "rule_items", "sample_formula", "temporal_items"]

#: The operators a temporal question's outermost operator is drawn from, in turn: ``atom`` is Table 3's first
#: template ("Did E happen at year t?").
OPERATORS: tuple[str, ...] = ("atom", "not", "and", "or", "next", "finally", "globally", "until")

#: The operators that make a layer of nesting (all but the connectives And / Or, under which §4.5 nests).
_LAYERED: tuple[str, ...] = ("not", "next", "finally", "globally", "until")

#: Why a sampled formula is not asked (each costs the formula's two items).
DROP_REASONS: dict[str, str] = {
    "duplicate": "the same formula was drawn before",
    "beyond_horizon": "its look-ahead from every year near its events passes the horizon",
    "never_true": "it holds in no year near its events, so no 'yes' year exists",
    "always_true": "it holds in every year near its events, so no 'no' year exists",
    "true_only_with_unknown_end": "every year where it may hold depends on an end the data does not give",
    "false_only_with_unknown_end": "every year where it may fail depends on an end the data does not give",
}


def gold_answer(expected: str, sentences: Sequence[str]) -> str:
    """The perfect answer: "Yes." or "No.", then each fact of the proof as a declarative sentence on its own line."""
    return "\n".join([("Yes." if expected == "yes" else "No."), *(f"- {s}" for s in sentences)])


def rule_items(facts: Sequence[DerivedFact], *, entity_labels: Mapping[int, str], relation_labels: Mapping[str, str],
               relation_ids: Mapping[int, str], phrase_types: Mapping[str, str] | None = None,
               snapshot_id: str = "", relation_phrases: Mapping[str, str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Two items per derived fact (positive and opposite-semantics phrasing), task ``rule``; relations are worded by
    :func:`.templates.relation_phrase` (``relation_phrases``, then the label, then the key made into words)."""

    def _label(key: str, labels: Mapping[str, str]) -> str:
        return relation_phrase(key, labels.get(key), relation_phrases)

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
            question = rule_question(kind, s, rel_label, o, opposite=opposite, same=f.rule == "same",
                                     period=f.period)
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
                    **({"period": list(f.period)} if f.period is not None else {}),
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


def sample_formula(rng: random.Random, names: Sequence[str], *, max_depth: int = 1,
                   near: Mapping[str, Sequence[str]] | None = None, top: str | None = None, max_bound: int = 20,
                   nest_share: float = 0.5) -> Formula:  # fmt: skip
    """A random formula in the mix of the paper's §4.5: the outermost operator ``top`` (or uniform over
    :data:`OPERATORS`); a temporal operator (not, next, finally, globally, until) nests up to ``max_depth`` layers
    (1, the default: its operands are atoms); And / Or take operands that are atoms or, with probability
    ``nest_share`` each, a formula of up to ``max_depth`` layers. A second atom is drawn among the first one's
    ``near`` events (overlapping in time) when there are any, so that binary operators relate events that meet."""
    if max_depth < 1:
        raise ValueError(f"sample_formula: max_depth must be at least 1, got {max_depth}")
    names = names if isinstance(names, list) else list(names)
    first = rng.choice(names)
    pool = list((near or {}).get(first, ())) or names

    def bounds() -> tuple[int, int]:
        lo = rng.randint(0, max_bound // 2)
        return lo, lo + rng.randint(0, max_bound // 2)

    def layered(op: str, d: int, anchor: str) -> Formula:
        # one temporal layer whose operands have at most d - 1 layers
        def operand(x: str) -> Formula:
            return build(rng.choice(_LAYERED), d - 1, x) if d > 1 and rng.random() < 0.4 else Atom(x)

        if op == "not":
            return Not(operand(anchor))
        if op == "next":
            return Next(operand(anchor))
        if op in ("finally", "globally"):
            lo, hi = bounds()
            return (Finally if op == "finally" else Globally)(lo, hi, operand(anchor))
        lo, hi = bounds()
        return Until(lo, hi, operand(anchor), operand(rng.choice(pool)))

    def build(op: str, d: int, anchor: str) -> Formula:
        if op == "atom":
            return Atom(anchor)
        if op in ("and", "or"):
            def side(x: str) -> Formula:
                return layered(rng.choice(_LAYERED), max_depth, x) if rng.random() < nest_share else Atom(x)

            return (And if op == "and" else Or)(side(anchor), side(rng.choice(pool)))
        return layered(op, d, anchor)

    op = top or rng.choice(OPERATORS)
    if op not in OPERATORS:
        raise ValueError(f"sample_formula: unknown operator {op!r}; use one of {OPERATORS}")
    return build(op, max_depth, first)


def _clip(spans: Sequence[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    return [(max(s, lo), min(e, hi)) for s, e in spans if e >= lo and s <= hi]


def _pick_year(rng: random.Random, spans: Sequence[tuple[int, int]]) -> int | None:
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


def temporal_items(events: Sequence[DatedEvent], *, n_formulas: int = 60, max_depth: int = 1, seed: int = 0,
                   domain: tuple[int, int] = DOMAIN, margin: int = 60, snapshot_id: str = "",
                   max_intervals: int = 3, report: MutableMapping[str, Any] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Temporal items, task ``temporal``: ``n_formulas`` random formulas (:func:`sample_formula`, outermost
    operators in turn over :data:`OPERATORS`), each asked at one year where it surely holds and one where it surely
    does not, so true and false answers are balanced. And / Or alternate between a connective over atoms (depth 1)
    and one over temporal operators (``nest_share`` 0, then 1), so that their rows are not all nesting.

    ``domain`` is ``(first year, horizon)``: every event's years stop at the horizon (KG facts and event lists
    alike), negation ranges over the domain, and a question is asked only at a year ``t`` whose look-ahead
    (``t`` + the formula's :func:`.temporal.horizon`) stays within it, within ``margin`` years of its events. A year
    is a "yes" only if the formula holds whatever the unknown ends are, a "no" only if it fails whatever they are
    (:func:`.temporal.satisfying_bounds`). A formula without such a pair of years is dropped; ``report`` (when
    given) receives the counts per reason of :data:`DROP_REASONS` under ``dropped`` and the formulas tried."""
    lo_d, hi_d = domain
    all_known = [e.known(hi_d) for e in events]
    usable = [e for e, k in zip(events, all_known) if 1 <= len(e.intervals) <= max_intervals and k]
    dropped: Counter[str] = Counter()
    if report is not None:
        report["events"] = len(events)
        report["events_used"] = len(usable)
        report["events_after_horizon"] = sum(1 for k in all_known if not k)
        report["events_with_too_many_intervals"] = sum(1 for e in events if len(e.intervals) > max_intervals)
    if not usable:
        return []
    by_name = {e.name: e for e in usable}
    known = {e.name: k for e, k in zip(events, all_known) if e.name in by_name}
    possible = {e.name: e.possible(hi_d) for e in usable}
    names = sorted(by_name)
    near = _Near(usable, known, possible)
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    connective_depths = {"and": 0, "or": 0}  # formulas asked per connective: even -> over atoms, odd -> nested
    attempts = 0
    while len(seen) < n_formulas and attempts < n_formulas * 20:
        attempts += 1
        top = OPERATORS[len(seen) % len(OPERATORS)]
        nest = 0.5
        if top in ("and", "or"):
            # alternate a connective over atoms (depth 1) and over temporal operators (deeper), so that its row
            # measures the connective and not only nesting: over points, atom-and-atom is seldom true anywhere
            # and most of the mixed draws that survive are nested
            nest = 0.0 if connective_depths[top] % 2 == 0 else 1.0
        f = sample_formula(rng, names, max_depth=max_depth, near=near, top=top, nest_share=nest)
        key = str(f)
        if key in seen:
            dropped["duplicate"] += 1
            continue
        names_f = atoms(f)
        first = min(known[n][0][0] for n in names_f)
        last = max(possible[n][-1][1] for n in names_f)
        lo, hi = max(lo_d, first - margin), min(hi_d - horizon(f), last + margin)
        if hi < lo:
            dropped["beyond_horizon"] += 1
            continue
        sure, maybe = satisfying_bounds(f, known, possible, lo=lo_d, hi=hi_d)
        yes_spans, no_spans = _clip(sure, lo, hi), _complement(_clip(maybe, lo, hi), lo, hi)
        if not yes_spans:
            dropped["true_only_with_unknown_end" if _clip(maybe, lo, hi) else "never_true"] += 1
            continue
        if not no_spans:
            dropped["false_only_with_unknown_end" if _complement(_clip(sure, lo, hi), lo, hi) else "always_true"] += 1
            continue
        yes, no = _pick_year(rng, yes_spans), _pick_year(rng, no_spans)
        seen.add(key)
        if top in connective_depths:
            connective_depths[top] += 1
        ev_json = {n: _event_json(by_name[n], hi_d) for n in names_f}
        labels = {n: by_name[n].label for n in names_f}
        kinds = {n: by_name[n].kind for n in names_f}
        sentences = [x for n in names_f for s_, e_ in by_name[n].intervals
                     for x in year_sentences(labels[n], s_, e_, kind=kinds[n], open_end=by_name[n].open_end)]
        group = content_id(snapshot_id, "drowzee", "temporal", formula_to_json(f))
        for year, expected in ((yes, "yes"), (no, "no")):
            rows.append({
                "item_id": content_id(snapshot_id, "drowzee", "temporal", formula_to_json(f), year),
                "suite": "drowzee", "task": "temporal", "answer_format": "yes_no",
                "question": mtl2nl(f, year, labels, kinds=kinds), "expected": expected, "group_id": group,
                "breakdown": {"operator": operator(f), "depth": str(depth(f)),
                              "source": "events" if all(by_name[n].tail is None for n in names_f) else "kg"},
                "evidence": json.dumps({
                    "snapshot_id": snapshot_id, "formula": formula_to_json(f), "formula_text": key, "year": year,
                    "satisfying_years": sure, "possible_years": maybe, "domain": [lo_d, hi_d],
                    "events": ev_json, "sentences": sentences,
                }, separators=(",", ":"), ensure_ascii=False),
                "gold_answer": gold_answer(expected, sentences),
            })  # fmt: skip
    if report is not None:
        report["formulas_tried"] = attempts
        report["formulas_asked"] = len(seen)
        report["dropped"] = {k: dropped[k] for k in DROP_REASONS}
    return rows


class _Near(Mapping[str, list[str]]):
    """The events that meet each event in time (up to 40 that start from 60 years before it to 30 after it ends),
    found when first asked: a formula's second atom is drawn among its first atom's."""

    def __init__(self, usable: Sequence[DatedEvent], known: Mapping[str, list[tuple[int, int]]],
                 possible: Mapping[str, list[tuple[int, int]]]) -> None:  # fmt: skip
        self._ordered = sorted((known[e.name][0][0], e.name) for e in usable)
        self._starts = [s for s, _ in self._ordered]
        self._known, self._possible = known, possible
        self._cache: dict[str, list[str]] = {}

    def __getitem__(self, name: str) -> list[str]:
        got = self._cache.get(name)
        if got is None:
            if name not in self._known:
                raise KeyError(name)
            s0, e0 = self._known[name][0][0], self._possible[name][-1][1]
            i = bisect.bisect_left(self._starts, s0 - 60)
            got = []
            while i < len(self._ordered) and self._starts[i] <= e0 + 30 and len(got) < 40:
                if self._ordered[i][1] != name:
                    got.append(self._ordered[i][1])
                i += 1
            self._cache[name] = got
        return got

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._known)

    def __len__(self) -> int:
        return len(self._known)


def _event_json(e: DatedEvent, horizon_year: int) -> dict[str, Any]:
    """An event as the evidence shows it: the data's intervals (``null`` for an end it does not give), the years it
    surely holds and may hold up to the horizon, its kind, what a missing end means, and the entities it names."""
    return {"label": e.label, "kind": e.kind, "intervals": [[s, x] for s, x in e.intervals],
            "open_end": e.open_end, "known": e.known(horizon_year), "possible": e.possible(horizon_year),
            "relation": e.relation_key, "entities": list(e.entities or (e.label,))}


# ------------------------------------------------------------------------------------------------ rewording (§3.5)

#: The prompt that asks a model to reword one question (§3.5: "reformulate the structure and grammar").
REWORD_TEMPLATE = (
    "Rewrite the question below so that it reads as natural, grammatical English. Keep every name exactly as "
    "written, keep every year and number, keep any negation, and do not change what is asked: the answer must stay "
    "the same. Reply with the rewritten question only.\n\nQuestion: {question}")

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:st|nd|rd|th)?\b")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|neither|nor|without|impossible|cannot)\b|n't\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.replace("\u2019", "'")).strip().casefold()


def _numbers(text: str) -> Counter[int]:
    return Counter(int(re.sub(r"\D", "", m.group()) or 0) * (-1 if m.group().startswith("-") else 1)
                   for m in _NUMBER.finditer(text))


def rewording_problems(original: str, reworded: str | None, entities: Sequence[str]) -> list[str]:
    """Why a rewording of ``original`` must be rejected (empty: it may be used): it is empty; it drops or changes
    an entity of ``entities`` (each must appear verbatim, case and spacing aside); its numbers (years, interval
    bounds) differ from the original's; or it has another count of negations ("not", "never", "n't", ...).

        >>> rewording_problems("Did Rome hold in 1871?", "Was Rome a capital in 1872?", ["Rome"])
        ['numbers differ: 1871 -> 1872']
    """
    if not reworded or not reworded.strip():
        return ["empty rewording"]
    problems = []
    text = _norm(reworded)
    missing = [x for x in entities if x and _norm(x) not in text]
    if missing:
        problems.append(f"entity dropped or changed: {missing[0]!r}")
    a, b = _numbers(original), _numbers(reworded)
    if a != b:
        problems.append(f"numbers differ: {', '.join(map(str, sorted(a.elements())))} -> "
                        f"{', '.join(map(str, sorted(b.elements())))}")
    if len(_NEGATION.findall(original)) != len(_NEGATION.findall(reworded)):
        problems.append("negation added or dropped")
    return problems


def _item_entities(row: Mapping[str, Any]) -> list[str]:
    ev = json.loads(row["evidence"])
    if row["task"] == "temporal":
        return sorted({x for e in ev["events"].values() for x in e.get("entities") or [e["label"]]})
    d = ev["derived"]
    return sorted({ev["entities"][str(d["subject"])], ev["entities"][str(d["object"])]})


def reword_items(rows: Sequence[Mapping[str, Any]], complete: Callable[[list[str]], Sequence[str | None]], *,
                 model: str, report: MutableMapping[str, Any] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """The items with questions reworded by a model (§3.5): ``complete`` answers one :data:`REWORD_TEMPLATE` prompt
    per item. Every row keeps its template question in ``original_question``; a rewording is used only when
    :func:`rewording_problems` finds nothing wrong with it, else the template question stays. ``report`` receives
    the counts (``reworded``, ``rejected``) and the rejections per reason."""
    prompts = [REWORD_TEMPLATE.format(question=r["question"]) for r in rows]
    answers = list(complete(prompts)) if prompts else []
    if len(answers) != len(rows):
        raise ValueError(f"rewording model {model!r} answered {len(answers)} of {len(rows)} prompts")
    out = []
    reasons: Counter[str] = Counter()
    used = 0
    for row, answer in zip(rows, answers):
        original = str(row.get("original_question") or row["question"])
        text = (answer or "").strip().strip('"').strip()
        problems = rewording_problems(original, text, _item_entities(row))
        new = dict(row)
        new["original_question"] = original
        if problems:
            reasons[problems[0].split(":")[0]] += 1
        else:
            new["question"] = text
            ev = json.loads(row["evidence"])
            ev["reworded_by"] = model
            new["evidence"] = json.dumps(ev, separators=(",", ":"), ensure_ascii=False)
            used += 1
        out.append(new)
    if report is not None:
        report.update({"model": model, "reworded": used, "rejected": len(rows) - used, "rejected_by": dict(reasons)})
    return out
