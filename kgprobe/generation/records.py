"""The records that travel between the question stages and the models: sampling parameters, prompts,
completions, the backend protocol, a generation summary and a validated model entry.

They live apart from the runner and the store so that the backends, the store and the runner all import them
without importing each other.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from kgprobe.errors import KGProbeError
from kgprobe.secrets import mask_secrets

__all__ = [
    "BACKEND_KINDS",
    "DEFAULT_BATCH_SIZE",
    "Backend",
    "BackendError",
    "BaseBackend",
    "Completion",
    "GenerationError",
    "GenerationSummary",
    "ModelSpec",
    "Prompt",
    "SAMPLING_KEYS",
    "SamplingParams",
    "sha256_text",
]


#: Backend kinds a model entry of the project config may name.
BACKEND_KINDS: tuple[str, ...] = ("reference", "transformers", "litellm", "vllm", "imported")
SAMPLING_KEYS = ("n", "temperature", "top_p", "max_tokens", "seed")
#: Prompts per backend call when a model entry does not set ``batch_size``. vLLM schedules its own batches, so it
#: gets large chunks (each chunk is also the unit that a killed run can lose); an API backend keeps
#: ``max_concurrency`` requests in flight within a chunk.
DEFAULT_BATCH_SIZE: dict[str, int] = {"reference": 1024, "transformers": 16, "litellm": 64, "vllm": 2048,
                                      "imported": 1024}


class GenerationError(KGProbeError):
    """A generation run cannot go on: a backend broke its contract, or every request of several batches failed."""


class BudgetExceeded(GenerationError):
    """Generation stopped before passing a spending limit; what was generated is stored, and raising the limit
    resumes the run."""


class BackendError(KGProbeError):
    """A backend cannot be built: a missing optional package, missing weights, an unset API-key variable."""


@lru_cache(maxsize=1 << 16)
def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SamplingParams:
    """How to sample: ``n`` completions per prompt at ``temperature`` / ``top_p``, at most ``max_tokens`` new tokens.

    The defaults are KG-FPQ's (three samples, temperature 0.6, top-p 0.9). ``temperature=0`` means greedy decoding;
    its ``n`` samples are then identical copies. ``seed`` makes local backends reproducible and is passed to APIs
    that accept one.
    """

    n: int = 3
    temperature: float = 0.6
    top_p: float = 0.9
    max_tokens: int = 128
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("n", "max_tokens", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"sampling parameter {name} must be an integer, got {value!r}")
        for name in ("temperature", "top_p"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"sampling parameter {name} must be a number, got {value!r}")
            # 1 and 1.0 must hash alike, or a config edit from "1" to "1.0" would regenerate everything
            object.__setattr__(self, name, float(value))
        if self.n < 1:
            raise ValueError(f"sampling parameter n must be at least 1, got {self.n}")
        if self.max_tokens < 1:
            raise ValueError(f"sampling parameter max_tokens must be at least 1, got {self.max_tokens}")
        if self.temperature < 0:
            raise ValueError(f"sampling parameter temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"sampling parameter top_p must be in (0, 1], got {self.top_p}")

    def as_dict(self) -> dict[str, Any]:
        """The parameters as a plain dict (for metadata and JSON)."""
        return asdict(self)

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, no spaces): the form that is hashed and stored with every response."""
        return json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))

    def sha256(self) -> str:
        """SHA-256 of :meth:`to_json`, part of the response-store key."""
        return sha256_text(self.to_json())


@dataclass(frozen=True)
class Prompt:
    """One question item as a model sees it. ``text`` is the user message; ``system``, when set, the system
    instruction sent before it (fixed per prompt template, so the stored template id names it).

    ``gold`` and ``answer_kind`` (``"yn"``, ``"wh"``, ``"tf"``, ...) are for the reference backends, which answer
    from the gold label; model backends ignore them. Responses are keyed by the conversation alone (system
    instruction and text), so items that share it share their responses.

    ``raw`` prompts are sent as plain text, without the model's chat template (no turn markers, no default system
    prompt a template may add): local backends (transformers, vLLM) complete the text as written; chat APIs, which
    accept only messages, receive it as one user message.
    """

    item_id: str
    text: str
    template_id: str
    gold: str | None = None
    answer_kind: str | None = None
    system: str | None = None
    #: A JSON schema the reply must follow, for backends with structured output (litellm's ``response_format``);
    #: others ignore it and the caller validates the reply. Not part of the key: the template id names it.
    response_format: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)
    raw: bool = False
    #: How many most likely alternatives of each generated token to return (log-probabilities), for backends
    #: that report them; 0: none. Not part of the key: the template id names it.
    top_logprobs: int = field(default=0, compare=False, hash=False)

    def sha256(self) -> str:
        """SHA-256 of the prompt, part of the response-store key: of the text (UTF-8) alone when there is no system
        instruction, so keys stored before system instructions existed stay valid; else of both, as JSON. A raw
        prompt (sent without a chat template) keys apart from the same text in a chat template."""
        if self.raw:
            return sha256_text(json.dumps(["raw", self.system, self.text], ensure_ascii=False, separators=(",", ":")))
        if self.system is None:
            return sha256_text(self.text)
        return sha256_text(json.dumps([self.system, self.text], ensure_ascii=False, separators=(",", ":")))

    def messages(self) -> list[dict[str, str]]:
        """The chat messages to send: the system instruction (if any), then the user message."""
        user = {"role": "user", "content": self.text}
        return [user] if self.system is None else [{"role": "system", "content": self.system}, user]


