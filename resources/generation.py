"""Generation backends as Dagster resources, and the factory the generation assets use for config-listed models.

Each resource builds its kgprobe backend in ``setup_for_execution`` (weights load, engine starts) and releases it in
``teardown_after_execution``; ``.backend`` is the started backend to hand to ``kgprobe.generation.run_generation``.
API keys are never resource values: ``LiteLLMModel.api_key_env`` names the environment variable that holds one.

(No ``from __future__ import annotations`` here: Dagster reads the field annotations at definition time.)
"""

from typing import Any, Optional

import dagster as dg
from pydantic import PrivateAttr

from kgprobe.generation.backends import HFBackend, HFConfig, LiteLLMBackend, LiteLLMConfig, ReferenceBackend, ReferenceConfig, VLLMBackend, VLLMConfig
from kgprobe.generation import Backend, BackendPool, Completion, Prompt, SamplingParams, make_backend, model_specs
from resources.session import shared_pool, stays_loaded

__all__ = ["GenerationBackend", "LiteLLMModel", "ModelPool", "ReferenceModel", "TransformersModel", "VLLMModel",
           "backend_from_config"]


class ModelPool(dg.ConfigurableResource):
    """The models a run has loaded, each loaded the first time a step of the run asks for it and released when the
    run ends (``teardown_after_execution``). With the in-process executor of the ``closed_book`` and ``grounded``
    jobs, a model that answers every suite and judges too is loaded once per run, not once per asset; within
    :func:`resources.session.keep_models_loaded` (``kgprobe run``) CPU models stay loaded from run to run."""

    _pool: Any = PrivateAttr(default=None)

    @property
    def pool(self) -> BackendPool:
        """The run's :class:`~kgprobe.generation.BackendPool` (made on first use outside a Dagster run too)."""
        if self._pool is None:
            self._pool = BackendPool()
        return self._pool

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # inside `kgprobe run`'s chain (resources.session.keep_models_loaded) runs share one pool
        shared = shared_pool()
        self._pool = shared if shared is not None else BackendPool()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._pool is not None:
            if self._pool is shared_pool():
                self._pool.release(stays_loaded)  # CPU models stay for the next run; GPU ones free their memory
            else:
                self._pool.close()
            self._pool = None


def backend_from_config(model_entry: dict, defaults: Optional[dict] = None) -> Backend:
    """The (not yet started) kgprobe backend of one ``models:`` entry of the project config; raises ConfigError
    naming the model and key when the entry is invalid. Use it as a context manager so it is closed:

        with backend_from_config({"name": "oracle", "backend": "reference", "kind": "oracle"}) as backend: ...
    """
    return make_backend(model_specs([model_entry], defaults=defaults)[0])


class GenerationBackend(dg.ConfigurableResource):
    """A kgprobe generation backend, built and started for the run, closed after it."""

    _backend: Any = PrivateAttr(default=None)

    def build(self) -> Backend:
        """The kgprobe backend of this resource's config (subclasses say which)."""
        raise NotImplementedError

    @property
    def backend(self) -> Backend:
        """The started backend (built on first use outside a Dagster run, e.g. in a notebook)."""
        if self._backend is None:
            self._backend = self.build()
            self._backend.start()
        return self._backend

    def generate(self, prompts: list[Prompt], params: SamplingParams) -> list[list[Completion]]:
        """``params.n`` completions per prompt, in prompt order."""
        return self.backend.generate(prompts, params)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._backend = self.build()
        self._backend.start()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None


class ReferenceModel(GenerationBackend):
    """Weightless responders: ``oracle`` (answers from the gold label), ``always-yes``, ``always-no``, ``random``."""

    kind: str = "oracle"

    def build(self) -> Backend:
        return ReferenceBackend(ReferenceConfig(kind=self.kind))


class TransformersModel(GenerationBackend):
    """Local weights with transformers: a HF folder, ``gguf:<file>``, or ``smollm2-135m-instruct``."""

    model_id: str = "smollm2-135m-instruct"
    device: str = "auto"
    dtype: str = "auto"
    num_threads: Optional[int] = None
    cache_dir: Optional[str] = None

    def build(self) -> Backend:
        return HFBackend(HFConfig(model_id=self.model_id, device=self.device, dtype=self.dtype,
                                  num_threads=self.num_threads, cache_dir=self.cache_dir))


class LiteLLMModel(GenerationBackend):
    """An API or OpenAI-compatible server through litellm; ``api_key_env`` is the NAME of the key's variable."""

    model_id: str
    api_base: Optional[str] = None
    api_key_env: Optional[str] = None
    max_concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    n_mode: str = "auto"

    def build(self) -> Backend:
        return LiteLLMBackend(LiteLLMConfig(
            model_id=self.model_id, api_base=self.api_base, api_key_env=self.api_key_env,
            max_concurrency=self.max_concurrency, timeout_s=self.timeout_s, max_retries=self.max_retries,
            backoff_base_s=self.backoff_base_s, backoff_max_s=self.backoff_max_s, n_mode=self.n_mode))


class VLLMModel(GenerationBackend):
    """Offline vLLM on the GPU(s) of this machine (``pip install 'kgprobe[gpu]'``)."""

    model_id: str
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    max_model_len: Optional[int] = None
    dtype: str = "auto"
    enforce_eager: bool = False
    trust_remote_code: bool = False

    def build(self) -> Backend:
        return VLLMBackend(VLLMConfig(
            model_id=self.model_id, tensor_parallel_size=self.tensor_parallel_size,
            gpu_memory_utilization=self.gpu_memory_utilization, max_model_len=self.max_model_len, dtype=self.dtype,
            enforce_eager=self.enforce_eager, trust_remote_code=self.trust_remote_code))
