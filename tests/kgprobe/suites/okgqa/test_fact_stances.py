"""An open answer's stances on KG triples: each supported fact affirms the triple it states, each contradicted
fact denies the KG's triple it gives another object; the cross-suite consistency view reads them from the votes."""

from __future__ import annotations

import json

from kgprobe.report.consistency import consistency, fact_stances
from kgprobe.suites.base import ScoringOptions
from kgprobe.suites.okgqa import OKGQASuite
from kgprobe.suites.okgqa.facts import CONTRADICTED, SUPPORTED, KGFacts, check_fact
from kgprobe.suites.okgqa.suite import _fact_stances

from .conftest import reference_judge

SUITE = OKGQASuite()


def _named(kg: KGFacts, triple: tuple[int, int, int]) -> str:
    h, r, t = triple
    return f"{kg.entities[h]}|{kg.relation_keys[r]}|{kg.entities[t]}"


def test_supported_facts_affirm_and_contradicted_ones_deny_their_triples(sample_build):
    (item,) = [it for it in SUITE.select(sample_build["items"], setting="closed", limit=1) if it["retrieval"] == "none"]
    ev = json.loads(item["evidence"])
    kg = KGFacts.from_evidence(ev["kg"])
    lie = ev["random_facts"][0]
    denied = check_fact(lie, kg)
    # a true fact about another triple than the one the lie denies (else the two cancel out)
    truth = next(f for f in ev["oracle_facts"] if check_fact(f, kg).ids != denied.ids)
    stated = check_fact(truth, kg)
    assert stated.label == SUPPORTED and denied.label == CONTRADICTED
    response = {"response_id": "r1", "item_id": item["item_id"], "model": "m", "sample_index": 0, "error": None,
                "text": f"{truth} {lie} It is widely admired around the world."}
    scored = SUITE.score([item], [response], model="m",
                         scoring=ScoringOptions(judges=(), judge=reference_judge, resamples=50, seed=3))
    (sample,) = scored.samples
    assert sample["fact_triples"] == [_named(kg, stated.ids), _named(kg, denied.ids), None]
    (vote,) = scored.votes
    assert vote["affirms"] == [_named(kg, stated.ids)] and vote["denies"] == [_named(kg, denied.ids)]
    # the same two facts asked as true triples by another suite: one agrees with the answer, one does not
    other = [{"item_id": f"g{i}", "suite": "grapheval", "question": "?",
              "evidence": json.dumps({"asserts": _named(kg, t).split("|")})}
             for i, t in enumerate((stated.ids, denied.ids))]
    votes = [vote, *({"model": "m", "item_id": o["item_id"], "vote": "true", "correct": True, "judge": ""}
                     for o in other)]
    stances = fact_stances([item, *other], votes)
    assert sorted((s["suite"], s["stance"]) for s in stances) == [
        ("grapheval", "affirm"), ("grapheval", "affirm"), ("okgqa", "affirm"), ("okgqa", "deny")]
    rates, examples = consistency(stances)
    (pair,) = [r for r in rates if r["pair"] == "grapheval|okgqa"]
    assert (pair["n"], pair["value"]) == (2, 0.5)
    assert [e["triple"] for e in examples] == [_named(kg, denied.ids)]


def test_samples_outvote_each_other_per_triple_and_a_tie_decides_nothing():
    rows = [{"fact_labels": [SUPPORTED, SUPPORTED, "not_in_kg"], "fact_triples": ["a|r|b", "c|r|d", None]},
            {"fact_labels": [CONTRADICTED, CONTRADICTED], "fact_triples": ["a|r|b", "e|r|f"]},
            {"fact_labels": [SUPPORTED], "fact_triples": ["a|r|b"]},
            {"fact_labels": None, "fact_triples": None}]
    assert _fact_stances(rows) == (["a|r|b", "c|r|d"], ["e|r|f"])
    assert _fact_stances(rows[:2]) == (["c|r|d"], ["e|r|f"])
