"""Report stage: the leaderboard over every scored partition (DuckDB tables) and one self-contained HTML report.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

import json
from datetime import datetime, timezone

import dagster as dg
import pyarrow as pa

from assets._metadata import image_md, markdown_table, table_metadata
from assets.suites import enabled_suites, grounded_enabled, lane_assets
from kgprobe.project.plan import unscored
from kgprobe.stages import needed_stages
from kgprobe import warehouse as wh
from kgprobe.config import generation_models, named_models, scoring_settings
from kgprobe.kg.stats import current_snapshot
from kgprobe.report.consistency import consistency, fact_stances
from kgprobe.report.cost import cost_rows
from kgprobe.report.leaderboard import headline_rows
from kgprobe.report.render import ReportContext, consistency_section, render_page, write_report
from kgprobe.scoring.stats import pooled_agreement
from kgprobe.suites.base import AGREEMENT_SCHEMA, METRIC_SCHEMA, Suite, table
from kgprobe.sql import quote_identifier
from resources import ProjectResource, WarehouseResource

GROUP = "report"
SETTINGS = ("closed", "grounded")
REPORT_PATH = ("report", "report.html")


def _scores_asset(suite, setting: str) -> str:
    """The name of a suite's scores asset in one setting (its factory-made lane names it)."""
    return lane_assets(suite, grounded=True)["scores" if setting == "closed" else "grounded_scores"]


def _read_all(warehouse: WarehouseResource, asset: str, schema=None) -> pa.Table:
    """Every partition of ``asset`` (empty, with ``schema``, when none has been written)."""
    tables = [warehouse.read_partition(asset, dims) for dims in wh.partitions(warehouse.root, asset)]
    if not tables:
        return schema.empty_table() if schema is not None else pa.table({})
    if schema is None:
        return pa.concat_tables(tables, promote_options="default")
    for t in tables:
        missing = [n for n in schema.names if n not in t.column_names]
        if missing:
            raise ValueError(f"a partition of {asset} has no column(s) {missing} (written by an older version); "
                             "re-materialize it")
    return pa.concat_tables([t.select(schema.names).cast(schema) for t in tables])


def _settings_of(cfg) -> list[tuple]:
    grounded = grounded_enabled(cfg)
    return [(s, setting) for s in enabled_suites(cfg) for setting in SETTINGS
            if setting == "closed" or s.name in grounded]


def _metrics(warehouse: WarehouseResource, cfg) -> pa.Table:
    """Every suite's metric rows, closed book and grounded, with a ``setting`` column."""
    parts = []
    for suite, setting in _settings_of(cfg):
        t = _read_all(warehouse, f"{_scores_asset(suite, setting)}_metrics", METRIC_SCHEMA)
        if setting == "closed" and type(suite).cross_model_metrics is not Suite.cross_model_metrics:
            # metrics over every model's votes at once (ERBench: entities every evaluated model knows)
            votes = _read_all(warehouse, _scores_asset(suite, setting)).to_pylist()
            items = {r["item_id"]: r for r in warehouse.read_partition(lane_assets(suite, False)["items"]).to_pylist()}
            extra = table(suite.cross_model_metrics(votes, items, settings=suite.load_settings(cfg),
                                                    models=named_models(cfg)), METRIC_SCHEMA)
            t = pa.concat_tables([t, extra])
        if setting == "closed":
            # the suite's own model-partitioned assets with metric rows (GraphEval: the hidden-state judge)
            t = pa.concat_tables([t, *(_read_all(warehouse, f"{a}_metrics", METRIC_SCHEMA) for a in suite.closed_extras)])
        parts.append(t.append_column("setting", pa.array([setting] * t.num_rows, pa.string())))
    schema = METRIC_SCHEMA.append(pa.field("setting", pa.string()))
    return pa.concat_tables(parts) if parts else schema.empty_table()


ALL_LEVELS = "all levels"


