"""The project config as a resource, so every asset reads the same validated YAML file."""

from __future__ import annotations

import dagster as dg

from kgprobe.config import ProjectConfig, load_config
from kgprobe.config import config_path as resolve_config_path

__all__ = ["ProjectResource"]


class ProjectResource(dg.ConfigurableResource):
    """The project YAML config: ``config_path``, else the file :func:`kgprobe.config.config_path` names
    (``KGPROBE_CONFIG``, else ``examples/sample.yaml``), the same rule as ``kgprobe run --config``."""

    config_path: str | None = None

    def load(self) -> ProjectConfig:
        """The parsed and validated config; raises :class:`kgprobe.errors.ConfigError` naming the file and key."""
        return load_config(resolve_config_path(self.config_path))
