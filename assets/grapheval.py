"""GraphEval's own asset after its responses: the hidden-state judge (the paper's §3.2), per model partition.
``grapheval_items`` and the rest of the lane come from the suite factory (``assets/suites.py``).

``grapheval_hidden_judge[model]`` reads the lane's items and the model's responses, computes one forward pass per
statement (the model's own weights from the run's model pool, or ``hidden_judge.substitute_model``), trains the
judge on the answered groups, and writes ``grapheval_hidden_judge`` (per-statement labels and splits) and
``grapheval_hidden_judge_metrics`` (the common metric schema: judges ``hidden_state``, ``hidden_state:heldout``,
``generated:heldout``). It does nothing (an empty partition and a note) unless the suite's ``judge`` is
``hidden_state`` and the model is a transformers model.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

import dagster as dg

from assets._checks import partitions_to_check
from assets._metadata import markdown_table, table_metadata
from kgprobe.config import generation_models, scoring_settings
from kgprobe.suites.base import METRIC_SCHEMA, table
from kgprobe.suites.grapheval.judge import CLASSES, LABEL_SCHEMA, precision_recall_f1, run_hidden_judge
from kgprobe.suites.grapheval.suite import GraphEvalSuite
from pipelines.partitions import MODEL
from resources import ModelPool, ProjectResource, WarehouseResource

GROUP = "grapheval"
SUITE = GraphEvalSuite()


def _write_empty(warehouse: WarehouseResource, model: str, note: str) -> dg.MaterializeResult:
    warehouse.write_partition("grapheval_hidden_judge", LABEL_SCHEMA.empty_table(), {MODEL: model})
    warehouse.write_partition("grapheval_hidden_judge_metrics", table([], METRIC_SCHEMA), {MODEL: model})
    return dg.MaterializeResult(metadata={**table_metadata(0), "note": note})


def _judge(context, cfg, warehouse: WarehouseResource, models: ModelPool, model: str) -> dg.MaterializeResult:
    """The judge on one model partition (the asset's work, per partition of its run)."""
    settings = SUITE.load_settings(cfg)
    if settings is None or settings.judge != "hidden_state":
        return _write_empty(warehouse, model, "suites.grapheval.judge is not hidden_state")
    specs = {s.name: s for s in SUITE.model_specs(cfg, generation_models(cfg))}
    spec = specs[model]
    if spec.backend != "transformers":
        return _write_empty(warehouse, model, f"model {model} is a {spec.backend} model; the judge reads the "
                                              "hidden states of a transformers model")
    opts = settings.hidden_judge
    backend = models.pool.get(spec)
    hidden = backend
    if opts.substitute_model:
        from dataclasses import replace

        from kgprobe.generation.backends.hf import HFBackend

        hidden = HFBackend(replace(spec.config, model_id=opts.substitute_model))
    scoring = scoring_settings(cfg)
    try:
        result = run_hidden_judge(
            warehouse.read_partition("grapheval_items").to_pylist(),
            warehouse.read_partition("grapheval_responses", {MODEL: model}).to_pylist(),
            hidden, generator=backend, model=model, params=spec.params, seed=cfg.seed,
            train_share=opts.train_share, epochs=opts.epochs, batch_size=opts.batch_size, lr=opts.lr,
            max_statements=opts.max_statements, timing_statements=opts.timing_statements,
            forward_batch_size=opts.forward_batch_size, confidence=scoring.confidence,
            resamples=scoring.resamples, hidden_model=opts.substitute_model)
    finally:
        if hidden is not backend:
            hidden.close()
    warehouse.write_partition("grapheval_hidden_judge", result.labels, {MODEL: model})
    warehouse.write_partition("grapheval_hidden_judge_metrics", table(result.metrics, METRIC_SCHEMA),
                              {MODEL: model})
    s = result.summary
    context.log.info(f"grapheval judge {model}: macro F1 {s['f1']:.3f} (majority-class baseline "
                     f"{s['baseline_f1']:.3f}), speed-up {s['speedup']:.1f}x")
    overall = [{"labels": m["judge"], "metric": m["metric"], "value": m["value"], "n": m["n"]}
               for m in result.metrics if not m["breakdown"]]
    return dg.MaterializeResult(metadata={
        **table_metadata(result.labels.num_rows),
        **{k: v for k, v in s.items() if isinstance(v, (int, float, str))},
        "train_class_counts": dg.MetadataValue.json(s["train_class_counts"]),
        "metrics": dg.MetadataValue.md(markdown_table(overall, limit=40)),
    })


def build(parts) -> tuple[list, list]:
    """The judge asset on the project's model partitions (``parts.model``, from :mod:`pipelines.partitions`) and its
    check: ``(assets, checks)``, as ``assets.perturb.build`` gives."""

    @dg.asset(name="grapheval_hidden_judge", group_name=GROUP, kinds={"parquet", "python"},
              partitions_def=parts.model, deps=["grapheval_responses"])
    def grapheval_hidden_judge(context: dg.AssetExecutionContext, project: ProjectResource,
                               warehouse: WarehouseResource, models: ModelPool) -> dg.MaterializeResult:
        """GraphEval's hidden-state judge: statements labelled from one forward pass each, beside generated answers."""
        cfg = project.load()
        for key in context.partition_keys:  # one model, or each of a range (kgprobe run's reference models)
            result = _judge(context, cfg, warehouse, models, key)
            context.add_asset_metadata(result.metadata or {}, partition_key=key)
        return dg.MaterializeResult()

    return [grapheval_hidden_judge], [grapheval_hidden_judge_f1]


@dg.asset_check(asset="grapheval_hidden_judge",
                description="Warns when the judge's macro F1 on held-out groups (correctness classes right / wrong / "
                            "IDK) does not beat the majority-class baseline's: its labels should not stand in for "
                            "answers.")
def grapheval_hidden_judge_f1(context: dg.AssetCheckExecutionContext,
                              warehouse: WarehouseResource) -> dg.AssetCheckResult:
    rows = [r for dims in partitions_to_check(context, warehouse.root, "grapheval_hidden_judge", default_dim=MODEL)
            for r in warehouse.read_partition("grapheval_hidden_judge", dims).to_pylist()]
    held = [r for r in rows if r["split"] == "heldout" and r["generated_class"] in CLASSES]
    if not held:
        return dg.AssetCheckResult(passed=True, severity=dg.AssetCheckSeverity.WARN,
                                   metadata={"heldout": 0, "note": "no held-out statements"})
    reference = [r["generated_class"] for r in held]
    judge = precision_recall_f1(reference, [r["judge_class"] for r in held])
    baseline = precision_recall_f1(reference, [r["baseline_class"] for r in held])
    return dg.AssetCheckResult(passed=judge["f1"] > baseline["f1"], severity=dg.AssetCheckSeverity.WARN,
                               metadata={"heldout": len(held), "macro_f1": judge["f1"],
                                         "baseline_macro_f1": baseline["f1"], "weighted_f1": judge["weighted_f1"],
                                         "baseline_weighted_f1": baseline["weighted_f1"]})


#: The judge asset needs the project's model partitions, so it comes from ``build(parts)``, not from ASSETS.
ASSETS: list = []
CHECKS: list = []

__all__ = ["ASSETS", "CHECKS", "build"]
