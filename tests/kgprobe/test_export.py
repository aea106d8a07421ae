"""``kgprobe export``: a suite's built benchmark as JSONL, a Hugging Face dataset folder, an lm-evaluation-harness
task and an inspect_ai task, each scoring answers with kgprobe's own reader (kgprobe.export)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kgprobe.export import ExportError, export_records, export_suite, score_answer
from kgprobe.generation.backends.reference import ReferenceBackend
from kgprobe.generation.records import SamplingParams
from kgprobe.kg.ingest import KGSource, load_kg
from kgprobe.suites import SUITES
from kgprobe.suites.base import ItemSource
from kgprobe.suites.grapheval.suite import GraphEvalSettings

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample"
SUITE = SUITES["grapheval"]
MODELS = ("oracle", "random", "always-yes")


@pytest.fixture(scope="module")
def items() -> list[dict]:
    import duckdb

    con = duckdb.connect()
    load_kg(con, KGSource(triples=[SAMPLE / "triples.tsv"], format="tsv", entity_labels=SAMPLE / "entity_labels.tsv",
                          relation_labels=SAMPLE / "relation_labels.tsv", entity_types=SAMPLE / "entity_types.tsv"))
    settings = GraphEvalSettings(per_relation=2, templates="grapheval/templates.yaml")
    result = SUITE.items(ItemSource(con=con, kg="main", snapshot_id="snap", settings=settings, seed=0,
                                    config_dir=SAMPLE))
    return result.items.to_pylist()


@pytest.fixture(scope="module")
def answers(items) -> dict[str, dict[str, list[str]]]:
    """Each reference model's three samples per item, and kgprobe's accuracy on them."""
    prompts = SUITE.prompts(items)
    out = {}
    for kind in MODELS:
        done = ReferenceBackend(kind).generate(prompts, SamplingParams(n=3, temperature=0.6, top_p=0.9, seed=1))
        out[kind] = {p.item_id: [c.text for c in cs] for p, cs in zip(prompts, done, strict=True)}
    return out


def _kgprobe_accuracy(items, texts: dict[str, list[str]], model: str) -> float:
    responses = [{"response_id": f"{i}-{k}", "item_id": i, "model": model, "sample_index": k, "text": t,
                  "error": None, "prompt_template_id": "", "prompt": ""} for i, ts in texts.items()
                 for k, t in enumerate(ts)]
    scored = SUITE.score(items, responses, model=model)
    return next(m["value"] for m in scored.metrics if m["metric"] == "accuracy" and not m["breakdown"])


def test_jsonl_records_carry_prompt_key_expected_and_evidence(items, tmp_path: Path) -> None:
    (path,) = export_suite(items, "grapheval", "jsonl", tmp_path / "j")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    prompts = {p.item_id: p for p in SUITE.prompts(items)}
    assert len(rows) == len(prompts) == len(items)
    for r in rows:
        assert r["prompt"] == prompts[r["item_id"]].text and r["prompt_sha256"] == prompts[r["item_id"]].sha256()
        assert r["expected"] in ("true", "false") and json.loads(r["evidence"]) and json.loads(r["item"])["item_id"] == r["item_id"]
    with pytest.raises(ExportError, match="format"):
        export_suite(items, "grapheval", "csv", tmp_path / "x")


def test_score_answer_gives_kgprobes_numbers(items, answers) -> None:
    records = export_records(SUITE, items)
    for model in MODELS:
        mine = sum(score_answer("grapheval", r["item"], answers[model][r["item_id"]]) for r in records) / len(records)
        assert mine == pytest.approx(_kgprobe_accuracy(items, answers[model], model)), model
    one = records[0]
    assert score_answer("grapheval", one["item"], "True." if one["expected"] == "true" else "False.") == 1.0
    assert score_answer("grapheval", one["item"], "I don't know.") == 0.0


def test_hf_folder_loads_as_a_dataset(items, tmp_path: Path) -> None:
    files = export_suite(items, "grapheval", "hf", tmp_path / "hf",
                         provenance={"snapshot": "sample@1", "config_hash": "abc123", "paper": SUITE.paper,
                                     "licence": "cc-by-4.0"})
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert "license: cc-by-4.0" in card and "sample@1" in card and "abc123" in card and SUITE.paper in card
    table = pq.read_table(files[0])
    assert table.num_rows == len(items)
    if importlib.util.find_spec("datasets") is None:
        pytest.skip("datasets is not installed (pip install -e '.[harnesses]'): the Parquet and card were checked")
    import datasets

    # a cache of this test's own: datasets keys its cache by the folder's files, and an earlier export under the
    # same names would be read back instead of this one
    ds = datasets.load_dataset(str(tmp_path / "hf"), split="test", cache_dir=str(tmp_path / "hf-cache"))
    assert len(ds) == len(items) and ds[0]["item_id"] == table.column("item_id")[0].as_py()


def test_lm_eval_task_scores_as_kgprobe(items, answers, tmp_path: Path) -> None:
    files = export_suite(items, "grapheval", "lm-eval", tmp_path / "lm", n=3, temperature=0.6, max_tokens=64)
    yaml_text = files[2].read_text(encoding="utf-8")
    assert "repeats: 3" in yaml_text and "process_results: !function utils.process_results" in yaml_text
    if importlib.util.find_spec("lm_eval") is None:
        pytest.skip("lm-eval is not installed (pip install -e '.[harnesses]'): the task files were checked")
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(tmp_path / "lm"))
    task = manager.load_task_or_group(["kgprobe_grapheval"])["kgprobe_grapheval"]
    docs = list(task.test_docs())
    assert len(docs) == len(items)
    for model in MODELS:
        flags = [task.process_results(doc, answers[model][doc["item_id"]])["correct"] for doc in docs]
        assert sum(flags) / len(flags) == pytest.approx(_kgprobe_accuracy(items, answers[model], model)), model


def test_inspect_task_scores_as_kgprobe(items, answers, tmp_path: Path) -> None:
    files = export_suite(items, "grapheval", "inspect", tmp_path / "ins", n=3, temperature=0.6)
    assert "num_choices=3" in files[1].read_text(encoding="utf-8")
    if importlib.util.find_spec("inspect_ai") is None:
        pytest.skip("inspect-ai is not installed (pip install -e '.[harnesses]'): the task file was checked")
    import asyncio

    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    spec = importlib.util.spec_from_file_location("kgprobe_grapheval_task", files[1])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    task = module.kgprobe_grapheval()
    samples = list(task.dataset)
    assert len(samples) == len(items)
    score = module.kgprobe_reader()
    for model in MODELS:
        flags = []
        for s in samples:
            choices = [ChatCompletionChoice(message=ChatMessageAssistant(content=t)) for t in answers[model][s.id]]
            state = TaskState(model="mockllm/model", sample_id=s.id, epoch=1, input=s.input, messages=[],
                              output=ModelOutput(model="mockllm/model", choices=choices), metadata=s.metadata)
            flags.append(asyncio.run(score(state, Target(s.target))).value)
        assert sum(flags) / len(flags) == pytest.approx(_kgprobe_accuracy(items, answers[model], model)), model
