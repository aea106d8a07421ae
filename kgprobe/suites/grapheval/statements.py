"""GraphEval's statements: positives from KG triples, and k negatives per positive made by corrupting the head,
the relation or the tail, each verified false against the KG. Everything runs in DuckDB over whole tables
(anti-joins), attempt by attempt; no Python loop touches a triple.

Positives: per relation a seeded sample of at most ``per_relation`` triples (every triple when None), so a few
huge relations do not dominate (the paper's point about selection bias), rendered with the relation's template
(:mod:`.templates`). A positive whose text equals another positive's is dropped (reason ``duplicate_statement``).

Negatives, k per positive: each slot draws the part to corrupt (uniformly among ``parts``) and a replacement from
a pool: ``typed`` corruption (the default) draws an entity of the replaced entity's primary type (its rarest type),
or, for an untyped entity, another head / tail of the same relation, and a relation used by entities of the head's
type; ``uniform`` draws any entity or relation. A candidate is rejected, first reason that applies, when it is:

* ``unchanged``: the draw gave back the original;
* ``in_kg``: a triple of the KG (closed world: a KG fact is not a negative);
* ``same_label``: the surface form of a KG triple (normalised head label, relation, normalised tail label): it
  states a fact through another entity of the same name, which for a 1-to-1 relation would be a contradiction in
  form only. Checked for every relation, which includes the 1-to-1 ones;
* ``duplicate_text``: the text of a positive statement;
* ``duplicate_negative``: the text of another negative of the same positive.

A rejected slot is drawn again, up to ``max_attempts`` attempts (then ``exhausted``). A positive left without any
negative is not written (its group would score F(τ) alone); one with fewer than k is, and is counted. The draws are
MD5 hashes of (seed, triple, slot, attempt), so a positive's negatives do not depend on which other triples were
sampled.

    >>> result = build_statements(con, StatementOptions(per_relation=5, negatives=3), snapshot_id="s1", seed=0)
    >>> result.items.num_rows, result.reject_counts
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from kgprobe.sql import load_sql
from kgprobe.suites.base import ITEM_SCHEMA
from kgprobe.suites.grapheval.templates import (
    RelationTemplate,
    resolve_templates,
    template_table,
)

__all__ = ["PARTS", "REASONS", "StatementOptions", "StatementSet", "build_statements", "item_schema", "verify_negatives"]

#: The parts of a triple a negative may corrupt.
PARTS: tuple[str, ...] = ("head", "relation", "tail")
#: Why a negative candidate (or a positive) was not written, in the order the checks apply.
REASONS: tuple[str, ...] = ("unchanged", "in_kg", "same_label", "duplicate_text", "duplicate_negative", "exhausted",
                            "duplicate_statement")
_TEMP = ("_ge_ent", "_ge_label_triples", "_ge_pos_all", "_ge_pos", "_ge_pool", "_ge_pool_size", "_ge_need", "_ge_neg",
         "_ge_rej", "_ge_drawn", "_ge_cand")

_OWN = pa.schema([
    ("polarity", pa.string()), ("corrupted", pa.string()), ("head_key", pa.string()), ("relation_key", pa.string()),
    ("tail_key", pa.string()), ("head_label", pa.string()), ("relation_label", pa.string()),
    ("tail_label", pa.string()), ("template_source", pa.string()), ("attempt", pa.int64()),
    ("negatives", pa.int64()), ("mean_degree", pa.float64()),
])
_REJECT_SCHEMA = pa.schema([
    ("kind", pa.string()), ("reason", pa.string()), ("part", pa.string()), ("head_key", pa.string()),
    ("relation_key", pa.string()), ("tail_key", pa.string()), ("text", pa.string()), ("attempt", pa.int64()),
    ("positive_head_key", pa.string()), ("positive_relation_key", pa.string()), ("positive_tail_key", pa.string()),
])


def item_schema() -> pa.Schema:
    """The schema of GraphEval's items: :data:`~kgprobe.suites.base.ITEM_SCHEMA`, then its own columns."""
    return pa.schema(list(ITEM_SCHEMA) + list(_OWN))


@dataclass(frozen=True)
class StatementOptions:
    """How statements are made (the suite's settings carry the same fields; see the module docstring)."""

    per_relation: int | None = 50
    negatives: int = 3
    parts: Sequence[str] = PARTS
    corruption: str = "typed"
    max_attempts: int = 10
    templates: Mapping[str, str] = field(default_factory=dict)
    dbpedia: Mapping[str, str] = field(default_factory=dict)
    dbpedia_match: str = "iri"

    def __post_init__(self) -> None:
        if self.per_relation is not None and self.per_relation < 1:
            raise ValueError(f"per_relation must be a positive number of triples or None (all), got {self.per_relation}")
        if self.negatives < 1:
            raise ValueError(f"negatives (k) must be at least 1, got {self.negatives}")
        if not self.parts or set(self.parts) - set(PARTS):
            raise ValueError(f"parts must be a non-empty subset of {list(PARTS)}, got {list(self.parts)}")
        if self.corruption not in ("typed", "uniform"):
            raise ValueError(f"corruption must be typed or uniform, got {self.corruption!r}")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")


@dataclass(frozen=True)
class StatementSet:
    """The items (positives and their verified negatives, :func:`item_schema`), every rejected candidate and
    dropped positive with its reason (``rejects``), rejected candidates counted per reason and part, the relations'
    templates and metadata (counts, template sources, relations on the fallback template)."""

    items: pa.Table
    rejects: pa.Table
    reject_counts: list[dict[str, Any]]
    templates: list[RelationTemplate]
    metadata: dict[str, Any]


