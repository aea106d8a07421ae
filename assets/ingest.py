"""Ingest stage: the configured KG sources and their load into the DuckDB warehouse.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""


import dagster as dg

from assets._metadata import markdown_table, table_metadata
from kgprobe.suites.fpq.edits import infer_types_from_relations, inferred_type_sources
from kgprobe.kg.ingest import load_kg
from kgprobe.kg.stats import dangling_ids, kg_summary, source_summary
from kgprobe.sql import quote_identifier
from resources import ProjectResource, WarehouseResource

GROUP = "ingest"
REJECT_WARN_RATE = 0.01
LABEL_WARN_COVERAGE = 0.5


@dg.asset(group_name=GROUP, kinds={"python"})
def kg_source(project: ProjectResource) -> dg.MaterializeResult:
    """The KG sources named in the project config: files, format and the content hash each load will carry."""
    cfg = project.load()
    rows = [source_summary(src) for src in cfg.kgs.values()]
    return dg.MaterializeResult(
        metadata={
            "config": dg.MetadataValue.path(str(cfg.path)),
            "kgs": dg.MetadataValue.md(markdown_table(rows)),
            **table_metadata(len(rows)),
        },
        data_version=dg.DataVersion("-".join(r["snapshot_id"] for r in rows)),
    )


@dg.asset(group_name=GROUP, kinds={"duckdb"}, deps=[kg_source])
def kg(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Every configured KG loaded into its DuckDB schema: entities, relations, triples, types, literals, dated facts."""
    cfg = project.load()
    reports = []
    inferred: dict[str, list[dict]] = {}
    with warehouse.connect() as con:
        for name, source in cfg.kgs.items():
            context.log.info(f"loading KG {name!r} ({source.format}, {len(source.files)} file(s))")
            report = load_kg(con, source)
            if cfg.infer_types.get(name):
                con.execute(f"USE {quote_identifier(name)}")
                added = infer_types_from_relations(con)
                if report.reused:  # the snapshot's types were inferred when it was first loaded
                    typed = con.execute("SELECT count(*) FROM entity_types").fetchone()[0]
                    context.log.info(f"KG {name!r}: snapshot reused with its {typed:,} entity types "
                                     f"({added:,} added now)")
                else:
                    context.log.info(f"KG {name!r}: {added:,} entity types inferred from relation keys")
                used = inferred_type_sources(con)
                context.log.info(f"KG {name!r}: types inferred from {len(used)} relations (heads: the domain, tails: "
                                 "the range), e.g. " + "; ".join(f"{u['key']}: {u['head_type']} -> {u['tail_type']}"
                                                                 for u in used[:5]))
                inferred[name] = used
            context.log.info(
                f"KG {name!r}: read {report.read:,}, loaded {report.loaded:,}, duplicates {report.duplicates:,}, "
                f"rejected {report.rejected:,} in {report.seconds:.1f}s{' (snapshot reused)' if report.reused else ''}"
            )
            reports.append(report)
    rows = [
        {k: r.as_dict()[k] for k in ("kg", "snapshot_id", "read", "loaded", "duplicates", "rejected", "entities",
                                     "relations", "triples", "temporal_facts", "label_coverage", "reused")}
        for r in reports
    ]
    return dg.MaterializeResult(
        metadata={
            "kgs": dg.MetadataValue.md(markdown_table(rows)),
            **{f"inferred_types_{n}": dg.MetadataValue.md(markdown_table(u, limit=100)) for n, u in inferred.items()},
            "warehouse": dg.MetadataValue.path(warehouse.path),
            **table_metadata(sum(r.triples for r in reports), {"head": "BIGINT", "relation": "BIGINT", "tail": "BIGINT"}),
        },
        data_version=dg.DataVersion("-".join(r.snapshot_id for r in reports)),
    )


@dg.asset_check(asset=kg, blocking=True, description="Every configured KG holds at least one triple or dated fact.")
def kg_not_empty(project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        summaries = {name: kg_summary(con, name) for name in project.load().kgs}
    empty = [n for n, s in summaries.items() if s["triples"] + s["temporal_facts"] == 0]
    return dg.AssetCheckResult(passed=not empty, metadata={"empty_kgs": ", ".join(empty) or "none"})


@dg.asset_check(asset=kg, blocking=True, description="No triple, type, literal or dated fact points at a missing id.")
def kg_no_dangling_ids(project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        found = {name: dangling_ids(con, name) for name in project.load().kgs}
    total = sum(sum(v.values()) for v in found.values())
    rows = [{"kg": n, **v} for n, v in found.items()]
    return dg.AssetCheckResult(passed=total == 0, metadata={"dangling": dg.MetadataValue.md(markdown_table(rows))})


@dg.asset_check(asset=kg, description="Warns when more than 1% of the rows read were rejected.")
def kg_reject_rate(project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        rows = [kg_summary(con, name) for name in project.load().kgs]
    worst = max((r["reject_rate"] for r in rows), default=0.0)
    table = [{k: r[k] for k in ("kg", "read", "rejected", "reject_rate", "top_reject_reason")} for r in rows]
    return dg.AssetCheckResult(
        passed=worst <= REJECT_WARN_RATE,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"max_reject_rate": worst, "kgs": dg.MetadataValue.md(markdown_table(table))},
    )


@dg.asset_check(asset=kg, description="Reports the share of entities with a real label; warns under 50%.")
def kg_label_coverage(project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        rows = [kg_summary(con, name) for name in project.load().kgs]
    worst = min((r["label_coverage"] for r in rows), default=1.0)
    table = [{k: r[k] for k in ("kg", "entities", "labelled_entities", "label_coverage", "typed_entities")} for r in rows]
    return dg.AssetCheckResult(
        passed=worst >= LABEL_WARN_COVERAGE,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"min_label_coverage": worst, "kgs": dg.MetadataValue.md(markdown_table(table))},
    )


ASSETS = [kg_source, kg]
CHECKS = [kg_not_empty, kg_no_dangling_ids, kg_reject_rate, kg_label_coverage]