def _agreement(warehouse: WarehouseResource, cfg) -> pa.Table:
    """Judge agreement with ``suite`` and ``setting`` columns: every partition's own rows, plus rows pooled over all
    models (closed book) and over all models and levels (grounded)."""
    parts = []
    for suite, setting in _settings_of(cfg):
        asset = _scores_asset(suite, setting)
        own = _read_all(warehouse, f"{asset}_agreement", AGREEMENT_SCHEMA)
        votes = _read_all(warehouse, asset).to_pylist()
        pooled = pa.Table.from_pylist(
            pooled_agreement(votes, perturbation=None if setting == "closed" else ALL_LEVELS), schema=AGREEMENT_SCHEMA)
        for t in (own, pooled):
            t = t.append_column("suite", pa.array([suite.name] * t.num_rows, pa.string()))
            parts.append(t.append_column("setting", pa.array([setting] * t.num_rows, pa.string())))
    schema = AGREEMENT_SCHEMA.append(pa.field("suite", pa.string())).append(pa.field("setting", pa.string()))
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _cost(warehouse: WarehouseResource, cfg) -> list:
    """Per model, suite and setting: each generation partition's plan beside what its run generated."""
    entries = []
    for suite, setting in _settings_of(cfg):
        asset = lane_assets(suite, grounded=True)["responses" if setting == "closed" else "grounded_responses"]
        for dims in wh.partitions(warehouse.root, f"{asset}_plan"):
            plan = {**warehouse.read_partition(f"{asset}_plan", dims).to_pylist()[0], "setting": setting}
            answers = warehouse.read_partition(asset, dims) if wh.partition_dir(warehouse.root, asset, dims).exists() \
                else pa.table({"run_id": pa.array([], pa.string())})
            generated = [r for r in answers.to_pylist() if r.get("run_id") == plan.get("run_id")]
            entries.append((plan, generated))
    return cost_rows(entries)


def _table(con, name: str) -> list:
    """Rows of ``leaderboard.<name>``, or none when the leaderboard did not write that table."""
    found = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'leaderboard' AND "
                        "table_name = $n", {"n": name}).fetchone()[0]
    return con.execute(f"SELECT * FROM leaderboard.{quote_identifier(name)}").to_arrow_table().to_pylist() if found else []


def _stances(warehouse: WarehouseResource, cfg) -> list:
    """Every model's closed-book stance on every KG triple an item asserts, over all suites (with an answer text)."""
    out = []
    for suite in enabled_suites(cfg):
        names = lane_assets(suite, grounded=False)
        if not wh.partition_dir(warehouse.root, names["items"]).exists():
            continue
        items = warehouse.read_partition(names["items"]).select(["item_id", "suite", "question", "evidence"]).to_pylist()
        votes = _read_all(warehouse, names["scores"]).to_pylist()
        answers = {}
        samples = _read_all(warehouse, f"{names['scores']}_samples")
        if samples.num_rows:
            for r in samples.select(["model", "item_id", "sample_index", "judge", "text"]).to_pylist():
                if not r["judge"] and r["sample_index"] == 0:
                    answers[(r["model"], r["item_id"])] = r["text"]
        out += fact_stances(items, votes, answers)
    return out


def whole_config(cfg, log=None):
    """The config whose models and suites the leaderboard and report show: the file a narrowed run
    (``kgprobe run --suites / --models / --limit``) was written from, else ``cfg`` itself. A narrowed run reports
    every model and suite of the whole project that the warehouse holds, not only those it ran."""
    if not cfg.narrowed_from:
        return cfg
    from kgprobe.config import load_config
    from kgprobe.errors import ConfigError

    path = cfg.path.parent / cfg.narrowed_from
    try:
        return load_config(path)
    except (ConfigError, OSError) as exc:
        if log is not None:
            log(f"report: {path} (the config this run narrowed) cannot be read, so only the narrowed run's models and "
                f"suites are shown: {str(exc).splitlines()[0]}")
        return cfg


