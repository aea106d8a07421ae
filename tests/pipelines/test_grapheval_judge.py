"""GraphEval's hidden-state judge as a pipeline asset: ``judge: hidden_state`` on the CPU model, run by the
``closed_book`` job after its answers, its metrics in the leaderboard and its table in the report."""

from __future__ import annotations

import math
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from kgprobe.config import load_config
from pipelines.definitions import build_definitions

CPU_MODEL = "smollm2-135m"


def _edit(cfg: dict) -> None:
    grapheval = {**cfg["suites"]["grapheval"], "per_relation": 1, "judge": "hidden_state",
                 "hidden_judge": {"max_statements": 40, "timing_statements": 2, "epochs": 30}}
    cfg["suites"] = {"grapheval": grapheval}
    cpu = next(m for m in cfg["models"] if m["name"] == CPU_MODEL)
    # 4 groups of each profile (the sample asks the paper's and kgprobe's statements): 24 prompts
    cfg["models"] = [{**cpu, "limit": 4, "n": 1, "temperature": 0.0, "max_tokens": 32},
                     {"name": "oracle", "backend": "reference", "kind": "oracle"}]
    cfg["scoring"]["judges"] = [{"model": "oracle"}]
    cfg["generation"]["grounded_models"] = []
    cfg["queries"]["sample"]["per_type"] = 1
    cfg["queries"]["okgqa_questions"] = False


@pytest.mark.slow
def test_the_judge_runs_after_the_answers_and_reaches_the_report(project_config) -> None:
    path: Path = project_config(_edit, reference_only=False)
    defs = build_definitions(str(path))
    instance = dg.DagsterInstance.ephemeral()
    for job in ("ingest", "grapheval_questions"):  # only what GraphEval needs (no subgraphs, no triple scorer)
        assert defs.resolve_job_def(job).execute_in_process(instance=instance).success, job
    closed = defs.resolve_job_def("closed_book")
    assert "grapheval_hidden_judge" in {k.to_user_string() for k in closed.asset_layer.executable_asset_keys}
    for model in (CPU_MODEL, "oracle"):
        result = closed.execute_in_process(instance=instance, partition_key=model)
        assert result.success, model
    # the reference model has no hidden states: an empty partition with a note, not a failure
    oracle = [e for e in result.get_asset_materialization_events() if "hidden_judge" in e.asset_key.to_user_string()]
    assert oracle and "transformers" in str(oracle[0].materialization.metadata["note"].value)

    assert defs.resolve_job_def("publish").execute_in_process(instance=instance).success
    cfg = load_config(path)
    warehouse = Path(cfg.warehouse)
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        rows = con.execute("SELECT metric, judge, value, n, interval, task FROM leaderboard.metrics "
                           f"WHERE model = '{CPU_MODEL}' AND suite = 'grapheval' "
                           "AND (judge LIKE 'hidden_state%' OR judge = 'majority_class') "
                           "AND breakdown = MAP {}").fetchall()
    finally:
        con.close()
    # one judge per profile: its rows carry the profile's task; the paper profile's are checked here
    assert {t for m, j, _, _, _, t in rows if m == "judge_agreement"} == {"statement", "statement_kgprobe"}
    by_metric = {(m, j): (v, n, i) for m, j, v, n, i, t in rows if t == "statement"}
    f1, n, interval = by_metric[("judge_f1", "hidden_state")]
    assert 0.0 <= f1 <= 1.0 and n > 0 and interval == "bootstrap"
    # the majority-class baseline on the same held-out statements, beside the judge
    base, base_n, _ = by_metric[("judge_f1", "majority_class")]
    assert 0.0 <= base <= 1.0 and base_n == n and ("judge_weighted_f1", "hidden_state") in by_metric
    speedup, timed, _ = by_metric[("judge_speedup", "hidden_state")]
    assert math.isfinite(speedup) and speedup > 0 and timed == 2
    # formula (2) from the judge's labels beside those from the answers on the same held-back statements
    assert ("correctness", "hidden_state:heldout") in by_metric and ("correctness", "hidden_state") in by_metric
    html = next(warehouse.parent.rglob("report*.html")).read_text(encoding="utf-8")
    assert "The hidden-state judge" in html and CPU_MODEL in html and "majority-class baseline" in html
    # both profiles of the sample, each row labelled, and why Table 2 is not comparable
    assert "paper profile: generated answers" in html and "kgprobe profile (stricter, ours): generated answers" in html
    assert "Not comparable with the paper&#39;s Table 2" in html or "Not comparable with the paper's Table 2" in html
