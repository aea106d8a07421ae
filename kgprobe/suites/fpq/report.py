"""KG-FPQ's report section: its leaderboard tables, its plots, and the data of its section of the report (At a
glance, the closed-book and grounded leaderboards, judge agreement, the plots, how to trace a number), laid out by
the templates in ``templates/fpq/``.

Everything here is computed from plain rows (lists of dicts, or anything with ``to_pylist()``) of the scoring stage:

* metric rows of ``fpq_scores_metrics`` (closed book, perturbation ``"none"``) and ``fpq_grounded_scores_metrics``
  (grounded in the KG subgraph, perturbation ``"none"`` or METHOD-LEVEL such as ``"RS-0.2"``), with their breakdown
  as ``domain``, ``method`` and ``hop`` columns (:func:`kgprobe.scoring.tables.expand_breakdown`);
* judge agreement rows, one per (model, perturbation, judge_a, judge_b);
* KG similarity rows, one per (query, perturbation): ``query_id, perturbation, method, level, ats, sc2d, sd2``.

Closed-book and clean grounded rows share the perturbation ``"none"``, so metric and agreement rows say which
setting they come from: pass ``{"closed": closed_rows, "grounded": grounded_rows}`` (keys may also be the table
names), or give each row ``setting="closed"|"grounded"``. A flat row without ``setting`` counts as closed book when
its perturbation is ``"none"`` and as grounded otherwise; two rows with the same key in one setting raise
``ValueError`` rather than being silently merged. The leaderboard leads with the headline metric,
:data:`HEADLINE_METRIC` (yes/no FPQ accuracy, gated, as KG-FPQ's Table 10 reports it).

    >>> tables = leaderboard_tables({"closed": closed, "grounded": grounded})   # {"fpq_closed": [...], ...}
    >>> pngs = report_plots({"closed": closed, "grounded": grounded}, similarity, agreement, judges=("judge-a",))
    >>> write_report("reports/fpq.html", render_html(ctx, {"closed": closed, "grounded": grounded}, agreement, pngs))
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kgprobe.grounding.perturb import METHODS as PERTURB_METHODS
from kgprobe.grounding.perturb import parse_perturbation
from kgprobe.report import plots
from kgprobe.report.render import (
    INTERVAL_NAMES,
    ReportContext,
    DifferingCells,
    ReportSection,
    _blank,
    _float,
    _int,
    _interval_of,
    _interval_phrase,
    _kinds,
    _metric_cell,
    _order,
    _rows,
    _stat,
    differing_cells,
    render_page,
    sql_name,
    write_report,
)
from kgprobe.suites.fpq.edits import ALL_METHODS

__all__ = [
    "HEADLINE_METRIC",
    "INTERVAL_NAMES",
    "KEY_METRICS",
    "PLOT_KEYS",
    "SETTINGS",
    "TEMPLATES",
    "ReportContext",
    "leaderboard_tables",
    "render_html",
    "report_plots",
    "section",
    "sql_name",
    "write_report",
]

#: The folder of KG-FPQ's report templates (``fpq/section.html`` and the pieces it includes).
TEMPLATES = Path(__file__).resolve().parent / "templates"

#: The settings a metric or agreement row comes from.
SETTINGS: tuple[str, ...] = ("closed", "grounded")


#: The leaderboard's headline: yes/no FPQ accuracy over the FPQs whose true premise the model knows (KG-FPQ's
#: Table 10 is gated, so this is the number to compare with the paper).
HEADLINE_METRIC = "fpq_accuracy_gated"


#: The metrics of the leaderboard tables, for the discriminative task and (``gen_<metric>__<judge>``) per judge, in
#: column order: the headline first, then its ungated form, the TPQs, all items, and the unreadable share.
KEY_METRICS: tuple[str, ...] = (HEADLINE_METRIC, "fpq_accuracy", "tpq_accuracy", "accuracy", "unknown_share")


#: The keys :func:`report_plots` may return, in the order the report shows them.
PLOT_KEYS: tuple[str, ...] = (
    "accuracy_by_method",
    "accuracy_by_method_ungated",
    "accuracy_by_hop",
    "discriminative_vs_generative",
    "grounded_by_level",
    "kg_similarity",
)


_DISC = "discriminative"


_GEN = "generative"


_HOP_METHODS = ("NSC", "NDC")


_SIMILARITY = (("ats", "ATS (triple plausibility)"), ("sc2d", "SC2D (clustering similarity)"),
               ("sd2", "SD2 (degree similarity)"))


_PERTURB_NAMES = {"RS": "relation swapping", "RR": "relation replacement", "ER": "edge rewiring",
                  "ED": "edge deletion"}


# Metric key: (setting, model, perturbation, task, judge, metric, domain, method, hop).
_Key = tuple[str, str, str, str, str, str, Any, Any, Any]


def _setting_of(name: str) -> str:
    low = str(name).lower()
    if "grounded" in low:
        return "grounded"
    if "closed" in low:
        return "closed"
    raise ValueError(f"rows keyed {name!r}: expected 'closed' or 'grounded' (or a table name containing one of them)")


def _tagged(data: Any) -> list[tuple[str, dict]]:
    """(setting, row) for every metric or agreement row, whichever way they were passed."""
    if isinstance(data, Mapping):
        return [(_setting_of(name), row) for name, part in data.items() for row in _rows(part)]
    out = []
    for row in _rows(data):
        setting = row.get("setting")
        if setting is None:
            setting = "closed" if str(row.get("perturbation", "none")) == "none" else "grounded"
        out.append((_setting_of(setting), row))
    return out


def _metric_index(metrics: Any) -> dict[_Key, dict]:
    index: dict[_Key, dict] = {}
    for setting, row in _tagged(metrics):
        key = (setting, str(row["model"]), str(row.get("perturbation") or "none"), str(row["task"]),
               str(row.get("judge") or ""), str(row["metric"]), _blank(row.get("domain")), _blank(row.get("method")),
               _int(row.get("hop")))
        if key in index:
            raise ValueError(f"two metric rows for {key[1:]} in the {setting} setting; pass "
                             "{'closed': closed_rows, 'grounded': grounded_rows} (or set row['setting']) so that "
                             "closed-book and clean grounded rows, both perturbation 'none', stay apart")
        # the setting travels with the row, so a table's cells can be told apart from the other setting's
        index[key] = row if row.get("setting") == setting else {**row, "setting": setting}
    return index


def _agreement_rows(agreement: Any) -> list[tuple[str, dict]]:
    seen = set()
    out = []
    for setting, row in _tagged(agreement):
        key = (setting, row["model"], row.get("perturbation") or "none", row["judge_a"], row["judge_b"])
        if key in seen:
            raise ValueError(f"two judge agreement rows for {key[1:]} in the {setting} setting; pass "
                             "{'closed': ..., 'grounded': ...} or set row['setting']")
        seen.add(key)
        out.append((setting, row))
    return out


def _perturbation_sort(key: str) -> tuple[int, int, float, str]:
    method, level = _parse(key)
    rank = PERTURB_METHODS.index(method) if method in PERTURB_METHODS else len(PERTURB_METHODS)
    return (0 if method == "none" else 1, rank, level, key)


def _parse(key: str) -> tuple[str, float]:
    try:
        return parse_perturbation(key)
    except Exception:  # a key this version does not know still gets a column, after the known ones
        return str(key), math.nan


def _judges(index: Mapping[_Key, dict], setting: str, preferred: Sequence[str]) -> list[str]:
    return _order((k[4] for k in index if k[0] == setting and k[3] == _GEN and k[4]), preferred)


def _models(index: Mapping[_Key, dict], preferred: Sequence[str], setting: str | None = None) -> list[str]:
    return _order((k[1] for k in index if setting is None or k[0] == setting), preferred)


def _metric_columns(judges: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """(column stem, task, judge, metric) of one leaderboard row, discriminative first, then per judge."""
    columns = [(metric, _DISC, "", metric) for metric in KEY_METRICS]
    stems: dict[str, str] = {}
    for judge in judges:
        stem = sql_name(judge)
        if stem in stems:
            raise ValueError(f"judges {stems[stem]!r} and {judge!r} give the same column name {stem!r}; rename one")
        stems[stem] = judge
        columns += [(f"gen_{metric}__{stem}", _GEN, judge, metric) for metric in KEY_METRICS]
    return columns


def _fill(out: dict, stem: str, row: Mapping | None) -> None:
    value, lo, hi, n = _stat(row)
    missing = row is None
    out[stem] = None if missing else value
    out[f"{stem}_lo"] = None if missing else lo
    out[f"{stem}_hi"] = None if missing else hi
    out[f"{stem}_n"] = n
    out[f"{stem}_interval"] = None if missing else _interval_of(row)


def leaderboard_tables(
    metrics: Any, *, models: Sequence[str] = (), judges: Sequence[str] = ()
) -> dict[str, list[dict]]:
    """Return the leaderboard as wide tables, ``{"fpq_closed": rows, "fpq_grounded": rows}``, for DuckDB and the HTML.

    ``fpq_closed`` has one row per model; ``fpq_grounded`` one per (model, perturbation), with the perturbation's
    ``method`` ("none" for the clean subgraph) and ``level`` (0.0 for "none"). For each of :data:`KEY_METRICS`, in
    that order, so the headline ``fpq_accuracy_gated`` comes first (overall: no domain, method or hop), a row holds
    ``<metric>``, ``<metric>_lo``, ``<metric>_hi``, ``<metric>_n`` and ``<metric>_interval`` (the metric row's
    interval kind, "wilson" or "bootstrap") of the discriminative task, and ``gen_<metric>__<judge>`` (+ ``_lo``,
    ``_hi``, ``_n``, ``_interval``) of the generative task per judge. Every row of a table has the same columns,
    all valid SQL identifiers (:func:`sql_name`); a metric without a row is None (its ``_interval`` too), one with
    n == 0 is NaN. A metric row without ``interval`` (written before the column existed) counts as "bootstrap".
    Both keys are always present.
    """
    index = _metric_index(metrics)
    tables: dict[str, list[dict]] = {"fpq_closed": [], "fpq_grounded": []}
    columns = _metric_columns(_judges(index, "closed", judges))
    for model in _models(index, models, "closed"):
        row: dict[str, Any] = {"model": model}
        for stem, task, judge, metric in columns:
            _fill(row, stem, index.get(("closed", model, "none", task, judge, metric, None, None, None)))
        tables["fpq_closed"].append(row)
    columns = _metric_columns(_judges(index, "grounded", judges))
    for model in _models(index, models, "grounded"):
        keys = {k[2] for k in index if k[0] == "grounded" and k[1] == model}
        for perturbation in sorted(keys, key=_perturbation_sort):
            method, level = _parse(perturbation)
            row = {"model": model, "perturbation": perturbation, "method": method, "level": level}
            for stem, task, judge, metric in columns:
                _fill(row, stem, index.get(("grounded", model, perturbation, task, judge, metric, None, None, None)))
            tables["fpq_grounded"].append(row)
    return tables


def _has_value(points: Iterable[tuple]) -> bool:
    return any(math.isfinite(p[0]) for p in points)


def _kappa_notes(agreement: Any, setting: str, judge: str, judges: Sequence[str]) -> dict[str, str]:
    """Per model, Cohen's kappa of ``judge`` with the next judge in order (the first pair found)."""
    notes: dict[str, str] = {}
    candidates = []
    for s, row in _agreement_rows(agreement):
        if s != setting or (row.get("perturbation") or "none") != "none":
            continue
        if judge not in (row["judge_a"], row["judge_b"]):
            continue
        other = row["judge_b"] if row["judge_a"] == judge else row["judge_a"]
        rank = list(judges).index(other) if other in judges else len(judges)
        candidates.append((rank, str(other), str(row["model"]), row))
    for _, _, model, row in sorted(candidates, key=lambda c: c[:3]):
        kappa = _float(row.get("kappa"))
        if model not in notes and math.isfinite(kappa):
            notes[model] = f"κ={kappa:.2f}"
    return notes


