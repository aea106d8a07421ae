"""Generation stage: model answers to every question, partitioned by model, resumable through the response store.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

from collections import Counter

import dagster as dg
import pyarrow as pa

from assets._metadata import markdown_table, table_metadata
from assets._checks import expectations_result, partitions_to_check
from kgprobe.suites.fpq.prompts import fpq_prompts, grounded_fpq_prompts
from kgprobe.config import generation_models, generation_settings, subgraph_settings
from kgprobe.kg.stats import labels
from kgprobe.generation import make_backend, run_generation
from kgprobe import warehouse as wh
from kgprobe.scoring.quality import validate_responses
from kgprobe.generation.store import ResponseStore
from pipelines.partitions import MODEL, PERTURBATION, Partitions
from resources import ProjectResource, WarehouseResource

GROUP = "generate"
GPU_POOL = "gpu"


def _spec(project: ProjectResource, name: str):
    specs = {m.name: m for m in generation_models(project.load())}
    if name not in specs:
        raise ValueError(f"model partition {name!r} is not in the config's models {sorted(specs)}")
    return specs[name]


def _generate(context, spec, prompts, opts, warehouse: WarehouseResource):
    """Generate what the response store lacks, then read back one row per (item, sample)."""
    store = ResponseStore(warehouse.root / "response_store")
    backend = make_backend(spec)
    try:
        summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store,
                                 run_id=context.run.run_id, shard_size=opts["shard_size"], batch_size=spec.batch_size,
                                 log=context.log.info)
    finally:
        backend.close()
    return summary, store.rows_for(spec.name, prompts, spec.params)


def build(parts: Partitions) -> tuple[list, list]:
    """The generation assets and checks for one set of partitions."""

    @dg.asset(group_name=GROUP, kinds={"parquet"}, partitions_def=parts.model, deps=["fpq_items"], pool=GPU_POOL)
    def responses_closed(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """Closed-book answers of one model to every KG-FPQ question (three samples each by default)."""
        cfg = project.load()
        spec = _spec(project, context.partition_key)
        opts = generation_settings(cfg)
        prompts = fpq_prompts(warehouse.read_partition("fpq_items").to_pylist(), formats=opts["formats"], limit=opts["limit"])
        context.log.info(f"{spec.name} ({spec.backend}): {len(prompts)} prompts x {spec.params.n} samples")
        summary, table = _generate(context, spec, prompts, opts, warehouse)
        warehouse.write_partition("responses_closed", table, {MODEL: spec.name})
        rows = table.to_pylist()
        errors = Counter((r["error"] or "").split(":")[0] for r in rows if r["error"])
        return dg.MaterializeResult(metadata={
            **table_metadata(len(rows)),
            **{k: v for k, v in summary.as_dict().items() if isinstance(v, (int, float))},
            "failed_samples": sum(errors.values()),
            "errors": dg.MetadataValue.md(markdown_table([{"error": e, "samples": n} for e, n in errors.most_common()])),
            "preview": dg.MetadataValue.md(markdown_table(
                [{"item_id": r["item_id"], "sample": r["sample_index"], "text": (r["text"] or "")[:80]} for r in rows], limit=12)),
        })

    @dg.asset_check(asset=responses_closed, blocking=True,
                    description="In every model partition, each question has all its samples once, with lineage.")
    def responses_closed_complete(project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
        specs = {m.name: m for m in generation_models(project.load())}
        problems = []
        for dims in wh.partitions(warehouse.root, "responses_closed"):
            rows = warehouse.read_partition("responses_closed", dims).to_pylist()
            n = specs[dims[MODEL]].params.n if dims.get(MODEL) in specs else None
            keys = Counter((r["item_id"], r["sample_index"]) for r in rows)
            per_item = Counter(r["item_id"] for r in rows)
            problems.append({
                "model": dims.get(MODEL),
                "duplicate_keys": sum(1 for c in keys.values() if c > 1),
                "items_with_wrong_sample_count": sum(1 for c in per_item.values() if n is not None and c != n),
                "rows_without_lineage": sum(1 for r in rows if not (r["model"] and r["prompt_template_id"] and r["params_sha256"])),
            })
        bad = [p for p in problems if p["duplicate_keys"] or p["items_with_wrong_sample_count"] or p["rows_without_lineage"]]
        return dg.AssetCheckResult(passed=not bad, metadata={"partitions": dg.MetadataValue.md(markdown_table(problems))})

    @dg.asset(group_name=GROUP, kinds={"parquet"}, partitions_def=parts.model_perturbation,
              deps=["fpq_items", "perturbed_subgraphs"], pool=GPU_POOL)
    def responses_grounded(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """Answers of one model to the KG-FPQ questions given their subject's subgraph at one perturbation level."""
        cfg = project.load()
        keys = context.partition_key.keys_by_dimension
        spec = _spec(project, keys[MODEL])
        perturbation = keys[PERTURBATION]
        opts = generation_settings(cfg)
        settings = subgraph_settings(cfg)
        perturbed = warehouse.read_partition("perturbed_subgraphs", {PERTURBATION: perturbation}).select(["query_id", "triples"]).to_pylist()
        subgraphs = {r["query_id"]: [(t["head"], t["relation"], t["tail"]) for t in r["triples"]] for r in perturbed}
        with warehouse.connect(read_only=True) as con:
            ent, rel = labels(con, settings.kg)
        prompts, used = grounded_fpq_prompts(warehouse.read_partition("fpq_items").to_pylist(), subgraphs, ent, rel,
                                             formats=opts["formats"], limit=opts["grounded_limit"])
        no_context = sum(1 for q in used.values() if q not in subgraphs)
        context.log.info(f"{spec.name} on {perturbation}: {len(prompts)} grounded prompts x {spec.params.n} samples")
        summary, table = _generate(context, spec, prompts, opts, warehouse)
        table = table.append_column("perturbation", pa.array([perturbation] * table.num_rows, pa.string()))
        table = table.append_column("context_query_id", pa.array([used[i] for i in table.column("item_id").to_pylist()], pa.string()))
        warehouse.write_partition("responses_grounded", table, {MODEL: spec.name, PERTURBATION: perturbation})
        errors = Counter((e or "").split(":")[0] for e in table.column("error").to_pylist() if e)
        return dg.MaterializeResult(metadata={
            **table_metadata(table.num_rows),
            **{k: v for k, v in summary.as_dict().items() if isinstance(v, (int, float))},
            "failed_samples": sum(errors.values()),
            "items_without_context": no_context,
        })

    @dg.asset_check(asset=responses_closed, blocking=True,
                    description="Great Expectations suite on the run's partition: ids non-null, one row per (item, "
                                "model, sample), text or error on every row.")
    def responses_closed_expectations(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return _expectations(context, warehouse, "responses_closed")

    @dg.asset_check(asset=responses_grounded, blocking=True,
                    description="Great Expectations suite on the run's partition: ids non-null, one row per (item, "
                                "model, perturbation, sample), text or error on every row.")
    def responses_grounded_expectations(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return _expectations(context, warehouse, "responses_grounded")

    return ([responses_closed, responses_grounded],
            [responses_closed_complete, responses_closed_expectations, responses_grounded_expectations])


def _expectations(context, warehouse: WarehouseResource, asset: str) -> dg.AssetCheckResult:
    outcomes = []
    for dims in partitions_to_check(context, warehouse.root, asset, default_dim=MODEL):
        outcomes += validate_responses(warehouse.read_partition(asset, dims), name=f"{asset} {dims}")
    return expectations_result(outcomes)
