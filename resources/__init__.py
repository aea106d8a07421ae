"""Dagster resources of kgprobe: the project config, the warehouse, the models a run has loaded and its embedder."""

from __future__ import annotations

from resources.embedder import EmbedderResource
from resources.generation import ModelPool
from resources.project import ProjectResource
from resources.warehouse import WarehouseResource

__all__ = ["EmbedderResource", "ModelPool", "ProjectResource", "WarehouseResource"]
