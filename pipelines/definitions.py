"""The code location: every stage's assets and checks, the resources, and the jobs.

``dagster dev`` and ``dagster job launch`` find it through ``[tool.dagster]`` in pyproject.toml. The project config
comes from ``KGPROBE_CONFIG`` (default ``examples/sample.yaml``); the warehouse path from ``KGPROBE_WAREHOUSE`` or
the config's ``warehouse`` key.
"""

from __future__ import annotations

import os

import dagster as dg

from assets import fpq, generate, ingest, perturb, report, score, subgraph
from kgprobe.config import DEFAULT_CONFIG, ProjectConfig, load_config
from kgprobe.errors import ConfigError
from pipelines.jobs import all_jobs
from pipelines.partitions import build_partitions
from resources import ProjectResource, WarehouseResource


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


def build_definitions(config_path: str | None = None) -> dg.Definitions:
    """Definitions for one project config (tests build them for temporary configs)."""
    config_path = config_path or os.environ.get("KGPROBE_CONFIG", DEFAULT_CONFIG)
    parts = build_partitions(_config(config_path))
    gen_assets, gen_checks = generate.build(parts)
    perturb_assets, perturb_checks = perturb.build(parts)
    score_assets, score_checks = score.build(parts)
    return dg.Definitions(
        assets=[*ingest.ASSETS, *subgraph.ASSETS, *fpq.ASSETS, *perturb.ASSETS, *perturb_assets, *gen_assets,
                *score_assets, *report.ASSETS],
        asset_checks=[*ingest.CHECKS, *subgraph.CHECKS, *fpq.CHECKS, *perturb_checks, *gen_checks, *score_checks],
        jobs=all_jobs(parts),
        resources={
            "project": ProjectResource(config_path=config_path),
            "warehouse": WarehouseResource(path=_warehouse_path(config_path)),
        },
    )


defs = build_definitions()
