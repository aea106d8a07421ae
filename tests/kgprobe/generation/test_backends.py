"""Reference responders, and the litellm backend against a local OpenAI-compatible server that misbehaves."""

from __future__ import annotations

import json

from collections import Counter

import pyarrow.compute as pc
import pytest

from kgprobe.generation import BackendError, Prompt, SamplingParams, run_generation
from kgprobe.generation.backends import (
    ANSWER_TEXTS,
    LiteLLMBackend,
    LiteLLMConfig,
    ReferenceBackend,
)
from kgprobe.generation.backends.api import retry_after_seconds
from kgprobe.generation.store import ResponseStore

KEY_ENV, KEY = "KGPROBE_TEST_FAKE_API_KEY", "sk-test-not-a-real-key-1234"


# -- reference -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind, answer_kind, gold, expected", [
    ("oracle", "yn", "yes", "Yes."),
    ("oracle", "yn", "No", "No."),
    ("oracle", "wh", "valid premise", "The question's premise is true."),
    ("oracle", "wh", "false premise", "The question's premise is false."),
    ("oracle", "tf", "true", "True."),
    ("oracle", "tf", "False.", "False."),
    ("oracle", "tf", "I don't know", "I don't know."),
    ("oracle", None, "Giuseppe Verdi", "Giuseppe Verdi"),
    ("always-yes", "yn", "no", "Yes."),
    ("always-yes", "wh", "false premise", "The question's premise is true."),
    ("always-yes", "tf", "false", "True."),
    ("always-no", "yn", "yes", "No."),
    ("always-no", "wh", "valid premise", "The question's premise is false."),
    ("always-no", None, None, "No."),
])
def test_reference_answers(kind, answer_kind, gold, expected):
    out = ReferenceBackend(kind).generate([Prompt("i", "q?", "t", gold=gold, answer_kind=answer_kind)], SamplingParams(n=2))
    assert [c.text for c in out[0]] == [expected, expected]
    assert all(c.ok and c.finish_reason == "stop" for c in out[0])


@pytest.mark.parametrize("gold, answer_kind, error", [
    (None, "yn", "oracle: item i has no gold answer"),
    ("maybe", "yn", "oracle: gold 'maybe' of item i is not a yn label"),
])
def test_the_oracle_fails_rather_than_guesses(gold, answer_kind, error):
    [[c]] = ReferenceBackend("oracle").generate([Prompt("i", "q?", "t", gold=gold, answer_kind=answer_kind)], SamplingParams(n=1))
    assert c.text is None and c.error.startswith(error)


def test_random_is_deterministic_and_roughly_uniform():
    items = [Prompt(str(i), f"question {i}", "t", answer_kind="tf") for i in range(300)]
    backend = ReferenceBackend("random")
    first = backend.generate(items, SamplingParams(n=3, seed=1))
    again = backend.generate(list(reversed(items)), SamplingParams(n=3, seed=1))[::-1]  # order does not matter
    assert [[c.text for c in cs] for cs in first] == [[c.text for c in cs] for cs in again]
    other = backend.generate(items, SamplingParams(n=3, seed=2))
    assert [[c.text for c in cs] for cs in first] != [[c.text for c in cs] for cs in other]
    counts = Counter(c.text for cs in first for c in cs)
    assert set(counts) == set(ANSWER_TEXTS["tf"].values())
    assert all(240 <= v <= 360 for v in counts.values()), counts  # 900 draws, three options
    assert len({tuple(c.text for c in cs) for cs in first}) > 1


# -- litellm ---------------------------------------------------------------------------------------------------------

# prompt i % 5: 0 answers at once, 1 is rate limited once (Retry-After: 1), 2 gets two 500s, 3 hangs past the client
# timeout once, 4 gets a 503 and then a 429
PLAN = {0: ["ok"], 1: ["429", "ok"], 2: ["500", "500", "ok"], 3: ["timeout", "ok"], 4: ["503", "429", "ok"]}
EXPECTED_ATTEMPTS = {0: 1, 1: 2, 2: 3, 3: 2, 4: 3}


def scheduled(prompt: str, attempt: int) -> str:
    if prompt.startswith("broken"):
        return "500"
    seq = PLAN[int(prompt.split()[-1]) % 5]
    return seq[min(attempt, len(seq) - 1)]


