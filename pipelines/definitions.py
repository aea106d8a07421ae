"""The code location: every stage's assets and checks, the resources, and the jobs.

``dagster dev`` and ``dagster job launch`` find it through ``[tool.dagster]`` in pyproject.toml. The project config
comes from ``KGPROBE_CONFIG`` (default ``examples/sample.yaml``); the warehouse path from ``KGPROBE_WAREHOUSE`` or
the config's ``warehouse`` key.
"""

from __future__ import annotations

import os

import dagster as dg

from assets import fpq, ingest, subgraph
from kgprobe.config import DEFAULT_CONFIG, load_config
from kgprobe.errors import ConfigError
from pipelines.jobs import all_jobs
from resources import ProjectResource, WarehouseResource


def _warehouse_path(config_path: str) -> str:
    if os.environ.get("KGPROBE_WAREHOUSE"):
        return os.environ["KGPROBE_WAREHOUSE"]
    try:
        return str(load_config(config_path).warehouse)
    except ConfigError:
        # a broken config must not break the code location: the assets report the error when they run
        return "warehouse/kgprobe.duckdb"


def build_definitions(config_path: str | None = None) -> dg.Definitions:
    """Definitions for one project config (tests build them for temporary configs)."""
    config_path = config_path or os.environ.get("KGPROBE_CONFIG", DEFAULT_CONFIG)
    return dg.Definitions(
        assets=[*ingest.ASSETS, *subgraph.ASSETS, *fpq.ASSETS],
        asset_checks=[*ingest.CHECKS, *subgraph.CHECKS, *fpq.CHECKS],
        jobs=all_jobs(),
        resources={
            "project": ProjectResource(config_path=config_path),
            "warehouse": WarehouseResource(path=_warehouse_path(config_path)),
        },
    )


defs = build_definitions()