def report_plots(
    metrics: Any,
    similarity: Any,
    agreement: Any,
    *,
    models: Sequence[str] = (),
    judges: Sequence[str] = (),
) -> dict[str, bytes]:
    """Return the report's plots as PNG bytes keyed by :data:`PLOT_KEYS`; a plot without data is left out.

    * ``accuracy_by_method`` / ``accuracy_by_method_ungated``: closed-book yes/no FPQ accuracy (gated / ungated)
      per KG-FPQ edit method NSC..NNDR, one bar per model with its 95% interval (KG-FPQ's Figure 7);
    * ``accuracy_by_hop``: closed-book gated yes/no FPQ accuracy against the hop of the false object, one panel per
      method NSC and NDC, one line per model;
    * ``discriminative_vs_generative``: per model, closed-book FPQ accuracy of the yes/no questions beside the
      open questions' as judged by each judge that has rows (one bar per judge, in ``judges`` order; the first
      judge's kappa with the next under the model's name when ``agreement`` has it);
    * ``grounded_by_level``: grounded yes/no accuracy against the perturbation level, one panel per method
      RS RR ER ED, x = 0 being the clean subgraph ("none"), one line per model with its 95% band;
    * ``kg_similarity``: per method, the mean ATS, SC2D and SD2 of the perturbed subgraphs over queries against
      the level (OKGQA's Figure 5).

    ``models`` and ``judges`` order the series (others follow by name); a model keeps its colour in every plot.
    """
    index = _metric_index(metrics)
    model_order = _models(index, models)
    colors = {m: _color(i, len(model_order)) for i, m in enumerate(model_order)}
    out: dict[str, bytes] = {}

    def closed(model: str, metric: str, task: str = _DISC, judge: str = "", method: Any = None, hop: Any = None):
        return _stat(index.get(("closed", model, "none", task, judge, metric, None, method, hop)))

    closed_models = _models(index, models, "closed")
    for key, metric, label in (("accuracy_by_method", "fpq_accuracy_gated", "gated: true premise answered yes"),
                               ("accuracy_by_method_ungated", "fpq_accuracy", "ungated: all false-premise questions")):
        groups = {m: {model: closed(model, metric, method=m) for model in closed_models} for m in ALL_METHODS}
        groups = {m: g for m, g in groups.items() if _has_value(g.values())}
        if groups:
            out[key] = plots.grouped_bars_ci(
                groups, title=f"Closed book, yes/no: false-premise accuracy by edit method ({label})",
                ylabel="accuracy", xlabel="KG-FPQ edit method of the false premise", colors=colors)

    panels = {}
    for method in _HOP_METHODS:
        hops = sorted({k[8] for k in index if k[0] == "closed" and k[3] == _DISC and k[5] == "fpq_accuracy_gated"
                       and k[7] == method and k[8] is not None and k[6] is None})
        lines = {model: {h: closed(model, "fpq_accuracy_gated", method=method, hop=h) for h in hops}
                 for model in closed_models}
        lines = {m: pts for m, pts in lines.items() if _has_value(pts.values())}
        if lines:
            panels[method] = lines
    if panels:
        out["accuracy_by_hop"] = plots.panel_lines(
            panels, title="Closed book, yes/no: gated false-premise accuracy by distance of the false object",
            xlabel="hops between the subject and the false object", ylabel="accuracy", colors=colors)

    gen_judges = [j for j in _judges(index, "closed", judges)
                  if _has_value(closed(m, "fpq_accuracy", _GEN, j) for m in closed_models)]
    if gen_judges and _has_value(closed(m, "fpq_accuracy") for m in closed_models):
        # one bar per judge: a judge that cannot read a model's answers (the reference oracle on prose) leaves a gap
        # that the next judge fills, and bars side by side show how far the judges disagree
        disc = "yes/no questions (discriminative)"
        gen = {j: f"open questions judged by {j} (generative)" for j in gen_judges}
        groups = {model: {disc: closed(model, "fpq_accuracy"),
                          **{gen[j]: closed(model, "fpq_accuracy", _GEN, j) for j in gen_judges}}
                  for model in closed_models}
        palette = ["#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
        out["discriminative_vs_generative"] = plots.grouped_bars_ci(
            {m: g for m, g in groups.items() if _has_value(g.values())},
            title="Closed book: false-premise accuracy, yes/no vs open questions", ylabel="accuracy", xlabel="model",
            colors={disc: "#4c72b0", **{gen[j]: palette[i % len(palette)] for i, j in enumerate(gen_judges)}},
            notes=_kappa_notes(agreement, "closed", gen_judges[0], _judges(index, "closed", judges)))

    grounded = [k for k in index if k[0] == "grounded" and k[3] == _DISC and k[5] == "accuracy"
                and k[6] is None and k[7] is None and k[8] is None]
    methods = [m for m in PERTURB_METHODS if any(_parse(k[2])[0] == m for k in grounded)]
    panels = {}
    for method in methods:
        keys = sorted({k[2] for k in grounded if _parse(k[2])[0] in (method, "none")}, key=_perturbation_sort)
        lines = {model: {_parse(p)[1]: _stat(index.get(("grounded", model, p, _DISC, "", "accuracy", None, None, None)))
                         for p in keys} for model in _models(index, models, "grounded")}
        lines = {m: pts for m, pts in lines.items() if _has_value(pts.values())}
        if lines:
            panels[f"{method}: {_PERTURB_NAMES[method]}"] = lines
    if panels:
        out["grounded_by_level"] = plots.panel_lines(
            panels, title="Grounded, yes/no: accuracy as the KG subgraph is perturbed",
            xlabel="perturbation level (share of edges changed; 0 = clean subgraph)", ylabel="accuracy",
            xlim=(-0.04, 1.04), colors=colors)

    panels = _similarity_panels(_rows(similarity))
    if panels:
        out["kg_similarity"] = plots.panel_lines(
            panels, title="Perturbed subgraphs against the clean ones (mean over queries)",
            xlabel="perturbation level (share of edges changed)", ylabel="mean score over queries",
            ylim=(0.0, 1.0), xlim=(-0.04, 1.04))
    return out


def _color(i: int, n: int) -> str:
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
    return matplotlib.colors.to_hex(cmap(i % cmap.N))


def _similarity_panels(rows: list[dict]) -> dict[str, dict[str, dict[float, float]]]:
    values: dict[tuple[str, float], dict[str, list[float]]] = {}
    queries: dict[str, set] = {}
    for row in rows:
        method, level = (_blank(row.get("method")), _float(row.get("level")))
        if row.get("perturbation") is not None:
            method, level = _parse(str(row["perturbation"]))
        if method is None or not math.isfinite(level):
            continue
        cell = values.setdefault((str(method), level), {m: [] for m, _ in _SIMILARITY})
        for measure, _ in _SIMILARITY:
            x = _float(row.get(measure))
            if math.isfinite(x):
                cell[measure].append(x)
        queries.setdefault(str(method), set()).add(row.get("query_id"))
    panels: dict[str, dict[str, dict[float, float]]] = {}
    for method in PERTURB_METHODS:
        levels = sorted(lv for (m, lv) in values if m in (method, "none"))
        if not any(m == method for (m, _) in values):
            continue
        lines: dict[str, dict[float, float]] = {}
        for measure, label in _SIMILARITY:
            pts = {}
            for lv in levels:
                for m in (method, "none"):
                    xs = values.get((m, lv), {}).get(measure)
                    if xs:
                        pts[lv] = sum(xs) / len(xs)
            lines[label] = pts
        if any(lines.values()):
            panels[f"{method}: {_PERTURB_NAMES[method]}\n{len(queries[method])} queries"] = lines
    return panels


# Headings and captions of the plots, keyed like PLOT_KEYS and _PLOT_ROWS, so a new plot adds its words beside the
# rows it draws; "{interval}" is replaced by how those rows' intervals are named. Plain text: the template escapes it.
_PLOT_TEXT = {
    "accuracy_by_method": (
        "False-premise accuracy by edit method (closed book, yes/no, gated)",
        "Share of yes/no false-premise questions the model answered \"no\", per KG-FPQ edit method of the false "
        "object: N = near the subject (within the hop limit), NN = not near; SC / DC = of the same / a different "
        "type as the true object; SR / DR = an object of the same / only of other relations. Only questions whose "
        "true-premise twin the model answered \"yes\" count. Error bars: {interval}; n: questions "
        "behind the bar."),
    "accuracy_by_method_ungated": (
        "False-premise accuracy by edit method (closed book, yes/no, ungated)",
        "As above over all false-premise questions, whether or not the model knows the true fact."),
    "accuracy_by_hop": (
        "False-premise accuracy by hop (closed book, yes/no, gated)",
        "Whether a false object close to the subject in the KG (few hops) fools the model more than a distant one. "
        "One panel per edit method (NSC, NDC), one line per model; bands: {interval}."),
    "discriminative_vs_generative": (
        "Yes/no versus open questions (closed book)",
        "False-premise accuracy of the same models on yes/no questions and on open questions, whose answers each "
        "configured judge read (one bar per judge; a judge that cannot read a model's answers leaves no bar). "
        "Error bars: {interval}. Under each model, the first two judges' Cohen's kappa on that model's answers."),
    "grounded_by_level": (
        "Grounded accuracy against KG perturbation",
        "Yes/no accuracy with the question's KG subgraph in the prompt, as a growing share of its edges is "
        "perturbed; level 0 is the clean subgraph, shared by every panel. Bands: {interval}."),
    "kg_similarity": (
        "How much the perturbations changed the subgraphs",
        "Mean over queries of ATS (the triple scorer's plausibility of the perturbed triples), SC2D and SD2 "
        "(similarity of the relation-wise clustering and degree distributions to the clean subgraph; 1 = same)."),
}


# Which metric rows each plot of report_plots draws (by metric key), so its caption can name their intervals.
_PLOT_ROWS: dict[str, Callable[[_Key], bool]] = {
    "accuracy_by_method": lambda k: (k[0], k[3], k[5]) == ("closed", _DISC, "fpq_accuracy_gated")
    and k[6] is None and k[7] is not None and k[8] is None,
    "accuracy_by_method_ungated": lambda k: (k[0], k[3], k[5]) == ("closed", _DISC, "fpq_accuracy")
    and k[6] is None and k[7] is not None and k[8] is None,
    "accuracy_by_hop": lambda k: (k[0], k[3], k[5]) == ("closed", _DISC, "fpq_accuracy_gated")
    and k[6] is None and k[7] in _HOP_METHODS and k[8] is not None,
    "discriminative_vs_generative": lambda k: (k[0], k[5]) == ("closed", "fpq_accuracy")
    and k[6] is None and k[7] is None and k[8] is None,
    "grounded_by_level": lambda k: (k[0], k[3], k[5]) == ("grounded", _DISC, "accuracy")
    and k[6] is None and k[7] is None and k[8] is None,
}


def _glance(index: Mapping[_Key, dict], models: Sequence[str], confidence: float = 0.95) -> dict[str, Any] | None:
    """The "At a glance" list for ``_glance.html``: per model, best first, the share of gated FPQs whose premise it
    does not reject (1 - the headline) with its interval; None when no model has a headline value."""
    ranked, shown = [], []
    for model in models:
        row = index.get(("closed", model, "none", _DISC, "", HEADLINE_METRIC, None, None, None))
        value, lo, hi, n = _stat(row)
        if math.isfinite(value):
            ranked.append((-value, model, value, lo, hi, n))
            shown.append(row)
    if not ranked:
        return None
    return {
        "interval": _interval_phrase(_kinds(shown), confidence),
        # not rejecting is the complement of accuracy, so the interval's ends swap
        "models": [{"model": model, "share": f"{1 - value:.0%}", "n": n,
                    "ci": f"[{1 - hi:.0%}, {1 - lo:.0%}]" if math.isfinite(lo) and math.isfinite(hi) else None}
                   for _, model, value, lo, hi, n in sorted(ranked)],
    }


def _closed(index: Mapping[_Key, dict], models: Sequence[str], judges: Sequence[str],
            confidence: float = 0.95, *, flag: DifferingCells | None = None) -> dict[str, Any] | None:
    """The closed-book leaderboard for ``_closed.html`` (models x key metrics); None without closed-book rows."""
    models = [m for m in models if any(k[0] == "closed" and k[1] == m for k in index)]
    if not models:
        return None
    # the headline first, named as such: it is the number to compare with KG-FPQ's Table 10
    columns: list[tuple[str, str, str, str]] = [
        ("FPQ accuracy, gated (headline)", _DISC, "", HEADLINE_METRIC),
        ("FPQ accuracy (yes/no)", _DISC, "", "fpq_accuracy"),
        ("TPQ accuracy (yes/no)", _DISC, "", "tpq_accuracy"),
    ]
    columns += [(f"FPQ accuracy, open questions (judge {j})", _GEN, j, "fpq_accuracy") for j in judges]
    columns.append(("unknown share (yes/no)", _DISC, "", "unknown_share"))
    found = {(model, c): index.get(("closed", model, "none", c[1], c[2], c[3], None, None, None))
             for model in models for c in columns}
    kinds = _kinds(found.values())
    flag = flag or differing_cells(())
    rows = [{"model": model,
             "cells": [flag.cell(found[(model, c)], _metric_cell(
                 found[(model, c)], "fpq_scores_metrics", shade=c[3] != "unknown_share", confidence=confidence,
                 kind=len(kinds) > 1)) for c in columns]}
            for model in models]
    return {"interval": _interval_phrase(kinds, confidence), "headers": ["model"] + [c[0] for c in columns],
            "rows": rows}


def _agreement(agreement: list[tuple[str, dict]], models: Sequence[str]) -> list[dict[str, str]]:
    """The judge agreement table for ``_agreement.html``, one dict of display strings per (setting, model,
    perturbation, judge pair), ordered by setting, model and perturbation; [] without agreement rows."""
    rank = {m: i for i, m in enumerate(models)}

    def key(item: tuple[str, dict]) -> tuple:
        setting, row = item
        return (SETTINGS.index(setting), rank.get(row["model"], len(rank)), str(row["model"]),
                _perturbation_sort(str(row.get("perturbation") or "none")), str(row["judge_a"]), str(row["judge_b"]))

    out = []
    for setting, row in sorted(agreement, key=key):
        kappa, share, n = _float(row.get("kappa")), _float(row.get("agreement")), _int(row.get("n"))
        out.append({
            "setting": setting,
            "model": str(row["model"]),
            "perturbation": str(row.get("perturbation") or "none"),
            "judges": f"{row['judge_a']} / {row['judge_b']}",
            "kappa": f"{kappa:.2f}" if math.isfinite(kappa) else "–",
            "agreement": f"{share:.2f}" if math.isfinite(share) else "–",
            "n": str(n) if n is not None else "–",
        })
    return out


def _grounded(index: Mapping[_Key, dict], models: Sequence[str], confidence: float = 0.95, *,
              flag: DifferingCells | None = None) -> dict[str, Any] | None:
    """The grounded leaderboard for ``_grounded.html``: one table per perturbation method (models x level, the
    clean subgraph first); None without grounded yes/no accuracy rows."""
    keys = [k for k in index if k[0] == "grounded" and k[3] == _DISC and k[5] == "accuracy"
            and k[6] is None and k[7] is None and k[8] is None]
    if not keys:
        return None
    models = [m for m in models if any(k[1] == m for k in keys)]
    perturbations = sorted({k[2] for k in keys}, key=_perturbation_sort)
    methods = [m for m in dict.fromkeys(_parse(p)[0] for p in perturbations) if m != "none"]
    kinds = _kinds(index[k] for k in keys if k[1] in models)
    flag = flag or differing_cells(())
    tables = []
    for method in methods or ["none"]:
        cols = [p for p in perturbations if _parse(p)[0] in (method, "none")]
        rows = [{"model": model,
                 "cells": [flag.cell(row, _metric_cell(row, "fpq_grounded_scores_metrics", confidence=confidence,
                                                       kind=len(kinds) > 1))
                           for p in cols
                           for row in [index.get(("grounded", model, p, _DISC, "", "accuracy", None, None, None))]]}
                for model in models]
        tables.append({
            "title": f"{method}: {_PERTURB_NAMES.get(method, method)}" if method != "none" else "clean subgraph",
            # a column is named by its level alone ("0.2"): the table's title names the method
            "headers": ["model"] + [p if _parse(p)[0] == "none" else p.partition("-")[2] for p in cols],
            "rows": rows,
        })
    return {"interval": _interval_phrase(kinds, confidence), "tables": tables}


def _figures(images: Mapping[str, bytes], index: Mapping[_Key, dict] | None = None,
             confidence: float = 0.95) -> list[dict[str, str]]:
    """The plots for ``_plots.html`` in :data:`PLOT_KEYS` order (unknown keys after, by name): id, heading,
    caption naming the intervals of the rows drawn, and the PNG as a data URI."""
    order = [k for k in PLOT_KEYS if k in images] + sorted(k for k in images if k not in PLOT_KEYS)
    figures = []
    for key in order:
        heading, caption = _PLOT_TEXT.get(key, (key, ""))
        if "{interval}" in caption:
            # named from the rows the plot draws (as report_plots selects them), not assumed
            wanted = _PLOT_ROWS.get(key, lambda _k: False)
            kinds = _kinds(row for k, row in (index or {}).items() if wanted(k))
            caption = caption.replace("{interval}", _interval_phrase(kinds, confidence))
        data = base64.b64encode(images[key]).decode("ascii")
        figures.append({"id": sql_name(key), "heading": heading, "caption": caption,
                        "src": f"data:image/png;base64,{data}"})
    return figures

def section(ctx: ReportContext, metrics: Any, agreement: Any, plots: Mapping[str, bytes]) -> ReportSection:
    """KG-FPQ's section of the report: "At a glance" (how often each model fails to reject a false premise, from the
    gated headline), the leaderboards (closed book: models x key metrics, the headline first, the open questions'
    accuracy per judge and the judge agreement; grounded: models x perturbation), the ``plots`` (from
    :func:`report_plots`) with captions, and how to trace a number to the warehouse tables. Cells read
    ``"0.83 [0.71, 0.92] n=40"``; notes and captions name the interval kinds of the rows they describe, and a table
    whose rows mix kinds names each cell's."""
    index = _metric_index(metrics)
    agreement_rows = _agreement_rows(agreement)
    models = _order([k[1] for k in index] + [str(r["model"]) for _, r in agreement_rows], ctx.models)
    judges = _judges(index, "closed", ctx.judges)
    flag = differing_cells(index.values())
    data = {
        "glance": _glance(index, models, ctx.confidence),
        "closed": _closed(index, models, judges, ctx.confidence, flag=flag),
        "agreement": _agreement(agreement_rows, models),
        "grounded": _grounded(index, models, ctx.confidence, flag=flag),
        "figures": _figures(plots, index, ctx.confidence),
    }
    return ReportSection(template="fpq/section.html", template_dir=TEMPLATES, data=data, metrics=list(index.values()))


def render_html(
    ctx: ReportContext,
    metrics: Any,
    agreement: Any,
    plots: Mapping[str, bytes],
    *,
    examples: Sequence[Mapping[str, Any]] | None = None,
    suites: Sequence[Mapping[str, Any]] = (),
    sections: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The whole report page with KG-FPQ's section (:func:`section`): :func:`kgprobe.report.render.render_page`
    with ``own=[section(ctx, metrics, agreement, plots)]``, the headline table of ``suites`` and the generic
    ``sections`` of other suites."""
    return render_page(ctx, suites=suites, own=[section(ctx, metrics, agreement, plots)], sections=sections,
                       examples=examples)

