"""OKGQASuite on the sample KG: items, selection, D.1 prompts, retrieval contexts, and the oracle check (the
oracle scores best on every metric row, the heuristic extractor and the oracle judge, closed and grounded; random is worse)."""

from __future__ import annotations

import json
import math

import pytest

from kgprobe.scoring.quality import failed
from kgprobe.suites.base import ITEM_COLUMNS, ScoringOptions, check_items, is_best, table
from kgprobe.suites.okgqa import OKGQASuite
from kgprobe.suites.okgqa.suite import _schema

from .conftest import HashEmbedder, answer, oracle_judge_spec, reference_judge

SUITE = OKGQASuite()


def _scoring(judges=()):
    return ScoringOptions(judges=tuple(judges), judge=reference_judge, resamples=200, seed=3)


def test_items_cover_every_question_and_method(sample_build):
    items = sample_build["items"]
    check_items("okgqa", table(items, _schema()))
    assert tuple(_schema().names[: len(ITEM_COLUMNS)]) == ITEM_COLUMNS
    questions = {it["question_id"] for it in items}
    assert len(items) == 5 * len(questions) and len(questions) >= 15
    for qid in questions:
        mine = [it for it in items if it["question_id"] == qid]
        assert sorted(it["retrieval"] for it in mine) == ["cot", "none", "paths", "subgraph", "triplets"]
        assert {it["setting"] for it in mine if it["retrieval"] in ("none", "cot")} == {"closed"}
    assert {it["breakdown"]["type"] for it in items} == {"descriptive", "explanatory", "predictive", "comparative",
                                                           "critical"}
    ev = json.loads(items[0]["evidence"])
    assert ev["query_id"] == items[0]["query_id"] == f"okgqa-{items[0]['question_id']}"
    assert 1 <= len(ev["oracle_facts"]) <= 5 and ev["kg"]["triples"]


def test_select_splits_settings_and_limits_whole_questions(sample_build):
    items = sample_build["items"]
    closed = SUITE.select(items, setting="closed")
    grounded = SUITE.select(items, setting="grounded", limit=2)
    assert {it["retrieval"] for it in closed} == {"none", "cot"} and len(closed) == 2 * len(items) // 5
    assert len(grounded) == 6 and len({it["question_id"] for it in grounded}) == 2
    assert SUITE.context_query(grounded[0]) == grounded[0]["query_id"]


def test_prompts_follow_d1(sample_build):
    items = SUITE.select(sample_build["items"], setting="grounded", limit=1)
    closed = SUITE.select(sample_build["items"], setting="closed", limit=1)
    by = {p.template_id: p for p in SUITE.prompts(closed)}
    zero, cot = by["okgqa-answer-v1"], by["okgqa-answer-cot-v1"]
    assert zero.system.startswith("You are a helpful assistant designed to answer the users' open-ended questions.")
    assert zero.text == f"Question: {closed[0]['question']}\n\nAnswer:"
    # the paper's closed-book CoT baseline: the same question and system instruction, zero-shot CoT's trigger
    assert cot.system == zero.system
    assert cot.text == f"Question: {closed[0]['question']}\n\nAnswer: Let's think step by step."
    grounded = SUITE.prompts(items, context={it["item_id"]: "A b C" for it in items})
    assert "Below are the facts that might be relevant to answer the question:\nA b C\n\nAnswer:" in grounded[0].text
    assert grounded[0].template_id == "okgqa-answer-grounded-v1"


def test_grounded_context_runs_each_method_on_the_perturbed_subgraph(sample_build):
    items = SUITE.select(sample_build["items"], setting="grounded", limit=3)
    subgraphs = sample_build["subgraphs"]
    ctx = SUITE.grounded_context(items, subgraphs, entity_labels=sample_build["entity_labels"],
                                 relation_labels=sample_build["relation_labels"], embedder=HashEmbedder())
    assert set(ctx) == {it["item_id"] for it in items}
    by = {(it["question_id"], it["retrieval"]): ctx[it["item_id"]] for it in items}
    for (qid, method), text in by.items():
        lines = text.splitlines()
        assert lines and text != "(no facts)"
        if method == "triplets":
            assert len(lines) == min(10, len(subgraphs[f"okgqa-{qid}"]))
    # an empty (fully deleted) subgraph gives "(no facts)", not an error
    empty = SUITE.grounded_context(items[:1], {}, entity_labels={}, relation_labels={}, embedder=HashEmbedder())
    assert empty == {items[0]["item_id"]: "(no facts)"}


def _metrics(setting, kind, sample_build, judges=(), context=None):
    items = SUITE.select(sample_build["items"], setting=setting)
    prompts = SUITE.prompts(items, context=context)
    responses = answer(kind, prompts, context=context)
    return SUITE.score(items, responses, model=kind, scoring=_scoring(judges))


