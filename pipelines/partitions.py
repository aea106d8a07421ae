"""Partitions, declared once: ``model`` (the config's models) and ``perturbation`` (``none``, ``RS-0.1`` ... ``ED-1.0``).

Both are static dimensions read from the project config when the code location loads. A multi-partition key looks
like ``smollm2-135m|ED-0.3`` (Dagster orders dimensions by name: model, then perturbation).
"""

from __future__ import annotations

from dataclasses import dataclass

import dagster as dg

from kgprobe.config import ProjectConfig, generation_models, generation_settings, perturbation_settings
from kgprobe.errors import ConfigError

MODEL = "model"
PERTURBATION = "perturbation"


@dataclass(frozen=True)
class Partitions:
    """The partition definitions of one project config."""

    model: dg.StaticPartitionsDefinition
    perturbation: dg.StaticPartitionsDefinition
    model_perturbation: dg.MultiPartitionsDefinition


def build_partitions(cfg: ProjectConfig | None) -> Partitions:
    """Partitions for ``cfg``; without a valid config, a placeholder model so the code location still loads."""
    models = [m.name for m in generation_models(cfg)] if cfg is not None else []
    levels = perturbation_settings(cfg).keys if cfg is not None else ["none"]
    chosen = generation_settings(cfg)["grounded_models"] if cfg is not None else None
    grounded = models if chosen is None else chosen  # [] grounds no model
    unknown = sorted(set(grounded) - set(models))
    if unknown:
        raise ConfigError(f"generation.grounded_models: {unknown} are not in models {models}")
    model = dg.StaticPartitionsDefinition(models or ["no-models-configured"])
    perturbation = dg.StaticPartitionsDefinition(levels)
    grounded_model = dg.StaticPartitionsDefinition(grounded or ["no-models-configured"])
    return Partitions(model, perturbation, dg.MultiPartitionsDefinition({MODEL: grounded_model, PERTURBATION: perturbation}))
