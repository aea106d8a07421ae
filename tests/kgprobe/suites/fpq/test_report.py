"""KG-FPQ's report section (kgprobe.suites.fpq.report) and the page it is laid out in (kgprobe.report.render): plots,
leaderboard tables, the self-contained HTML page and its atomic write."""

from __future__ import annotations

import math
import re
import tomllib
from fnmatch import fnmatch
from html.parser import HTMLParser
from importlib.resources import files
from pathlib import Path

import jinja2
import pytest

from kgprobe.report import plots
from kgprobe.suites.fpq.report import (
    HEADLINE_METRIC,
    KEY_METRICS,
    PLOT_KEYS,
    ReportContext,
    leaderboard_tables,
    render_html,
    report_plots,
    sql_name,
    write_report,
)

PNG = b"\x89PNG\r\n\x1a\n"
MODELS = ("oracle", "llama-3-8b", "qwen2.5<7b>")
JUDGES = ("judge-a", "judge.b")
FPQ_METHODS = ("NSC", "NDC", "NNSC", "NNDC", "NNSR", "NNDR")
# The yes/no FPQ accuracy of each model; the oracle is always right.
SKILL = {"oracle": 1.0, "llama-3-8b": 0.5, "qwen2.5<7b>": 0.25}


# ---- synthetic rows ------------------------------------------------------------------------------------------


def metric(model: str, name: str, value: float, n: int = 12, *, perturbation: str = "none", task: str = "discriminative",
           judge: str = "", domain: str | None = None, method: str | None = None, hop: int | None = None,
           interval: str | None = "wilson") -> dict:
    """One metric row of the spec, with a made-up interval around the value that, like a Wilson interval, has width
    at 0 and 1. ``interval=None`` leaves the column out, as in rows written before it existed."""
    lo, hi = max(0.0, value - 0.1), min(1.0, value + 0.1)
    if not n:
        lo = hi = math.nan
    row = {"model": model, "perturbation": perturbation, "suite": "fpq", "task": task, "judge": judge,
           "metric": name, "domain": domain, "method": method, "hop": hop, "n": n,
           "correct": round(value * n) if n else 0, "value": value if n else math.nan, "ci_low": lo, "ci_high": hi,
           "interval": interval, "item_ids": [f"{name}-{i}" for i in range(n)]}  # the same items for every model
    if interval is None:
        del row["interval"]
    return row


def closed_rows(*, hops: bool = True, generative: bool = True) -> list[dict]:
    rows = []
    for model in MODELS:
        skill = SKILL[model]
        rows += [metric(model, "accuracy", skill, 24), metric(model, "tpq_accuracy", 1.0 if model == "oracle" else 0.75),
                 metric(model, "fpq_accuracy", skill), metric(model, "fpq_accuracy_gated", skill, 10),
                 metric(model, "unknown_share", 0.0 if model == "oracle" else 0.125, 24)]
        for i, m in enumerate(FPQ_METHODS):
            rows += [metric(model, "fpq_accuracy", skill * (1 - 0.05 * i), 2, method=m),
                     metric(model, "fpq_accuracy_gated", skill * (1 - 0.04 * i), 2, method=m)]
            if hops and m in ("NSC", "NDC"):
                rows += [metric(model, "fpq_accuracy_gated", min(1.0, skill + 0.05 * h), 2, method=m, hop=h)
                         for h in (1, 2, 3)]
        if generative:
            for judge, shift in zip(JUDGES, (0.0, -0.25)):
                value = max(0.0, skill + shift)
                rows += [metric(model, name, value, 8, task="generative", judge=judge)
                         for name in ("accuracy", "tpq_accuracy", "fpq_accuracy", "fpq_accuracy_gated", "unknown_share")]
    return rows


