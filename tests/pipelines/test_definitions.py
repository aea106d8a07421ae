"""The Dagster code location: definitions load, and the ingest assets and checks run on a small project."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.definitions import build_definitions, defs
from resources import ProjectResource, WarehouseResource


def test_definitions_load_with_jobs_and_checks() -> None:
    repo = defs.get_repository_def()
    assert {"prepare", "perturb", "similarity", "generate_closed", "ingest", "subgraphs", "fpq_questions", "closed_book",
            "grounded", "score_closed", "score_grounded", "publish"} <= {j.name for j in repo.get_all_jobs()}
    keys = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
    assert {"kg_source", "kg", "queries", "khop_subgraphs", "ppr_subgraphs", "fpq_true_triples", "fpq_edits", "fpq_items",
            "triple_scorer", "perturbed_subgraphs", "kg_similarity", "fpq_responses", "fpq_grounded_responses",
            "fpq_scores", "fpq_grounded_scores", "leaderboard", "report"} <= keys
    # partitions come from the sample config: its five models and none + 4 methods x 2 levels
    assert repo.get_job("generate_closed").partitions_def.get_partition_keys() == [
        "smollm2-135m", "oracle", "always-yes", "always-no", "random"]
    assert len(repo.get_job("perturb").partitions_def.get_partition_keys()) == 9
    checks = {c.name for c in repo.asset_graph.asset_check_keys}
    assert {"kg_not_empty", "kg_no_dangling_ids", "kg_reject_rate", "kg_label_coverage", "fpq_scores_oracle_is_perfect",
            "fpq_scores_expectations", "fpq_grounded_scores_unknown_share"} <= checks
    # scoring runs in the same run as the answers it scores, per partition
    assert repo.get_job("closed_book").partitions_def == repo.get_job("generate_closed").partitions_def
    # the sample grounds three reference models (generation.grounded_models) at 9 levels
    assert len(repo.get_job("grounded").partitions_def.get_partition_keys()) == 3 * 9
    # the UI shows a group per suite, holding the suite's whole lane and its own upstream assets
    groups = {k.to_user_string(): repo.asset_graph.get(k).group_name for k in repo.asset_graph.get_all_asset_keys()}
    assert {k for k, g in groups.items() if g == "fpq"} == {
        "fpq_true_triples", "fpq_edits", "fpq_items", "fpq_responses", "fpq_scores", "fpq_grounded_responses",
        "fpq_grounded_scores"}
    assert not {"questions", "generate", "score"} & set(groups.values())
    # one model per run: the answering and scoring jobs run in process, so the run's models resource is shared
    assert repo.get_job("closed_book").executor_def.name == "in_process"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "kg.tsv").write_text("a\tr\tb\nb\tr\tc\nbad line\n", encoding="utf-8")
    (tmp_path / "labels.tsv").write_text("a\tAlpha\nb\tBeta\nc\tGamma\n", encoding="utf-8")
    cfg = tmp_path / "project.yaml"
    cfg.write_text(
        f"warehouse: {tmp_path / 'wh' / 'kg.duckdb'}\n"
        "kgs:\n  mini:\n    triples: [kg.tsv]\n    entity_labels: labels.tsv\n    lenient: true\n",
        encoding="utf-8",
    )
    return cfg


def test_ingest_assets_and_checks_materialize(project: Path, tmp_path: Path) -> None:
    d = build_definitions(str(project))
    from assets import ingest

    warehouse = tmp_path / "wh" / "kg.duckdb"
    result = dg.materialize(
        [*ingest.ASSETS, *ingest.CHECKS],
        resources={"project": ProjectResource(config_path=str(project)), "warehouse": WarehouseResource(path=str(warehouse))},
    )
    assert result.success
    checks = {e.asset_check_key.name: e for e in result.get_asset_check_evaluations()}
    assert checks["kg_not_empty"].passed and checks["kg_no_dangling_ids"].passed
    assert checks["kg_label_coverage"].passed
    # one of three rows rejected: 33% is above the 1% warning threshold
    assert not checks["kg_reject_rate"].passed
    assert checks["kg_reject_rate"].severity == dg.AssetCheckSeverity.WARN
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM mini.triples").fetchone()[0] == 2
        assert con.execute("SELECT reason FROM mini.rejects").fetchone()[0].startswith("too few columns")
    assert d.resolve_job_def("ingest") is not None
    # a config without suites or models still loads: its answering jobs select nothing
    assert d.resolve_job_def("generate_closed").partitions_def is None
    assert not [k for k in d.resolve_asset_graph().get_all_asset_keys() if k.to_user_string().endswith("_responses")]


def test_a_broken_config_fails_the_asset_with_its_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kgs:\n  mini: {format: tsv}\n", encoding="utf-8")
    from assets import ingest

    with pytest.raises(Exception, match="'triples'.*is required"):
        dg.materialize([ingest.kg_source], resources={"project": ProjectResource(config_path=str(bad))})


def _stage_config(tmp_path: Path, **kw) -> Path:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_stage_configs", Path(__file__).resolve().parents[1] / "kgprobe" / "test_stages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = tmp_path / "p.yaml"
    path.write_text(f"warehouse: {tmp_path / 'wh' / 'kg.duckdb'}\n" + module.config_text(**kw), encoding="utf-8")
    return path


def test_closed_book_config_defines_no_subgraph_or_perturbation_stage(tmp_path: Path) -> None:
    d = build_definitions(str(_stage_config(tmp_path, suites="fpq,grapheval")))
    keys = {k.to_user_string() for k in d.resolve_asset_graph().get_all_asset_keys()}
    assert {"fpq_items", "grapheval_items", "fpq_responses", "report"} <= keys
    assert not keys & {"queries", "khop_subgraphs", "ppr_subgraphs", "triple_scorer", "perturbed_subgraphs",
                       "kg_similarity", "fpq_grounded_responses"}
    jobs = {j.name for j in d.get_repository_def().get_all_jobs()}
    assert {"prepare", "closed_book", "publish"} <= jobs
    assert not jobs & {"perturb", "similarity", "grounded", "subgraphs"}
    # and the prepare job runs: ingest and the questions, with no stage asking for queries
    with dg.DagsterInstance.ephemeral() as instance:
        result = d.resolve_job_def("prepare").execute_in_process(instance=instance, raise_on_error=False)
    assert result.success
    done = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert {"kg", "fpq_items", "grapheval_items"} <= done and "queries" not in done


def test_clean_grounding_needs_no_scorer(tmp_path: Path) -> None:
    d = build_definitions(str(_stage_config(tmp_path, suites="fpq", perturbation="{methods: []}")))
    keys = {k.to_user_string() for k in d.resolve_asset_graph().get_all_asset_keys()}
    assert {"queries", "ppr_subgraphs", "perturbed_subgraphs", "fpq_grounded_responses"} <= keys
    assert not keys & {"triple_scorer", "kg_similarity"}
    assert d.resolve_job_def("perturb").partitions_def.get_partition_keys() == ["none"]


def test_ingest_says_which_relations_typed_the_entities(tmp_path: Path) -> None:
    from assets import ingest

    (tmp_path / "kg.tsv").write_text("/m/01\t/film/film/genre\t/m/02\n/m/03\t/film/film/genre\t/m/02\n",
                                     encoding="utf-8")
    cfg = tmp_path / "fb.yaml"
    cfg.write_text(f"kgs:\n  fb:\n    triples: [kg.tsv]\n    infer_types: true\n", encoding="utf-8")
    result = dg.materialize(ingest.ASSETS, resources={"project": ProjectResource(config_path=str(cfg)),
                                                      "warehouse": WarehouseResource(path=str(tmp_path / "wh.duckdb"))})
    meta = result.asset_materializations_for_node("kg")[0].metadata
    table = meta["inferred_types_fb"].value
    assert "/film/film/genre" in table and "| film |" in table and "| genre |" in table


def _graph(d: dg.Definitions) -> tuple[dict[str, str], set[str], set[str]]:
    """Asset key -> group, the checks' asset keys, and the job names of a code location."""
    graph = d.resolve_asset_graph()
    groups = {k.to_user_string(): graph.get(k).group_name for k in graph.get_all_asset_keys()}
    checked = {c.asset_key.to_user_string() for c in graph.asset_check_keys}
    return groups, checked, {j.name for j in d.get_repository_def().get_all_jobs()}


