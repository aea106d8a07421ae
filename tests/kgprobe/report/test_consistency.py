"""One fact asked several ways: stances, consistency rates and the examples of contradictions."""

from __future__ import annotations

import json

import pytest

from kgprobe.report.consistency import consistency, fact_stances, stance
from kgprobe.report.render import consistency_section


def _item(item_id, suite, triple=None):
    evidence = {"asserts": list(triple)} if triple else {"other": 1}
    return {"item_id": item_id, "suite": suite, "question": f"{suite} asks {item_id}?", "evidence": json.dumps(evidence)}


def _vote(model, item_id, vote, correct, judge=""):
    return {"model": model, "item_id": item_id, "vote": vote, "correct": correct, "judge": judge}


@pytest.mark.parametrize(("vote", "correct", "expected"), [
    ("yes", True, "affirm"), ("true", True, "affirm"), ("no", False, "deny"), ("false", False, "deny"),
    ("idk", False, None), ("unknown", False, None), ("Lyon", False, None),
])
def test_a_stance_is_taken_only_by_affirming_or_denying(vote, correct, expected) -> None:
    assert stance({"vote": vote, "correct": correct}) == expected


def test_rates_per_model_and_pair_and_the_contradictions() -> None:
    t1, t2, t3 = ("Paris", "capital_of", "France"), ("Rome", "capital_of", "Italy"), ("Bern", "capital_of", "Swiss")
    items = [_item("f1", "fpq", t1), _item("g1", "grapheval", t1), _item("e1", "erbench", t1),
             _item("f2", "fpq", t2), _item("g2", "grapheval", t2),
             _item("f3", "fpq", t3), _item("g3", "grapheval", t3), _item("x", "fpq")]
    votes = [
        # model a: t1 consistent in three suites, t2 contradicted, t3 refused in one suite (undecided)
        _vote("a", "f1", "yes", True), _vote("a", "g1", "true", True), _vote("a", "e1", "yes", True),
        _vote("a", "f2", "yes", True), _vote("a", "g2", "false", False),
        _vote("a", "f3", "yes", True), _vote("a", "g3", "idk", False), _vote("a", "x", "no", False),
        # a judge's vote is not a stance of the model
        _vote("a", "g2", "true", True, judge="oracle"),
        _vote("b", "f1", "no", False), _vote("b", "g1", "false", False),
    ]
    stances = fact_stances(items, votes, {("a", "f2"): "Yes, Rome is."})
    assert len(stances) == 9 and {s["item_id"] for s in stances} >= {"f1", "g3"} and "x" not in {s["item_id"] for s in stances}
    rates, examples = consistency(stances, examples=5)
    by = {(r["model"], r["pair"]): r for r in rates}
    a = by[("a", "all")]
    assert (a["n"], a["value"], a["shared_triples"]) == (2, 0.5, 3) and a["ci_low"] < 0.5 < a["ci_high"]
    assert (by[("a", "fpq|grapheval")]["n"], by[("a", "fpq|grapheval")]["value"]) == (2, 0.5)
    assert (by[("a", "erbench|fpq")]["n"], by[("a", "erbench|fpq")]["value"]) == (1, 1.0)
    # b denies t1 in both suites: wrong, but consistent
    assert (by[("b", "all")]["n"], by[("b", "all")]["value"]) == (1, 1.0)
    [bad] = examples
    assert bad["model"] == "a" and bad["triple"] == "Rome|capital_of|Italy"
    assert [(s["suite"], s["stance"], s["answer"]) for s in bad["suites"]] == [
        ("fpq", "affirm", "Yes, Rome is."), ("grapheval", "deny", None)]
    section = consistency_section(rates, examples, models=["b", "a"])
    assert [r["model"] for r in section["rows"]] == ["b", "a"] and section["pairs"][0] == "all"
    assert section["rows"][1]["cells"][0].startswith("0.50 [") and section["plot"].startswith("data:image/png;base64,")
    assert consistency_section([], []) is None


def test_an_open_answer_takes_a_stance_per_fact_it_states() -> None:
    t1, t2 = ("Paris", "capital_of", "France"), ("Vienna", "capital_of", "Austria")
    items = [_item("f1", "fpq", t1), _item("f2", "fpq", t2), _item("o1", "okgqa")]
    votes = [
        _vote("a", "f1", "yes", True), _vote("a", "f2", "yes", True),
        # the open answer states t1 (a supported fact) and gives Austria another capital (a contradicted one); its
        # own vote ("no": not every fact supported) is no stance, since the item asserts nothing
        {**_vote("a", "o1", "no", False), "affirms": ["Paris|capital_of|France"], "denies": ["Vienna|capital_of|Austria"]},
        # a judge's decomposition is not the model's stance
        {**_vote("a", "o1", "yes", True, judge="oracle"), "affirms": ["Vienna|capital_of|Austria"]},
    ]
    stances = fact_stances(items, votes, {("a", "o1"): "Paris is the capital of France. Salzburg is Austria's."})
    okgqa = [s for s in stances if s["suite"] == "okgqa"]
    assert sorted((s["triple"], s["stance"], s["vote"]) for s in okgqa) == [
        ("Paris|capital_of|France", "affirm", "affirms"), ("Vienna|capital_of|Austria", "deny", "denies")]
    assert all(s["answer"].startswith("Paris is") and s["item_id"] == "o1" for s in okgqa)
    rates, examples = consistency(stances)
    pair = next(r for r in rates if r["pair"] == "fpq|okgqa")
    assert (pair["shared_triples"], pair["n"], pair["value"]) == (2, 2, 0.5)
    assert [e["triple"] for e in examples] == ["Vienna|capital_of|Austria"]