def grounded_rows() -> list[dict]:
    rows = []
    for model in MODELS:
        skill = SKILL[model]
        rows.append(metric(model, "accuracy", skill, 20))
        rows.append(metric(model, "accuracy", skill, 6, task="generative", judge="judge-a"))
        for method in ("RS", "ED"):
            for level in (0.5, 1.0):
                rows.append(metric(model, "accuracy", skill * (1 - level / 2), 20, perturbation=f"{method}-{level}"))
    return rows


def similarity_rows() -> list[dict]:
    rows = []
    for q in range(3):
        rows.append({"query_id": f"q{q}", "perturbation": "none", "method": "none", "level": 0.0,
                     "ats": 0.9, "sc2d": 1.0, "sd2": 1.0})
        for method in ("RS", "ER"):
            for level in (0.5, 1.0):
                rows.append({"query_id": f"q{q}", "perturbation": f"{method}-{level}", "method": method,
                             "level": level, "ats": 0.9 - 0.3 * level, "sc2d": 1 - 0.4 * level,
                             "sd2": math.nan if q == 0 else 1 - 0.2 * level})
    return rows


def agreement_rows() -> list[dict]:
    return [{"model": m, "perturbation": "none", "judge_a": "judge-a", "judge_b": "judge.b", "n": 8,
             "agreement": 0.875, "kappa": 0.62 if m == "oracle" else 0.41} for m in MODELS]


def context() -> ReportContext:
    return ReportContext(project="fb15k <demo>", config_path="configs/demo.yaml", snapshot_ids=("snap-1a2b",),
                         created_at="2025-01-02T03:04:05+00:00", run_ids=("run-1",), bootstrap_resamples=500,
                         bootstrap_seed=7, judges=JUDGES, models=MODELS,
                         counts={"KG-FPQ items": 96, "closed-book responses": 864})


@pytest.fixture(scope="module")
def metrics() -> dict[str, list[dict]]:
    return {"closed": closed_rows(), "grounded": grounded_rows()}


@pytest.fixture(scope="module")
def full_plots(metrics: dict) -> dict[str, bytes]:
    return report_plots(metrics, similarity_rows(), agreement_rows(), models=MODELS, judges=JUDGES)


@pytest.fixture(scope="module")
def page(metrics: dict, full_plots: dict) -> str:
    examples = [{"model": "llama-3-8b", "question": "Is Paris the capital of <Spain>?", "text": "Well <maybe>",
                 "label": "unknown"}]
    return render_html(context(), metrics, agreement_rows(), full_plots, examples=examples)


# ---- plots ---------------------------------------------------------------------------------------------------


def test_report_plots_has_every_key_and_each_is_a_png(full_plots: dict) -> None:
    assert set(full_plots) == set(PLOT_KEYS)
    for key, png in full_plots.items():
        assert png.startswith(PNG), key
        assert len(png) > 5000, key  # an image with content, not an empty canvas


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("closed only, no hops, no judges", {"accuracy_by_method", "accuracy_by_method_ungated"}),
        ("grounded and similarity only", {"grounded_by_level", "kg_similarity"}),
        ("nothing", set()),
    ],
)
def test_missing_data_drops_the_plot(case: str, expected: set) -> None:
    if case.startswith("closed"):
        args = ({"closed": closed_rows(hops=False, generative=False)}, [], [])
    elif case.startswith("grounded"):
        args = ({"grounded": grounded_rows()}, similarity_rows(), agreement_rows())
    else:
        args = ([], [], [])
    out = report_plots(*args)
    assert set(out) == expected
    assert all(png.startswith(PNG) for png in out.values())


def test_all_nan_metrics_give_no_plot() -> None:
    rows = [metric("m", "fpq_accuracy_gated", 0.0, 0, method=m) for m in FPQ_METHODS]
    assert report_plots({"closed": rows}, [], []) == {}