OTHER_SUITES = ("erbench", "grapheval", "okgqa", "drowzee")


@pytest.mark.parametrize("perturbation", [None, "{methods: []}"], ids=["closed_book", "grounded"])
def test_a_config_enabling_only_fpq_defines_no_other_suite(tmp_path: Path, perturbation: str | None) -> None:
    d = build_definitions(str(_stage_config(tmp_path, suites="fpq", perturbation=perturbation)))
    groups, checked, jobs = _graph(d)
    assert {"fpq_true_triples", "fpq_edits", "fpq_items", "fpq_responses", "fpq_scores"} <= set(groups)
    assert {"fpq_items_carry_their_edit", "fpq_edits_follow_their_method"} <= {
        c.name for c in d.resolve_asset_graph().asset_check_keys}
    for name in OTHER_SUITES:
        assert not [k for k in groups if k.startswith(f"{name}_")], name
        assert name not in set(groups.values())
        assert not [k for k in checked if k.startswith(f"{name}_")], name
        assert not [j for j in jobs if j.startswith(f"{name}_")], name
    assert "fpq_questions" in jobs and not {"erdb", "okgqa_question_bank"} & set(groups)
    # the shared stages are still those kgprobe.stages asks for: the subgraphs only when fpq is grounded
    assert ("queries" in groups) == (perturbation is not None)
    if perturbation is not None:
        deps = d.resolve_asset_graph().get(dg.AssetKey("queries")).parent_keys
        # KG-FPQ's subjects become queries; OKGQA, not enabled, adds no upstream asset (no stub in the graph)
        assert {k.to_user_string() for k in deps} == {"kg", "fpq_true_triples"}
        assert set(groups.values()) == {"ingest", "fpq", "subgraph", "perturb", "report"}


def test_a_config_without_fpq_defines_none_of_its_assets(tmp_path: Path) -> None:
    d = build_definitions(str(_stage_config(tmp_path, suites="okgqa")))
    groups, checked, jobs = _graph(d)
    assert {"okgqa_question_bank", "okgqa_items", "queries", "ppr_subgraphs"} <= set(groups)
    assert not [k for k in groups if k.startswith("fpq_")] and "fpq" not in set(groups.values())
    assert not [k for k in checked if k.startswith("fpq_")] and "fpq_questions" not in jobs
    deps = d.resolve_asset_graph().get(dg.AssetKey("queries")).parent_keys
    assert {k.to_user_string() for k in deps} == {"kg", "okgqa_question_bank"}
