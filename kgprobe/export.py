"""A built benchmark taken elsewhere: one suite's closed-book prompts with their expected answers and evidence as
JSONL, as a Hugging Face ``datasets`` folder (Parquet and a dataset card), as an lm-evaluation-harness task folder,
or as an inspect_ai task file.

The harness tasks score an answer with kgprobe itself (:func:`score_answer`: the suite's own reader and vote on
that one item), so a model's share of correct items there equals the votes' share in kgprobe (the ``accuracy``
rows; suites whose headline is a group measure, such as GraphEval's formula (2), need kgprobe for it). They need
``kgprobe`` importable where they run.

    >>> export_suite(items, "grapheval", "lm-eval", "out/grapheval-lm-eval", provenance={...})
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kgprobe.errors import KGProbeError

__all__ = ["FORMATS", "ExportError", "export_records", "export_suite", "score_answer"]

#: The ``--format`` choices of ``kgprobe export``.
FORMATS: tuple[str, ...] = ("jsonl", "hf", "lm-eval", "inspect")


class ExportError(KGProbeError):
    """A suite that cannot be exported as asked."""


def _plain(value: Any) -> Any:
    if isinstance(value, list) and value and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return {str(k): v for k, v in value}  # a MAP column read back from Arrow
    return value


def export_records(suite: Any, items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per closed-book prompt of ``items`` (a suite's items table rows): ``item_id``, ``suite``,
    ``task``, ``answer_format``, ``template_id``, ``system`` (or None), ``prompt``, ``prompt_sha256`` (the
    response-store key, which ``kgprobe import-responses`` accepts), ``expected``, ``breakdown`` (JSON),
    ``evidence`` (JSON: the triples, rows, rule or formula behind the item) and ``item`` (the whole item row as
    JSON, what :func:`score_answer` reads)."""
    by_id = {str(it["item_id"]): it for it in items}
    out = []
    for p in suite.prompts(list(items)):
        it = {k: _plain(v) for k, v in by_id[str(p.item_id)].items()}
        out.append({"item_id": p.item_id, "suite": suite.name, "task": str(it.get("task")),
                    "answer_format": str(it.get("answer_format")), "template_id": p.template_id, "system": p.system,
                    "prompt": p.text, "prompt_sha256": p.sha256(), "expected": str(it.get("expected")),
                    "breakdown": json.dumps(it.get("breakdown") or {}, sort_keys=True, ensure_ascii=False),
                    "evidence": it.get("evidence") if isinstance(it.get("evidence"), str) else json.dumps(it.get("evidence")),
                    "item": json.dumps(it, sort_keys=True, ensure_ascii=False, default=str)})
    return out


def score_answer(suite: str, item: str | Mapping[str, Any], text: str | None | Sequence[str | None], *,
                 scoring: Any = None) -> float:  # fmt: skip
    """1.0 when kgprobe reads ``text`` (one answer, or the list of an item's samples, which are voted) as the
    expected answer of ``item`` (a record's ``item``: JSON or a dict), else 0.0: the suite's own scoring of that one
    item (its reader, judges as configured in ``scoring``, the vote), so a harness that calls it per item gets
    kgprobe's ``correct`` flags."""
    from kgprobe.suites import SUITES
    from kgprobe.suites.base import ScoringOptions

    row = json.loads(item) if isinstance(item, str) else dict(item)
    s = SUITES[suite]
    texts = [text] if text is None or isinstance(text, str) else list(text)
    responses = [{"response_id": f"export-{k}", "item_id": str(row["item_id"]), "model": "export",
                  "backend": "export", "prompt_template_id": "", "prompt": "", "prompt_sha256": "",
                  "sampling_params": "{}", "params_sha256": "", "sample_index": k, "text": t, "finish_reason": None,
                  "tokens_in": None, "tokens_out": None, "latency_s": None, "cost": None,
                  "error": None if t is not None else "empty", "retries": 0, "run_id": "", "created_at": None}
                 for k, t in enumerate(texts)]
    scored = s.score([row], responses, model="export", scoring=scoring or ScoringOptions())
    votes = [v for v in scored.tables()["votes"].to_pylist() if not v.get("judge")]
    return float(bool(votes and votes[0]["correct"]))


_CARD = """---
license: {licence}
pretty_name: kgprobe {suite}
task_categories: [question-answering]
configs:
  - config_name: default
    data_files:
      - split: test
        path: data/test.parquet
---

# kgprobe: {title}

{n} closed-book prompts of the {suite} suite, each with its expected answer and the evidence behind it (KG triples,
relational rows, the rule or formula), built by kgprobe from a knowledge graph.

- Paper: {paper}
- KG snapshot: {snapshot}
- Config hash: {config_hash}
- Source licence: {licence}
- Columns: item_id, suite, task, answer_format, template_id, system, prompt, prompt_sha256, expected, breakdown
  (JSON), evidence (JSON), item (the item row as JSON, read by `kgprobe.export.score_answer`).

Score an answer with `kgprobe.export.score_answer("{suite}", row["item"], answer)` to get kgprobe's reading.
"""

