"""Hostile text in the data (quotes, backslashes, ``;``, ``{placeholders}``, Jinja syntax, ``<script>``, line breaks)
is loaded, questioned, stored and shown intact and escaped, on every path it takes: SQL, prompt templates, the HTML
report and the Dagster metadata's Markdown."""

from __future__ import annotations

import duckdb
import pytest

from assets._metadata import markdown_table
from kgprobe import KGSource, load_kg
from kgprobe.generation.prompts import render
from kgprobe.report.render import ReportContext, render_page
from kgprobe.suites.fpq.edits import _fill

HOSTILE = [
    "O'Brien \"the\" \\ Elder",
    "Robert'); DROP TABLE triples; --",
    "{subject} and {object} {{ 7*7 }}",
    "{% for x in range(3) %}loop{% endfor %}",
    "<script>alert('x')</script>",
]


@pytest.fixture
def kg(tmp_path):
    triples = tmp_path / "triples.tsv"
    labels = tmp_path / "labels.tsv"
    triples.write_text("".join(f"e{i}\tknows\te{i + 1}\n" for i in range(len(HOSTILE))), encoding="utf-8")
    labels.write_text("".join(f"e{i}\t{text}\n" for i, text in enumerate(HOSTILE)), encoding="utf-8")
    con = duckdb.connect()
    report = load_kg(con, KGSource(triples=[triples], entity_labels=labels, name="hostile"))
    return con, report


def test_sql_keeps_every_label_intact(kg) -> None:
    con, report = kg
    assert report.rejected == 0
    stored = dict(con.execute("SELECT key, label FROM hostile.entities").fetchall())
    assert [stored[f"e{i}"] for i in range(len(HOSTILE))] == HOSTILE
    assert con.execute("SELECT count(*) FROM hostile.triples").fetchone()[0] == len(HOSTILE)  # nothing was dropped


@pytest.mark.parametrize("label", HOSTILE)
def test_templates_put_labels_in_as_text(label: str) -> None:
    question = _fill("Did {subject} meet {object}?", label, "Ada")
    assert question == f"Did {label} meet Ada?"
    assert render("fpq-yn-v1", question=question).startswith(f"Question: Did {label} meet Ada?")


def test_the_report_escapes_data_and_never_runs_it() -> None:
    ctx = ReportContext(project="<b>p</b>", config_path="c.yaml", snapshot_ids=("s",), created_at="2026-01-01")
    examples = [{"model": "m", "question": text, "answer": text + "\nsecond line", "label": "unknown"}
                for text in HOSTILE]
    html = render_page(ctx, examples=examples)
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    assert "{{ 7*7 }}" in html and ">49<" not in html  # Jinja syntax in data is text, not a template
    assert "{% for x in range(3) %}loop{% endfor %}" in html and "looplooploop" not in html
    assert "&lt;b&gt;p&lt;/b&gt;" in html


def test_markdown_metadata_cells_cannot_break_the_table_or_render_html() -> None:
    md = markdown_table([{"label": text + "\nnext | cell", "n": 1} for text in HOSTILE])
    lines = md.splitlines()
    assert len(lines) == 2 + len(HOSTILE)  # one line per row: no line break survives
    assert all(line.count(" | ") == 1 and "\\| cell" in line for line in lines[2:])  # one separator; the pipe escaped
    assert "<script>" not in md and "&lt;script&gt;" in md
