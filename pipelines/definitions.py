"""The code location: the assets and checks of the stages the project config needs, the resources, and the jobs.

``kgprobe ui`` (``dg dev``) finds it through ``[tool.dg]`` in pyproject.toml, ``dagster job launch`` through
``[tool.dagster]``. The project config is the file :func:`kgprobe.config.config_path` names (``KGPROBE_CONFIG``,
default ``examples/sample.yaml``), as for ``kgprobe run``; the warehouse path comes from ``KGPROBE_WAREHOUSE`` or the
config's ``warehouse`` key. Only what the config enables is defined: the ingest stage, the assets, checks, groups and
jobs of its enabled suites, and the shared stages :func:`kgprobe.stages.needed_stages` says they read.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path

import dagster as dg

from assets import ingest, perturb, report, subgraph, suites
from kgprobe.config import (
    ProjectConfig,
    generation_models,
    load_config,
    scoring_settings,
)
from kgprobe.config import config_path as resolve_config_path
from kgprobe.errors import ConfigError
from kgprobe.stages import needed_stages
from pipelines.jobs import GPU_MODELS_ENV, all_jobs
from pipelines.partitions import build_partitions
from resources import EmbedderResource, ModelPool, ProjectResource, WarehouseResource


def _warehouse_path(config_path: str) -> str:
    if os.environ.get("KGPROBE_WAREHOUSE"):
        return os.environ["KGPROBE_WAREHOUSE"]
    try:
        return str(load_config(config_path).warehouse)
    except ConfigError:
        # a broken config must not break the code location: the assets report the error when they run
        return "warehouse/kgprobe.duckdb"


def _config(config_path: str) -> ProjectConfig | None:
    try:
        return load_config(config_path)
    except ConfigError:
        return None


def _machine_has_gpu(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this machine shows a CUDA GPU to its processes (what a ``device: auto`` model then runs on), read
    from the NVIDIA driver's files and ``CUDA_VISIBLE_DEVICES`` rather than by importing torch."""
    environ = os.environ if environ is None else environ
    if environ.get("CUDA_VISIBLE_DEVICES", "x").strip() in ("", "-1"):
        return False
    return Path("/dev/nvidia0").exists() or any(Path("/proc/driver/nvidia/gpus").glob("*"))


def _gpu_models(cfg: ProjectConfig | None, environ: Mapping[str, str] | None = None, *,
                has_gpu: bool | None = None) -> frozenset[str]:
    """Models that run on a GPU: vLLM ones, transformers ones whose ``device`` is ``cuda`` (or ``auto`` on a machine
    with a GPU), and the models ``KGPROBE_GPU_MODELS`` names (comma-separated; a name that is not a configured
    model is an error naming the variable)."""
    if cfg is None:
        return frozenset()
    environ = os.environ if environ is None else environ
    has_gpu = _machine_has_gpu(environ) if has_gpu is None else has_gpu
    specs = generation_models(cfg)
    forced = {n.strip() for n in environ.get(GPU_MODELS_ENV, "").split(",") if n.strip()}
    unknown = sorted(forced - {m.name for m in specs})
    if unknown:
        raise ValueError(f"{GPU_MODELS_ENV}: {', '.join(unknown)} not among the configured models "
                         f"({', '.join(m.name for m in specs) or 'none'})")

    def on_gpu(spec) -> bool:
        device = str(getattr(spec.config, "device", "") or "")
        return (spec.backend == "vllm" or device.startswith("cuda")
                or (spec.backend == "transformers" and device == "auto" and has_gpu))

    return frozenset(m.name for m in specs if m.name in forced or on_gpu(m))


def _gpu_judge(cfg: ProjectConfig | None, gpu_models: frozenset[str]) -> bool:
    """Whether a configured judge is one of ``gpu_models``: then every run that scores loads it onto the GPU."""
    return cfg is not None and any(j.name in gpu_models for j in scoring_settings(cfg).judges)


def _suite_modules(enabled) -> list:
    """The assets modules (``assets/<suite>.py``: ``ASSETS``, ``CHECKS``, ``ITEM_CHECKS``, or ``build(parts)`` for
    partitioned ones) of the enabled suites that have assets of their own; a suite the config does not enable has
    none in the code location (no asset, group, check or job)."""
    return [importlib.import_module(f"assets.{suite.name}") for suite in enabled
            if importlib.util.find_spec(f"assets.{suite.name}") is not None]


def build_definitions(config_path: str | None = None) -> dg.Definitions:
    """Definitions for one project config (tests build them for temporary configs); without one, the file
    :func:`kgprobe.config.config_path` names."""
    config_path = str(resolve_config_path(config_path))
    cfg = _config(config_path)
    parts = build_partitions(cfg)
    stages = needed_stages(cfg)
    # only the shared stages an enabled suite or a grounded lane reads (kgprobe.stages)
    perturb_assets, perturb_checks = (perturb.build(parts, scorer=stages.scorer, similarity=stages.similarity)
                                      if stages.perturb else ([], []))
    lane_assets, lane_checks = suites.build(parts, cfg)
    enabled = suites.enabled_suites(cfg)
    subgraph_assets, subgraph_checks = subgraph.build(s.name for s in enabled) if stages.subgraphs else ([], [])
    own = _suite_modules(enabled)
    # a suite module whose assets are partitioned (GraphEval's hidden-state judge, per model) builds them here
    built = [m.build(parts) for m in own if hasattr(m, "build")]
    gpu = _gpu_models(cfg)
    return dg.Definitions(
        assets=[*ingest.ASSETS, *subgraph_assets,
                *(a for m in own for a in getattr(m, "ASSETS", ())),
                *(a for assets_, _ in built for a in assets_),
                *(perturb.ASSETS if stages.scorer else ()), *perturb_assets, *lane_assets,
                *report.build_report_assets(cfg)],
        asset_checks=[*ingest.CHECKS, *subgraph_checks,
                      *(c for m in own for c in (*getattr(m, "CHECKS", ()), *getattr(m, "ITEM_CHECKS", ()))),
                      *(c for _, checks_ in built for c in checks_),
                      *perturb_checks, *lane_checks],
        jobs=all_jobs(parts, enabled, grounded=stages.grounded_suites, gpu_models=gpu,
                      gpu_judge=_gpu_judge(cfg, gpu), stages=stages),
        resources={
            "project": ProjectResource(config_path=config_path),
            "warehouse": WarehouseResource(path=_warehouse_path(config_path)),
            "models": ModelPool(),
            "embedder": EmbedderResource(),
        },
    )


defs = build_definitions()
