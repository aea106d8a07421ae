"""Planning what a generation costs before it runs, and stopping before a budget is passed."""

from __future__ import annotations

import pytest

from kgprobe.errors import ConfigError
from kgprobe.generation import BudgetExceeded, Prompt, SamplingParams, model_specs, run_generation
from kgprobe.generation.backends.api import LiteLLMBackend
from kgprobe.generation.cost import CHARS_PER_TOKEN, Budget, count_tokens, plan_generation, price_of
from kgprobe.generation.store import ResponseStore


KEY_ENV = "KGPROBE_TEST_COST_KEY"
# one dollar per thousand input tokens, two per thousand output tokens: easy sums
PRICE = {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002}


def _spec(url: str = "http://127.0.0.1:9", **extra):
    entry = {"name": "paid", "backend": "litellm", "model_id": "openai/fake-model", "api_base": url,
             "api_key_env": KEY_ENV, "max_retries": 0, "timeout_s": 5.0, "n": 1, "max_tokens": 10, **PRICE, **extra}
    return model_specs([entry])[0]


def _prompts(k: int) -> list[Prompt]:
    return [Prompt(f"i{i}", f"question number {i} about things", "t") for i in range(k)]


def test_local_models_are_free_and_priced_models_use_their_entry_or_litellm_map() -> None:
    oracle = model_specs([{"name": "o", "backend": "reference", "kind": "oracle"}])[0]
    assert price_of(oracle).cost(1000, 1000) == 0.0
    assert price_of(_spec()).cost(1000, 500) == pytest.approx(2.0)
    import litellm

    known = model_specs([{"name": "m", "backend": "litellm", "model_id": "openai/gpt-4o-mini"}])[0]
    expected = litellm.model_cost["gpt-4o-mini"]["input_cost_per_token"]
    assert price_of(known).input_per_token == pytest.approx(expected) and price_of(known).source == "litellm price map"
    assert price_of(model_specs([{"name": "x", "backend": "litellm", "model_id": "openai/no-such-model"}])[0]) is None


