"""Models kept loaded across the runs of one process (``kgprobe run``): one pool, CPU models kept, GPU ones freed."""

from __future__ import annotations

from types import SimpleNamespace

import dagster as dg
import pytest

from kgprobe.generation import model_specs
from resources import EmbedderResource, ModelPool
from resources.session import keep_models_loaded, shared_pool, stays_loaded

ORACLE, RANDOM = model_specs([{"name": "oracle", "backend": "reference", "kind": "oracle"},
                              {"name": "random", "backend": "reference", "kind": "random"}])


def _run_pool() -> tuple[ModelPool, object]:
    """A ModelPool as a run sets it up, the backend it gives for the oracle, and the pool torn down after."""
    pool = ModelPool()
    pool.setup_for_execution(dg.build_init_resource_context())
    backend = pool.pool.get(ORACLE)
    used = pool.pool
    pool.teardown_after_execution(dg.build_init_resource_context())
    return used, backend


def test_runs_share_one_pool_inside_and_build_their_own_outside() -> None:
    with keep_models_loaded() as kept:
        first_pool, first = _run_pool()
        second_pool, second = _run_pool()
        assert first_pool is second_pool is kept and first is second and kept.loads == 1
        assert shared_pool() is kept
    assert shared_pool() is None
    a_pool, a = _run_pool()
    b_pool, b = _run_pool()
    assert a_pool is not b_pool and a is not b


def test_runs_share_one_embedder_per_path_and_device_inside_only() -> None:
    with keep_models_loaded():
        first, second = EmbedderResource(), EmbedderResource()
        for r in (first, second):
            r.setup_for_execution(dg.build_init_resource_context())
        assert first.get() is second.get()
        assert EmbedderResource(device="cuda").get() is not first.get()
    assert EmbedderResource().get() is not EmbedderResource().get()


@pytest.mark.parametrize(("backend", "kept"), [
    (SimpleNamespace(name="reference"), True),
    (SimpleNamespace(name="transformers", device=None), True),  # not loaded yet
    (SimpleNamespace(name="transformers", device=SimpleNamespace(type="cpu")), True),
    (SimpleNamespace(name="transformers", device=SimpleNamespace(type="cuda")), False),
    (SimpleNamespace(name="vllm"), False),
    (SimpleNamespace(name="litellm"), False),
])
def test_only_cpu_models_stay_loaded_between_runs(backend, kept) -> None:
    assert stays_loaded(ORACLE, backend) is kept


def test_release_closes_what_may_not_stay_and_keeps_the_rest() -> None:
    with keep_models_loaded() as kept:
        oracle, rnd = kept.get(ORACLE), kept.get(RANDOM)
        closed = []
        rnd.close = lambda: closed.append("random")
        assert kept.release(lambda spec, backend: spec.name == "oracle") == ["random"]
        assert closed == ["random"] and kept.get(ORACLE) is oracle and kept.loads == 2
        assert kept.get(RANDOM) is not rnd and kept.loads == 3  # made again when asked again
