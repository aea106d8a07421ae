"""``kgprobe run`` / ``kgprobe jobs``: overrides recorded in the run's tags, one-line errors naming the valid names,
the headline table, results.json, and no report path after a failed run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import dagster as dg
import pytest

from pipelines.cli import main


def _config_text(**kw) -> str:
    spec = importlib.util.spec_from_file_location(
        "_cli_stage_configs", Path(__file__).resolve().parents[1] / "kgprobe" / "test_stages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.config_text(**kw)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("cli")
    path = tmp / "my-project.yaml"
    path.write_text(f"warehouse: {tmp / 'wh' / 'kg.duckdb'}\n" + _config_text(suites="fpq,grapheval"),
                    encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def dagster_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dh"))
    return tmp_path / "dh"


@pytest.mark.parametrize(("argv", "names"), [
    (["--job", "prepair"], ["kgprobe_my_project (the whole chain)", "prepare", "closed_book", "fpq_questions"]),
    (["--job", "closed_book", "--partition", "gpt-5"], ["oracle", "random"]),
    (["--suites", "fpq,okgqa"], ["okgqa not enabled", "enabled suites: fpq, grapheval"]),
    (["--models", "oracle,smollm2-135m"], ["smollm2-135m not among the models", "models: oracle, random"]),
])
def test_a_wrong_name_is_one_line_naming_the_valid_ones(project: Path, argv, names, capsys) -> None:
    assert main(["run", "--config", str(project), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert all(n in err for n in names), err
    assert "__ASSET_JOB" not in err  # Dagster's implicit job is not one to name


def test_jobs_lists_jobs_and_partitions(project: Path, capsys) -> None:
    assert main(["jobs", "--config", str(project)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("kgprobe_my_project: the whole chain: prepare -> closed_book -> publish")
    lines = out.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("closed_book:")))
    assert lines[at + 1].strip() == "partitions: oracle, random"
    assert "fpq_questions:" in out and "perturb:" not in out  # a closed-book config has no perturbation stage


@pytest.mark.slow
def test_run_with_overrides_then_a_failed_run(project: Path, dagster_home: Path, capsys,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["run", "--config", str(project), "--suites", "grapheval", "--models", "oracle", "--limit", "4",
            "--log-level", "ERROR"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "kgprobe_my_project succeeded" in out
    table = out[out.index("headline metrics"):]
    assert "oracle  1.000 [" in table and "n=4" in table and "random" not in table
    assert "labels of sample: 675 of 675 entities have a readable name" in out
    results = project.parent / "wh" / "results.json"
    doc = json.loads(results.read_text(encoding="utf-8"))
    assert doc["succeeded"] and doc["overrides"] == {"suites": ["grapheval"], "models": ["oracle"], "limit": 4}
    assert len(doc["config_sha256"]) == 64 and doc["versions"]["dagster"] == dg.__version__
    assert [(h["model"], h["suite"], h["n"]) for h in doc["headlines"]] == [("oracle", "grapheval", 4)]
    assert doc["report"] and Path(doc["report"]).exists() and f"report {doc['report']}" in out
    with dg.DagsterInstance.get() as instance:
        tags = [r.tags for r in instance.get_runs()]
    assert tags and all(t["kgprobe/suites"] == "grapheval" and t["kgprobe/models"] == "oracle"
                        and t["kgprobe/limit"] == "4" for t in tags)

    # another narrowed run (another suite, another model) keeps what the first scored in the headline and the
    # report, which names the project's config, not the hidden narrowed copy
    other = ["run", "--config", str(project), "--suites", "fpq", "--models", "random", "--limit", "2",
             "--log-level", "ERROR"]
    assert main(other) == 0
    capsys.readouterr()
    doc = json.loads(results.read_text(encoding="utf-8"))
    shown = {(h["model"], h["suite"]) for h in doc["headlines"]}
    assert {("oracle", "grapheval"), ("random", "fpq")} <= shown, shown
    import duckdb

    with duckdb.connect(str(project.parent / "wh" / "kg.duckdb"), read_only=True) as con:
        stored = set(con.execute("SELECT DISTINCT model, suite FROM leaderboard.headlines").fetchall())
    assert stored == {("oracle", "grapheval"), ("random", "fpq")}, stored  # the first run's were dropped before
    html = Path(doc["report"]).read_text(encoding="utf-8")
    assert "my-project.yaml" in html and ".my-project.run.yaml" not in html

    # a failed run says what failed and shows no report path, though an older report exists
    from kgprobe.suites.grapheval.suite import GraphEvalSuite

    def broken(self, source):
        raise RuntimeError("statement templates unreadable")

    monkeypatch.setattr(GraphEvalSuite, "items", broken)
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "kgprobe_my_project FAILED" in out and "statement templates unreadable" in out
    assert "kgprobe: report" not in out
    doc = json.loads(results.read_text(encoding="utf-8"))
    assert not doc["succeeded"] and doc["report"] is None and "grapheval_items" in doc["failed"]


def test_warn_checks_that_fired_are_printed(tmp_path: Path, capsys) -> None:
    (tmp_path / "kg.tsv").write_text("a\tr\tb\nb\tr\tc\nbad line\n", encoding="utf-8")
    cfg = tmp_path / "mini.yaml"
    cfg.write_text(f"warehouse: {tmp_path / 'wh' / 'kg.duckdb'}\nkgs:\n  mini:\n    triples: [kg.tsv]\n"
                   "    lenient: true\n", encoding="utf-8")
    assert main(["run", "--config", str(cfg), "--job", "ingest", "--log-level", "ERROR"]) == 0
    out = capsys.readouterr().out
    # one of three rows rejected, and no labels: both WARN checks fired, and the run says so
    assert "kgprobe: WARN kg_reject_rate (ingest)" in out and "kgprobe: WARN kg_label_coverage (ingest)" in out
    assert "labels of mini: 3 of 3 entities have a readable name" in out  # a, b, c are names, not ids
    doc = json.loads((tmp_path / "wh" / "results.json").read_text(encoding="utf-8"))
    assert {w["check"] for w in doc["warnings"]} == {"kg_reject_rate", "kg_label_coverage"}
    assert doc["report"] is None and doc["headlines"] == []


@pytest.mark.parametrize(("job", "keys", "runs"), [
    # a grounded model's levels are one run; the next model starts another
    ("grounded", ["smollm2|none", "smollm2|RS-0.5", "random|none", "random|RS-0.5"],
     [["smollm2|none", "smollm2|RS-0.5"], ["random|none", "random|RS-0.5"]]),
    # the reference models' levels are one run together
    ("grounded", ["oracle|none", "oracle|RS-0.5", "random|none", "random|RS-0.5", "smollm2|none"],
     [["oracle|none", "oracle|RS-0.5", "random|none", "random|RS-0.5"], ["smollm2|none"]]),
    # every perturbation level in one run
    ("perturb", ["none", "RS-0.5", "ED-1.0"], [["none", "RS-0.5", "ED-1.0"]]),
    # closed book: one run per model with weights, one for the reference models that are next to each other
    ("closed_book", ["smollm2-135m", "oracle", "random", "qwen", "always-no"],
     [["smollm2-135m"], ["oracle", "random"], ["qwen"], ["always-no"]]),
    ("closed_book", ["smollm2-135m", "qwen"], [["smollm2-135m"], ["qwen"]]),
])
def test_the_chain_runs_ranges_of_partitions(job, keys, runs) -> None:
    from pipelines.cli import _ranges

    assert _ranges(job, keys, frozenset({"oracle", "random", "always-no"})) == runs


@pytest.mark.slow
def test_the_chain_records_each_runs_time_and_materializes_every_partition_of_a_range(tmp_path: Path, capsys) -> None:
    from kgprobe import warehouse as wh

    path = tmp_path / "p.yaml"
    path.write_text(f"warehouse: {tmp_path / 'wh' / 'kg.duckdb'}\n"
                    + _config_text(suites="fpq", perturbation="{methods: [RS], levels: [0.5, 1.0]}"), encoding="utf-8")
    assert main(["run", "--config", str(path), "--log-level", "ERROR"]) == 0
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "wh" / "results.json").read_text(encoding="utf-8"))
    runs = doc["runs"]
    assert [(r["job"], r["partitions"]) for r in runs] == [
        ("prepare", []), ("perturb", ["none", "RS-0.5", "RS-1.0"]), ("similarity", []),
        ("closed_book", ["oracle", "random"]),
        ("grounded", ["oracle|none", "oracle|RS-0.5", "oracle|RS-1.0", "random|none", "random|RS-0.5", "random|RS-1.0"]),
        ("publish", [])]
    assert all(r["succeeded"] and r["seconds"] > 0 and len(r["run_id"]) == 36 for r in runs)
    assert list(doc["job_seconds"]) == ["prepare", "perturb", "similarity", "closed_book", "grounded", "publish"]
    assert doc["job_seconds"]["grounded"] == pytest.approx(sum(r["seconds"] for r in runs if r["job"] == "grounded"),
                                                           abs=0.11)
    assert "kgprobe: time per job: prepare " in out and "grounded " in out
    # each partition of a range is written and materialized with its own metadata, and its checks ran on it
    written = wh.partitions(tmp_path / "wh", "fpq_grounded_scores")
    assert {(d["model"], d["perturbation"]) for d in written} == {
        (m, p) for m in ("oracle", "random") for p in ("none", "RS-0.5", "RS-1.0")}
    with dg.DagsterInstance.get() as instance:
        shown = {}
        for model in ("oracle", "random"):  # the closed-book range too: each model's own materialization
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("fpq_scores"), asset_partitions=[model]), limit=1)
            assert records.records[0].asset_materialization.metadata["dagster/row_count"].value == wh.read_partition(
                tmp_path / "wh", "fpq_scores", {"model": model}).num_rows
        for key in ("oracle|RS-0.5", "random|RS-1.0"):
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("fpq_grounded_scores"), asset_partitions=[key]), limit=1)
            meta = records.records[0].asset_materialization.metadata
            assert meta["dagster/row_count"].value == wh.read_partition(
                tmp_path / "wh", "fpq_grounded_scores", dict(zip(("model", "perturbation"), key.split("|")))).num_rows
            shown[key] = meta["scores"].value
        assert shown["oracle|RS-0.5"] != shown["random|RS-1.0"]  # each partition shows its own scores
        grounded = [r for r in instance.get_runs() if r.job_name == "grounded"]
        assert len(grounded) == 1 and all(r.is_success for r in grounded)


def test_a_warning_shows_its_small_mappings_as_details() -> None:
    from types import SimpleNamespace

    from pipelines.cli import _warnings

    ev = SimpleNamespace(passed=False, asset_check_key=SimpleNamespace(name="fpq_edit_coverage"),
                         asset_key=dg.AssetKey("fpq_edits"), severity=dg.AssetCheckSeverity.WARN,
                         metadata={"low_coverage": dg.MetadataValue.json({"NDC": 0.4166, "NNSR": 0.3}),
                                   "coverage": dg.MetadataValue.json({"NSC": 0.9, "NDC": 0.4166, "NNSR": 0.3}),
                                   "examples": dg.MetadataValue.md("| a |\n|---|\n| " + "x" * 200 + " |")})
    (w,) = _warnings(SimpleNamespace(get_asset_check_evaluations=lambda: [ev]), "prepare")
    assert w["check"] == "fpq_edit_coverage" and w["severity"] == "WARN"
    assert w["details"] == {"low_coverage": "NDC 0.417 NNSR 0.3", "coverage": "NSC 0.9 NDC 0.417 NNSR 0.3"}


def test_import_responses_names_jobs_that_exist(tmp_path: Path, capsys) -> None:
    from pipelines.definitions import build_definitions

    # a project of its own: no run has built its items (the module's project may have them by now)
    project = tmp_path / "my-project.yaml"
    project.write_text(f"warehouse: {tmp_path / 'wh' / 'kg.duckdb'}\n" + _config_text(suites="fpq,grapheval"),
                       encoding="utf-8")

    jobs = {j.name for j in build_definitions(str(project)).get_repository_def().get_all_jobs()}
    # no items yet: the message names the job that builds them
    answers = project.parent / "answers.jsonl"
    answers.write_text('{"item_id": "x", "sample_index": 0, "text": "Yes."}\n', encoding="utf-8")
    assert main(["import-responses", str(answers), "--config", str(project), "--model", "oracle",
                 "--suite", "grapheval"]) == 2
    err = capsys.readouterr().err
    named = [w.strip("`(),") for w in err.split() if w.endswith("_questions)") or w.endswith("_questions),")]
    assert named == ["grapheval_questions"] and "grapheval_questions" in jobs, err
    assert {"closed_book", "publish"} <= jobs  # what a successful import tells the user to run


def test_export_of_a_disabled_suite_says_it_is_not_enabled(project: Path, capsys) -> None:
    assert main(["export", "--config", str(project), "--suite", "okgqa", "--format", "jsonl"]) == 2
    err = capsys.readouterr().err
    assert "'okgqa' is not enabled" in err and "enabled: fpq, grapheval" in err and "--job prepare" not in err


@pytest.mark.slow
def test_an_imported_model_scores_the_part_of_a_suite_it_has_answers_for(tmp_path: Path, capsys) -> None:
    from kgprobe import warehouse as wh

    cfg = tmp_path / "elsewhere.yaml"
    cfg.write_text(f"warehouse: {tmp_path / 'wh' / 'kg.duckdb'}\n" + _config_text(suites="grapheval")
                   .replace("models:\n", "models:\n  - {name: elsewhere, backend: imported, n: 1, temperature: 0}\n"),
                   encoding="utf-8")
    assert main(["run", "--config", str(cfg), "--job", "grapheval_questions", "--log-level", "ERROR"]) == 0
    items = wh.read_partition(tmp_path / "wh", "grapheval_items").to_pylist()[:10]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"item_id": it["item_id"], "sample_index": 0, "text": "True."}) + "\n"
                               for it in items), encoding="utf-8")
    assert main(["import-responses", str(answers), "--config", str(cfg), "--model", "elsewhere"]) == 0
    capsys.readouterr()
    # the model is never asked: its partition holds the 10 imported prompts, scored; the rest are left out
    assert main(["run", "--config", str(cfg), "--job", "closed_book", "--partition", "elsewhere",
                 "--log-level", "ERROR"]) == 0
    votes = wh.read_partition(tmp_path / "wh", "grapheval_scores", {"model": "elsewhere"}).to_pylist()
    assert sorted({v["item_id"] for v in votes}) == sorted(it["item_id"] for it in items)
    assert all(v["vote"] == "true" for v in votes)
