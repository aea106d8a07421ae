"""KG-FPQ as a :class:`~kgprobe.suites.base.Suite`: its items, prompts, scores and headline in the common shapes.

Items: every TPQ and FPQ of :func:`~kgprobe.suites.fpq.edits.write_questions`, Yes-No ones as ``yes_no`` items of
the ``discriminative`` task, WH ones as ``open`` items of the ``generative`` task (a judge decides whether the
answer is factual). ``group_id`` is the true triple (a TPQ and all its FPQs, in both formats), ``breakdown`` holds
``domain``, ``premise``, ``method`` and ``hop``, ``evidence`` the KG snapshot, the true and false triple, the
path of a near edit and the template. The KG-FPQ columns of :class:`~kgprobe.suites.fpq.edits.FPQItem` follow
(``id`` equals ``item_id``).

Scores: :func:`~kgprobe.suites.fpq.scoring.score_partition` (yes/no reading, FPQ-Judge verdicts, the gate), with
its metric rows turned into the common metric schema: ``breakdown`` holds the domain, method and hop of a cell.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from kgprobe.generation.records import Prompt
from kgprobe.scoring.tables import expand_breakdown
from kgprobe.suites.base import (
    ITEM_SCHEMA,
    Headline,
    ItemSource,
    ItemsResult,
    Sampling,
    ScoringOptions,
    Suite,
    SuiteScores,
    content_id,
    table,
)
from kgprobe.suites.fpq.edits import (
    FORMATS,
    Edit,
    FPQItem,
    TrueTriple,
    entity_labels,
    group_edits,
    load_templates,
    write_questions,
)
from kgprobe.suites.fpq.prompts import fpq_prompt, limit_items
from kgprobe.suites.fpq.quality import count_table
from kgprobe.suites.fpq.settings import FPQSettings

__all__ = ["FPQSuite", "item_rows"]

_TASK = {"yn": "discriminative", "wh": "generative"}
_FORMAT = {"yn": "yes_no", "wh": "open"}


def item_rows(items: Sequence[FPQItem]) -> list[dict[str, Any]]:
    """The common item columns of KG-FPQ items, followed by their own (see the module docstring)."""
    out = []
    for it in items:
        row = it.as_row()
        true_triple = [it.subject, it.relation, it.true_object]
        out.append({
            "item_id": it.id, "suite": "fpq", "task": _TASK[it.format], "answer_format": _FORMAT[it.format],
            "question": it.question, "expected": it.answer,
            "group_id": content_id(it.snapshot_id, "fpq", true_triple),
            "breakdown": {"domain": it.domain, "premise": it.premise, "method": it.method,
                          "hop": None if it.hop is None else str(it.hop)},
            "evidence": json.dumps({
                "snapshot_id": it.snapshot_id, "true_triple": true_triple,
                "false_triple": None if it.false_object is None else [it.subject, it.relation, it.false_object],
                "path": row["path"], "template_id": it.template_id, "seed": it.seed,
                # a Yes-No TPQ answered "yes" affirms its true triple: the cross-suite consistency view reads this
                **({"asserts": [it.subject_label, it.relation_key, it.true_object_label]}
                   if it.premise == "tpq" and it.format == "yn" else {}),
            }, separators=(",", ":")),
            **{k: v for k, v in row.items() if k != "question"},
        })  # fmt: skip
    return out


def _fpq_schema(rows: list[dict[str, Any]]) -> pa.Schema:
    own = pa.Table.from_pylist([{k: v for k, v in r.items() if k not in ITEM_SCHEMA.names} for r in rows]).schema
    return pa.schema(list(ITEM_SCHEMA) + [f for f in own])


class FPQSuite(Suite):
    """KG-FPQ (Zhu et al.): Yes-No and WH questions whose premise is a true triple or an edited, false one."""

    name = "fpq"
    title = "KG-FPQ: false-premise questions"
    paper = "Zhu et al., KG-FPQ: Evaluating Factuality Hallucination in LLMs with Knowledge Graph-based False Premise Questions"
    sampling = Sampling(n=3, temperature=0.6, top_p=0.9)
    headline = Headline("discriminative", "fpq_accuracy_gated", "FPQ accuracy, gated (yes/no)")
    upstream = ("fpq_true_triples", "fpq_edits")
    groundable = True

    def unscored(self, cfg: Any) -> list[str]:
        """The open (WH) questions are judged: without a judge they are asked and answered but never scored."""
        if "wh" not in self.load_settings(cfg).formats or cfg.scoring.judges:
            return []
        return ["KG-FPQ: the open (WH) questions are generated and answered but not scored, as no judge is configured "
                "(scoring.judges); name a judge model there to score them, or set suites.fpq.formats: [yn] to skip "
                "them"]

    Settings = FPQSettings

    def validate(self, tables: Mapping[str, pa.Table], *, name: str) -> list[Any]:
        """KG-FPQ's sample and vote suites (yes/no labels, premise, gate counts) and the common metric suite."""
        from kgprobe.scoring.quality import validate_metrics, validate_score_items, validate_score_samples

        return [*validate_score_samples(tables["samples"], name=f"{name} samples"),
                *validate_score_items(tables["votes"], name=f"{name} votes"),
                *validate_metrics(tables["metrics"], name=f"{name} metrics")]

    def items(self, source: ItemSource) -> ItemsResult:
        """Questions from the true triples and edits of the upstream assets, with their rejects."""
        s = source.settings
        fields = TrueTriple.__dataclass_fields__
        true_triples = [TrueTriple(**{k: v for k, v in r.items() if k in fields})
                        for r in source.upstream["fpq_true_triples"].to_pylist()]
        edit_fields = Edit.__dataclass_fields__
        edits = []
        for r in source.upstream["fpq_edits"].to_pylist():
            r = {k: v for k, v in r.items() if k in edit_fields}
            r["path"] = None if r["path"] is None else tuple(tuple(t) for t in r["path"])
            edits.append(Edit(**r))
        wanted = [e.false_object for e in edits] + [t.object for t in true_triples] + [t.subject for t in true_triples]
        labels = entity_labels(source.con, wanted)
        written, rejects = write_questions(group_edits(true_triples, edits), load_templates(s.templates), labels,
                                           formats=s.formats, snapshot_id=source.snapshot_id, seed=source.seed)
        rows = item_rows(written)
        items = table(rows, _fpq_schema(rows)) if rows else table([], ITEM_SCHEMA)
        reject_table = (pa.Table.from_pylist([r.as_row() for r in rejects]) if rejects
                        else pa.table({"reason": pa.array([], pa.string())}))
        counts = count_table(rows)
        by_method: dict[str, dict[str, float]] = {}
        for c in counts:
            by_method.setdefault(c["method"], {}).setdefault(c["domain"], 0)
            by_method[c["method"]][c["domain"]] += c["questions"]
        metadata: dict[str, Any] = {"counts_domain_method_hop": counts}
        if by_method:
            from kgprobe.report.plots import bar_chart

            metadata["questions_by_method"] = bar_chart(by_method, title="KG-FPQ questions per edit method and domain",
                                                        ylabel="questions", xlabel="edit method")
        return ItemsResult(items=items, rejects=reject_table, metadata=metadata)

    def select(self, items: Sequence[Mapping[str, Any]], *, limit: int | None = None,
               formats: Sequence[str] | None = None, **options: Any) -> list[Mapping[str, Any]]:  # fmt: skip
        """The items of ``formats`` (yn, wh) of the first ``limit`` true triples (see :meth:`Suite.select`)."""
        return limit_items(items, formats=FORMATS if formats is None else formats, limit=limit)

    def prompts(self, items: Sequence[Mapping[str, Any]], context: Mapping[str, str] | None = None) -> list[Prompt]:
        """KG-FPQ's Table 6 prompt per item; with ``context`` (item id -> facts), OKGQA's D.1 grounded prompt."""
        return [fpq_prompt(it, None if context is None else context[it["item_id"]]) for it in items]

    def wide_tables(self, metrics: Sequence[Mapping[str, Any]], *, models: Sequence[str] = (),
                    judges: Sequence[str] = ()) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
        """``fpq_closed`` and ``fpq_grounded``: the gated headline first, then the other key metrics, per judge."""
        from kgprobe.suites.fpq.report import leaderboard_tables

        rows = expand_breakdown(r for r in metrics if r["suite"] == self.name)
        return {name: table_rows for name, table_rows in
                leaderboard_tables(rows, models=models, judges=judges).items() if table_rows}

    def report(self, ctx: Any, metrics: Sequence[Mapping[str, Any]], *, agreement: Sequence[Mapping[str, Any]] = (),
               similarity: Sequence[Mapping[str, Any]] = ()) -> tuple[Any, dict[str, bytes]]:  # fmt: skip
        """KG-FPQ's section (:func:`kgprobe.suites.fpq.report.section`) and its plots (by method, by hop,
        discriminative vs generative, grounded by level, KG similarity)."""
        from kgprobe.suites.fpq.report import report_plots, section

        rows = expand_breakdown(r for r in metrics if r["suite"] == self.name)
        mine = [a for a in agreement if a.get("suite", self.name) == self.name]
        plots = report_plots(rows, similarity, mine, models=ctx.models, judges=ctx.judges)
        return section(ctx, rows, mine, plots), plots

    def context_query(self, item: Mapping[str, Any]) -> str:
        """The query whose (perturbed) subgraph is an item's KG context: its subject's."""
        from kgprobe.kg.queries import fpq_subject_query_id

        return fpq_subject_query_id(int(item["subject"]))

    def score(self, items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], *, model: str,
              perturbation: str = "none", scoring: ScoringOptions = ScoringOptions()) -> SuiteScores:  # fmt: skip
        """KG-FPQ's scoring (:func:`~kgprobe.suites.fpq.scoring.score_partition`), metric rows in the common schema."""
        from kgprobe.suites.fpq.scoring import ITEM_SCHEMA as FPQ_VOTES
        from kgprobe.suites.fpq.scoring import SAMPLE_SCHEMA as FPQ_SAMPLES
        from kgprobe.suites.fpq.scoring import score_partition

        scored = score_partition(items, responses, model=model, perturbation=perturbation, judges=scoring.judges,
                                 judge=scoring.judge, resamples=scoring.resamples, confidence=scoring.confidence,
                                 seed=scoring.seed, log=scoring.log)
        return SuiteScores(samples=scored.samples, votes=scored.items, metrics=[common_metric(m) for m in scored.metrics],
                           agreement=scored.agreement, sample_schema=FPQ_SAMPLES, vote_schema=FPQ_VOTES)


def common_metric(m: Mapping[str, Any]) -> dict[str, Any]:
    """A KG-FPQ metric row (domain, method, hop columns) in the common metric schema (a ``breakdown`` map)."""
    return {
        "model": m["model"], "perturbation": m["perturbation"], "suite": "fpq", "task": m["task"],
        "judge": m["judge"], "metric": m["metric"],
        "breakdown": {k: str(m[k]) for k in ("domain", "method", "hop") if m.get(k) is not None},
        "higher_is_better": m["metric"] != "unknown_share", "n": m["n"], "value": m["value"],
        "ci_low": m["ci_low"], "ci_high": m["ci_high"], "interval": m["interval"], "item_ids": m["item_ids"],
    }  # fmt: skip
