"""The vLLM backend: offline ``vllm.LLM`` on GPU machines, one ``llm.chat`` call per batch of prompts.

The engine is built once (``start()``) from ``model_id``, ``tensor_parallel_size``, ``gpu_memory_utilization``,
``max_model_len``, ``dtype`` and ``engine_args``; every batch goes to ``llm.chat`` as a list of one-message
conversations, so the tokenizer's chat template is applied by vLLM, with one ``vllm.SamplingParams(n, temperature,
top_p, max_tokens, seed)`` per prompt. The seed of a prompt is derived from ``params.seed`` and the prompt's hash, so
its samples do not depend on which other prompts share the batch. Greedy decoding (``temperature=0``) asks for one
sample and repeats it ``n`` times. ``close()`` shuts the engine down and frees GPU memory.

vLLM is the ``gpu`` extra: ``pip install 'kgprobe[gpu]'``.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgprobe.generation.records import BackendError, BaseBackend, Completion, GenerationError, Prompt, SamplingParams

__all__ = ["VLLMBackend", "VLLMConfig", "prompt_seed", "vllm_logprobs"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class VLLMConfig:
    """A model run by offline vLLM (``vllm.LLM``) on a GPU machine (``pip install 'kgprobe[gpu]'``).

    Each key is the ``vllm.LLM`` argument of that name; ``engine_args`` holds any other."""

    model_id: str
    """A HF hub id or a folder of HF weights (``vllm.LLM``'s ``model``)."""
    tensor_parallel_size: int = 1
    """GPUs the model is split over."""
    gpu_memory_utilization: float = 0.9
    """Share of each GPU's memory vLLM may take for the model (weights, activations, KV cache), in (0, 1]."""
    max_model_len: int | None = None
    """Most tokens of prompt plus answer (default: vLLM's, the model's context length)."""
    dtype: str = "auto"
    """Weight and activation dtype as vLLM reads it, e.g. ``auto`` (vLLM picks from the model's config),
    ``bfloat16``, ``float16``."""
    enforce_eager: bool = False
    """Run PyTorch eagerly, without CUDA graphs (less memory, slower)."""
    trust_remote_code: bool = False
    """Let the model's repository run its own Python code; only for weights you trust."""
    engine_args: Mapping[str, Any] | None = None
    """Any other ``vllm.LLM`` / ``EngineArgs`` keyword arguments (e.g. ``enable_prefix_caching``); they win over
    the keys above."""

    def __post_init__(self) -> None:
        if not self.model_id:
            raise ValueError("model_id must name a HF model id or folder")
        if self.tensor_parallel_size < 1:
            raise ValueError(f"tensor_parallel_size must be at least 1, got {self.tensor_parallel_size}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}")
        if self.max_model_len is not None and self.max_model_len < 1:
            raise ValueError(f"max_model_len must be at least 1, got {self.max_model_len}")


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise BackendError("the vllm backend needs vLLM, which is not installed: pip install 'kgprobe[gpu]' "
                           f"(on a machine with a CUDA GPU); import failed with: {exc}") from exc
    return vllm


def prompt_seed(seed: int, prompt: Prompt) -> int:
    """The vLLM seed of one prompt's request: from ``seed`` and the prompt's hash (a 63-bit integer)."""
    digest = hashlib.sha256(f"{seed}|{prompt.sha256()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


class VLLMBackend(BaseBackend):
    """``VLLMBackend(VLLMConfig("meta-llama/Llama-3.1-8B-Instruct", tensor_parallel_size=2))``."""

    name = "vllm"

    def __init__(self, config: VLLMConfig | str) -> None:
        self.config = VLLMConfig(config) if isinstance(config, str) else config
        self.llm: Any = None
        self._vllm: Any = None

    def __repr__(self) -> str:
        return f"VLLMBackend({self.config.model_id!r}, tensor_parallel_size={self.config.tensor_parallel_size})"

    def engine_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``vllm.LLM``."""
        c = self.config
        kwargs: dict[str, Any] = {
            "model": c.model_id,
            "tensor_parallel_size": c.tensor_parallel_size,
            "gpu_memory_utilization": c.gpu_memory_utilization,
            "dtype": c.dtype,
            "enforce_eager": c.enforce_eager,
            "trust_remote_code": c.trust_remote_code,
        }
        if c.max_model_len is not None:
            kwargs["max_model_len"] = c.max_model_len
        kwargs.update(c.engine_args or {})
        return kwargs

    def start(self) -> None:
        """Build the engine (loads the weights onto the GPU(s))."""
        if self.llm is not None:
            return
        vllm = _import_vllm()
        self.llm = vllm.LLM(**self.engine_kwargs())
        self._vllm = vllm

    def sampling_params(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Any]:
        """One ``vllm.SamplingParams`` per prompt (with JSON-guided decoding for a prompt with a
        ``response_format``)."""
        greedy = params.temperature == 0
        return [self._vllm.SamplingParams(n=1 if greedy else params.n, temperature=params.temperature,
                                          top_p=1.0 if greedy else params.top_p, max_tokens=params.max_tokens,
                                          seed=prompt_seed(params.seed, p), **self._structured(p),
                                          **({"logprobs": int(p.top_logprobs)} if p.top_logprobs else {}))
                for p in prompts]

    def _structured(self, prompt: Prompt) -> dict[str, Any]:
        """vLLM's JSON-schema decoding for a prompt with a ``response_format``: ``structured_outputs`` in the
        versions that have it, ``guided_decoding`` in the earlier ones, nothing where neither exists (the caller
        validates the reply either way)."""
        if prompt.response_format is None:
            return {}
        module = getattr(self._vllm, "sampling_params", None)
        for name, key in (("StructuredOutputsParams", "structured_outputs"), ("GuidedDecodingParams", "guided_decoding")):
            cls = getattr(module, name, None)
            if cls is not None:
                return {key: cls(json=dict(prompt.response_format))}
        return {}

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        """All ``prompts`` in one ``llm.chat`` call; vLLM schedules the batching."""
        self.start()
        if not prompts:
            return []
        t0 = time.perf_counter()
        sampling = self.sampling_params(prompts, params)
        if any(p.raw for p in prompts):  # raw prompts complete the text as written, without the chat template
            outputs = [None] * len(prompts)
            raw = [i for i, p in enumerate(prompts) if p.raw]
            chat = [i for i, p in enumerate(prompts) if not p.raw]
            got = self.llm.generate([((prompts[i].system + "\n\n") if prompts[i].system else "") + prompts[i].text
                                     for i in raw], sampling_params=[sampling[i] for i in raw], use_tqdm=False)
            for i, o in zip(raw, got, strict=True):
                outputs[i] = o
            if chat:
                got = self.llm.chat([prompts[i].messages() for i in chat], sampling_params=[sampling[i] for i in chat],
                                    use_tqdm=False, add_generation_prompt=True)
                for i, o in zip(chat, got, strict=True):
                    outputs[i] = o
        else:
            outputs = self.llm.chat([p.messages() for p in prompts], sampling_params=sampling,
                                    use_tqdm=False, add_generation_prompt=True)
        latency = time.perf_counter() - t0
        if len(outputs) != len(prompts):
            raise GenerationError(f"vLLM returned {len(outputs)} outputs for {len(prompts)} prompts")
        result = []
        for output in outputs:
            tokens_in = len(output.prompt_token_ids) if output.prompt_token_ids is not None else None
            samples = []
            for o in sorted(output.outputs, key=lambda o: o.index):
                error = "vLLM aborted the request" if o.finish_reason == "abort" else None
                samples.append(Completion(text=None if error else o.text, finish_reason=o.finish_reason,
                                          tokens_in=tokens_in, tokens_out=len(o.token_ids), latency_s=latency,
                                          error=error, logprobs=vllm_logprobs(o)))
            if params.temperature == 0:
                samples = samples[:1] * params.n
            result.append(samples)
        return result

    def close(self) -> None:
        """Shut the engine down and free GPU memory (engine, model-parallel groups, CUDA cache)."""
        llm, self.llm = self.llm, None
        if llm is None:
            return
        engine = getattr(llm, "llm_engine", None)
        for part in (getattr(engine, "engine_core", None), engine):
            shutdown = getattr(part, "shutdown", None)
            if callable(shutdown):
                try:
                    shutdown()
                except Exception as exc:  # cleanup goes on; the process may hold the GPU until it exits
                    _log.warning("vLLM engine shutdown failed: %s", exc)
                break
        del llm, engine
        gc.collect()
        try:
            from vllm.distributed.parallel_state import cleanup_dist_env_and_memory
        except ImportError:
            cleanup_dist_env_and_memory = None
        if cleanup_dist_env_and_memory is not None:
            cleanup_dist_env_and_memory()
        else:
            try:
                from vllm.distributed.parallel_state import destroy_distributed_environment, destroy_model_parallel
            except ImportError:
                destroy_model_parallel = destroy_distributed_environment = None
            if destroy_model_parallel is not None:
                destroy_model_parallel()
                destroy_distributed_environment()
            with contextlib.suppress(Exception):
                import torch.distributed

                if torch.distributed.is_available() and torch.distributed.is_initialized():
                    torch.distributed.destroy_process_group()
        gc.collect()
        with contextlib.suppress(ImportError):
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()


def vllm_logprobs(output: Any) -> str | None:
    """A vLLM completion's token log-probabilities (``output.logprobs``: per generated token, token id ->
    ``Logprob(logprob, rank, decoded_token)``) as :attr:`Completion.logprobs` JSON, alternatives most likely first;
    None when it has none (the prompt asked for none)."""
    steps = getattr(output, "logprobs", None)
    if not steps:
        return None
    tokens = []
    for token_id, step in zip(output.token_ids, steps):
        alts = sorted(((getattr(lp, "decoded_token", None) or str(tid), float(lp.logprob)) for tid, lp in step.items()),
                      key=lambda a: -a[1])
        chosen = step.get(token_id)
        text = (getattr(chosen, "decoded_token", None) or str(token_id)) if chosen is not None else str(token_id)
        tokens.append([text, [list(a) for a in alts]])
    return json.dumps(tokens, ensure_ascii=False)
