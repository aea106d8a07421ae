"""Anthropic's Message Batches API: a partition as one job at half the price, re-attached after a kill, with the
requests the provider could not answer stored as errors and asked again."""

from __future__ import annotations

import json

import pytest

from kgprobe.errors import KGProbeError
from kgprobe.generation import Prompt, SamplingParams, model_specs, run_generation
from kgprobe.generation.backends.api import LiteLLMBackend
from kgprobe.generation.backends.batch import AnthropicBatchClient
from kgprobe.generation.cost import plan_generation, price_of, price_of_config
from kgprobe.generation.store import ResponseStore

KEY_ENV = "KGPROBE_TEST_ANTHROPIC_KEY"
PRICE = {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002}


def _spec(url: str, **extra):
    entry = {"name": "claude", "backend": "litellm", "model_id": "anthropic/claude-fake", "api_base": url,
             "api_key_env": KEY_ENV, "max_retries": 0, "timeout_s": 5.0, "n": 1, "max_tokens": 10, "temperature": 0.0, "batch": True,
             "batch_poll_s": 0.01, **PRICE, **extra}
    return model_specs([entry])[0]


def _prompts(k: int, system: str | None = "Answer briefly.") -> list[Prompt]:
    return [Prompt(f"i{i}", f"question number {i} about things", "t", system=system) for i in range(k)]