@pytest.mark.parametrize("setting", ["closed", "grounded"])
def test_oracle_is_best_on_every_metric_and_random_is_worse(setting, sample_build):
    context = None
    if setting == "grounded":
        items = SUITE.select(sample_build["items"], setting="grounded")
        context = SUITE.grounded_context(items, sample_build["subgraphs"], entity_labels=sample_build["entity_labels"],
                                         relation_labels=sample_build["relation_labels"], embedder=HashEmbedder())
    oracle = _metrics(setting, "oracle", sample_build, [oracle_judge_spec()], context)
    assert oracle.metrics and all(is_best(m) for m in oracle.metrics), [m for m in oracle.metrics if not is_best(m)]
    head = {(m["judge"], m["metric"]): m for m in oracle.metrics if not m["breakdown"]}
    for judge in ("heuristic", "oracle"):
        assert head[(judge, "factscore")]["value"] == 1.0 and head[(judge, "factscore")]["n"] >= 15
        assert head[(judge, "factscore")]["interval"] == "wilson_mean"
        assert head[(judge, "fact_precision")]["value"] == 1.0 and head[(judge, "fact_precision")]["n"] >= 15
        assert head[(judge, "not_in_kg_share")]["value"] == 0.0
    for c in ("context_relevance", "comprehensiveness", "correctness", "empowerment"):
        assert head[("oracle", f"geval_{c}")]["value"] == 1.0
    assert all(not failed(o) for o in [SUITE.validate(oracle.tables(), name="oracle")])
    random = _metrics(setting, "random", sample_build, [oracle_judge_spec()], context)
    r = {(m["judge"], m["metric"]): m for m in random.metrics if not m["breakdown"]}
    assert r[("heuristic", "fact_precision")]["value"] <= 0.05 and r[("heuristic", "fact_precision")]["n"] >= 10
    assert r[("heuristic", "factscore")]["value"] <= 0.05
    # the oracle judge does not decompose answers it did not write: no claim, no row values
    assert r[("oracle", "fact_precision")]["n"] == 0
    if setting == "grounded":
        assert {m["breakdown"].get("retrieval") for m in oracle.metrics} >= {"triplets", "paths", "subgraph"}
        assert oracle.agreement and oracle.agreement[0]["judge_b"] == "oracle: retrieved context"


def test_intervals_are_seeded_and_bounded(sample_build):
    a = _metrics("closed", "random", sample_build)
    b = _metrics("closed", "random", sample_build)
    assert [m["ci_low"] for m in a.metrics] == [m["ci_low"] for m in b.metrics]
    for m in a.metrics:
        if m["n"]:
            assert m["ci_low"] <= m["value"] <= m["ci_high"]
            wilson = m["metric"] in ("not_in_kg_share", "ambiguous_share")
            assert m["interval"] == ("wilson" if wilson else "wilson_mean")
            assert m["ci_low"] < m["ci_high"]


def test_free_text_is_checked_fact_by_fact(sample_build):
    items = [it for it in SUITE.select(sample_build["items"], setting="closed", limit=1) if it["retrieval"] == "none"]
    ev = json.loads(items[0]["evidence"])
    truth, lie = ev["oracle_facts"][0], ev["random_facts"][0]
    text = f"{truth} {lie} It is widely admired around the world."
    scored = SUITE.score(items, [{"response_id": "r1", "item_id": items[0]["item_id"], "model": "m",
                                  "sample_index": 0, "text": text, "error": None}], model="m", scoring=_scoring())
    (sample,) = scored.samples
    assert sample["fact_labels"] == ["supported", "contradicted", "not_in_kg"]
    assert sample["precision"] == 0.5
    overall = {m["metric"]: m for m in scored.metrics if not m["breakdown"]}
    assert overall["fact_precision"]["value"] == 0.5  # supported / decidable
    assert math.isclose(overall["factscore"]["value"], 1 / 3)  # supported / all atomic facts: the headline
    assert SUITE.headline.metric == "factscore" and SUITE.headline.judge == "heuristic"
    assert math.isclose(overall["not_in_kg_share"]["value"], 1 / 3)


