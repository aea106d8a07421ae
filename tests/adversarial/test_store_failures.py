"""Failed requests are missing answers, never wrong ones: a partition whose requests failed fails its run with the
error counts (``generation.max_failed_share`` allows a share), failed requests are never scored, and an error says
what happened (a closed port is "connection refused", not the "HTTP 500" litellm attaches to it)."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path

import pytest
import yaml

from kgprobe import warehouse as wh
from kgprobe.generation import Prompt, SamplingParams
from kgprobe.generation.backends import LiteLLMBackend, LiteLLMConfig
from kgprobe.generation.store import ResponseStore

SAMPLE = Path(__file__).resolve().parents[2] / "examples"
KEY_ENV = "KGPROBE_TEST_FAILURES_KEY"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


def test_a_closed_port_is_reported_as_connection_refused_not_http_500(monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    backend = LiteLLMBackend(LiteLLMConfig(model_id="openai/m", api_base=f"http://127.0.0.1:{_closed_port()}/v1",
                                           api_key_env=KEY_ENV, max_retries=0, timeout_s=10))
    [[c]] = backend.generate([Prompt("i", "Is it?", "t")], SamplingParams(n=1, temperature=0))
    assert not c.ok and "connection refused" in c.error.split(": ", 1)[0] and "HTTP" not in c.error.split(": ", 1)[0]


def _flaky(prompt: str, attempt: int) -> str:
    return "500" if hashlib.sha256(prompt.encode()).digest()[0] < 80 else "ok"  # about a third of the prompts


@pytest.mark.slow
def test_failed_requests_fail_the_partition_or_are_left_out_of_the_scores(tmp_path: Path, monkeypatch, fake_server
                                                                          ) -> None:  # fmt: skip
    import dagster as dg

    from pipelines.definitions import build_definitions

    monkeypatch.setenv(KEY_ENV, "sk-test")
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    root = tmp_path / "warehouse"
    with fake_server(lambda prompt, attempt: "ok" if "broken" not in prompt else "500",
                     answer=lambda prompt, model: "Yes.") as ok_server, fake_server(_flaky) as flaky_server, \
            fake_server(lambda prompt, attempt: "500") as broken_server:
        def entry(name: str, server) -> dict:
            # one batch for the whole partition (the default 64 prompts): no "3 failed batches in a row" stop
            return {"name": name, "backend": "litellm", "model_id": "openai/m", "api_base": server.url,
                    "api_key_env": KEY_ENV, "max_retries": 0}

        def project(share: float | None) -> Path:
            body = {"name": "failures", "seed": 0, "warehouse": str(root / "kgprobe.duckdb"), "kgs": cfg["kgs"],
                    "suites": {"fpq": {**cfg["suites"]["fpq"], "n_per_domain": 3, "limit": 2}},
                    "scoring": {"judges": []},
                    "models": [entry("broken", broken_server), entry("flaky", flaky_server), entry("fine", ok_server)]}
            if share is not None:
                body["generation"] = {"max_failed_share": share}
            path = SAMPLE / f".test-{tmp_path.name}-{share}.yaml"
            path.write_text(yaml.safe_dump(body), encoding="utf-8")
            return path

        strict, lenient = project(None), project(0.5)
        try:
            with dg.DagsterInstance.ephemeral() as instance:
                defs = build_definitions(str(strict))
                for job in ("ingest", "fpq_questions"):
                    assert defs.resolve_job_def(job).execute_in_process(instance=instance).success
                runs = {name: defs.resolve_job_def("closed_book").execute_in_process(
                    instance=instance, partition_key=name, raise_on_error=False) for name in ("broken", "fine")}
                flaky_strict = defs.resolve_job_def("closed_book").execute_in_process(
                    instance=instance, partition_key="flaky", raise_on_error=False)
                flaky_lenient = build_definitions(str(lenient)).resolve_job_def("closed_book").execute_in_process(
                    instance=instance, partition_key="flaky", raise_on_error=False)
        finally:
            strict.unlink()
            lenient.unlink()

    # every request failed: the run fails, saying how many and why; nothing is scored
    assert not runs["broken"].success and runs["fine"].success
    message = next(e for e in runs["broken"].all_events if e.is_step_failure).step_failure_data.error.to_string()
    asked = len(ResponseStore(root / "response_store").latest("broken").to_pylist())
    assert f"{asked} of {asked} samples failed" in message and "HTTP 500" in message, message
    assert "generation.max_failed_share" in message
    assert not wh.partition_dir(root, "fpq_scores_metrics", {"model": "broken"}).exists()

    # some failed: failed by default, scored without the failures when a share of failures is allowed
    assert not flaky_strict.success and flaky_lenient.success
    stored = ResponseStore(root / "response_store").latest("flaky").to_pylist()
    failed = {r["prompt_sha256"] for r in stored if r["error"] is not None}
    assert 0 < len(failed) < len({r["prompt_sha256"] for r in stored})
    responses = wh.read_partition(root, "fpq_responses", {"model": "flaky"}).to_pylist()
    samples = wh.read_partition(root, "fpq_scores_samples", {"model": "flaky"}).to_pylist()
    yes_no = {i["item_id"] for i in wh.read_partition(root, "fpq_items").to_pylist() if i["answer_format"] == "yes_no"}
    answered = {r["response_id"] for r in responses if r["error"] is None and r["item_id"] in yes_no}
    failures = {r["response_id"] for r in responses if r["error"] is not None and r["item_id"] in yes_no}
    assert failures and samples and {s["response_id"] for s in samples} == answered  # no failure read as an answer
    assert all(s["error"] is None for s in samples)
    votes = wh.read_partition(root, "fpq_scores", {"model": "flaky"}).to_pylist()
    assert {v["item_id"] for v in votes} == {s["item_id"] for s in samples}  # unanswered items: no vote
