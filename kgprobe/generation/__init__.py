"""Generation: the records that travel between the question stages and the models (:mod:`.records`), the
resumable runner (:mod:`.runner`), the response store (:mod:`.store`), the papers' prompt templates
(:mod:`.prompts`) and the backends (:mod:`.backends`: reference, transformers, litellm, vLLM).

The records and the runner's names are importable from here, as before the package was split:

    >>> from kgprobe.generation import Prompt, SamplingParams, make_backend, model_specs, run_generation
"""

from __future__ import annotations

from kgprobe.generation.records import (
    BACKEND_KINDS,
    DEFAULT_BATCH_SIZE,
    Backend,
    BackendError,
    BaseBackend,
    BudgetExceeded,
    Completion,
    GenerationError,
    GenerationSummary,
    ModelSpec,
    Prompt,
    SamplingParams,
)
from kgprobe.generation.runner import BackendPool, make_backend, model_specs, run_generation

__all__ = [
    "BACKEND_KINDS",
    "DEFAULT_BATCH_SIZE",
    "Backend",
    "BackendError",
    "BackendPool",
    "BaseBackend",
    "BudgetExceeded",
    "Completion",
    "GenerationError",
    "GenerationSummary",
    "ModelSpec",
    "Prompt",
    "SamplingParams",
    "make_backend",
    "model_specs",
    "run_generation",
]