@pytest.mark.parametrize(
    ("draw", "data"),
    [
        (plots.grouped_bars_ci, {}),
        (plots.grouped_bars_ci, {"NSC": {"m": (math.nan, math.nan, math.nan)}}),
        (plots.grouped_bars_ci, {"NSC": {"m": (0.5, 0.4, 0.6, 10), "k": (math.nan, 0, 1)}, "NDC": {"m": 0.3}}),
        (plots.lines_ci, {}),
        (plots.lines_ci, {"m": {0.0: (0.5, math.nan, math.nan), 0.5: math.nan, 1.0: (0.2, 0.1, 0.3, 5)}}),
        (plots.panel_lines, {}),
        (plots.panel_lines, {"RS": {"m": {0.1: math.nan}}, "ED": {"$m$": {0.1: (0.4, 0.3, 0.5)}}}),
    ],
)
def test_plot_functions_survive_empty_and_nan_input(draw, data) -> None:
    kwargs = {"title": "t", "ylabel": "accuracy", "xlabel": "x"}
    assert draw(data, **kwargs).startswith(PNG)


def test_plots_are_byte_stable() -> None:
    groups = {"NSC": {"a": (0.5, 0.4, 0.6, 10), "b": (0.7, 0.6, 0.8, 10)}}
    kwargs = {"title": "t", "ylabel": "accuracy", "xlabel": "method"}
    assert plots.grouped_bars_ci(groups, **kwargs) == plots.grouped_bars_ci(groups, **kwargs)


# ---- HTML ----------------------------------------------------------------------------------------------------


def test_html_names_every_model_escaped(page: str) -> None:
    for model in ("oracle", "llama-3-8b", "qwen2.5&lt;7b&gt;"):
        assert model in page
    assert "qwen2.5<7b>" not in page
    assert "fb15k &lt;demo&gt;" in page and "Well &lt;maybe&gt;" in page and "&lt;Spain&gt;" in page


@pytest.mark.parametrize(
    "fragment",
    [
        "<h2>Leaderboard</h2>",
        "1.00 [0.90, 1.00] n=12",   # oracle: yes/no FPQ accuracy
        "1.00 [0.90, 1.00] n=10",   # oracle: gated
        "0.50 [0.40, 0.60] n=8",    # llama-3-8b: open questions, judge-a
        "0.25 [0.15, 0.35] n=8",    # llama-3-8b: open questions, judge.b
        "0.25 [0.15, 0.35] n=20",   # qwen: grounded, clean subgraph
        "FPQ accuracy, open questions (judge judge.b)",
        "0.62",                     # oracle's kappa
        "Cohen",
        "2025-01-02T03:04:05+00:00",
        "snap-1a2b",
        "fpq_scores_metrics",
        "fpq_responses",
        "unnest(item_ids)",
        "data:image/png;base64,iVBORw0KGgo",
    ],
)
def test_html_contains(page: str, fragment: str) -> None:
    assert fragment in page


def test_html_is_self_contained_and_stable(page: str, metrics: dict, full_plots: dict) -> None:
    assert page.count('<img src="data:image/png;base64,') == len(PLOT_KEYS)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, flags=re.I)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower() and "<link" not in page.lower()
    examples = [{"model": "llama-3-8b", "question": "Is Paris the capital of <Spain>?", "text": "Well <maybe>",
                 "label": "unknown"}]
    assert render_html(context(), metrics, agreement_rows(), full_plots, examples=examples) == page


def test_html_without_plots_or_grounded_rows() -> None:
    page = render_html(context(), {"closed": closed_rows(generative=False)}, [], {})
    assert "<h2>Leaderboard</h2>" in page and "data:image" not in page and "Judge agreement" not in page
    assert "Grounded" not in page


SCRIPT = "<script>alert(1)</script>"
BREAKOUT = '"><img src=x onerror=alert(1)>'  # leaves an attribute value, then opens a tag
# How the autoescaped page spells them (Jinja2 writes a double quote as &#34;).
SCRIPT_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
BREAKOUT_ESCAPED = "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;"


