"""The judge runner: verdicts through the response store, and the reference oracle not asked what it has no gold
verdict for (its failure would be stored again on every run)."""

from __future__ import annotations

from kgprobe.generation import BackendPool, Prompt
from kgprobe.generation.runner import model_specs
from kgprobe.generation.store import MISSING_ERROR, ResponseStore
from kgprobe.scoring.judges import ORACLE_CANNOT_JUDGE, judge_runner


def _spec(kind: str):
    [spec] = model_specs([{"name": f"judge-{kind}", "backend": "reference", "kind": kind, "n": 1, "temperature": 0.0}])
    return spec


PROMPTS = [Prompt(item_id="r1|geval|coherence", text="Rate this answer: Paris.", template_id="t", gold="5"),
           Prompt(item_id="r2|geval|coherence", text="Rate this answer: a long free text.", template_id="t", gold=None),
           Prompt(item_id="r2|geval|coherence", text="Rate this answer: a long free text.", template_id="t", gold=None)]


def test_the_oracle_is_not_asked_without_gold_and_nothing_is_stored_for_it(tmp_path) -> None:
    store = ResponseStore(tmp_path)
    judge = judge_runner(BackendPool(), store)
    verdicts = judge(_spec("oracle"), PROMPTS)
    assert verdicts["r1|geval|coherence"]["text"] == "5" and verdicts["r1|geval|coherence"]["error"] is None
    assert verdicts["r2|geval|coherence"] == {"text": None, "error": ORACLE_CANNOT_JUDGE, "response_id": None}
    stored = store.rows_for("judge-oracle", PROMPTS[:2], _spec("oracle").params).to_pylist()
    assert [r["text"] for r in stored] == ["5", None]  # the second was never generated: no failure row either
    assert stored[1]["error"] == MISSING_ERROR


def test_other_judges_are_asked_everything(tmp_path) -> None:
    store = ResponseStore(tmp_path)
    verdicts = judge_runner(BackendPool(), store)(_spec("always-yes"), PROMPTS)
    assert len(verdicts) == 2 and all(v["error"] is None and v["response_id"] for v in verdicts.values())
