"""The five datasets of the paper as ready projects (examples/erbench/*.yaml) on the released crafted tables:
each loads from $ERBENCH_DATA, asks the paper's question types with its FDs, and the oracle is perfect on them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb
import pytest

from kgprobe.config import load_config
from kgprobe.errors import ConfigError
from kgprobe.suites.erbench import load_erdb, load_spec
from kgprobe.suites.erbench.questions import QuestionOptions, build_items

REPO = Path(__file__).resolve().parents[4]
EXAMPLES = REPO / "examples" / "erbench"
DATASETS = ("movie", "soccer", "airport", "music", "book")


def test_a_missing_data_folder_is_named(monkeypatch) -> None:
    monkeypatch.delenv("ERBENCH_DATA", raising=False)
    with pytest.raises(ConfigError, match=r"environment variable ERBENCH_DATA, which is not set"):
        load_config(EXAMPLES / "soccer.yaml")


@pytest.fixture
def erbench_data(shared_data: Path, monkeypatch) -> Path:
    root = shared_data / "seeds" / "erbench"
    if not root.is_dir():
        pytest.skip(f"ERBench crafted tables not found at {root}")
    monkeypatch.setenv("ERBENCH_DATA", str(root))
    return root


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", DATASETS)
def test_each_dataset_asks_the_papers_questions(erbench_data: Path, dataset: str) -> None:
    cfg = load_config(EXAMPLES / f"{dataset}.yaml")
    assert cfg.kgs == {}   # purely relational
    settings = cfg.suite("erbench")
    assert (settings.sample, settings.distractors, settings.fd_violations) == ("first", "by_row", "keep")
    spec = load_spec(settings.db, config_dir=cfg.path.parent)
    con = duckdb.connect()
    load_erdb(con, spec, fd_violations=settings.fd_violations)
    items = build_items(con, spec, QuestionOptions(limit=settings.limit_per_fd)).to_pylist()
    counts = Counter((it["dataset"], it["qtype"]) for it in items)
    # binary and multiple choice on the paper's ~1,500 entities (Table 13's totals), three phrasings each
    assert 1480 <= counts[(dataset, "BN(Y)")] == counts[(dataset, "BN(N)")] == counts[(dataset, "known")] <= 1500
    mc_entities = {it["entity"] for it in items if it["qtype"] == "MC"}
    assert 1480 <= len(mc_entities) <= 1500 and counts[(dataset, "MC")] == 3 * len(mc_entities)
    n_options = {len(it["options"]) for it in items if it["qtype"] == "MC"}
    assert n_options == {{"movie": 3, "soccer": 4, "airport": 4, "music": 2, "book": 3}[dataset]}
    if dataset in ("movie", "soccer"):   # Table 20: 2-hop Movie & Director, 3-hop Soccer & Club & Olympic
        hop = next(it for it in items if it["task"] == "multihop")
        assert hop["hops"] == {"movie": 2, "soccer": 3}[dataset]
    first = {"movie": "Avatar", "soccer": "L. Messi", "airport": "Torca", "music": "badfinger",
             "book": "God Is Forever"}[dataset]   # the table's first row
    assert any(it["inferred"] == [first] for it in items if it["qtype"] == "BN(Y)")
