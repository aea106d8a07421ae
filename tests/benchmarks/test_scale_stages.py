"""The stages that benchmarks/scale.py times for OKGQA retrieval, the triple scorer and the perturbations, run on a
tiny synthetic KG: they call the real kgprobe functions and do the work they report."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scale():
    name = "scale_bench"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / "scale.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def kg_dir(scale, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("scale")
    scale._generate(out, 20_000, 0)
    report = scale._ingest(out, True)
    assert (out / "kg.duckdb").is_file() and "loaded" in report["note"]
    return out


def test_perturb_stage_perturbs_every_subgraph_at_every_setting(scale, kg_dir: Path) -> None:
    result = scale._perturb(kg_dir, 5, 20, 0)
    # the pipeline's partitions: the clean copy ("none") and four methods at three levels, each subgraph once each
    assert result["perturbed"] == 5 * (1 + 4 * 3)
    assert result["seconds"] > 0 and result["cpu"] > 0
    assert "5 subgraphs" in result["note"] and "13 perturbations" in result["note"]


def test_scorer_stage_times_the_asked_steps_and_extrapolates_an_epoch(scale, kg_dir: Path) -> None:
    import duckdb

    with duckdb.connect(str(kg_dir / "kg.duckdb"), read_only=True) as con:
        n_triples = con.execute("SELECT count(*) FROM triples").fetchone()[0]
    result = scale._scorer(kg_dir, 3, 0, 5, 20)
    assert result["steps"] == 3
    assert result["epoch_steps"] == math.ceil(n_triples / 256)
    assert result["epoch"] == pytest.approx(result["per_step"] * result["epoch_steps"])
    # the default trains on the pruned subgraphs' triples only, with an embedding per entity they name
    assert 0 < result["trained_on"] < n_triples and 0 < result["entities"]
    assert "default (subgraphs)" in result["note"]


@pytest.mark.slow
def test_okgqa_retrieval_stage_retrieves_three_contexts_per_question(scale, kg_dir: Path) -> None:
    result = scale._okgqa_retrieval(kg_dir, 2, 20, 0)
    assert result["retrievals"] == 2 * 3
    assert result["context_chars"] > 0
