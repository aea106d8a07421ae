"""Subgraph stage: the queries, their k-hop neighbourhoods, and those pruned by Personalized PageRank.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

import json
from collections.abc import Iterable

import dagster as dg
import pyarrow as pa

from assets._metadata import image_md, markdown_table, table_metadata
from assets.ingest import kg
from kgprobe.config import subgraph_settings
from kgprobe.kg.graph import iter_khop_batch, ppr_prune_batch, subgraph_stats
from kgprobe.kg.stats import current_snapshot, labels
from kgprobe.report.plots import histograms
from kgprobe.kg.queries import EntityLinker, fpq_subject_queries, queries_from_file, queries_from_lists, sample_queries
from kgprobe.kg.queries import okgqa_question_queries
from kgprobe.kg.subgraph_store import mean_stats, subgraphs_from_table, subgraphs_to_table
from kgprobe.sql import quote_identifier
from resources import ProjectResource, WarehouseResource

GROUP = "subgraph"
PPR_CHUNK = 64


#: The suites' assets whose rows become queries (``queries: {fpq_subjects: true, okgqa_questions: true}``).
QUERY_SOURCES = {"fpq": "fpq_true_triples", "okgqa": "okgqa_question_bank"}


def _queries(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Retrieval queries (id, text, seed entities): seed lists, question files, samples, KG-FPQ subjects, OKGQA
    questions."""
    cfg = project.load()
    settings = subgraph_settings(cfg)
    with warehouse.connect(read_only=True) as con:
        snapshot = current_snapshot(con, settings.kg)
        con.execute(f"USE {quote_identifier(settings.kg)}")
        linker = EntityLinker(con)
        found = queries_from_lists(linker, settings.lists)
        for f in settings.files:
            found += queries_from_file(
                linker, f["path"], mention_column=f.get("mention_column", "dbpedia_entities"),
                text_column=f.get("text_column", "question"), id_column=f.get("id_column", "id"), limit=f.get("limit"),
            )
        if settings.fpq_subjects and cfg.has_suite("fpq"):
            found += fpq_subject_queries(warehouse.read_partition("fpq_true_triples").to_pylist())
        elif settings.fpq_subjects:
            context.log.warning("queries.fpq_subjects is on but the config has no suites.fpq section: no KG-FPQ "
                                "subject queries")
        if settings.okgqa_questions and cfg.has_suite("okgqa"):
            found += okgqa_question_queries(warehouse.read_partition("okgqa_question_bank").to_pylist())
        elif settings.okgqa_questions:
            context.log.warning("queries.okgqa_questions is on but the config has no suites.okgqa section: no OKGQA "
                                "question queries")
        if settings.sample:
            found += sample_queries(
                con, per_type=int(settings.sample.get("per_type", 5)), types=settings.sample.get("types"),
                seeds_per_query=int(settings.sample.get("seeds_per_query", 1)), seed=cfg.seed,
            )
    ids = [q.query_id for q in found]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"query ids must be unique; repeated: {dup[:10]} (set 'id' in queries.lists or id_column)")
    rows = [{**q.as_row(), "snapshot_id": snapshot} for q in found]
    warehouse.write_partition("queries", pa.Table.from_pylist(rows))
    unmatched = [r for r in rows if r["unmatched"]]
    context.log.info(f"{len(rows)} queries, {sum(len(r['unmatched']) for r in rows)} unmatched mentions")
    return dg.MaterializeResult(
        metadata={
            **table_metadata(len(rows)),
            "unmatched_mentions": sum(len(r["unmatched"]) for r in rows),
            "queries_without_seeds": sum(1 for r in rows if not r["seeds"]),
            "preview": dg.MetadataValue.md(markdown_table(
                [{k: r[k] for k in ("query_id", "text", "seeds", "unmatched", "source")} for r in rows])),
            "unmatched": dg.MetadataValue.md(markdown_table(
                [{"query_id": r["query_id"], "unmatched": r["unmatched"]} for r in unmatched])),
        }
    )


