"""Planned against actual generation, per model, suite and setting."""

from __future__ import annotations

import pytest

from kgprobe.report.cost import cost_rows


def _plan(model, suite, to_generate, tin, tout, cost, run="r1"):
    return {"model": model, "suite": suite, "run_id": run, "to_generate": to_generate, "input_tokens": tin,
            "output_tokens": tout, "cost_usd": cost}


def test_plans_and_what_their_runs_generated_add_up_per_cell() -> None:
    answers = [{"tokens_in": 10, "tokens_out": 4, "cost": 0.5, "error": None},
               {"tokens_in": 12, "tokens_out": 6, "cost": 0.25, "error": None},
               {"tokens_in": None, "tokens_out": None, "cost": None, "error": "HTTP 500"}]
    rows = cost_rows([(_plan("m", "fpq", 3, 30, 20, 1.0), answers),
                      (_plan("m", "fpq", 1, 8, 5, 0.2), answers[:1]),
                      ({**_plan("oracle", "fpq", 4, 0, 0, 0.0), "setting": "grounded"}, []),
                      (_plan("local", "erbench", 2, 40, 96, None), [])])
    by = {(r["model"], r["setting"]): r for r in rows}
    m = by[("m", "closed")]
    assert (m["partitions"], m["planned_samples"], m["generated_samples"]) == (2, 4, 3)  # the failure is not counted
    assert (m["input_tokens_est"], m["input_tokens"], m["output_tokens_est"], m["output_tokens"]) == (38, 32, 25, 14)
    assert m["cost_usd_est"] == pytest.approx(1.2) and m["cost_usd"] == pytest.approx(1.25)
    assert by[("oracle", "grounded")]["cost_usd_est"] == 0.0
    assert by[("local", "closed")]["cost_usd_est"] is None and by[("local", "closed")]["cost_usd"] is None


def test_items_sharing_a_prompt_count_its_answer_once() -> None:
    # three items, two of which ask the same prompt: the store generated two samples, not three
    answers = [{"response_id": "a", "tokens_in": 10, "tokens_out": 4, "cost": 0.5, "error": None},
               {"response_id": "a", "tokens_in": 10, "tokens_out": 4, "cost": 0.5, "error": None},
               {"response_id": "b", "tokens_in": 7, "tokens_out": 3, "cost": 0.25, "error": None}]
    [row] = cost_rows([(_plan("m", "grapheval", 2, 17, 7, 0.75), answers)])
    assert (row["planned_samples"], row["generated_samples"]) == (2, 2)
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (17, 7, 0.75)
