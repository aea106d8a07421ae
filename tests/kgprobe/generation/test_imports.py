"""Answers generated elsewhere, imported into the response store (kgprobe.generation.imports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgprobe.generation import run_generation
from kgprobe.generation.backends.reference import ReferenceBackend
from kgprobe.generation.imports import ResponseImportError, import_responses, read_jsonl
from kgprobe.generation.records import Prompt, SamplingParams
from kgprobe.generation.store import ResponseStore

PARAMS = SamplingParams(n=2, temperature=0.6)
PROMPTS = [Prompt(item_id=f"q{i}", text=f"Is {i} even? Answer yes or no.", template_id="t", gold="yes" if i % 2 == 0
                  else "no", answer_kind="yn") for i in range(5)]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_imported_answers_are_the_rows_a_generated_model_has(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "store")
    run_generation(ReferenceBackend("oracle"), model="oracle", prompts=PROMPTS, params=PARAMS, store=store)
    made = store.rows_for("oracle", PROMPTS, PARAMS).to_pylist()
    # the same answers, produced "elsewhere": by item id for some rows, by prompt hash for the others
    rows = [{"sample_index": r["sample_index"], "text": r["text"], "tokens_out": 3,
             **({"item_id": r["item_id"]} if k % 2 else {"prompt_sha256": r["prompt_sha256"]})}
            for k, r in enumerate(made)]
    summary = import_responses(read_jsonl(_write(tmp_path / "a.jsonl", rows)), model="elsewhere",
                               targets=[(p, PARAMS) for p in PROMPTS], store=store)
    assert (summary["rows"], summary["stored"], summary["prompts"]) == (10, 10, 5)
    got = store.rows_for("elsewhere", PROMPTS, PARAMS).to_pylist()
    key = ("item_id", "sample_index", "prompt_sha256", "params_sha256", "text", "error")
    assert [tuple(r[k] for k in key) for r in got] == [tuple(r[k] for k in key) for r in made]
    assert {r["backend"] for r in got} == {"import"} and {r["tokens_out"] for r in got} == {3}
    # every sample is stored: a generation run of the imported model would send nothing
    assert store.done_keys("elsewhere", PARAMS.sha256()) == {(p.sha256(), i) for p in PROMPTS for i in range(2)}


def test_rows_matching_no_prompt_are_an_error_and_nothing_is_written(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "store")
    path = _write(tmp_path / "b.jsonl", [{"item_id": "q0", "text": "Yes."}, {"item_id": "nope", "text": "No."},
                                         {"prompt_hash": "0" * 64, "text": "No."}])
    with pytest.raises(ResponseImportError, match=r"2 of 3 row\(s\) match no prompt.*b.jsonl:2 \(item_id nope\)"):
        import_responses(read_jsonl(path), model="m", targets=[(p, PARAMS) for p in PROMPTS], store=store,
                         source=str(path))
    assert store.shards("m") == []


@pytest.mark.parametrize(("row", "message"), [
    ({"item_id": "q0", "sample_index": 2, "text": "Yes."}, "draws n=2"),
    ({"sample_index": 0, "text": "Yes."}, "names no prompt"),
    ({"item_id": "q0", "text": None}, "'text' must be"),
    ({"item_id": "q0", "text": "Yes.", "tokens_out": -1}, "token count"),
    ({"item_id": "q0", "text": "Yes.", "answer": "x"}, "unknown key"),
])
def test_bad_rows_name_their_line(tmp_path: Path, row: dict, message: str) -> None:
    path = _write(tmp_path / "c.jsonl", [{"item_id": "q1", "text": "No."}, row])
    with pytest.raises(ResponseImportError, match=message):
        import_responses(read_jsonl(path), model="m", targets=[(p, PARAMS) for p in PROMPTS],
                         store=ResponseStore(tmp_path / "s"), source="c.jsonl")


def test_duplicate_samples_and_bad_json(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.jsonl", [{"item_id": "q1", "text": "No."}, {"item_id": "q1", "text": "Yes."}])
    with pytest.raises(ResponseImportError, match="with another answer, at d.jsonl:1"):
        import_responses(read_jsonl(path), model="m", targets=[(p, PARAMS) for p in PROMPTS],
                         store=ResponseStore(tmp_path / "s"), source="d.jsonl")
    same = _write(tmp_path / "f.jsonl", [{"item_id": "q1", "text": "No."}, {"item_id": "q1", "text": "No."}])
    assert import_responses(read_jsonl(same), model="m", targets=[(p, PARAMS) for p in PROMPTS],
                            store=ResponseStore(tmp_path / "s"))["stored"] == 1
    (tmp_path / "e.jsonl").write_text('{"item_id": "q1", "text": "No."}\n{oops\n', encoding="utf-8")
    with pytest.raises(ResponseImportError, match="e.jsonl:2: not valid JSON"):
        read_jsonl(tmp_path / "e.jsonl")