def build_statements(con: duckdb.DuckDBPyConnection, options: StatementOptions = StatementOptions(), *,
                     snapshot_id: str = "", seed: int = 0, rejects: bool = True) -> StatementSet:  # fmt: skip
    """The GraphEval statements of the KG whose tables ``con`` reads unqualified (``entities``, ``relations``,
    ``triples``, ``entity_types``): see the module docstring. ``rejects=False`` skips building the table of
    rejected rows (the counts are kept), for runs over a whole KG where only the counts are wanted.

    Temporary tables ``_ge_*`` are created on ``con`` and dropped before returning; ``con`` may be read-only.
    """
    relations = con.execute("SELECT id, key, label FROM relations ORDER BY id").fetchall()
    templates, template_meta = resolve_templates(relations, config=options.templates, dbpedia=options.dbpedia,
                                                 dbpedia_match=options.dbpedia_match)
    typed = options.corruption == "typed"
    con.register("_ge_templates", template_table(templates))
    try:
        con.execute(load_sql("grapheval/entities"))
        con.execute(load_sql("grapheval/label_triples"))
        con.execute(load_sql("grapheval/positives"), {"seed": seed, "cap": options.per_relation, "typed": typed})
        con.execute(load_sql("grapheval/positives_kept"))
        con.execute(load_sql("grapheval/pools"), {"typed": typed})
        con.execute(load_sql("grapheval/pool_sizes"))
        con.execute(load_sql("grapheval/need_init"), {"k": options.negatives})
        con.execute(load_sql("grapheval/negatives_create"))
        con.execute(load_sql("grapheval/rejects_create"))
        attempts = 0
        for attempt in range(options.max_attempts):
            if not con.execute("SELECT count(*) FROM _ge_need").fetchone()[0]:
                break
            attempts = attempt + 1
            con.execute(load_sql("grapheval/draw"), {"seed": seed, "attempt": attempt, "parts": list(options.parts)})
            con.execute(load_sql("grapheval/candidates"), {"attempt": attempt})
            con.execute(load_sql("grapheval/accept"))
            con.execute(load_sql("grapheval/reject"))
            con.execute(load_sql("grapheval/need_next"))
        if attempts == 0:  # nothing to draw: no rejected candidate of a last attempt to report as exhausted
            con.execute("CREATE OR REPLACE TEMP TABLE _ge_cand AS SELECT * FROM _ge_rej LIMIT 0")
        items = con.execute(load_sql("grapheval/items"), {"snapshot": snapshot_id, "seed": seed}).to_arrow_table()
        counts = [dict(zip(("reason", "part", "candidates"), r, strict=True))
                  for r in con.execute(load_sql("grapheval/reject_counts")).fetchall()]
        exhausted = con.execute("SELECT count(*) FROM _ge_cand WHERE reason IS NOT NULL").fetchone()[0]
        summary_row = con.execute(load_sql("grapheval/summary"), {"k": options.negatives}).fetchone()
        summary = dict(zip(("positives_drawn", "positives_unique", "positives_full", "positives_partial",
                            "positives_without_negatives", "negatives"), (int(x) for x in summary_row), strict=True))
        if rejects:
            dropped = con.execute(load_sql("grapheval/positives_dropped")).to_arrow_table()
            rejected = con.execute(load_sql("grapheval/rejects")).to_arrow_table()
            reject_table = pa.concat_tables([dropped.cast(_REJECT_SCHEMA), rejected.cast(_REJECT_SCHEMA)])
        else:
            reject_table = _REJECT_SCHEMA.empty_table()
    finally:
        for name in _TEMP:
            con.execute(f"DROP TABLE IF EXISTS temp.main.{name}")
        con.unregister("_ge_templates")
    items = items.cast(item_schema())
    by_reason: dict[str, int] = {}
    for c in counts:
        by_reason[c["reason"]] = by_reason.get(c["reason"], 0) + int(c["candidates"])
    by_reason["exhausted"] = int(exhausted)
    by_reason["duplicate_statement"] = summary["positives_drawn"] - summary["positives_unique"]
    metadata = {**summary, **template_meta, "rejected_by_reason": by_reason, "attempts": attempts,
                "options": {"per_relation": options.per_relation, "negatives": options.negatives,
                            "parts": list(options.parts), "corruption": options.corruption,
                            "max_attempts": options.max_attempts, "dbpedia_match": options.dbpedia_match,
                            "seed": seed}}
    return StatementSet(items=items, rejects=reject_table, reject_counts=counts, templates=templates,
                        metadata=metadata)


def verify_negatives(con: duckdb.DuckDBPyConnection, triples: Sequence[tuple[str, str, str]]) -> list[str | None]:
    """Why each ``(head key, relation key, tail key)`` would be rejected as a negative by the KG checks of
    :func:`build_statements` (``in_kg``, ``same_label``, or ``unknown_key`` for a key the KG lacks), None for a
    triple verified false. Use it to check negatives from elsewhere (e.g. CoDEx's human-checked hard negatives)."""
    check = pa.table({"row": pa.array(range(len(triples)), pa.int64()),
                      "head": pa.array([t[0] for t in triples], pa.string()),
                      "relation": pa.array([t[1] for t in triples], pa.string()),
                      "tail": pa.array([t[2] for t in triples], pa.string())})
    con.register("_ge_check", check)
    try:
        con.execute(load_sql("grapheval/entities"))
        con.execute(load_sql("grapheval/label_triples"))
        reasons = [r for _, r in con.execute(load_sql("grapheval/verify")).fetchall()]
    finally:
        for name in ("_ge_ent", "_ge_label_triples"):
            con.execute(f"DROP TABLE IF EXISTS temp.main.{name}")
        con.unregister("_ge_check")
    return reasons