def test_report_section_shows_levels_and_curves(sample_build):
    from kgprobe.report.render import ReportContext
    from kgprobe.suites.okgqa.report import figure_data

    rows = []
    for judge, clean, hit in (("heuristic", 1.0, 0.9), ("smol", 1.0, 0.5)):
        for pert in ("none", "ED-0.5", "ED-1.0"):
            for method in ("triplets", "paths"):
                for metric in ("factscore", "fact_precision"):
                    rows.append({"model": "oracle", "perturbation": pert, "suite": "okgqa", "task": "open_qa",
                                 "judge": judge, "metric": metric, "breakdown": {"retrieval": method},
                                 "higher_is_better": True, "n": 4, "value": clean if pert == "none" else hit,
                                 "ci_low": 0.4, "ci_high": 1.0, "interval": "wilson", "item_ids": [],
                                 "setting": "grounded"})
    sim = [{"query_id": "q", "perturbation": p, "method": p.split("-")[0], "level": lvl, "ats": 0.9, "sc2d": 0.8,
            "sd2": 0.7} for p, lvl in (("none", 0.0), ("ED-0.5", 0.5), ("ED-1.0", 1.0))]
    ctx = ReportContext(project="p", config_path="c", snapshot_ids=("s",), created_at="2026-01-01", models=("oracle",))
    sec, pngs = SUITE.report(ctx, rows, similarity=sim)
    assert set(pngs) == {"okgqa_precision_ED", "okgqa_similarity_ED"}
    assert sec.data["levels"] == ["none", "ED-0.5", "ED-1.0"]
    assert sec.data["metrics"][0] == "factscore"
    # Figure 6 comes from the judge's decomposition when a judge is configured, not from the heuristic
    assert sec.data["figure_judge"].startswith("smol")
    assert figure_data(rows, judge="smol")["ED"]["oracle / paths"] == {0.0: 1.0, 0.5: 0.5, 1.0: 0.5}
    heuristic_only = [r for r in rows if r["judge"] == "heuristic"]
    assert SUITE.report(ctx, heuristic_only, similarity=sim)[0].data["figure_judge"].startswith("heuristic")
    assert {r["judge"] for r in sec.data["grounded"]} == {"heuristic (offline claim extractor, no model)",
                                                         "smol (judge model)"}
    from jinja2 import Environment, FileSystemLoader

    html = Environment(loader=FileSystemLoader(sec.template_dir), autoescape=True).get_template(sec.template).render(
        section=sec.data)
    assert "Figure 6" in html and "ED-0.5" in html and "extractor" in html
    assert html.index("FActScore") < html.index("fact precision")


def test_judges_per_setting_come_from_the_settings(sample_build):
    def with_judges(items, judges, grounded):
        out = []
        for it in items:
            ev = json.loads(it["evidence"])
            ev.update(judges=judges, grounded_judges=grounded)
            out.append({**it, "evidence": json.dumps(ev)})
        return out

    items = with_judges(sample_build["items"], ["oracle"], [])
    spec = oracle_judge_spec()
    closed = SUITE.select(items, setting="closed", limit=2)
    grounded = SUITE.select(items, setting="grounded", limit=2)
    for chosen, judges in ((closed, {"heuristic", "oracle"}), (grounded, {"heuristic"})):
        ctx = {it["item_id"]: "x" for it in chosen} if chosen is grounded else None
        responses = answer("oracle", SUITE.prompts(chosen, context=ctx), context=ctx)
        scored = SUITE.score(chosen, responses, model="oracle", scoring=_scoring([spec]))
        assert {m["judge"] for m in scored.metrics} == judges


def test_judge_limit_and_trivial_answers_spare_the_judge(sample_build):
    items = []
    for it in SUITE.select(sample_build["items"], setting="closed", limit=4):
        if it["retrieval"] != "none":
            continue
        ev = json.loads(it["evidence"])
        ev["judge_limit"] = 2
        items.append({**it, "evidence": json.dumps(ev)})
    asked = []

    def counting_judge(spec, prompts):
        asked.extend(p.template_id for p in prompts)
        return reference_judge(spec, prompts)

    responses = answer("always-yes", SUITE.prompts(items))
    scored = SUITE.score(items, responses, model="always-yes",
                         scoring=ScoringOptions(judges=(oracle_judge_spec(),), judge=counting_judge, resamples=50))
    # "Yes." has no fact to split: only G-Eval is asked, its four criteria's steps once, then the two items of the
    # judge's slice rated with them
    criteria = ("context-relevance", "comprehensiveness", "correctness", "empowerment")
    assert sorted(set(asked)) == sorted({f"okgqa-geval-{c}-v4" for c in criteria}
                                        | {f"okgqa-geval-steps-{c}-v1" for c in criteria})
    assert len(asked) == 4 + 2 * 4
    assert sum(1 for s in scored.samples if s["judge"] == "oracle") == 2
    assert sum(1 for s in scored.samples if s["judge"] == "heuristic") == 4