def build_report_assets(cfg) -> list:
    """The leaderboard and report assets, after every enabled suite's scores."""
    deps = [_scores_asset(s, setting) for s, setting in _settings_of(cfg)]

    @dg.asset(group_name=GROUP, kinds={"duckdb"}, deps=deps)
    def leaderboard(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """Every suite's metrics over every scored partition (DuckDB): long form, one headline per model and suite,
        and a wide table per suite and setting."""
        cfg = whole_config(project.load(), context.log.warning)
        models = [m.name for m in generation_models(cfg)]
        judges = [j.name for j in scoring_settings(cfg).judges]
        suites = enabled_suites(cfg)
        metrics = _metrics(warehouse, cfg)
        rows = metrics.to_pylist()
        agreement = _agreement(warehouse, cfg)
        stored = {"metrics": metrics.drop_columns(["item_ids"]), "judge_agreement": agreement}
        heads = headline_rows(rows, suites, models=models)
        if heads:
            stored["headlines"] = pa.Table.from_pylist(heads)
        for suite in suites:
            for name, wide in suite.wide_tables(rows, models=models, judges=judges).items():
                stored[name] = pa.Table.from_pylist(wide)
        cost = _cost(warehouse, cfg)
        if cost:
            stored["cost"] = pa.Table.from_pylist(cost)
        rates, shown = consistency(_stances(warehouse, cfg), confidence=scoring_settings(cfg).confidence)
        if rates:
            stored["consistency"] = pa.Table.from_pylist(rates)
            stored["consistency_examples"] = pa.Table.from_pylist(
                [{"model": e["model"], "triple": e["triple"], "suites": json.dumps(e["suites"])} for e in shown],
                schema=pa.schema([("model", pa.string()), ("triple", pa.string()), ("suites", pa.string())]))
        with warehouse.connect() as con:
            con.execute("CREATE SCHEMA IF NOT EXISTS leaderboard")
            for name, table in stored.items():
                con.register("_incoming", table)
                con.execute(f"CREATE OR REPLACE TABLE leaderboard.{quote_identifier(name)} AS SELECT * FROM _incoming")
                con.unregister("_incoming")
        partitions = {(r["setting"], r["suite"], r["model"], r["perturbation"]) for r in rows}
        context.log.info(f"leaderboard: {metrics.num_rows} metric rows of {len(suites)} suite(s) from "
                         f"{len(partitions)} partitions")
        return dg.MaterializeResult(metadata={
            **table_metadata(metrics.num_rows),
            "tables": ", ".join(f"leaderboard.{n} ({t.num_rows} rows)" for n, t in stored.items()),
            "headlines": dg.MetadataValue.md(markdown_table(
                [{k: h[k] for k in ("model", "suite", "label", "value", "ci_low", "ci_high", "n")} for h in heads],
                limit=100)),
        })

    similarity = ["kg_similarity"] if needed_stages(cfg).similarity else []

    @dg.asset(group_name=GROUP, kinds={"python"}, deps=[leaderboard, *similarity])
    def report(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """One self-contained HTML report (every suite's headline, leaderboards, judge agreement, plots, how to trace
        a number); plots also here."""
        cfg = whole_config(project.load(), context.log.warning)
        settings = scoring_settings(cfg)
        models = tuple(m.name for m in generation_models(cfg))
        judges = tuple(j.name for j in settings.judges)
        # the rows the leaderboard stored, with the item ids it leaves out: which items each number stands on is
        # what marks the cells whose models answered different items
        metrics = _metrics(warehouse, cfg).to_pylist()
        with warehouse.connect(read_only=True) as con:
            agreement = con.execute("SELECT * FROM leaderboard.judge_agreement WHERE setting = 'closed' OR perturbation = $p",
                                    {"p": ALL_LEVELS}).to_arrow_table().to_pylist()
            cost = _table(con, "cost")
            consistent = _table(con, "consistency")
            inconsistent = [{**r, "suites": json.loads(r["suites"])} for r in _table(con, "consistency_examples")]
            snapshots = tuple(sorted({current_snapshot(con, kg) for kg in cfg.kgs}))
        similarity = warehouse.read_partition("kg_similarity").to_pylist() if wh.partitions(warehouse.root, "kg_similarity") else []
        suites = enabled_suites(cfg)
        samples = _read_all_samples(warehouse, cfg)
        from kgprobe.scoring.compare import pairwise, read_scores

        from kgprobe.report.drilldown import drilldown_rows

        compared, drill = [], []
        for suite in suites:  # every pair of models on the items both answered, per suite and breakdown
            votes, rows = read_scores(warehouse.root, suite.name)
            compared += pairwise(votes, rows, models, resamples=settings.resamples, confidence=settings.confidence,
                                 seed=settings.seed)
            drill += drilldown_rows(suite.name, _read_rows(warehouse, f"{suite.name}_items"), votes,
                                    _read_rows(warehouse, f"{suite.name}_scores_samples",
                                               ("item_id", "model", "judge", "sample_index", "text", "label")))
        ctx = ReportContext(
            project=cfg.name, config_path=str(cfg.path), snapshot_ids=snapshots,
            created_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), run_ids=(context.run.run_id,),
            bootstrap_resamples=settings.resamples, bootstrap_seed=settings.seed, confidence=settings.confidence,
            judges=judges, models=models, unscored=tuple(unscored(cfg)),
            counts={**{f"{s.title.split(':')[0]} items": n for s, n in samples["items"].items()},
                    **{f"{s} answers (samples)": n for s, n in samples["counts"].items()}},
        )
        # a suite with a section of its own (KG-FPQ's) lays it out; every other suite gets the generic section
        own, sections, plots = [], [], {}
        for suite in suites:
            section, suite_plots = suite.report(ctx, metrics, agreement=agreement, similarity=similarity)
            plots.update({f"{suite.name}_{k}": v for k, v in suite_plots.items()})
            if section is not None:
                own.append(section)
            else:
                sections.append({"name": suite.name, "title": suite.title, "paper": suite.paper,
                                 "metrics": [r for r in metrics if r["suite"] == suite.name and r["setting"] == "closed"]})
        generic = {s["name"] for s in sections}  # an own section counts its rows' interval kinds itself
        html = render_page(ctx, metrics=[r for r in metrics if r["suite"] in generic],
                           suites=headline_rows(metrics, suites, models=models), own=own, sections=sections,
                           examples=samples["examples"], cost=cost,
                           consistency=consistency_section(consistent, inconsistent, models=models),
                           comparisons=compared, drilldown=drill)
        path = write_report(warehouse.root.joinpath(*REPORT_PATH), html)
        context.log.info(f"report written to {path.resolve()}")
        return dg.MaterializeResult(metadata={
            "path": dg.MetadataValue.path(str(path.resolve())),
            "size_kb": round(len(html.encode()) / 1024, 1),
            **{f"plot_{name}": image_md(png, alt=name) for name, png in plots.items()},
        })

    return [leaderboard, report]


def _read_rows(warehouse: WarehouseResource, asset: str, columns: tuple[str, ...] | None = None) -> list[dict]:
    """Every partition of ``asset`` as rows (only ``columns`` when given; [] when none is written)."""
    out = []
    for dims in wh.partitions(warehouse.root, asset):
        table = warehouse.read_partition(asset, dims)
        out += table.select([c for c in columns if c in table.column_names]).to_pylist() if columns else table.to_pylist()
    return out


def _read_all_samples(warehouse: WarehouseResource, cfg) -> dict:
    """Item counts per suite, answer counts per setting, and up to a dozen closed-book answers that the suites'
    readers could not read (with the question)."""
    counts: dict[str, int] = {}
    items_per_suite, examples = {}, []
    for suite, setting in _settings_of(cfg):
        items_asset = lane_assets(suite, grounded=False)["items"]
        questions = {}
        if wh.partitions(warehouse.root, items_asset):
            table = warehouse.read_partition(items_asset)
            items_per_suite[suite] = table.num_rows
            questions = dict(zip(*(table.column(c).to_pylist() for c in ("item_id", "question"))))
        asset = f"{_scores_asset(suite, setting)}_samples"
        n = 0
        for dims in wh.partitions(warehouse.root, asset):
            rows = warehouse.read_partition(asset, dims).select(["item_id", "model", "judge", "text", "label"]).to_pylist()
            read = [r for r in rows if not r["judge"]]
            n += len(read)
            if setting == "closed":
                examples += [{"model": r["model"], "question": questions.get(r["item_id"], r["item_id"]),
                              "answer": r["text"] if r["text"] is not None else "(no answer: generation failed)",
                              "label": r["label"]}
                             for r in read if r["label"] == "unknown"][:4]
        counts[setting] = counts.get(setting, 0) + n
    return {"items": items_per_suite, "counts": counts, "examples": examples[:12]}



