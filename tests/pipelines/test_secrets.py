"""An API key in the environment never reaches a log, metadata, a Parquet file, the DuckDB warehouse or the report."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml

from pipelines.definitions import build_definitions

SAMPLE = Path(__file__).resolve().parents[2] / "examples"
KEY_ENV, KEY = "KGPROBE_TEST_SECRET_KEY", "sk-kgprobe-secret-0123456789abcdef"


# a job run against the fake provider, shared by both tests
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, fake_server):
    tmp = tmp_path_factory.mktemp("secrets")
    mp = pytest.MonkeyPatch()
    mp.setenv(KEY_ENV, KEY)
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    # one prompt in five is refused with an authentication error: error texts are stored too
    with fake_server(lambda prompt, attempt: "401" if sum(map(ord, prompt)) % 5 == 0 else "ok") as server:
        project = {"name": "secrets", "seed": 0, "warehouse": str(tmp / "warehouse" / "kgprobe.duckdb"),
                   "kgs": cfg["kgs"], "suites": {"fpq": {**cfg["suites"]["fpq"], "n_per_domain": 3, "limit": 2}},
                   "scoring": {"judges": [{"model": "paid", "max_tokens": 8}]},
                   "models": [{"name": "paid", "backend": "litellm", "model_id": "openai/fake-model",
                               "api_base": server.url, "api_key_env": KEY_ENV, "max_retries": 0,
                               "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}]}
        path = SAMPLE / f".test-{tmp.name}.yaml"
        path.write_text(yaml.safe_dump(project), encoding="utf-8")
        logs: list[str] = []
        try:
            defs = build_definitions(str(path))
            home = tmp / "dagster_home"
            home.mkdir()
            with dg.instance_for_test(temp_dir=str(home)) as instance:
                for job, key in (("ingest", None), ("fpq_questions", None), ("closed_book", "paid"), ("publish", None)):
                    result = defs.resolve_job_def(job).execute_in_process(instance=instance, partition_key=key,
                                                                          raise_on_error=False)
                    logs += [str(e) for e in result.all_events]
                    logs += [str(r.dagster_event) + (r.user_message or "") for r in
                             instance.all_logs(result.run_id)]
            yield tmp, logs, server
        finally:
            path.unlink()
            mp.undo()


def test_the_key_was_used(run) -> None:
    _, _, server = run
    assert server.requests and all(r.authorization == f"Bearer {KEY}" for r in server.requests)
    assert any(r.action == "401" for r in server.requests)


def test_no_trace_of_the_key_anywhere(run) -> None:
    tmp, logs, _ = run
    assert logs and not [line for line in logs if KEY in line]
    files = [p for p in tmp.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files) and any(p.suffix == ".duckdb" for p in files)
    assert any(p.name == "report.html" for p in files)
    leaked = [str(p) for p in files if KEY.encode() in p.read_bytes()]
    assert leaked == []
