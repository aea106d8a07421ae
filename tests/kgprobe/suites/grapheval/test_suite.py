"""GraphEval as a suite on the sample KG: items, prompts, the oracle at the best value of every metric row it emits,
the baselines clearly worse, and the report section."""

from __future__ import annotations

import pytest

from kgprobe.generation.backends.reference import ReferenceBackend
from kgprobe.generation.records import SamplingParams
from kgprobe.scoring.answers import parse_true_false
from kgprobe.scoring.quality import failed
from kgprobe.suites.base import ItemSource, ScoringOptions, check_items, is_best
from kgprobe.suites.grapheval.suite import GraphEvalSettings, GraphEvalSuite

from .conftest import SAMPLE

SUITE = GraphEvalSuite()


@pytest.fixture(scope="module")
def items(sample_con):
    settings = GraphEvalSettings(per_relation=3, templates="grapheval/templates.yaml")
    result = SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap", settings=settings, seed=0,
                                    config_dir=SAMPLE))
    check_items("grapheval", result.items)
    return result


def _answers(kind: str, items: list[dict], n: int = 3) -> list[dict]:
    prompts = SUITE.prompts(items)
    completions = ReferenceBackend(kind).generate(prompts, SamplingParams(n=n, temperature=0.6, top_p=0.9))
    return [{"response_id": f"{kind}-{p.item_id}-{i}", "item_id": p.item_id, "model": kind, "backend": "reference",
             "prompt_template_id": p.template_id, "prompt": p.text, "sample_index": i, "text": c.text,
             "error": c.error} for p, cs in zip(prompts, completions, strict=True) for i, c in enumerate(cs)]


def _overall(scores, judge: str = "") -> dict[str, float]:
    return {m["metric"]: m["value"] for m in scores.metrics if not m["breakdown"] and m["judge"] == judge}


def test_items_are_sample_statements(items) -> None:
    rows = items.items.to_pylist()
    assert 300 <= len(rows) <= 700  # modest for the main job
    assert {r["answer_format"] for r in rows} == {"true_false_idk"} and {r["task"] for r in rows} == {"statement"}
    assert items.metadata["template_sources"][-1] == {"source": "fallback", "relations": 0}
    first = rows[0]
    # items run in (relation, head, tail) order, the positive before its negatives; the sample's relation 0 is
    # architect, its template "{head} was designed by the architect {tail}."
    assert first["polarity"] == "positive" and first["relation_key"] == "architect"
    assert first["question"] == f"{first['head_label']} was designed by the architect {first['tail_label']}."
    assert dict(first["breakdown"])["head_type"] and dict(first["breakdown"])["degree_bucket"]
    prompt = SUITE.prompts([first])[0]
    assert "Answer 'No, the statement is false.' if you know the statement is false." in prompt.text
    assert prompt.text.count(first["question"]) == 1 and prompt.gold == "true" and prompt.answer_kind == "tf"


def test_oracle_texts_read_as_true_and_false(items) -> None:
    rows = items.items.to_pylist()[:8]
    for r in _answers("oracle", rows, n=1):
        expected = next(x["expected"] for x in rows if x["item_id"] == r["item_id"])
        assert parse_true_false(r["text"]) == expected


