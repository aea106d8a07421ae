"""One GraphEval partition scored: answers read as true / false / IDK, voted per statement, and the paper's
metrics (formula 2, :mod:`.metrics`) averaged over positives, overall and by relation, head type, tail type and
degree bucket, each with the Wilson interval of the mean over positives.

Metric rows (common metric schema, ``suite="grapheval"``, ``task``: ``statement`` for the paper profile's items,
``statement_kgprobe`` for the kgprobe profile's, :mod:`.profiles`):

* ``correctness``, ``truthfulness``, ``informativeness`` (higher is better; interval ``wilson_mean``; ``n`` = the
  positives whose answer was read; ``item_ids`` = those positives). A group counts when its positive has an
  answer; its negatives are those with an answer;
* ``unknown_share``: the share of answered statements whose vote is unreadable (lower is better; Wilson);
* ``accuracy``: the share of statements voted as expected (true for a positive, false for a negative), overall and
  by polarity (Wilson), the plain reading beside the paper's metrics.

The same rows are computed for every other labelling of the same statements passed in ``judged`` (e.g. the
hidden-state judge's labels, ``judge="hidden_state"``).

    >>> scored = score_statements(items, responses, model="m", seed=0)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from kgprobe.scoring.answers import parse_true_false
from kgprobe.scoring.stats import row_seed, vote, wilson_mean_ci
from kgprobe.suites.base import (
    SAMPLE_SCHEMA,
    VOTE_SCHEMA,
    SuiteScores,
    breakdown_of,
    metric_row,
)
from kgprobe.suites.grapheval.metrics import METRICS, statement_scores
from kgprobe.suites.grapheval.profiles import profile_of_task

__all__ = ["BREAKDOWNS", "VOTES", "group_scores", "metric_rows", "score_statements"]

SUITE = "grapheval"
TASK = "statement"
#: What the paper's metrics are broken down by (a positive's breakdown keys).
BREAKDOWNS: tuple[str, ...] = ("relation", "head_type", "tail_type", "degree_bucket")
#: The vote rows of GraphEval: the common vote columns, then the statement's polarity and group and, on a
#: positive's row, its three formula-(2) values.
VOTES = pa.schema(list(VOTE_SCHEMA) + [("polarity", pa.string()), ("group_id", pa.string()),
                                       *((m, pa.float64()) for m in METRICS)])


def _sample(r: Mapping[str, Any], perturbation: str, label: str) -> dict[str, Any]:
    return {"response_id": r["response_id"], "item_id": str(r["item_id"]), "model": r["model"],
            "perturbation": perturbation, "sample_index": int(r["sample_index"]), "judge": "", "text": r["text"],
            "error": r.get("error"), "label": label, "judge_text": None, "judge_error": None,
            "judge_response_id": None}


def group_scores(items: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str], *,
                 unknown_as: str | None = None) -> dict[str, dict[str, float]]:  # fmt: skip
    """Formula (2) per positive: ``{positive item_id: {metric: value}}`` for every group whose positive has a
    label in ``labels`` (item_id -> true / false / idk / unknown); its negatives are those with a label. An
    unreadable label is read as its profile reads it (:mod:`.profiles`, by the item's task) unless ``unknown_as``
    says otherwise."""
    groups: dict[str, dict[str, Any]] = {}
    for item_id, label in labels.items():
        it = items[item_id]
        g = groups.setdefault(str(it["group_id"]), {"pos": None, "neg": []})
        if it["expected"] == "true":
            g["pos"] = (item_id, label)
        else:
            g["neg"].append(label)
    out = {}
    for g in groups.values():
        if g["pos"] is None:
            continue
        item_id, label = g["pos"]
        reading = unknown_as or profile_of_task(items[item_id].get("task")).unknown_as
        out[item_id] = statement_scores(label, g["neg"], unknown_as=reading).as_dict()
    return out


def _bootstrap_row(values: Sequence[float], ids: Sequence[str], *, metric: str, breakdown: Mapping[str, str],
                   common: Mapping[str, Any], resamples: int, seed: int) -> dict[str, Any]:  # fmt: skip
    arr = np.asarray(values, dtype=np.float64)
    value = float(arr.mean()) if arr.size else float("nan")
    task = common.get("task", TASK)
    # scores of formula (2) lie in [0, 1]: the Wilson interval of their mean never collapses to a point
    low, high = wilson_mean_ci(arr, confidence=common["confidence"])
    return {"model": common["model"], "perturbation": common["perturbation"], "suite": SUITE, "task": task,
            "judge": common["judge"], "metric": metric, "breakdown": dict(breakdown), "higher_is_better": True,
            "n": int(arr.size), "value": value, "ci_low": low, "ci_high": high, "interval": "wilson_mean",
            "item_ids": list(ids)}


def metric_rows(items: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str], *, model: str,
                perturbation: str = "none", judge: str = "", confidence: float = 0.95, resamples: int = 1000,
                seed: int = 0) -> list[dict[str, Any]]:  # fmt: skip
    """The metric rows (module docstring) of one labelling ``labels`` (item_id -> label) of the statements, per
    task (one per profile, :mod:`.profiles`), each read as its profile reads unreadable answers."""
    tasks = sorted({str(items[i].get("task") or TASK) for i in labels})
    if len(tasks) > 1:
        return [row for task in tasks for row in metric_rows(
            items, {i: v for i, v in labels.items() if str(items[i].get("task") or TASK) == task}, model=model,
            perturbation=perturbation, judge=judge, confidence=confidence, resamples=resamples, seed=seed)]
    task = tasks[0] if tasks else TASK
    common = {"model": model, "perturbation": perturbation, "judge": judge, "confidence": confidence, "task": task}
    per_positive = group_scores(items, labels)
    positives = sorted(per_positive)
    cells: dict[tuple[tuple[str, str], ...], list[str]] = {(): positives}
    for item_id in positives:
        b = breakdown_of(items[item_id])
        for key in BREAKDOWNS:
            if key in b:
                cells.setdefault(((key, b[key]),), []).append(item_id)
    out = []
    for metric in METRICS:
        for cell, ids in sorted(cells.items()):
            out.append(_bootstrap_row([per_positive[i][metric] for i in ids], ids, metric=metric,
                                      breakdown=dict(cell), common=common, resamples=resamples, seed=seed))
    answered = sorted(labels)
    kw = {"model": model, "perturbation": perturbation, "suite": SUITE, "task": task, "judge": judge,
          "confidence": confidence}
    if answered:
        out.append(metric_row(metric="unknown_share", breakdown={}, flags=[labels[i] == "unknown" for i in answered],
                              item_ids=answered, higher_is_better=False, **kw))
        out.append(metric_row(metric="accuracy", breakdown={},
                              flags=[labels[i] == items[i]["expected"] for i in answered], item_ids=answered, **kw))
        for polarity, expected in (("positive", "true"), ("negative", "false")):
            ids = [i for i in answered if items[i]["expected"] == expected]
            if ids:
                out.append(metric_row(metric="accuracy", breakdown={"polarity": polarity},
                                      flags=[labels[i] == expected for i in ids], item_ids=ids, **kw))
    return out


def score_statements(items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], *, model: str,
                     perturbation: str = "none", confidence: float = 0.95, resamples: int = 1000, seed: int = 0,
                     judged: Mapping[str, Mapping[str, str]] | None = None,
                     log: Callable[[str], None] = lambda _m: None) -> SuiteScores:  # fmt: skip
    """Read every answer (:func:`~kgprobe.scoring.answers.parse_true_false`, given the statement so that a
    restatement reads; a failed request is ``unknown``), vote per statement (plurality of its samples, a tie is
    unknown, which the paper profile reads as IDK), score each group by formula (2) and measure
    (:func:`metric_rows`). ``judged`` adds the rows of other labellings by judge name (item_id -> label).
    Raises ValueError when a response answers an item that is not among ``items``."""
    by_id = {str(it["item_id"]): it for it in items}
    missing = sorted({str(r["item_id"]) for r in responses} - set(by_id))
    if missing:
        raise ValueError(f"{len(missing)} response(s) of model {model!r} answer items that are not among the "
                         f"grapheval items (first: {missing[:3]}); re-materialize the responses")
    samples = [_sample(r, perturbation, parse_true_false(r["text"], statement=by_id[str(r["item_id"])]["question"])
                       if r.get("error") is None else "unknown") for r in responses]
    per_item: dict[str, list[dict[str, Any]]] = {}
    for s in samples:
        per_item.setdefault(s["item_id"], []).append(s)
    labels: dict[str, str] = {}
    for item_id, rows in per_item.items():
        rows.sort(key=lambda s: s["sample_index"])
        labels[item_id] = vote([s["label"] for s in rows])
    scores = group_scores(by_id, labels)
    votes = []
    for item_id in sorted(per_item):
        it, rows = by_id[item_id], per_item[item_id]
        v = labels[item_id]
        votes.append({"item_id": item_id, "model": model, "perturbation": perturbation, "suite": SUITE,
                      "task": str(it.get("task") or TASK), "judge": "", "labels": [s["label"] for s in rows],
                      "response_ids": [s["response_id"] for s in rows], "vote": v, "expected": str(it["expected"]),
                      "correct": v == it["expected"], "decided": v != "unknown",
                      "polarity": "positive" if it["expected"] == "true" else "negative",
                      "group_id": str(it["group_id"]), **scores.get(item_id, {})})
    metrics = metric_rows(by_id, labels, model=model, perturbation=perturbation, confidence=confidence,
                          resamples=resamples, seed=seed)
    for judge, judge_labels in (judged or {}).items():
        metrics += metric_rows(by_id, dict(judge_labels), model=model, perturbation=perturbation, judge=judge,
                               confidence=confidence, resamples=resamples, seed=seed)
    log(f"grapheval: {len(labels)} statements voted, {len(scores)} positives scored for {model}")
    return SuiteScores(samples=samples, votes=votes, metrics=metrics, sample_schema=SAMPLE_SCHEMA, vote_schema=VOTES)
