"""Drowzee's reasoning oracle on free-text answers: prose read by the shared claim extractor, refusals and errors,
relation properties per item (never from the neighbours scored with it), the derived fact in the ground graph, and
the share of wrong answers whose reasoning is correct."""

from __future__ import annotations

import json

import pytest

from kgprobe.embedding import Embedder
from kgprobe.suites.base import ItemSource, ScoringOptions, breakdown_of
from kgprobe.suites.drowzee.oracle import read_answer
from kgprobe.suites.drowzee.suite import DrowzeeSettings, DrowzeeSuite

from .conftest import SAMPLE_SETTINGS

SUITE = DrowzeeSuite()
# the oracle is asked about stated facts too: the sample's sibling pairs are stored both ways, and derived_only
# (the default) would not ask them
SETTINGS = DrowzeeSettings(**{**SAMPLE_SETTINGS, "derived_only": False})


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="module")
def rows(sample_kg):
    con, snapshot = sample_kg
    return SUITE.items(ItemSource(con=con, kg="sample", snapshot_id=snapshot, settings=SETTINGS, seed=0)).items.to_pylist()


def _item(rows, rule, phrasing="positive", where=lambda ev: True):
    return next(r for r in rows if breakdown_of(r).get("rule") == rule and breakdown_of(r)["phrasing"] == phrasing
                and where(json.loads(r["evidence"])))


def _score(items, texts, embedder, *, errors=None):
    responses = [{"response_id": f"r{k}", "item_id": it["item_id"], "model": "m", "sample_index": 0, "text": t,
                  "error": (errors or {}).get(k)} for k, (it, t) in enumerate(zip(items, texts))]
    return SUITE.score(items, responses, model="m", scoring=ScoringOptions(embedder=embedder), settings=SETTINGS)


def _labels(ev):
    return {int(k): v for k, v in ev["entities"].items()}


def test_correct_answers_in_ordinary_prose_are_correct(rows, embedder):
    neg = _item(rows, "negation", where=lambda ev: ev["derived"]["relation"] == "premiered_in")
    inv = _item(rows, "inverse", where=lambda ev: ev["derived"]["relation"] == "parent")
    sym = _item(rows, "symmetric", where=lambda ev: ev["derived"]["relation"] == "sibling")
    tra = _item(rows, "transitive", where=lambda ev: ev["derived"]["relation"] == "located_in")
    com = _item(rows, "composition")
    same = _item(rows, "same", where=lambda ev: ev["derived"]["relation"] == "composed_by")

    def names(item):
        ev = json.loads(item["evidence"])
        lab = _labels(ev)
        return [(lab[p["head"]], lab[p["tail"]]) for p in ev["premises"]], lab[ev["derived"]["object"]]

    (n1,), wrong = names(neg)
    (i1,), _ = names(inv)
    (s1,), _ = names(sym)
    (t1, t2), _ = names(tra)
    (c1, c2), _ = names(com)
    (m1, m2), _ = names(same)
    texts = [
        f"No. {n1[0]} was first performed in {n1[1]}, not in {wrong}.",
        f"Yes. {i1[1]} was the daughter of {i1[0]}.",
        f"Yes. {s1[1]} was the brother of {s1[0]}.",
        f"Yes. {t1[0]} is located in {t1[1]}, which is in {t2[1]}.",
        f"Yes. {c1[0]} is in {c1[1]}, and {c2[0]} is in {c2[1]}.",
        f"Yes. Both {m1[0]} and {m2[0]} were composed by {m1[1]}.",
    ]
    scored = _score([neg, inv, sym, tra, com, same], texts, embedder)
    by = {s["item_id"]: s for s in scored.samples if s["judge"] == "heuristic"}
    got = [(by[it["item_id"]]["category"], by[it["item_id"]]["triples"]) for it in (neg, inv, sym, tra, com, same)]
    assert [c for c, _ in got] == ["CO"] * 6, got


@pytest.mark.parametrize("text", [
    "Sorry, I don't know.",
    "I don't have enough information to answer this question.",
    "No, I don't have enough information to answer this question.",
    "I'm not sure.",
    "Unfortunately, I cannot determine whether that is true.",
    "There is not enough information to answer this.",
])  # fmt: skip
def test_refusals_anywhere_in_a_short_answer_are_correct(text):
    assert read_answer(text) == "refusal"


def test_a_long_reasoned_answer_is_not_a_refusal():
    assert read_answer("Yes. Vienna is the capital of Austria. " * 5 + "I don't know the year it was founded.") == "yes"


def test_refusals_no_triples_and_errors(rows, embedder):
    items = [r for r in rows if breakdown_of(r).get("rule") == "transitive"][:4]
    scored = _score(items, ["Sorry, I don't know.", "I don't have enough information to answer this question.",
                                 "Yes, that is right.", None], embedder, errors={3: "timeout"})
    cats = [s["category"] for s in scored.samples if s["judge"] == "heuristic"]
    assert cats == ["CO", "CO", "NT", "missing"]
    overall = {m["metric"]: m for m in scored.metrics if not m["breakdown"] and m["judge"] == "heuristic"}
    # the paper's rate counts every answer given (a refusal is not a hallucination; a right "Yes" is not either)
    expected_wrong = items[2]["expected"] != "yes"
    assert overall["hallucination_rate"]["value"] == pytest.approx(expected_wrong / 3)
    assert overall["hallucination_rate"]["n"] == 3
    assert overall["oracle_hallucination_rate"]["value"] == 0.0 and overall["oracle_hallucination_rate"]["n"] == 2
    assert overall["no_triples_share"]["value"] == pytest.approx(1 / 3) and overall["no_triples_share"]["n"] == 3
    assert overall["refusal_share"]["n"] == 3  # the error is missing: counted nowhere


