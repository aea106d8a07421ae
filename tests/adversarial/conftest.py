"""Fixtures the attacks on configs share: a folder holding a one-triple KG beside which a test writes its config."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """``tmp_path`` with ``t.tsv`` (one triple), the KG a test config's ``kgs: {k: {triples: t.tsv}}`` names."""
    (tmp_path / "t.tsv").write_text("a\tr\tb\n", encoding="utf-8")
    return tmp_path