def api_config(url: str, **kwargs) -> LiteLLMConfig:
    options = {"api_base": url, "api_key_env": KEY_ENV, "max_concurrency": 4, "timeout_s": 1.5, "max_retries": 3,
               "backoff_base_s": 0.05, "backoff_max_s": 0.2, **kwargs}
    return LiteLLMConfig("openai/fake-model", **options)


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


@pytest.mark.slow
def test_litellm_retries_every_scheduled_failure_and_loses_nothing(tmp_path, api_key, fake_server):
    items = [Prompt(f"item{i}", f"question number {i}", "t") for i in range(20)] + [Prompt("bad", "broken question", "t")]
    params = SamplingParams(n=2, max_tokens=16, seed=5)
    store = ResponseStore(tmp_path)
    with fake_server(scheduled, delay_s=0.1) as server:
        with LiteLLMBackend(api_config(server.url)) as backend:
            summary = run_generation(backend, model="fake", prompts=items, params=params, store=store, run_id="r1")
        seen = server.by_prompt()
        # exact request counts: no retry is lost, none is doubled (neither litellm nor the OpenAI client retry underneath)
        for i in range(20):
            assert [r.attempt for r in seen[f"question number {i}"]] == list(range(EXPECTED_ATTEMPTS[i % 5])), i
        assert len(seen["broken question"]) == 4  # 1 + max_retries, then stored as a failure
        # Retry-After: 1 was honoured
        for i in range(1, 20, 5):
            first, second = seen[f"question number {i}"]
            assert second.at - first.at >= 0.95
        assert 2 <= server.max_in_flight <= 4
        assert {r.authorization for rs in seen.values() for r in rs} == {f"Bearer {api_key}"}
        assert {r.n for rs in seen.values() for r in rs} == {2}  # one request with two choices

    assert (summary.generated, summary.failed) == (40, 2)
    assert summary.retries == 2 * sum(EXPECTED_ATTEMPTS[i % 5] - 1 for i in range(20)) + 2 * 3
    table = store.rows_for("fake", items, params)
    rows = {(r["item_id"], r["sample_index"]): r for r in table.to_pylist()}
    for i in range(20):
        for s in range(2):
            r = rows[(f"item{i}", s)]
            assert r["text"] == f"question number {i} #{s} s5"
            assert r["finish_reason"] == ("stop" if s == 0 else "length")
            assert (r["tokens_in"], r["tokens_out"], r["retries"], r["cost"]) == (3, 3, EXPECTED_ATTEMPTS[i % 5] - 1, None)
    broken = rows[("bad", 0)]
    assert broken["text"] is None and "InternalServerError (HTTP 500)" in broken["error"] and broken["retries"] == 3
    # the key is never stored
    assert not any(api_key in str(v) for r in table.to_pylist() for v in r.values())

    # the next run (the server has recovered) asks only for the failed prompt, and then every item has its answer
    with fake_server(delay_s=0.0) as server:
        with LiteLLMBackend(api_config(server.url)) as backend:
            again = run_generation(backend, model="fake", prompts=items, params=params, store=store, run_id="r2")
        assert list(server.by_prompt()) == ["broken question"]
    assert (again.reused, again.generated, again.failed) == (40, 2, 0)
    table = store.rows_for("fake", items, params)
    assert table.num_rows == 42 and pc.sum(pc.is_null(table.column("text"))).as_py() == 0


@pytest.mark.slow
@pytest.mark.parametrize("supports_n, n_mode, expected_requests", [
    (False, "auto", [(3, 5), (1, 6), (1, 7)]),  # asked for 3 choices, got 1: topped up with two single requests
    (True, "calls", [(1, 5), (1, 6), (1, 7)]),  # one request per sample, each with its own seed
])
def test_litellm_n_samples_without_server_support(api_key, supports_n, n_mode, expected_requests, fake_server):
    params = SamplingParams(n=3, max_tokens=8, seed=5)
    with fake_server(supports_n=supports_n) as server:
        with LiteLLMBackend(api_config(server.url, n_mode=n_mode)) as backend:
            [samples] = backend.generate([Prompt("i", "one question", "t")], params)
        requests = sorted(server.by_prompt()["one question"], key=lambda r: r.seed)
    assert [(r.n, r.seed) for r in requests] == expected_requests
    assert [c.text for c in samples] == ["one question #0 s5", "one question #0 s6", "one question #0 s7"]
    assert [c.tokens_out for c in samples] == [3, 3, 3]


