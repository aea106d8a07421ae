"""Models kept loaded from one run to the next within one process (``kgprobe run``'s chain).

Outside :func:`keep_models_loaded` every run builds its own :class:`~kgprobe.generation.BackendPool` and embedder
and drops them when it ends, as Dagster's resources do. Inside it, every run of this process asks one shared pool and
one embedder per (path, device), so SmolLM2 (or any CPU model) and the sentence embedder load once for the whole
chain instead of once per run that needs them. A model on a GPU is still released at the end of each run (the next
run may need the memory for another model), as are vLLM engines.

    >>> with keep_models_loaded():
    ...     for job, partition in steps:
    ...         execute(job, partition)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from kgprobe.generation import BackendPool

__all__ = ["keep_models_loaded", "shared_embedder", "shared_pool", "stays_loaded"]

_STATE: dict[str, Any] = {}


@contextlib.contextmanager
def keep_models_loaded() -> Iterator[BackendPool]:
    """While open, runs in this process share one model pool (and embedders); closed on exit."""
    if _STATE:  # nested: the outer one owns them
        yield _STATE["pool"]
        return
    pool = BackendPool()
    _STATE.update(pool=pool, embedders={})
    try:
        yield pool
    finally:
        _STATE.clear()
        pool.close()


def shared_pool() -> BackendPool | None:
    """The pool runs share now, or None outside :func:`keep_models_loaded`."""
    return _STATE.get("pool")


def shared_embedder(path: str | None, device: str) -> Any:
    """The embedder runs share for ``(path, device)`` (made on first use), or None outside
    :func:`keep_models_loaded`."""
    if not _STATE:
        return None
    from kgprobe.embedding import Embedder

    embedders = _STATE["embedders"]
    if (path, device) not in embedders:
        embedders[(path, device)] = Embedder(path, device=device)
    return embedders[(path, device)]


def stays_loaded(spec: Any, backend: Any) -> bool:
    """Whether a shared backend may stay loaded after its run: reference backends and transformers models on the
    CPU (or not loaded yet); not a vLLM engine, a model on a GPU, or an API client."""
    name = getattr(backend, "name", "")
    if name == "transformers":
        device = getattr(backend, "device", None)
        return device is None or getattr(device, "type", str(device)) == "cpu"
    return name == "reference"
