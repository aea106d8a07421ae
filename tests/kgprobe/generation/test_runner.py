"""Records, model config and the runner: dedup, only-missing requests, progress, failures stored and retried."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from kgprobe.generation.backends import HFBackend, LiteLLMBackend, ReferenceBackend, VLLMBackend
from kgprobe.errors import ConfigError
from kgprobe.generation import (
    BaseBackend,
    Completion,
    GenerationError,
    Prompt,
    SamplingParams,
    make_backend,
    model_specs,
    run_generation,
)
from kgprobe.generation.store import MISSING_ERROR, ResponseStore


class Recorder(BaseBackend):
    """Answers ``<text>/<sample>``; records every call; fails prompts listed in ``fail`` (a set of texts)."""

    name = "recorder"

    def __init__(self, fail: set[str] | None = None, raise_on: set[str] | None = None) -> None:
        self.calls: list[tuple[list[str], int]] = []
        self.fail = fail or set()
        self.raise_on = raise_on or set()

    def generate(self, prompts, params):
        self.calls.append(([p.text for p in prompts], params.n))
        if self.raise_on & {p.text for p in prompts}:
            raise RuntimeError("CUDA out of memory")
        return [[Completion.failure("HTTP 503") if p.text in self.fail
                 else Completion(f"{p.text}/{i}", "stop", len(p.text), 2, 0.01, cost=0.5) for i in range(params.n)]
                for p in prompts]

    @property
    def asked(self) -> list[str]:
        return [t for texts, _ in self.calls for t in texts]


def prompts(k: int, *, prefix: str = "q") -> list[Prompt]:
    return [Prompt(f"{prefix}-item{i}", f"{prefix}{i}", "tpl") for i in range(k)]


# -- records ---------------------------------------------------------------------------------------------------------


def test_sampling_params_defaults_and_canonical_hash():
    p = SamplingParams()
    assert (p.n, p.temperature, p.top_p, p.max_tokens, p.seed) == (3, 0.6, 0.9, 128, 0)
    canonical = '{"max_tokens":128,"n":3,"seed":0,"temperature":0.6,"top_p":0.9}'
    assert p.to_json() == canonical
    assert p.sha256() == hashlib.sha256(canonical.encode()).hexdigest()
    assert json.loads(p.to_json()) == p.as_dict()
    # an integer temperature is the same parameter set as the float one
    assert SamplingParams(temperature=1, top_p=1).sha256() == SamplingParams(temperature=1.0, top_p=1.0).sha256()
    assert SamplingParams(seed=1).sha256() != p.sha256()


@pytest.mark.parametrize("kwargs, message", [
    ({"n": 0}, "n must be at least 1"),
    ({"temperature": -0.1}, "temperature must be >= 0"),
    ({"top_p": 0}, r"top_p must be in \(0, 1\]"),
    ({"max_tokens": 0}, "max_tokens must be at least 1"),
    ({"n": 2.5}, "n must be an integer"),
    ({"temperature": "hot"}, "temperature must be a number"),
])
def test_sampling_params_are_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SamplingParams(**kwargs)


def test_prompt_hash_is_the_text_hash():
    a, b = Prompt("1", "Is Paris in France?", "t1", gold="yes"), Prompt("2", "Is Paris in France?", "t2")
    assert a.sha256() == b.sha256() == hashlib.sha256("Is Paris in France?".encode()).hexdigest()
    assert Prompt("1", "Is Paris in France? ", "t1").sha256() != a.sha256()


# -- model config ----------------------------------------------------------------------------------------------------


def test_model_specs_from_the_project_config():
    specs = model_specs([
        {"name": "smollm2-135m", "backend": "transformers", "model_id": "smollm2-135m-instruct", "batch_size": 16, "max_tokens": 64},
        {"name": "oracle", "backend": "reference", "kind": "oracle"},
        {"name": "gpt-4o-mini", "backend": "litellm", "model_id": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY", "max_concurrency": 8},
        {"name": "llama-8b", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": 1, "temperature": 0},
    ], defaults={"n": 5, "seed": 7})
    smol, oracle, gpt, llama = specs
    assert (smol.backend, smol.batch_size, smol.config.model_id) == ("transformers", 16, "smollm2-135m-instruct")
    assert smol.params == SamplingParams(n=5, temperature=0.6, top_p=0.9, max_tokens=64, seed=7)
    assert (oracle.config.kind, oracle.params.n, oracle.batch_size) == ("oracle", 5, 1024)
    assert (gpt.config.api_key_env, gpt.config.max_concurrency, gpt.batch_size) == ("OPENAI_API_KEY", 8, 64)
    assert (llama.config.tensor_parallel_size, llama.params.temperature) == (1, 0.0)
    assert isinstance(make_backend(smol), HFBackend) and isinstance(make_backend(oracle), ReferenceBackend)
    assert isinstance(make_backend(gpt), LiteLLMBackend) and isinstance(make_backend(llama), VLLMBackend)
    assert [make_backend(s).name for s in specs] == ["transformers", "reference", "litellm", "vllm"]


@pytest.mark.parametrize("entry, message", [
    ({"backend": "reference"}, "models[0]: every model needs a non-empty string 'name'"),
    ({"name": "x", "backend": "ollama"}, "model 'x': key 'backend' must be one of"),
    ({"name": "x", "backend": "transformers"}, "model 'x': backend 'transformers' needs key(s) ['model_id']"),
    ({"name": "x", "backend": "reference", "kind": "psychic"}, "model 'x': reference kind must be one of"),
    ({"name": "x", "backend": "reference", "model_id": "a"}, "model 'x': unknown key 'model_id' for backend 'reference'"),
    ({"name": "x", "backend": "litellm", "model_id": "openai/a", "max_concurrency": "8"}, "model 'x': key 'max_concurrency' must be int"),
    ({"name": "x", "backend": "reference", "temperature": -1}, "model 'x': sampling parameter temperature must be >= 0"),
    ({"name": "x", "backend": "reference", "batch_size": 0}, "model 'x': key 'batch_size' must be at least 1"),
    ({"name": "x", "backend": "litellm", "model_id": "openai/a", "extra": {"api_key": "sk-1"}}, "model 'x': extra must not hold secrets"),
])
def test_model_specs_errors_name_the_model_and_key(entry, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        model_specs([entry])


def test_model_names_must_be_unique():
    with pytest.raises(ConfigError, match="model 'a': the name is used twice"):
        model_specs([{"name": "a", "backend": "reference"}, {"name": "a", "backend": "reference", "kind": "random"}])


# -- the runner ------------------------------------------------------------------------------------------------------


def test_identical_prompt_texts_are_generated_once(tmp_path):
    store, backend = ResponseStore(tmp_path), Recorder()
    items = prompts(5) + [Prompt("dup-a", "q1", "other-template"), Prompt("dup-b", "q3", "tpl")]
    summary = run_generation(backend, model="m", prompts=items, params=SamplingParams(n=2), store=store)
    assert sorted(backend.asked) == ["q0", "q1", "q2", "q3", "q4"]
    assert (summary.items, summary.unique_prompts, summary.requested, summary.generated) == (7, 5, 10, 10)
    rows = store.rows_for("m", items, SamplingParams(n=2)).to_pylist()
    assert len(rows) == 14
    by_item = {(r["item_id"], r["sample_index"]): (r["text"], r["prompt_template_id"]) for r in rows}
    assert by_item[("dup-a", 1)] == ("q1/1", "other-template")
    assert by_item[("q-item1", 1)] == ("q1/1", "tpl")


def test_only_missing_samples_are_requested(tmp_path):
    store, params = ResponseStore(tmp_path), SamplingParams(n=3)
    first = Recorder()
    run_generation(first, model="m", prompts=prompts(4), params=params, store=store)
    second = Recorder()
    summary = run_generation(second, model="m", prompts=prompts(6), params=params, store=store)
    assert sorted(second.asked) == ["q4", "q5"]
    assert (summary.requested, summary.reused, summary.generated) == (18, 12, 6)
    # another model, or other sampling parameters, share nothing
    third = Recorder()
    run_generation(third, model="m", prompts=prompts(2), params=SamplingParams(n=3, seed=1), store=store)
    assert sorted(third.asked) == ["q0", "q1"]


def test_a_prompt_missing_some_samples_asks_for_just_those(tmp_path):
    store, params = ResponseStore(tmp_path), SamplingParams(n=3)
    p = Prompt("i", "q", "tpl")
    base = {"model": "m", "backend": "recorder", "prompt_sha256": p.sha256(), "prompt": "q",
            "sampling_params": params.to_json(), "params_sha256": params.sha256(), "finish_reason": "stop",
            "latency_s": 0.0, "run_id": "old"}
    from datetime import datetime, timezone
    now = datetime.now(timezone.utc)
    store.write_shard("m", [{**base, "sample_index": 1, "text": "kept", "created_at": now},
                            {**base, "sample_index": 0, "text": None, "error": "HTTP 429", "created_at": now}])
    backend = Recorder()
    summary = run_generation(backend, model="m", prompts=[p], params=params, store=store)
    assert backend.calls == [(["q"], 2)]
    assert (summary.reused, summary.generated) == (1, 2)
    texts = [r["text"] for r in store.rows_for("m", [p], params).to_pylist()]
    assert texts == ["q/0", "kept", "q/1"]  # the two new samples fill indices 0 and 2, in order


def test_batches_and_shards(tmp_path):
    store, backend = ResponseStore(tmp_path), Recorder()
    items = [Prompt(f"i{i}", "x" * (10 - i), "t") for i in range(10)]
    summary = run_generation(backend, model="m", prompts=items, params=SamplingParams(n=1), store=store,
                             batch_size=4, shard_size=3)
    assert [len(texts) for texts, _ in backend.calls] == [4, 4, 2]
    # within the run, batches are sorted by prompt length (less padding)
    assert [len(t) for t in backend.asked] == list(range(1, 11))
    # each batch is stored when it returns, at most shard_size rows a shard: 3 + 1, 3 + 1, 2
    assert summary.shards == len(store.shards("m")) == 5
    assert (summary.tokens_in, summary.tokens_out, summary.cost) == (55, 20, 5.0)


def test_batches_group_prompts_of_one_template(tmp_path):
    backend = Recorder()
    items = [Prompt(f"i{i}", f"{'wh' if i % 2 else 'yn'} question {i}", "fpq-wh-v1" if i % 2 else "fpq-yn-v1")
             for i in range(8)]
    run_generation(backend, model="m", prompts=items, params=SamplingParams(n=1), store=ResponseStore(tmp_path),
                   batch_size=4)
    assert [{t.split()[0] for t in texts} for texts, _ in backend.calls] == [{"wh"}, {"yn"}]


def test_progress_is_logged_at_least_every_tenth(tmp_path):
    lines: list[str] = []
    run_generation(Recorder(), model="m", prompts=prompts(40), params=SamplingParams(n=1), store=ResponseStore(tmp_path),
                   batch_size=1, log=lines.append)
    progress = [line for line in lines if "samples (" in line]
    done = [int(re.search(r"(\d+)/40 samples", line).group(1)) for line in progress]
    assert done == [4, 8, 12, 16, 20, 24, 28, 32, 36, 40]
    assert all(re.search(r"prompts/s, [\d.]+ tokens/s, elapsed \d+:\d\d:\d\d, ETA \d+:\d\d:\d\d", line) for line in progress)
    assert "40 distinct prompts x n=1: 0 samples reused from the store, 40 to generate" in lines[0]
    assert "40 generated, 0 reused, 0 failed" in lines[-1]


def test_failures_are_stored_then_retried_by_the_next_run(tmp_path):
    store, params, items = ResponseStore(tmp_path), SamplingParams(n=2), prompts(6)
    first = Recorder(fail={"q2", "q4"})
    summary = run_generation(first, model="m", prompts=items, params=params, store=store, run_id="run-1")
    assert (summary.generated, summary.failed) == (8, 4)
    rows = store.rows_for("m", items, params).to_pylist()
    failed = {(r["item_id"], r["sample_index"]): r["error"] for r in rows if r["error"]}
    assert failed == {(f"q-item{i}", s): "HTTP 503" for i in (2, 4) for s in (0, 1)}
    assert all(r["text"] is None for r in rows if r["error"])

    second = Recorder()
    summary = run_generation(second, model="m", prompts=items, params=params, store=store, run_id="run-2")
    assert sorted(second.asked) == ["q2", "q4"]
    assert (summary.reused, summary.generated, summary.failed) == (8, 4, 0)
    rows = store.rows_for("m", items, params).to_pylist()
    assert all(r["error"] is None and r["text"] == f"{r['prompt']}/{r['sample_index']}" for r in rows)
    assert {r["run_id"] for r in rows if r["prompt"] in ("q2", "q4")} == {"run-2"}


def test_a_backend_exception_fails_its_batch_and_the_run_goes_on(tmp_path):
    store, params = ResponseStore(tmp_path), SamplingParams(n=1)
    backend = Recorder(raise_on={"q0"})
    summary = run_generation(backend, model="m", prompts=prompts(6), params=params, store=store, batch_size=2)
    assert (summary.generated, summary.failed) == (4, 2)
    errors = {r["prompt"]: r["error"] for r in store.rows_for("m", prompts(6), params).to_pylist()}
    assert errors == {"q0": "RuntimeError: CUDA out of memory", "q1": "RuntimeError: CUDA out of memory",
                      "q2": None, "q3": None, "q4": None, "q5": None}


def test_a_failed_share_names_the_first_error_message(tmp_path):
    class Unloadable(Recorder):
        def generate(self, prompts, params):
            raise OSError("model weights not found at /models/missing.gguf:\n run `kgprobe models pull`")

    with pytest.raises(GenerationError) as caught:
        run_generation(Unloadable(), model="m", prompts=prompts(2), params=SamplingParams(n=1),
                       store=ResponseStore(tmp_path), max_failed_share=0)
    message = str(caught.value)
    assert "2 of 2 samples failed (2 x OSError)." in message
    # the message itself, on one line, not only its kind
    assert 'The first: "OSError: model weights not found at /models/missing.gguf: run `kgprobe models pull`".' \
        in message, message


def test_the_run_stops_when_whole_batches_keep_failing(tmp_path):
    store, params = ResponseStore(tmp_path), SamplingParams(n=1)
    backend = Recorder(fail={f"q{i}" for i in range(10)})
    with pytest.raises(GenerationError, match=r"every request of the last 3 batches failed \(last error: HTTP 503\)"):
        run_generation(backend, model="m", prompts=prompts(10), params=params, store=store, batch_size=2)
    assert len(backend.calls) == 3
    rows = store.rows_for("m", prompts(10), params).to_pylist()
    assert sum(r["error"] == "HTTP 503" for r in rows) == 6  # the failures are stored before stopping
    assert sum(r["error"] == MISSING_ERROR for r in rows) == 4


def test_a_backend_that_returns_the_wrong_shape_is_an_error(tmp_path):
    class Short(Recorder):
        def generate(self, prompts, params):
            return super().generate(prompts, params)[:-1]

    with pytest.raises(GenerationError, match=r"returned \[1\] completions for 2 prompts x n=1"):
        run_generation(Short(), model="m", prompts=prompts(2), params=SamplingParams(n=1), store=ResponseStore(tmp_path))


def test_reference_oracle_end_to_end(tmp_path):
    store = ResponseStore(tmp_path)
    items = [Prompt("a", "Was Verdi born in Busseto?", "fpq-yn-v1", gold="yes", answer_kind="yn"),
             Prompt("b", "Where in Paris was Verdi born?", "fpq-wh-v1", gold="false premise", answer_kind="wh")]
    spec = model_specs([{"name": "oracle", "backend": "reference", "kind": "oracle"}])[0]
    with make_backend(spec) as backend:
        summary = run_generation(backend, model=spec.name, prompts=items, params=spec.params, store=store, run_id="r1")
    assert (summary.requested, summary.generated, summary.backend) == (6, 6, "reference")
    rows = store.rows_for("oracle", items, spec.params).to_pylist()
    assert [r["text"] for r in rows] == ["Yes."] * 3 + ["The question's premise is false."] * 3
    assert {(r["backend"], r["model"], r["run_id"], r["sampling_params"]) for r in rows} == {
        ("reference", "oracle", "r1", spec.params.to_json())}


def test_dagster_resources_build_start_and_release_backends():
    import dagster as dg

    from resources.generation import GenerationBackend, LiteLLMModel, ReferenceModel, backend_from_config

    closed = []

    class Tracked(GenerationBackend):
        kind: str = "always-no"

        def build(self):
            backend = ReferenceBackend(self.kind)
            backend.close = lambda: closed.append(self.kind)
            return backend

    @dg.asset(required_resource_keys={"model"})  # (string annotations here: this module has postponed evaluation)
    def answers(context):
        model = context.resources.model
        return [c.text for c in model.generate([Prompt("i", "q?", "t", answer_kind="wh")], SamplingParams(n=2))[0]]

    result = dg.materialize([answers], resources={"model": Tracked(kind="always-yes")})
    assert result.output_for_node("answers") == ["The question's premise is true."] * 2
    assert closed == ["always-yes"]  # released after the run
    assert isinstance(ReferenceModel(kind="random").backend, ReferenceBackend)
    assert LiteLLMModel(model_id="openai/x", api_key_env="OPENAI_API_KEY").api_key_env == "OPENAI_API_KEY"
    backend = backend_from_config({"name": "yes", "backend": "reference", "kind": "always-yes"})
    assert isinstance(backend, ReferenceBackend) and backend.kind == "always-yes"
    with pytest.raises(ConfigError, match="model 'x': unknown key 'colour'"):
        backend_from_config({"name": "x", "backend": "reference", "colour": "red"})


def test_a_backend_pool_loads_each_model_once_and_closes_them_all() -> None:
    from kgprobe.errors import ConfigError
    from kgprobe.generation import BackendPool, model_specs

    oracle, coin = model_specs([{"name": "oracle", "backend": "reference", "kind": "oracle"},
                                {"name": "coin", "backend": "reference", "kind": "random"}])
    with BackendPool() as pool:
        first = pool.get(oracle)
        assert pool.get(oracle) is first and pool.get(coin) is not first
        assert pool.loads == 2  # the second get(oracle) reused the loaded backend
        other = model_specs([{"name": "oracle", "backend": "reference", "kind": "always-yes"}])[0]
        with pytest.raises(ConfigError, match="configured twice"):
            pool.get(other)  # one name, two configurations: the store could not tell their answers apart
    assert pool.loads == 2 and pool.get(oracle) is not first  # closed: a later get loads afresh
