"""One fact, asked several ways: does a model's verdict on a KG triple agree across suites?

Every suite asks about KG facts, and the same triple can be reached by several of them: a KG-FPQ true-premise
question, a GraphEval positive statement, an ERBench FD question on a table loaded from the KG, a Drowzee question
whose derived fact is itself a KG triple, an OKGQA answer whose atomic facts are checked against the KG. An item
says which true triple it tests in its ``evidence`` JSON, as ``"asserts": [head label, relation key, tail label]``:
answering the item as expected affirms the triple. An open answer states facts of its own: a vote row may carry
``affirms`` and ``denies``, lists of ``head label|relation key|tail label`` (OKGQA: the triples its supported facts
state, and the KG triples its contradicted facts give another object), each a stance of that answer on that
triple.

A model's *stance* on the triple through one item is ``affirm`` when its vote is the expected one, ``deny`` when it
answered the negative label instead (``no`` / ``false``), and undecided otherwise (unknown, I-don't-know, a wrong
choice: none of these states the triple false). Per model, a triple with decided stances from two or more suites is
*consistent* when they all agree; the rate over such triples gets a Wilson interval, overall and per pair of suites.
The inconsistent triples are the examples a reader wants: the same fact affirmed in one format and denied in
another, with the questions and answers side by side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

from kgprobe.scoring.claims import HEURISTIC
from kgprobe.scoring.stats import accuracy

__all__ = ["DENY_LABELS", "consistency", "fact_stances", "stance"]

#: Vote labels that deny a statement (an affirmed triple answered with one of them is denied).
DENY_LABELS = frozenset({"no", "false"})


def stance(vote: Mapping[str, Any]) -> str | None:
    """``affirm``, ``deny`` or None (undecided) for a vote row on an item that asserts a true triple."""
    if vote.get("correct"):
        return "affirm"
    return "deny" if str(vote.get("vote")) in DENY_LABELS else None


def _asserts(item: Mapping[str, Any]) -> tuple[str, str, str] | None:
    from kgprobe.suites.base import (
        asserts,  # the evidence convention every suite writes
    )

    return asserts(item)


def fact_stances(items: Iterable[Mapping[str, Any]], votes: Iterable[Mapping[str, Any]],
                 answers: Mapping[tuple[str, str], str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """One row per (model, item, triple) voted without a judge: for an item asserting a triple, its stance from
    the vote; for a vote with ``affirms`` / ``denies``, one row per triple named there (vote ``affirms`` or
    ``denies``). Columns: suite, triple (``head|relation|tail``), item id, question, vote, stance, and the model's
    first answer text when ``answers`` maps ``(model, item_id)`` to it."""
    items = {str(it["item_id"]): it for it in items}
    out = []
    for v in votes:
        item = items.get(str(v["item_id"]))
        if item is None or (v.get("judge") or "") not in ("", HEURISTIC):
            continue
        base = {"model": v["model"], "suite": item["suite"], "item_id": item["item_id"], "question": item["question"],
                "answer": (answers or {}).get((v["model"], str(v["item_id"])))}
        triple = _asserts(item)
        if triple is not None:
            out.append({**base, "triple": "|".join(triple), "vote": v.get("vote"), "stance": stance(v)})
        for key, said in (("affirms", "affirm"), ("denies", "deny")):
            for t in v.get(key) or ():
                out.append({**base, "triple": str(t), "vote": key, "stance": said})
    return out


def consistency(stances: Sequence[Mapping[str, Any]], *, confidence: float = 0.95,
                examples: int = 10) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """Rates and examples from :func:`fact_stances` rows. Rates: per model, ``pair`` = ``all`` (triples decided by
    two or more suites, consistent when every decided stance agrees) and each ``suite_a|suite_b`` (triples decided
    by both), with n, value, Wilson interval and ``shared_triples`` (asked by both, decided or not). Examples: up to
    ``examples`` inconsistent triples per model, each with every suite's question, answer and stance."""
    # per model and triple, per suite: the stances of its items (a suite may ask one triple more than once)
    cells: dict[str, dict[str, dict[str, list[Mapping[str, Any]]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for s in stances:
        cells[s["model"]][s["triple"]][s["suite"]].append(s)
    rates, shown = [], []
    for model in sorted(cells):
        per_triple = cells[model]
        suite_names = sorted({suite for by_suite in per_triple.values() for suite in by_suite})
        decided = {t: {suite: _suite_stance(rows) for suite, rows in by_suite.items()}
                   for t, by_suite in per_triple.items()}
        multi = {t: {k: v for k, v in d.items() if v is not None} for t, d in decided.items()}
        multi = {t: d for t, d in multi.items() if len(d) >= 2}
        flags = [len(set(d.values())) == 1 for _, d in sorted(multi.items())]
        shared = sum(1 for by_suite in per_triple.values() if len(by_suite) >= 2)
        rates.append(_rate(model, "all", flags, sorted(multi), shared, confidence))
        for a, b in combinations(suite_names, 2):
            both = sorted(t for t, d in decided.items() if d.get(a) is not None and d.get(b) is not None)
            asked = sum(1 for by_suite in per_triple.values() if a in by_suite and b in by_suite)
            rates.append(_rate(model, f"{a}|{b}", [decided[t][a] == decided[t][b] for t in both], both, asked,
                               confidence))
        bad = [t for t, d in sorted(multi.items()) if len(set(d.values())) > 1]
        for t in bad[:examples]:
            shown.append({"model": model, "triple": t, "suites": [
                {"suite": suite, "question": rows[0]["question"], "answer": rows[0].get("answer"),
                 "vote": rows[0].get("vote"), "stance": _suite_stance(rows) or "undecided"}
                for suite, rows in sorted(per_triple[t].items())]})
    return rates, shown


def _suite_stance(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """A suite's stance on a triple: the one its decided items agree on (None if none decided, or they disagree)."""
    found = {r["stance"] for r in rows if r["stance"] is not None}
    return found.pop() if len(found) == 1 else None


def _rate(model: str, pair: str, flags: list[bool], triples: list[str], shared: int,
          confidence: float) -> dict[str, Any]:  # fmt: skip
    acc = accuracy(flags, confidence=confidence)
    return {"model": model, "pair": pair, "shared_triples": shared, "n": acc.n, "value": acc.value,
            "ci_low": acc.ci_low, "ci_high": acc.ci_high, "interval": acc.interval, "triples": triples}
