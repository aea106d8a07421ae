"""The project config as a resource, so every asset reads the same validated YAML file."""

from __future__ import annotations

from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from kgprobe.config import ProjectConfig, load_config
from kgprobe.config import config_path as resolve_config_path

__all__ = ["ProjectResource"]


class ProjectResource(dg.ConfigurableResource):
    """The project YAML config: ``config_path``, else the file :func:`kgprobe.config.config_path` names
    (``KGPROBE_CONFIG``, else ``examples/sample.yaml``), the same rule as ``kgprobe run --config``.

    Within a run the file is read and validated once (the first :meth:`load`) and every step of the run sees that
    config; the next run reads the file again, so an edit between runs is picked up."""

    config_path: str | None = None
    _loaded: Any = PrivateAttr(default=None)
    _in_run: bool = PrivateAttr(default=False)

    def load(self) -> ProjectConfig:
        """The parsed and validated config; raises :class:`kgprobe.errors.ConfigError` naming the file and key."""
        if self._loaded is not None:
            return self._loaded
        cfg = load_config(resolve_config_path(self.config_path))
        if self._in_run:
            self._loaded = cfg
        return cfg

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._loaded, self._in_run = None, True

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self._loaded, self._in_run = None, False
