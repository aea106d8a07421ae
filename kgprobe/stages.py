"""Which shared stages a project config needs: the subgraph stage (queries, k-hop, PPR), the perturbed subgraphs,
the triple scorer and the KG similarity.

A stage runs only when an enabled suite or a grounded lane reads it, so a config with KG-FPQ and GraphEval answered
closed book loads its KG, writes its questions and asks the models, with no subgraph, no DistMult training and no
perturbation. The Dagster code location defines only the assets and jobs :func:`needed_stages` names, so a config
that validates never fails later for want of a stage it did not ask for.

    >>> s = needed_stages(cfg)
    >>> s.subgraphs, s.scorer, sorted(s.grounded_suites)
    (False, False, [])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgprobe.suites import SUITES

__all__ = ["Stages", "grounded_model_names", "needed_stages", "perturbation_enabled"]


@dataclass(frozen=True)
class Stages:
    """The stages one config needs, and why (``reasons``: stage -> the sentence that says which suite reads it)."""

    grounded_suites: frozenset[str] = frozenset()
    """Enabled, groundable suites that get a grounded lane."""
    grounded_models: tuple[str, ...] = ()
    """Models that answer with KG context."""
    subgraphs: bool = False
    """queries -> khop_subgraphs -> ppr_subgraphs."""
    perturb: bool = False
    """perturbed_subgraphs (its ``none`` partition is the clean context)."""
    similarity: bool = False
    """kg_similarity over the perturbed levels."""
    scorer: bool = False
    """The triple scorer s_G (RR perturbations and the similarity read it)."""
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def grounded(self) -> bool:
        """Whether any suite answers with KG context."""
        return bool(self.grounded_suites)


def perturbation_enabled(cfg) -> bool:
    """Whether the config grounds suites in KG context: a ``perturbation`` section that is not ``none``."""
    raw = cfg.sections.get("perturbation", "none") if "perturbation" in cfg.sections else "none"
    return not (isinstance(raw, str) and raw.strip().lower() == "none")


def grounded_model_names(cfg) -> list[str]:
    """The models that answer with KG context: ``generation.grounded_models`` (``[]``: none), else every model."""
    chosen = cfg.generation.grounded_models
    return [m.name for m in cfg.models] if chosen is None else list(chosen)


def needed_stages(cfg) -> Stages:
    """The stages ``cfg`` needs (see :class:`Stages`); ``None`` (a broken config) needs none."""
    if cfg is None:
        return Stages()
    enabled = [s for s in SUITES.values() if s.configured(cfg)]
    models = grounded_model_names(cfg) if perturbation_enabled(cfg) else []
    grounded = frozenset(s.name for s in enabled if s.groundable) if models else frozenset()
    reasons: dict[str, str] = {}
    readers = sorted(s.name for s in enabled if "ppr_subgraphs" in s.upstream)
    if readers:
        reasons["subgraphs"] = f"suite(s) {', '.join(readers)} read the PPR subgraphs"
    if grounded:
        reasons["subgraphs"] = reasons.get("subgraphs") or f"grounded suite(s) {', '.join(sorted(grounded))} read them"
        reasons["perturb"] = f"models {', '.join(models)} answer {', '.join(sorted(grounded))} with KG context"
    methods = tuple(cfg.perturbation.methods) if grounded else ()
    if methods:
        reasons["similarity"] = f"perturbation methods {', '.join(methods)}"
        reasons["scorer"] = "the KG similarity (and RR perturbations) score triples with it"
    return Stages(grounded_suites=grounded, grounded_models=tuple(models) if grounded else (),
                  subgraphs="subgraphs" in reasons, perturb=bool(grounded), similarity=bool(methods),
                  scorer=bool(methods), reasons=reasons)