def test_a_partition_is_one_message_batch_at_half_the_price(tmp_path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-ant-test")
    store = ResponseStore(tmp_path / "store")
    prompts = _prompts(6)
    with fake_server(batch_polls=2) as server:
        spec = _spec(server.url)
        with LiteLLMBackend(spec.config) as backend:
            summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
        assert server.batches_created == 1 and summary.generated == 6 and summary.failed == 0
        assert all(r.action == "batch" for r in server.requests)  # nothing went through the synchronous API
        (batch,) = server.anthropic_batches.values()
        headers = server.anthropic_headers[0]
        assert headers["x-api-key"] == "sk-ant-test" and headers["anthropic-version"] == "2023-06-01"
    params = batch["requests"][0]["params"]
    # the Messages API takes the system instruction beside the messages, and the model without litellm's prefix
    assert params["model"] == "claude-fake" and params["system"] == "Answer briefly."
    assert params["messages"] == [{"role": "user", "content": prompts[0].text}] and params["max_tokens"] == 10
    assert "top_p" not in params and "seed" not in params
    for r in batch["requests"]:
        assert len(r["custom_id"]) <= 64 and set(r["custom_id"]) <= set("0123456789abcdef-")
    rows = store.rows_for(spec.name, prompts, spec.params).to_pylist()
    assert [r["text"] for r in rows] == [f"{p.text} #0 t0.0" for p in prompts]
    assert [r["finish_reason"] for r in rows] == ["end_turn"] * 6
    words = sum(len(p.text.split()) for p in prompts)
    assert sum(r["tokens_in"] for r in rows) == words and sum(r["tokens_out"] for r in rows) == 18
    assert sum(r["cost"] for r in rows) == pytest.approx((words * 0.001 + 6 * 3 * 0.002) / 2)
    plan = plan_generation(spec, _prompts(2), store=store)
    assert plan.batch_cost_usd == pytest.approx(plan.cost_usd / 2)


def test_a_killed_run_re_attaches_to_its_pending_message_batch(tmp_path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-ant-test")
    store = ResponseStore(tmp_path / "store")
    prompts = _prompts(4)
    with fake_server(batch_polls=1000) as server:
        spec = _spec(server.url, batch_timeout_s=0.05)
        with LiteLLMBackend(spec.config) as backend, pytest.raises(KGProbeError, match="still in_progress"):
            run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store,
                           max_failed_batches=1)
        (pending,) = list((store.root / "batches").rglob("batch-*.json"))
        assert json.loads(pending.read_text())["batch_id"] == "msgbatch_0001" and server.batches_created == 1
        server.batch_polls = 0  # the provider finishes the job
        with LiteLLMBackend(_spec(server.url).config) as backend:
            summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
        assert server.batches_created == 1  # re-attached, not submitted again
    assert summary.generated == 4 and summary.failed == 0
    assert not list((store.root / "batches").rglob("batch-*.json"))


def test_a_batch_the_provider_no_longer_knows_is_submitted_again(tmp_path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-ant-test")
    store = ResponseStore(tmp_path / "store")
    prompts = _prompts(2)
    with fake_server(batch_polls=1000) as server:
        spec = _spec(server.url, batch_timeout_s=0.05)
        with LiteLLMBackend(spec.config) as backend, pytest.raises(KGProbeError, match="still in_progress"):
            run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store,
                           max_failed_batches=1)
        server.anthropic_batches.clear()  # deleted on the provider's side
        server.batch_polls = 0
        with LiteLLMBackend(_spec(server.url).config) as backend:
            summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
        assert server.batches_created == 2 and summary.generated == 2


def test_errored_expired_and_canceled_requests_are_stored_as_errors_and_asked_again(tmp_path, monkeypatch,
                                                                                     fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-ant-test")
    store = ResponseStore(tmp_path / "store")
    prompts = _prompts(5)
    first = {prompts[1].text: "overloaded", prompts[2].text: "expired", prompts[3].text: "canceled"}
    plan = lambda text, attempt: first.get(text, "ok") if attempt == 0 else "ok"
    with fake_server(plan, batch_polls=0) as server:
        spec = _spec(server.url)
        with LiteLLMBackend(spec.config) as backend:
            summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
        assert summary.generated == 2 and summary.failed == 3
        rows = store.rows_for(spec.name, prompts, spec.params).to_pylist()
        assert [r["text"] is None for r in rows] == [False, True, True, True, False]
        assert "errored" in rows[1]["error"] and "fake failure (overloaded)" in rows[1]["error"]
        assert "expired" in rows[2]["error"] and "canceled" in rows[3]["error"]
        assert rows[1]["cost"] is None
        with LiteLLMBackend(spec.config) as backend:
            again = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
        # the second job holds only the three failures
        assert server.batches_created == 2 and again.generated == 3 and again.failed == 0
        assert len(server.anthropic_batches["msgbatch_0002"]["requests"]) == 3
    assert all(r["text"] for r in store.rows_for(spec.name, prompts, spec.params).to_pylist())


@pytest.mark.parametrize(("temperature", "top_p", "requests_per_prompt", "sent"), [
    (0.0, 0.9, 1, {"temperature": 0.0}), (0.7, 0.9, 3, {"temperature": 0.7}), (1.0, 0.9, 3, {"top_p": 0.9}),
    (1.0, 1.0, 3, {"temperature": 1.0}),
])
def test_samples_are_one_request_each_unless_greedy(tmp_path, temperature, top_p, requests_per_prompt, sent) -> None:
    client = AnthropicBatchClient(model_id="anthropic/claude-fake", api_base="http://127.0.0.1:9/v1", api_key=None,
                                  state_dir=tmp_path)
    try:
        lines = client.requests(_prompts(2, system=None), SamplingParams(n=3, temperature=temperature, top_p=top_p))
    finally:
        client.close()
    assert len(lines) == 2 * requests_per_prompt and len({line["custom_id"] for line in lines}) == len(lines)
    assert all("system" not in line["params"] for line in lines)
    # recent Claude models refuse temperature and top_p together: one of them is sent
    assert all({k: v for k, v in line["params"].items() if k in ("temperature", "top_p")} == sent for line in lines)


def test_sampled_answers_fill_every_sample_and_greedy_ones_repeat(tmp_path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-ant-test")
    store = ResponseStore(tmp_path / "store")
    prompts = _prompts(2)
    with fake_server(batch_polls=0) as server:
        spec = _spec(server.url, n=3, temperature=0.7)
        with LiteLLMBackend(spec.config) as backend:
            summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
        assert summary.generated == 6 and len(server.requests) == 6
    rows = store.rows_for(spec.name, prompts, spec.params).to_pylist()
    assert [r["sample_index"] for r in rows] == [0, 1, 2, 0, 1, 2] and all(r["text"] for r in rows)


def test_anthropic_models_without_a_listed_batch_price_get_half_price(monkeypatch) -> None:
    from kgprobe.generation.litellm_import import import_litellm

    litellm = import_litellm()
    monkeypatch.setitem(litellm.model_cost, "claude-kgprobe-test", {
        "litellm_provider": "anthropic", "input_cost_per_token": 4e-6, "output_cost_per_token": 2e-5})
    monkeypatch.setitem(litellm.model_cost, "other-kgprobe-test", {
        "litellm_provider": "somewhere", "input_cost_per_token": 4e-6, "output_cost_per_token": 2e-5})
    spec = model_specs([{"name": "c", "backend": "litellm", "model_id": "anthropic/claude-kgprobe-test"}])[0]
    price = price_of(spec)
    assert price.batch_input_per_token == pytest.approx(2e-6) and price.batch_output_per_token == pytest.approx(1e-5)
    other = model_specs([{"name": "o", "backend": "litellm", "model_id": "somewhere/other-kgprobe-test"}])[0]
    assert price_of_config("litellm", other.config).batch_input_per_token is None