def test_a_judge_copying_its_demonstrations_claims_nothing(sample_build):
    items = [it for it in SUITE.select(sample_build["items"], setting="closed", limit=1) if it["retrieval"] == "none"]
    ev = json.loads(items[0]["evidence"])
    text = ev["oracle_facts"][0] + " It changed the world of art."

    from kgprobe.scoring.claims import heuristic_claims
    from kgprobe.suites.okgqa.facts import KGFacts

    (claim,) = heuristic_claims(ev["oracle_facts"][0], KGFacts.from_evidence(ev["kg"]))
    reply = json.dumps({"facts": [
        {"fact": "The Eiffel Tower was completed in 1889.", "subject": "The Eiffel Tower", "relation": "was completed in",
         "object": "1889", "negated": False},
        {"fact": ev["oracle_facts"][0], "subject": claim.subject, "relation": claim.relation, "object": claim.object,
         "negated": False}]})

    def parrot(spec, prompts):
        claims = [p for p in prompts if p.template_id == "claims-extract-v2"]
        assert all(p.response_format for p in claims)
        return {p.item_id: {"text": reply if p in claims else "Score: 3", "error": None, "response_id": "j"}
                for p in prompts}

    scored = SUITE.score(items, [{"response_id": "r", "item_id": items[0]["item_id"], "model": "m",
                                  "sample_index": 0, "text": text, "error": None}], model="m",
                         scoring=ScoringOptions(judges=(oracle_judge_spec(),), judge=parrot, resamples=50))
    (judged,) = [s for s in scored.samples if s["judge"] == "oracle"]
    assert judged["facts"] == [ev["oracle_facts"][0]] and judged["fact_labels"] == ["supported"]


@pytest.mark.parametrize("reply,score", [
    ("On a scale of 1 to 5, I would give it a 4.", 4.0),
    ("Score: 3", 3.0),
    ("Score: 2\nThe answer covers 1 of 5 aspects.", 2.0),
    ("The answer names 1 fact of the 5 asked; I rate it 2", 2.0),
    ("5", 5.0),
    ("4.5", 4.5),
    ("It mentions 1889 and 2024.", None),
    ("No rating.", None),
    # the scale's bounds are not the rating
    ("I would rate this 3 out of 5.", 3.0),
    ("Rating: 4 (out of 5)", 4.0),
    ("Rating: 2/5", 2.0),
    ("4/5 - mostly relevant.", 4.0),
    ("5/5", 5.0),
    ("I'd give it a 2 of 5.", 2.0),
    ("On a scale from 1 to 5: 3", 3.0),
    ("Rated between 1 and 5, this answer gets a 2.", 2.0),
    ("Coherence (1-5): 4", 4.0),
    ("I'd give it a rating of 4.", 4.0),
    ("Score of 3 out of 5.", 3.0),
    ("Out of 5, I give it 1.", 1.0),
])  # fmt: skip
def test_geval_reads_the_score_field_or_the_last_number_in_range(reply, score):
    from kgprobe.suites.okgqa.suite import _read_score

    assert _read_score(reply) == score


def test_checker_kg_is_capped_at_kg_facts_seed_facts_first(sample_con, sample_build):
    # the sample's checker KGs are far below the default cap: the default and "no cap" give the same items; a cap
    # of 40 keeps each question's subgraph, then the seeds' facts, and says how many questions it cut
    import json

    from kgprobe.suites.okgqa.suite import KG_FACTS, OKGQASettings, build_items

    qs, subgraphs = sample_build["questions"], sample_build["subgraphs"]
    sizes = [len(json.loads(r["evidence"])["kg"]["triples"]) for r in sample_build["items"]]
    assert 40 < max(sizes) < KG_FACTS
    report: dict = {}
    uncapped, _ = build_items(qs, subgraphs, sample_con, OKGQASettings(kg_facts=None), snapshot_id="snap", seed=0,
                              report=report)
    assert uncapped == sample_build["items"] and report == {"kg_facts_capped": 0}
    capped, _ = build_items(qs, subgraphs, sample_con, OKGQASettings(kg_facts=40), snapshot_id="snap", seed=0,
                            report=report)
    full = {r["question_id"]: json.loads(r["evidence"]) for r in uncapped}
    cut = {r["question_id"]: json.loads(r["evidence"]) for r in capped}
    # the subgraph is the KG's: its triples are among those read, and kept if the cut leaves them out
    assert report["kg_facts_capped"] == sum(len(e["kg"]["triples"]) > 40 for e in full.values()) > 0
    for qid, ev in cut.items():
        sub = {tuple(t) for t in subgraphs[ev["query_id"]]}
        mine, every = {tuple(t) for t in ev["kg"]["triples"]}, {tuple(t) for t in full[qid]["kg"]["triples"]}
        assert sub <= mine <= every and len(mine) <= len(sub) + 40
        seeds = set(ev["seeds"])
        seed_facts = {t for t in every if t[0] in seeds or t[2] in seeds}
        if len(every) > 40:  # cut: the seeds' facts are read first
            assert seed_facts <= mine if len(seed_facts) <= 40 else len(seed_facts & mine) >= 40
        else:
            assert mine == every
