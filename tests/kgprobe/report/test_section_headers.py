"""Every suite's report section (and the headline table) names each column after the numbers beneath it.

Synthetic metric rows carry a code in ``n``: n = 1000 + 100 × model index + metric index, so a rendered cell
``... n=1102`` is model 1's row of metric 2. A column (or row) header that names a metric or a model must name the
cell's own; a table that prints truthfulness under "correctness" fails here.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from itertools import product
from typing import Any

import pytest

from kgprobe.report.render import ReportContext, render_page
from kgprobe.suites import SUITES

MODELS = ("alpha-model", "beta-model")

#: Per suite: tasks, metrics, breakdown keys (two values each) of the synthetic rows, and the short labels its
#: tables use for metrics (a header is also matched by the metric's own name or a prefix of it, "correct.").
PLAN: dict[str, dict[str, Any]] = {
    "fpq": {"tasks": ("discriminative", "generative"),
            "metrics": ("fpq_accuracy_gated", "fpq_accuracy", "tpq_accuracy", "accuracy", "unknown_share"),
            "breakdowns": ("domain", "method", "hop"),
            "labels": {"fpq accuracy, gated (headline)": "fpq_accuracy_gated", "fpq accuracy, gated": "fpq_accuracy_gated",
                       "fpq accuracy": "fpq_accuracy", "tpq accuracy": "tpq_accuracy", "unknown": "unknown_share"}},
    "okgqa": {"tasks": ("answer",),
              "metrics": ("fact_precision", "not_in_kg_share", "geval_context_relevance", "geval_comprehensiveness",
                          "geval_correctness", "geval_empowerment"),
              "breakdowns": ("type",), "labels": {}},
    "grapheval": {"tasks": ("statement",),
                  "metrics": ("correctness", "truthfulness", "informativeness", "unknown_share", "accuracy"),
                  "breakdowns": ("relation", "head_type", "tail_type", "degree_bucket"), "labels": {}},
    "erbench": {"tasks": ("binary", "multiple_choice"),
                "metrics": ("answer_accuracy", "rationale_accuracy", "answer_rationale_accuracy",
                            "hallucination_rate"),
                "breakdowns": (), "labels": {"a": "answer_accuracy", "r": "rationale_accuracy",
                                             "ar": "answer_rationale_accuracy", "h": "hallucination_rate"}},
    "drowzee": {"tasks": ("rule", "temporal"),
                "metrics": ("hallucination_rate", "co_share", "ek_share", "ei_share", "ol_share", "refusal_share",
                            "answer_accuracy", "right_answer_wrong_reasoning"),
                "breakdowns": ("rule", "operator"),
                "labels": {"co": "co_share", "ek": "ek_share", "ei": "ei_share", "ol": "ol_share",
                           "refusals": "refusal_share", "right answer, wrong reasoning": "right_answer_wrong_reasoning"}},
}


def _rows(suite: str) -> list[dict[str, Any]]:
    plan = PLAN[suite]
    cells: list[dict[str, str]] = [{}] + [{k: f"{k}-{v}"} for k in plan["breakdowns"] for v in ("x", "y")]
    if suite == "fpq":
        cells = [{}, {"domain": "art"}, {"method": "Neg"}, {"method": "Neg", "hop": "1"}]
    if suite == "erbench":
        cells = [{"dataset": "movie", "qtype": "yn", "entities": e} for e in ("known", "all")]
    out = []
    for (mi, model), (ki, metric), task, cell in product(enumerate(MODELS), enumerate(plan["metrics"]),
                                                         plan["tasks"], cells):
        value = 0.05 + 0.1 * ki
        out.append({"model": model, "perturbation": "none", "suite": suite, "task": task, "judge": "",
                    "metric": metric, "breakdown": dict(cell), "higher_is_better": True,
                    "n": 1000 + 100 * mi + ki, "value": value, "ci_low": value - 0.04, "ci_high": value + 0.04,
                    "interval": "wilson", "item_ids": [], "setting": "closed"})
    return out


class _Tables(HTMLParser):
    """Each <table> as (header rows, body rows), each row a list of (text, is_header, colspan)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, list]] = []
        self._cell: list[Any] | None = None
        self._part = "body"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append({"head": [], "body": []})
        elif not self.tables:
            return
        elif tag in ("thead", "tbody"):
            self._part = "head" if tag == "thead" else "body"
        elif tag == "tr":
            self.tables[-1][self._part].append([])
        elif tag in ("td", "th"):
            self._cell = ["", tag == "th", int(dict(attrs).get("colspan") or 1)]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1][self._part]:
            self.tables[-1][self._part][-1].append((" ".join(self._cell[0].split()), self._cell[1], self._cell[2]))
            self._cell = None
        elif tag == "table":
            self._part = "body"

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[0] += data


def _norm(text: str) -> str:
    return text.strip().lower().replace("_", " ")


