"""The project config as a resource, so every asset reads the same validated YAML file."""

from __future__ import annotations

import dagster as dg

from kgprobe.config import DEFAULT_CONFIG, ProjectConfig, load_config

__all__ = ["ProjectResource"]


class ProjectResource(dg.ConfigurableResource):
    """Path of the project YAML config (default ``examples/sample.yaml``, or the ``KGPROBE_CONFIG`` variable)."""

    config_path: str = DEFAULT_CONFIG

    def load(self) -> ProjectConfig:
        """The parsed and validated config."""
        return load_config(self.config_path)
