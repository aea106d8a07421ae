"""Shared fixtures: the location of ../shared/data (skipped with a reason when it is absent), and the fake
OpenAI-compatible server of the generation tests."""

from __future__ import annotations

import importlib.util
import sys
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


_FAKE_SERVER = "kgprobe_tests_fake_openai_server"


@pytest.fixture(scope="session")
def fake_server():
    """The ``FakeOpenAIServer`` class of ``tests/kgprobe/generation/fake_openai_server.py``, loaded by path once
    (pytest runs with --import-mode=importlib)."""
    if _FAKE_SERVER not in sys.modules:
        path = REPO / "tests" / "kgprobe" / "generation" / "fake_openai_server.py"
        spec = importlib.util.spec_from_file_location(_FAKE_SERVER, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[_FAKE_SERVER] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[_FAKE_SERVER].FakeOpenAIServer
