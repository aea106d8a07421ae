"""``benchmarks/erbench_prompts.py``: the released prompts an example project does not reproduce, counted as a
multiset, on a small released-style log."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    name = "erbench_prompts_bench"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / "erbench_prompts.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_missing_counts_a_prompt_asked_twice_twice(bench) -> None:
    assert bench.missing(["a", "a", "b", "c"], ["a", "c", "d"]) == ["a", "b"]
    assert bench.missing([], ["a"]) == []


@pytest.mark.shared_data
def test_the_airport_example_reproduces_the_released_binary_prompts(bench, shared_data: Path, tmp_path: Path,
                                                                   monkeypatch) -> None:
    root = shared_data / "seeds" / "erbench"
    if not root.is_dir():
        pytest.skip(f"ERBench crafted tables not found at {root}")
    monkeypatch.setenv("ERBENCH_DATA", str(root))
    # the released log's first entity (binary/results/gpt4/airport.log), and a prompt rounded to 4 decimals
    log = tmp_path / "binary" / "results" / "gpt4" / "airport.log"
    log.parent.mkdir(parents=True)
    log.write_text("0-0th question\nQ: Is there an airport located at latitude -34.7833328247 and longitude "
                   "-72.0508346558?\nA:No.\nGold Answer: yes\nGold Entity: Torca\n\n"
                   "0-1th question\nQ: Is it true that there are no airports located at latitude -34.7833328247 and "
                   "longitude -72.0508346558?\nA:Yes.\nGold Answer: no\nGold Entity: Torca\n\n"
                   "1-0th question\nQ: Is there an airport located at latitude -34.7833 and longitude -72.0508?\n"
                   "A:No.\nGold Answer: yes\nGold Entity: Torca\n\n", encoding="utf-8")
    rows = bench.compare(tmp_path, "airport", "gpt4", "claude")
    assert [(what, n, bad) for what, n, bad, _ in rows] == [("binary BN(Y), BN(N)", 3, 1)]
    assert rows[0][3] == ["Is there an airport located at latitude -34.7833 and longitude -72.0508?"]
