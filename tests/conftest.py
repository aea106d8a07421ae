"""Shared fixtures: the location of ../shared/data, skipped with a reason when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real public data sets beside the checkout; tests that need them skip when they are absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data sets not found at {SHARED_DATA} (a fresh clone has no ../shared); CI provides them")
    return SHARED_DATA