_LM_UTILS = '''"""kgprobe's {suite} suite as an lm-evaluation-harness task: answers are read by kgprobe itself."""

from kgprobe.export import score_answer

SUITE = "{suite}"


def doc_to_text(doc):
    """The prompt; a system instruction, when the prompt has one, goes first (the harness sends one user turn)."""
    return doc["prompt"] if not doc.get("system") else doc["system"] + "\\n\\n" + doc["prompt"]


def process_results(doc, results):
    # results: the item's samples (``repeats`` in the YAML), voted as kgprobe votes them
    return {{"correct": score_answer(SUITE, doc["item"], list(results))}}
'''

_LM_YAML = """task: kgprobe_{suite}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
repeats: {n}
doc_to_text: !function utils.doc_to_text
doc_to_target: expected
process_results: !function utils.process_results
generation_kwargs:
  until: []
  max_gen_toks: {max_tokens}
  do_sample: {sample}
  temperature: {temperature}
metric_list:
  - metric: correct
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""

_INSPECT = '''"""kgprobe's {suite} suite as an inspect_ai task: `inspect eval {name} --model ...`. Answers are read by kgprobe."""

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

from kgprobe.export import score_answer

SUITE = "{suite}"
DATA = Path(__file__).resolve().parent / "{data}"


def samples():
    out = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        turns = ([ChatMessageSystem(content=r["system"])] if r.get("system") else []) + [ChatMessageUser(content=r["prompt"])]
        out.append(Sample(id=r["item_id"], input=turns, target=r["expected"],
                          metadata={{"item": r["item"], "task": r["task"], "breakdown": r["breakdown"]}}))
    return out


@scorer(metrics=[accuracy(), stderr()])
def kgprobe_reader():
    async def score(state: TaskState, target: Target) -> Score:
        # every choice is a sample (num_choices = the suite's n), voted as kgprobe votes them
        texts = [c.message.text for c in state.output.choices] or [state.output.completion]
        return Score(value=score_answer(SUITE, state.metadata["item"], texts), answer=texts[0])

    return score


@task
def kgprobe_{ident}():
    return Task(dataset=MemoryDataset(samples(), name="kgprobe-{suite}"), solver=generate(), scorer=kgprobe_reader(),
                config=GenerateConfig(temperature={temperature}, max_tokens={max_tokens}, num_choices={n}))
'''


def export_suite(items: Sequence[Mapping[str, Any]], suite: str, fmt: str, out: str | Path, *,
                 provenance: Mapping[str, Any] | None = None, max_tokens: int = 128, n: int = 1,
                 temperature: float = 0.0) -> list[Path]:  # fmt: skip
    """Write ``suite``'s closed-book prompts of ``items`` in format ``fmt`` (:data:`FORMATS`) under the folder
    ``out``; return the files written. ``n`` / ``temperature`` / ``max_tokens`` (the suite's sampling) set the
    lm-eval task's ``repeats`` and generation arguments, so its samples are voted as kgprobe votes. ``provenance`` (``snapshot``, ``config_hash``, ``paper``, ``licence``)
    goes into the Hugging Face dataset card."""
    from kgprobe.suites import SUITES

    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if suite not in SUITES:
        raise ExportError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    records = export_records(SUITES[suite], items)
    if not records:
        raise ExportError(f"suite {suite!r} has no items to export; build them first (kgprobe run)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = out / f"{suite}.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    if fmt == "jsonl":
        return [data]
    if fmt == "hf":
        import pyarrow as pa
        import pyarrow.parquet as pq

        data.unlink()
        (out / "data").mkdir(exist_ok=True)
        pq.write_table(pa.Table.from_pylist(records), out / "data" / "test.parquet")
        p = dict(provenance or {})
        (out / "README.md").write_text(_CARD.format(
            suite=suite, title=SUITES[suite].title, n=len(records), paper=p.get("paper") or "–",
            snapshot=p.get("snapshot") or "–", config_hash=p.get("config_hash") or "–",
            licence=p.get("licence") or "other"), encoding="utf-8")
        return [out / "data" / "test.parquet", out / "README.md"]
    ident = suite.replace("-", "_")
    if fmt == "lm-eval":
        (out / "utils.py").write_text(_LM_UTILS.format(suite=suite), encoding="utf-8")
        (out / f"kgprobe_{ident}.yaml").write_text(
            _LM_YAML.format(suite=ident, data=json.dumps(str(data.resolve())), max_tokens=max_tokens, n=n,
                           sample="true" if temperature > 0 else "false", temperature=temperature), encoding="utf-8")
        return [data, out / "utils.py", out / f"kgprobe_{ident}.yaml"]
    (out / f"kgprobe_{ident}.py").write_text(textwrap.dedent(_INSPECT.format(
        suite=suite, ident=ident, name=f"kgprobe_{ident}.py", data=data.name, temperature=temperature,
        max_tokens=max_tokens, n=n)), encoding="utf-8")
    return [data, out / f"kgprobe_{ident}.py"]