@pytest.mark.slow
def test_litellm_does_not_retry_client_errors_and_costs_known_models(api_key, fake_server):
    params = SamplingParams(n=2, max_tokens=8)
    with fake_server(lambda prompt, attempt: "401" if "denied" in prompt else "ok") as server:
        config = api_config(server.url)
        known = LiteLLMBackend(LiteLLMConfig("openai/gpt-4o-mini", **{k: getattr(config, k) for k in (
            "api_base", "api_key_env", "timeout_s", "max_retries", "backoff_base_s")}))
        with known:
            [denied, fine] = known.generate([Prompt("a", "access denied here", "t"), Prompt("b", "fine prompt", "t")], params)
        assert len(server.by_prompt()["access denied here"]) == 1
    assert all(not c.ok and c.retries == 0 and "HTTP 401" in c.error for c in denied)
    assert api_key not in denied[0].error
    import litellm

    price = litellm.model_cost["gpt-4o-mini"]
    total = 2 * price["input_cost_per_token"] + 6 * price["output_cost_per_token"]  # 2 prompt words, 3 tokens x 2 choices
    assert [c.cost for c in fine] == pytest.approx([total / 2, total / 2])


def test_litellm_needs_its_key_variable(monkeypatch):
    monkeypatch.delenv("KGPROBE_TEST_UNSET_KEY", raising=False)
    backend = LiteLLMBackend(LiteLLMConfig("openai/gpt-4o-mini", api_key_env="KGPROBE_TEST_UNSET_KEY"))
    with pytest.raises(BackendError, match="environment variable KGPROBE_TEST_UNSET_KEY is not set"):
        backend.generate([Prompt("a", "q", "t")], SamplingParams(n=1))


class _Headers(dict):
    def get(self, key, default=None):
        return super().get(key.lower(), default)


class _Error(Exception):
    def __init__(self, headers):
        super().__init__("rate limited")
        self.litellm_response_headers = _Headers(headers)


@pytest.mark.parametrize("headers, expected", [
    ({"retry-after": "3"}, 3.0),
    ({"retry-after": "0.25"}, 0.25),
    ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
    ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past: no wait
    ({}, None),
])
def test_retry_after_header(headers, expected):
    assert retry_after_seconds(_Error(headers)) == expected


def test_backoff_grows_and_honours_retry_after():
    backend = LiteLLMBackend(LiteLLMConfig("openai/x", backoff_base_s=1.0, backoff_max_s=8.0))
    plain = _Error({})
    waits = [[backend._wait(a, plain) for _ in range(50)] for a in range(6)]
    for attempt, ws in enumerate(waits):
        cap = min(8.0, 2.0**attempt)
        assert all(cap / 2 <= w <= cap for w in ws)
        assert len(set(ws)) > 1  # jitter
    assert all(backend._wait(0, _Error({"retry-after": "7"})) >= 7.0 for _ in range(20))


# -- the transformers sampler (no weights needed) --------------------------------------------------------------------


@pytest.mark.parametrize("temperature, top_p, scale", [(0.6, 0.9, 3.0), (1.0, 0.95, 0.3), (1.0, 0.5, 5.0), (0.7, 1.0, 1.0)])
def test_nucleus_sampler_matches_transformers_top_p(temperature, top_p, scale):
    import torch
    from transformers.generation.logits_process import (
        TemperatureLogitsWarper,
        TopPLogitsWarper,
    )

    from kgprobe.generation.backends.hf import NucleusSampler

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 3000, generator=g) * scale
    reference = TopPLogitsWarper(top_p)(None, TemperatureLogitsWarper(temperature)(None, logits.clone()))
    # few candidates, so that flat rows (scale 0.3) take the full-vocabulary path
    probs, ids = NucleusSampler(temperature, top_p, g, candidates=64).nucleus(logits)
    mine = torch.zeros_like(logits).scatter_add_(1, ids, probs)
    assert torch.equal(mine > 0, torch.isfinite(reference))
    assert torch.allclose(mine / mine.sum(-1, keepdim=True), torch.softmax(reference, -1), atol=1e-6)


def test_nucleus_sampler_draws_reproducibly_from_the_nucleus():
    import torch

    from kgprobe.generation.backends.hf import NucleusSampler

    logits = torch.tensor([[4.0, 3.0, 0.0, -2.0] + [-9.0] * 60] * 2000)
    draws = []
    for _ in range(2):
        sampler = NucleusSampler(1.0, 0.9, torch.Generator().manual_seed(7))
        out = sampler(None, logits)
        assert torch.equal(torch.isfinite(out).sum(-1), torch.ones(2000, dtype=torch.long))
        draws.append(out.argmax(-1))
    assert torch.equal(draws[0], draws[1])
    counts = torch.bincount(draws[0], minlength=64)
    # p(0) = 0.720 and p(1) = 0.265 hold 0.985 >= 0.9 (0.720 before token 1 is < 0.9): tokens 0 and 1 only,
    # 0.731 / 0.269 after renormalising
    assert counts[2:].sum() == 0
    assert abs(counts[0].item() / 2000 - 0.731) < 0.04