def test_oracle_is_best_on_every_row_and_baselines_are_worse(items) -> None:
    rows = items.items.to_pylist()
    scores = {kind: SUITE.score(rows, _answers(kind, rows), model=kind, scoring=ScoringOptions(seed=3, resamples=200))
              for kind in ("oracle", "always-yes", "always-no", "random")}
    oracle = scores["oracle"]
    assert oracle.metrics and all(is_best(m) for m in oracle.metrics), [
        (m["metric"], m["breakdown"], m["value"]) for m in oracle.metrics if not is_best(m)]
    assert _overall(oracle) == {"correctness": 1.0, "truthfulness": 1.0, "informativeness": 1.0,
                                "unknown_share": 0.0, "accuracy": 1.0}
    breakdown_keys = {k for m in oracle.metrics for k, _ in (m["breakdown"] or {}).items()}
    assert breakdown_keys == {"relation", "head_type", "tail_type", "degree_bucket", "polarity"}
    yes, no, rnd = (_overall(scores[k]) for k in ("always-yes", "always-no", "random"))
    assert yes["correctness"] == 0.0 and yes["truthfulness"] == 0.0 and yes["informativeness"] == 1.0
    assert no["correctness"] == 0.0 and no["truthfulness"] == 0.0
    assert 0.0 < rnd["correctness"] < 0.5 and rnd["truthfulness"] < 0.6
    for kind in ("oracle", "random"):
        tables = scores[kind].tables()
        assert not failed(SUITE.validate(tables, name=kind)), kind
        boot = [m for m in scores[kind].metrics if m["interval"] == "wilson_mean"]
        assert boot and all(m["ci_low"] <= m["value"] <= m["ci_high"] for m in boot)
        assert all(m["ci_low"] < m["ci_high"] for m in boot if m["n"]), "a mean of [0, 1] scores collapsed"
    rnd_rows = [m for m in scores["random"].metrics if m["metric"] == "correctness" and not m["breakdown"]]
    assert rnd_rows[0]["ci_low"] < rnd_rows[0]["value"] < rnd_rows[0]["ci_high"]
    assert rnd_rows[0]["n"] == sum(r["expected"] == "true" for r in rows)
    again = SUITE.score(rows, _answers("random", rows), model="random", scoring=ScoringOptions(seed=3, resamples=200))
    assert [m["ci_low"] for m in again.metrics] == [m["ci_low"] for m in scores["random"].metrics]


def test_failed_requests_and_partial_groups(items) -> None:
    rows = items.items.to_pylist()
    answers = _answers("oracle", rows, n=1)
    group = rows[0]["group_id"]
    members = [r["item_id"] for r in rows if r["group_id"] == group]
    # the positive of the first group failed: unreadable, no credit; a negative of the second group is missing
    answers = [dict(a, text=None, error="timeout") if a["item_id"] == members[0] else a for a in answers]
    second = [r["item_id"] for r in rows if r["group_id"] == rows[len(members)]["group_id"]]
    answers = [a for a in answers if a["item_id"] != second[-1]]
    s = SUITE.score(rows, answers, model="m")
    per_item = {v["item_id"]: v for v in s.votes}
    assert per_item[members[0]]["vote"] == "unknown" and per_item[members[0]]["correctness"] == 0.0
    assert per_item[second[0]]["correctness"] == 1.0
    overall = _overall(s)
    n_pos = sum(r["expected"] == "true" for r in rows)
    assert overall["correctness"] == pytest.approx((n_pos - 1) / n_pos)
    assert overall["unknown_share"] == pytest.approx(1 / (len(rows) - 1))


def test_report_section(items) -> None:
    from kgprobe.report.render import ReportContext, render_page

    rows = items.items.to_pylist()
    metrics = []
    for kind in ("oracle", "random"):
        metrics += [dict(m, setting="closed") for m in SUITE.score(rows, _answers(kind, rows), model=kind).metrics]
    ctx = ReportContext(project="t", config_path="x.yaml", snapshot_ids=("snap",), created_at="2026-01-01",
                        models=("oracle", "random"))
    section, plots = SUITE.report(ctx, metrics)
    assert section is not None and "grapheval_metrics" in plots
    html = render_page(ctx, metrics=metrics, own=[section])
    assert "GraphEval: true, false or I don&#39;t know" in html or "GraphEval: true, false or I don't know" in html
    assert "1.00 [1.00, 1.00] n=" not in html and "1.00 [0." in html and "By relation" in html and "By degree bucket" in html


def test_settings_forbid_unknown_keys() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        GraphEvalSettings(per_relaton=3)
    assert GraphEvalSettings().judge == "none" and GraphEvalSettings().negatives == 3
