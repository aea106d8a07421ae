"""Perturbation stage (OKGQA-P): the triple scorer, perturbed subgraphs per level, and how far each moved.

(No `from __future__ import annotations` here: Dagster inspects the context annotation at definition time.)
"""

import dataclasses
import time
from statistics import fmean

import dagster as dg
import numpy as np
import pyarrow as pa

from assets._metadata import image_md, markdown_table, table_metadata
from assets.ingest import kg
from kgprobe import warehouse as wh
from kgprobe.config import perturbation_settings
from kgprobe.kg.stats import current_snapshot
from kgprobe.grounding.perturb import parse_perturbation, similarity_batch
from kgprobe.grounding.perturb_store import (artifact_dir, perturb_subgraphs, scorer_key, subgraph_triples,
                                             triples_digest)
from kgprobe.report.plots import line_chart
from kgprobe.grounding.scorer import TrainConfig, TripleScorer, train_scorer, train_scorer_on
from kgprobe.kg.subgraph_store import subgraphs_from_table
from kgprobe.sql import quote_identifier
from pipelines.partitions import PERTURBATION, Partitions
from resources import ProjectResource, WarehouseResource

GROUP = "perturb"
CHUNK = 64


def _train_config(settings) -> TrainConfig:
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    bad = set(settings.scorer) - known
    if bad:
        raise ValueError(f"perturbation.scorer: unknown key(s) {sorted(bad)}; known: {sorted(known)}")
    return TrainConfig(**settings.scorer)


def _training_triples(settings, warehouse: WarehouseResource) -> np.ndarray | None:
    """The pruned subgraphs' triples s_G is trained on (``scorer_train_on: subgraphs``), else None (the KG's)."""
    if settings.scorer_train_on != "subgraphs":
        return None
    return subgraph_triples(warehouse.read_partition("ppr_subgraphs"))


def _scorer_id(project: ProjectResource, warehouse: WarehouseResource,
               triples: np.ndarray | None = None) -> tuple[str, str]:
    settings = perturbation_settings(project.load())
    with warehouse.connect(read_only=True) as con:
        snapshot = current_snapshot(con, settings.kg)
    config = dataclasses.asdict(_train_config(settings))
    if settings.scorer_train_on == "subgraphs":  # a scorer per set of subgraphs: new queries, a new scorer
        triples = _training_triples(settings, warehouse) if triples is None else triples
        config = {**config, "train_on": "subgraphs", "triples": triples_digest(triples)}
    return scorer_key(snapshot, config), snapshot


def _load_scorer(project: ProjectResource, warehouse: WarehouseResource) -> tuple[TripleScorer, str]:
    key, _ = _scorer_id(project, warehouse)
    folder = artifact_dir(warehouse.root, key)
    if not folder.exists():
        raise FileNotFoundError(f"triple scorer {key} not found at {folder}; materialize the triple_scorer asset first")
    return TripleScorer.load(folder), key


