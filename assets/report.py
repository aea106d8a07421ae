"""Report stage: the leaderboard over every scored partition (DuckDB tables) and one self-contained HTML report.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

from datetime import datetime, timezone

import dagster as dg
import pyarrow as pa

from assets._metadata import image_md, markdown_table, table_metadata
from kgprobe import warehouse as wh
from kgprobe.config import generation_models, scoring_settings
from kgprobe.kg.stats import current_snapshot
from kgprobe.report.render import (
    HEADLINE_METRIC,
    KEY_METRICS,
    ReportContext,
    leaderboard_tables,
    render_html,
    report_plots,
    write_report,
)
from kgprobe.suites.fpq.scoring import AGREEMENT_SCHEMA, ITEM_SCHEMA, METRIC_SCHEMA, pooled_agreement
from resources import ProjectResource, WarehouseResource

GROUP = "report"
SETTINGS = ("closed", "grounded")
REPORT_PATH = ("report", "report.html")


# Columns added to a schema after partitions were written, and what an older partition's rows hold there: metric
# rows written before intervals were Wilson have no ``interval`` column, and every one of their intervals was a
# percentile bootstrap. Filled in rather than failing, so the leaderboard still pools old and new partitions (and
# says which is which); re-scoring a partition replaces its bootstrap intervals with Wilson ones.
_LEGACY_DEFAULTS = {"interval": "bootstrap"}


def _conform(table: pa.Table, schema: pa.Schema, asset: str) -> pa.Table:
    """``table`` with exactly ``schema``'s columns: a legacy column it lacks is filled with its default."""
    for name in schema.names:
        if name not in table.column_names:
            if name not in _LEGACY_DEFAULTS:
                raise ValueError(f"a partition of {asset} has no column {name!r}; re-materialize it")
            table = table.append_column(name, pa.array([_LEGACY_DEFAULTS[name]] * table.num_rows,
                                                        schema.field(name).type))
    return table.select(schema.names).cast(schema)


def _read_all(warehouse: WarehouseResource, asset: str, schema: pa.Schema) -> pa.Table:
    """Every partition of ``asset`` (empty, with ``schema``, when none has been written); a partition written
    before a column of :data:`_LEGACY_DEFAULTS` existed gets that column's default."""
    tables = [warehouse.read_partition(asset, dims) for dims in wh.partitions(warehouse.root, asset)]
    return pa.concat_tables([_conform(t, schema, asset) for t in tables]) if tables else schema.empty_table()


def _tagged(warehouse: WarehouseResource, kind: str, schema: pa.Schema) -> pa.Table:
    """Closed-book and grounded rows of one kind (``metrics`` / ``agreement``) with a ``setting`` column."""
    parts = []
    for setting in SETTINGS:
        t = _read_all(warehouse, f"scores_{setting}_{kind}", schema)
        parts.append(t.append_column("setting", pa.array([setting] * t.num_rows, pa.string())))
    return pa.concat_tables(parts)


ALL_LEVELS = "all levels"


def _agreement(warehouse: WarehouseResource) -> pa.Table:
    """Judge agreement with a ``setting`` column: every partition's own rows, plus rows pooled over all models
    (closed book) and over all models and levels (grounded)."""
    parts = [_tagged(warehouse, "agreement", AGREEMENT_SCHEMA)]
    for setting, perturbation in (("closed", None), ("grounded", ALL_LEVELS)):
        items = _read_all(warehouse, f"scores_{setting}", ITEM_SCHEMA).to_pylist()
        pooled = pa.Table.from_pylist(pooled_agreement(items, perturbation=perturbation), schema=AGREEMENT_SCHEMA)
        parts.append(pooled.append_column("setting", pa.array([setting] * pooled.num_rows, pa.string())))
    return pa.concat_tables(parts)


