"""The code location: every stage's assets and checks, the resources, and the jobs.

``dagster dev`` and ``dagster job launch`` find it through ``[tool.dagster]`` in pyproject.toml. The project config
is the file :func:`kgprobe.config.config_path` names (``KGPROBE_CONFIG``, default ``examples/sample.yaml``), as for
``kgprobe run``; the warehouse path comes from ``KGPROBE_WAREHOUSE`` or the config's ``warehouse`` key.
"""

from __future__ import annotations

import importlib
import importlib.util
import os

import dagster as dg

from assets import fpq, ingest, okgqa, perturb, report, subgraph, suites
from kgprobe.config import ProjectConfig, generation_models, load_config
from kgprobe.config import config_path as resolve_config_path
from kgprobe.errors import ConfigError
from pipelines.jobs import all_jobs
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


def _gpu_models(cfg: ProjectConfig | None) -> frozenset[str]:
    """Models that run on a GPU: vLLM ones, and local ones whose config asks for a CUDA device."""
    if cfg is None:
        return frozenset()
    return frozenset(m.name for m in generation_models(cfg)
                     if m.backend == "vllm" or str(getattr(m.config, "device", "")).startswith("cuda"))


#: Suites whose own assets are always defined: the subgraph stage reads them (KG-FPQ's subjects and OKGQA's
#: questions become retrieval queries), and they write an empty table when their suite is not configured.
_ALWAYS = ("fpq", "okgqa")


def _suite_modules(enabled) -> list:
    """The assets modules (``assets/<suite>.py``: ``ASSETS``, ``CHECKS``, ``ITEM_CHECKS``, or ``build(parts)`` for
    partitioned ones) of the enabled suites that have stages of their own; KG-FPQ's is always loaded (the subgraph
    stage reads its triples; OKGQA's likewise)."""
    out = []
    for suite in enabled:
        if suite.name in _ALWAYS or importlib.util.find_spec(f"assets.{suite.name}") is None:
            continue
        out.append(importlib.import_module(f"assets.{suite.name}"))
    return out


def build_definitions(config_path: str | None = None) -> dg.Definitions:
    """Definitions for one project config (tests build them for temporary configs); without one, the file
    :func:`kgprobe.config.config_path` names."""
    config_path = str(resolve_config_path(config_path))
    cfg = _config(config_path)
    parts = build_partitions(cfg)
    perturb_assets, perturb_checks = perturb.build(parts)
    lane_assets, lane_checks = suites.build(parts, cfg)
    enabled = suites.enabled_suites(cfg)
    item_checks = fpq.ITEM_CHECKS if any(s.name == "fpq" for s in enabled) else []
    own = _suite_modules(enabled)
    # a suite module whose assets are partitioned (GraphEval's hidden-state judge, per model) builds them here
    built = [m.build(parts) for m in own if hasattr(m, "build")]
    return dg.Definitions(
        assets=[*ingest.ASSETS, *subgraph.ASSETS, *fpq.ASSETS, *okgqa.ASSETS,
                *(a for m in own for a in getattr(m, "ASSETS", ())),
                *(a for assets_, _ in built for a in assets_),
                *perturb.ASSETS, *perturb_assets, *lane_assets, *report.build_report_assets(cfg)],
        asset_checks=[*ingest.CHECKS, *subgraph.CHECKS, *fpq.CHECKS, *getattr(okgqa, "CHECKS", []), *item_checks,
                      *(c for m in own for c in (*getattr(m, "CHECKS", ()), *getattr(m, "ITEM_CHECKS", ()))),
                      *(c for _, checks_ in built for c in checks_),
                      *perturb_checks, *lane_checks],
        jobs=all_jobs(parts, enabled, grounded=suites.grounded_enabled(cfg), gpu_models=_gpu_models(cfg)),
        resources={
            "project": ProjectResource(config_path=config_path),
            "warehouse": WarehouseResource(path=_warehouse_path(config_path)),
            "models": ModelPool(),
            "embedder": EmbedderResource(),
        },
    )


defs = build_definitions()
