"""The vLLM adapter against a fake ``vllm`` module that follows vLLM's offline interface.

``vllm.LLM(model=..., tensor_parallel_size=..., gpu_memory_utilization=..., max_model_len=...)``;
``LLM.chat(messages: list[list[dict]], sampling_params: SamplingParams | list[SamplingParams], use_tqdm=...,
add_generation_prompt=...) -> list[RequestOutput]``; ``RequestOutput.prompt_token_ids`` and ``.outputs``, a list of
``CompletionOutput(index, text, token_ids, finish_reason)`` with finish_reason "stop", "length" or "abort";
``vllm.distributed.parallel_state.cleanup_dist_env_and_memory()`` frees the GPU state.
"""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace

import pytest

from kgprobe.generation.backends.vllm import VLLMBackend, VLLMConfig, prompt_seed
from kgprobe.generation import BackendError, Prompt, SamplingParams, make_backend, model_specs, run_generation
from kgprobe.generation.store import ResponseStore


class FakeSamplingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


class FakeLLM:
    instances: list[FakeLLM] = []

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.chats: list[dict] = []
        self.shut_down = False
        self.llm_engine = SimpleNamespace(engine_core=SimpleNamespace(shutdown=self._shutdown))
        FakeLLM.instances.append(self)

    def _shutdown(self):
        self.shut_down = True

    def chat(self, messages, sampling_params=None, *, use_tqdm=True, add_generation_prompt=True, **kwargs):
        self.chats.append({"messages": messages, "sampling_params": sampling_params, "use_tqdm": use_tqdm,
                           "add_generation_prompt": add_generation_prompt})
        outputs = []
        for conversation, sp in zip(messages, sampling_params):
            text = conversation[-1]["content"]
            n = sp.kwargs["n"]
            # vLLM may return the samples of a request in any order; .index says which is which
            samples = [SimpleNamespace(index=i, text=f"{text} -> {i}", token_ids=list(range(i + 1)),
                                       finish_reason=("length" if i == 1 else "abort" if "abort" in text and i == 0 else "stop"),
                                       stop_reason=None)
                       for i in reversed(range(n))]
            outputs.append(SimpleNamespace(prompt=None, prompt_token_ids=list(range(len(text.split()) + 10)), outputs=samples))
        return outputs

    def generate(self, prompts, sampling_params=None, *, use_tqdm=True, **kwargs):
        self.chats.append({"raw": prompts, "sampling_params": sampling_params})
        return [SimpleNamespace(prompt=p, prompt_token_ids=[0], outputs=[
            SimpleNamespace(index=i, text=f"raw:{p}", token_ids=[1], finish_reason="stop", stop_reason=None)
            for i in range(sp.kwargs["n"])]) for p, sp in zip(prompts, sampling_params)]


@pytest.fixture
def fake_vllm(monkeypatch):
    FakeLLM.instances.clear()
    cleaned = []
    vllm = types.ModuleType("vllm")
    vllm.LLM = FakeLLM
    vllm.SamplingParams = FakeSamplingParams
    distributed = types.ModuleType("vllm.distributed")
    parallel_state = types.ModuleType("vllm.distributed.parallel_state")
    parallel_state.cleanup_dist_env_and_memory = lambda: cleaned.append(True)
    distributed.parallel_state = parallel_state
    vllm.distributed = distributed
    monkeypatch.setitem(sys.modules, "vllm", vllm)
    monkeypatch.setitem(sys.modules, "vllm.distributed", distributed)
    monkeypatch.setitem(sys.modules, "vllm.distributed.parallel_state", parallel_state)
    return SimpleNamespace(module=vllm, cleaned=cleaned)


def test_engine_options_come_from_the_config(fake_vllm):
    [spec] = model_specs([{"name": "llama-8b", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
                           "tensor_parallel_size": 2, "gpu_memory_utilization": 0.8, "max_model_len": 4096,
                           "engine_args": {"enable_prefix_caching": True}}])
    backend = make_backend(spec)
    backend.start()
    backend.start()  # built once
    assert len(FakeLLM.instances) == 1
    assert FakeLLM.instances[0].kwargs == {
        "model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": 2, "gpu_memory_utilization": 0.8,
        "dtype": "auto", "enforce_eager": False, "trust_remote_code": False, "max_model_len": 4096,
        "enable_prefix_caching": True}


def test_one_chat_call_with_per_prompt_sampling_params(fake_vllm):
    prompts = [Prompt("a", "Was Verdi born in Busseto?", "t"), Prompt("b", "Who painted Liberty?", "t")]
    params = SamplingParams(n=3, temperature=0.6, top_p=0.9, max_tokens=64, seed=11)
    with VLLMBackend(VLLMConfig("m")) as backend:
        out = backend.generate(prompts, params)
    [chat] = FakeLLM.instances[0].chats
    assert chat["messages"] == [[{"role": "user", "content": "Was Verdi born in Busseto?"}],
                                [{"role": "user", "content": "Who painted Liberty?"}]]
    assert chat["use_tqdm"] is False and chat["add_generation_prompt"] is True
    assert [sp.kwargs for sp in chat["sampling_params"]] == [
        {"n": 3, "temperature": 0.6, "top_p": 0.9, "max_tokens": 64, "seed": prompt_seed(11, p)} for p in prompts]
    # the seed of a prompt depends on the prompt and params.seed only, not on its batch
    assert prompt_seed(11, prompts[0]) != prompt_seed(11, prompts[1]) != prompt_seed(12, prompts[1])
    first = out[0]
    assert [c.text for c in first] == [f"Was Verdi born in Busseto? -> {i}" for i in range(3)]
    assert [c.finish_reason for c in first] == ["stop", "length", "stop"]
    assert [c.tokens_out for c in first] == [1, 2, 3]
    assert {c.tokens_in for c in first} == {15}
    assert [c.tokens_in for c in out[1]] == [13] * 3


