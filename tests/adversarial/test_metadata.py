"""Data that tries to act when a person looks at it: Markdown images and links in Dagster metadata (an image is
fetched from its host as soon as the UI shows it), and bidirectional controls that make a report cell read
differently from what it holds. Markdown is checked by rendering it, with two renderers."""

from __future__ import annotations

import re

import pytest

from assets._metadata import image_md, markdown_table
from kgprobe.report.render import ReportContext, render_page
from kgprobe.report.safe_text import BIDI_CONTROLS, safe_markdown
from kgprobe.scoring.quality import ExpectationOutcome, outcomes_markdown

HOSTILE = [
    "![pixel](http://tracker.example/p.png)",
    "![pixel](<https://tracker.example/p.png> \"title\")",
    "[click](https://phish.example/login)",
    "[ref][1]",
    "see https://bare.example/x and www.bare.example",
    "<img src=\"http://tracker.example/i.png\">",
    "<https://auto.example/>",
    "`code` *em* __strong__ ~~gone~~",
    "exe.\u202etxt",
]


def _renderers():
    from markdown_it import MarkdownIt

    out = [lambda md: MarkdownIt("commonmark").enable("table").render(md)]
    mistune = pytest.importorskip("mistune")
    out.append(mistune.create_markdown(plugins=["table", "url", "strikethrough"]))  # GFM's bare-URL links too
    return out


def _outside(html: str) -> list[str]:
    """Every image source and link target of rendered HTML."""
    return re.findall(r"<img[^>]*>|<a\s[^>]*href=[^>]*>", html)


def test_a_metadata_table_renders_no_image_or_link() -> None:
    md = markdown_table([{"label": text, "n": 1} for text in HOSTILE])
    for render in _renderers():
        html = render(md)
        assert "<table>" in html and _outside(html) == []
        assert "<code>" not in html
    assert "\u202e" not in md and "[U+202E]" in md.replace("\\", "")


def test_column_names_are_cells_too() -> None:
    md = markdown_table([{"![x](http://tracker.example/h.png)": 1}])
    for render in _renderers():
        assert _outside(render(md)) == []


def test_quality_outcome_tables_render_no_image_or_link() -> None:
    outcomes = [ExpectationOutcome(table="t", expectation="expect_column_values_to_not_be_null", column="text",
                                   success=False, unexpected_count=1, examples=[{"text": text}]) for text in HOSTILE]
    md = outcomes_markdown(outcomes)
    for render in _renderers():
        assert _outside(render(md)) == []
    assert "\u202e" not in md


@pytest.mark.parametrize("raw,kept", [
    ("![a](http://t.example/p.png) and ![b](//t.example/p.png)", "a and b"),
    ("[c](https://p.example/) [d](#local)", "c [d](#local)"),
    ("![x][r]\n\n[r]: http://t.example/p.png", None),
    ("<img src=x onerror=1> <a href='http://p.example'>", None),
])
def test_safe_markdown_strips_what_points_elsewhere(raw: str, kept: str | None) -> None:
    md = safe_markdown(raw)
    for render in _renderers():
        html = render(md)
        assert not [tag for tag in _outside(html) if "#local" not in tag]
    if kept is not None:
        assert md == kept


def test_embedded_plots_survive() -> None:
    png = b"\x89PNG\r\n\x1a\nfake"
    md = image_md(png, alt="plot").value
    assert safe_markdown(md) == md
    html = _renderers()[0](md)
    assert '<img src="data:image/png;base64,' in html


@pytest.mark.parametrize("control", list(BIDI_CONTROLS))
def test_bidi_controls_are_shown_not_obeyed_in_the_report(control: str) -> None:
    ctx = ReportContext(project=f"p{control}x", config_path="c.yaml", snapshot_ids=("s",), created_at="2026-01-01")
    examples = [{"model": f"m{control}", "question": f"Is exe.{control}txt safe?", "answer": f"yes{control}",
                 "label": "yes"}]
    html = render_page(ctx, examples=examples)
    assert not any(c in html for c in BIDI_CONTROLS)
    assert f"exe.[U+{ord(control):04X}]txt" in html
