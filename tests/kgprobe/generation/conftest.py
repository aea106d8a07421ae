"""The fake OpenAI-compatible server, loaded once by path (pytest runs with --import-mode=importlib)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_NAME = "kgprobe_tests_fake_openai_server"


def fake_server_module():
    """The module of ``fake_openai_server.py`` (loaded on first use, then the same object)."""
    if _NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(_NAME, Path(__file__).with_name("fake_openai_server.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[_NAME]


@pytest.fixture
def fake_server():
    """The ``FakeOpenAIServer`` class."""
    return fake_server_module().FakeOpenAIServer
