"""Dagster resources of kgprobe: the project config, the warehouse, and (later) generation backends."""

from __future__ import annotations

from resources.project import ProjectResource
from resources.warehouse import WarehouseResource

__all__ = ["ProjectResource", "WarehouseResource"]