def _hostile_page(where: str) -> str:
    """A report in which ``where`` (an answer, a model name or a judge name) carries both payloads; no plots, so
    the page has no <img> of its own."""
    bad = f"{SCRIPT} {BREAKOUT}"
    model = bad if where == "model" else "m"
    judge = bad if where == "judge" else "judge-a"
    rows = [metric(model, "fpq_accuracy_gated", 0.5, 10), metric(model, "fpq_accuracy", 0.5),
            metric(model, "fpq_accuracy", 0.25, 8, task="generative", judge=judge)]
    agreement = [{"model": model, "perturbation": "none", "judge_a": judge, "judge_b": "judge.b", "n": 8,
                  "agreement": 0.75, "kappa": 0.5}]
    examples = [{"model": model, "question": "Is Paris the capital of Spain?",
                 "answer": bad if where == "answer" else "Perhaps.", "label": "unknown"}]
    ctx = ReportContext(project="p", config_path="c.yaml", snapshot_ids=("s",), created_at="2025-01-02",
                        judges=(judge, "judge.b"), models=(model,))
    return render_html(ctx, {"closed": rows}, agreement, {}, examples=examples)


# The tags of a report without plots.
_OWN_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "dl", "dt", "dd", "h2", "p", "ul", "li", "b", "h3",
             "div", "table", "thead", "tbody", "tr", "th", "td", "code", "pre"}


