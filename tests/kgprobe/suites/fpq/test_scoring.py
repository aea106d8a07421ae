"""Scoring one partition: parse, judge (resumable, through the response store), vote, measure."""

from __future__ import annotations

import math

import pytest

from kgprobe.suites.fpq.prompts import fpq_prompts
from kgprobe.generation import make_backend, model_specs, run_generation
from kgprobe.scoring.stats import wilson_ci
from kgprobe.suites.fpq.scoring import (
    METRIC_SCHEMA,
    SAMPLE_SCHEMA,
    judge_prompt,
    oracle_failures,
    reference_verdict,
    score_partition,
)
from kgprobe.generation.store import ResponseStore

QUESTIONS = {
    ("yn", "tpq"): "Was {s} born in {o}?",
    ("wh", "tpq"): "Where exactly in {o} was {s} born?",
}


def _item(iid, fmt, premise, subject, obj, *, method=None, hop=None, domain="people"):
    q = QUESTIONS[(fmt, "tpq")].format(s=f"S{subject}", o=f"O{obj}")
    answer = {("yn", "tpq"): "yes", ("yn", "fpq"): "no", ("wh", "tpq"): "valid premise", ("wh", "fpq"): "false premise"}
    return {"id": iid, "domain": domain, "format": fmt, "premise": premise, "method": method, "hop": hop, "question": q,
            "answer": answer[(fmt, premise)], "subject": subject, "relation": 1, "true_object": 10 * subject,
            "false_object": obj if premise == "fpq" else None, "relation_key": "born_in"}


ITEMS = [
    _item("a-yt", "yn", "tpq", 1, 10), _item("a-yf1", "yn", "fpq", 1, 11, method="NSC", hop=2),
    _item("a-yf2", "yn", "fpq", 1, 12, method="NNSR"), _item("a-wt", "wh", "tpq", 1, 10),
    _item("a-wf1", "wh", "fpq", 1, 11, method="NSC", hop=2), _item("b-yt", "yn", "tpq", 2, 20, domain="art"),
    _item("b-yf1", "yn", "fpq", 2, 21, method="NDC", hop=3, domain="art"),
    _item("b-wf1", "wh", "fpq", 2, 21, method="NDC", hop=3, domain="art"),
]


def _answers(store, name, kind):
    spec = model_specs([{"name": name, "backend": "reference", "kind": kind}])[0]
    prompts = fpq_prompts(ITEMS)
    with make_backend(spec) as backend:
        run_generation(backend, model=name, prompts=prompts, params=spec.params, store=store)
    return store.rows_for(name, prompts, spec.params).to_pylist()


def _judges(*kinds):
    return [s for s in model_specs([{"name": f"judge-{k}", "backend": "reference", "kind": k, "n": 1, "temperature": 0.0}
                                    for k in kinds])]


def _metric(scored, task, metric, judge="", **where):
    rows = [m for m in scored.metrics if m["task"] == task and m["metric"] == metric and m["judge"] == judge
            and all(m[k] == where.get(k) for k in ("domain", "method", "hop"))]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.mark.parametrize(("gold", "answer", "verdict"), [
    ("valid premise", "The question's premise is true.", "yes"),
    ("valid premise", "The question's premise is false.", "no"),
    ("false premise", "the question's premise is  false.", "yes"),  # case and spacing do not matter
    ("false premise", "The question's premise is true.", "no"),
    ("false premise", "He was born in Paris.", None),  # free text: the oracle judge cannot know
    ("no such gold", "The question's premise is true.", None),
])
def test_reference_verdict_knows_only_the_fixed_texts(gold, answer, verdict):
    assert reference_verdict({"answer": gold}, answer) == verdict


def test_judge_prompt_carries_the_instruction_question_answer_and_response_id():
    from kgprobe.generation.prompts import JUDGE_TEMPLATE_ID, render

    answer = "The question's premise is false."
    p = judge_prompt(ITEMS[4], answer, "rid-1")
    # the layout is kgprobe.generation.prompts' business (tested there); scoring must use the current judge template
    assert p.item_id == "rid-1" and p.template_id == JUDGE_TEMPLATE_ID and p.gold == "yes" and p.answer_kind == "yn"
    assert p.text == render(JUDGE_TEMPLATE_ID, question=ITEMS[4]["question"], answer=answer)
    assert p.text.startswith("You are given a question and an answer, determine if the answer is factual.")
    assert ITEMS[4]["question"] in p.text and answer in p.text


