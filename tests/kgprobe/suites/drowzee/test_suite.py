"""The Drowzee suite on the sample KG: items, Table 4 prompts, the oracle CO everywhere and baselines worse, the
reasoning oracle on hand-written answers, the extractor's precision and recall, the LLM-extractor path, the report."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date

import pytest

from kgprobe.embedding import Embedder
from kgprobe.generation.backends.reference import ReferenceBackend
from kgprobe.generation.records import SamplingParams
from kgprobe.suites.base import (
    ItemSource,
    ScoringOptions,
    breakdown_of,
    check_items,
    is_best,
)
from kgprobe.suites.drowzee.evaluation import measure_extractor, write_sentences
from kgprobe.suites.drowzee.oracle import Extractor, read_answer
from kgprobe.suites.drowzee.questions import formula_from_json
from kgprobe.suites.drowzee.suite import DrowzeeSettings, DrowzeeSuite
from kgprobe.suites.drowzee.temporal import depth, holds
from kgprobe.suites.drowzee.temporal import horizon as horizon_of

from .conftest import SAMPLE_SETTINGS

SUITE = DrowzeeSuite()


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="module")
def items(sample_kg):
    con, snapshot = sample_kg
    result = SUITE.items(ItemSource(con=con, kg="sample", snapshot_id=snapshot,
                                    settings=DrowzeeSettings(**SAMPLE_SETTINGS), seed=0))
    check_items("drowzee", result.items)
    return result


def _responses(model: str, prompts, texts=None):
    outs = ReferenceBackend(model).generate(prompts, SamplingParams(n=1, temperature=0.0)) if texts is None else None
    rows = []
    for k, p in enumerate(prompts):
        text = texts[k] if texts is not None else outs[k][0].text
        rows.append({"response_id": f"{model}-{p.item_id}", "item_id": p.item_id, "model": model,
                     "backend": "reference", "prompt_template_id": p.template_id, "prompt": p.text,
                     "sample_index": 0, "text": text, "error": None})
    return rows


def test_items_cover_every_rule_with_both_phrasings_and_balanced_temporal_years(items) -> None:
    rows = items.items.to_pylist()
    rules = Counter(breakdown_of(r)["rule"] for r in rows if r["task"] == "rule")
    assert set(rules) == {"negation", "inverse", "symmetric", "transitive", "composition", "same"}
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["group_id"], []).append(r)
    for members in groups.values():
        assert sorted(m["expected"] for m in members) == ["no", "yes"]  # the two phrasings / the two years flip
    neg = [r for r in rows if breakdown_of(r).get("rule") == "negation" and breakdown_of(r)["phrasing"] == "positive"]
    assert neg and all(r["expected"] == "no" for r in neg)
    temporal = [r for r in rows if r["task"] == "temporal"]
    assert Counter(r["expected"] for r in temporal) == {"yes": 28, "no": 28}
    assert {breakdown_of(r)["operator"] for r in temporal} == {"atom", "not", "and", "or", "next", "finally", "globally",
                                                              "until"}
    meta = items.metadata
    assert "shares_border_with" in {p["key"] for p in meta["proposed_properties"]["symmetric"]}
    # derived facts only (none already a KG triple); the share of derivations the KG already stated is reported
    assert meta["derived_already_in_kg"] == 0 < meta["derived_facts"]
    assert {r["in_kg"] for r in (breakdown_of(x) for x in rows if x["task"] == "rule")} == {"false"}
    sym = meta["derivations_already_stored"]["symmetric"]
    assert 0 < sym["stored"] < sym["candidates"] and sym["stored_share"] == round(sym["stored"] / sym["candidates"], 4)


def test_temporal_answers_follow_definition_1(items) -> None:
    for r in items.items.to_pylist():
        if r["task"] != "temporal":
            continue
        ev = json.loads(r["evidence"])
        f = formula_from_json(ev["formula"])
        events = {n: [tuple(x) for x in e["known"]] for n, e in ev["events"].items()}
        # single-layer temporal operators; And / Or one layer above them (the paper's §4.5 mix, max_depth 1)
        assert depth(f) == int(breakdown_of(r)["depth"]) <= (2 if breakdown_of(r)["operator"] in ("and", "or") else 1)
        assert holds(f, events, ev["year"]) == (r["expected"] == "yes"), ev["formula_text"]


def test_table_2_and_4_wording(items) -> None:
    rows = {(breakdown_of(r).get("rule"), breakdown_of(r).get("relation"), breakdown_of(r).get("phrasing")): r
            for r in items.items.to_pylist() if r["task"] == "rule"}
    same = rows[("same", "directed_by", "positive")]["question"]
    assert same.startswith("Is it true that ") and same.endswith(" share the same director?")
    assert rows[("same", "directed_by", "opposite")]["question"].endswith(
        "have totally different director. Please judge the truthfulness of this statement.")
    assert rows[("negation", "located_in_city", "opposite")]["question"].startswith("It is impossible for ")
    prompts = SUITE.prompts(list(rows.values())[:3])
    assert prompts[0].system == "Answer the question with your knowledge and reasoning power."
    assert "The answer must contain 'Yes', 'No' or 'I don't know' at the beginning." in prompts[0].text
    assert prompts[0].answer_kind is None and prompts[0].gold.split("\n")[0] in ("Yes.", "No.")


def test_the_extractor_recovers_every_proof_from_the_gold_answer(items) -> None:
    rows = items.items.to_pylist()
    ex = SUITE._extractor(rows, None, None)
    for r in rows:
        ground, events, prefer = SUITE.ground_truth(r, ex)
        assert ex.extract(r["gold_answer"], events=events, prefer=prefer) == ground, r["gold_answer"]


def test_oracle_is_co_everywhere_and_baselines_hallucinate(items, embedder) -> None:
    rows = items.items.to_pylist()
    prompts = SUITE.prompts(rows)
    scoring = ScoringOptions(embedder=embedder)
    oracle = SUITE.score(rows, _responses("oracle", prompts), model="oracle", scoring=scoring)
    assert oracle.metrics and all(is_best(m) for m in oracle.metrics), [m for m in oracle.metrics if not is_best(m)][:3]
    assert {m["metric"] for m in oracle.metrics} >= {"hallucination_rate", "answer_accuracy", "refusal_share",
                                                     "co_share", "ek_share", "ei_share", "ol_share"}
    sims = [m for m in oracle.metrics if m["metric"].endswith("_similarity") and m["n"]]
    assert sims and all(m["interval"] == "wilson_mean" and m["ci_low"] < m["value"] == 1.0 == m["ci_high"]
                        for m in sims), sims[:2]  # a perfect answer on every item is not certainty
    rate = {m["task"]: m for m in oracle.metrics if m["metric"] == "hallucination_rate" and not m["breakdown"]}
    assert rate["rule"]["value"] == 0.0 and not rate["rule"]["higher_is_better"] and rate["rule"]["ci_high"] > 0
    n_rule = sum(r["task"] == "rule" for r in rows)
    assert rate["rule"]["n"] == n_rule
    for baseline in ("always-yes", "random"):
        scored = SUITE.score(rows, _responses(baseline, prompts), model=baseline, scoring=scoring)
        overall = {(m["task"], m["metric"]): m for m in scored.metrics if not m["breakdown"]}
        # a bare "Yes." states no knowledge: no triple for the oracle to judge (its own share), yet the answer is
        # wrong or right, so the paper's rate (a wrong Yes/No answer) is measured on every item
        assert overall[("rule", "no_triples_share")]["value"] == 1.0
        assert overall[("rule", "oracle_hallucination_rate")]["n"] == 0
        assert overall[("rule", "hallucination_rate")]["n"] == n_rule
        votes = [v for v in scored.votes if v["task"] == "rule"]
        wrong = sum(v["decided"] and not v["correct"] for v in votes)
        assert overall[("rule", "hallucination_rate")]["value"] == pytest.approx(wrong / n_rule)
        if baseline == "always-yes":  # every gold "no" is a hallucination
            assert wrong == sum(r["task"] == "rule" and r["expected"] == "no" for r in rows) > 0
        overall = {k: m["value"] for k, m in overall.items()}
        assert overall[("rule", "answer_accuracy")] < 0.6
    tables = oracle.tables()
    assert tables["samples"].num_rows == len(rows) and set(tables["votes"].column("category").to_pylist()) == {"CO"}


def test_refusals_right_answers_with_wrong_reasoning_and_categories(items, embedder) -> None:
    rows = [r for r in items.items.to_pylist()
            if breakdown_of(r).get("rule") == "transitive" and breakdown_of(r)["phrasing"] == "positive"][:1]
    rows += [r for r in items.items.to_pylist() if r["task"] == "temporal" and len(json.loads(r["evidence"])["events"]) == 1
             and None not in next(iter(json.loads(r["evidence"])["events"].values()))["intervals"][0]
             and len({*next(iter(json.loads(r["evidence"])["events"].values()))["intervals"][0]}) == 2][:1]
    trans, temp = rows
    ev = json.loads(trans["evidence"])
    _, b = ev["sentences"]
    subject, obj = ev["entities"][str(ev["derived"]["subject"])], ev["entities"][str(ev["derived"]["object"])]
    _, event = next(iter(json.loads(temp["evidence"])["events"].items()))
    start, end = event["intervals"][0]
    texts = {
        "refuse": ["I don't know.", "I do not know the answer."],
        "knows": [trans["gold_answer"], temp["gold_answer"]],
        # the right entities and years, in the wrong facts: the conclusion instead of the first premise; the years swapped
        "wrong_inference": [f"Yes.\n- {subject} is located in {obj}.\n- {b}",
                            f"Yes.\n- {event['label']} started in {end}.\n- {event['label']} ended in {start}."],
        "wrong_knowledge": ["Yes.\n- The Eiffel Tower is located in Berlin.\n- Berlin is located in Germany.",
                            f"Yes.\n- The Thirty Years' War started in {start}.\n- The Thirty Years' War ended in {end + 5}."],
    }
    prompts = SUITE.prompts(rows)
    got = {}
    for model, answer_texts in texts.items():
        scored = SUITE.score(rows, _responses(model, prompts, answer_texts), model=model,
                             scoring=ScoringOptions(embedder=embedder))
        got[model] = [v["category"] for v in sorted(scored.votes, key=lambda v: v["task"])]
        if model == "refuse":
            shares = {(m["task"], m["metric"]): m["value"] for m in scored.metrics if not m["breakdown"]}
            assert shares[("rule", "refusal_share")] == 1.0 and shares[("rule", "hallucination_rate")] == 0.0
    assert got["refuse"] == ["CO", "CO"] and got["knows"] == ["CO", "CO"]
    # the right reasoning under the flipped Yes/No: a hallucination by the paper's count, CO by the oracle
    flipped = [("No." if t.startswith("Yes.") else "Yes.") + t[t.index("\n"):] for t in texts["knows"]]
    scored = SUITE.score(rows, _responses("flipped", prompts, flipped), model="flipped",
                         scoring=ScoringOptions(embedder=embedder))
    overall = {(m["task"], m["metric"]): m for m in scored.metrics if not m["breakdown"]}
    for task in ("rule", "temporal"):
        assert overall[(task, "hallucination_rate")]["value"] == 1.0 and overall[(task, "hallucination_rate")]["n"] == 1
        assert overall[(task, "oracle_hallucination_rate")]["value"] == 0.0
        assert overall[(task, "wrong_answer_co_share")]["value"] == 1.0
    # wrong knowledge under the right Yes/No: no hallucination by the paper's count, a right answer with wrong reasoning
    scored = SUITE.score(rows, _responses("wk", prompts, texts["wrong_knowledge"]), model="wk",
                         scoring=ScoringOptions(embedder=embedder))
    overall = {(m["task"], m["metric"]): m for m in scored.metrics if not m["breakdown"]}
    right = {t: r["expected"] == "yes" for t, r in (("rule", trans), ("temporal", temp))}
    for task in ("rule", "temporal"):
        if right[task]:
            assert overall[(task, "hallucination_rate")]["value"] == 0.0
            assert overall[(task, "right_answer_wrong_reasoning")]["value"] == 1.0
        else:
            assert overall[(task, "hallucination_rate")]["value"] == 1.0
            assert overall[(task, "both_errors_share")]["value"] == 1.0
    assert got["wrong_inference"] == ["EI", "EI"]
    assert got["wrong_knowledge"] == ["OL", "OL"]    # other entities and other facts
    assert read_answer("Yes, because ...") == "yes" and read_answer("I'm not sure.") == "refusal"


def test_extractor_precision_and_recall_on_sentences_written_from_kg_triples(sample_kg) -> None:
    con, _ = sample_kg
    ents = dict(con.execute("SELECT id, label FROM entities").fetchall())
    rels = dict(con.execute("SELECT key, label FROM relations").fetchall())
    triples = con.execute("SELECT t.head, r.key, t.tail FROM triples t JOIN relations r ON r.id = t.relation "
                          "ORDER BY t.head, r.key, t.tail").fetchall()[::4]
    ex = Extractor(ents, rels)  # the labels alone: no per-key phrase list
    scores = measure_extractor(ex, write_sentences(triples, ents, rels, seed=0))
    assert scores["n"] == len(triples) > 300
    # measured: precision 0.97, recall 0.83 (the misses are phrasings it has no pattern for: "X has Y as its R")
    assert scores["precision"] >= 0.93 and scores["recall"] >= 0.78, {k: v for k, v in scores.items() if k != "misses"}


def test_the_llm_extractor_runs_through_the_judge(items, embedder) -> None:
    from kgprobe.generation.records import ModelSpec

    rows = items.items.to_pylist()[:20] + [r for r in items.items.to_pylist() if r["task"] == "temporal"][:6]
    prompts = SUITE.prompts(rows)
    asked = []

    def judge(spec, judge_prompts):
        asked.extend(judge_prompts)
        outs = ReferenceBackend("oracle").generate(judge_prompts, SamplingParams(n=1, temperature=0.0))
        return {p.item_id: {"text": o[0].text, "error": o[0].error, "response_id": f"j-{p.item_id}"}
                for p, o in zip(judge_prompts, outs)}

    from kgprobe.generation.backends.reference import ReferenceConfig

    spec = ModelSpec(name="oracle-judge", backend="reference", config=ReferenceConfig("oracle"))
    scored = SUITE.score(rows, _responses("oracle", prompts), model="oracle",
                         scoring=ScoringOptions(embedder=embedder, judges=(spec,), judge=judge),
                         settings=DrowzeeSettings(llm_extractor=True))
    judged = [m for m in scored.metrics if m["judge"] == "oracle-judge"]
    assert len(asked) == len(rows) and judged and all(is_best(m) for m in judged)


def test_report_section_renders(items, embedder) -> None:
    from kgprobe.report.render import ReportContext, render_page

    rows = items.items.to_pylist()
    prompts = SUITE.prompts(rows)
    metrics = []
    for model in ("oracle", "always-no"):
        scored = SUITE.score(rows, _responses(model, prompts), model=model, scoring=ScoringOptions(embedder=embedder))
        metrics += [{**m, "setting": "closed"} for m in scored.metrics]
    ctx = ReportContext(project="t", config_path="x.yaml", snapshot_ids=("s",), created_at=date(2026, 1, 1),
                        models=("oracle", "always-no"))
    section, plots = SUITE.report(ctx, metrics)
    assert plots == {}
    html = render_page(ctx, own=[section])
    assert "Hallucination rate by rule" in html and "Hallucination rate by operator" in html
    assert "until" in html and "transitive" in html and "0.00 [0.00," in html and "1.00 [" in html


@pytest.mark.parametrize(("kind", "accepted"), [("oracle", True), ("always-yes", False)])
def test_the_rewording_step_runs_the_configured_model_and_keeps_the_original(sample_kg, kind, accepted) -> None:
    con, snapshot = sample_kg
    settings = DrowzeeSettings(**{**SAMPLE_SETTINGS, "n_formulas": 4, "per_rule": 3,
                                  "reword": {"name": "rewriter", "backend": "reference", "kind": kind}})
    result = SUITE.items(ItemSource(con=con, kg="sample", snapshot_id=snapshot, settings=settings, seed=0))
    rows = result.items.to_pylist()
    plain = SUITE.items(ItemSource(con=con, kg="sample", snapshot_id=snapshot,
                                   settings=DrowzeeSettings(**{**SAMPLE_SETTINGS, "n_formulas": 4, "per_rule": 3}), seed=0))
    assert [r["original_question"] for r in rows] == [r["question"] for r in plain.items.to_pylist()]
    # the oracle echoes the question (a rewording that changes nothing is accepted); "Yes." drops every entity
    assert all(r["question"] == r["original_question"] for r in rows)
    report = result.metadata["reword"]
    assert report["model"] == "rewriter" and report["reworded"] == (len(rows) if accepted else 0)
    assert report["rejected"] == (0 if accepted else len(rows))
    assert all(("reworded_by" in json.loads(r["evidence"])) == accepted for r in rows)
    if not accepted:
        assert set(report["rejected_by"]) == {"entity dropped or changed"}


def test_an_events_file_and_the_kg_share_one_horizon(sample_kg, tmp_path) -> None:
    con, snapshot = sample_kg
    records = [{"type": "begin", "relation": "ev_21st century", "year": 2001},
               {"type": "end", "relation": "ev_21st century", "year": 2100},
               {"type": "begin", "relation": "ev_Space age", "year": 1957}]
    for k in range(150):  # as many listed events as the sample has dated facts, so formulas draw both
        records += [{"type": "begin", "relation": f"ev_Era {k}", "year": 1900 + k % 110},
                    {"type": "end", "relation": f"ev_Era {k}", "year": 1910 + k % 110 + k % 7}]
    path = tmp_path / "events.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    for horizon in (2024, 2010):
        settings = DrowzeeSettings(**{**SAMPLE_SETTINGS, "rules": [], "n_formulas": 40, "events": str(path),
                                      "domain": (1, horizon)})
        rows = SUITE.items(ItemSource(con=con, kg="sample", snapshot_id=snapshot, settings=settings, seed=0)).items
        seen = set()
        for r in rows.to_pylist():
            ev = json.loads(r["evidence"])
            f = formula_from_json(ev["formula"])
            assert ev["year"] + horizon_of(f) <= horizon
            for name, x in ev["events"].items():
                seen.add(x["kind"])
                # KG facts (ongoing to the horizon in the sample) and listed events stop at the same year
                assert all(e <= horizon for _, e in x["known"]), (name, x)
                if name == "ev_21st century":
                    assert x["intervals"] == [[2001, 2100]] and x["known"] == [[2001, horizon]]
                    assert "- 21st century ended in 2100." in r["gold_answer"]
        assert {"event", "state"} <= seen  # listed events and KG facts both asked