def test_an_inverse_verdict_does_not_depend_on_the_neighbours(rows, embedder):
    item = _item(rows, "inverse", where=lambda ev: ev["source_relation"] == "father")
    ev = json.loads(item["evidence"])
    (p,) = ev["premises"]
    lab = _labels(ev)
    # the premise father(X, Y) stated as its declared inverse: the child of Y is X
    text = f"{'Yes.' if item['expected'] == 'yes' else 'No.'}\n- The child of {lab[p['tail']]} is {lab[p['head']]}."
    alone = _score([item], [text], embedder).samples[0]
    others = [r for r in rows if r["task"] == "rule" and r["item_id"] != item["item_id"]]
    together = _score([item, *others], [text] + [r["gold_answer"] for r in others], embedder).samples[0]
    assert alone["category"] == together["category"] == "CO"


def test_stating_the_derived_fact_as_well_costs_nothing(rows, embedder):
    item = _item(rows, "transitive")
    ev = json.loads(item["evidence"])
    lab = _labels(ev)
    d = ev["derived"]
    text = item["gold_answer"] + f"\n- {lab[d['subject']]} is located in {lab[d['object']]}."
    (sample,) = [s for s in _score([item], [text], embedder).samples if s["judge"] == "heuristic"]
    assert sample["category"] == "CO" and sample["edge_similarity"] == 1.0


def test_wrong_answers_with_correct_reasoning_are_reported(rows, embedder):
    items = [_item(rows, "transitive"), _item(rows, "symmetric")]
    texts = [("No." if it["expected"] == "yes" else "Yes.") + it["gold_answer"][it["gold_answer"].index("\n"):]
             for it in items]
    scored = _score(items, texts, embedder)
    overall = {m["metric"]: m for m in scored.metrics if not m["breakdown"] and m["judge"] == "heuristic"}
    assert overall["answer_accuracy"]["value"] == 0.0
    assert overall["wrong_answer_co_share"]["value"] == 1.0 and overall["wrong_answer_co_share"]["n"] == 2
    # wrong Yes/No answers: hallucinations by the paper's count, whose reasoning the oracle finds correct
    assert overall["hallucination_rate"]["value"] == 1.0 and overall["oracle_hallucination_rate"]["value"] == 0.0
    assert overall["knowledge_error_share"]["value"] == overall["inference_error_share"]["value"] == 0.0


def test_report_names_its_extractor_and_shows_wrong_answers_with_co_reasoning():
    from kgprobe.suites.drowzee.report import section

    def row(judge, metric, value):
        return {"model": "m", "perturbation": "none", "suite": "drowzee", "task": "rule", "judge": judge,
                "metric": metric, "breakdown": {}, "higher_is_better": False, "n": 10, "value": value,
                "ci_low": 0.0, "ci_high": 1.0, "interval": "wilson", "item_ids": []}

    heuristic = [row("heuristic", "hallucination_rate", 0.4), row("heuristic", "wrong_answer_co_share", 0.25),
                 row("heuristic", "knowledge_error_share", 0.5), row("heuristic", "oracle_hallucination_rate", 0.9)]
    sec = section(None, heuristic)
    assert sec.data["extractor"].startswith("heuristic")
    (table,) = sec.data["tables"]
    headers, cells = table["rate"]["headers"], table["rate"]["rows"][0]["cells"]
    # each number sits under the name of the rate that produced it: the paper's first, the former one last
    assert headers[1] == "hallucination rate: wrong Yes/No answers" and cells[0] == "0.40 [0.00, 1.00] n=10"
    assert cells[headers.index("of them erroneous knowledge (EK)") - 1] == "0.50 [0.00, 1.00] n=10"
    assert cells[headers.index("of them reasoning CO") - 1] == "0.25 [0.00, 1.00] n=10"
    assert cells[headers.index("oracle rate over the reasoning (former)") - 1] == "0.90 [0.00, 1.00] n=10"
    judged = section(None, heuristic + [row("smol", "hallucination_rate", 0.7)])
    assert judged.data["extractor"].startswith("smol")
    assert judged.data["tables"][0]["rate"]["rows"][0]["cells"][0] == "0.70 [0.00, 1.00] n=10"


@pytest.mark.parametrize(("text", "answer"), [
    ('Sure! Here is my answer to the question "Is it true that A founded B?"\n\nNo, because C founded B.', "no"),
    ("Sure! Here is my answer:\nYes, because A is in B.", "yes"),
    ("Certainly. Here's the answer\nI don't know.", "refusal"),
    ("Sure! Here is my answer:\nThe statement is true.", "unknown"),  # no Yes/No after the preamble either
    ("Sure.", "unknown"),                                             # a preamble alone answers nothing
    ("Yes, sure.\nA is in B.", "yes"),
])  # fmt: skip
def test_a_chat_preamble_line_is_skipped_before_the_answer(text, answer):
    assert read_answer(text) == answer
