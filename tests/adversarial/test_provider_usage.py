"""A provider's usage is not trusted: token counts and costs are clamped before they are stored or counted against
a budget (never negative, NaN or infinite; absurd values bounded), and a reply is accounted for as billed: every
choice it returns is paid for, also those beyond the ``n`` that are kept."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kgprobe.generation import BudgetExceeded, Completion, Prompt, SamplingParams, model_specs, run_generation
from kgprobe.generation.backends import LiteLLMBackend
from kgprobe.generation.cost import MAX_REQUEST_COST_USD, MAX_USAGE_TOKENS, Budget, billed_usage
from kgprobe.generation.store import ResponseStore

KEY_ENV = "KGPROBE_TEST_USAGE_KEY"
PRICE_IN, PRICE_OUT = 0.001, 0.002  # dollars per token: $1,000 and $2,000 a million


def _spec(url: str, **extra):
    return model_specs([{"name": "paid", "backend": "litellm", "model_id": "openai/m", "api_base": url,
                         "api_key_env": KEY_ENV, "max_retries": 0, "n": 1, "max_tokens": 10,
                         "input_cost_per_token": PRICE_IN, "output_cost_per_token": PRICE_OUT, **extra}])[0]


def _prompts(k: int, tag: str = "") -> list[Prompt]:
    return [Prompt(f"i{i}", f"question number {i} about things {tag}".strip(), "t") for i in range(k)]


def _server(fake_server, *, usage=None, choices: int | None = None):
    """The fake server, with the usage of every reply replaced (``usage(prompt)``) and/or ``choices`` choices in
    every reply whatever ``n`` asked for (its usage counts them all: 3 completion tokens each)."""

    class Lying(fake_server):
        def _completion(self, body, prompt, n):
            reply = super()._completion(body, prompt, choices or n)
            if usage is not None:
                reply["usage"] = usage(prompt)
            return reply

    return Lying


def _generate(spec, prompts, store, budget=None):
    with LiteLLMBackend(spec.config) as backend:
        return run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store,
                              batch_size=2, budget=budget)


def test_more_choices_than_asked_are_all_accounted_for(tmp_path: Path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    store = ResponseStore(tmp_path)
    prompts = _prompts(4)
    with _server(fake_server, choices=10)() as server:
        spec = _spec(server.url, n=3, n_mode="choices")
        _generate(spec, prompts, store)
        assert {r.n for r in server.requests} == {3} and len(server.requests) == 4  # asked for 3, got 10
    rows = store.latest("paid").to_pylist()
    assert len(rows) == 12 and all(r["error"] is None for r in rows)
    # the bill of a reply: its prompt tokens and 10 x 3 completion tokens; the 3 samples kept carry all of it
    bills = [len(p.text.split()) * PRICE_IN + 30 * PRICE_OUT for p in prompts]
    assert store.spent("paid") == pytest.approx(sum(bills))
    for p, bill in zip(prompts, bills):
        mine = [r for r in rows if r["prompt"] == p.text]
        assert sum(r["cost"] for r in mine) == pytest.approx(bill) and sum(r["tokens_out"] for r in mine) == 30


BAD_USAGE = {
    "negative": {"prompt_tokens": -1_000_000, "completion_tokens": -1_000_000},
    "absurd": {"prompt_tokens": 10**18, "completion_tokens": 10**18},
    # litellm refuses these replies itself (a failed request, asked again next run); billed_usage clamps them anyway
    "nan": {"prompt_tokens": float("nan"), "completion_tokens": 3},
    "infinite": {"prompt_tokens": 5, "completion_tokens": float("inf")},
    "text": {"prompt_tokens": "many", "completion_tokens": None},
}


def _sane(tokens_in, tokens_out, cost) -> bool:
    return (all(t is None or 0 <= t <= MAX_USAGE_TOKENS for t in (tokens_in, tokens_out))
            and (cost is None or (math.isfinite(cost) and 0 <= cost <= MAX_REQUEST_COST_USD)))


@pytest.mark.parametrize("name", ["negative", "absurd"])
def test_false_usage_is_clamped_before_it_is_recorded(tmp_path: Path, monkeypatch, fake_server, name: str) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    store = ResponseStore(tmp_path)
    with _server(fake_server, usage=lambda prompt: dict(BAD_USAGE[name]))() as server:
        _generate(_spec(server.url), _prompts(2), store)
    rows = store.latest("paid").to_pylist()
    assert len(rows) == 2 and all(r["error"] is None and _sane(r["tokens_in"], r["tokens_out"], r["cost"])
                                  for r in rows), rows
    assert 0 <= store.spent("paid") <= 2 * MAX_REQUEST_COST_USD


@pytest.mark.parametrize("name", sorted(BAD_USAGE))
def test_billed_usage_is_never_negative_nan_or_unbounded(name: str) -> None:
    spec = _spec("http://127.0.0.1:9")
    reply = {"choices": [{"message": {"content": "Yes."}}], "usage": dict(BAD_USAGE[name])}
    tokens_in, tokens_out, cost = billed_usage(reply, spec.config)
    assert _sane(tokens_in, tokens_out, cost), (tokens_in, tokens_out, cost)
    assert name != "negative" or (tokens_in, tokens_out, cost) == (0, 0, 0.0)
    assert name != "absurd" or (tokens_in, tokens_out, cost) == (MAX_USAGE_TOKENS, MAX_USAGE_TOKENS,
                                                                 MAX_REQUEST_COST_USD)


def test_a_negative_usage_does_not_open_the_budget(tmp_path: Path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    store = ResponseStore(tmp_path)
    with _server(fake_server, usage=lambda prompt: dict(BAD_USAGE["negative"]))() as liar:
        _generate(_spec(liar.url), _prompts(1, "first"), store)  # a reply that claims -$3,000
    assert store.spent("paid") == 0.0
    # then an honest server (each request: ~5 prompt tokens and 3 out, $0.011) under a $0.10 cap
    with fake_server() as server:
        spec = _spec(server.url, max_cost_usd=0.1)
        with pytest.raises(BudgetExceeded):
            _generate(spec, _prompts(40), store, Budget.for_model(spec, store))
        billed = sum(len(r.prompt.split()) * PRICE_IN + 3 * PRICE_OUT for r in server.requests)
    assert 0 < billed <= 0.1 and store.spent("paid") == pytest.approx(billed)


class Liar:
    """A backend (not litellm) that reports impossible numbers: the runner clamps what any backend reports."""

    name = "liar"

    def generate(self, prompts, params):
        values = [(-5.0, -7, -9), (float("nan"), 3, 2), (float("inf"), 2**62, 1), (2.5, 1, 1)]
        return [[Completion(text="Yes.", finish_reason="stop", tokens_in=t_in, tokens_out=t_out, latency_s=0.0,
                            cost=cost)] * params.n for p, (cost, t_in, t_out) in zip(prompts, values)]

    def close(self) -> None:
        pass


def test_any_backend_s_usage_is_clamped_and_old_rows_cannot_unlock_a_budget(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path)
    prompts = [Prompt(f"i{i}", f"q{i}", "t") for i in range(4)]
    summary = run_generation(Liar(), model="m", prompts=prompts, params=SamplingParams(n=1), store=store)
    got = {r["prompt"]: (r["cost"], r["tokens_in"], r["tokens_out"]) for r in store.latest("m").to_pylist()}
    assert got == {"q0": (0.0, 0, 0), "q1": (None, 3, 2), "q2": (MAX_REQUEST_COST_USD, MAX_USAGE_TOKENS, 1),
                   "q3": (2.5, 1, 1)}
    assert summary.cost == pytest.approx(MAX_REQUEST_COST_USD + 2.5)
    # a row an older version stored with a negative cost counts 0 in what was spent
    row = {**store.latest("m").to_pylist()[0], "prompt_sha256": "0" * 64, "cost": -3000.0}
    store.write_shard("m", [row])
    assert store.spent("m") == pytest.approx(MAX_REQUEST_COST_USD + 2.5)
