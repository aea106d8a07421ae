"""GraphEval's own asset after its responses: the hidden-state judge (the paper's §3.2), per model partition.
``grapheval_items`` and the rest of the lane come from the suite factory (``assets/suites.py``).

``grapheval_hidden_judge[model]`` reads the lane's items and the model's responses, computes one forward pass per
statement (the model's own weights from the run's model pool, or ``hidden_judge.substitute_model``), trains one
judge on the answered groups of each profile (never across the two prompt formats), and writes
``grapheval_hidden_judge`` (per-statement labels and splits) and
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
from kgprobe.suites.grapheval.judge import LABEL_SCHEMA, judge_against_baseline, run_hidden_judge
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
            resamples=scoring.resamples, hidden_model=opts.substitute_model, network=opts.network)
    finally:
        if hidden is not backend:
            hidden.close()
    warehouse.write_partition("grapheval_hidden_judge", result.labels, {MODEL: model})
    warehouse.write_partition("grapheval_hidden_judge_metrics", table(result.metrics, METRIC_SCHEMA),
                              {MODEL: model})
    profiles = result.summary["profiles"]
    for name, s in profiles.items():
        context.log.info(f"grapheval judge {model}, {name} profile: agreement {s['agreed']}/{s['heldout_classed']} "
                         f"(majority-class baseline {s['baseline_agreed']}/{s['heldout_classed']}), macro F1 "
                         f"{s['f1']:.3f} (baseline {s['baseline_f1']:.3f}), speed-up {s['speedup']:.1f}x"
                         + ("" if s["beats_baseline"] else "; the judge does not beat its baseline"))
    overall = [{"labels": m["judge"], "task": m["task"], "metric": m["metric"], "value": m["value"], "n": m["n"]}
               for m in result.metrics if not m["breakdown"]]
    return dg.MaterializeResult(metadata={
        **table_metadata(result.labels.num_rows),
        "profiles": dg.MetadataValue.json(profiles),
        "skipped_profiles": dg.MetadataValue.json(result.summary["skipped"]),
        "beats_baseline": dg.MetadataValue.json({name: s["beats_baseline"] for name, s in profiles.items()}),
        "metrics": dg.MetadataValue.md(markdown_table(overall, limit=60)),
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

    return [grapheval_hidden_judge], [grapheval_hidden_judge_agreement]


@dg.asset_check(asset="grapheval_hidden_judge",
                description="Warns when, in a profile, the judge's agreement with the generated answers' correctness "
                            "classes (right / wrong / IDK) on held-out groups does not beat the majority-class "
                            "baseline's (always the commonest training class): its labels should not stand in for "
                            "answers. Each profile (prompt format) has its own judge and baseline.")
def grapheval_hidden_judge_agreement(context: dg.AssetCheckExecutionContext,
                                     warehouse: WarehouseResource) -> dg.AssetCheckResult:
    rows = [r for dims in partitions_to_check(context, warehouse.root, "grapheval_hidden_judge", default_dim=MODEL)
            for r in warehouse.read_partition("grapheval_hidden_judge", dims).to_pylist()]
    by_profile = judge_against_baseline(rows)
    if not by_profile:
        return dg.AssetCheckResult(passed=True, severity=dg.AssetCheckSeverity.WARN,
                                   metadata={"heldout": 0, "note": "no held-out statements"})
    losing = [r["profile"] for r in by_profile if not r["beats_baseline"]]
    return dg.AssetCheckResult(passed=not losing, severity=dg.AssetCheckSeverity.WARN, metadata={
        "heldout": sum(r["heldout"] for r in by_profile),
        "profiles_not_beating_baseline": ", ".join(losing) or "none",
        "by_profile": dg.MetadataValue.md(markdown_table(by_profile, limit=10))})


#: The judge asset needs the project's model partitions, so it comes from ``build(parts)``, not from ASSETS.
ASSETS: list = []
CHECKS: list = []

__all__ = ["ASSETS", "CHECKS", "build"]