def queries_asset(suites: Iterable[str] = ()) -> dg.AssetsDefinition:
    """The ``queries`` asset, after the assets of :data:`QUERY_SOURCES` of the enabled ``suites`` (their names): a
    suite that is not enabled has no assets in the code location, and adds no query."""
    upstream = [QUERY_SOURCES[name] for name in sorted(set(suites)) if name in QUERY_SOURCES]
    return dg.asset(name="queries", group_name=GROUP, kinds={"parquet"}, deps=[kg, *upstream])(_queries)


@dg.asset_check(asset="queries", description="Warns about queries none of whose mentions matched a KG entity.")
def queries_have_seeds(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    rows = warehouse.read_partition("queries").to_pylist()
    empty = [{"query_id": r["query_id"], "mentions": r["mentions"]} for r in rows if not r["seeds"]]
    return dg.AssetCheckResult(
        passed=not empty, severity=dg.AssetCheckSeverity.WARN,
        metadata={"without_seeds": len(empty), "queries": dg.MetadataValue.md(markdown_table(empty))},
    )


def _stats_metadata(tables: dict[str, pa.Table], ent_rel_labels) -> tuple[list[dict], dict[str, list[float]]]:
    """Mean size table rows (one per stage) and per-query node counts for the histogram."""
    summary, sizes = [], {}
    for name, table in tables.items():
        stats = []
        for start in range(0, table.num_rows, PPR_CHUNK):  # a slice at a time, for memory
            subs, _ = subgraphs_from_table(table.slice(start, PPR_CHUNK))
            stats += [subgraph_stats(s, labels=ent_rel_labels) for s in subs.values()]
        summary.append({"subgraphs": name, **mean_stats(stats)})
        sizes[name] = [s["nodes"] for s in stats]
    return summary, sizes


@dg.asset(group_name=GROUP, kinds={"duckdb", "parquet"}, deps=["queries"])
def khop_subgraphs(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The k-hop neighbourhood (default 2 hops, both edge directions) of every query's seeds, computed in DuckDB."""
    settings = subgraph_settings(project.load())
    qrows = warehouse.read_partition("queries").to_pylist()
    seeds = {r["query_id"]: r["seeds"] for r in qrows if r["seeds"]}
    params = json.dumps(settings.params(), sort_keys=True)
    parts = []
    with warehouse.connect(read_only=True) as con:
        snapshot = current_snapshot(con, settings.kg)
        con.execute(f"USE {quote_identifier(settings.kg)}")
        done = 0
        for chunk in iter_khop_batch(con, seeds, settings.hops, fanout_cap=settings.fanout_cap, seed=project.load().seed,
                                     induced=settings.induced):
            parts.append(subgraphs_to_table(chunk, seeds, snapshot_id=snapshot, params=params))
            done += len(chunk)
            context.log.info(f"k-hop subgraphs: {done}/{len(seeds)} queries")
        ent_rel = labels(con, settings.kg)
    table = pa.concat_tables(parts) if parts else pa.Table.from_pylist([], schema=subgraphs_to_table({}, {}, snapshot_id="", params="").schema)
    warehouse.write_partition("khop_subgraphs", table)
    summary, sizes = _stats_metadata({f"{settings.hops}-hop": table}, ent_rel)
    capped = sum(table.column("capped_nodes").to_pylist()) if table.num_rows else 0
    return dg.MaterializeResult(
        metadata={
            **table_metadata(table.num_rows),
            "sizes": dg.MetadataValue.md(markdown_table(summary)),
            "capped_nodes": capped,
            "params": dg.MetadataValue.json(settings.params()),
            "nodes_histogram": image_md(histograms(sizes, title="k-hop subgraph size", xlabel="nodes per query", log=True)),
        }
    )


@dg.asset(group_name=GROUP, kinds={"parquet"}, deps=[khop_subgraphs])
def ppr_subgraphs(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Each k-hop subgraph pruned to the nodes Personalized PageRank from the seeds scores >= threshold."""
    settings = subgraph_settings(project.load())
    khop_table = warehouse.read_partition("khop_subgraphs")
    params = json.dumps(settings.params(), sort_keys=True)
    parts = []
    # prune a slice of queries at a time: 2-hop subgraphs of a dense KG hold ~100k triples each as Python tuples
    for start in range(0, khop_table.num_rows, PPR_CHUNK):
        subs, seeds = subgraphs_from_table(khop_table.slice(start, PPR_CHUNK))
        pruned = ppr_prune_batch(subs, seeds, settings.threshold, alpha=settings.alpha, tol=settings.tol,
                                 max_iter=settings.max_iter, directed=settings.directed)
        snapshot = khop_table.column("snapshot_id")[0].as_py()
        parts.append(subgraphs_to_table(pruned, seeds, snapshot_id=snapshot, params=params))
        context.log.info(f"PPR pruning: {min(start + PPR_CHUNK, khop_table.num_rows)}/{khop_table.num_rows} queries")
    table = pa.concat_tables(parts) if parts else khop_table.slice(0, 0)
    warehouse.write_partition("ppr_subgraphs", table)
    with warehouse.connect(read_only=True) as con:
        ent_rel = labels(con, settings.kg)
    summary, sizes = _stats_metadata({"before pruning": khop_table, "after pruning": table}, ent_rel)
    context.log.info(f"PPR pruning: mean nodes {summary[0]['nodes']:.1f} -> {summary[1]['nodes']:.1f}")
    return dg.MaterializeResult(
        metadata={
            **table_metadata(table.num_rows),
            "before_and_after": dg.MetadataValue.md(markdown_table(summary)),
            "nodes_histogram": image_md(histograms(sizes, title="Subgraph size before and after PPR pruning",
                                                   xlabel="nodes per query", log=True)),
        }
    )


@dg.asset_check(asset=ppr_subgraphs, description="Warns about queries whose pruned subgraph is empty or lacks a seed.")
def ppr_subgraphs_keep_seeds(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    rows = warehouse.read_partition("ppr_subgraphs").to_pylist()
    bad = [{"query_id": r["query_id"], "nodes": r["n_nodes"], "missing_seeds": sorted(set(r["seeds"]) - set(r["nodes"]))}
           for r in rows if not r["nodes"] or not set(r["seeds"]) <= set(r["nodes"])]
    return dg.AssetCheckResult(passed=not bad, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"offending": len(bad), "queries": dg.MetadataValue.md(markdown_table(bad))})


@dg.asset_check(asset=ppr_subgraphs, blocking=True, description="No pruned subgraph is larger than its k-hop source.")
def ppr_subgraphs_not_larger(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    before = {r["query_id"]: (r["n_nodes"], r["n_edges"]) for r in warehouse.read_partition("khop_subgraphs")
              .select(["query_id", "n_nodes", "n_edges"]).to_pylist()}
    after = warehouse.read_partition("ppr_subgraphs").select(["query_id", "n_nodes", "n_edges"]).to_pylist()
    bad = [r["query_id"] for r in after if r["query_id"] not in before
           or r["n_nodes"] > before[r["query_id"]][0] or r["n_edges"] > before[r["query_id"]][1]]
    return dg.AssetCheckResult(passed=not bad, metadata={"offending": ", ".join(bad[:50]) or "none"})


def build(suites: Iterable[str] = ()) -> tuple[list, list]:
    """The subgraph stage's assets and checks for a config whose enabled suites are ``suites`` (names)."""
    return [queries_asset(suites), khop_subgraphs, ppr_subgraphs], CHECKS


CHECKS = [queries_have_seeds, ppr_subgraphs_keep_seeds, ppr_subgraphs_not_larger]
#: The stage with queries from seed lists, question files and samples only (no suite's assets before it).
ASSETS = build()[0]
