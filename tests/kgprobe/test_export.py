"""``kgprobe export``: a suite's built benchmark as JSONL, a Hugging Face dataset folder, an lm-evaluation-harness
task and an inspect_ai task, each scoring answers with kgprobe's own reader (kgprobe.export)."""

from __future__ import annotations

import importlib.util
import json
import math
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
    return _reference_answers(SUITE, items)


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


@pytest.mark.slow  # the suite scores each item on its own: seconds per model
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
    assert "correct_<task> equals kgprobe's accuracy row" in card  # which kgprobe number the per-item measure is
    table = pq.read_table(files[0])
    assert table.num_rows == len(items)
    if importlib.util.find_spec("datasets") is None:
        pytest.skip("datasets is not installed (pip install -e '.[harnesses]'): the Parquet and card were checked")
    import datasets

    # a cache of this test's own: datasets keys its cache by the folder's files, and an earlier export under the
    # same names would be read back instead of this one
    ds = datasets.load_dataset(str(tmp_path / "hf"), split="test", cache_dir=str(tmp_path / "hf-cache"))
    assert len(ds) == len(items) and ds[0]["item_id"] == table.column("item_id")[0].as_py()


@pytest.mark.slow
def test_lm_eval_task_scores_as_kgprobe(items, answers, tmp_path: Path) -> None:
    files = export_suite(items, "grapheval", "lm-eval", tmp_path / "lm", n=3, temperature=0.6, top_p=0.9,
                         max_tokens=64)
    yaml_text = files[2].read_text(encoding="utf-8")
    assert "repeats: 3" in yaml_text and "process_results: !function utils.process_results" in yaml_text
    assert "k: 3" in yaml_text  # every sample reaches process_results (lm-eval's default filter keeps the first)
    assert "  temperature: 0.6\n  top_p: 0.9\n" in yaml_text and "--apply_chat_template" in yaml_text
    for f in files:
        assert str(tmp_path) not in f.read_text(encoding="utf-8"), f"{f.name} names where it was written"
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


