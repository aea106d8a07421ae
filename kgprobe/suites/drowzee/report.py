"""Drowzee's report section: the paper's hallucination rate (a wrong Yes/No answer; a refusal is not) per rule and
per temporal operator, beside it the oracle's split of the wrong answers (erroneous knowledge EK, erroneous inference
EI, both OL, or reasoning it finds correct), the share of right answers with wrong reasoning and the former rate (the
oracle over the reasoning, ``oracle_hallucination_rate``), each column named by the metric that produced it; and the
category mix (CO / EK / EI / OL, no triples, refusals), per model, from the closed-book metric rows of one
extractor: the first judge model that extracted claims, else the offline heuristic (the section says which)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kgprobe.report.render import ReportSection, differing_cells
from kgprobe.suites.base import breakdown_of

__all__ = ["TEMPLATES", "section"]

#: The folder of Drowzee's report templates (``drowzee/section.html``).
TEMPLATES = Path(__file__).resolve().parent / "templates"

_MIX = ("co_share", "ek_share", "ei_share", "ol_share", "no_triples_share", "refusal_share")
_HEURISTIC = ("", "heuristic")
#: The rate table's overall columns: (header, metric). The rule / operator columns that follow are the first one's.
_RATE = (("hallucination rate: wrong Yes/No answers", "hallucination_rate"),
         ("of them erroneous knowledge (EK)", "knowledge_error_share"),
         ("of them erroneous inference (EI)", "inference_error_share"),
         ("of them both (OL)", "both_errors_share"),
         ("of them reasoning CO", "wrong_answer_co_share"),
         ("right answers, wrong reasoning", "right_answer_wrong_reasoning"),
         ("oracle rate over the reasoning (former)", "oracle_hallucination_rate"))


def _cell(row: Mapping[str, Any] | None) -> str:
    if row is None or row.get("value") is None or (isinstance(row["value"], float) and math.isnan(row["value"])):
        return "–"
    return f"{row['value']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}] n={row['n']}"


def section(ctx: Any, metrics: Sequence[Mapping[str, Any]]) -> ReportSection:
    """The section's data: for each task (rule, temporal) a table models x (overall, each rule / operator) of the
    hallucination rate, and a table models x category shares; closed book, offline extractor."""
    closed = [m for m in metrics if m.get("setting", "closed") == "closed" and str(m.get("perturbation", "none")) == "none"]
    judges = sorted({str(m.get("judge") or "") for m in closed if (m.get("judge") or "") not in _HEURISTIC})
    extractor = judges[0] if judges else None
    rows = [m for m in closed if ((m.get("judge") or "") == extractor if extractor else
                                  (m.get("judge") or "") in _HEURISTIC)]
    index = {(str(m["model"]), m["task"], m["metric"], tuple(sorted(breakdown_of(m).items()))): m for m in rows}
    flag = differing_cells(rows)

    def _fair(row: Mapping[str, Any] | None) -> str:
        return flag.text(row, _cell(row))

    models = [m for m in getattr(ctx, "models", ()) if any(k[0] == m for k in index)]
    models += sorted({k[0] for k in index} - set(models))
    tables = []
    for task, key in (("rule", "rule"), ("temporal", "operator")):
        cells = sorted({b[0][1] for (_, t, met, b) in index if t == task and met == "hallucination_rate"
                        and len(b) == 1 and b[0][0] == key})
        if not any(k[1] == task for k in index):
            continue
        overall = [name for name, _ in _RATE]
        rate = {"headers": ["model", *overall, *cells], "rows": [
            {"model": m, "cells": [*(_fair(index.get((m, task, met, ()))) for _, met in _RATE),
                                   *(_fair(index.get((m, task, "hallucination_rate", ((key, c),)))) for c in cells)]}
            for m in models]}
        mix = {"headers": ["model", "CO", "EK", "EI", "OL", "no triples extracted", "refusals", "answer accuracy",
                           "right answer, wrong reasoning"],
               "rows": [{"model": m, "cells": [_fair(index.get((m, task, met, ()))) for met in
                                                (*_MIX, "answer_accuracy", "right_answer_wrong_reasoning")]}
                        for m in models]}
        tables.append({"task": task, "by": key, "rate": rate, "mix": mix})
    return ReportSection(template="drowzee/section.html", template_dir=TEMPLATES,
                         data={"title": "Drowzee: logic-derived questions with reasoning oracles", "tables": tables,
                               "extractor": f"{extractor} (judge model)" if extractor else
                               "heuristic (offline claim extractor, no model)"},
                         metrics=rows)
