"""KG-FPQ's own upstream assets (true triples per domain, six false-premise edits each) and the checks of its items;
``fpq_items`` and the rest of the lane come from the suite factory (``assets/suites.py``).

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

from collections import Counter

import dagster as dg
import pyarrow as pa

from assets._metadata import image_md, markdown_table, table_metadata
from assets.ingest import kg
from kgprobe.config import fpq_settings
from kgprobe.suites.fpq.edits import (
    DomainSpec,
    TrueTriple,
    check_premises,
    edit,
    reject_unnamed_objects,
    select_true_triples,
)
from kgprobe.suites.fpq.quality import duplicate_questions, edit_violations, hop_histogram, item_violations, method_coverage
from kgprobe.kg.stats import current_snapshot
from kgprobe.report.plots import bar_chart
from kgprobe.sql import quote_identifier
from resources import ProjectResource, WarehouseResource

GROUP = "fpq"
COVERAGE_WARN = 0.5


@dg.asset(group_name=GROUP, kinds={"parquet"}, deps=[kg])
def fpq_true_triples(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """A seeded sample of true triples per question domain (art, people, place ...), the premises of KG-FPQ."""
    cfg = project.load()
    if "fpq" not in cfg.sections:
        return _not_configured(warehouse, "fpq_true_triples")
    s = fpq_settings(cfg)
    domains = {name: DomainSpec.from_config(name, spec) for name, spec in s.domains.items()}
    with warehouse.connect(read_only=True) as con:
        snapshot = current_snapshot(con, s.kg)
        con.execute(f"USE {quote_identifier(s.kg)}")
        chosen = select_true_triples(con, domains, s.n_per_domain, seed=cfg.seed,
                                     named_only=cfg.require_labels.get(s.kg, True))
    rows = [{**t.as_row(), "snapshot_id": snapshot, "seed": cfg.seed} for t in chosen]
    warehouse.write_partition("fpq_true_triples", pa.Table.from_pylist(rows))
    per_domain = Counter(r["domain"] for r in rows)
    context.log.info(f"{len(rows)} true triples: {dict(per_domain)}")
    return dg.MaterializeResult(metadata={
        **table_metadata(len(rows)),
        "per_domain": dg.MetadataValue.md(markdown_table([{"domain": d, "triples": n} for d, n in sorted(per_domain.items())])),
        "preview": dg.MetadataValue.md(markdown_table(
            [{k: r[k] for k in ("domain", "subject_label", "relation_label", "object_label")} for r in rows])),
    })


def _not_configured(warehouse: WarehouseResource, asset: str) -> dg.MaterializeResult:
    # a project without an fpq section still runs the other stages; this stage writes an empty table
    warehouse.write_partition(asset, pa.table({"id": pa.array([], pa.string())}))
    return dg.MaterializeResult(metadata={**table_metadata(0), "note": "no 'fpq' section in the project config"})


def _true_triples(warehouse: WarehouseResource) -> list[TrueTriple]:
    fields = TrueTriple.__dataclass_fields__
    return [TrueTriple(**{k: v for k, v in r.items() if k in fields}) for r in warehouse.read_partition("fpq_true_triples").to_pylist()]


@dg.asset(group_name=GROUP, kinds={"parquet"}, deps=[fpq_true_triples])
def fpq_edits(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One seeded false object per edit method (NSC, NDC, NNSC, NNDC, NNSR, NNDR) for every true triple."""
    cfg = project.load()
    if "fpq" not in cfg.sections:
        return _not_configured(warehouse, "fpq_edits")
    s = fpq_settings(cfg)
    true_triples = _true_triples(warehouse)
    ranges = cfg.infer_types.get(s.kg, False)  # inferred types: typed edits draw from the relation's range
    if ranges:
        context.log.info("types inferred from relation keys: typed edits draw false objects from the range of the "
                         "triple's relation (its key's last component, e.g. /film/film/genre -> genre)")
    with warehouse.connect(read_only=True) as con:
        con.execute(f"USE {quote_identifier(s.kg)}")
        edits = edit(con, [t.triple for t in true_triples], methods=s.methods, max_hops=s.max_hops, seed=cfg.seed,
                     directed=s.directed, hop_sampling=s.hop_sampling, ranges=ranges, search_budget=s.search_budget)
        drawn = sum(e.false_object is not None for e in edits)
        if s.premise_check == "kg":
            edits = check_premises(con, edits)
        if cfg.require_labels.get(s.kg, True):
            edits = reject_unnamed_objects(con, edits)
    not_false = sum(1 for e in edits if e.reason and "premise is not false" in e.reason or
                    (e.reason or "").startswith("the false object is another object"))
    context.log.info(f"premise check {s.premise_check}: {not_false} of {drawn} false premises rejected as true in the KG")
    domain = {t.triple: t.domain for t in true_triples}
    lineage = {"seed": cfg.seed, "max_hops": s.max_hops, "directed": s.directed, "hop_sampling": s.hop_sampling,
               "premise_check": s.premise_check}
    rows = [{**e.as_row(), "domain": domain[e.true_triple], **lineage} for e in edits]
    warehouse.write_partition("fpq_edits", pa.Table.from_pylist(rows))
    coverage = method_coverage(rows)
    context.log.info("edit coverage: " + ", ".join(f"{m} {c:.0%}" for m, c in coverage.items()))
    reasons = Counter(r["reason"] for r in rows if r["reason"])
    hops = hop_histogram(rows, max_hops=s.max_hops)
    hop_bars = {f"{h['method']} {h['hop']}": {"this run": h["share"], "paper (Table 11)": h["paper_share"]}
                for h in hops if h["hop"] <= 5}  # fmt: skip
    return dg.MaterializeResult(metadata={
        **table_metadata(len(rows)),
        "hops": "directed (head -> tail)" if s.directed else "undirected",
        "hop_sampling": s.hop_sampling,
        "premise_check": s.premise_check,
        "type_pool": "range of the relation (inferred types)" if ranges else "every type of the true object",
        "premises_rejected_as_true": not_false,
        "coverage": dg.MetadataValue.md(markdown_table([{"method": m, "coverage": c} for m, c in coverage.items()])),
        "hop_histogram": dg.MetadataValue.md(markdown_table(hops)),
        "hop_histogram_vs_paper": image_md(bar_chart(
            hop_bars, title="NSC / NDC edits per hop: this run vs KG-FPQ Table 11", ylabel="share of the method's edits",
            xlabel="method and hop")),
        "no_candidate_reasons": dg.MetadataValue.md(markdown_table([{"reason": r, "edits": n} for r, n in reasons.most_common()])),
    })


