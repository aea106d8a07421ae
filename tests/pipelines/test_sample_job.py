"""The main job on a reduced copy of the bundled sample config, in-process: every asset and check."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest
import yaml

from pipelines.definitions import build_definitions
from pipelines.jobs import MAIN_JOB

SAMPLE = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dg.ExecuteInProcessResult, Path]:
    tmp = tmp_path_factory.mktemp("sample")
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    cfg["warehouse"] = str(tmp / "warehouse" / "kgprobe.duckdb")
    cfg["queries"]["sample"]["per_type"] = 1
    cfg["fpq"]["n_per_domain"] = 12
    path = SAMPLE / f".test-{tmp.name}.yaml"  # beside the sample so its relative data paths resolve
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    try:
        defs = build_definitions(str(path))
        result = defs.resolve_job_def(MAIN_JOB).execute_in_process(instance=dg.DagsterInstance.ephemeral())
    finally:
        path.unlink()
    return result, tmp / "warehouse"


def test_every_step_succeeds(run) -> None:
    result, _ = run
    assert result.success


def test_blocking_checks_pass(run) -> None:
    result, _ = run
    evaluations = {e.asset_check_key.name: e for e in result.get_asset_check_evaluations()}
    for name in ("kg_not_empty", "kg_no_dangling_ids", "ppr_subgraphs_not_larger", "fpq_edits_follow_their_method",
                 "fpq_items_carry_their_edit"):
        assert evaluations[name].passed, name
    # the sample's labels are complete and nothing is rejected
    assert evaluations["kg_label_coverage"].passed and evaluations["kg_reject_rate"].passed


def test_sample_kg_counts(run) -> None:
    _, wh = run
    with duckdb.connect(str(wh / "kgprobe.duckdb"), read_only=True) as con:
        triples, temporal, typed, entities = con.execute(
            "SELECT (SELECT count(*) FROM sample.triples), (SELECT count(*) FROM sample.temporal_facts), "
            "(SELECT count(DISTINCT entity) FROM sample.entity_types), (SELECT count(*) FROM sample.entities)"
        ).fetchone()
    assert triples >= 600 and temporal >= 60 and typed == entities >= 200


def test_fpq_items_have_gold_answers_and_lineage(run) -> None:
    _, wh = run
    from kgprobe.warehouse import read_partition

    items = read_partition(wh, "fpq_items").to_pylist()
    assert {i["domain"] for i in items} == {"art", "people", "place"}
    gold = {(i["format"], i["premise"], i["answer"]) for i in items}
    assert gold == {("yn", "tpq", "yes"), ("yn", "fpq", "no"), ("wh", "tpq", "valid premise"), ("wh", "fpq", "false premise")}
    assert all(i["snapshot_id"] and i["template_id"].startswith("template:") for i in items)
    near = [i for i in items if i["method"] in ("NSC", "NDC")]
    assert near and all(1 <= i["hop"] <= 5 and i["path"] for i in near)