@dg.asset(group_name=GROUP, kinds={"duckdb"}, deps=["scores_closed", "scores_grounded"])
def leaderboard(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Models x metrics with 95% intervals, one table per suite and setting, over every scored partition (DuckDB);
    the headline, gated yes/no FPQ accuracy, is each table's first metric."""
    cfg = project.load()
    models = [m.name for m in generation_models(cfg)]
    judges = [j.name for j in scoring_settings(cfg).judges]
    metrics = _tagged(warehouse, "metrics", METRIC_SCHEMA)
    agreement = _agreement(warehouse)
    tables = leaderboard_tables(metrics.to_pylist(), models=models, judges=judges)
    stored = {"metrics": metrics.drop_columns(["item_ids"]), "judge_agreement": agreement}
    stored.update({name: pa.Table.from_pylist(rows) for name, rows in tables.items() if rows})
    with warehouse.connect() as con:
        con.execute("CREATE SCHEMA IF NOT EXISTS leaderboard")
        for name, table in stored.items():
            con.register("_incoming", table)
            con.execute(f'CREATE OR REPLACE TABLE leaderboard."{name}" AS SELECT * FROM _incoming')
            con.unregister("_incoming")
    context.log.info(f"leaderboard: {metrics.num_rows} metric rows from "
                     f"{len(set(zip(*(metrics.column(c).to_pylist() for c in ('setting', 'model', 'perturbation')))))} partitions")
    closed = tables.get("fpq_closed") or []
    # yes/no metrics in KEY_METRICS order, so the headline leads, labelled as such
    preview = [{"model": row["model"],
                **{f"{m} (headline)" if m == HEADLINE_METRIC else m: row.get(m) for m in KEY_METRICS}}
               for row in closed]
    return dg.MaterializeResult(metadata={
        **table_metadata(metrics.num_rows),
        "tables": ", ".join(f"leaderboard.{n} ({t.num_rows} rows)" for n, t in stored.items()),
        "fpq_closed": dg.MetadataValue.md(markdown_table(preview, limit=50)),
    })


@dg.asset(group_name=GROUP, kinds={"python"}, deps=[leaderboard, "kg_similarity"])
def report(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One self-contained HTML report (leaderboards, judge agreement, plots, how to trace a number); plots also here."""
    cfg = project.load()
    settings = scoring_settings(cfg)
    models = tuple(m.name for m in generation_models(cfg))
    judges = tuple(j.name for j in settings.judges)
    # exactly what the leaderboard stored; per model for the closed book, while the grounded partitions (models x
    # levels) are shown pooled only, or the table runs long
    with warehouse.connect(read_only=True) as con:
        metrics = con.execute("SELECT * FROM leaderboard.metrics").to_arrow_table().to_pylist()
        agreement = con.execute("SELECT * FROM leaderboard.judge_agreement WHERE setting = 'closed' OR perturbation = $p",
                                {"p": ALL_LEVELS}).to_arrow_table().to_pylist()
        snapshots = tuple(sorted({current_snapshot(con, kg) for kg in cfg.kgs}))
    similarity = warehouse.read_partition("kg_similarity").to_pylist() if wh.partitions(warehouse.root, "kg_similarity") else []
    plots = report_plots(metrics, similarity, agreement, models=models, judges=judges)
    samples = _read_all_samples(warehouse)
    items = warehouse.read_partition("fpq_items").num_rows if wh.partitions(warehouse.root, "fpq_items") else 0
    ctx = ReportContext(
        project=cfg.name, config_path=str(cfg.path), snapshot_ids=snapshots,
        created_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), run_ids=(context.run.run_id,),
        bootstrap_resamples=settings.resamples, bootstrap_seed=settings.seed, confidence=settings.confidence,
        judges=judges, models=models,
        counts={"KG-FPQ items": items, **{f"{s} answers (samples)": n for s, n in samples["counts"].items()}},
    )
    html = render_html(ctx, metrics, agreement, plots, examples=samples["examples"])
    path = write_report(warehouse.root.joinpath(*REPORT_PATH), html)
    context.log.info(f"report written to {path.resolve()}")
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(path.resolve())),
        "size_kb": round(len(html.encode()) / 1024, 1),
        **{f"plot_{name}": image_md(png, alt=name) for name, png in plots.items()},
    })


def _read_all_samples(warehouse: WarehouseResource) -> dict:
    """Answer counts per setting, and up to a dozen closed-book Yes-No answers that read as unknown (with the question)."""
    counts, examples = {}, []
    questions = {}
    if wh.partitions(warehouse.root, "fpq_items"):
        questions = dict(zip(*(warehouse.read_partition("fpq_items").column(c).to_pylist() for c in ("id", "question"))))
    for setting in SETTINGS:
        asset = f"scores_{setting}_samples"
        n = 0
        for dims in wh.partitions(warehouse.root, asset):
            rows = warehouse.read_partition(asset, dims).select(["item_id", "model", "format", "judge", "text", "label"]).to_pylist()
            n += sum(1 for r in rows if r["judge"] in ("", None) or r["format"] == "yn")
            if setting == "closed":
                examples += [{"model": r["model"], "question": questions.get(r["item_id"], r["item_id"]),
                              "answer": r["text"] if r["text"] is not None else "(no answer: generation failed)",
                              "label": r["label"]}
                             for r in rows if r["format"] == "yn" and r["label"] == "unknown"][:4]
        counts[setting] = n
    return {"counts": counts, "examples": examples[:12]}


ASSETS = [leaderboard, report]
