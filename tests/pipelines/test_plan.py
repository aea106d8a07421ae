"""``kgprobe plan``: what the main job would generate and cost, from the stored questions, before any model runs."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest
import yaml

from pipelines.cli import main
from pipelines.definitions import build_definitions

SAMPLE = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("plan")
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    fpq = {**cfg["suites"]["fpq"], "n_per_domain": 4, "limit": 3}
    project = {"name": "plan", "seed": 0, "warehouse": str(tmp / "warehouse" / "kgprobe.duckdb"), "kgs": cfg["kgs"],
               "suites": {"fpq": fpq}, "scoring": {"judges": []},
               "models": [{"name": "oracle", "backend": "reference", "kind": "oracle"},
                          {"name": "mini", "backend": "litellm", "model_id": "openai/gpt-4o-mini", "max_tokens": 64}]}
    path = SAMPLE / f".test-{tmp.name}.yaml"  # beside the sample so its relative data paths resolve
    path.write_text(yaml.safe_dump(project), encoding="utf-8")
    try:
        yield path
    finally:
        path.unlink()


@pytest.mark.slow
def test_plan_before_and_after_the_questions_exist(project, capsys) -> None:
    assert main(["plan", "--config", str(project)]) == 0
    before = capsys.readouterr().out
    # the hint runs on the config the plan read
    assert f"no items yet: run `kgprobe run --config {project.resolve()} --job fpq_questions`" in before
    defs = build_definitions(str(project))
    with dg.DagsterInstance.ephemeral() as instance:
        for job in ("ingest", "fpq_questions"):
            assert defs.resolve_job_def(job).execute_in_process(instance=instance).success
    assert main(["plan", "--config", str(project), "--json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    mini, oracle = rows["mini"], rows["oracle"]
    # 3 true triples, each with its TPQ and FPQs in two formats; 3 samples each (KG-FPQ's sampling)
    assert mini["prompts"] == oracle["prompts"] > 3 and mini["samples"] == 3 * mini["prompts"]
    assert mini["stored"] == 0 and mini["to_generate"] == mini["samples"]
    assert mini["output_tokens"] == 64 * mini["samples"] and mini["input_basis"] == "litellm tokenizer"
    assert mini["cost_usd"] > 0 and oracle["cost_usd"] == 0 and oracle["input_tokens"] == 0
    import litellm

    price = litellm.model_cost["gpt-4o-mini"]
    assert mini["cost_usd"] == pytest.approx(mini["input_tokens"] * price["input_cost_per_token"]
                                             + mini["output_tokens"] * price["output_cost_per_token"])
    assert main(["plan", "--config", str(project)]) == 0
    table = capsys.readouterr().out
    assert "TOTAL" in table and "price from litellm price map" in table and f"${mini['cost_usd']:,.4f}" in table