def test_the_oracle_is_perfect_and_always_yes_accepts_every_premise(tmp_path):
    store = ResponseStore(tmp_path)
    judges = _judges("oracle", "always-no")
    oracle = score_partition(ITEMS, _answers(store, "oracle", "oracle"), model="oracle", perturbation="none",
                             judges=judges, store=store)
    assert oracle_failures(oracle.metrics, {"judge-oracle"}) == []
    # 3 WH items, of which 2 FPQs: generative accuracy counts the FPQs only (the WH TPQ has tpq_accuracy)
    assert _metric(oracle, "generative", "accuracy", judge="judge-oracle")["n"] == 2
    assert _metric(oracle, "generative", "tpq_accuracy", judge="judge-oracle")["n"] == 1
    # the always-no judge says every answer is not factual: accuracy 0 under it, so its kappa with the oracle is 0
    assert _metric(oracle, "generative", "accuracy", judge="judge-always-no")["value"] == 0.0
    [agree] = oracle.agreement
    assert (agree["judge_a"], agree["judge_b"], agree["n"], agree["agreement"]) == ("judge-always-no", "judge-oracle", 3, 0.0)
    assert oracle_failures(oracle.metrics, {"judge-oracle", "judge-always-no"})  # the always-no judge is not gated

    yes = score_partition(ITEMS, _answers(store, "yes-man", "always-yes"), model="yes-man", perturbation="none",
                          judges=judges[:1], store=store)
    assert _metric(yes, "discriminative", "tpq_accuracy")["value"] == 1.0
    assert _metric(yes, "discriminative", "fpq_accuracy")["value"] == 0.0
    assert (_metric(yes, "discriminative", "accuracy")["n"], _metric(yes, "discriminative", "accuracy")["correct"]) == (5, 2)
    gen = _metric(yes, "generative", "fpq_accuracy", judge="judge-oracle")
    assert (gen["n"], gen["correct"]) == (2, 0)
    assert _metric(yes, "generative", "tpq_accuracy", judge="judge-oracle")["value"] == 1.0
    assert {r["label"] for r in yes.samples if r["format"] == "yn"} == {"yes"}
    assert len(yes.samples) == 3 * 5 + 3 * 3  # 5 Yes-No items and 3 WH items (one judge), 3 samples each
    assert set(yes.tables()["samples"].schema.names) == set(SAMPLE_SCHEMA.names)


def test_metric_tables_carry_wilson_intervals_and_their_kind(tmp_path):
    store = ResponseStore(tmp_path)
    scored = score_partition(ITEMS, _answers(store, "oracle", "oracle"), model="oracle", perturbation="none",
                             judges=_judges("oracle"), store=store, resamples=10, seed=3)
    names = METRIC_SCHEMA.names
    assert names[names.index("ci_high") + 1] == "interval"
    table = scored.tables()["metrics"]
    assert table.schema == METRIC_SCHEMA and set(table.column("interval").to_pylist()) == {"wilson"}
    gated = _metric(scored, "discriminative", "fpq_accuracy_gated")
    # the oracle gets 3 of 3 gated FPQs right, which is not certainty: (0.44, 1.0), not the bootstrap's (1.0, 1.0)
    assert (gated["n"], gated["correct"], gated["interval"]) == (3, 3, "wilson")
    assert (gated["ci_low"], gated["ci_high"]) == wilson_ci(3, 3) and gated["ci_low"] == pytest.approx(0.4385, abs=1e-4)


def test_judging_is_resumable_and_free_text_is_unknown_to_the_oracle_judge(tmp_path):
    store = ResponseStore(tmp_path)
    rows = _answers(store, "oracle", "oracle")
    for r in rows:  # a model that answers WH questions in prose
        if r["item_id"].startswith(("a-w", "b-w")):
            r["text"] = f"Prose answer {r['sample_index']}."
    rows[0]["text"], rows[0]["error"] = None, "boom: request failed"
    judges = _judges("oracle", "always-yes")
    first = score_partition(ITEMS, rows, model="oracle", perturbation="none", judges=judges, store=store)
    shards = {j.name: len(store.shards(j.name)) for j in judges}
    again = score_partition(ITEMS, rows, model="oracle", perturbation="none", judges=judges, store=store)
    assert {j.name: len(store.shards(j.name)) for j in judges} == shards  # nothing judged twice
    assert again.samples == first.samples
    wh = [r for r in first.samples if r["judge"] == "judge-oracle"]
    assert {r["label"] for r in wh} == {"unknown"} and all(r["judge_error"] for r in wh)
    assert _metric(first, "generative", "accuracy", judge="judge-oracle")["n"] == 0
    assert _metric(first, "generative", "unknown_share", judge="judge-oracle")["value"] == 1.0
    assert {r["label"] for r in first.samples if r["judge"] == "judge-always-yes"} == {"yes"}
    failed = [r for r in first.samples if r["response_id"] == rows[0]["response_id"]]
    assert [(r["label"], r["text"], r["error"]) for r in failed] == [("unknown", None, "boom: request failed")]
    tpq = [r for r in first.items if r["item_id"] == rows[0]["item_id"]][0]
    assert (tpq["n_yes"], tpq["n_unknown"], tpq["vote"]) == (2, 1, "yes")


