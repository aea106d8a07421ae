"""OKGQA's own upstream asset: its open questions (templates over KG entities, imported CSVs, a generator model),
written before the subgraph stage so that each question's seed entities become a retrieval query
(``queries: {okgqa_questions: true}``). ``okgqa_items`` and the rest of the lane come from the suite factory.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

from collections import Counter

import dagster as dg
import pyarrow as pa

from assets._metadata import markdown_table, table_metadata
from assets.ingest import kg
from kgprobe.generation.records import Prompt
from kgprobe.kg.queries import EntityLinker
from kgprobe.kg.stats import current_snapshot
from kgprobe.suites.okgqa.questions import (
    QUESTION_SCHEMA_COLUMNS,
    SUBTYPES,
    generation_prompt,
    parse_generated,
    questions_from_csv,
    template_questions,
)
from kgprobe.sql import quote_identifier
from resources import ProjectResource, WarehouseResource

GROUP = "okgqa"
_TYPES = {"seeds": pa.list_(pa.int64()), "mentions": pa.list_(pa.string()), "unmatched": pa.list_(pa.string())}
QUESTIONS_SCHEMA = pa.schema([(c, _TYPES.get(c, pa.string())) for c in QUESTION_SCHEMA_COLUMNS])


def _kg_name(cfg, settings) -> str:
    if settings.kg:
        return settings.kg
    queries = cfg.sections.get("queries") or {}
    return str(queries.get("kg") or next(iter(cfg.kgs)))


@dg.asset(group_name=GROUP, kinds={"parquet"}, deps=[kg])
def okgqa_question_bank(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """OKGQA's open questions (5 types, 10 sub-types) from templates, question files and a generator, with provenance."""
    cfg = project.load()
    settings = cfg.suite("okgqa")
    if settings is None:
        warehouse.write_partition("okgqa_question_bank", pa.Table.from_pylist([], schema=QUESTIONS_SCHEMA))
        return dg.MaterializeResult(metadata={**table_metadata(0), "note": "no 'okgqa' section in the project config"})
    kg_name = _kg_name(cfg, settings)
    found, template_rejects = [], []
    with warehouse.connect(read_only=True) as con:
        snapshot = current_snapshot(con, kg_name)
        con.execute(f"USE {quote_identifier(kg_name)}")
        if settings.templates:
            found, template_rejects = template_questions(con, per_template=settings.per_template, seed=cfg.seed,
                                                         snapshot_id=snapshot)
        linker = EntityLinker(con) if settings.files or settings.generator else None
        for f in settings.files:
            path = (cfg.path.parent / f.path).resolve()
            found += questions_from_csv(linker, path, limit=f.limit, snapshot_id=snapshot)
        if settings.generator is not None:
            found += _generated(cfg, settings.generator, linker, snapshot, context)
    rows = [q.as_row() for q in found]
    warehouse.write_partition("okgqa_question_bank", pa.Table.from_pylist(rows, schema=QUESTIONS_SCHEMA))
    asked = [r for r in rows if r["rejected"] is None]
    by_subtype = Counter((r["type"], r["subtype"], r["source"]) for r in asked)
    reasons = Counter(r["rejected"] for r in rows if r["rejected"] is not None)
    context.log.info(f"{len(asked)} OKGQA questions asked, {len(rows) - len(asked)} rejected")
    return dg.MaterializeResult(metadata={
        **table_metadata(len(rows)),
        "asked": len(asked),
        "rejected": len(rows) - len(asked),
        "by_subtype": dg.MetadataValue.md(markdown_table(
            [{"type": t, "subtype": s, "source": src, "questions": n} for (t, s, src), n in sorted(by_subtype.items())])),
        "reject_reasons": dg.MetadataValue.md(markdown_table(
            [{"reason": k, "questions": n} for k, n in reasons.most_common(20)] + template_rejects)),
        "preview": dg.MetadataValue.md(markdown_table(
            [{k: r[k] for k in ("subtype", "question", "mentions", "provenance")} for r in asked[:20]])),
    })


def _generated(cfg, generator, linker, snapshot, context) -> list:
    """Questions from the configured generator model (D.2 prompt), each validated and linked or rejected."""
    from kgprobe.generation.runner import make_backend, model_specs

    specs = {s.name: s for s in model_specs(cfg.sections.get("models") or [])}
    if generator.model not in specs:
        raise ValueError(f"suites.okgqa.generator.model: no model {generator.model!r} under models "
                         f"(known: {sorted(specs)})")
    spec = specs[generator.model]
    prompts = []
    for subtype in SUBTYPES:
        for i in range(generator.per_subtype):
            system, user = generation_prompt(subtype)
            prompts.append(Prompt(item_id=f"{subtype}#{i}", text=user, template_id="okgqa-generate-v1", system=system))
    backend = make_backend(spec)
    try:
        completions = backend.generate(prompts, spec.params)
    finally:
        backend.close()
    out = []
    for k, (prompt, comps) in enumerate(zip(prompts, completions)):
        for j, c in enumerate(comps):
            out.append(parse_generated(c.text if c.ok else None, linker=linker, generator=spec.name,
                                       index=k * len(comps) + j, snapshot_id=snapshot))
    context.log.info(f"generator {spec.name}: {len(out)} answers, {sum(q.rejected is None for q in out)} valid")
    return out


ASSETS = [okgqa_question_bank]
CHECKS: list = []
