"""The closed-book chain-of-thought baseline (the paper's Table 2 Var-1 and Figure 6 baseline): its own items and
prompt, scored in its own cell (never mixed into the zero-shot numbers), drawn as a level line in Figure 6."""

from __future__ import annotations

import json

from kgprobe.suites.base import ScoringOptions
from kgprobe.suites.okgqa import OKGQASuite
from kgprobe.suites.okgqa.report import figure_data

from .conftest import reference_judge

SUITE = OKGQASuite()


def _response(item, text, rid):
    return {"response_id": rid, "item_id": item["item_id"], "model": "m", "sample_index": 0, "text": text,
            "error": None}


def test_cot_answers_are_scored_in_their_own_cell(sample_build):
    closed = SUITE.select(sample_build["items"], setting="closed", limit=1)
    plain = next(it for it in closed if it["retrieval"] == "none")
    cot = next(it for it in closed if it["retrieval"] == "cot")
    ev = json.loads(plain["evidence"])
    truth, lie = ev["oracle_facts"][0], ev["random_facts"][0]
    scored = SUITE.score([plain, cot], [_response(plain, truth, "a"), _response(cot, lie, "b")], model="m",
                         scoring=ScoringOptions(judge=reference_judge, resamples=50, seed=1))
    rows = {(m["metric"], tuple(sorted(m["breakdown"].items()))): m for m in scored.metrics}
    # the overall (zero-shot) FActScore is the plain prompt's answer alone; the CoT answer has its own cell
    assert rows[("factscore", ())]["value"] == 1.0 and rows[("factscore", ())]["n"] == 1
    assert rows[("factscore", (("retrieval", "cot"),))]["value"] == 0.0
    assert rows[("factscore", (("retrieval", "cot"),))]["n"] == 1
    assert all(m["n"] <= 1 for m in scored.metrics if m["metric"] == "factscore")


def _row(model, judge, setting, pert, retrieval, value):
    return {"model": model, "perturbation": pert, "suite": "okgqa", "task": "open_qa", "judge": judge,
            "metric": "factscore", "breakdown": {"retrieval": retrieval}, "higher_is_better": True, "n": 3,
            "value": value, "ci_low": 0.0, "ci_high": 1.0, "interval": "wilson", "item_ids": [], "setting": setting}


def test_figure6_draws_the_cot_baseline_as_a_level_line():
    rows = [_row("gpt", "smol", "grounded", p, "subgraph", v) for p, v in (("none", 0.9), ("RR-0.5", 0.6),
                                                                          ("RR-1.0", 0.2))]
    rows += [_row("gpt", "smol", "closed", "none", "cot", 0.55), _row("gpt", "smol", "closed", "none", "none", 0.5),
             _row("gpt", "heuristic", "closed", "none", "cot", 0.1)]
    lines = figure_data(rows, judge="smol")["RR"]
    assert lines["gpt / subgraph"] == {0.0: 0.9, 0.5: 0.6, 1.0: 0.2}
    # the baseline of the same judge, at every level of the figure; the zero-shot row is not a line
    assert lines["gpt / CoT, closed book"] == {0.0: 0.55, 0.5: 0.55, 1.0: 0.55}
    assert set(lines) == {"gpt / subgraph", "gpt / CoT, closed book"}


def test_zero_shot_table_shows_both_prompts(sample_build):
    from kgprobe.report.render import ReportContext

    rows = [_row("gpt", "heuristic", "closed", "none", None, 0.5),
            _row("gpt", "heuristic", "closed", "none", "cot", 0.4)]
    rows[0]["breakdown"] = {}
    ctx = ReportContext(project="p", config_path="c", snapshot_ids=("s",), created_at="2026-01-01", models=("gpt",))
    sec, _ = SUITE.report(ctx, rows)
    assert [r["prompt"] for r in sec.data["closed"]] == ["zero-shot", "chain-of-thought"]
    assert [r["cells"][0][:4] for r in sec.data["closed"]] == ["0.50", "0.40"]