@pytest.mark.slow
def test_inspect_task_scores_as_kgprobe(items, answers, tmp_path: Path) -> None:
    files = export_suite(items, "grapheval", "inspect", tmp_path / "ins", n=3, temperature=0.6, top_p=0.9)
    text = files[1].read_text(encoding="utf-8")
    assert "SAMPLES = 3" in text and "GenerateConfig(temperature=0.6, top_p=0.9, max_tokens=128)" in text
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
            flags.append(asyncio.run(score(state, Target(s.target))).value["correct"])
        assert sum(flags) / len(flags) == pytest.approx(_kgprobe_accuracy(items, answers[model], model)), model

    # run by inspect itself on its mock model, which ignores num_choices: every sample still gets 3 answers (the
    # replies carry their usage, so that inspect counts no tokens itself: that would fetch an encoding)
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelUsage, get_model

    replies = [ModelOutput.from_content("mockllm/model", text) for text in ("True.", "False.", "True.") * 2]
    for r in replies:
        r.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
    mock = get_model("mockllm/model", custom_outputs=replies)
    (log,) = inspect_eval(task, model=mock, limit=2, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success" and len(log.samples) == 2
    got = [[c.message.text for c in s.output.choices] for s in log.samples]  # (samples run concurrently)
    assert [len(g) for g in got] == [3, 3] and sorted(sum(got, [])) == sorted(["True.", "False.", "True."] * 2)
    assert log.eval.config is not None and log.plan.config.top_p == 0.9 and log.plan.config.temperature == 0.6


# ---- every suite, on the sample's own items: the harnesses' numbers are kgprobe's ---------------------------------

#: Per suite, the exported measures and the kgprobe metric row each one's mean equals: (task, judge, metric,
#: breakdown) of the suite's overall rows (kgprobe.export.MEASURES says the same in words).
EXPECTED: dict[str, dict[str, tuple[str, str, str, dict]]] = {
    "fpq": {"correct_discriminative": ("discriminative", "", "accuracy", {})},
    "grapheval": {"correct_statement": ("statement", "", "accuracy", {}),
                  "correct_statement_kgprobe": ("statement_kgprobe", "", "accuracy", {})},
    "erbench": {f"correct_{t}": (t, "", "answer_accuracy", {}) for t in ("binary", "multiple_choice", "multihop")},
    "drowzee": {f"correct_{t}": (t, "heuristic", "answer_accuracy", {}) for t in ("rule", "temporal")},
    "okgqa": {"factscore_zero_shot": ("open_qa", "heuristic", "factscore", {}),
              "factscore_cot": ("open_qa", "heuristic", "factscore", {"retrieval": "cot"})},
}
#: Question groups taken from each suite's items, so that scoring item by item stays quick.
LIMIT = {"fpq": 12, "grapheval": 40, "erbench": None, "drowzee": None, "okgqa": None}


@pytest.fixture(scope="module")
def sample_items(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """Every suite's items as the sample's ``prepare`` job writes them (reference models, one query per type)."""
    import dagster as dg
    import yaml

    from kgprobe import warehouse as wh
    from pipelines.definitions import build_definitions

    tmp = tmp_path_factory.mktemp("export-sample")
    cfg = yaml.safe_load((SAMPLE.parent / "sample.yaml").read_text(encoding="utf-8"))
    cfg["warehouse"] = str(tmp / "warehouse" / "kgprobe.duckdb")
    cfg["queries"]["sample"]["per_type"] = 1
    cfg["suites"]["fpq"]["n_per_domain"] = 12
    cfg["models"] = [m for m in cfg["models"] if m["backend"] == "reference"]
    cfg["scoring"]["judges"] = [{"model": "oracle"}]
    path = SAMPLE.parent / f".test-{tmp.name}.yaml"  # beside the sample so its relative data paths resolve
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    try:
        defs = build_definitions(str(path))
        assert defs.resolve_job_def("prepare").execute_in_process(instance=dg.DagsterInstance.ephemeral()).success
    finally:
        path.unlink()
    out = {}
    for name in EXPECTED:
        items = wh.read_partition(tmp / "warehouse", f"{name}_items").to_pylist()
        out[name] = list(SUITES[name].select(items, limit=LIMIT[name], setting="closed"))
    return out


def _reference_answers(suite, items) -> dict[str, dict[str, list[str]]]:
    prompts = suite.prompts(items)
    out = {}
    for kind in MODELS:
        done = ReferenceBackend(kind).generate(prompts, SamplingParams(n=3, temperature=0.6, top_p=0.9, seed=1))
        out[kind] = {p.item_id: [c.text for c in cs] for p, cs in zip(prompts, done, strict=True)}
    return out


def _kgprobe_rows(suite, items, texts: dict[str, list[str]], model: str) -> dict[str, float]:
    """kgprobe's own value of each expected row for ``model``'s answers (NaN where the row has no items)."""
    responses = [{"response_id": f"{i}-{k}", "item_id": i, "model": model, "sample_index": k, "text": t,
                  "error": None, "prompt_template_id": "", "prompt": ""} for i, ts in texts.items()
                 for k, t in enumerate(ts)]
    scored = suite.score(items, responses, model=model)
    out = {}
    for measure, (task, judge, metric, bd) in EXPECTED[suite.name].items():
        rows = [m for m in scored.metrics if (m["task"], m["judge"] or "", m["metric"]) == (task, judge, metric)
                and dict(m["breakdown"] or {}) == bd]
        assert len(rows) <= 1, (measure, rows)
        out[measure] = rows[0]["value"] if rows and rows[0]["n"] else math.nan
    return out


def _same(mine: float, theirs: float) -> bool:
    return (math.isnan(mine) and math.isnan(theirs)) or mine == pytest.approx(theirs)


@pytest.mark.slow
@pytest.mark.parametrize("suite_name", sorted(EXPECTED))
def test_moved_lm_eval_and_inspect_tasks_score_as_kgprobe(sample_items, suite_name: str, tmp_path: Path) -> None:
    """Export each suite as an lm-eval task folder and an inspect_ai task, move both folders elsewhere, load them with
    the libraries themselves, feed each reference model's three samples per item through the harness's own path
    (lm-eval: requests, the task's filters, process_results, the task's aggregation; inspect: the task's dataset,
    scorer and metric), and compare every measure with kgprobe's own metric row on the same answers."""
    if importlib.util.find_spec("lm_eval") is None or importlib.util.find_spec("inspect_ai") is None:
        pytest.skip("lm-eval and inspect-ai are not installed (pip install -e '.[harnesses]')")
    import asyncio
    import os
    import shutil

    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput
    from inspect_ai.scorer import Score, Target
    from inspect_ai.solver import TaskState
    from lm_eval.tasks import TaskManager

    from kgprobe.export import harness_records

    suite = SUITES[suite_name]
    items = sample_items[suite_name]
    kept = {r["item_id"] for r in harness_records(suite, items)}
    items = [it for it in items if str(it["item_id"]) in kept]
    answers = _reference_answers(suite, items)
    expected = {m: _kgprobe_rows(suite, items, answers[m], m) for m in MODELS}
    assert any(not math.isnan(v) for e in expected.values() for v in e.values()), expected
    assert len({e[next(iter(e))] for e in expected.values()}) > 1, expected  # the models differ: the check can fail

    export_suite(items, suite_name, "lm-eval", tmp_path / "made" / "lm", n=3, temperature=0.6)
    export_suite(items, suite_name, "inspect", tmp_path / "made" / "ins", n=3, temperature=0.6)
    shutil.move(str(tmp_path / "made"), str(tmp_path / "moved"))  # nothing may name the old place
    cwd = os.getcwd()
    os.chdir(tmp_path)  # nor the working directory
    try:
        task_name = f"kgprobe_{suite_name}"
        task = TaskManager(include_path=str(tmp_path / "moved" / "lm")).load_task_or_group([task_name])[task_name]
        docs = list(task.test_docs())
        assert {d["item_id"] for d in docs} == kept
        spec = importlib.util.spec_from_file_location(f"{task_name}_inspect",
                                                      tmp_path / "moved" / "ins" / f"{task_name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        inspect_task = getattr(module, task_name)()
        samples = list(inspect_task.dataset)
        scorer = module.kgprobe_reader()
        metric = module.mean_defined()
        for model in MODELS:
            task.build_all_requests(limit=None, rank=0, world_size=1)
            by_doc = {}
            for inst in task.instances:
                inst.resps = list(answers[model][inst.doc["item_id"]])
            task.apply_filters()
            for inst in task.instances:
                by_doc.setdefault(inst.doc_id, (inst.doc, []))[1].append(inst.filtered_resps["samples"])
            per_item = [task.process_results(doc, resps) for doc, resps in by_doc.values()]
            aggregate = task.aggregation()
            scores = []
            for s in samples:
                choices = [ChatCompletionChoice(message=ChatMessageAssistant(content=t)) for t in answers[model][s.id]]
                state = TaskState(model="mockllm/model", sample_id=s.id, epoch=1, input=s.input, messages=[],
                                  output=ModelOutput(model="mockllm/model", choices=choices), metadata=s.metadata)
                scores.append(asyncio.run(scorer(state, Target(s.target))).value)
            for measure, want in expected[model].items():
                lm = aggregate[measure]([r[measure] for r in per_item])
                ins = metric([Score(value=v[measure]) for v in scores])
                assert _same(lm, want), (model, measure, lm, want)
                assert _same(ins, want), (model, measure, ins, want)
    finally:
        os.chdir(cwd)
