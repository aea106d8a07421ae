"""Faults a weekly run meets: a model whose every request fails ends its partition failed, with the errors stored and
a message that says what to do, and the other models' partitions are unaffected."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml

from kgprobe.generation.store import ResponseStore
from pipelines.definitions import build_definitions

SAMPLE = Path(__file__).resolve().parents[2] / "examples"
KEY_ENV = "KGPROBE_TEST_FAULT_KEY"


@pytest.mark.slow
def test_a_backend_that_fails_every_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    with fake_server(lambda prompt, attempt: "500") as server:
        project = {"name": "faults", "seed": 0, "warehouse": str(tmp_path / "warehouse" / "kgprobe.duckdb"),
                   "kgs": cfg["kgs"], "suites": {"fpq": {**cfg["suites"]["fpq"], "n_per_domain": 3, "limit": 2}},
                   "scoring": {"judges": [{"model": "oracle"}]}, "generation": {"shard_size": 4},
                   "models": [{"name": "broken", "backend": "litellm", "model_id": "openai/fake-model",
                               "api_base": server.url, "api_key_env": KEY_ENV, "max_retries": 0, "batch_size": 2},
                              {"name": "oracle", "backend": "reference", "kind": "oracle"}]}
        path = SAMPLE / f".test-{tmp_path.name}.yaml"
        path.write_text(yaml.safe_dump(project), encoding="utf-8")
        try:
            defs = build_definitions(str(path))
            with dg.DagsterInstance.ephemeral() as instance:
                for job in ("ingest", "fpq_questions"):
                    assert defs.resolve_job_def(job).execute_in_process(instance=instance).success
                job = defs.resolve_job_def("closed_book")
                broken = job.execute_in_process(instance=instance, partition_key="broken", raise_on_error=False)
                fine = job.execute_in_process(instance=instance, partition_key="oracle", raise_on_error=False)
        finally:
            path.unlink()
    assert not broken.success and fine.success
    failure = next(e for e in broken.all_events if e.is_step_failure)
    message = failure.step_failure_data.error.to_string()  # the cause under Dagster's wrapper
    assert "every request of the last 3 batches failed" in message and "fix the backend and run again" in message
    # three batches of two prompts, three samples each: every failure is stored (and retried by the next run)
    stored = ResponseStore(tmp_path / "warehouse" / "response_store").latest("broken").to_pylist()
    assert len(stored) == 3 * 2 * 3 and all(r["text"] is None and "500" in r["error"] for r in stored)
    assert len(server.requests) == 3 * 2  # one request of n=3 per prompt; it stopped after three failed batches
