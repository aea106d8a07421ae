"""Shared by the pipeline tests: a project config derived from the sample, written beside it."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

SAMPLE = Path(__file__).resolve().parents[2] / "examples"


@contextlib.contextmanager
def sample_project(warehouse: Path, edit: Callable[[dict], None] | None = None) -> Iterator[Path]:
    """The sample config with its warehouse moved to `warehouse` (a folder) and `edit` applied, written beside the
    sample so that its relative data paths resolve; the file is removed on exit."""
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    cfg["warehouse"] = str(Path(warehouse) / "kgprobe.duckdb")
    if edit is not None:
        edit(cfg)
    path = SAMPLE / f".test-{uuid.uuid4().hex[:10]}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def reference_models_only(cfg: dict) -> None:
    """The reference models only (no weights to load), oracle as the one judge, one query per type: a small, fast
    project that still runs every enabled suite."""
    cfg["models"] = [m for m in cfg["models"] if m["backend"] == "reference"]
    cfg["scoring"]["judges"] = [{"model": "oracle"}]
    cfg["queries"]["sample"]["per_type"] = 1


@pytest.fixture
def small_project(tmp_path: Path) -> Iterator[Path]:
    with sample_project(tmp_path / "warehouse", reference_models_only) as path:
        yield path


@pytest.fixture
def project_config(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """A factory: `project_config(edit)` writes the sample with `edit` applied (after `reference_models_only`
    unless `reference_only=False`) and a warehouse under tmp_path; every file it wrote is removed at teardown."""
    stack = contextlib.ExitStack()

    def make(edit: Callable[[dict], None] | None = None, *, reference_only: bool = True) -> Path:
        def both(cfg: dict) -> None:
            if reference_only:
                reference_models_only(cfg)
            if edit is not None:
                edit(cfg)
        return stack.enter_context(sample_project(tmp_path / "warehouse", both))

    with stack:
        yield make
