"""Statement templates per relation: ``{head} … {tail}.``, from the project config, from GraphEval's DBpedia
templates, or, for any other relation, a fallback from the relation's label that is flagged as such.

Sources, in the order they win:

1. ``config``: a YAML or JSON mapping ``relation key -> template`` named by the suite's ``templates`` setting;
2. ``dbpedia``: GraphEval's 633 curated DBpedia templates (its ``answers.json``: ``relation name -> template``),
   named by ``dbpedia_templates``. With ``dbpedia_match: iri`` (the default) a relation matches when its key is the
   template's name or a DBpedia ontology / property IRI ending in it (``http://dbpedia.org/ontology/birthPlace``,
   ``dbo:birthPlace``); with ``local_name`` also when the last path segment of a simple key is the name
   (FB15k-237's ``/film/film/genre`` takes ``genre``), which a person must review (every such match is listed in
   the metadata as ``local_name_matches``: "Hampshire is located in the state of Portsmouth." is how a wrong one
   reads): compound keys
   (``a./b/c``, a path through an intermediate node) never match, because their last segment names the end of
   the path, not the relation;
3. ``proposed``: a template proposed from the relation's key and label (:func:`kgprobe.kg.verbalise.propose_templates`,
   passed as ``proposed``), listed with example statements for review;
4. ``fallback``: ``{head} <relation label> {tail}.``, listed in the items' metadata so that someone can write a
   better one.

A template must hold ``{head}`` and ``{tail}`` once each; a config template that does not is an error, a DBpedia
one is skipped (and counted).

    >>> split_template("The capital of {head} is {tail}.")
    ('The capital of ', True, ' is ', '.')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from kgprobe.errors import ConfigError

__all__ = ["SOURCES", "RelationTemplate", "load_template_file", "resolve_templates", "split_template",
           "template_table"]

#: Where a relation's template came from.
SOURCES: tuple[str, ...] = ("config", "dbpedia", "proposed", "fallback")

_DBPEDIA_IRI = re.compile(r"^(?:https?://dbpedia\.org/(?:ontology|property)/|dbo:|dbp:)(?P<name>[^/#]+)$")


@dataclass(frozen=True)
class RelationTemplate:
    """The statement template of one relation and where it came from."""

    relation: int
    key: str
    label: str
    template: str
    source: str


def split_template(template: str) -> tuple[str, bool, str, str]:
    """``(before, head_first, between, after)`` of a template with ``{head}`` and ``{tail}`` once each, so that a
    statement is ``before + first label + between + second label + after`` (rendered in SQL without a label's
    braces ever being read as a placeholder). Raises ValueError otherwise."""
    if template.count("{head}") != 1 or template.count("{tail}") != 1:
        raise ValueError(f"a statement template needs {{head}} and {{tail}} once each, got {template!r}")
    h, t = template.index("{head}"), template.index("{tail}")
    first, second = (h, t) if h < t else (t, h)
    return template[:first], h < t, template[first + 6:second], template[second + 6:]


def load_template_file(path: str | Path, *, role: str = "templates") -> dict[str, str]:
    """A ``relation -> template`` mapping from a YAML or JSON file (``role`` names the setting in errors)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"grapheval {role}: file {path} not found; give a YAML or JSON mapping relation -> template")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            from kgprobe.yaml_io import BoundedLoader

            data = yaml.load(text, Loader=BoundedLoader)  # noqa: S506 - a SafeLoader
    except RecursionError:
        raise ConfigError(f"grapheval {role}: {path} nests too deeply to read") from None
    except Exception as exc:
        raise ConfigError(f"grapheval {role}: {path} is not valid {path.suffix.lstrip('.') or 'YAML'}: {exc}") from exc
    if not isinstance(data, Mapping) or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError(f"grapheval {role}: {path} must map each relation key to one template string "
                          "such as \"{head} was born in {tail}.\"")
    return {str(k): v for k, v in data.items()}


def _dbpedia_name(key: str, match: str) -> str | None:
    m = _DBPEDIA_IRI.match(key)
    if m:
        return m.group("name")
    if match == "local_name" and "./" not in key:
        tail = re.split(r"[/#]", key.rstrip("/"))[-1]
        return tail or None
    return key


def resolve_templates(relations: Sequence[tuple[int, str, str]], *, config: Mapping[str, str] | None = None,
                      dbpedia: Mapping[str, str] | None = None, dbpedia_match: str = "iri",
                      config_file: str = "templates",
                      proposed: Mapping[str, str] | None = None) -> tuple[list[RelationTemplate], dict[str, Any]]:  # fmt: skip
    """The template of every relation ``(id, key, label)`` and metadata: counts per source, the relations on the
    fallback (key and label, to write better templates for), and DBpedia templates skipped as malformed.

    Raises :class:`~kgprobe.errors.ConfigError` for a config template without ``{head}`` and ``{tail}`` once each.
    """
    if dbpedia_match not in ("iri", "local_name"):
        raise ConfigError(f"grapheval dbpedia_match must be iri or local_name, got {dbpedia_match!r}")
    config = dict(config or {})
    for key, template in config.items():
        try:
            split_template(template)
        except ValueError as exc:
            raise ConfigError(f"grapheval {config_file}: relation {key!r}: {exc}") from exc
    usable, skipped = {}, []
    for name, template in (dbpedia or {}).items():
        try:
            split_template(template)
            usable[name] = template
        except ValueError:
            skipped.append(name)
    proposals = {}
    for key, template in (proposed or {}).items():
        try:
            split_template(template)
            proposals[key] = template
        except ValueError:
            continue
    out, fallback, local = [], [], []
    for rid, key, label in relations:
        name = _dbpedia_name(key, dbpedia_match)
        if key in config:
            out.append(RelationTemplate(rid, key, label, config[key], "config"))
        elif name is not None and name in usable:
            out.append(RelationTemplate(rid, key, label, usable[name], "dbpedia"))
            if not _DBPEDIA_IRI.match(key) and name != key:
                local.append({"relation_key": key, "relation_label": label, "dbpedia_name": name,
                              "template": usable[name]})
        elif key in proposals:
            out.append(RelationTemplate(rid, key, label, proposals[key], "proposed"))
        else:
            text = " ".join(str(label or key).split())
            out.append(RelationTemplate(rid, key, label, f"{{head}} {text} {{tail}}.", "fallback"))
            fallback.append({"relation_key": key, "relation_label": label})
    counts = {s: sum(1 for t in out if t.source == s) for s in SOURCES}
    unused = sorted(set(config) - {key for _, key, _ in relations})
    return out, {"template_sources": counts, "fallback_relations": fallback, "dbpedia_templates_skipped": skipped,
                 "config_templates_unused": unused, "local_name_matches": local}


def template_table(templates: Sequence[RelationTemplate]) -> pa.Table:
    """The templates as the Arrow table the statement SQL joins (``relation``, ``template``, ``source``, and the
    template split by :func:`split_template`: ``pre``, ``head_first``, ``mid``, ``post``)."""
    parts = [split_template(t.template) for t in templates]
    return pa.table({
        "relation": pa.array([t.relation for t in templates], pa.int64()),
        "template": pa.array([t.template for t in templates], pa.string()),
        "source": pa.array([t.source for t in templates], pa.string()),
        "pre": pa.array([p[0] for p in parts], pa.string()),
        "head_first": pa.array([p[1] for p in parts], pa.bool_()),
        "mid": pa.array([p[2] for p in parts], pa.string()),
        "post": pa.array([p[3] for p in parts], pa.string()),
    })
