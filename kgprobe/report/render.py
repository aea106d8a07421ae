"""The report page every suite shares: the header, the models x suites headline table, one section per suite, and
one self-contained HTML file.

A suite with a report section of its own (:meth:`kgprobe.suites.base.Suite.report`, KG-FPQ's) hands
:func:`render_page` a :class:`ReportSection`: a template fragment and its data; every other suite gets the generic
section, models x its overall metrics. Nothing here knows any one suite.

The HTML has no scripts and no external resources (CSS inline, PNGs as base64 data URIs), escapes every piece of
text it did not write itself (Jinja2 autoescaping), and is byte-for-byte the same for the same input: the only date
in it is ``ReportContext.created_at``.

    >>> html = render_page(ctx, metrics=rows, suites=headline_rows(rows, SUITES.values()), own=[fpq_section])
    >>> write_report("warehouse/report/report.html", html)
"""

from __future__ import annotations

import functools
import math
import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import jinja2

from kgprobe.report.leaderboard import item_sets
from kgprobe.report.safe_text import neutralise_bidi
from kgprobe.scoring.tables import sql_name

__all__ = [
    "INTERVAL_NAMES",
    "ReportContext",
    "DifferingCells",
    "ReportSection",
    "differing_cells",
    "differing_items",
    "render_page",
    "sql_name",
    "write_report",
]

#: How the report names each kind of interval of a metric row's ``interval`` column.
INTERVAL_NAMES: dict[str, str] = {"wilson": "Wilson score", "wilson_mean": "Wilson (mean of [0, 1] scores)",
                                  "bootstrap": "percentile bootstrap"}




@dataclass(frozen=True)
class ReportContext:
    """What the report's header says about the run: which project, KG snapshot, settings, models and judges.

    ``judges`` orders the generative columns (the first judge is the one plotted against the yes/no answers) and
    ``models`` the rows; models or judges found in the data but not listed follow in name order. ``counts`` are
    shown as given, e.g. ``{"KG-FPQ items": 1200, "closed-book responses": 10800}``. ``confidence`` is the level of
    every interval; ``bootstrap_resamples`` and ``bootstrap_seed`` are shown only when some metric row has a
    bootstrap interval (Wilson intervals need neither).
    """

    project: str
    config_path: str
    snapshot_ids: tuple[str, ...]
    created_at: str | datetime | date
    run_ids: tuple[str, ...] = ()
    bootstrap_resamples: int = 1000
    bootstrap_seed: int = 0
    confidence: float = 0.95
    judges: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    #: what the config has generated and answered but never scored (e.g. KG-FPQ's WH questions without a judge)
    unscored: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("snapshot_ids", "run_ids", "judges", "models", "unscored"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))


def _rows(data: Any) -> list[dict]:
    if data is None:
        return []
    if hasattr(data, "to_pylist"):
        return list(data.to_pylist())
    return [dict(r) for r in data]


