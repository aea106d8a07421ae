"""Bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and kin) and terminal escapes from data never reach a person
raw: not in the report's drill-down payload (which the page's script shows), and not in the console tables that
``kgprobe run``, ``plan`` and ``compare`` print."""

from __future__ import annotations

import base64
import gzip
import json

from kgprobe.report.drilldown import drilldown_rows, embed
from kgprobe.report.safe_text import BIDI_CONTROLS
from kgprobe.report.summary import format_headlines

HOSTILE = "txt\u202eexe.\u2066x\u2069 \x1b[2J\x1b]0;owned\x07"
RAW = set(BIDI_CONTROLS) | {"\x1b", "\x07"}


def _raw(text: str) -> set[str]:
    return {c for c in text if c in RAW}


def test_the_drilldown_payload_shows_bidi_controls_as_text() -> None:
    items = [{"item_id": "i1", "question": f"Was {HOSTILE} born?", "expected": "yes", "breakdown": {"rel": HOSTILE},
              "evidence": json.dumps({"label": HOSTILE}, ensure_ascii=False)}]
    votes = [{"model": "m", "item_id": "i1", "judge": "", "task": "t", "vote": "yes", "correct": True}]
    samples = [{"model": "m", "item_id": "i1", "judge": "", "sample_index": 0, "text": HOSTILE, "label": "yes"}]
    rows = drilldown_rows("s", items, votes, samples)
    shown = gzip.decompress(base64.b64decode(embed(rows))).decode("utf-8")
    assert not _raw(shown) & set(BIDI_CONTROLS)
    [row] = json.loads(shown)
    assert row["a"] == ["txt[U+202E]exe.[U+2066]x[U+2069] \x1b[2J\x1b]0;owned\x07"]  # JSON escapes the rest
    assert "[U+202E]" in row["p"] and "[U+202E]" in row["b"] and "[U+202E]" in row["ev"]


def test_the_headline_table_shows_controls_as_text() -> None:
    heads = [{"model": f"m{HOSTILE}", "suite": f"s{HOSTILE}", "label": f"acc {HOSTILE}", "value": 0.5, "ci_low": 0.4,
              "ci_high": 0.6, "n": 10, "interval": "wilson"}]
    text = format_headlines(heads)
    assert not _raw(text)
    assert "m" + "txt[U+202E]exe.[U+2066]x[U+2069] [U+001B][2J[U+001B]]0;owned[U+0007]" in text


def test_the_comparison_and_plan_tables_show_controls_as_text() -> None:
    from kgprobe.project.plan import format_plan
    from kgprobe.scoring.compare import format_comparison

    row = {"suite": f"s{HOSTILE}", "task": "t", "breakdown": {"rel": HOSTILE}, "n": 3, "a": 1.0, "b": 0.0, "diff": 1.0,
           "ci_low": 0.1, "ci_high": 1.0, "interval": "bootstrap", "a_only": 3, "b_only": 0, "p_value": 0.25,
           "only_a": 0, "only_b": 0}
    assert not _raw(format_comparison([row]))
    plan = {"model": f"m{HOSTILE}", "suite": "s", "setting": "closed", "perturbation": "none", "note": HOSTILE}
    assert not _raw(format_plan([plan]))