def test_responses_to_unknown_items_are_an_error(tmp_path):
    rows = [{"item_id": "nope", "response_id": "r", "model": "m", "sample_index": 0, "text": "Yes", "error": None}]
    with pytest.raises(ValueError, match="not in fpq_items"):
        score_partition(ITEMS, rows, model="m", perturbation="none")


def test_oracle_failures_names_the_imperfect_rows():
    rows = [
        {"task": "discriminative", "judge": "", "metric": "accuracy", "domain": None, "method": None, "hop": None, "n": 4, "value": 1.0},
        {"task": "discriminative", "judge": "", "metric": "fpq_accuracy", "domain": None, "method": "NSC", "hop": None, "n": 4, "value": 0.75},
        {"task": "discriminative", "judge": "", "metric": "unknown_share", "domain": None, "method": None, "hop": None, "n": 4, "value": 0.0},
        {"task": "generative", "judge": "llm", "metric": "accuracy", "domain": None, "method": None, "hop": None, "n": 4, "value": 0.5},
        {"task": "generative", "judge": "ref", "metric": "accuracy", "domain": None, "method": None, "hop": None, "n": 0, "value": math.nan},
    ]
    assert [(r["metric"], r["method"]) for r in oracle_failures(rows, {"ref"})] == [("fpq_accuracy", "NSC")]
    assert len(oracle_failures(rows, {"ref", "llm"})) == 2


def test_pooled_agreement_counts_each_models_answer_once(tmp_path):
    from kgprobe.suites.fpq.scoring import ALL_MODELS, pooled_agreement

    store = ResponseStore(tmp_path)
    judges = _judges("oracle", "always-yes")
    rows = []
    for name, kind in (("oracle", "oracle"), ("no-man", "always-no")):
        rows += score_partition(ITEMS, _answers(store, name, kind), model=name, perturbation="none", judges=judges,
                                store=store).items
    [pooled] = pooled_agreement(rows)
    # 3 WH items x 2 models; the oracle judge calls the oracle's answers factual and always-no's TPQ answer not
    assert (pooled["model"], pooled["perturbation"], pooled["n"]) == (ALL_MODELS, "none", 6)
    assert pooled["agreement"] == pytest.approx(5 / 6)
    assert pooled_agreement(rows, perturbation="all levels")[0]["perturbation"] == "all levels"


def test_score_metadata_leads_with_the_gated_headline(tmp_path):
    from assets.suites import score_metadata
    from kgprobe.suites import SUITES
    from kgprobe.suites.base import ScoringOptions

    store = ResponseStore(tmp_path)
    suite = SUITES["fpq"]
    items = [{**it, "item_id": it["id"]} for it in ITEMS]
    scored = suite.score(items, _answers(store, "yes-man", "always-yes"), model="yes-man",
                         scoring=ScoringOptions(judges=_judges("oracle"), judge=_store_judge(store)))
    meta = score_metadata(suite, scored)
    assert list(meta)[0] == "fpq_accuracy_gated" and meta["fpq_accuracy_gated"] == 0.0
    lines = meta["scores"].md_str.splitlines()
    assert lines[0] == "| task | judge | metric | n | value | CI | interval |"
    # yes/no first, the headline first within each task and judge
    assert [line.split(" | ")[:3] for line in lines[2:]][:6] == [
        ["| discriminative", "-", "fpq_accuracy_gated (headline)"], ["| discriminative", "-", "accuracy"],
        ["| discriminative", "-", "fpq_accuracy"], ["| discriminative", "-", "tpq_accuracy"],
        ["| discriminative", "-", "unknown_share"], ["| generative", "judge-oracle", "fpq_accuracy_gated (headline)"]]
    assert all(line.endswith("| wilson |") for line in lines[2:])


def _store_judge(store):
    from kgprobe.generation import BackendPool
    from kgprobe.scoring.judges import judge_runner

    return judge_runner(BackendPool(), store)
