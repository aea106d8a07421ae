"""GraphEval's report section: the three metrics (formula 2) per model with their Wilson intervals of the mean, the unreadable
share and accuracy beside them, the metrics by relation, head type, tail type and degree bucket, and, when the
hidden-state judge ran, its rows beside those from the generated answers, one judge and one majority-class baseline
per profile, and a note naming every judge that does not beat its baseline on agreement; one bar plot of the three
metrics.

Cells read ``"0.83 [0.71, 0.92] n=40"`` (n: positives for the three metrics, statements for the others).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kgprobe.suites.base import breakdown_of
from kgprobe.suites.grapheval.metrics import METRICS
from kgprobe.suites.grapheval.profiles import profile_of_task
from kgprobe.suites.grapheval.scoring import BREAKDOWNS

__all__ = ["TABLE2_NOTE", "TEMPLATES", "cell", "section"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: Why these numbers cannot be compared with the paper's Table 2.
TABLE2_NOTE = ("Not comparable with the paper's Table 2: its released analysis subtracts Truthfulness and Correctness "
               "when a negative was correctly rejected (replayed literally, a model that always answers \"true\" "
               "scores 1, 1, 1), so no faithful implementation of formula (2), as written in §3.3 and computed here, "
               "reproduces those numbers.")
_OTHER = ("unknown_share", "accuracy")
#: A column's header for each metric row it shows; tables take their headers from the metrics their cells read.
_LABELS = {"correctness": "Correctness", "truthfulness": "Truthfulness", "informativeness": "Informativeness",
           "unknown_share": "Unknown share", "accuracy": "Accuracy"}


def cell(row: Mapping[str, Any] | None) -> str:
    """A metric row as ``value [low, high] n=N`` (``–`` when absent or undefined)."""
    if row is None:
        return "–"
    value = row.get("value")
    n = row.get("n")
    if value is None or not math.isfinite(float(value)):
        return f"– n={n}"
    lo, hi = row.get("ci_low"), row.get("ci_high")
    ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi) else ""
    return f"{float(value):.2f}{ci} n={n}"


def _measured(row: Mapping[str, Any] | None) -> str:
    """A measured value (seconds, a speed-up) with the number of statements it was measured on."""
    if row is None or row.get("value") is None or not math.isfinite(float(row["value"])):
        return "–"
    return f"{float(row['value']):,.1f} n={row.get('n')}"


def _order(found: Sequence[str], preferred: Sequence[str]) -> list[str]:
    return [m for m in preferred if m in found] + sorted(set(found) - set(preferred))


def section(ctx: Any, metrics: Sequence[Mapping[str, Any]]) -> tuple[Any, dict[str, bytes]]:
    """The section (a :class:`kgprobe.report.render.ReportSection`) and its plots from GraphEval's metric rows
    (closed-book rows only: GraphEval is not grounded); ``(None, {})`` without rows."""
    from kgprobe.report.render import ReportSection, differing_cells

    rows = [r for r in metrics if r.get("setting", "closed") == "closed"]
    if not rows:
        return None, {}
    flag = differing_cells(rows)

    def fair(row: Mapping[str, Any] | None) -> str:
        return flag.text(row, cell(row))

    tasks = sorted({str(r.get("task") or "statement") for r in rows}, key=lambda t: (t != "statement", t))
    main = tasks[0]
    full: dict[tuple[str, str, str, str, tuple[tuple[str, str], ...]], Mapping[str, Any]] = {}
    for r in rows:
        full[(str(r.get("task") or "statement"), str(r["model"]), str(r["judge"] or ""), str(r["metric"]),
              tuple(sorted(breakdown_of(r).items())))] = r
    # the breakdowns and plots show the headline profile's task (the paper's when it ran)
    index = {k[1:]: r for k, r in full.items() if k[0] == main}
    models = _order(sorted({k[1] for k in full}), list(getattr(ctx, "models", ()) or ()))
    judges = sorted({k[2] for k in full})
    overall = []
    for model in models:
        for task in tasks:
            label = profile_of_task(task).label
            for judge in judges:
                if not any(k[:3] == (task, model, judge) and k[3] in (*METRICS, *_OTHER) for k in full):
                    continue
                overall.append({"model": model, "labels": f"{label}: {judge or 'generated answers'}",
                                "cells": [fair(full.get((task, model, judge, m, ()))) for m in (*METRICS, *_OTHER)]})
    by = []
    for key in BREAKDOWNS:
        values = sorted({dict(k[3])[key] for k in index if len(k[3]) == 1 and k[3][0][0] == key and k[1] == ""})
        if not values:
            continue
        # the columns are the metrics of this breakdown's rows, named from those rows, in the order the cells use
        shown = _order(sorted({k[2] for k in index if len(k[3]) == 1 and k[3][0][0] == key and k[1] == ""}),
                       METRICS)
        shown = [m for m in shown if m in METRICS]
        table = []
        for value in values:
            table.append({"value": value, "cells": [
                [fair(index.get((model, "", m, ((key, value),)))) for m in shown] for model in models]})
        by.append({"key": key.replace("_", " "), "rows": table, "metrics": [_LABELS[m] for m in shown]})
    plots: dict[str, bytes] = {}
    groups = {m: {model: (index[(model, "", m, ())]["value"], index[(model, "", m, ())]["ci_low"],
                          index[(model, "", m, ())]["ci_high"], index[(model, "", m, ())]["n"])
                  for model in models if (model, "", m, ()) in index} for m in METRICS}
    if any(groups.values()):
        from kgprobe.report.plots import grouped_bars_ci

        plots["grapheval_metrics"] = grouped_bars_ci(groups, title="GraphEval: formula (2) per model",
                                                     ylabel="mean over positives", xlabel="metric")
    figures = [{"id": key, "heading": "Correctness, truthfulness, informativeness per model",
                "src": "data:image/png;base64," + base64.b64encode(png).decode("ascii")} for key, png in plots.items()]
    judge_metrics = ("judge_f1", "judge_weighted_f1", "judge_precision", "judge_recall", "judge_agreement")
    costs = ("judge_seconds_per_1000", "generation_seconds_per_1000", "judge_speedup")
    hidden, losing = [], []
    for model in models:
        for task in tasks:  # one judge per profile: never trained or scored across the two prompt formats
            label = profile_of_task(task).label
            if not any(k[:2] == (task, model) and k[3] in judge_metrics for k in full):
                continue
            for who, name in (("hidden_state", "judge"), ("majority_class", "majority-class baseline")):
                if not any(k[:3] == (task, model, who) and k[3] in judge_metrics for k in full):
                    continue
                hidden.append({"model": model, "who": f"{label}: {name}",
                               "cells": [fair(full.get((task, model, who, m, ()))) for m in judge_metrics],
                               "costs": [_measured(full.get((task, model, who, m, ()))) for m in costs]})
            judge = full.get((task, model, "hidden_state", "judge_agreement", ()))
            base = full.get((task, model, "majority_class", "judge_agreement", ()))
            if judge is not None and base is not None and not float(judge["value"]) > float(base["value"]):
                losing.append(f"{model}, {label}: agreement {float(judge['value']):.2f} against the baseline's "
                              f"{float(base['value']):.2f} (n={judge['n']})")
    data = {"metrics": [_LABELS[m] for m in (*METRICS, *_OTHER)], "overall": overall,
            "models": models, "by": by, "figures": figures, "hidden": hidden, "hidden_losing": losing,
            "table2_note": TABLE2_NOTE,
            "confidence": round(100 * float(getattr(ctx, "confidence", 0.95)))}
    return ReportSection(template="grapheval/section.html", template_dir=TEMPLATES, data=data,
                         metrics=[r for r in rows if not breakdown_of(r)]), plots