class _Text(HTMLParser):
    """What a browser shows (character references decoded): the text, node by node, and the hover texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[str] = []
        self.titles: list[str] = []
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}
        self.titles += [value or "" for name, value in attrs if name == "title"]

    def handle_data(self, data: str) -> None:
        self.cells.append(data)


@pytest.mark.parametrize(
    ("where", "shown"),
    [
        ("answer", 1),  # the unreadable-answer examples
        ("model", 5),   # header, at a glance, closed-book row, agreement row, examples row (and hover texts)
        ("judge", 3),   # header, the open questions' column, the agreement row's judge pair (and a hover text)
    ],
)
def test_text_from_models_and_data_is_escaped(where: str, shown: int) -> None:
    page = _hostile_page(where)
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert SCRIPT_ESCAPED in page and BREAKOUT_ESCAPED in page
    parser = _Text()
    parser.feed(page)
    # every tag and attribute a browser sees is one the report writes itself: nothing broke out of a text or a title
    assert parser.tags == _OWN_TAGS
    assert parser.attributes == {"lang", "charset", "class", "title", "style"}
    # escaped, not dropped: the browser shows the payload as text, where the section puts it
    texts = [t for t in parser.cells if SCRIPT in t]
    assert len(texts) == shown
    assert all(BREAKOUT in t for t in texts)
    if where == "answer":
        assert texts == [f"{SCRIPT} {BREAKOUT}"]  # the answer cell, and nowhere else
        assert not any(SCRIPT in t for t in parser.titles)
    if where == "model":
        assert f"{SCRIPT} {BREAKOUT}" in texts  # the closed-book row's name cell, among others
        # each of the model's three metric cells names it in its hover text, which stays one attribute
        assert sum(f"model = '{SCRIPT} {BREAKOUT}'" in t for t in parser.titles) == 3
    if where == "judge":
        assert f"FPQ accuracy, open questions (judge {SCRIPT} {BREAKOUT})" in texts
        assert f"{SCRIPT} {BREAKOUT} / judge.b" in texts
        assert sum(f"judge = '{SCRIPT} {BREAKOUT}'" in t for t in parser.titles) == 1


def test_config_path_question_and_project_are_escaped() -> None:
    ctx = ReportContext(project=f"<b>{SCRIPT}", config_path=f"configs/{BREAKOUT}.yaml", snapshot_ids=(SCRIPT,),
                        created_at="2025-01-02", counts={BREAKOUT: 3})
    examples = [{"model": "m", "question": f"Is {SCRIPT} the capital of Spain?", "answer": "?", "label": BREAKOUT}]
    page = render_html(ctx, {"closed": [metric("m", "fpq_accuracy_gated", 0.5, 10)]}, [], {}, examples=examples)
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert page.count("<b>") == 1 and "<li><b>m</b>" in page  # the only <b> is the report's own, at a glance
    assert f"<title>&lt;b&gt;{SCRIPT_ESCAPED}: hallucination report</title>" in page
    assert f"<dt>config</dt><dd>configs/{BREAKOUT_ESCAPED}.yaml</dd>" in page
    assert f"<dt>{BREAKOUT_ESCAPED}</dt><dd>3</dd>" in page
    assert f"<td>Is {SCRIPT_ESCAPED} the capital of Spain?</td>" in page


def test_templates_ship_with_the_package() -> None:
    folder = files("kgprobe.report") / "templates"
    assert (folder / "report.html").is_file() and (folder / "style.css").is_file()
    # every template is one that pyproject's package-data puts into the wheel; a *.j2 or *.sql here would not ship
    pyproject = tomllib.loads((Path(__file__).parents[4] / "pyproject.toml").read_text(encoding="utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["kgprobe"]
    shipped = [g.removeprefix("report/templates/") for g in globs if g.startswith("report/templates/")]
    names = sorted(p.name for p in folder.iterdir() if p.is_file())
    assert "report.html" in names
    assert [n for n in names if not any(fnmatch(n, g) for g in shipped)] == []
    # KG-FPQ's section templates live in its package and ship too
    fpq = files("kgprobe.suites.fpq") / "templates" / "fpq"
    fpq_names = sorted(f"suites/fpq/templates/fpq/{p.name}" for p in fpq.iterdir() if p.is_file())
    assert "suites/fpq/templates/fpq/section.html" in fpq_names
    assert [n for n in fpq_names if not any(fnmatch(n, g) for g in globs)] == []


def test_a_missing_template_value_is_an_error() -> None:
    from kgprobe.report.render import _templates

    # StrictUndefined: a section whose data went missing fails the render instead of printing an empty string
    with pytest.raises(jinja2.UndefinedError, match="project"):
        _templates().get_template("report.html").render()
    assert _templates().autoescape is not False


def test_css_is_inline_and_unescaped(page: str) -> None:
    style = re.search(r"<style>\n(.*?)</style>", page, re.DOTALL).group(1)
    assert style == (files("kgprobe.report") / "templates" / "style.css").read_text(encoding="utf-8")
    assert 'font-family:system-ui,-apple-system,"Segoe UI"' in style  # a quote in CSS stays a quote


# ---- leaderboard tables --------------------------------------------------------------------------------------


def test_leaderboard_closed_row_values(metrics: dict) -> None:
    tables = leaderboard_tables(metrics, models=MODELS, judges=JUDGES)
    assert [r["model"] for r in tables["fpq_closed"]] == list(MODELS)
    oracle, llama = tables["fpq_closed"][0], tables["fpq_closed"][1]
    assert [oracle[f"fpq_accuracy{s}"] for s in ("", "_lo", "_hi", "_n", "_interval")] == [1.0, 0.9, 1.0, 12,
                                                                                            "wilson"]
    assert (llama["fpq_accuracy"], llama["fpq_accuracy_lo"], llama["fpq_accuracy_hi"], llama["fpq_accuracy_n"]) == (
        0.5, 0.4, 0.6, 12)
    assert llama["fpq_accuracy_gated_n"] == 10 and llama["unknown_share"] == 0.125
    assert llama["gen_fpq_accuracy__judge_a"] == 0.5 and llama["gen_fpq_accuracy__judge_a_n"] == 8
    assert llama["gen_fpq_accuracy__judge_b"] == 0.25
    assert llama["gen_fpq_accuracy__judge_b_lo"] == pytest.approx(0.15)


def test_leaderboard_grounded_rows(metrics: dict) -> None:
    rows = leaderboard_tables(metrics, models=MODELS)["fpq_grounded"]
    assert [(r["perturbation"], r["method"], r["level"]) for r in rows if r["model"] == "oracle"] == [
        ("none", "none", 0.0), ("RS-0.5", "RS", 0.5), ("RS-1.0", "RS", 1.0), ("ED-0.5", "ED", 0.5),
        ("ED-1.0", "ED", 1.0)]
    qwen_rs = next(r for r in rows if r["model"] == "qwen2.5<7b>" and r["perturbation"] == "RS-1.0")
    assert (qwen_rs["accuracy"], qwen_rs["accuracy_n"]) == (0.125, 20)
    clean = next(r for r in rows if r["model"] == "qwen2.5<7b>" and r["perturbation"] == "none")
    assert clean["gen_accuracy__judge_a"] == 0.25 and clean["gen_accuracy__judge_a_n"] == 6
    # A metric without a row is None, not a made-up value.
    assert qwen_rs["gen_accuracy__judge_a"] is None and qwen_rs["tpq_accuracy_n"] is None


def test_leaderboard_columns_are_sql_identifiers_and_uniform(metrics: dict) -> None:
    tables = leaderboard_tables(metrics)
    for name, rows in tables.items():
        assert rows, name
        columns = list(rows[0])
        assert all(list(r) == columns for r in rows)
        assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c) for c in columns), columns
    assert {f"{m}{s}" for m in KEY_METRICS for s in ("", "_lo", "_hi", "_n")} <= set(tables["fpq_closed"][0])
    assert leaderboard_tables([]) == {"fpq_closed": [], "fpq_grounded": []}


@pytest.mark.parametrize(("name", "expected"), [("gpt-4o.mini", "gpt_4o_mini"), ("4o", "_4o"), ("a_b1", "a_b1")])
def test_sql_name(name: str, expected: str) -> None:
    assert sql_name(name) == expected


def test_flat_rows_need_a_setting_when_closed_and_grounded_share_none() -> None:
    closed, grounded = closed_rows(generative=False), grounded_rows()
    with pytest.raises(ValueError, match="setting"):
        leaderboard_tables(closed + grounded)
    tagged = [{**r, "setting": "closed"} for r in closed] + [{**r, "setting": "grounded"} for r in grounded]
    assert leaderboard_tables(tagged) == leaderboard_tables({"scores_closed_metrics": closed,
                                                             "scores_grounded_metrics": grounded})


# ---- interval kinds and the headline ---------------------------------------------------------------------------


def _with_interval(rows: list[dict], interval: str | None) -> list[dict]:
    out = [{**r, "interval": interval} for r in rows]
    if interval is None:  # rows written before metric rows had the column
        for r in out:
            del r["interval"]
    return out


_BOOT_HEADER = "95% percentile bootstrap over items, 500 resamples, seed 7"


def _header_intervals(page: str) -> str:
    return re.search(r"<dt>intervals</dt><dd>([^<]*)</dd>", page).group(1)


@pytest.mark.parametrize(
    ("interval", "header", "caption"),
    [
        ("wilson", "95% Wilson score intervals (every metric is a share of items)", "95% Wilson score interval"),
        ("bootstrap", _BOOT_HEADER, "95% percentile bootstrap interval"),
        (None, _BOOT_HEADER, "95% percentile bootstrap interval"),  # rows from before the column: bootstrap
    ],
)
def test_header_notes_and_captions_name_the_rows_interval_kind(full_plots: dict, interval: str | None, header: str,
                                                               caption: str) -> None:
    metrics = {"closed": _with_interval(closed_rows(), interval), "grounded": _with_interval(grounded_rows(), interval)}
    page = render_html(context(), metrics, agreement_rows(), full_plots)
    assert _header_intervals(page) == header
    assert f"Each cell: value [{caption}] n=items." in page  # closed book and grounded notes
    assert page.count(f"Each cell: value [{caption}] n=items.") == 2
    assert f"Brackets: {caption}." in page  # at a glance
    for plot_caption in (f"Error bars: {caption}; n: questions", f"bands: {caption}.", f"Bands: {caption}.",
                         f"Error bars: {caption}. Under each model"):
        assert plot_caption in page
    assert f"10 of 10 items; {caption}; fpq_scores_metrics WHERE" in page  # a cell's hover text
    described = page[:page.index("<h2>How to trace a number</h2>")]  # that section names every kind there is
    other = {"wilson": "bootstrap", "bootstrap": "Wilson", None: "Wilson"}[interval]
    assert other not in described
    assert ("resamples" in page) == (interval != "wilson")  # Wilson needs no resampling to report


def test_mixed_interval_kinds_are_counted_and_named_per_cell() -> None:
    closed = closed_rows(generative=False)
    for r in closed:
        if r["model"] == "oracle":
            r["interval"] = "bootstrap"
    page = render_html(context(), {"closed": closed}, [], {})
    n_boot = sum(r["model"] == "oracle" for r in closed)
    assert _header_intervals(page) == (f"95% Wilson score intervals ({len(closed) - n_boot} metric rows); "
                                       f"{_BOOT_HEADER} ({n_boot} metric rows)")
    assert "Each cell: value [95% interval (Wilson score or percentile bootstrap; each cell names its own)]" in page
    assert "1.00 [0.90, 1.00] n=10 (bootstrap)</td>" in page  # oracle, headline
    assert "0.50 [0.40, 0.60] n=10 (wilson)</td>" in page  # llama-3-8b, headline


def test_the_leaderboard_leads_with_the_gated_headline(metrics: dict) -> None:
    assert HEADLINE_METRIC == KEY_METRICS[0] == "fpq_accuracy_gated"
    tables = leaderboard_tables(metrics, models=MODELS, judges=JUDGES)
    closed = list(tables["fpq_closed"][0])
    assert closed[:6] == ["model", "fpq_accuracy_gated", "fpq_accuracy_gated_lo", "fpq_accuracy_gated_hi",
                          "fpq_accuracy_gated_n", "fpq_accuracy_gated_interval"]
    assert [c for c in closed if c in KEY_METRICS] == list(KEY_METRICS)
    assert KEY_METRICS[:3] == ("fpq_accuracy_gated", "fpq_accuracy", "tpq_accuracy")
    assert [c for c in closed if c.startswith("gen_") and c.endswith("judge_a")][0] == "gen_fpq_accuracy_gated__judge_a"
    grounded = list(tables["fpq_grounded"][0])
    assert grounded[:5] == ["model", "perturbation", "method", "level", "fpq_accuracy_gated"]
    page = render_html(context(), metrics, [], {})
    closed_head = re.search(r"<h3>Closed book \(KG-FPQ\)</h3>.*?<thead><tr>(.*?)</tr></thead>", page, re.S).group(1)
    assert re.findall(r"<th>([^<]*)</th>", closed_head)[:3] == ["model", "FPQ accuracy, gated (headline)",
                                                                 "FPQ accuracy (yes/no)"]


def test_at_a_glance_reports_the_gated_headline_not_the_ungated_accuracy() -> None:
    rows = [metric("m", "fpq_accuracy_gated", 0.8, 10), metric("m", "fpq_accuracy", 0.3, 20),
            metric("m", "accuracy", 0.4, 30)]
    page = render_html(context(), {"closed": rows}, [], {})
    glance = page[page.index("<h2>At a glance</h2>"):page.index("<h2>Leaderboard</h2>")]
    # does not reject in 1 - 0.8 = 20% [1 - 0.9, 1 - 0.7] of the 10 gated FPQs
    assert "does not reject the false premise in 20% [10%, 30%] of the" in glance and "(n=10)" in glance
    assert "70%" not in glance and "n=20" not in glance


def test_write_report_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "reports" / "nested" / "fpq.html"
    text = "<!DOCTYPE html>\n" + "x" * 200_000 + "é\n"
    assert write_report(target, text) == target
    assert target.read_text(encoding="utf-8") == text

    import kgprobe.report.render as report

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(report.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_report(target, "half")
    assert target.read_text(encoding="utf-8") == text  # the old report survives a failed write
    assert sorted(p.name for p in target.parent.iterdir()) == ["fpq.html"]  # no temporary file left
