"""The log readers of ``benchmarks/erbench_table2.py`` on crafted logs (the released logs themselves are a separate
checkout: the benchmark is run by hand, its table is in docs/suites/erbench.md)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    name = "erbench_table2_bench"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / "erbench_table2.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_defaults_are_the_suites(bench) -> None:
    from kgprobe.suites.erbench.suite import ERBenchSettings

    assert bench.DEFAULTS == {"known_reading": "released", "answer_reading": "released", "rationale_match": "released",
                              "rationale_ext": "per_question", "hop_questions": "complete"}
    for key, value in bench.DEFAULTS.items():
        assert ERBenchSettings.model_fields[key].default == value, key


@pytest.mark.parametrize("gold,values", [
    ("FC Barcelona, barcelona, 1992,", ["FC Barcelona", "barcelona", "1992"]),
    ("Paris Saint-Germain, paris, 1924,1900,", ["Paris Saint-Germain", "paris", "1924,1900"]),
    ("Juventus, turin,  ", ["Juventus", "turin", ""]),                          # never hosted: no third hop
    ("D.C. United, washington, d.c.,", ["D.C. United", "washington, d.c.", ""]),  # a city with a comma, not a year
    ("FC Basel 1893, basel,  ", ["FC Basel 1893", "basel", ""]),
])
def test_soccer_olympic_gold_entity_as_hop_values(bench, gold, values) -> None:
    assert bench._hop_values("soccer_olympic", gold) == values


def test_movie_director_gold_entity_as_hop_values(bench) -> None:
    assert bench._hop_values("movie_director", "James Cameron, 1954") == ["James Cameron", "1954"]


def _csv(path: Path, entities: list[int]) -> None:
    lines = ["entity_idx,question_idx,question,choices,gold_answer,gold_entity,model_answer,model_response_all"]
    lines += [f'{e},0,q,"[\'a\', \'b\']",1,x,1,Option 1' for e in entities]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_mc_answers_take_the_source_with_the_most_entities_whatever_its_size(bench, tmp_path: Path) -> None:
    folder = tmp_path / "multi_choice" / "results" / "claude" / "soccer"
    folder.mkdir(parents=True)
    _csv(folder / "choice_4.csv", [])                         # released with a header only
    _csv(folder / "choice_4_validated.csv", [3, 3, 7])        # a few hundred bytes: read all the same
    rows, source = bench._mc_answers(tmp_path, "claude", "soccer")
    assert source == "their known" and sorted({r["entity"] for r in rows}) == [3, 7] and len(rows) == 3
    _csv(folder / "choice_4.csv", [1, 2, 3])                  # the full answers win when they answer more
    rows, source = bench._mc_answers(tmp_path, "claude", "soccer")
    assert source == "all" and len(rows) == 3


def test_table4_stars_any_hop_off_by_more_than_003(bench) -> None:
    cell = {"A": .46, "R-ext": .59, "AR-ext": [.38, .42, .45], "H": .25}   # paper GPT-4 w/o CoT BN(Y): .38/.42/.41
    results = {("gpt4", "soccer_olympic", False, "BN(Y)"): (cell, 1455)}
    text = bench.table4(results, ["gpt4"])
    assert "| .46 / .46 |" in text and "| .59 / .59 |" in text and "| .38/.42/.45 / .38/.42/.41* |" in text
    assert "| .25 / .25 |" in text and "| - / .55 |" in text                  # a cell without logs
    assert "1455" in text


def test_count_close_counts_cells_both_sides_give_and_the_starred_ones(bench) -> None:
    text = ("| model | measure | a | b | c | d |\n|---|---|---|---|---|---|\n"
            "| GPT-4 | R | .74 / .69* | .30 / .34* | n/a / n/a | .99 / n/a |\n"
            "|  | AR | .41/.44/.43 / .38/.42/.41 | - / .55 | .10 / .12 | .05 / .09* |\n| | known | 1 | 2 | 3 | 4 |")
    assert bench.count_close(text) == (2, 5)


@pytest.mark.shared_data
def test_released_readings_change_the_cells_the_paper_computed_with_them(bench, shared_data: Path, monkeypatch) -> None:
    """Soccer MC: "Madrid" (a released alias) names Atlético de Madrid only under the released reading, "La Liga"
    (a kgprobe alias) names Spain Primera Division only under kgprobe's; Book MC: "Harlequin" names "Harlequin
    Books" only under the released reading (its first_word heuristic)."""
    root = shared_data / "seeds" / "erbench"
    if not root.is_dir():
        pytest.skip(f"ERBench crafted tables not found at {root}")
    monkeypatch.setenv("ERBENCH_DATA", str(root))
    soccer, book = bench._spec("soccer"), bench._spec("book")
    madrid = [{"text": "Option 1: he played for Madrid, not Valencia.", "expected": "1", "n_options": 4,
               "inferred": "Atlético de Madrid"}]
    liga = [{"text": "Option 4: he played in La Liga.", "expected": "4", "n_options": 4,
             "inferred": "Spain Primera Division"}]
    harlequin = [{"text": "Option 3: it was published by Harlequin.", "expected": "3", "n_options": 3,
                  "inferred": "Harlequin Books"}]
    assert bench._mc_cell(soccer, "soccer", madrid, "released").R == 1.0
    assert bench._mc_cell(soccer, "soccer", madrid, "kgprobe").R == 0.0
    assert bench._mc_cell(soccer, "soccer", liga, "released").R == 0.0
    assert bench._mc_cell(soccer, "soccer", liga, "kgprobe").R == 1.0
    assert bench._mc_cell(book, "book", harlequin, "released").R == 1.0
    assert bench._mc_cell(book, "book", harlequin, "kgprobe").R == 0.0