@dg.asset(group_name=GROUP, kinds={"python"}, deps=[kg, "ppr_subgraphs"])
def triple_scorer(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """s_G(h, r, t) in [0, 1]: a KG-embedding model trained on the pruned subgraphs' triples (``scorer_train_on:
    subgraphs``, the OKGQA authors' released code) or the whole KG (``kg``), by default true triples against random
    ones (the authors' objective), stored as a versioned artifact."""
    settings = perturbation_settings(project.load())
    config = _train_config(settings)
    subgraph_set = _training_triples(settings, warehouse)
    key, snapshot = _scorer_id(project, warehouse, subgraph_set)
    folder = artifact_dir(warehouse.root, key)
    reused = folder.exists()
    started = time.perf_counter()
    if reused:
        context.log.info(f"triple scorer {key} already trained for this KG snapshot and config; reusing {folder}")
    else:
        with warehouse.connect(read_only=True) as con:
            n_rel = con.execute(f"SELECT count(*) FROM {quote_identifier(settings.kg)}.relations").fetchone()[0]
            if subgraph_set is None:
                triples = con.execute(f"SELECT head, relation, tail FROM {quote_identifier(settings.kg)}.triples"
                                      ).fetchnumpy()
                triples = np.stack([triples[c].astype(np.int64) for c in ("head", "relation", "tail")], axis=1)
                n_ent = con.execute(f"SELECT count(*) FROM {quote_identifier(settings.kg)}.entities").fetchone()[0]
            else:
                triples = subgraph_set
        what = "the KG" if subgraph_set is None else "the pruned subgraphs"
        context.log.info(f"training {config.model} (dim {config.dim}, {config.epochs} epochs) on {len(triples):,} "
                         f"triples of {what}")
        # about ten progress lines however many epochs (each line is a run-storage write), and one at least every 30 s
        every, said = max(1, -(-config.epochs // 10)), [time.perf_counter()]

        def progress(epoch: int, loss: float, seconds: float, *_: object) -> None:
            if epoch % every == 0 or epoch == config.epochs or time.perf_counter() - said[0] >= 30:
                said[0] = time.perf_counter()
                context.log.info(f"epoch {epoch}/{config.epochs}: loss {loss:.4f} ({seconds:.0f}s)")

        scorer = (train_scorer(triples, n_ent, n_rel, config, log=progress) if subgraph_set is None
                  else train_scorer_on(triples, n_rel, config, log=progress))
        scorer.save(folder)
    scorer = TripleScorer.load(folder)
    rng = np.random.default_rng(0)
    if subgraph_set is None:
        with warehouse.connect(read_only=True) as con:
            sample = np.asarray(con.execute(
                f"SELECT head, relation, tail FROM {quote_identifier(settings.kg)}.triples USING SAMPLE 500 ROWS (reservoir, 7)").fetchall(), dtype=np.int64)
    else:  # the triples it was trained on (500 of them, seeded), and tails among its entities
        sample = subgraph_set[np.sort(rng.permutation(len(subgraph_set))[:500])] if len(subgraph_set) else subgraph_set
    true_scores = scorer.score(sample[:, 0], sample[:, 1], sample[:, 2]) if len(sample) else np.array([])
    corrupt = sample.copy()
    if len(corrupt):
        ids = scorer.entity_ids
        picks = rng.integers(0, scorer.num_entities, len(corrupt))
        corrupt[:, 2] = picks if ids is None else ids[picks]
    false_scores = scorer.score(corrupt[:, 0], corrupt[:, 1], corrupt[:, 2]) if len(corrupt) else np.array([])
    return dg.MaterializeResult(
        metadata={
            "scorer_id": key,
            "artifact": dg.MetadataValue.path(str(folder)),
            "kg_snapshot": snapshot,
            "reused": reused,
            "seconds": round(time.perf_counter() - started, 1),
            "train_config": dg.MetadataValue.json(dataclasses.asdict(config)),
            "mean_score_true_triples": float(true_scores.mean()) if len(true_scores) else 0.0,
            "mean_score_random_tails": float(false_scores.mean()) if len(false_scores) else 0.0,
        },
        data_version=dg.DataVersion(key),
    )


def build(parts: Partitions, *, scorer: bool = True, similarity: bool = True) -> tuple[list, list]:
    """The partitioned perturbation assets and their checks; without ``scorer`` (no perturbation method) the
    perturbed subgraphs do not wait for the triple scorer, and without ``similarity`` there is no kg_similarity."""

    @dg.asset(group_name=GROUP, kinds={"parquet"}, partitions_def=parts.perturbation,
              deps=["ppr_subgraphs", *([triple_scorer] if scorer else [])])
    def perturbed_subgraphs(context: dg.AssetExecutionContext, project: ProjectResource,
                            warehouse: WarehouseResource) -> dg.MaterializeResult:
        """Every pruned subgraph perturbed at this partition's method and level (RS, RR, ER, ED), with its changes."""
        cfg = project.load()
        source = warehouse.read_partition("ppr_subgraphs")
        snapshot = source.column("snapshot_id")[0].as_py() if source.num_rows else ""
        loaded = None
        for key in context.partition_keys:  # one level, or each of a range (kgprobe run perturbs all in one run)
            method, level = parse_perturbation(key)
            if method == "RR" and loaded is None:
                loaded = _load_scorer(project, warehouse)
            scorer, scorer_id = loaded if method == "RR" else (None, "")
            parts_out = []
            for start in range(0, source.num_rows, CHUNK):
                subs, _ = subgraphs_from_table(source.slice(start, CHUNK))
                parts_out.append(perturb_subgraphs(subs, key, seed=cfg.seed, scorer=scorer, snapshot_id=snapshot, scorer_id=scorer_id))
            table = pa.concat_tables(parts_out) if parts_out else perturb_subgraphs({}, key, seed=cfg.seed)
            warehouse.write_partition("perturbed_subgraphs", table, {PERTURBATION: key})
            rows = table.select(["query_id", "n_edges", "target", "changed", "actual_share", "skipped"]).to_pylist()
            context.add_asset_metadata({
                **table_metadata(len(rows)),
                "method": method, "level": level,
                "mean_actual_share": fmean(r["actual_share"] for r in rows) if rows else 0.0,
                "queries_short_of_target": sum(1 for r in rows if r["target"] - r["changed"] > 1),
                "preview": dg.MetadataValue.md(markdown_table(rows)),
            }, partition_key=key)
        return dg.MaterializeResult()

    @dg.asset_check(asset=perturbed_subgraphs, description="Warns when a query's perturbed share misses the level by more than one edge.")
    def perturbed_share_matches_level(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        bad = []
        for dims in wh.partitions(warehouse.root, "perturbed_subgraphs"):
            t = warehouse.read_partition("perturbed_subgraphs", dims).select(["query_id", "perturbation", "n_edges", "level", "changed", "method"])
            for r in t.to_pylist():
                want = int(r["level"] * r["n_edges"]) if r["method"] != "RS" else 2 * int(r["level"] * r["n_edges"] / 2)
                if r["method"] != "none" and abs(r["changed"] - want) > 1:
                    bad.append({"perturbation": r["perturbation"], "query_id": r["query_id"], "wanted": want, "changed": r["changed"]})
        return dg.AssetCheckResult(passed=not bad, severity=dg.AssetCheckSeverity.WARN,
                                   metadata={"off_by_more_than_one": len(bad), "examples": dg.MetadataValue.md(markdown_table(bad))})

    @dg.asset_check(asset=perturbed_subgraphs, blocking=True,
                    description="ER never rewires into the head's 1-hop neighbourhood; RR never keeps the original relation.")
    def perturbed_changes_follow_their_method(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        bad = []
        source = {r["query_id"]: r["triples"] for r in warehouse.read_partition("ppr_subgraphs").select(["query_id", "triples"]).to_pylist()}
        for dims in wh.partitions(warehouse.root, "perturbed_subgraphs"):
            method, _ = parse_perturbation(dims[PERTURBATION])
            if method not in ("ER", "RR"):
                continue
            for r in warehouse.read_partition("perturbed_subgraphs", dims).select(["query_id", "changes"]).to_pylist():
                neighbours: dict[int, set[int]] = {}
                for t in source.get(r["query_id"], []):
                    neighbours.setdefault(t["head"], set()).add(t["tail"])
                    neighbours.setdefault(t["tail"], set()).add(t["head"])
                for c in r["changes"]:
                    o, n = c["original"], c["new"]
                    if method == "RR" and n["relation"] == o["relation"]:
                        bad.append({"perturbation": dims[PERTURBATION], "query_id": r["query_id"], "problem": "relation kept"})
                    if method == "ER" and (n["tail"] in neighbours.get(o["head"], set()) or n["tail"] == o["head"]):
                        bad.append({"perturbation": dims[PERTURBATION], "query_id": r["query_id"], "problem": "rewired into 1-hop"})
        return dg.AssetCheckResult(passed=not bad, metadata={"violations": len(bad), "examples": dg.MetadataValue.md(markdown_table(bad))})

    @dg.asset(group_name="similarity", kinds={"parquet"}, deps=[perturbed_subgraphs])
    def kg_similarity(context: dg.AssetExecutionContext, project: ProjectResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """ATS, SC2D and SD2 of every perturbed subgraph against its original, per query and perturbation level."""
        scorer, scorer_id = _load_scorer(project, warehouse)
        original = {r["query_id"]: [(t["head"], t["relation"], t["tail"]) for t in r["triples"]]
                    for r in warehouse.read_partition("ppr_subgraphs").select(["query_id", "triples"]).to_pylist()}
        out = []
        for dims in wh.partitions(warehouse.root, "perturbed_subgraphs"):
            rows = warehouse.read_partition("perturbed_subgraphs", dims).select(["query_id", "perturbation", "method", "level", "triples"]).to_pylist()
            pairs = [(original[r["query_id"]], [(t["head"], t["relation"], t["tail"]) for t in r["triples"]]) for r in rows]
            # each graph averaged over its own relations, as the OKGQA code does (RR then moves SD2, RS does not)
            sims = similarity_batch(pairs, scorer=scorer, denominator="own")
            for i, r in enumerate(rows):
                out.append({"query_id": r["query_id"], "perturbation": r["perturbation"], "method": r["method"], "level": r["level"],
                            "ats": float(sims["ats"][i]), "sc2d": float(sims["sc2d"][i]), "sd2": float(sims["sd2"][i]),
                            "scorer_id": scorer_id})
            context.log.info(f"similarity of {dims[PERTURBATION]}: {len(rows)} queries")
        warehouse.write_partition("kg_similarity", pa.Table.from_pylist(out))
        means: dict[tuple[str, float], dict[str, list[float]]] = {}
        for r in out:
            for m in ("ats", "sc2d", "sd2"):
                means.setdefault((r["method"], r["level"]), {}).setdefault(m, []).append(r[m])
        summary = [{"method": k[0], "level": k[1], **{m: fmean(v) for m, v in d.items()}} for k, d in sorted(means.items())]
        none = next((s for s in summary if s["method"] == "none"), None)
        plots = {}
        for method in sorted({s["method"] for s in summary} - {"none"}):
            lines = {m.upper(): {**({0.0: none[m]} if none else {}), **{s["level"]: s[m] for s in summary if s["method"] == method}}
                     for m in ("ats", "sc2d", "sd2")}
            plots[f"similarity_{method}"] = image_md(line_chart(lines, title=f"{method}: KG similarity against perturbation level",
                                                                xlabel="perturbation level (share of edges)", ylabel="similarity (mean over queries)",
                                                                ylim=(0.0, 1.05)))
        return dg.MaterializeResult(metadata={**table_metadata(len(out)), "means": dg.MetadataValue.md(markdown_table(summary, limit=100)),
                                              **plots})

    return ([perturbed_subgraphs, *([kg_similarity] if similarity else [])],
            [perturbed_share_matches_level, perturbed_changes_follow_their_method])


ASSETS = [triple_scorer]
