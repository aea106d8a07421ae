"""Dagster resources of kgprobe: the project config, the warehouse, and the models a run has loaded."""

from __future__ import annotations

from resources.generation import ModelPool
from resources.project import ProjectResource
from resources.warehouse import WarehouseResource

__all__ = ["ModelPool", "ProjectResource", "WarehouseResource"]
