"""ERBench's own upstream asset: the relational database of ``suites.erbench.db`` loaded into the warehouse's
``erdb`` schema with its FDs and foreign keys checked, and the check that guards it; ``erbench_items`` and the rest
of the lane come from the suite factory (``assets/suites.py``).

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

import dagster as dg

from assets._metadata import markdown_table, table_metadata
from kgprobe.suites.erbench.erdb import load_erdb
from kgprobe.suites.erbench.quality import erdb_violations
from kgprobe.suites.erbench.spec import load_spec
from resources import ProjectResource, WarehouseResource

GROUP = "erbench"


@dg.asset(group_name=GROUP, kinds={"duckdb"})
def erdb(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The relational database of suites.erbench.db in the warehouse's erdb schema, FK violations excluded."""
    cfg = project.load()
    settings = cfg.suite("erbench")
    if settings is None:
        return dg.MaterializeResult(metadata={**table_metadata(0), "note": "no 'erbench' section in the project config"})
    spec = load_spec(settings.db, config_dir=cfg.path.parent)
    with warehouse.connect() as con:  # the ingest asset that writes schema erdb; everyone else reads it
        report = load_erdb(con, spec, schema=settings.schema_name, fd_violations=settings.fd_violations)
    context.log.info(f"erdb {spec.name!r} ({report.source}): read {report.read:,}, loaded {report.loaded:,}, "
                     f"rejected {report.rejected:,} in {report.seconds:.1f}s")
    tables = [{"table": t, **counts} for t, counts in report.tables.items()]
    constraints = ([{"kind": "FD", "name": k, "violating rows": v} for k, v in report.fd_violations.items()]
                   + [{"kind": "FK", "name": k, "violating rows": v} for k, v in report.fk_violations.items()])
    return dg.MaterializeResult(
        metadata={
            **table_metadata(report.loaded),
            "snapshot_id": report.snapshot_id,
            "source": report.source,
            "read": report.read, "loaded": report.loaded, "rejected": report.rejected,
            "tables": dg.MetadataValue.md(markdown_table(tables)),
            "constraints": dg.MetadataValue.md(markdown_table(constraints)),
            "reject_reasons": dg.MetadataValue.md(markdown_table(
                [{"reason": r, "rows": n} for r, n in sorted(report.reasons.items(), key=lambda kv: -kv[1])])),
        },
        data_version=dg.DataVersion(report.snapshot_id),
    )


@dg.asset_check(asset=erdb, blocking=True,
                description="Every relation has rows, read = loaded + rejected, every checked foreign key holds on "
                            "the loaded rows, and every declared FD too when fd_violations is drop.")
def erdb_constraints_hold(project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    cfg = project.load()
    settings = cfg.suite("erbench")
    if settings is None:
        return dg.AssetCheckResult(passed=True, metadata={"note": "erbench not configured"})
    spec = load_spec(settings.db, config_dir=cfg.path.parent)
    with warehouse.connect(read_only=True) as con:
        problems = erdb_violations(con, spec, schema=settings.schema_name, fd_violations=settings.fd_violations)
    return dg.AssetCheckResult(passed=not problems, metadata={
        "problems": len(problems), "examples": dg.MetadataValue.md(markdown_table(problems))})


ASSETS = [erdb]
CHECKS = [erdb_constraints_hold]
