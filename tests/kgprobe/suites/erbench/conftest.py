"""Fixtures of the ERBench tests: the sample relational database and specs written to temporary folders."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[4]
SAMPLE_SPEC = REPO / "examples" / "sample" / "erdb" / "erdb.yaml"


@pytest.fixture(scope="session")
def sample_spec_data() -> dict:
    """The bundled sample spec as plain data (its source path made absolute)."""
    data = yaml.safe_load(SAMPLE_SPEC.read_text(encoding="utf-8"))
    data["source"]["path"] = str(SAMPLE_SPEC.parent)
    return data