def _names_metric(text: str, metrics: tuple[str, ...], labels: dict[str, str]) -> str | None:
    t = _norm(text)
    if not t:
        return None
    if t in labels:
        return labels[t]
    for m in metrics:
        if t == _norm(m):
            return m
    stem = t.rstrip(".")
    prefixed = [m for m in metrics if t.endswith(".") and len(stem) >= 4 and _norm(m).startswith(stem)]
    return prefixed[0] if len(prefixed) == 1 else None


def _check(html: str, metrics: tuple[str, ...], labels: dict[str, str]) -> tuple[int, int, list[str]]:
    parser = _Tables()
    parser.feed(html)
    checked_metric = checked_model = 0
    errors: list[str] = []
    for table in parser.tables:
        rows = table["head"] + table["body"]
        head = table["head"] or [r for r in rows[:1] if r and all(c[1] for c in r)]
        columns: dict[int, list[str]] = {}
        for hrow in head:
            col = 0
            for text, _, span in hrow:
                for j in range(span):
                    columns.setdefault(col + j, []).append(text)
                col += span
        for row in rows:
            if row in head:
                continue
            col = 0
            row_labels: list[str] = []
            for text, _, span in row:
                code = re.search(r"n=(\d{4})\b", text)
                if code is None:
                    row_labels.append(text)
                    col += span
                    continue
                mi, ki = divmod(int(code.group(1)) - 1000, 100)
                model, metric = MODELS[mi], metrics[ki]
                for header in columns.get(col, []) + row_labels:
                    named = _names_metric(header, metrics, labels)
                    if named is not None:
                        checked_metric += 1
                        if named != metric:
                            errors.append(f"{header!r} over a cell of {metric} ({text})")
                    if header in MODELS:
                        checked_model += 1
                        if header != model:
                            errors.append(f"{header!r} over a cell of {model} ({text})")
                col += span
    return checked_metric, checked_model, errors


@pytest.mark.parametrize("suite", sorted(PLAN))
def test_every_header_names_the_numbers_beneath_it(suite: str) -> None:
    rows = _rows(suite)
    ctx = ReportContext(project="t", config_path="x.yaml", snapshot_ids=("snap",), created_at="2026-01-01",
                        models=MODELS)
    section, _plots = SUITES[suite].report(ctx, rows)
    assert section is not None
    html = render_page(ctx, metrics=rows, own=[section])
    checked_metric, checked_model, errors = _check(html, PLAN[suite]["metrics"], PLAN[suite]["labels"])
    assert not errors, errors[:5]
    assert checked_metric > 0 and checked_model > 0, (suite, checked_metric, checked_model)


def test_the_check_catches_swapped_headers() -> None:
    metrics = ("correctness", "truthfulness")
    html = ("<table><thead><tr><th>m</th><th>correct.</th><th>truthful.</th></tr></thead><tbody>"
            "<tr><td>alpha-model</td><td>0.1 n=1001</td><td>0.2 n=1000</td></tr></tbody></table>")
    _m, _n, errors = _check(html, metrics, {})
    assert len(errors) == 2
    ok = html.replace("n=1001", "n=X").replace("n=1000", "n=1001").replace("n=X", "n=1000")
    assert _check(ok, metrics, {})[2] == [] and _check(ok, metrics, {})[0] == 2


class _Cells(HTMLParser):
    """Every <td> of a page as (text, title)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[str, str | None]] = []
        self._cell: list[Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td":
            self._cell = ["", dict(attrs).get("title")]

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.cells.append((" ".join(self._cell[0].split()), self._cell[1]))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[0] += data


@pytest.mark.parametrize("suite", sorted(PLAN))
def test_cells_whose_models_answered_different_items_are_marked(suite: str) -> None:
    """Every model answers items i0..i3 of every column, except that beta-model answered only i0 of metric 1's
    columns: exactly the cells of metric 1 (both models') carry a † whose hover gives the cell's n and the 1 item
    shared; no other cell is marked."""
    rows = _rows(suite)
    for r in rows:
        short = r["model"] == MODELS[1] and r["metric"] == PLAN[suite]["metrics"][1]
        r["item_ids"] = ["i0"] if short else ["i0", "i1", "i2", "i3"]
    ctx = ReportContext(project="t", config_path="x.yaml", snapshot_ids=("snap",), created_at="2026-01-01",
                        models=MODELS)
    section, _plots = SUITES[suite].report(ctx, rows)
    parser = _Cells()
    parser.feed(render_page(ctx, metrics=rows, own=[section]))
    marked = unmarked = 0
    for text, title in parser.cells:
        code = re.search(r"n=(\d{4})\b", text)
        if code is None:
            continue
        mi, ki = divmod(int(code.group(1)) - 1000, 100)
        if ki == 1:
            marked += 1
            assert text.endswith("†"), text
            assert title is not None and f"n={code.group(1)} here, 1 items shared by all" in title, title
            other = 1000 + 100 * (1 - mi) + 1
            assert f"{MODELS[1 - mi]} n={other}" in title, title
        else:
            unmarked += 1
            assert "†" not in text and "items shared by all" not in (title or ""), (text, title)
    assert marked >= 2 and unmarked >= 2, (suite, marked, unmarked)