def _blank(x: Any) -> Any:
    """None for SQL NULL as it may arrive (None, NaN from pandas), else the value."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return x


def _float(x: Any) -> float:
    try:
        return math.nan if _blank(x) is None else float(x)
    except (TypeError, ValueError):
        return math.nan


def _int(x: Any) -> int | None:
    x = _blank(x)
    return None if x is None else int(x)


def _order(found: Iterable[str], preferred: Sequence[str] = ()) -> list[str]:
    found = set(found)
    return [x for x in preferred if x in found] + sorted(found - set(preferred))


def _stat(row: Mapping | None) -> tuple[float, float, float, int | None]:
    if row is None:
        return math.nan, math.nan, math.nan, None
    return _float(row.get("value")), _float(row.get("ci_low")), _float(row.get("ci_high")), _int(row.get("n"))


def _interval_of(row: Mapping) -> str:
    """The interval kind of a metric row. A row without one was written when every interval was a bootstrap."""
    kind = _blank(row.get("interval"))
    return "bootstrap" if kind is None else str(kind)


def _interval_phrase(kinds: Iterable[str], confidence: float) -> str:
    """How a caption names the intervals of some rows: "95% Wilson score interval" when they share one kind."""
    found = _order(kinds, tuple(INTERVAL_NAMES))
    level = f"{confidence:.0%}"
    if not found:
        return f"{level} interval"
    if len(found) == 1:
        return f"{level} {INTERVAL_NAMES.get(found[0], found[0])} interval"
    names = " or ".join(INTERVAL_NAMES.get(k, k) for k in found)
    return f"{level} interval ({names}; each cell names its own)"


@functools.cache
def _templates(extra_dirs: tuple[str, ...] = ()) -> jinja2.Environment:
    """The report's Jinja2 environment, built once per set of folders: the package's ``templates`` folder first,
    then ``extra_dirs`` (suites' own section templates).

    Every template autoescapes (a model answer or model name is shown as text, never run as markup), and an undefined
    name is an error rather than an empty string, so a section missing its data fails the render instead of
    silently printing nothing. ``keep_trailing_newline`` lets each included section end its own last line.
    """
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("kgprobe.report", "templates"),
                                    *(jinja2.FileSystemLoader(d) for d in extra_dirs)]),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default_for_string=True, default=True),
        undefined=jinja2.StrictUndefined,
        finalize=neutralise_bidi,  # every {{ value }}: a U+202E in a label or answer cannot reorder what a cell shows
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env


class FlaggedCell(str):
    """A cell's text ending in " †" (its model answered other items than another model of its column), with
    ``note``, the hover text giving the cell's n and the items shared (templates: ``{% if c.note is defined %} title="{{ c.note }}"{% endif %}``)."""

    note: str

    def __new__(cls, text: str, note: str) -> FlaggedCell:
        self = super().__new__(cls, text)
        self.note = note
        return self


def _column_key(row: Mapping[str, Any]) -> tuple:
    """What a metric row is a value of, whatever its model: one column of a models-compared table."""
    b = row.get("breakdown") or {}
    pairs = [*(b.items() if isinstance(b, Mapping) else b),
             *((c, row.get(c)) for c in ("domain", "method", "hop") if _blank(row.get(c)) is not None)]  # KG-FPQ's
    return (str(row.get("suite") or ""), str(row.get("setting") or "closed"),
            str(_blank(row.get("perturbation")) or "none"), str(row.get("task") or ""), str(row.get("judge") or ""),
            str(row["metric"]), tuple(sorted((str(k), str(v)) for k, v in pairs if v is not None)))


class DifferingCells:
    """The cells of a suite's tables whose number stands on a different item set than another model's cell of the
    same column (same suite, setting, perturbation, task, judge, metric and breakdown): a model's own ``limit``, a
    failed request, a denominator that depends on the answers (KG-FPQ's gated accuracy). Cells with n = 0 compare
    nothing and are left out. Built once from every metric row a section shows; :meth:`text` and :meth:`cell` mark
    such a cell with a † and a hover note naming its n and the items every model of its column shares.

        >>> flag = differing_cells(rows)
        >>> flag.text(row, "0.50 [0.30, 0.70] n=22")   # "0.50 [0.30, 0.70] n=22 †" when the items differ
    """

    def __init__(self, rows: Iterable[Mapping[str, Any]]) -> None:
        columns: dict[tuple, dict[str, Mapping[str, Any]]] = {}
        for r in rows:
            if _int(r.get("n")) == 0:
                continue  # a cell without items compares nothing (and would leave no item shared by all)
            columns.setdefault(_column_key(r), {})[str(r["model"])] = r
        self.notes: dict[tuple, str] = {}
        for key, members in columns.items():
            if len(members) < 2:
                continue
            fair = item_sets(list(members.values()))
            if fair["same_items"] is not False:
                continue
            for model, r in members.items():
                others = ", ".join(f"{m} n={_int(o.get('n'))}" for m, o in sorted(members.items()) if m != model)
                self.notes[(model, *key)] = (
                    f"† the models of this column stand on different items (a model's own limit, failed requests, or "
                    f"a denominator that depends on the answers, as a gated or judged share): {model} "
                    f"n={_int(r.get('n'))} here, {fair['n_shared']} items shared by all ({others}); "
                    "kgprobe compare A B pairs them")

    def __bool__(self) -> bool:
        return bool(self.notes)

    def note(self, row: Mapping[str, Any] | None) -> str | None:
        """The hover note of ``row``'s cell, or None when its column compares like with like."""
        return None if row is None else self.notes.get((str(row["model"]), *_column_key(row)))

    def text(self, row: Mapping[str, Any] | None, text: str) -> str:
        """``text`` (the cell of ``row``) with " †" and its note when flagged, else ``text`` unchanged."""
        note = self.note(row)
        return text if note is None else FlaggedCell(f"{text} †", note)

    def cell(self, row: Mapping[str, Any] | None, cell: dict[str, Any]) -> dict[str, Any]:
        """A ``metric_cell`` dict (:func:`_metric_cell`) with " †" and the note before its hover text when flagged."""
        note = self.note(row)
        if note is None:
            return cell
        return {**cell, "text": f"{cell['text']} †", "title": f"{note}; {cell.get('title') or ''}".rstrip("; ")}


def differing_cells(rows: Iterable[Mapping[str, Any]]) -> DifferingCells:
    """:class:`DifferingCells` of ``rows`` (every metric row of one section, every model)."""
    return DifferingCells(rows)


def _cell(row: Mapping | None, *, kind: bool = False) -> str:
    value, lo, hi, n = _stat(row)
    if row is None:
        return "–"
    n_text = f" n={n}" if n is not None else ""
    if not math.isfinite(value):
        return f"–{n_text}"
    ci = f" [{lo:.2f}, {hi:.2f}]" if math.isfinite(lo) and math.isfinite(hi) else ""
    # a table whose rows have different kinds of interval names each cell's, or the brackets would be ambiguous
    kind_text = f" ({_interval_of(row)})" if kind and ci else ""
    return f"{value:.2f}{ci}{n_text}{kind_text}"


def _kinds(rows: Iterable[Mapping | None]) -> list[str]:
    """The interval kinds of the metric rows that exist among ``rows``, in :data:`INTERVAL_NAMES` order."""
    return _order({_interval_of(r) for r in rows if r is not None}, tuple(INTERVAL_NAMES))


def _metric_cell(row: Mapping | None, table: str, *, shade: bool = True, confidence: float = 0.95,
                 kind: bool = False) -> dict[str, str | None]:
    """One leaderboard cell for the ``metric_cell`` macro: its text, its hover text and its shade (or None).

    The hover text names the metric row as a WHERE clause on ``table``, so a reader can look it up; the shade is
    the green's opacity, darker for a higher value (not for the unknown share, where higher is not better).
    """
    text = _cell(row, kind=kind)
    if row is None:
        return {"text": text, "title": None, "shade": None}
    value = _float(row.get("value"))
    breakdown = {col: row.get(col) for col in ("domain", "method", "hop") if _blank(row.get(col)) is not None}
    where = " AND ".join(
        [f"{col} = '{row.get(col) or ''}'" for col in ("model", "perturbation", "task", "judge", "metric")]
        + [("breakdown = MAP {" + ", ".join(f"'{k}': '{v}'" for k, v in breakdown.items()) + "}") if breakdown
           else "cardinality(breakdown) = 0"])
    correct = _int(row.get("correct"))
    n = _int(row.get("n"))
    count = f"{correct} of {n} items; " if correct is not None and n is not None else ""
    interval = f"{_interval_phrase([_interval_of(row)], confidence)}; "
    return {"text": text, "title": f"{count}{interval}{table} WHERE {where}",
            "shade": f"{0.06 + 0.4 * value:.2f}" if shade and math.isfinite(value) else None}


def _intervals_text(ctx: ReportContext, kinds: Mapping[str, int]) -> str:
    """The header's "intervals" line: what the metric rows' ``interval`` columns say, with row counts when mixed."""
    level = f"{ctx.confidence:.0%}"
    text = {
        "wilson": f"{level} Wilson score intervals",
        "wilson_mean": f"{level} Wilson intervals of means of [0, 1] scores",
        "bootstrap": f"{level} percentile bootstrap over items, {ctx.bootstrap_resamples} resamples, "
                     f"seed {ctx.bootstrap_seed}",
    }
    found = _order(kinds, tuple(INTERVAL_NAMES))
    if not found:
        return "– (no metric rows)"
    if found == ["wilson"]:
        return f"{text['wilson']} (every metric is a share of items)"
    if len(found) == 1:
        return text.get(found[0], f"{level} {found[0]} intervals")
    return "; ".join(f"{text.get(k, f'{level} {k} intervals')} ({kinds[k]:,} metric rows)" for k in found)


def _header(ctx: ReportContext, kinds: Mapping[str, int]) -> list[dict[str, str]]:
    """The header's (term, value) pairs, for ``_header.html``: the run the report describes, then ``ctx.counts``."""
    created = ctx.created_at.isoformat() if isinstance(ctx.created_at, (datetime, date)) else str(ctx.created_at)
    items = [
        ("KG snapshot", ", ".join(ctx.snapshot_ids) or "–"),
        ("created", created),
        ("config", ctx.config_path),
        ("runs", ", ".join(ctx.run_ids) or "–"),
        ("intervals", _intervals_text(ctx, kinds)),
        ("models", ", ".join(ctx.models) or "–"),
        ("judges", ", ".join(ctx.judges) or "–"),
    ]
    items += [(str(k), f"{v:,}" if isinstance(v, int) else str(v)) for k, v in ctx.counts.items()]
    items += [("not scored", note) for note in ctx.unscored]
    return [{"term": term, "value": str(value)} for term, value in items]


def _examples(examples: Sequence[Mapping[str, Any]] | None) -> list[dict[str, str]]:
    """The unreadable answers for ``_examples.html``, as display strings; an answer is cut at 400 characters so
    one rambling model does not bury the table."""
    out = []
    for ex in examples or ():
        answer = ex.get("answer", ex.get("text"))
        answer = "(no answer: the request failed)" if answer is None else str(answer)
        if len(answer) > 400:
            answer = answer[:400] + "…"
        out.append({"model": str(ex["model"]) if ex.get("model") is not None else "–",
                    "question": str(ex["question"]) if ex.get("question") is not None else "–",
                    "answer": answer, "label": str(ex.get("label", "unknown"))})
    return out


def _suites_table(headlines: Sequence[Mapping[str, Any]], models: Sequence[str], confidence: float) -> dict | None:
    """Models x suites: each suite's headline cell, for the ``metric_table`` macro (None without headlines)."""
    if not headlines:
        return None
    suites: list[tuple[str, str]] = []
    for h in headlines:
        if (h["suite"], h["label"]) not in suites:
            suites.append((h["suite"], h["label"]))
    found = {(str(h["model"]), h["suite"]): h for h in headlines}
    differ = {s: next((h["n_shared"] for h in headlines if h["suite"] == s and h.get("same_items") is False), None)
              for s, _ in suites}
    rows = []
    for model in models:
        if not any((model, s) in found for s, _ in suites):
            continue
        rows.append({"model": model, "cells": [
            _flag(_metric_cell(_headline_row(found.get((model, s))), f"{s}_scores_metrics",
                               shade=bool(found[(model, s)]["higher_is_better"]) if (model, s) in found else False,
                               confidence=confidence), differ[s] if (model, s) in found else None)
            for s, _ in suites]})
    kinds = sorted({_interval_of(h) for h in headlines})
    return {"interval": _interval_phrase(kinds, confidence),
            "headers": ["model", *[f"{s}: {label}" + (" †" if differ[s] is not None else "") for s, label in suites]],
            "rows": rows, "differ": [{"suite": s, "n_shared": n} for s, n in differ.items() if n is not None]}


def _flag(cell: dict[str, Any], n_shared: int | None) -> dict[str, Any]:
    """Mark a cell of a column whose models answered different items (†), with the shared count in its hover."""
    if n_shared is None:
        return cell
    note = f"items differ between the models of this column ({n_shared} shared by all; kgprobe compare pairs them)"
    return {**cell, "text": f"{cell['text']} †", "title": f"{note}; {cell['title'] or ''}".rstrip("; ")}


def _headline_row(h: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if h is None else {**h, "perturbation": "none", "judge": h.get("judge") or "", "task": h.get("task", "")}


def _suite_section(section: Mapping[str, Any], models: Sequence[str], confidence: float) -> dict[str, Any]:
    """One suite's section: models x its overall metrics (read, then per judge), each a metric cell."""
    rows = [r for r in section.get("metrics", ()) if not r.get("breakdown")]
    columns: list[tuple[str, str, str]] = []
    for r in sorted(rows, key=lambda r: (bool(r.get("judge")), r.get("judge") or "", r["task"], r["metric"])):
        key = (str(r["task"]), str(r.get("judge") or ""), str(r["metric"]))
        if key not in columns:
            columns.append(key)
    found = {(str(r["model"]), str(r["task"]), str(r.get("judge") or ""), str(r["metric"])): r for r in rows}
    table = f"{section['name']}_scores_metrics"
    fair = {c: item_sets([found[(m, *c)] for m in models if (m, *c) in found]) for c in columns}
    differ = {c: f["n_shared"] if f["same_items"] is False else None for c, f in fair.items()}
    body = [{"model": m, "cells": [_flag(_metric_cell(found.get((m, *c)), table, confidence=confidence,
                                                      shade=bool(found[(m, *c)]["higher_is_better"]) if (m, *c) in found else False),
                                         differ[c] if (m, *c) in found else None)
                                   for c in columns]}
            for m in models if any((m, *c) in found for c in columns)]
    kinds = sorted({_interval_of(r) for r in rows}) or ["wilson"]
    return {"name": section["name"], "title": section.get("title") or section["name"],
            "paper": section.get("paper") or "", "interval": _interval_phrase(kinds, confidence),
            "headers": ["model", *[f"{metric} ({task}{', ' + judge if judge else ''})" + (" †" if differ[(task, judge, metric)] is not None else "")
                                   for task, judge, metric in columns]],
            "rows": body, "differ": [{"suite": f"{m} ({t})", "n_shared": n} for (t, _j, m), n in differ.items() if n is not None]}


def write_report(path: str | Path, html: str) -> Path:
    """Write ``html`` to ``path`` atomically (a temporary file beside it, then ``os.replace``); return the path.

    Parent folders are created. A reader never sees half a report: either the old file or the complete new one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(html)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


@dataclass(frozen=True)
class ReportSection:
    """A suite's own report section: the template fragment to include (found in ``template_dir``), the data it
    reads as ``section``, and the metric rows it shows (their interval kinds go into the header)."""

    template: str
    template_dir: Path
    data: Mapping[str, Any]
    metrics: Sequence[Mapping[str, Any]] = ()


def render_page(
    ctx: ReportContext,
    *,
    metrics: Iterable[Mapping[str, Any]] = (),
    suites: Sequence[Mapping[str, Any]] = (),
    own: Sequence[ReportSection] = (),
    sections: Sequence[Mapping[str, Any]] = (),
    examples: Sequence[Mapping[str, Any]] | None = None,
    cost: Sequence[Mapping[str, Any]] = (),
    consistency: Mapping[str, Any] | None = None,
    comparisons: Sequence[Mapping[str, Any]] = (),
    drilldown: Sequence[Mapping[str, Any]] = (),
) -> str:
    """Return the report as one self-contained HTML page (inline CSS, PNGs as data URIs, no links; a script only
    for the drill-down).

    In order: the header (project, KG snapshot, date, the intervals of ``metrics`` and of the ``own`` sections'
    rows, models, judges, counts); when ``suites`` holds headline rows
    (:func:`kgprobe.report.leaderboard.headline_rows`), a models x suites table of each suite's headline with its
    interval; the suites' own sections (``own``); one generic section per other suite (``sections``: ``{"name",
    "title", "paper", "metrics"}``, its overall metric rows shown as models x metrics); and optional ``examples``
    of unreadable answers (dicts with model, question, answer or text, label); and the generation's planned against
    actual tokens and cost (``cost``: :func:`kgprobe.report.cost.cost_rows`); and the cross-suite consistency of
    each model's verdicts on shared KG triples (``consistency``: :func:`consistency_section`); and the paired
    comparisons of models (``comparisons``: rows of :func:`kgprobe.scoring.compare.compare_models`); and the
    per-item drill-down (``drilldown``: rows of :func:`kgprobe.report.drilldown.drilldown_rows`, embedded
    compressed and paged by the page's one inline script). The same input gives the same string.
    """
    kinds: dict[str, int] = {}
    for row in [*metrics, *(r for s in own for r in s.metrics)]:
        kinds[_interval_of(row)] = kinds.get(_interval_of(row), 0) + 1
    models = _order([str(h["model"]) for h in suites]
                    + [str(r["model"]) for s in sections for r in s.get("metrics", ())], ctx.models)
    env = _templates(tuple(sorted({str(s.template_dir) for s in own})))
    return env.get_template("report.html").render(
        project=ctx.project,
        header=_header(ctx, kinds),
        suites=_suites_table(suites, models, ctx.confidence),
        own=[{"template": s.template, "data": s.data, "differ": differing_items(s.metrics)} for s in own],
        sections=[_suite_section(s, models, ctx.confidence) for s in sections],
        examples=_examples(examples),
        cost=[_cost_row(r) for r in cost],
        consistency=consistency,
        comparisons=comparison_section(comparisons, ctx.confidence),
        drilldown=_drilldown(drilldown),
    )


def differing_items(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The overall metrics of a suite's own section whose models stand on different items (a model's own ``limit``,
    failed requests): one entry per (task, judge, metric, perturbation) with ``n_shared`` (the items every model
    has) and each model's n, for the note under the section. Empty when every column compares like with like."""
    columns: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("breakdown"):
            continue
        key = (str(r["task"]), str(r.get("judge") or ""), str(r["metric"]), str(r.get("perturbation") or "none"))
        columns.setdefault(key, []).append(r)
    out = []
    for (task, judge, metric, level), members in sorted(columns.items()):
        fair = item_sets(members)
        if len(members) > 1 and fair["same_items"] is False:
            out.append({"column": f"{metric} ({task}{', ' + judge if judge else ''}"
                                  f"{', ' + level if level != 'none' else ''})",
                        "n_shared": fair["n_shared"],
                        "models": ", ".join(f"{r['model']} n={r['n']}" for r in sorted(members, key=lambda r: str(r["model"])))})
    return out


def _drilldown(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    if not rows:
        return None
    from kgprobe.report.drilldown import embed

    return {"payload": embed(rows), "count": len(rows)}


def comparison_section(rows: Sequence[Mapping[str, Any]], confidence: float = 0.95) -> list[dict[str, Any]]:
    """The report's paired comparisons: one block per (model A, model B), its overall rows (one per suite and
    task) and, folded, the breakdown rows; each row's cells as text."""
    def fmt(r: Mapping[str, Any]) -> dict[str, Any]:
        bd = ", ".join(f"{k} = {v}" for k, v in (r.get("breakdown") or {}).items())
        return {"suite": r["suite"], "task": r["task"], "breakdown": bd or "overall", "n": r["n"],
                "a": f"{r['a']:.2f}" if math.isfinite(r["a"]) else "–",
                "b": f"{r['b']:.2f}" if math.isfinite(r["b"]) else "–",
                "diff": (f"{r['diff']:+.2f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]"
                         + ("*" if r.get("interval") == "paired_score" else "")
                         if math.isfinite(r["diff"]) else "–"),
                "discordant": "–" if r.get("a_only") is None else f"{r['a_only']} / {r['b_only']}",
                "p": "–" if r.get("p_value") is None else f"{r['p_value']:.3g}",
                "left_out": f"{r['only_a']} / {r['only_b']}"}
    blocks: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        block = blocks.setdefault((r["model_a"], r["model_b"]), {"a": r["model_a"], "b": r["model_b"],
                                                                  "overall": [], "breakdowns": []})
        block["overall" if not r.get("breakdown") else "breakdowns"].append(fmt(r))
    return [{**b, "level": f"{confidence:.0%}"} for b in blocks.values()]


def consistency_section(rates: Sequence[Mapping[str, Any]], examples: Sequence[Mapping[str, Any]], *,
                        models: Sequence[str] = ()) -> dict[str, Any] | None:  # fmt: skip
    """The report's "one fact, asked several ways" section from :func:`kgprobe.report.consistency.consistency`'s
    rates and examples: a models x suite-pairs table (value, interval, n, shared triples), a plot of each model's
    overall rate, and the inconsistent triples. None when no triple is asked by two suites."""
    if not rates or not any(r["shared_triples"] for r in rates):
        return None
    import base64

    from kgprobe.report.plots import grouped_bars_ci

    order = _order([str(r["model"]) for r in rates], tuple(models))
    pairs = ["all", *sorted({str(r["pair"]) for r in rates} - {"all"})]
    by = {(str(r["model"]), str(r["pair"])): r for r in rates}

    def cell(r: Mapping[str, Any] | None) -> str:
        if r is None or not r["n"]:
            return "-" if r is None else f"- (n=0, {r['shared_triples']} shared)"
        return f"{r['value']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}] n={r['n']}"

    rows = [{"model": m, "cells": [cell(by.get((m, p))) for p in pairs]} for m in order]
    overall = {"consistency": {m: (r["value"], r["ci_low"], r["ci_high"], r["n"]) for m in order
                               if (r := by.get((m, "all"))) is not None and r["n"]}}
    png = grouped_bars_ci(overall, title="Same triple, several suites: verdicts that agree", ylabel="consistency rate",
                          xlabel="")
    shared = max((r["shared_triples"] for r in rates if r["pair"] == "all"), default=0)
    return {"pairs": [p.replace("|", " / ") for p in pairs], "rows": rows, "shared": shared,
            "plot": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
            "examples": [{"model": str(e["model"]), "triple": str(e["triple"]).replace("|", " · "),
                          "suites": [{k: "" if v is None else str(v) for k, v in s.items()} for s in e["suites"]]}
                         for e in examples[:30]]}


def _cost_row(r: Mapping[str, Any]) -> dict[str, str]:
    def n(x: Any) -> str:
        return "-" if x is None else f"{int(x):,}"

    def usd(x: Any) -> str:
        return "-" if x is None else f"${x:,.4f}"

    return {"model": str(r["model"]), "suite": str(r["suite"]), "setting": str(r["setting"]),
            "samples": f"{n(r['planned_samples'])} / {n(r['generated_samples'])}",
            "input": f"{n(r['input_tokens_est'])} / {n(r['input_tokens'])}",
            "output": f"{n(r['output_tokens_est'])} / {n(r['output_tokens'])}",
            "cost": f"{usd(r['cost_usd_est'])} / {usd(r['cost_usd'])}"}