@pytest.mark.slow
def test_litellm_sends_the_system_instruction_before_the_question(api_key, fake_server):
    params = SamplingParams(n=1, max_tokens=8)
    prompts = [Prompt("a", "plain question", "t"), Prompt("b", "grounded question", "t", system="Be helpful.")]
    with fake_server() as server:
        with LiteLLMBackend(api_config(server.url)) as backend:
            backend.generate(prompts, params)
        seen = server.by_prompt()
    assert [r.system for r in seen["plain question"]] == [None]
    assert [r.system for r in seen["grounded question"]] == ["Be helpful."]


def test_litellm_asks_for_structured_output_when_the_prompt_has_a_schema():
    from kgprobe.generation.records import Prompt, SamplingParams

    backend = LiteLLMBackend(LiteLLMConfig("openai/x"))
    schema = {"type": "object", "properties": {"facts": {"type": "array"}}}
    with_schema = Prompt("i", "text", "claims-extract-v1", response_format=schema)
    kwargs = backend._kwargs(with_schema, SamplingParams(n=1), 1, 0)
    assert kwargs["response_format"] == {"type": "json_schema",
                                         "json_schema": {"name": "claims_extract_v1", "schema": schema}}
    assert "response_format" not in backend._kwargs(Prompt("i", "text", "t"), SamplingParams(n=1), 1, 0)
    assert with_schema.sha256() == Prompt("i", "text", "claims-extract-v1").sha256()  # the store key is unchanged


def test_litellm_asks_for_and_reads_token_logprobs():
    from types import SimpleNamespace

    from kgprobe.generation.backends.api import openai_logprobs
    from kgprobe.generation.records import Prompt, SamplingParams

    backend = LiteLLMBackend(LiteLLMConfig("openai/x"))
    kwargs = backend._kwargs(Prompt("i", "rate", "geval", top_logprobs=40), SamplingParams(n=1), 1, 0)
    assert kwargs["logprobs"] is True and kwargs["top_logprobs"] == 20  # OpenAI's most
    assert "logprobs" not in backend._kwargs(Prompt("i", "rate", "geval"), SamplingParams(n=1), 1, 0)
    top = [SimpleNamespace(token="4", logprob=-0.2), SimpleNamespace(token="5", logprob=-1.8)]
    choice = SimpleNamespace(logprobs=SimpleNamespace(content=[
        SimpleNamespace(token="Score", logprob=-0.01, top_logprobs=[]),
        SimpleNamespace(token="4", logprob=-0.2, top_logprobs=top)]))
    assert json.loads(openai_logprobs(choice)) == [["Score", [["Score", -0.01]]], ["4", [["4", -0.2], ["5", -1.8]]]]
    # a dict-shaped response reads the same; no logprobs reads None
    assert json.loads(openai_logprobs({"logprobs": {"content": [{"token": "4", "logprob": -0.2, "top_logprobs": [
        {"token": "4", "logprob": -0.2}]}]}})) == [["4", [["4", -0.2]]]]
    assert openai_logprobs(SimpleNamespace(logprobs=None)) is None


@pytest.mark.parametrize(("probes", "expected"), [
    ({"_is_avx512_bf16_supported": True, "_is_amx_tile_supported": False}, "bfloat16"),
    ({"_is_avx512_bf16_supported": False, "_is_amx_tile_supported": True}, "bfloat16"),
    ({"_is_avx512_bf16_supported": False, "_is_amx_tile_supported": False}, "float32"),
    ({}, "float32"),  # a torch without the probes: float32, never a guess that could be emulated and slow
])
def test_auto_dtype_on_a_cpu_is_bfloat16_only_where_the_cpu_computes_in_it(monkeypatch, probes, expected):
    import torch

    from kgprobe.generation.backends.hf import cpu_dtype

    for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        if name in probes:
            monkeypatch.setattr(torch.cpu, name, lambda value=probes[name]: value)
        else:
            monkeypatch.delattr(torch.cpu, name, raising=False)
    assert cpu_dtype() == expected
