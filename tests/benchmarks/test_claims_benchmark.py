"""The labelled claims of ``benchmarks/data/claims`` and the metric code of ``benchmarks/claims.py``."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from kgprobe.scoring.claims import CONTRADICTED, NOT_IN_KG, SUPPORTED, Claim, KGFacts

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "benchmarks" / "data" / "claims" / "claims.jsonl"


@pytest.fixture(scope="module")
def bench():
    name = "claims_bench"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / "claims.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def records(bench):
    return bench.load_records(DATA)


def _record(**over):
    rec = {"id": "a/0", "answer_id": "a", "kg_source": "s",
           "source": {"paper": "P", "repo": "o/r", "path": "f.json", "commit": "0" * 40, "row": "1"},
           "model": "m", "question": "Q?", "answer": "Guernica was painted by Picasso.",
           "fact": "Guernica was painted by Picasso.",
           "claim": {"subject": "Guernica", "relation": "was painted by", "object": "Picasso", "negated": False},
           "label": SUPPORTED, "deciding": [["Guernica", "painted_by", "Picasso"]],
           "kg": {"triples": [["Guernica", "painted_by", "Picasso"]], "entity_labels": {}, "relation_labels": {},
                  "aliases": {}, "inverses": {}}}
    rec.update(over)
    return rec


def test_data_set_is_large_mixed_and_well_formed(bench, records):
    assert len(records) >= 300
    problems = [p for r in records for p in bench.record_problems(r)]
    assert problems == []
    labels = Counter(r["label"] for r in records)
    assert set(labels) == {SUPPORTED, CONTRADICTED, NOT_IN_KG}
    assert min(labels.values()) >= 40  # every label well represented, not all supported
    assert len({r["id"] for r in records}) == len(records)
    assert {r["source"]["paper"] for r in records} == {"ERBench", "Drowzee"}
    # ERBench's Movie domain is not used; every source names a full commit
    assert not any("movie" in r["source"]["path"] for r in records)
    assert all(len(r["source"]["commit"]) == 40 for r in records)
    # the records of one answer agree on everything about the answer
    for recs in bench.by_answer(records).values():
        assert len({(r["answer"], r["question"], r["model"], r["kg_source"]) for r in recs}) == 1
    assert DATA.stat().st_size < 1_000_000


def test_gold_claims_mention_what_their_fact_says(records):
    from kgprobe.kg.queries import normalise_label

    for r in records:
        fact = normalise_label(r["fact"])
        for part in ("subject", "object"):
            words = normalise_label(r["claim"][part]).split()
            assert sum(w in fact for w in words) >= 0.5 * len(words), (r["id"], part)


def test_record_problems_catch_each_defect(bench):
    assert bench.record_problems(_record()) == []
    assert bench.record_problems(_record(label="true")) == ["a/0: label 'true' not in ('supported', 'contradicted', 'not_in_kg')"]
    assert bench.record_problems(_record(deciding=[["Guernica", "painted_by", "Mozart"]])) == [
        "a/0: deciding triple ['Guernica', 'painted_by', 'Mozart'] not in its KG"]
    assert bench.record_problems(_record(deciding=[])) == ["a/0: supported without a deciding triple"]
    assert bench.record_problems(_record(label=NOT_IN_KG)) == ["a/0: not_in_kg with a deciding triple"]
    broken = _record()
    del broken["kg"]
    assert bench.record_problems(broken) == ["a/0: missing kg"]


def test_per_label_precision_recall_by_hand(bench):
    gold = [SUPPORTED, SUPPORTED, SUPPORTED, CONTRADICTED, NOT_IN_KG, NOT_IN_KG]
    pred = [SUPPORTED, NOT_IN_KG, SUPPORTED, SUPPORTED, NOT_IN_KG, CONTRADICTED]
    res = bench.per_label(gold, pred)
    # supported: predicted 3 times, 2 right; 3 gold, 2 found
    assert (res[SUPPORTED]["precision"]["k"], res[SUPPORTED]["precision"]["n"]) == (2, 3)
    assert res[SUPPORTED]["recall"]["value"] == pytest.approx(2 / 3)
    # contradicted: predicted once, wrong; 1 gold, missed
    assert res[CONTRADICTED]["precision"]["value"] == 0.0
    assert res[CONTRADICTED]["recall"] == {"value": 0.0, "ci": res[CONTRADICTED]["recall"]["ci"], "k": 0, "n": 1}
    assert res[NOT_IN_KG]["precision"]["value"] == 0.5 and res[NOT_IN_KG]["recall"]["value"] == 0.5
    assert res["accuracy"]["k"] == 3 and res["accuracy"]["n"] == 6
    lo, hi = res[SUPPORTED]["precision"]["ci"]
    assert 0.2 < lo < 2 / 3 < hi < 1.0  # Wilson interval of 2/3 around its value
    # nothing predicted: precision undefined, not zero
    assert bench.per_label([SUPPORTED], [NOT_IN_KG])[SUPPORTED]["precision"]["value"] is None
    base = bench.majority(gold)
    assert base == [SUPPORTED] * 6
    assert bench.per_label(gold, base)[SUPPORTED]["recall"]["value"] == 1.0


def test_claim_matching(bench):
    kg = KGFacts.from_triples([("Q1", "father", "Q2")], entity_labels={"Q1": "Asclepius", "Q2": "Apollo"},
                              aliases={"Q2": ["Phoebus"]})
    gold = Claim("Apollo", "is the father of", "Asclepius")
    assert bench.claims_match(Claim("Phoebus", "fathered", "Asclepius"), gold, kg)  # alias links to the same entity
    assert bench.claims_match(Claim("Asclepius", "is the son of", "Apollo"), gold, kg)  # either order
    assert not bench.claims_match(Claim("Apollo", "is the god of", "medicine"), gold, kg)
    assert not bench.claims_match(Claim("", "", ""), gold, kg)
    assert bench.fact_f1("Apollo is the father of Asclepius.", "Asclepius's father is Apollo.") == 1.0
    assert bench.fact_f1("Apollo is the god of healing.", "Rindr is a giantess.") == 0.0
    pairs = bench.greedy_match(["a b", "c d"], ["c d", "a b", "e"], bench.fact_f1, 0.5)
    assert pairs == [(0, 1), (1, 0)]


def test_heuristic_run_on_a_hand_built_case(bench, tmp_path):
    """Two answers over one tiny KG: the extraction and verification counts are those worked out by hand."""
    kg = {"triples": [["Guernica", "painted_by", "Picasso"], ["Picasso", "born_in", "Malaga"]],
          "entity_labels": {"Guernica": "Guernica", "Picasso": "Pablo Picasso", "Malaga": "Málaga",
                            "Madrid": "Madrid"},
          "relation_labels": {"painted_by": "painted by", "born_in": "place of birth"},
          "aliases": {"Picasso": ["Picasso"]}, "inverses": {}}
    kg["triples"].append(["Madrid", "capital_of", "Spain"])
    answer1 = "Guernica was painted by Picasso. Picasso was born in Madrid."
    answer2 = "Guernica was not painted by Pablo Picasso."
    recs = [
        _record(id="1/0", answer_id="1", answer=answer1, fact="Guernica was painted by Picasso.",
                claim={"subject": "Guernica", "relation": "was painted by", "object": "Picasso", "negated": False},
                label=SUPPORTED, deciding=[["Guernica", "painted_by", "Picasso"]], kg=kg),
        _record(id="1/1", answer_id="1", answer=answer1, fact="Picasso was born in Madrid.",
                claim={"subject": "Picasso", "relation": "was born in", "object": "Madrid", "negated": False},
                label=CONTRADICTED, deciding=[["Picasso", "born_in", "Malaga"]], kg=kg),
        _record(id="2/0", answer_id="2", answer=answer2, fact=answer2,
                claim={"subject": "Guernica", "relation": "was painted by", "object": "Pablo Picasso",
                       "negated": True},
                label=CONTRADICTED, deciding=[["Guernica", "painted_by", "Picasso"]], kg=kg),
    ]
    assert [p for r in recs for p in bench.record_problems(r)] == []
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "r.json"
    res = bench.main(["--data", str(path), "--out", str(out), "--no-embedder"])
    ext = res["extraction"]["heuristic"]
    # 3 sentences split, all 3 gold facts found; each sentence names two KG entities: 3 claims, all matching
    assert (ext["facts"]["precision"]["k"], ext["facts"]["precision"]["n"]) == (3, 3)
    assert (ext["claims"]["recall"]["k"], ext["claims"]["recall"]["n"]) == (3, 3)
    assert ext["claims"]["negation_agrees"]["value"] == 1.0
    ver = res["verification"]["heuristic"]
    # "painted by" is the KG's label: supported; the negated one: contradicted. "born in" names born_in
    # (functional: one birthplace) and Madrid is another object: contradicted
    assert ver[SUPPORTED]["recall"]["value"] == 1.0 and ver[CONTRADICTED]["recall"]["value"] == 1.0
    assert ver["accuracy"]["value"] == 1.0
    base = res["verification"]["majority (beside heuristic)"]
    assert base[CONTRADICTED]["precision"]["value"] == pytest.approx(2 / 3)
    assert json.loads(out.read_text())["records"] == 3


def test_judge_path_with_replayed_replies(bench):
    """A judge's JSON is read, checked and aggregated per fact; a reply that does not validate falls back to the
    heuristic and is counted as such."""
    kg_rec = {"triples": [["Asclepius", "father", "Apollo"]], "entity_labels": {}, "relation_labels": {},
              "aliases": {}, "inverses": {}}
    fact = "Apollo is not the father of Asclepius."
    rec = _record(answer=fact, fact=fact, kg=kg_rec, label=CONTRADICTED,
                  claim={"subject": "Asclepius", "relation": "father", "object": "Apollo", "negated": True},
                  deciding=[["Asclepius", "father", "Apollo"]])
    kgs = bench.build_kgs([rec])
    from kgprobe.scoring.claims import claims_prompt

    reply = json.dumps({"facts": [{"fact": fact, "subject": "Asclepius", "relation": "father", "object": "Apollo",
                                   "negated": True}]})
    judge = bench.ReplayJudge("fake-judge", {claims_prompt(fact): reply})
    pred, used = bench.verify([rec], kgs, "judge", judge)
    assert pred == [CONTRADICTED] and used == Counter({"fake-judge": 1})
    ext = bench.extraction([rec], kgs, judge)
    assert ext["extractors"] == {"fake-judge": 1}
    assert ext["claims"]["precision"]["value"] == 1.0 and ext["claims"]["negation_agrees"]["value"] == 1.0
    silent = bench.ReplayJudge("fake-judge", {})
    _, used = bench.verify([rec], kgs, "judge", silent)
    assert used == Counter({"heuristic": 1})
    assert bench.aggregate([NOT_IN_KG, SUPPORTED, CONTRADICTED]) == CONTRADICTED
    assert bench.aggregate([]) == NOT_IN_KG
    answers, facts = bench.judge_prompts([rec, _record(id="a/1", fact="Other fact.")])
    assert len(answers) == 1 and len(facts) == 2
