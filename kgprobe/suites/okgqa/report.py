"""OKGQA's report section: FActScore first, then decidable fact precision, the not-in-KG share and G-Eval, per
model and extractor (zero-shot), per retrieval method and perturbation level (grounded), the paper's Figure 6
curves (FActScore against the perturbation level, one figure per perturbation method, a line per model and
retrieval method, and the closed-book chain-of-thought baseline as a level line; from the primary judge's
decomposition, the heuristic only when no judge is configured) beside the KG similarity (ATS, SC2D, SD2) of the
same levels, and the agreement of the KG verdict with the judge's check against the retrieved context.

Input: the suite's metric rows with a ``setting`` (closed / grounded), agreement rows, similarity rows
(``query_id, perturbation, method, level, ats, sc2d, sd2``).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from kgprobe.report.render import ReportSection, _cell, _interval_of, differing_cells

__all__ = ["METRICS", "figure_data", "section"]

TEMPLATES = Path(__file__).parent / "templates"
#: The metrics the section shows, in order.
METRICS = ("factscore", "fact_precision", "not_in_kg_share", "ambiguous_share", "geval_context_relevance",
           "geval_comprehensiveness", "geval_correctness", "geval_empowerment")
#: The extractor of the judge-free rows.
HEURISTIC = "heuristic"
_LEVEL_METHODS = ("RS", "RR", "ER", "ED")
#: The closed-book prompts of the zero-shot table, by the ``retrieval`` of their rows (None: the overall row).
_PROMPTS = {None: "zero-shot", "cot": "chain-of-thought"}
#: The name of the baseline's line in Figure 6 (after the model's name).
COT_LINE = "CoT, closed book"


def _rows(rows: Any) -> list[Mapping[str, Any]]:
    return list(rows.to_pylist() if hasattr(rows, "to_pylist") else rows)


def _bd(row: Mapping[str, Any]) -> dict[str, str]:
    b = row.get("breakdown") or {}
    pairs = b.items() if isinstance(b, Mapping) else b
    return {str(k): str(v) for k, v in pairs}


def _level(perturbation: str) -> tuple[str, float]:
    if perturbation in ("none", "", None):
        return "none", 0.0
    method, _, level = str(perturbation).rpartition("-")
    return method, float(level)


def figure_data(metrics: Sequence[Mapping[str, Any]], *, judge: str = HEURISTIC,
                metric: str = "factscore") -> dict[str, dict[str, dict[float, float]]]:  # fmt: skip
    """Per perturbation method, the ``metric`` (FActScore) curve of each ``model / retrieval`` (level -> value;
    level 0 is the clean subgraph), from grounded overall-by-retrieval rows of ``judge``; and each model's closed-book
    chain-of-thought score (``model / CoT, closed book``) as a level line over the method's levels, the paper's
    baseline."""
    curves: dict[str, dict[str, dict[float, float]]] = {}
    clean: dict[str, float] = {}
    baseline: dict[str, float] = {}
    for r in metrics:
        bd = _bd(r)
        if (r.get("setting") == "closed" and r["metric"] == metric and r["judge"] == judge
                and bd == {"retrieval": "cot"} and (r.get("perturbation") or "none") == "none"
                and r["value"] is not None and math.isfinite(float(r["value"]))):
            baseline[f"{r['model']} / {COT_LINE}"] = float(r["value"])
            continue
        if (r.get("setting", "grounded") != "grounded" or r["metric"] != metric or r["judge"] != judge
                or set(bd) != {"retrieval"} or r["value"] is None or not math.isfinite(float(r["value"]))):
            continue
        name = f"{r['model']} / {bd['retrieval']}"
        method, level = _level(r["perturbation"])
        if method == "none":
            clean[name] = float(r["value"])
        else:
            curves.setdefault(method, {}).setdefault(name, {})[level] = float(r["value"])
    for lines in curves.values():
        for name, points in lines.items():
            if name in clean:
                points[0.0] = clean[name]
        levels = sorted({x for points in lines.values() for x in points})
        for name, value in baseline.items():
            lines[name] = {x: value for x in levels}
    return {m: curves[m] for m in _LEVEL_METHODS if m in curves}


def _similarity_curves(similarity: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[float, float]]]:
    acc: dict[tuple[str, float], dict[str, list[float]]] = {}
    for r in similarity:
        for m in ("ats", "sc2d", "sd2"):
            if r.get(m) is not None:
                acc.setdefault((str(r["method"]), float(r["level"])), {}).setdefault(m, []).append(float(r[m]))
    none = acc.get(("none", 0.0), {})
    out: dict[str, dict[str, dict[float, float]]] = {}
    for (method, level), d in acc.items():
        if method == "none":
            continue
        for m, values in d.items():
            line = out.setdefault(method, {}).setdefault(m.upper(), {})
            line[level] = fmean(values)
            if m in none:
                line[0.0] = fmean(none[m])
    return out


def _png(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def section(ctx: Any, metrics: Any, agreement: Any = (), similarity: Any = ()) -> tuple[ReportSection, dict[str, bytes]]:
    """The section (template ``okgqa/section.html``) and its plots: ``okgqa_precision_<METHOD>`` and
    ``okgqa_similarity_<METHOD>`` per perturbation method."""
    from kgprobe.report import plots

    rows = [r for r in _rows(metrics) if r.get("suite", "okgqa") == "okgqa"]
    models = list(dict.fromkeys([*getattr(ctx, "models", ()), *sorted({str(r["model"]) for r in rows})]))
    models = [m for m in models if any(r["model"] == m for r in rows)]
    judges = sorted({str(r["judge"]) for r in rows}, key=lambda j: (j not in ("", HEURISTIC), j))
    flag = differing_cells(rows)
    overall = {(r.get("setting", "closed"), r["model"], r["judge"], r["metric"], r["perturbation"],
                _bd(r).get("retrieval")): r for r in rows if set(_bd(r)) <= {"retrieval"}}
    closed = [{"model": m, "judge": _extractor(j), "prompt": prompt,
               "cells": [flag.text(c, _cell(c, kind=True)) for metric in METRICS
                         for c in [overall.get(("closed", m, j, metric, "none", ret))]]}
              for m in models for j in judges for ret, prompt in _PROMPTS.items()
              if any(k[:3] == ("closed", m, j) and k[5] == ret for k in overall)]
    levels = sorted({r["perturbation"] for r in rows if r.get("setting") == "grounded"},
                    key=lambda p: (p != "none", _level(p)))
    grounded = []
    for m in models:
        for j in judges:
            for method in sorted({k[5] for k in overall if k[0] == "grounded" and k[1] == m and k[2] == j and k[5]}):
                for metric in METRICS:
                    cells = [overall.get(("grounded", m, j, metric, p, method)) for p in levels]
                    if any(c is not None for c in cells):
                        grounded.append({"model": m, "judge": _extractor(j), "retrieval": method,
                                         "metric": metric, "cells": [flag.text(c, _cell(c)) for c in cells]})
    pngs: dict[str, bytes] = {}
    figures = []
    sims = _similarity_curves(_rows(similarity))
    # the primary judge's decomposition (the first configured judge with grounded FActScore rows); the heuristic
    # only when no judge decomposed the grounded answers
    grounded_judges = [j for j in judges if any(r["judge"] == j and r.get("setting") == "grounded"
                                                and r["metric"] == "factscore" for r in rows)]
    model_judges = [j for j in grounded_judges if j not in ("", HEURISTIC)]
    fig_judge = model_judges[0] if model_judges else (grounded_judges[0] if grounded_judges else HEURISTIC)
    for method, lines in figure_data(rows, judge=fig_judge).items():
        key = f"okgqa_precision_{method}"
        pngs[key] = plots.line_chart(lines, title=f"{method}: FActScore against perturbation level",
                                     xlabel="perturbation level (share of edges)", ylabel="FActScore",
                                     ylim=(0.0, 1.05))
        entry = {"method": method, "precision": _png(pngs[key]), "similarity": None}
        if method in sims:
            skey = f"okgqa_similarity_{method}"
            pngs[skey] = plots.line_chart(sims[method], title=f"{method}: KG similarity against perturbation level",
                                          xlabel="perturbation level (share of edges)", ylabel="similarity",
                                          ylim=(0.0, 1.05))
            entry["similarity"] = _png(pngs[skey])
        figures.append(entry)
    agree = [{"model": a["model"], "perturbation": a["perturbation"], "pair": f"{a['judge_a']} vs {a['judge_b']}",
              "n": a["n"], "agreement": f"{a['agreement']:.2f}" if a["agreement"] == a["agreement"] else "–",
              "kappa": f"{a['kappa']:.2f}" if a["kappa"] == a["kappa"] else "–"}
             for a in _rows(agreement) if str(a.get("judge_a", "")).endswith(": KG")]
    data = {"metrics": list(METRICS), "closed": closed, "levels": levels, "grounded": grounded, "figures": figures,
            "figure_judge": _extractor(fig_judge), "agreement": agree,
            "intervals": sorted({_interval_of(r) for r in rows if _interval_of(r)})}
    return ReportSection(template="okgqa/section.html", template_dir=TEMPLATES, data=data, metrics=rows), pngs


def _extractor(judge: str) -> str:
    """How a row's facts were extracted, as the report names it."""
    if judge in ("", HEURISTIC):
        return "heuristic (offline claim extractor, no model)"
    return f"{judge} (judge model)"
