"""benchmarks/drowzee.py --released on a checkout laid out as the authors' (res/old/<model>/<domain>.json and
res/old/<model>/hallu/<domain>.json), with records written here: the paper's rate is the share of wrong Yes/No
answers, and their labels' rate the hallu/ file's count over the answers."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]


def _bench():
    spec = importlib.util.spec_from_file_location("drowzee_bench", REPO / "benchmarks" / "drowzee.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(qid: int, gold: str, text: str) -> dict:
    return {"qid": qid, "question": f"Is it true that A{qid} founded B{qid}?", "answer": gold, "llm_answer": text,
            "reasoning": "Inverse Function Inference", "evidence": [[f"B{qid}", "founded by", f"A{qid}"]]}


def test_released_answers_give_the_share_of_wrong_yes_no_answers(tmp_path: Path, capsys) -> None:
    answers = [
        _record(1, "Yes.", "Yes, because A1 founded B1."),                       # right
        _record(2, "Yes.", "No, because C founded B2."),                         # wrong: a hallucination
        _record(3, "No.", "Yes, because A3 founded B3."),                        # wrong
        _record(4, "No.", "I don't know."),                                      # a refusal is not one
        _record(5, "No.", 'Sure! Here is my answer to the question "..."\n\nNo, because C founded B5.'),  # right
        _record(6, "Yes.", "Sure! Here is my answer:\nNo, because D founded B6."),                     # wrong
    ]
    hallu = [answers[1], answers[2], answers[5]]
    root = tmp_path / "res" / "old" / "m"
    (root / "hallu").mkdir(parents=True)
    (root / "math.json").write_text(json.dumps(answers))
    (root / "hallu" / "math.json").write_text(json.dumps(hallu))
    _bench().released(argparse.Namespace(released=tmp_path, models=None))
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if line.startswith("| m | math |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "6"
    assert cells[3].startswith("0.500 [") and cells[4].startswith("0.500 [") and cells[5] == "+0.000"
    assert "m/health" in out  # the pairs the checkout lacks are listed