@dataclass(frozen=True)
class Completion:
    """One sample of one prompt. A failed request has ``text=None`` and ``error`` set (and is retried next run).

    ``latency_s`` is the wall time of the call that produced it: one request for an API backend, the whole batch for
    a local one. ``retries`` counts the attempts an API backend made beyond the first.
    """

    text: str | None
    finish_reason: str | None
    tokens_in: int | None
    tokens_out: int | None
    latency_s: float
    cost: float | None = None
    error: str | None = None
    retries: int = 0
    #: The generated tokens with their most likely alternatives, as JSON ``[[token, [[alternative, logprob],
    #: ...]], ...]``, when the prompt asked for ``top_logprobs`` and the backend reports them; None otherwise.
    logprobs: str | None = None

    def __post_init__(self) -> None:
        # every text a backend produces (answer, error, finish reason) passes here before it is stored, logged,
        # scored, shown or sent to a judge: an API key a provider echoed back is masked (see kgprobe.secrets)
        for name in ("text", "error", "finish_reason"):
            value = getattr(self, name)
            if value:
                object.__setattr__(self, name, mask_secrets(value))
        if self.logprobs and _echoes_secret(self.logprobs):
            # a key split over several tokens is found only in their joined text; the alternatives are dropped with it
            object.__setattr__(self, "logprobs", None)

    @property
    def ok(self) -> bool:
        """True for a response, False for a failure."""
        return self.error is None

    @classmethod
    def failure(cls, error: str, *, latency_s: float = 0.0, retries: int = 0, cost: float | None = None,
                tokens_in: int | None = None, tokens_out: int | None = None,
                finish_reason: str | None = None) -> Completion:  # fmt: skip
        """A failed request, stored with its error so the next run asks again. A reply that came back without an
        answer (empty, filtered) is a failure too, with the tokens and ``cost`` the provider billed for it, which
        budgets count like any other spending."""
        return cls(text=None, finish_reason=finish_reason, tokens_in=tokens_in, tokens_out=tokens_out,
                   latency_s=latency_s, cost=cost, error=error, retries=retries)


def _echoes_secret(logprobs: str) -> bool:
    """Whether a :attr:`Completion.logprobs` JSON holds a secret, in one token or spread over several."""
    if mask_secrets(logprobs) != logprobs:
        return True
    try:
        joined = "".join(str(tok[0]) for tok in json.loads(logprobs))
    except (ValueError, TypeError, IndexError, KeyError):
        return True  # not what a backend writes: kept only when it can be checked
    return mask_secrets(joined) != joined


@runtime_checkable
class Backend(Protocol):
    """What :func:`run_generation` needs from a model: ``generate`` returns ``params.n`` completions per prompt,
    in prompt order. ``name`` is the backend kind (``reference``, ``transformers``, ``litellm``, ``vllm``)."""

    name: str

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]: ...

    def close(self) -> None: ...


class BaseBackend:
    """Shared behaviour of kgprobe's backends: ``start()`` loads what is expensive (also done by the first
    ``generate``), ``close()`` releases it, and a backend is a context manager that closes itself."""

    name: str = "base"

    def start(self) -> None:
        """Load weights / open clients now rather than on the first ``generate``."""

    def close(self) -> None:
        """Release weights, engines, event loops."""

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        raise NotImplementedError

    def __enter__(self):  # noqa: ANN204 - returns the subclass
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class GenerationSummary:
    """What one :func:`run_generation` call did. Sample counts: ``requested = reused + generated + failed``."""

    model: str
    backend: str
    items: int
    unique_prompts: int
    requested: int
    reused: int
    generated: int
    failed: int
    seconds: float
    tokens_in: int
    tokens_out: int
    retries: int
    cost: float | None
    shards: int

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens of the samples generated by this run."""
        return self.tokens_in + self.tokens_out

    def as_dict(self) -> dict[str, Any]:
        """The counts as a plain dict, e.g. for asset metadata."""
        return {**asdict(self), "tokens": self.tokens}


@dataclass(frozen=True)
class ModelSpec:
    """One validated entry of the config's ``models`` list: its name (the store key), backend kind, the backend's
    config dataclass, the sampling parameters and how many prompts go to the backend per call."""

    name: str
    backend: str
    config: Any
    params: SamplingParams = field(default_factory=SamplingParams)
    batch_size: int = 32
    #: Question groups this model answers per partition (a slice for a slow model), overriding the suite's and
    #: the ``generation`` section's limit; None: theirs.
    limit: int | None = None
    #: Dollars this model may spend in all, over every run (the response store's recorded costs); generation stops
    #: cleanly before passing it. None: no limit.
    max_cost_usd: float | None = None