def test_greedy_asks_for_one_sample_and_repeats_it(fake_vllm):
    with VLLMBackend(VLLMConfig("m")) as backend:
        [samples] = backend.generate([Prompt("a", "q", "t")], SamplingParams(n=3, temperature=0))
    sp = FakeLLM.instances[0].chats[0]["sampling_params"][0]
    assert (sp.kwargs["n"], sp.kwargs["temperature"]) == (1, 0.0)
    assert [c.text for c in samples] == ["q -> 0"] * 3


def test_aborted_samples_are_failures_and_are_stored(fake_vllm, tmp_path):
    store = ResponseStore(tmp_path)
    prompts = [Prompt("a", "please abort", "t"), Prompt("b", "fine", "t")]
    params = SamplingParams(n=2, max_tokens=8)
    with VLLMBackend(VLLMConfig("m")) as backend:
        summary = run_generation(backend, model="llama", prompts=prompts, params=params, store=store)
    assert (summary.generated, summary.failed) == (3, 1)
    rows = store.rows_for("llama", prompts, params).to_pylist()
    assert [(r["text"], r["error"]) for r in rows] == [
        (None, "vLLM aborted the request"), ("please abort -> 1", None), ("fine -> 0", None), ("fine -> 1", None)]


def test_close_shuts_the_engine_down_and_frees_memory(fake_vllm):
    backend = VLLMBackend(VLLMConfig("m"))
    backend.start()
    engine = FakeLLM.instances[0]
    backend.close()
    assert engine.shut_down and fake_vllm.cleaned == [True] and backend.llm is None
    backend.close()  # idempotent
    assert fake_vllm.cleaned == [True]


def test_missing_vllm_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm raises ImportError
    with pytest.raises(BackendError, match=r"pip install 'kgprobe\[gpu\]'"):
        VLLMBackend(VLLMConfig("m")).start()


@pytest.mark.parametrize("name,key", [("StructuredOutputsParams", "structured_outputs"),
                                      ("GuidedDecodingParams", "guided_decoding"), (None, None)])
def test_a_prompt_with_a_json_schema_gets_guided_decoding(fake_vllm, name, key):
    sampling = types.ModuleType("vllm.sampling_params")
    if name:
        setattr(sampling, name, FakeSamplingParams)
    fake_vllm.module.sampling_params = sampling
    schema = {"type": "object", "properties": {"facts": {"type": "array"}}}
    prompts = [Prompt("a", "Break it into facts.", "claims-extract-v1", response_format=schema), Prompt("b", "Hi", "t")]
    with VLLMBackend(VLLMConfig("m")) as backend:
        backend.generate(prompts, SamplingParams(n=1, temperature=0.0))
    first, second = FakeLLM.instances[0].chats[0]["sampling_params"]
    if key:
        assert first.kwargs[key].kwargs == {"json": schema}
    assert set(first.kwargs) - {"n", "temperature", "top_p", "max_tokens", "seed"} == ({key} if key else set())
    assert set(second.kwargs) == {"n", "temperature", "top_p", "max_tokens", "seed"}


def test_raw_prompts_complete_the_text_without_the_chat_template(fake_vllm):
    prompts = [Prompt("a", "Chat me.", "t"), Prompt("b", "Complete me.\n\n## Response:\n\n", "t", raw=True)]
    params = SamplingParams(n=1, temperature=0.6, top_p=0.9, max_tokens=8, seed=1)
    with VLLMBackend(VLLMConfig("m")) as backend:
        out = backend.generate(prompts, params)
    calls = FakeLLM.instances[0].chats
    assert [c.get("raw") for c in calls if "raw" in c] == [["Complete me.\n\n## Response:\n\n"]]
    assert [c["messages"] for c in calls if "messages" in c] == [[[{"role": "user", "content": "Chat me."}]]]
    assert out[0][0].text == "Chat me. -> 0" and out[1][0].text == "raw:Complete me.\n\n## Response:\n\n"


def test_a_prompt_asking_for_logprobs_gets_them(fake_vllm):
    import json

    from kgprobe.generation.backends.vllm import vllm_logprobs

    b = VLLMBackend(VLLMConfig("m"))
    b.start()
    asked, plain = b.sampling_params([Prompt("a", "rate", "g", top_logprobs=5), Prompt("b", "x", "t")],
                                     SamplingParams(n=1, temperature=0.0))
    assert asked.kwargs["logprobs"] == 5 and "logprobs" not in plain.kwargs
    lp = lambda v, tok: SimpleNamespace(logprob=v, rank=1, decoded_token=tok)  # noqa: E731
    out = SimpleNamespace(token_ids=[7, 9], logprobs=[{7: lp(-0.1, "Score")},
                                                      {8: lp(-1.5, "5"), 9: lp(-0.3, "4")}])
    assert json.loads(vllm_logprobs(out)) == [["Score", [["Score", -0.1]]], ["4", [["4", -0.3], ["5", -1.5]]]]
    assert vllm_logprobs(SimpleNamespace(token_ids=[1], logprobs=None)) is None
