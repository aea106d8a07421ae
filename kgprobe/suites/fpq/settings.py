"""The ``suites.fpq`` section of the project config: KG-FPQ's settings model, which
:class:`kgprobe.config.SuitesConfig` embeds and :class:`~kgprobe.suites.fpq.suite.FPQSuite` names as its
``Settings``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Required

from pydantic import BeforeValidator, ConfigDict, Field, ValidationInfo, with_config
from typing_extensions import TypedDict  # pydantic needs this TypedDict before Python 3.12

from kgprobe.errors import ConfigError
from kgprobe.suites.fpq.edits import ALL_METHODS as FPQ_METHODS
from kgprobe.suites.fpq.edits import HOP_SAMPLING, SEARCH_BUDGET
from kgprobe.suites.settings import Bool as _Bool
from kgprobe.suites.settings import ConfigPath as _ConfigPath
from kgprobe.suites.settings import Int as _Int
from kgprobe.suites.settings import KGName as _KGName
from kgprobe.suites.settings import Section as _Section
from kgprobe.suites.settings import confined
from kgprobe.suites.settings import resolve_path as _resolve_path
from kgprobe.yaml_io import load_yaml

__all__ = ["FPQDomain", "FPQSettings"]


@with_config(ConfigDict(extra="forbid", use_attribute_docstrings=True))
class FPQDomain(TypedDict, total=False):
    """A question domain: subjects with one of ``types``, optionally limited in their relations."""

    types: Required[Annotated[list[str], Field(min_length=1)]]
    """Type labels or keys of the domain's subjects."""
    allow_relations: list[str] | None
    """Only these relation keys."""
    deny_relations: list[str]
    """Never these relation keys."""


def _domains(value: Any, info: ValidationInfo) -> Any:
    # A file name stands for its YAML content, and a bare list of types for {types: [...]}, so that every domain
    # reaches DomainSpec.from_config as one kind of mapping.
    if isinstance(value, (str, os.PathLike)):
        path = confined(_resolve_path(value, info), info)
        if not path.is_file():
            raise ValueError(f"domains file {path} not found; give a mapping of domain -> types or a YAML file of one")
        try:
            value = load_yaml(path.read_text(encoding="utf-8"), what=f"domains file {path}")
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc
    if isinstance(value, Mapping):
        if not value:
            raise ValueError("map at least one domain to its entity types")
        return {k: {"types": v} if isinstance(v, list) else v for k, v in value.items()}
    return value


class FPQSettings(_Section):
    """The ``suites.fpq`` section (KG-FPQ): KG, domains (types and relation lists), sample size, edit methods, question
    writing. ``domains`` and ``templates`` may be YAML files next to the config; after validation ``domains`` maps
    each domain to a plain ``{types, allow_relations?, deny_relations?}`` mapping and ``templates`` is a path."""

    kg: _KGName = Field(None, validate_default=True)
    """The KG to draw true triples from (default: the first one under kgs)."""
    domains: Annotated[
        dict[str, FPQDomain],
        BeforeValidator(_domains, json_schema_input_type=str | dict[str, list[str] | FPQDomain]),
    ]
    """Domain -> entity types (or a mapping with types, allow_relations, deny_relations), or a YAML file of that."""
    n_per_domain: _Int = Field(100, ge=1)
    """True triples sampled per domain."""
    methods: tuple[Literal[FPQ_METHODS], ...] = Field(FPQ_METHODS, min_length=1)
    """Edit methods: NSC, NDC, NNSC, NNDC, NNSR, NNDR."""
    max_hops: _Int = Field(5, ge=1)
    """NSC/NDC look for the false object within this many hops of the subject; NN* beyond it."""
    questions: Literal["templates"] = "templates"
    """How questions are written: templates (LLM-written questions need the generation stage)."""
    templates: _ConfigPath
    """A YAML file of per-relation yn / wh templates, relative to the config file."""
    formats: tuple[Literal["yn", "wh"], ...] = Field(("yn", "wh"), min_length=1)
    """Question formats: yn (Yes-No) and/or wh."""
    directed: _Bool = True
    """Hops follow edge direction (head -> tail from the subject), as the paper's released paths do."""
    hop_sampling: Literal[HOP_SAMPLING] = "uniform_hop"
    """NSC/NDC: draw the hop first, then an object at it (uniform_hop), or uniformly over all candidates."""
    search_budget: _Int | None = Field(SEARCH_BUDGET, ge=1)
    """Adjacency entries one subject's hop search may scan on a large KG (more than 64 times this many entries);
    beyond it the farther candidates are drawn from the method's pool and their hops verified. null: exact search
    on every KG, whose time per subject grows with the KG."""
    premise_check: Literal["kg", "paper"] = "kg"
    """kg: reject an edit whose false object the KG already links to the subject (through another relation, or by
    the name of another object of the relation); paper: keep every edit drawn, as KG-FPQ does."""
    limit: _Int | None = Field(None, ge=1)
    """True triples asked per closed-book partition, each with all its questions (default: generation.limit)."""
    grounded_limit: _Int | None = Field(None, ge=1)
    """Like limit, for KG-grounded partitions (default: limit, then generation.grounded_limit)."""
