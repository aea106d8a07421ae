"""One partition launched the way the README says: `dagster job launch` against a DAGSTER_HOME whose daemon runs it:
the oracle's closed-book answers, judged, scored and checked, in a run the daemon starts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _absolute(cfg: dict, base: Path) -> dict:
    for spec in cfg["kgs"].values():
        for key in ("triples", "entity_labels", "relation_labels", "entity_types", "temporal"):
            if key in spec:
                spec[key] = [str(base / p) for p in spec[key]] if isinstance(spec[key], list) else str(base / spec[key])
    cfg["suites"]["fpq"]["domains"] = str(base / cfg["suites"]["fpq"]["domains"])
    cfg["suites"]["fpq"]["templates"] = str(base / cfg["suites"]["fpq"]["templates"])
    return cfg


@pytest.mark.slow
def test_dagster_job_launch_runs_one_partition_through_the_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "pipelines" / "dagster.yaml", home / "dagster.yaml")
    cfg = _absolute(yaml.safe_load((REPO / "examples" / "sample.yaml").read_text(encoding="utf-8")), REPO / "examples")
    cfg["warehouse"] = str(tmp_path / "warehouse" / "kgprobe.duckdb")
    cfg["models"] = [m for m in cfg["models"] if m["backend"] == "reference"]
    cfg["scoring"]["judges"] = [{"model": "oracle"}]
    cfg["suites"] = {"fpq": {**cfg["suites"]["fpq"], "n_per_domain": 5}}  # the daemon route, not every suite
    cfg["queries"]["sample"]["per_type"] = 1
    config = tmp_path / "project.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    env = {**os.environ, "DAGSTER_HOME": str(home), "KGPROBE_CONFIG": str(config)}

    # the unpartitioned assets first, in-process, recorded in the same instance
    from pipelines.definitions import build_definitions

    monkeypatch.setenv("DAGSTER_HOME", str(home))  # dagster.yaml reads its storage folder from it
    with dg.DagsterInstance.get() as instance:
        assert build_definitions(str(config)).resolve_job_def("prepare").execute_in_process(instance=instance).success

    daemon = subprocess.Popen([str(BIN / "dagster-daemon"), "run"], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        launched = subprocess.run(
            [str(BIN / "dagster"), "job", "launch", "-j", "closed_book",
             "--tags", json.dumps({"dagster/partition": "oracle"})],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=180,
        )
        assert launched.returncode == 0, launched.stderr[-2000:]
        status = None
        with dg.DagsterInstance.get() as instance:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                runs = [r for r in instance.get_runs() if r.job_name == "closed_book"]
                if runs and runs[0].status in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED):
                    status = runs[0].status
                    assert runs[0].tags.get("dagster/partition") == "oracle"
                    break
                time.sleep(2)
        assert status == dg.DagsterRunStatus.SUCCESS
    finally:
        os.killpg(daemon.pid, 15)
        daemon.wait(timeout=30)
    from kgprobe.warehouse import read_partition

    rows = read_partition(tmp_path / "warehouse", "fpq_responses", {"model": "oracle"}).to_pylist()
    assert rows and all(r["error"] is None and r["model"] == "oracle" for r in rows)
    metrics = read_partition(tmp_path / "warehouse", "fpq_scores_metrics", {"model": "oracle"}).to_pylist()
    overall = {(m["task"], m["metric"]): m["value"] for m in metrics if not m["breakdown"]}
    assert overall[("discriminative", "accuracy")] == overall[("generative", "accuracy")] == 1.0
    with dg.DagsterInstance.get() as instance:
        [run] = [r for r in instance.get_runs() if r.job_name == "closed_book"]
        checks = {e.asset_check_key.name: e.passed for e in (
            r.event_log_entry.dagster_event.event_specific_data for r in instance.get_records_for_run(
                run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records)}
    assert checks["fpq_scores_oracle_is_perfect"] and checks["fpq_scores_expectations"] and checks["fpq_responses_expectations"]
