"""The main job on a reduced copy of the bundled sample config, in-process: every asset and check."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest
import yaml

from pipelines.definitions import build_definitions
from pipelines.jobs import MAIN_SEQUENCE

SAMPLE = Path(__file__).resolve().parents[2] / "examples"
# the whole main job of the sample, every stage and partition: minutes on 2 cores
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dg.ExecuteInProcessResult, Path]:
    tmp = tmp_path_factory.mktemp("sample")
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    cfg["warehouse"] = str(tmp / "warehouse" / "kgprobe.duckdb")
    cfg["queries"]["sample"]["per_type"] = 1
    cfg["suites"]["fpq"]["n_per_domain"] = 12
    cfg["perturbation"]["levels"] = [0.5, 1.0]
    cfg["perturbation"]["scorer"]["epochs"] = 20
    cfg["models"] = [m for m in cfg["models"] if m["backend"] == "reference"]  # the CPU model has its own tests
    cfg["generation"]["grounded_models"] = ["oracle", "always-yes"]
    cfg["scoring"]["judges"] = [{"model": "oracle"}, {"model": "random"}]
    path = SAMPLE / f".test-{tmp.name}.yaml"  # beside the sample so its relative data paths resolve
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    results = {}
    try:
        defs = build_definitions(str(path))
        instance = dg.DagsterInstance.ephemeral()
        for job_name in MAIN_SEQUENCE:
            job = defs.resolve_job_def(job_name)
            keys = job.partitions_def.get_partition_keys() if job.partitions_def else [None]
            for key in keys:
                results[(job_name, key)] = job.execute_in_process(instance=instance, partition_key=key)
    finally:
        path.unlink()
    return results, tmp / "warehouse"


def test_every_run_succeeds(run) -> None:
    results, _ = run
    # prepare, none + 4 methods x 2 levels, similarity, four reference models closed-book, 2 models x 9 levels
    # grounded, the report
    assert len(results) == 1 + 9 + 1 + 4 + 18 + 1
    assert all(r.success for r in results.values())


def test_blocking_checks_pass(run) -> None:
    results, _ = run
    evaluations = {e.asset_check_key.name: e for r in results.values() for e in r.get_asset_check_evaluations()}
    for name in ("kg_not_empty", "kg_no_dangling_ids", "ppr_subgraphs_not_larger", "fpq_edits_follow_their_method",
                 "fpq_items_carry_their_edit", "perturbed_changes_follow_their_method",
                 "fpq_scores_expectations", "fpq_grounded_scores_expectations", "fpq_scores_oracle_is_perfect",
                 "fpq_grounded_scores_oracle_is_perfect",
                 "fpq_responses_expectations", "fpq_grounded_responses_expectations"):
        assert evaluations[name].passed, name
    # every suite the sample enables: its answers complete and its oracle perfect on every metric
    from kgprobe.config import load_config
    from kgprobe.suites import SUITES

    enabled = [n for n, s in SUITES.items() if s.configured(load_config(SAMPLE / "sample.yaml"))]
    assert {"fpq", "erbench"} <= set(enabled)
    for suite in enabled:
        for name in (f"{suite}_responses_expectations", f"{suite}_scores_expectations",
                     f"{suite}_scores_oracle_is_perfect"):
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


def test_similarity_invariants(run) -> None:
    _, wh = run
    from kgprobe.warehouse import read_partition

    rows = read_partition(wh, "kg_similarity").to_pylist()
    assert all(0.0 <= r[m] <= 1.0 for r in rows for m in ("ats", "sc2d", "sd2"))
    assert all(r["sd2"] == 1.0 and r["sc2d"] == 1.0 for r in rows if r["method"] == "none")
    assert all(r["sd2"] == pytest.approx(1.0) for r in rows if r["method"] == "RS")  # swaps keep every degree
    assert all(r["ats"] == 0.0 for r in rows if r["perturbation"] == "ED-1.0")  # nothing left to score


def test_oracle_answers_every_question_with_its_gold_label(run) -> None:
    _, wh = run
    from kgprobe.warehouse import read_partition

    items = {i["id"]: i for i in read_partition(wh, "fpq_items").to_pylist()}
    rows = read_partition(wh, "fpq_responses", {"model": "oracle"}).to_pylist()
    assert rows and all(r["error"] is None for r in rows)
    yn = [r for r in rows if items[r["item_id"]]["format"] == "yn"]
    assert yn and all(r["text"].lower().startswith(items[r["item_id"]]["answer"]) for r in yn)


def test_grounded_prompts_carry_the_perturbed_subgraph(run) -> None:
    _, wh = run
    from kgprobe.warehouse import read_partition

    clean = read_partition(wh, "fpq_grounded_responses", {"model": "oracle", "perturbation": "none"}).to_pylist()
    gone = read_partition(wh, "fpq_grounded_responses", {"model": "oracle", "perturbation": "ED-1.0"}).to_pylist()
    assert clean and len(clean) == len(gone)
    # OKGQA's D.1 layout: the question, then the facts, then "Answer:" (the system instruction goes as its own message)
    assert all(r["prompt"].startswith("Question: ") and r["prompt"].endswith("\n\nAnswer:") for r in clean)
    assert all("Below are the facts that might be relevant to answer the question:\n" in r["prompt"] for r in clean)
    assert {r["prompt_template_id"] for r in clean} <= {"okgqa-grounded-yn-v2", "okgqa-grounded-wh-v2"}
    assert all("(no facts)" in r["prompt"] for r in gone)  # every edge deleted
    assert sum("(no facts)" in r["prompt"] for r in clean) == 0
    assert {r["context_query_id"] for r in clean} <= {
        q["query_id"] for q in read_partition(wh, "queries").to_pylist() if q["source"] == "fpq_subjects"}


def _metric(rows, model, metric, *, task="discriminative", judge="", perturbation="none", **where):
    found = [m for m in rows if m["model"] == model and m["metric"] == metric and m["task"] == task
             and m["judge"] == judge and m["perturbation"] == perturbation
             and dict(m["breakdown"] or []) == {k: str(v) for k, v in where.items()}]
    assert len(found) == 1, (model, metric, found)
    return found[0]


def test_scores_separate_the_oracle_from_the_baselines(run) -> None:
    _, wh = run
    from kgprobe.warehouse import read_partition

    closed = [m for model in ("oracle", "always-yes", "always-no", "random")
              for m in read_partition(wh, "fpq_scores_metrics", {"model": model}).to_pylist()]
    assert _metric(closed, "oracle", "accuracy")["value"] == 1.0
    assert _metric(closed, "oracle", "fpq_accuracy", task="generative", judge="oracle")["value"] == 1.0
    assert _metric(closed, "always-yes", "tpq_accuracy")["value"] == 1.0
    assert _metric(closed, "always-yes", "fpq_accuracy")["value"] == 0.0
    assert _metric(closed, "always-no", "tpq_accuracy")["value"] == 0.0
    assert _metric(closed, "always-no", "fpq_accuracy")["value"] == 1.0
    # always-yes passes every gate (it says yes to each TPQ); always-no passes none, so its gated n is 0
    assert _metric(closed, "always-yes", "fpq_accuracy_gated")["n"] == _metric(closed, "always-yes", "fpq_accuracy")["n"]
    assert _metric(closed, "always-no", "fpq_accuracy_gated")["n"] == 0
    rnd = _metric(closed, "random", "accuracy")
    assert 0.2 < rnd["value"] < 0.8 and rnd["ci_low"] < rnd["value"] < rnd["ci_high"]
    # every metric row drills down to its items, and each item to its answers
    items = {r["item_id"]: r for r in read_partition(wh, "fpq_scores", {"model": "random"}).to_pylist() if r["judge"] == ""}
    # (items with the same question text share their stored responses, so a response id alone is not unique)
    samples = {(r["item_id"], r["response_id"]): r for r in read_partition(wh, "fpq_scores_samples", {"model": "random"}).to_pylist()}
    responses = {(r["item_id"], r["response_id"]): r for r in read_partition(wh, "fpq_responses", {"model": "random"}).to_pylist()}
    assert rnd["n"] == len(rnd["item_ids"]) == len(items)
    assert round(rnd["value"] * rnd["n"]) == sum(items[i]["correct"] for i in rnd["item_ids"])
    assert rnd["suite"] == "fpq" and rnd["higher_is_better"] and rnd["interval"] == "wilson"
    for item in items.values():
        keys = [(item["item_id"], rid) for rid in item["response_ids"]]
        assert [samples[k]["label"] for k in keys] == item["labels"]
        assert [responses[k]["sample_index"] for k in keys] == list(range(item["n_samples"]))


def test_grounded_scores_and_the_judges_agreement(run) -> None:
    _, wh = run
    from kgprobe.warehouse import read_partition

    ed = read_partition(wh, "fpq_grounded_scores_metrics", {"model": "oracle", "perturbation": "ED-1.0"}).to_pylist()
    assert _metric(ed, "oracle", "accuracy", perturbation="ED-1.0")["value"] == 1.0  # the oracle ignores the context
    agreement = read_partition(wh, "fpq_scores_agreement", {"model": "always-yes"}).to_pylist()
    assert [(a["judge_a"], a["judge_b"]) for a in agreement] == [("oracle", "random")]
    assert agreement[0]["n"] > 0 and -1.0 <= agreement[0]["kappa"] <= 1.0


def test_leaderboard_and_report(run) -> None:
    _, wh = run
    with duckdb.connect(str(wh / "kgprobe.duckdb"), read_only=True) as con:
        closed = con.execute('SELECT model, fpq_accuracy, fpq_accuracy_lo, fpq_accuracy_n FROM leaderboard.fpq_closed '
                             'ORDER BY model').fetchall()
        grounded = con.execute("SELECT count(*), count(DISTINCT perturbation) FROM leaderboard.fpq_grounded").fetchone()
    assert [r[0] for r in closed] == ["always-no", "always-yes", "oracle", "random"]
    assert dict((r[0], r[1]) for r in closed)["oracle"] == 1.0 and all(r[3] > 0 for r in closed)
    assert grounded == (18, 9)
    with duckdb.connect(str(wh / "kgprobe.duckdb"), read_only=True) as con:
        pooled = con.execute("SELECT setting, perturbation, n FROM leaderboard.judge_agreement WHERE model = 'all models' "
                             "AND suite = 'fpq' ORDER BY setting").fetchall()
    # the WH answers of every model pooled: closed book (4 models) and grounded (2 models x 9 levels)
    assert [(s, p) for s, p, _ in pooled] == [("closed", "none"), ("grounded", "all levels")]
    assert pooled[1][2] > pooled[0][2] > 0
    html = (wh / "report" / "report.html").read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") >= 5 and "always-yes" in html
    assert "src=\"http" not in html and "href=\"http" not in html
