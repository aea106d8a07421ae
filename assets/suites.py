"""The suite factory: one lane of assets and checks for every enabled suite of :data:`kgprobe.suites.SUITES`.

For a suite ``s`` (asset group ``s`` in the UI):

* ``s_items``: its questions (``Suite.items``), after its own upstream assets (``Suite.upstream``);
* ``s_responses[model]``: every configured model's answers, through the response store (resumable);
* ``s_scores[model]``: answers read, judged, voted and measured (``Suite.score``), written as ``s_scores`` (votes),
  ``s_scores_samples``, ``s_scores_metrics`` (the common metric schema) and ``s_scores_agreement``;
* for a groundable suite, when the config grounds it: ``s_grounded_responses[model|perturbation]`` (each question
  with its KG context at that perturbation level) and ``s_grounded_scores[model|perturbation]``.

Models are loaded once per run: responses and judges of every suite in a run ask the ``models`` resource (a
:class:`~kgprobe.generation.BackendPool` that lives as long as the run). Nothing here knows any one suite.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

import math
from collections import Counter

import dagster as dg
import pyarrow as pa

from assets._checks import concat, expectations_result, partition_dims, partitions_to_check
from assets._metadata import image_md, markdown_table, table_metadata
from kgprobe import warehouse as wh
from kgprobe.config import (
    generation_models,
    generation_settings,
    scoring_settings,
    subgraph_settings,
)
from kgprobe.generation.store import ResponseStore
from kgprobe.kg.stats import current_snapshot, labels
from kgprobe.project.plan import partition_prompts, perturbed_subgraphs
from kgprobe.scoring.judges import judge_runner
from kgprobe.scoring.quality import validate_responses
from kgprobe.suites import SUITES
from kgprobe.suites.base import ItemSource, ScoringOptions, is_best
from kgprobe.suites.store import store_items
from kgprobe.kg.readable import label_advice, label_report, unreadable_names
from kgprobe.stages import needed_stages
from kgprobe.sql import quote_identifier
from pipelines.partitions import MODEL, PERTURBATION, Partitions
from resources import EmbedderResource, ModelPool, ProjectResource, WarehouseResource

#: The items a suite did not write because their text would show an id instead of a name.
LABEL_REJECTS = pa.schema([("item_id", pa.string()), ("group_id", pa.string()), ("question", pa.string()),
                           ("ids", pa.list_(pa.string())), ("reason", pa.string())])

__all__ = ["LABEL_REJECTS", "build", "enabled_suites", "grounded_enabled", "lane_assets", "score_metadata"]


def enabled_suites(cfg) -> list:
    """The registered suites the project config enables (a ``suites: {name: ...}`` section, or a top-level one)."""
    if cfg is None:
        return []
    return [s for name, s in SUITES.items() if s.configured(cfg)]


def lane_assets(suite, grounded: bool) -> dict[str, str]:
    """The asset names of a suite's lane by role."""
    names = {"items": f"{suite.name}_items", "responses": f"{suite.name}_responses", "scores": f"{suite.name}_scores"}
    if grounded:
        names.update(grounded_responses=f"{suite.name}_grounded_responses", grounded_scores=f"{suite.name}_grounded_scores")
    return names


def _spec(cfg, suite, name: str):
    specs = {m.name: m for m in suite.model_specs(cfg, generation_models(cfg))}
    if name not in specs:
        raise ValueError(f"model partition {name!r} is not in the config's models {sorted(specs)}")
    return specs[name]


def _metadata(values) -> dict:
    """A suite's plain metadata as Dagster metadata: row lists as Markdown tables, PNG bytes as images."""
    out = {}
    for key, value in values.items():
        if isinstance(value, bytes):
            out[key] = image_md(value, alt=key)
        elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
            out[key] = dg.MetadataValue.md(markdown_table(value, limit=200))
        elif isinstance(value, list):  # plain values (relation keys, say)
            out[key] = dg.MetadataValue.json(value)
        else:
            out[key] = value
    return out


