"""Scoring of KG-FPQ answers: per-item votes, accuracy metrics with Wilson score intervals, judge agreement.

A model answers every item several times (samples). :func:`score_items` turns the sample labels of one model
under one perturbation into one *item row* per (item, judge): the labels in sample order, their counts, the
hard :func:`vote`, whether the vote is the target answer, and the *gate* of an FPQ (whether the model answered
the Yes-No TPQ of the same true triple "yes", i.e. knew the fact the FPQ falsifies). :func:`fpq_metrics` turns
item rows into long-format *metric rows*, each with its denominator, its items and a 95% interval, and
:func:`judge_agreement` says how far the WH judges agree with each other.

    >>> rows = score_items(fpq_items, samples, model="qwen", perturbation="none")
    >>> fpq_metrics(rows)   # [{'metric': 'accuracy', 'n': 120, 'value': 0.71, ..., 'interval': 'wilson'}, ...]

Tasks: Yes-No items are *discriminative* (the label is the parsed answer; judge ``""``), WH items are
*generative* (the label is an LLM judge's verdict "is the answer factual?"; one row per judge). Metrics:

======================  ==========================================================================================
accuracy                discriminative: all Yes-No items, TPQs and FPQs, share whose vote equals the target.
                        generative: FPQ items only, so it equals the generative ``fpq_accuracy`` (KG-FPQ asks only
                        FPQs in the generative task; WH TPQs are ours and are reported apart, in ``tpq_accuracy``)
tpq_accuracy            TPQ items only; overall and by domain. Generative ``tpq_accuracy`` is not a KG-FPQ metric
                        (the paper has no WH TPQs): a sanity check that the judge accepts a valid premise's answer
fpq_accuracy            FPQ items only; overall, by method, by domain x method, by hop (methods NSC and NDC only)
fpq_accuracy_gated      as fpq_accuracy, over the FPQs whose gate is True (the model said "yes" to the yn TPQ);
                        the headline number (KG-FPQ's Table 10 is gated)
unknown_share           share of the task's items (TPQs and FPQs) whose vote is "unknown"; overall only
======================  ==========================================================================================

Discriminative accuracies count an "unknown" vote as wrong (the model did not answer). Generative accuracies
leave out items whose vote is "unknown" (the judge could not decide, which says nothing about the model), and
``unknown_share`` reports how many that was.

Every metric is a proportion of items, so its interval is the Wilson score interval (:func:`wilson_ci`), column
``interval = "wilson"``: unlike a percentile bootstrap it does not collapse to a point when a cell is all correct
or all wrong (3 of 3 correct is (0.44, 1.0), not (1.0, 1.0)), and it needs no resampling. :func:`bootstrap_ci`
stays for measures that are not proportions (``interval = "bootstrap"``); when asked for, a metric row's bootstrap
seed is a SHA-256 digest of ``seed`` and the row's identity, so adding a model, a judge or a domain never moves
another row's interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from kgprobe.grounding.perturb import parse_perturbation
from kgprobe.scoring.stats import INTERVALS, Interval, accuracy, row_seed, vote
from kgprobe.suites.fpq.edits import ALL_METHODS

__all__ = ["METRICS", "fpq_metrics", "score_items"]

#: Metric names of :func:`fpq_metrics`, in the order rows are sorted (see the module docstring for their meaning).
METRICS: tuple[str, ...] = ("accuracy", "tpq_accuracy", "fpq_accuracy", "fpq_accuracy_gated", "unknown_share")


_LABELS: tuple[str, ...] = ("yes", "no", "unknown")


_TASKS: dict[str, str] = {"yn": "discriminative", "wh": "generative"}


_HOP_METHODS = frozenset({"NSC", "NDC"})


def _get(item: Any, key: str) -> Any:
    return item[key] if isinstance(item, Mapping) else getattr(item, key)


def _opt_int(value: Any) -> int | None:
    # Items read back through pandas carry a missing hop as NaN and present ones as floats.
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value)


def _opt_str(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def score_items(
    items: Iterable[Mapping[str, Any]],
    samples: Iterable[Mapping[str, Any]],
    *,
    model: str,
    perturbation: str,
) -> list[dict[str, Any]]:
    """Return the item rows of one model under one perturbation: one per (item, judge) that has samples.

    ``items`` are ``fpq_items`` rows (dicts, or :class:`~kgprobe.suites.fpq.edits.FPQItem`); ``samples`` are sample rows with at
    least ``item_id``, ``sample_index``, ``judge``, ``label`` and ``response_id`` (a ``model`` or ``perturbation``
    field, when present, must match the arguments). Labels are ordered by ``sample_index``; ``vote``, ``target``,
    ``correct`` and ``decided`` follow the scoring spec. ``tpq_item_id`` is the Yes-No TPQ of the same (subject,
    relation, true_object) among ``items`` (the one of the same domain first, then the smallest id, should a triple
    have several), and the gate of an FPQ row is whether that TPQ's vote is "yes" (None when it has no samples).
    Items without samples were not asked and get no row. Rows are sorted by (task, judge, item_id).

    Raises ValueError for a sample of an item not in ``items``, a duplicate (item, judge, sample_index), a label
    other than yes/no/unknown or a judge on a Yes-No sample; :class:`~kgprobe.grounding.perturb.PerturbError` for a bad
    perturbation key.
    """
    parse_perturbation(perturbation)
    by_id: dict[str, Any] = {}
    yn_tpqs: dict[tuple[int, int, int], list[tuple[str, str]]] = {}
    for item in items:
        item_id = str(_get(item, "id"))
        if item_id in by_id:
            raise ValueError(f"score_items: item id {item_id!r} occurs twice in items; pass each fpq_items row once")
        by_id[item_id] = item
        if _get(item, "format") == "yn" and _get(item, "premise") == "tpq":
            triple = (int(_get(item, "subject")), int(_get(item, "relation")), int(_get(item, "true_object")))
            yn_tpqs.setdefault(triple, []).append((str(_get(item, "domain")), item_id))

    grouped: dict[tuple[str, str], dict[int, tuple[str, str]]] = {}
    for sample in samples:
        item_id = str(sample["item_id"])
        item = by_id.get(item_id)
        if item is None:
            raise ValueError(f"score_items: sample {sample.get('response_id')!r} is for item {item_id!r}, which is not "
                             "among the items; pass the fpq_items the samples were generated from")
        for key, expected in (("model", model), ("perturbation", perturbation)):
            if key in sample and sample[key] != expected:
                raise ValueError(f"score_items: sample {sample.get('response_id')!r} of item {item_id!r} has {key} "
                                 f"{sample[key]!r}, not {expected!r}; score one model and perturbation per call")
        judge = sample.get("judge") or ""
        if _get(item, "format") == "yn" and judge:
            raise ValueError(f"score_items: Yes-No item {item_id!r} has a sample with judge {judge!r}; Yes-No answers "
                             "are parsed, not judged, so their judge must be ''")
        label = sample["label"]
        if label not in _LABELS:
            raise ValueError(f"score_items: sample {sample.get('response_id')!r} of item {item_id!r} has label "
                             f"{label!r}; labels are {', '.join(_LABELS)}")
        index = int(sample["sample_index"])
        per_item = grouped.setdefault((item_id, judge), {})
        if index in per_item:
            raise ValueError(f"score_items: item {item_id!r}, judge {judge!r} has sample_index {index} twice; "
                             "pass each sample row once")
        per_item[index] = (label, str(sample["response_id"]))

    votes: dict[tuple[str, str], str] = {
        key: vote([per_item[i][0] for i in sorted(per_item)]) for key, per_item in grouped.items()
    }
    rows: list[dict[str, Any]] = []
    for (item_id, judge), per_item in grouped.items():
        item = by_id[item_id]
        fmt, premise, domain = _get(item, "format"), _get(item, "premise"), str(_get(item, "domain"))
        if fmt not in _TASKS:
            raise ValueError(f"score_items: item {item_id!r} has format {fmt!r}; formats are {', '.join(_TASKS)}")
        triple = (int(_get(item, "subject")), int(_get(item, "relation")), int(_get(item, "true_object")))
        candidates = yn_tpqs.get(triple, [])
        tpq_item_id = min(candidates, key=lambda c: (c[0] != domain, c[1]))[1] if candidates else None
        gate: bool | None = None
        if premise == "fpq" and tpq_item_id is not None and (tpq_item_id, "") in votes:
            gate = votes[(tpq_item_id, "")] == "yes"
        labels = [per_item[i][0] for i in sorted(per_item)]
        target = "no" if (fmt, premise) == ("yn", "fpq") else "yes"
        item_vote = votes[(item_id, judge)]
        rows.append({
            "item_id": item_id,
            "model": model,
            "perturbation": perturbation,
            "task": _TASKS[fmt],
            "judge": judge,
            "format": fmt,
            "premise": premise,
            "domain": domain,
            "method": _opt_str(_get(item, "method")),
            "hop": _opt_int(_get(item, "hop")),
            "relation_key": _get(item, "relation_key"),
            "tpq_item_id": tpq_item_id,
            "target": target,
            "labels": labels,
            "response_ids": [per_item[i][1] for i in sorted(per_item)],
            "n_samples": len(labels),
            "n_yes": labels.count("yes"),
            "n_no": labels.count("no"),
            "n_unknown": labels.count("unknown"),
            "vote": item_vote,
            "correct": item_vote == target,
            "decided": item_vote != "unknown",
            "gate": gate,
        })
    rows.sort(key=lambda r: (r["task"], r["judge"], r["item_id"]))
    return rows


def _method_rank(method: str | None) -> tuple[int, int, str]:
    if method is None:
        return (0, 0, "")
    return (1, ALL_METHODS.index(method) if method in ALL_METHODS else len(ALL_METHODS), method)


def _metric_sort_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        row["model"], row["perturbation"], row["task"], row["judge"],
        METRICS.index(row["metric"]),
        (row["domain"] is not None, row["domain"] or ""),
        _method_rank(row["method"]),
        (row["hop"] is not None, row["hop"] or 0),
    )


def fpq_metrics(
    item_rows: Iterable[Mapping[str, Any]],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    interval: Interval = "wilson",
) -> list[dict[str, Any]]:
    """Return the metric rows (see :data:`METRICS`) of every (model, perturbation, task, judge) in ``item_rows``.

    Call it to turn one partition's item rows into the numbers the leaderboard shows. Each row has ``n``,
    ``correct``, ``value`` (NaN when n == 0), the ``confidence`` interval ``ci_low`` / ``ci_high`` and its kind in
    ``interval``, and ``item_ids``, the sorted ids of its denominator. Every metric is a proportion, so the interval
    is Wilson's (:func:`wilson_ci`) and ``resamples`` / ``seed`` are unused; ``interval="bootstrap"`` gives the
    percentile bootstrap of earlier releases instead, seeded from ``seed`` and the row's identity. The five overall
    rows of a group are always present; a breakdown (domain, method, domain x method, hop of NSC/NDC) appears only
    when it has items. Rows are sorted by group, then metric in :data:`METRICS` order, domain, method, hop.

    Generative ``accuracy`` counts the FPQs only (the WH TPQs are in ``tpq_accuracy``), so it equals the generative
    ``fpq_accuracy``; discriminative ``accuracy`` counts TPQs and FPQs (see the module docstring).

        >>> [(r["metric"], r["method"], r["value"]) for r in fpq_metrics(rows) if r["domain"] is None][:3]

    Raises ValueError when an (item, model, perturbation, judge) occurs twice (it would be counted twice), and for
    an unknown ``interval``.
    """
    if interval not in INTERVALS:
        raise ValueError(f"fpq_metrics: interval must be one of {', '.join(INTERVALS)}, got {interval!r}")
    groups: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = {}
    seen: set[tuple[str, str, str, str]] = set()
    for row in item_rows:
        judge = row.get("judge") or ""
        ident = (row["item_id"], row["model"], row["perturbation"], judge)
        if ident in seen:
            raise ValueError(f"fpq_metrics: item {row['item_id']!r} of model {row['model']!r}, perturbation "
                             f"{row['perturbation']!r}, judge {judge!r} occurs twice; pass each item row once")
        seen.add(ident)
        if row["task"] not in ("discriminative", "generative"):
            raise ValueError(f"fpq_metrics: item {row['item_id']!r} has task {row['task']!r}; "
                             "tasks are discriminative and generative")
        groups.setdefault((row["model"], row["perturbation"], row["task"], judge), []).append(row)

    out: list[dict[str, Any]] = []
    for (model, perturbation, task, judge), rows in groups.items():
        rows = sorted(rows, key=lambda r: r["item_id"])
        # Generative: an item the judge could not decide says nothing about the model, so it leaves the denominator.
        scored = [r for r in rows if r["vote"] != "unknown"] if task == "generative" else rows
        cells: dict[tuple[str, str | None, str | None, int | None], list[Mapping[str, Any]]] = {
            (metric, None, None, None): [] for metric in METRICS
        }
        # KG-FPQ's generative task asks FPQs only, so the WH TPQs (ours, a check on the judge) stay out of its
        # accuracy; the discriminative task's accuracy is over TPQs and FPQs alike.
        cells[("accuracy", None, None, None)] = (
            [r for r in scored if r["premise"] == "fpq"] if task == "generative" else scored)
        cells[("unknown_share", None, None, None)] = rows
        for r in scored:
            domain, method, hop = r["domain"], r["method"], r["hop"]
            if r["premise"] == "tpq":
                cells[("tpq_accuracy", None, None, None)].append(r)
                if domain is not None:
                    cells.setdefault(("tpq_accuracy", domain, None, None), []).append(r)
                continue
            metrics = ("fpq_accuracy", "fpq_accuracy_gated") if r["gate"] is True else ("fpq_accuracy",)
            for metric in metrics:
                cells[(metric, None, None, None)].append(r)
                if method is None:
                    continue
                cells.setdefault((metric, None, method, None), []).append(r)
                if domain is not None:
                    cells.setdefault((metric, domain, method, None), []).append(r)
                if method in _HOP_METHODS and hop is not None:
                    cells.setdefault((metric, None, method, hop), []).append(r)

        for (metric, domain, method, hop), members in cells.items():
            if metric == "unknown_share":
                flags = [r["vote"] == "unknown" for r in members]
            else:
                flags = [bool(r["correct"]) for r in members]
            # Wilson needs no seed; the digest is only worth computing for the bootstrap.
            cell_seed = (row_seed(seed, model, perturbation, task, judge, metric, domain, method, hop)
                         if interval == "bootstrap" else seed)
            acc = accuracy(flags, resamples=resamples, confidence=confidence, seed=cell_seed, interval=interval)
            out.append({
                "model": model,
                "perturbation": perturbation,
                "suite": "fpq",
                "task": task,
                "judge": judge,
                "metric": metric,
                "domain": domain,
                "method": method,
                "hop": hop,
                "n": acc.n,
                "correct": acc.correct,
                "value": acc.value,
                "ci_low": acc.ci_low,
                "ci_high": acc.ci_high,
                "interval": acc.interval,
                "item_ids": [r["item_id"] for r in members],
            })
    out.sort(key=_metric_sort_key)
    return out