def test_tokens_are_counted_by_a_tokenizer_where_one_is_offline_else_approximated() -> None:
    prompts = [Prompt("a", "Is Paris the capital of France?", "t", system="Answer yes or no.")]
    gpt = model_specs([{"name": "m", "backend": "litellm", "model_id": "openai/gpt-4o-mini"}])[0]
    counts, basis = count_tokens(gpt, prompts)
    assert basis == "litellm tokenizer" and 10 <= counts[0] <= 30
    unknown = model_specs([{"name": "v", "backend": "vllm", "model_id": "/nonexistent/model"}])[0]
    counts, basis = count_tokens(unknown, prompts)
    assert basis.startswith("approximation") and counts == [-(-len("Answer yes or no." + prompts[0].text)
                                                               // int(CHARS_PER_TOKEN))]


def test_the_plan_counts_only_new_work_and_learns_the_output_length(tmp_path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    store = ResponseStore(tmp_path / "store")
    prompts = _prompts(6)
    with fake_server() as server:
        spec = _spec(server.url)
        before = plan_generation(spec, prompts, store=store)
        assert (before.samples, before.stored, before.to_generate) == (6, 0, 6)
        assert before.output_tokens == 6 * 10 and before.output_basis == "max_tokens (10)"
        assert before.cost_usd == pytest.approx(before.input_tokens * 0.001 + 60 * 0.002)
        with LiteLLMBackend(spec.config) as backend:
            run_generation(backend, model=spec.name, prompts=prompts[:4], params=spec.params, store=store)
    after = plan_generation(spec, prompts, store=store)
    assert (after.stored, after.to_generate) == (4, 2)
    # the fake server answers 3 completion tokens: the measured mean replaces max_tokens
    assert after.output_tokens == 2 * 3 and after.output_basis == "measured mean of stored answers"


def test_a_budget_stops_before_it_is_passed_and_a_raised_budget_resumes(tmp_path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    store = ResponseStore(tmp_path / "store")
    prompts = _prompts(12)
    with fake_server() as server:
        spec = _spec(server.url, max_cost_usd=0.1, batch_size=2)
        with LiteLLMBackend(spec.config) as backend:
            with pytest.raises(BudgetExceeded, match=r"max_cost_usd of model 'paid' \(\$0\.1000\).*raise the limit"):
                run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store,
                               batch_size=2, budget=Budget.for_model(spec, store))
        spent = store.spent(spec.name)
        done = len(store.done_keys(spec.name, spec.params.sha256()))
        assert 0 < done < 12 and 0 < spent <= 0.1  # stopped before passing it; what was made is stored
        raised = _spec(server.url, max_cost_usd=10.0)
        with LiteLLMBackend(raised.config) as backend:
            run_generation(backend, model=raised.name, prompts=prompts, params=raised.params, store=store,
                           batch_size=2, budget=Budget.for_model(raised, store))
        asked = [r.prompt for r in server.requests]
    assert len(store.done_keys(spec.name, spec.params.sha256())) == 12
    assert len(asked) == len(set(asked)) == 12  # nothing was sent twice
    # the fake server counts a prompt token per word and 3 completion tokens per answer
    assert store.spent(spec.name) == pytest.approx(sum(len(p.text.split()) * 0.001 + 3 * 0.002 for p in prompts))


def test_a_limit_without_a_price_is_a_config_error(tmp_path) -> None:
    spec = model_specs([{"name": "free?", "backend": "litellm", "model_id": "openai/no-such-model",
                         "max_cost_usd": 1.0}])[0]
    with pytest.raises(ConfigError, match="no price"):
        Budget.for_model(spec, ResponseStore(tmp_path))


def test_a_run_limit_counts_every_model_of_the_run(tmp_path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    store = ResponseStore(tmp_path / "store")
    with fake_server() as server:
        spec = _spec(server.url)
        with LiteLLMBackend(spec.config) as backend:
            run_generation(backend, model=spec.name, prompts=_prompts(3), params=spec.params, store=store, run_id="r1")
            budget = Budget.for_model(spec, store, run_id="r1", max_run_cost_usd=store.spent(run_id="r1") + 1e-6)
            with pytest.raises(BudgetExceeded, match="generation.max_run_cost_usd"):
                run_generation(backend, model=spec.name, prompts=_prompts(5), params=spec.params, store=store,
                               run_id="r1", budget=budget)


def _batch_spec(url: str, **extra):
    return _spec(url, batch=True, batch_poll_s=0.01, **extra)


def test_a_batch_job_answers_a_partition_at_half_the_price(tmp_path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    store = ResponseStore(tmp_path / "store")
    prompts = _prompts(7)
    with fake_server(batch_polls=2) as server:
        spec = _batch_spec(server.url)
        with LiteLLMBackend(spec.config) as backend:
            summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
        assert server.batches_created == 1 and summary.generated == 7 and summary.failed == 0
        assert not any(r.action != "batch" for r in server.requests)  # nothing went through the synchronous API
    rows = store.rows_for(spec.name, prompts, spec.params).to_pylist()
    assert [r["text"] for r in rows] == [f"{p.text} #0 s0" for p in prompts]
    words = sum(len(p.text.split()) for p in prompts)
    assert sum(r["cost"] for r in rows) == pytest.approx((words * 0.001 + 7 * 3 * 0.002) / 2)
    plan = plan_generation(spec, prompts[:1] + _prompts(9)[7:], store=store)
    assert plan.batch_cost_usd == pytest.approx(plan.cost_usd / 2)


def test_a_killed_run_re_attaches_to_its_pending_batch(tmp_path, monkeypatch, fake_server) -> None:
    from kgprobe.errors import KGProbeError

    monkeypatch.setenv(KEY_ENV, "sk-test")
    store = ResponseStore(tmp_path / "store")
    prompts = _prompts(5)
    with fake_server(batch_polls=1000) as server:
        # the first run gives up while the job is still in progress (as a killed run would leave it)
        spec = _batch_spec(server.url, batch_timeout_s=0.05)
        with LiteLLMBackend(spec.config) as backend, pytest.raises(KGProbeError, match="still in_progress"):
            run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store,
                           max_failed_batches=1)
        pending = list((store.root / "batches").rglob("batch-*.json"))
        assert len(pending) == 1 and server.batches_created == 1
        server.batch_polls = 0  # the provider finishes the job
        with LiteLLMBackend(_batch_spec(server.url).config) as backend:
            summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
        assert server.batches_created == 1  # re-attached, not submitted again
    assert summary.generated == 5 and not list((store.root / "batches").rglob("batch-*.json"))


@pytest.mark.slow
def test_a_local_model_is_counted_with_its_own_tokenizer_and_chat_template() -> None:
    spec = model_specs([{"name": "s", "backend": "transformers", "model_id": "smollm2-135m-instruct"}])[0]
    short, long = Prompt("a", "Did Chopin die in Paris?", "t"), Prompt("b", "Did Chopin die in Paris? " * 20, "t")
    counts, basis = count_tokens(spec, [short, long])
    # the chat template adds its own tokens; every repetition of the question adds the same number
    assert basis == "tokenizer" and counts[0] > len(short.text.split()) and counts[1] - counts[0] >= 19 * 6