def _fmt(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def build(parts: Partitions, cfg) -> tuple[list, list]:
    """Every enabled suite's lane: assets and checks."""
    assets, checks = [], []
    for suite in enabled_suites(cfg):
        a, c = _lane(suite, parts, grounded=suite.name in grounded_enabled(cfg))
        assets += a
        checks += c
    return assets, checks


def grounded_enabled(cfg) -> set:
    """Names of the enabled suites that get a grounded lane: groundable ones, when the config has a perturbation
    section (not ``none``) and grounds at least one model (:func:`kgprobe.stages.needed_stages`)."""
    return set(needed_stages(cfg).grounded_suites)


def _lane(suite, parts: Partitions, grounded: bool) -> tuple[list, list]:
    names = lane_assets(suite, grounded)
    group = suite.name

    @dg.asset(name=names["items"], group_name=group, kinds={"parquet"}, deps=["kg", *suite.upstream],
              description=f"{suite.title}: the questions, with gold answers, breakdown and evidence.")
    def items_asset(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
        cfg = project.load()
        settings = suite.load_settings(cfg)
        kg = getattr(settings, "kg", None) or next(iter(cfg.kgs), None)  # None: a purely relational project
        # upstream assets that write Parquet arrive as tables; one that writes into DuckDB (ERBench's erdb) is read
        # by the suite through the connection
        upstream = {name: warehouse.read_partition(name) for name in suite.upstream
                    if wh.partition_dir(warehouse.root, name).exists()}
        with warehouse.connect(read_only=True) as con:
            snapshot = current_snapshot(con, kg) if kg else ""
            if kg:
                con.execute(f"USE {quote_identifier(kg)}")
            named = bool(kg) and suite.names_kg_entities and cfg.require_labels.get(kg, True)
            result = suite.items(ItemSource(con=con, kg=kg, snapshot_id=snapshot, settings=settings, seed=cfg.seed,
                                            config_dir=cfg.path.parent, upstream=upstream, named_only=named))
            coverage = label_report(con, kg) if named else None
            hidden = set().union(*unreadable_names(con, kg)) if named else set()
            if not isinstance(result.items, pa.Table):
                context.log.info(f"{suite.name}: writing the items a batch at a time as they are built")
            # filtered, checked and written (a stream batch by batch, while the connection still reads the KG)
            stored = store_items(warehouse.root, names["items"], suite.name, result.items, unreadable=hidden,
                                 columns=suite.named_text_columns)
        unreadable = stored.rejected
        advice = None
        if coverage is not None:
            context.log.info(f"{suite.name}: {coverage['readable_entities']}/{coverage['entities']} entities of {kg} "
                             f"have a readable name; {len(unreadable)} items rejected for showing an id "
                             f"({len({r['group_id'] for r in unreadable})} groups)")
            advice = label_advice(suite.name, coverage, len(unreadable), stored.rows)
            if advice:
                context.log.warning(advice)
        warehouse.write_partition(f"{suite.name}_label_rejects", pa.Table.from_pylist(unreadable, schema=LABEL_REJECTS))
        if result.rejects is not None:
            warehouse.write_partition(f"{suite.name}_rejects", result.rejects)
        context.log.info(f"{suite.name}: {stored.rows} items written"
                         + (f", {result.rejects.num_rows} rejected" if result.rejects is not None else ""))
        by, rows = stored.by_format, stored.preview
        return dg.MaterializeResult(metadata={
            **table_metadata(stored.rows),
            "rejected": 0 if result.rejects is None else result.rejects.num_rows,
            "rejected_no_readable_name": len(unreadable),
            **({"label_advice": advice} if advice else {}),
            **({} if coverage is None else {
                "readable_entity_share": coverage["readable_share"],
                "relations_named_by_path": len(coverage["path_relations"]),
                "relations_without_name": ", ".join(coverage["unreadable_relations"]) or "none"}),
            "label_rejects": dg.MetadataValue.md(markdown_table(unreadable, limit=30)),
            "items_by_task": dg.MetadataValue.md(markdown_table(
                [{"task": t, "answer_format": f, "items": n} for (t, f), n in sorted(by.items())])),
            **_metadata(result.metadata),
            "preview": dg.MetadataValue.md(markdown_table(
                [{k: r[k] for k in ("task", "answer_format", "question", "expected")} for r in rows], limit=30)),
        })

    def _generate(context, project, warehouse, models, spec, prompts, asset, dims):
        opts = generation_settings(project.load())
        store = ResponseStore(warehouse.root / "response_store")
        from kgprobe.generation import run_generation
        from kgprobe.generation.cost import Budget, plan_generation
        from kgprobe.generation.imports import imported_prompts

        if spec.backend == "imported":  # answered elsewhere: the partition holds the prompts it has answers for
            prompts = imported_prompts(store, spec, prompts)
            context.log.info(f"{suite.name}: {spec.name}: {len(prompts)} prompt(s) with imported answers; the others "
                             "are left out of this partition (backend: imported is never asked)")

        # the plan of this partition, before anything is sent: logged, kept beside the answers for the report
        plan = plan_generation(spec, prompts, store=store)
        context.log.info(f"{suite.name}: {spec.name}: plan: {plan.to_generate} of {plan.samples} samples to generate, "
                         f"~{plan.input_tokens} input + ~{plan.output_tokens} output tokens"
                         + (f", ~${plan.cost_usd:.4f}" if plan.cost_usd else ""))
        warehouse.write_partition(f"{asset}_plan", pa.Table.from_pylist([{
            **dims, "suite": suite.name, "run_id": context.run.run_id, **plan.as_dict()}]), dims)
        budget = Budget.for_model(spec, store, run_id=context.run.run_id, max_run_cost_usd=opts["max_run_cost_usd"])
        summary = run_generation(models.pool.get(spec), model=spec.name, prompts=prompts, params=spec.params,
                                 store=store, run_id=context.run.run_id, shard_size=opts["shard_size"],
                                 batch_size=spec.batch_size, log=context.log.info, budget=budget,
                                 max_failed_share=opts["max_failed_share"])
        return summary, store.rows_for(spec.name, prompts, spec.params), plan

    def _response_metadata(summary, table: pa.Table, plan) -> dict:
        errors = Counter((e or "").split(":")[0] for e in table.column("error").to_pylist() if e)
        rows = table.select(["item_id", "sample_index", "text"]).to_pylist()
        return {
            **table_metadata(table.num_rows),
            **{k: v for k, v in summary.as_dict().items() if isinstance(v, (int, float))},
            "planned": dg.MetadataValue.md(markdown_table([{
                "samples": plan.samples, "stored before": plan.stored, "to generate": plan.to_generate,
                "input tokens (est.)": plan.input_tokens, "counted by": plan.input_basis,
                "output tokens (est.)": plan.output_tokens, "from": plan.output_basis,
                "cost (est.)": "-" if plan.cost_usd is None else f"${plan.cost_usd:.4f}"}])),
            "failed_samples": sum(errors.values()),
            "errors": dg.MetadataValue.md(markdown_table([{"error": e, "samples": n} for e, n in errors.most_common()])),
            "preview": dg.MetadataValue.md(markdown_table(
                [{"item_id": r["item_id"], "sample": r["sample_index"], "text": (r["text"] or "")[:80]} for r in rows],
                limit=12)),
        }

    @dg.asset(name=names["responses"], group_name=group, kinds={"parquet"}, partitions_def=parts.model,
              deps=[items_asset],
              description=f"{suite.title}: every question answered by one model (closed book), resumable.")
    def responses_asset(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource,
                        models: ModelPool) -> dg.MaterializeResult:
        cfg = project.load()
        items = warehouse.read_partition(names["items"]).to_pylist()
        # one model, or each of a range (kgprobe run answers the reference models in one run)
        for key in context.partition_keys:
            spec = _spec(cfg, suite, key)
            prompts = partition_prompts(cfg, suite, spec, items).prompts
            context.log.info(f"{suite.name}: {spec.name} ({spec.backend}): {len(prompts)} prompts x {spec.params.n} "
                             "samples")
            dims = {MODEL: spec.name}
            summary, table, plan = _generate(context, project, warehouse, models, spec, prompts, names["responses"],
                                             dims)
            warehouse.write_partition(names["responses"], table, dims)
            context.add_asset_metadata(_response_metadata(summary, table, plan), partition_key=key)
        return dg.MaterializeResult()

    def _score(context, project, warehouse, models, embedder, responses_name, dims):
        cfg = project.load()
        settings = scoring_settings(cfg)
        store = ResponseStore(warehouse.root / "response_store")
        opts = generation_settings(cfg)
        judge = judge_runner(models.pool, store, run_id=context.run.run_id, shard_size=opts["shard_size"],
                             log=context.log.info, max_failed_share=opts["max_failed_share"])
        items = warehouse.read_partition(names["items"]).to_pylist()
        stored = warehouse.read_partition(responses_name, dims).to_pylist()
        # a failed request is a missing answer, never a wrong one: it is not scored
        responses = [r for r in stored if r.get("error") is None]
        context.log.info(f"{suite.name}: scoring {len(responses)} answers of {dims}"
                         + (f" ({len(stored) - len(responses)} failed requests left out, not scored)"
                            if len(responses) < len(stored) else ""))
        return suite.score(items, responses, model=dims[MODEL], perturbation=dims.get(PERTURBATION, "none"),
                           scoring=ScoringOptions(judges=settings.judges, judge=judge, confidence=settings.confidence,
                                                  resamples=settings.resamples, seed=settings.seed,
                                                  log=context.log.info, embedder=embedder.get(),
                                                  settings=suite.load_settings(cfg)))

    def _write_scores(warehouse, asset: str, scored, dims: dict) -> dict:
        tables = scored.tables()
        warehouse.write_partition(f"{asset}_samples", tables["samples"], dims)
        warehouse.write_partition(f"{asset}_metrics", tables["metrics"], dims)
        warehouse.write_partition(f"{asset}_agreement", tables["agreement"], dims)
        warehouse.write_partition(asset, tables["votes"], dims)
        return score_metadata(suite, scored)

    @dg.asset(name=names["scores"], group_name=group, kinds={"parquet", "python"}, partitions_def=parts.model,
              deps=[responses_asset],
              description=f"{suite.title}: one model's answers read, judged, voted and measured, with 95% intervals.")
    def scores_asset(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource,
                     models: ModelPool, embedder: EmbedderResource) -> dg.MaterializeResult:
        for key in context.partition_keys:  # one model, or each of a range
            dims = {MODEL: key}
            scored = _score(context, project, warehouse, models, embedder, names["responses"], dims)
            context.add_asset_metadata(_write_scores(warehouse, names["scores"], scored, dims), partition_key=key)
        return dg.MaterializeResult()

    lane = [items_asset, responses_asset, scores_asset]
    lane_checks = [_responses_check(suite, names["responses"], parts.model),
                   *_score_checks(suite, names["scores"], parts.model)]

    if grounded:
        @dg.asset(name=names["grounded_responses"], group_name=group, kinds={"parquet"},
                  partitions_def=parts.model_perturbation, deps=[items_asset, "perturbed_subgraphs"],
                  description=f"{suite.title}: one model's answers with KG context at one perturbation level.")
        def grounded_responses_asset(context: dg.AssetExecutionContext, project: ProjectResource,
                                     warehouse: WarehouseResource, models: ModelPool,
                                     embedder: EmbedderResource) -> dg.MaterializeResult:
            cfg = project.load()
            items = warehouse.read_partition(names["items"]).to_pylist()
            with warehouse.connect(read_only=True) as con:
                ent, rel = labels(con, subgraph_settings(cfg).kg)
            # one partition, or each of a range (kgprobe run answers a model's levels in one run)
            for key in context.partition_keys:
                keys = partition_dims(parts.model_perturbation, key)
                spec = _spec(cfg, suite, keys[MODEL])
                perturbation = keys[PERTURBATION]
                subgraphs = perturbed_subgraphs(warehouse.root, perturbation)
                part = partition_prompts(cfg, suite, spec, items, subgraphs=subgraphs, labels=(ent, rel),
                                         embedder=embedder.get())
                prompts, used, context_text = part.prompts, part.context_query, part.context
                context.log.info(f"{suite.name}: {spec.name} on {perturbation}: {len(prompts)} grounded prompts x "
                                 f"{spec.params.n} samples")
                dims = {MODEL: spec.name, PERTURBATION: perturbation}
                summary, table, plan = _generate(context, project, warehouse, models, spec, prompts,
                                                 names["grounded_responses"], dims)
                table = table.append_column("perturbation", pa.array([perturbation] * table.num_rows, pa.string()))
                ids = table.column("item_id").to_pylist()
                table = table.append_column("context_query_id", pa.array([used[i] for i in ids], pa.string()))
                # what the model saw, beside its answer: always inspectable
                table = table.append_column("context", pa.array([context_text.get(i) for i in ids], pa.string()))
                warehouse.write_partition(names["grounded_responses"], table, dims)
                context.add_asset_metadata({**_response_metadata(summary, table, plan),
                                            "items_without_context": sum(1 for q in used.values()
                                                                         if q not in subgraphs)}, partition_key=key)
            return dg.MaterializeResult()

        @dg.asset(name=names["grounded_scores"], group_name=group, kinds={"parquet", "python"},
                  partitions_def=parts.model_perturbation, deps=[grounded_responses_asset],
                  description=f"{suite.title}: grounded answers of one model at one level read, judged, voted, measured.")
        def grounded_scores_asset(context: dg.AssetExecutionContext, project: ProjectResource,
                                  warehouse: WarehouseResource, models: ModelPool,
                                  embedder: EmbedderResource) -> dg.MaterializeResult:
            for key in context.partition_keys:  # one partition, or each of a range
                keys = partition_dims(parts.model_perturbation, key)
                dims = {MODEL: keys[MODEL], PERTURBATION: keys[PERTURBATION]}
                scored = _score(context, project, warehouse, models, embedder, names["grounded_responses"], dims)
                context.add_asset_metadata(_write_scores(warehouse, names["grounded_scores"], scored, dims),
                                           partition_key=key)
            return dg.MaterializeResult()

        lane += [grounded_responses_asset, grounded_scores_asset]
        lane_checks += [_responses_check(suite, names["grounded_responses"], parts.model_perturbation),
                        *_score_checks(suite, names["grounded_scores"], parts.model_perturbation)]
    return lane, lane_checks


def score_metadata(suite, scored) -> dict:
    """What a scored partition shows in the UI: the headline as a number (so the UI plots it across runs), then the
    overall metrics with the headline first (read, not judged, first; then each judge), and judge agreement."""
    tables = scored.tables()
    overall = [m for m in scored.metrics if not m["breakdown"]]
    head = suite.headline
    overall.sort(key=lambda m: (m["task"] != head.task, m["judge"], m["metric"] != head.metric, m["metric"]))
    value = next((m["value"] for m in overall if (m["task"], m["judge"], m["metric"]) == (head.task, "", head.metric)),
                 math.nan)
    return {
        # a number, so the UI plots it across materializations; left out when undefined
        **({head.metric: round(value, 4)} if not math.isnan(value) else {}),
        **table_metadata(tables["votes"].num_rows),
        "answers": tables["samples"].num_rows,
        "scores": dg.MetadataValue.md(markdown_table([
            {"task": m["task"], "judge": m["judge"] or "-",
             "metric": f"{m['metric']} (headline)" if m["metric"] == head.metric else m["metric"],
             "n": m["n"], "value": _fmt(m["value"]), "CI": f"[{_fmt(m['ci_low'])}, {_fmt(m['ci_high'])}]",
             "interval": m["interval"]} for m in overall], limit=40)),
        "judge_agreement": dg.MetadataValue.md(markdown_table(
            [{"judges": f"{a['judge_a']} / {a['judge_b']}", "n": a["n"], "agreement": _fmt(a["agreement"]),
              "kappa": _fmt(a["kappa"])} for a in scored.agreement])),
    }


def _responses_check(suite, asset: str, partitions_def):
    # One check step per partition for both rules: a grounded lane has a partition per model and level, and every
    # extra step is run overhead.
    @dg.asset_check(asset=asset, name=f"{asset}_expectations", blocking=True,
                    description="In the run's partition, each question has all its samples once, with lineage, and the "
                                "Great Expectations suite passes: ids non-null, text or error on every row.")
    def check(context: dg.AssetCheckExecutionContext, project: ProjectResource,
              warehouse: WarehouseResource) -> dg.AssetCheckResult:
        cfg = project.load()
        specs = {m.name: m for m in suite.model_specs(cfg, generation_models(cfg))}
        problems, tables, checked = [], [], []
        for dims in partitions_to_check(context, warehouse.root, asset, default_dim=MODEL,
                                        partitions_def=partitions_def):
            table = warehouse.read_partition(asset, dims)
            tables.append(table)
            checked.append(dims)
            rows = table.select(["item_id", "sample_index", "model", "prompt_template_id", "params_sha256"]).to_pylist()
            spec = specs.get(dims.get(MODEL))
            keys = Counter((r["item_id"], r["sample_index"]) for r in rows)
            per_item = Counter(r["item_id"] for r in rows)
            problems.append({
                **dims,
                "duplicate_keys": sum(1 for c in keys.values() if c > 1),
                "items_with_wrong_sample_count": sum(1 for c in per_item.values()
                                                     if spec is not None and c != spec.params.n),
                "rows_without_lineage": sum(1 for r in rows
                                            if not (r["model"] and r["prompt_template_id"] and r["params_sha256"])),
            })
        incomplete = [p for p in problems
                      if p["duplicate_keys"] or p["items_with_wrong_sample_count"] or p["rows_without_lineage"]]
        # the run's partitions in one validation (each uniqueness rule's key holds the partition's dimensions)
        outcomes = validate_responses(concat(tables), name=_label(asset, checked)) if tables else []
        result = expectations_result(outcomes)
        return dg.AssetCheckResult(passed=result.passed and not incomplete, metadata={
            **result.metadata, "completeness": dg.MetadataValue.md(markdown_table(problems))})

    return check


def _label(asset: str, checked: list) -> str:
    """What the outcomes of a check name: the asset and its one partition, or how many it validated together."""
    return f"{asset} {checked[0]}" if len(checked) == 1 else f"{asset} ({len(checked)} partitions)"


def _score_checks(suite, asset: str, partitions_def) -> list:
    @dg.asset_check(asset=asset, name=f"{asset}_expectations", blocking=True,
                    description="Great Expectations suites on the answers, votes and metrics of the run's partition.")
    def expectations(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
        checked = partitions_to_check(context, warehouse.root, asset, default_dim=MODEL, partitions_def=partitions_def)
        if not checked:
            return expectations_result([])
        # the run's partitions in one validation (each uniqueness rule's key holds the partition's dimensions)
        tables = {kind: concat([warehouse.read_partition(f"{asset}_{kind}" if kind != "votes" else asset, dims)
                                for dims in checked]) for kind in ("samples", "votes", "metrics")}
        return expectations_result(suite.validate(tables, name=_label(asset, checked)))

    @dg.asset_check(asset=asset, name=f"{asset}_unknown_share",
                    description="More than scoring.unknown_warn (20%) of the answers read by the suite's own reader "
                                "(not by a judge) are unknown. The reference baselines (always-yes, always-no, "
                                "random) are left out: their fixed answers are unreadable by design where a "
                                "question asks for more than yes or no.")
    def unknown_share(context: dg.AssetCheckExecutionContext, project: ProjectResource,
                      warehouse: WarehouseResource) -> dg.AssetCheckResult:
        cfg = project.load()
        limit = scoring_settings(cfg).unknown_warn
        baselines = {m.name for m in generation_models(cfg) if m.backend == "reference" and m.config.kind != "oracle"}
        rows, examples = [], []
        for dims in partitions_to_check(context, warehouse.root, asset, default_dim=MODEL,
                                        partitions_def=partitions_def):
            if dims.get(MODEL) in baselines:
                continue
            samples = [s for s in warehouse.read_partition(f"{asset}_samples", dims).to_pylist() if not s["judge"]]
            unknown = [s for s in samples if s["label"] == "unknown"]
            share = len(unknown) / len(samples) if samples else 0.0
            rows.append({**dims, "answers": len(samples), "unknown": len(unknown), "share": round(share, 3)})
            if share > limit:
                examples += [{**dims, "response_id": s["response_id"],
                              "text": repr(s["text"] if s["error"] is None else s["error"])[:100]} for s in unknown[:5]]
        over = [r for r in rows if r["share"] > limit]
        return dg.AssetCheckResult(passed=not over, severity=dg.AssetCheckSeverity.WARN, metadata={
            "limit": limit, "partitions_over": len(over),
            "partitions": dg.MetadataValue.md(markdown_table(sorted(rows, key=lambda r: -r["share"]))),
            "examples": dg.MetadataValue.md(markdown_table(examples, limit=25)),
        })

    @dg.asset_check(asset=asset, name=f"{asset}_oracle_is_perfect", blocking=True,
                    description="The oracle reference model scores the best value on every metric (higher_is_better "
                                "says which end): proof that items, answers, reading, votes and metrics fit together.")
    def oracle_is_perfect(context: dg.AssetCheckExecutionContext, project: ProjectResource,
                          warehouse: WarehouseResource) -> dg.AssetCheckResult:
        cfg = project.load()
        oracles = {m.name for m in generation_models(cfg) if m.backend == "reference" and m.config.kind == "oracle"}
        # open answers are judged; only a reference oracle judge knows the verdict on the oracle's fixed answers
        judges = {"", *(j.name for j in scoring_settings(cfg).judges if j.name in oracles)}
        checked, bad = [], []
        for dims in partitions_to_check(context, warehouse.root, asset, default_dim=MODEL,
                                        partitions_def=partitions_def):
            if dims.get(MODEL) not in oracles:
                continue
            checked.append(dims[MODEL])
            for m in warehouse.read_partition(f"{asset}_metrics", dims).to_pylist():
                if m["judge"] in judges and not is_best(m):
                    bad.append({"model": dims[MODEL], "task": m["task"], "judge": m["judge"], "metric": m["metric"],
                                "breakdown": dict(m["breakdown"] or []), "n": m["n"], "value": m["value"]})
        return dg.AssetCheckResult(passed=not bad, metadata={
            "oracle_partitions_checked": ", ".join(checked) or "none in this run",
            "judges_checked": ", ".join(sorted(j or "(read, not judged)" for j in judges)),
            "imperfect_metrics": dg.MetadataValue.md(markdown_table(bad, limit=30)),
        })

    return [expectations, unknown_share, oracle_is_perfect]
