"""Scoring stage: every answer read, WH answers judged, votes, KG-FPQ accuracies with intervals, per partition.

Each scores asset writes four Parquet tables for its partition (views of the same names in DuckDB):
``<asset>_samples`` (one row per answer and judge, raw text beside the label), ``<asset>`` (one row per item and
judge: the vote), ``<asset>_metrics`` (accuracies with n, a Wilson score interval, its kind in ``interval``, and the
item ids behind them) and ``<asset>_agreement`` (Cohen's kappa of the judges). The materialization's metadata
leads with the headline, the gated yes/no FPQ accuracy (KG-FPQ's Table 10), as a number the UI can plot over runs
and as the first row of the ``scores`` table.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

import math

import dagster as dg

from assets._metadata import markdown_table, table_metadata
from assets._checks import expectations_result, partitions_to_check
from kgprobe import warehouse as wh
from kgprobe.config import generation_models, generation_settings, scoring_settings
from kgprobe.scoring.quality import validate_metrics, validate_score_items, validate_score_samples
from kgprobe.report.render import HEADLINE_METRIC, KEY_METRICS
from kgprobe.suites.fpq.scoring import ScoredPartition, oracle_failures, score_partition
from kgprobe.generation.store import ResponseStore
from pipelines.partitions import MODEL, PERTURBATION, Partitions
from resources import ProjectResource, WarehouseResource

GROUP = "score"
GPU_POOL = "gpu"
# The overall metrics the metadata shows, in the leaderboard's order: the gated headline first.
_HEADLINE = KEY_METRICS


def _score(context, project: ProjectResource, warehouse: WarehouseResource, responses_asset: str, dims: dict) -> ScoredPartition:
    cfg = project.load()
    settings = scoring_settings(cfg)
    items = warehouse.read_partition("fpq_items").to_pylist()
    responses = warehouse.read_partition(responses_asset, dims).to_pylist()
    context.log.info(f"scoring {len(responses)} answers of {dims}")
    return score_partition(
        items, responses, model=dims[MODEL], perturbation=dims.get(PERTURBATION, "none"), judges=settings.judges,
        store=ResponseStore(warehouse.root / "response_store"), run_id=context.run.run_id,
        shard_size=generation_settings(cfg)["shard_size"], resamples=settings.resamples,
        confidence=settings.confidence, seed=settings.seed, log=context.log.info)


def _write(warehouse: WarehouseResource, asset: str, scored: ScoredPartition, dims: dict) -> dict:
    tables = scored.tables()
    warehouse.write_partition(f"{asset}_samples", tables["samples"], dims)
    warehouse.write_partition(f"{asset}_metrics", tables["metrics"], dims)
    warehouse.write_partition(f"{asset}_agreement", tables["agreement"], dims)
    warehouse.write_partition(asset, tables["items"], dims)
    overall = [m for m in scored.metrics
               if m["metric"] in _HEADLINE and m["domain"] is None and m["method"] is None and m["hop"] is None]
    # yes/no first, then each judge; within each, the headline first
    overall.sort(key=lambda m: (m["task"] != "discriminative", m["judge"], _HEADLINE.index(m["metric"])))
    headline = [
        {"task": m["task"], "judge": m["judge"] or "-",
         "metric": f"{m['metric']} (headline)" if m["metric"] == HEADLINE_METRIC else m["metric"], "n": m["n"],
         "value": _fmt(m["value"]), "CI": f"[{_fmt(m['ci_low'])}, {_fmt(m['ci_high'])}]",
         "interval": m.get("interval") or "-"}
        for m in overall
    ]
    gated = next((m["value"] for m in overall if m["task"] == "discriminative" and m["metric"] == HEADLINE_METRIC),
                 math.nan)
    return {
        # a number, so the UI plots it across materializations; left out when undefined (no gated FPQ)
        **({HEADLINE_METRIC: round(gated, 4)} if not math.isnan(gated) else {}),
        **table_metadata(tables["items"].num_rows),
        "answers": tables["samples"].num_rows,
        **{name: round(share, 4) for name, share in (("unknown_share", scored.unknown_share("discriminative")),
                                                     ("judge_unknown_share", scored.unknown_share("generative")))
           if not math.isnan(share)},
        "scores": dg.MetadataValue.md(markdown_table(headline, limit=40)),
        "judge_agreement": dg.MetadataValue.md(markdown_table(
            [{"judges": f"{a['judge_a']} / {a['judge_b']}", "n": a["n"], "agreement": _fmt(a["agreement"]),
              "kappa": _fmt(a["kappa"])} for a in scored.agreement])),
    }


def _fmt(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _partitions_to_check(context, warehouse: WarehouseResource, asset: str) -> list[dict]:
    return partitions_to_check(context, warehouse.root, asset, default_dim=MODEL)


def _expectations_check(context, warehouse: WarehouseResource, asset: str) -> dg.AssetCheckResult:
    outcomes = []
    for dims in _partitions_to_check(context, warehouse, asset):
        outcomes += validate_score_samples(warehouse.read_partition(f"{asset}_samples", dims), name=f"{asset}_samples {dims}")
        outcomes += validate_score_items(warehouse.read_partition(asset, dims), name=f"{asset} {dims}")
        outcomes += validate_metrics(warehouse.read_partition(f"{asset}_metrics", dims), name=f"{asset}_metrics {dims}")
    return expectations_result(outcomes)


def _unknown_check(context, project: ProjectResource, warehouse: WarehouseResource, asset: str) -> dg.AssetCheckResult:
    limit = scoring_settings(project.load()).unknown_warn
    rows, examples = [], []
    for dims in _partitions_to_check(context, warehouse, asset):
        samples = [s for s in warehouse.read_partition(f"{asset}_samples", dims).to_pylist() if s["format"] == "yn"]
        unknown = [s for s in samples if s["label"] == "unknown"]
        share = len(unknown) / len(samples) if samples else 0.0
        rows.append({**dims, "answers": len(samples), "unknown": len(unknown), "share": round(share, 3)})
        if share > limit:
            examples += [{**dims, "response_id": s["response_id"], "text": repr(s["text"] if s["error"] is None else s["error"])[:100]}
                         for s in unknown[:5]]
    over = [r for r in rows if r["share"] > limit]
    return dg.AssetCheckResult(passed=not over, severity=dg.AssetCheckSeverity.WARN, metadata={
        "limit": limit, "partitions_over": len(over),
        "partitions": dg.MetadataValue.md(markdown_table(sorted(rows, key=lambda r: -r["share"]))),
        "examples": dg.MetadataValue.md(markdown_table(examples, limit=25)),
    })


def _oracle_names(project: ProjectResource) -> set[str]:
    return {m.name for m in generation_models(project.load()) if m.backend == "reference" and m.config.kind == "oracle"}


def build(parts: Partitions) -> tuple[list, list]:
    """The scoring assets and their checks for one set of partitions."""

    @dg.asset(group_name=GROUP, kinds={"parquet", "python"}, partitions_def=parts.model,
              deps=["responses_closed", "fpq_items"], pool=GPU_POOL)
    def scores_closed(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """Closed-book answers of one model read, judged and voted; KG-FPQ accuracies with 95% Wilson intervals."""
        dims = {MODEL: context.partition_key}
        scored = _score(context, project, warehouse, "responses_closed", dims)
        return dg.MaterializeResult(metadata=_write(warehouse, "scores_closed", scored, dims))

    @dg.asset(group_name=GROUP, kinds={"parquet", "python"}, partitions_def=parts.model_perturbation,
              deps=["responses_grounded", "fpq_items"], pool=GPU_POOL)
    def scores_grounded(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """KG-grounded answers of one model at one perturbation level read, judged, voted and scored."""
        keys = context.partition_key.keys_by_dimension
        dims = {MODEL: keys[MODEL], PERTURBATION: keys[PERTURBATION]}
        scored = _score(context, project, warehouse, "responses_grounded", dims)
        return dg.MaterializeResult(metadata=_write(warehouse, "scores_grounded", scored, dims))

    @dg.asset_check(asset=scores_closed, blocking=True,
                    description="Great Expectations suite on the answers, votes and metrics of the run's partition.")
    def scores_closed_expectations(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return _expectations_check(context, warehouse, "scores_closed")

    @dg.asset_check(asset=scores_grounded, blocking=True,
                    description="Great Expectations suite on the answers, votes and metrics of the run's partition.")
    def scores_grounded_expectations(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return _expectations_check(context, warehouse, "scores_grounded")

    @dg.asset_check(asset=scores_closed, description="More than scoring.unknown_warn (20%) of Yes-No answers read as unknown.")
    def scores_closed_unknown_share(context: dg.AssetCheckExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return _unknown_check(context, project, warehouse, "scores_closed")

    @dg.asset_check(asset=scores_grounded, description="More than scoring.unknown_warn (20%) of Yes-No answers read as unknown.")
    def scores_grounded_unknown_share(context: dg.AssetCheckExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return _unknown_check(context, project, warehouse, "scores_grounded")

    @dg.asset_check(asset=scores_closed, blocking=True,
                    description="The oracle scores 1.0 on every closed-book metric: proof that questions, answers, "
                                "parsing, votes and metrics fit together end to end.")
    def oracle_is_perfect(context: dg.AssetCheckExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
        oracles = _oracle_names(project)
        reference_judges = {j.name for j in scoring_settings(project.load()).judges if j.name in oracles}
        checked, bad = [], []
        for dims in _partitions_to_check(context, warehouse, "scores_closed"):
            if dims.get(MODEL) not in {wh.safe_value(o) for o in oracles}:
                continue
            metrics = warehouse.read_partition("scores_closed_metrics", dims).to_pylist()
            checked.append(dims[MODEL])
            bad += [{"model": dims[MODEL], **b} for b in oracle_failures(metrics, reference_judges)]
        return dg.AssetCheckResult(passed=not bad, metadata={
            "oracle_partitions_checked": ", ".join(checked) or "none in this run",
            "generative_judges_checked": ", ".join(sorted(reference_judges)) or "none (no reference oracle judge)",
            "imperfect_metrics": dg.MetadataValue.md(markdown_table(bad, limit=30)),
        })

    return ([scores_closed, scores_grounded],
            [scores_closed_expectations, scores_grounded_expectations, scores_closed_unknown_share,
             scores_grounded_unknown_share, oracle_is_perfect])