@dg.asset_check(asset=fpq_edits, blocking=True,
                 description="No false triple exists in the KG; NSC/NDC hops are 1-5 with a path of KG triples walked from "
                             "the subject (head -> tail when directed), NN* hops beyond 5 or unreachable.")
def fpq_edits_follow_their_method(project: ProjectResource, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    cfg = project.load()
    rows = warehouse.read_partition("fpq_edits").to_pylist()
    if not rows:
        return dg.AssetCheckResult(passed=True, metadata={"violations": 0})
    s = fpq_settings(cfg)
    with warehouse.connect(read_only=True) as con:
        con.execute(f"USE {quote_identifier(s.kg)}")
        bad = edit_violations(con, rows, max_hops=s.max_hops, directed=s.directed)
    return dg.AssetCheckResult(passed=not bad, metadata={"violations": len(bad), "examples": dg.MetadataValue.md(markdown_table(bad))})


@dg.asset_check(asset=fpq_edits, description="Warns when a method finds a false object for under 50% of true triples.")
def fpq_edit_coverage(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    coverage = method_coverage(warehouse.read_partition("fpq_edits").to_pylist())
    low = {m: c for m, c in coverage.items() if c < COVERAGE_WARN}
    return dg.AssetCheckResult(passed=not low, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"low_coverage": dg.MetadataValue.json(low), "coverage": dg.MetadataValue.json(coverage)})


@dg.asset_check(asset="fpq_items", blocking=True, description="Every FPQ contains its edited object and not the true one.")
def fpq_items_carry_their_edit(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    bad = item_violations(warehouse.read_partition("fpq_items").to_pylist())
    return dg.AssetCheckResult(passed=not bad, metadata={"violations": len(bad), "examples": dg.MetadataValue.md(markdown_table(bad))})


@dg.asset_check(asset="fpq_items", description="Warns about question texts that occur more than once.")
def fpq_items_unique(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    dups = duplicate_questions(warehouse.read_partition("fpq_items").to_pylist())
    return dg.AssetCheckResult(passed=not dups, severity=dg.AssetCheckSeverity.WARN, metadata={
        "duplicates": len(dups), "examples": dg.MetadataValue.md(markdown_table([{"question": q, "times": n} for q, n in dups]))})


ASSETS = [fpq_true_triples, fpq_edits]
CHECKS = [fpq_edits_follow_their_method, fpq_edit_coverage]
#: Checks of the factory-made ``fpq_items``: added to the code location when the config enables the suite.
ITEM_CHECKS = [fpq_items_carry_their_edit, fpq_items_unique]
