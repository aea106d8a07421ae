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


def _example_items(dataset: str) -> list[dict]:
    cfg = load_config(EXAMPLES / f"{dataset}.yaml")
    settings = cfg.suite("erbench")
    spec = load_spec(settings.db, config_dir=cfg.path.parent)
    con = duckdb.connect()
    load_erdb(con, spec, fd_violations=settings.fd_violations)
    return build_items(con, spec, QuestionOptions(limit=settings.limit_per_fd, sample=settings.sample,
                                                  distractors=settings.distractors)).to_pylist()


@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", DATASETS)
def test_no_example_renders_a_prompt_with_an_empty_slot(erbench_data: Path, dataset: str) -> None:
    # build_items refuses any prompt template that renders a field empty (a ConfigError naming it): building
    # every question of the example is the check; the values below are the released prompts'
    items = _example_items(dataset)
    assert items and not any(it["question"].endswith(" ?") for it in items)
    if dataset == "soccer":
        # the 3-hop known-entity prompt drops its Olympic clause for a city that never hosted, as released
        known = {it["entity"].split("\x1f")[0]: it["question"] for it in items
                 if it["qtype"] == "known" and it["hops"] == 3}
        assert known["L. Messi"] == ("Did L. Messi play for FC Barcelona? If yes, is FC Barcelona located in the city "
                                     "barcelona? If yes did barcelona host the summer olympics at 1992,?")
        assert known["Cristiano Ronaldo"] == ("Did Cristiano Ronaldo play for Juventus? If yes, is Juventus located "
                                              "in the city turin?")
        hosts = [it for it in items if it["task"] == "multihop" and it["qtype"] == "BN(Y)" and it["expected"] == "yes"]
        asked = [it["question"] for it in items if it["qtype"] == "known" and it["hops"] == 3]
        assert sum("summer olympics" in q for q in asked) == len(hosts) > 0
    if dataset == "airport":
        # the stored coordinates, as the released prompts and Table 9
        assert any(it["question"] == "Is there an airport located at latitude -34.7833328247 and longitude "
                                     "-72.0508346558?" for it in items)


@pytest.mark.shared_data
def test_duplicate_short_names_each_get_their_multihop_question(erbench_data: Path) -> None:
    items = _example_items("soccer")
    hop = [it for it in items if it["task"] == "multihop" and it["qtype"] == "BN(Y)"]
    # 1,500 rows; 21 short names repeat (Fernandinho, Paulinho, ...); one row repeats another exactly and is not
    # loaded: 1,499 questions, not the 1,478 distinct short names
    assert len(hop) == len({it["item_id"] for it in hop}) == 1499
    assert len({it["entity"].split("\x1f")[0] for it in hop}) == 1478
    clubs = sorted(it["hop_values"][0] for it in hop if it["entity"].startswith("Paulinho\x1f"))
    assert clubs == ["Guangzhou FC", "Portimonense SC", "SC Braga"]
