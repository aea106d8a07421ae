"""A built benchmark taken elsewhere: one suite's closed-book prompts with their expected answers and evidence as
JSONL, as a Hugging Face ``datasets`` folder (Parquet and a dataset card), as an lm-evaluation-harness task folder,
or as an inspect_ai task file.

The harness tasks score an answer with kgprobe itself (:func:`score_item`: the suite's own reader and vote on that
one item) and report per-item measures whose means are kgprobe's own numbers (:data:`MEASURES` says which, per
suite): the share of an item's task answered right (``correct_<task>``) and, for OKGQA, the answer's FActScore.
Where a suite's headline is a group formula (KG-FPQ's gated accuracy, GraphEval's formula (2)) or needs a judge
model, the harness tasks carry the per-item measure and the card and task say which kgprobe row it equals. The
harness tasks carry the items that have such a measure (KG-FPQ's yes/no questions, ERBench's questions without the
known-entity probes); JSONL and the dataset carry every closed-book prompt. The task folders are movable (they read
the JSONL beside their own files) and need ``kgprobe`` importable where they run.

    >>> export_suite(items, "grapheval", "lm-eval", "out/grapheval-lm-eval", provenance={...})
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kgprobe.errors import KGProbeError

__all__ = ["FORMATS", "MEASURES", "ExportError", "export_records", "export_suite", "harness_records", "measure_names",
           "score_answer", "score_item"]

#: The ``--format`` choices of ``kgprobe export``.
FORMATS: tuple[str, ...] = ("jsonl", "hf", "lm-eval", "inspect")


class ExportError(KGProbeError):
    """A suite that cannot be exported as asked."""


#: Per suite, what the harness tasks' per-item measures average to in kgprobe: ``correct_<task>`` is the share of
#: the task's items whose vote is right, ``correct`` the same over every exported item.
MEASURES: dict[str, str] = {
    "fpq": ("correct_discriminative (= correct) equals kgprobe's accuracy row of task discriminative: every yes/no "
            "TPQ and FPQ. The headline, gated FPQ accuracy, is not a per-item mean (an FPQ counts only when its TPQ "
            "twin was answered yes); the WH questions need a judge model and are left out of the harness tasks."),
    "grapheval": ("correct_<task> equals kgprobe's accuracy row of that task (statements whose vote is the gold "
                  "true / false). The headline, formula (2), scores a positive with its negatives as a group, so it "
                  "needs kgprobe."),
    "erbench": ("correct_<task> equals kgprobe's answer_accuracy (A) row of that task (binary, multiple_choice, "
                "multihop) over all questions, the paper's setting (3); the known-entity probes are left out. R, AR "
                "and H = 1 - A - M need the rationale check and the missing share, in kgprobe."),
    "okgqa": ("factscore_zero_shot and factscore_cot equal kgprobe's factscore rows (heuristic extractor) of the "
              "zero-shot answers and of the chain-of-thought baseline (retrieval = cot): the mean over answers with "
              "at least one atomic fact of supported / all facts; an answer without facts has none. correct: every "
              "fact supported."),
    "drowzee": ("correct_<task> equals kgprobe's answer_accuracy row (heuristic extractor) of that task (rule, "
                "temporal). The hallucination rate needs the reasoning oracle on the extracted triples (kgprobe)."),
}

#: The items a harness task carries: those with a per-item measure that needs no judge model.
_HARNESS: dict[str, Any] = {
    "fpq": lambda it: str(it.get("answer_format")) == "yes_no",
    "erbench": lambda it: str(it.get("task")) != "known_entity",
}


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
    closed = suite.select(list(items), setting="closed")  # OKGQA's retrieval items are asked with KG context only
    by_id = {str(it["item_id"]): it for it in closed}
    out = []
    for p in suite.prompts(list(closed)):
        it = {k: _plain(v) for k, v in by_id[str(p.item_id)].items()}
        out.append({"item_id": p.item_id, "suite": suite.name, "task": str(it.get("task")),
                    "answer_format": str(it.get("answer_format")), "template_id": p.template_id, "system": p.system,
                    "prompt": p.text, "prompt_sha256": p.sha256(), "expected": str(it.get("expected")),
                    "breakdown": json.dumps(it.get("breakdown") or {}, sort_keys=True, ensure_ascii=False),
                    "evidence": it.get("evidence") if isinstance(it.get("evidence"), str) else json.dumps(it.get("evidence")),
                    "item": json.dumps(it, sort_keys=True, ensure_ascii=False, default=str)})
    return out


def harness_records(suite: Any, items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`export_records` of the items a harness task carries (those with a judge-free per-item measure)."""
    keep = _HARNESS.get(suite.name, lambda _it: True)
    return [r for r in export_records(suite, items) if keep(json.loads(r["item"]))]


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def measure_names(suite: str, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The per-item measures :func:`score_item` reports for ``records`` (harness records of ``suite``), in order."""
    tasks = sorted({_ident(str(r["task"])) for r in records})
    names = ["correct", *(f"correct_{t}" for t in tasks)]
    if suite == "okgqa":
        names += ["factscore_zero_shot", "factscore_cot"]
    return names


def score_item(suite: str, item: str | Mapping[str, Any], text: str | None | Sequence[str | None], *,
               scoring: Any = None) -> dict[str, float]:  # fmt: skip
    """kgprobe's per-item measures of ``text`` (one answer, or the list of an item's samples, which are voted) on
    ``item`` (a record's ``item``: JSON or a dict): ``correct`` and ``correct_<task>`` (1.0 or 0.0: the vote is the
    expected answer), and for OKGQA ``factscore_zero_shot`` or ``factscore_cot`` (the answer's supported / all
    atomic facts; absent when it states no fact). Their means over items are kgprobe's numbers (:data:`MEASURES`).
    The suite's own reader, the extractor and judges as configured in ``scoring``, and the vote score it, so a
    harness that calls it per item gets kgprobe's flags.

        >>> score_item("grapheval", record["item"], ["True.", "True.", "False."])
        {'correct': 1.0, 'correct_statement': 1.0}
    """
    from kgprobe.suites import SUITES
    from kgprobe.suites.base import ScoringOptions

    row = json.loads(item) if isinstance(item, str) else dict(item)
    if suite not in SUITES:
        raise ExportError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    s = SUITES[suite]
    texts = [text] if text is None or isinstance(text, str) else list(text)
    responses = [{"response_id": f"export-{k}", "item_id": str(row["item_id"]), "model": "export",
                  "backend": "export", "prompt_template_id": "", "prompt": "", "prompt_sha256": "",
                  "sampling_params": "{}", "params_sha256": "", "sample_index": k, "text": t, "finish_reason": None,
                  "tokens_in": None, "tokens_out": None, "latency_s": None, "cost": None,
                  "error": None if t is not None else "empty", "retries": 0, "run_id": "", "created_at": None}
                 for k, t in enumerate(texts)]
    scored = s.score([row], responses, model="export", scoring=scoring or ScoringOptions())
    votes = scored.tables()["votes"].to_pylist()
    # the offline reading: no judge, or the heuristic extractor of the suites that extract claims
    offline = [v for v in votes if (v.get("judge") or "") in ("", "heuristic")] or votes
    vote = offline[0] if offline else None
    flag = float(bool(vote and vote["correct"]))
    out = {"correct": flag, f"correct_{_ident(str(row.get('task')))}": flag}
    if suite == "okgqa" and vote is not None:
        fs = vote.get("factscore")
        if fs is not None and fs == fs:
            out["factscore_cot" if row.get("retrieval") == "cot" else "factscore_zero_shot"] = float(fs)
    return out


def score_answer(suite: str, item: str | Mapping[str, Any], text: str | None | Sequence[str | None], *,
                 scoring: Any = None) -> float:  # fmt: skip
    """1.0 when kgprobe reads ``text`` (one answer, or the list of an item's samples, which are voted) as the
    expected answer of ``item`` (a record's ``item``: JSON or a dict), else 0.0: the suite's own scoring of that one
    item (its reader, judges as configured in ``scoring``, the vote), so a harness that calls it per item gets
    kgprobe's ``correct`` flags."""
    return score_item(suite, item, text, scoring=scoring)["correct"]


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
- Sampling (kgprobe's for this suite): {n_samples} sample(s) per prompt, temperature {temperature}, top_p {top_p},
  at most {max_tokens} new tokens; chat models get the prompt (and the system prompt, where given) in their chat template
- Columns: item_id, suite, task, answer_format, template_id, system, prompt, prompt_sha256, expected, breakdown
  (JSON), evidence (JSON), item (the item row as JSON, read by `kgprobe.export.score_item`).

## Scoring

`kgprobe.export.score_item("{suite}", row["item"], answers)` reads an item's answers (one, or its samples, voted)
as kgprobe does and returns its per-item measures; their means over items are kgprobe's numbers:

{measures}
"""

_LM_UTILS = '''"""kgprobe's {suite} suite as an lm-evaluation-harness task: answers are read by kgprobe itself.

What the metrics equal in kgprobe:

{measures}
"""

import json
from pathlib import Path

from kgprobe.export import score_item

SUITE = "{suite}"
#: the prompts, beside this file: the folder can be moved (lm-eval loads them through ``custom_dataset``)
DATA = Path(__file__).resolve().parent / "{data}"
MEASURES = {names!r}


def load(**_metadata):
    """The task's test split, from the JSONL beside this file."""
    import datasets

    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return datasets.DatasetDict({{"test": datasets.Dataset.from_list(rows)}})


def doc_to_text(doc):
    """The prompt; a system instruction, when the prompt has one, goes first (the harness sends one user turn)."""
    return doc["prompt"] if not doc.get("system") else doc["system"] + "\\n\\n" + doc["prompt"]


def process_results(doc, results):
    # results: the item's samples (``repeats`` in the YAML, kept by the take_first_k filter), voted as kgprobe votes
    texts = [t for r in results for t in (r if isinstance(r, (list, tuple)) else [r])]
    got = score_item(SUITE, doc["item"], texts)
    return {{name: got.get(name) for name in MEASURES}}


def mean_defined(values):
    """The mean of the items a measure is defined on (an item of another task, or an answer without facts, has
    None)."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else float("nan")
'''

_LM_YAML = """# kgprobe's sampling for this suite: {n} sample(s) per prompt, temperature {temperature}, top_p {top_p}, at most
# {max_tokens} new tokens, voted as kgprobe votes them. A chat model needs lm-eval's --apply_chat_template (and
# --fewshot_as_multiturn where few-shot is used): without it the prompt is raw text, which a chat model such as
# SmolLM2-Instruct continues until max_gen_toks.
task: kgprobe_{suite}
custom_dataset: !function utils.load
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
{top_p_line}filter_list:
  - name: samples
    filter:
      - function: take_first_k
        k: {n}
metric_list:
{metrics}metadata:
  version: 1.0
"""

_INSPECT = '''"""kgprobe's {suite} suite as an inspect_ai task: `inspect eval {name} --model ...`. Answers are read by kgprobe.

What the metrics equal in kgprobe:

{measures}
"""

import json
import math
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.scorer import Score, Target, metric, scorer
from inspect_ai.solver import TaskState, solver

from kgprobe.export import score_item

SUITE = "{suite}"
DATA = Path(__file__).resolve().parent / "{data}"
MEASURES = {names!r}
#: kgprobe's sampling for this suite: SAMPLES answers per prompt, each asked on its own (see `samples_n`)
SAMPLES = {n}
CONFIG = GenerateConfig(temperature={temperature}, top_p={top_p}, max_tokens={max_tokens})


def samples():
    out = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        turns = ([ChatMessageSystem(content=r["system"])] if r.get("system") else []) + [ChatMessageUser(content=r["prompt"])]
        out.append(Sample(id=r["item_id"], input=turns, target=r["expected"],
                          metadata={{"item": r["item"], "task": r["task"], "breakdown": r["breakdown"]}}))
    return out


@metric
def mean_defined():
    """The mean over the samples a measure is defined on (NaN: an item of another task, an answer without facts)."""

    def compute(scores):
        values = [float(getattr(s, "score", s).value) for s in scores]
        kept = [v for v in values if not math.isnan(v)]
        return sum(kept) / len(kept) if kept else float("nan")

    return compute


@solver
def samples_n(n: int = SAMPLES):
    """n answers to one prompt, asked one at a time with CONFIG, so that a provider that ignores num_choices
    (inspect's local providers do, silently) still gives n samples; they are the output's choices."""

    async def solve(state: TaskState, generate) -> TaskState:
        model = get_model()
        outputs = [await model.generate(state.messages, config=CONFIG) for _ in range(n)]
        output = outputs[0]
        output.choices = [o.choices[0] for o in outputs if o.choices]
        state.output = output
        if output.choices:
            state.messages.append(output.choices[0].message)
        return state

    return solve


@scorer(metrics={{"*": [mean_defined()]}})
def kgprobe_reader():
    async def score(state: TaskState, target: Target) -> Score:
        # every choice is a sample (SAMPLES of them), voted as kgprobe votes them
        texts = [c.message.text for c in state.output.choices] or [state.output.completion]
        got = score_item(SUITE, state.metadata["item"], texts)
        return Score(value={{name: got.get(name, float("nan")) for name in MEASURES}}, answer=texts[0])

    return score


@task
def kgprobe_{ident}():
    return Task(dataset=MemoryDataset(samples(), name="kgprobe-{suite}"), solver=samples_n(), scorer=kgprobe_reader(),
                config=CONFIG)
'''


def export_suite(items: Sequence[Mapping[str, Any]], suite: str, fmt: str, out: str | Path, *,
                 provenance: Mapping[str, Any] | None = None, max_tokens: int = 128, n: int = 1,
                 temperature: float = 0.0, top_p: float = 1.0) -> list[Path]:  # fmt: skip
    """Write ``suite``'s closed-book prompts of ``items`` in format ``fmt`` (:data:`FORMATS`) under the folder
    ``out``; return the files written. ``n`` / ``temperature`` / ``top_p`` / ``max_tokens`` (the suite's sampling)
    set the lm-eval task's ``repeats`` and generation arguments and the inspect task's config and samples (asked one
    at a time, as some providers ignore ``num_choices``), so its samples are voted as kgprobe votes; the dataset
    card states them. ``provenance`` (``snapshot``, ``config_hash``, ``paper``, ``licence``)
    goes into the Hugging Face dataset card."""
    from kgprobe.suites import SUITES

    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if suite not in SUITES:
        raise ExportError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    harness = fmt in ("lm-eval", "inspect")
    records = (harness_records if harness else export_records)(SUITES[suite], items)
    if not records:
        raise ExportError(f"suite {suite!r} has no items to export as {fmt}; build them first (kgprobe run)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = out / f"{suite}.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    measures = MEASURES.get(suite, "correct: the share of items whose vote is the expected answer.")
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
            licence=p.get("licence") or "other", measures=textwrap.fill(measures, 116), n_samples=n,
            temperature=temperature, top_p=top_p, max_tokens=max_tokens), encoding="utf-8")
        return [out / "data" / "test.parquet", out / "README.md"]
    ident = _ident(suite)
    names = measure_names(suite, records)
    if fmt == "lm-eval":
        (out / "utils.py").write_text(_LM_UTILS.format(suite=suite, data=data.name, names=names,
                                                       measures=textwrap.fill(measures, 116)), encoding="utf-8")
        metrics = "".join(f"  - metric: {m}\n    aggregation: !function utils.mean_defined\n"
                          f"    higher_is_better: true\n" for m in names)
        (out / f"kgprobe_{ident}.yaml").write_text(
            _LM_YAML.format(suite=ident, max_tokens=max_tokens, n=n, metrics=metrics, top_p=top_p,
                            sample="true" if temperature > 0 else "false", temperature=temperature,
                            top_p_line=f"  top_p: {top_p}\n" if temperature > 0 else ""), encoding="utf-8")
        return [data, out / "utils.py", out / f"kgprobe_{ident}.yaml"]
    (out / f"kgprobe_{ident}.py").write_text(_INSPECT.format(
        suite=suite, ident=ident, name=f"kgprobe_{ident}.py", data=data.name, temperature=temperature, top_p=top_p,
        max_tokens=max_tokens, n=n, names=names, measures=textwrap.fill(measures, 116)), encoding="utf-8")
    return [data, out / f"kgprobe_{ident}.py"]
