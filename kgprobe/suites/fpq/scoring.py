"""Scoring one model partition: read every answer, ask the judges about the generative ones, vote, and measure.

:func:`score_partition` is what the ``scores_closed`` / ``scores_grounded`` assets call. It returns four tables:

* ``samples``: one row per (item, sample, judge), the raw answer beside its label. Yes-No answers are read with
  :func:`kgprobe.scoring.answers.parse_yes_no` (given the question, so a plain restatement of the claim reads as an answer); WH answers get each judge's verdict (is the answer factual?), read the same
  way from the judge's raw output, which is kept too.
* ``items``: one row per (item, judge), the hard vote over the samples (:func:`kgprobe.suites.fpq.metrics.score_items`).
* ``metrics``: the KG-FPQ accuracies with n, a Wilson score interval and its kind in ``interval``
  (:func:`kgprobe.suites.fpq.metrics.fpq_metrics`).
* ``agreement``: Cohen's kappa of every pair of judges (:func:`kgprobe.scoring.stats.judge_agreement`).

Judges are configured models run through the same resumable runner and response store as the answers, so a judged
answer is never judged twice and a killed scoring run resumes. Which judge is asked what:

* a sample whose generation failed is not judged; its label is ``unknown``;
* every other WH answer is judged; the judge prompt is KG-FPQ's FPQ-Judge instruction with the question and the
  answer laid out as the paper's Table 9 (``Input: Q:... A: ... Output:``, template ``fpq-judge-v2``);
* the reference ``oracle`` judge knows the verdict only for the reference models' fixed answers
  (:data:`kgprobe.generation.backends.reference.ANSWER_TEXTS`): accepting a valid premise or rejecting a false one is factual.
  On free text its verdict is ``unknown`` (with that reason in ``judge_error``), and it is not asked: it cannot
  judge prose, and saying so beats a guess.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from kgprobe.scoring.answers import parse_yes_no
from kgprobe.generation.backends.reference import ANSWER_TEXTS, GOLD_LABELS
from kgprobe.generation import BackendPool, ModelSpec, Prompt
from kgprobe.suites.fpq.metrics import fpq_metrics, score_items
from kgprobe.scoring.stats import ALL_MODELS, judge_agreement, pooled_agreement
from kgprobe.generation.prompts import JUDGE_TEMPLATE_ID, render
from kgprobe.generation.store import ResponseStore
from kgprobe.scoring.judges import judge_runner, oracle_cannot_judge
from kgprobe.suites.base import AGREEMENT_SCHEMA, table as _table

__all__ = [
    "AGREEMENT_SCHEMA",
    "ALL_MODELS",
    "ITEM_SCHEMA",
    "METRIC_SCHEMA",
    "SAMPLE_SCHEMA",
    "ScoredPartition",
    "judge_prompt",
    "oracle_failures",
    "pooled_agreement",
    "reference_verdict",
    "score_partition",
]

_S, _I, _F, _B = pa.string(), pa.int64(), pa.float64(), pa.bool_()
#: One row per (item, sample, judge): the raw answer, its label, and for WH answers the judge's raw verdict.
SAMPLE_SCHEMA = pa.schema([
    ("response_id", _S), ("item_id", _S), ("model", _S), ("perturbation", _S), ("sample_index", _I), ("format", _S),
    ("judge", _S), ("text", _S), ("error", _S), ("label", _S), ("judge_text", _S), ("judge_error", _S),
    ("judge_response_id", _S),
])
#: One row per (item, judge): the vote over the samples and whether it is correct.
ITEM_SCHEMA = pa.schema([
    ("item_id", _S), ("model", _S), ("perturbation", _S), ("task", _S), ("judge", _S), ("format", _S), ("premise", _S),
    ("domain", _S), ("method", _S), ("hop", _I), ("relation_key", _S), ("tpq_item_id", _S), ("target", _S),
    ("labels", pa.list_(_S)), ("response_ids", pa.list_(_S)), ("n_samples", _I), ("n_yes", _I), ("n_no", _I),
    ("n_unknown", _I), ("vote", _S), ("correct", _B), ("decided", _B), ("gate", _B),
])
#: One row per metric and breakdown, with n, the items behind it and an interval; ``interval`` names its kind,
#: "wilson" (every proportion, :func:`kgprobe.scoring.stats.wilson_ci`) or "bootstrap" (other measures).
METRIC_SCHEMA = pa.schema([
    ("model", _S), ("perturbation", _S), ("suite", _S), ("task", _S), ("judge", _S), ("metric", _S), ("domain", _S),
    ("method", _S), ("hop", _I), ("n", _I), ("correct", _I), ("value", _F), ("ci_low", _F), ("ci_high", _F),
    ("interval", _S), ("item_ids", pa.list_(_S)),
])

_ORACLE_CANNOT = "oracle judge: the answer is not one of the reference texts, so its verdict is unknown"


def _canon(text: str | None) -> str:
    return " ".join((text or "").strip().lower().split())


# accepting ("yes") or rejecting ("no") the premise, keyed by the reference models' fixed WH texts
_WH_STANCE = {_canon(text): stance for stance, text in ANSWER_TEXTS["wh"].items()}


@dataclass(frozen=True)
class ScoredPartition:
    """The four tables of one scored partition (lists of dict rows; schemas in the stage's docs)."""

    samples: list[dict[str, Any]]
    items: list[dict[str, Any]]
    metrics: list[dict[str, Any]]
    agreement: list[dict[str, Any]]

    def tables(self) -> dict[str, pa.Table]:
        """The four tables as Arrow, with fixed schemas (an empty table keeps its columns)."""
        return {
            "samples": _table(self.samples, SAMPLE_SCHEMA),
            "items": _table(self.items, ITEM_SCHEMA),
            "metrics": _table(self.metrics, METRIC_SCHEMA),
            "agreement": _table(self.agreement, AGREEMENT_SCHEMA),
        }

    def unknown_share(self, task: str = "discriminative") -> float:
        """Share of the task's samples whose label is ``unknown`` (NaN when there are none)."""
        rows = [r for r in self.samples if (r["format"] == "yn") == (task == "discriminative")]
        return sum(r["label"] == "unknown" for r in rows) / len(rows) if rows else float("nan")


def reference_verdict(item: Mapping[str, Any], answer: str | None) -> str | None:
    """Whether ``answer`` to a WH item is factual (``"yes"`` / ``"no"``) when it is one of the reference models' fixed
    texts; None for any other text. This is the gold label the reference oracle judge answers from."""
    stance = _WH_STANCE.get(_canon(answer))
    gold = GOLD_LABELS["wh"].get(str(item.get("answer", "")).strip().lower())
    if stance is None or gold is None:
        return None
    return "yes" if stance == gold else "no"


def judge_prompt(item: Mapping[str, Any], answer: str, response_id: str) -> Prompt:
    """The FPQ-Judge prompt for one answer; its ``item_id`` is the answer's response id, so the judge's verdict
    links back to the exact answer it judged."""
    return Prompt(item_id=response_id, text=render(JUDGE_TEMPLATE_ID, question=item["question"], answer=answer),
                  template_id=JUDGE_TEMPLATE_ID, gold=reference_verdict(item, answer), answer_kind="yn")


def score_partition(
    items: Sequence[Mapping[str, Any]],
    responses: Sequence[Mapping[str, Any]],
    *,
    model: str,
    perturbation: str,
    judges: Sequence[ModelSpec] = (),
    store: ResponseStore | None = None,
    run_id: str | None = None,
    shard_size: int = 4096,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    log: Callable[[str], None] = lambda _msg: None,
    judge: Callable[[ModelSpec, list[Prompt]], dict[str, dict[str, Any]]] | None = None,
) -> ScoredPartition:
    """Score one model's answers (``responses``: rows of ``responses_closed`` / ``responses_grounded``) to the KG-FPQ
    ``items``. WH answers are judged by every judge in ``judges`` (needs ``store``); without judges, WH answers
    get no sample rows and no generative metrics. ``judge(spec, prompts)``, when given, runs a judge instead of a
    backend built here (the factory passes one that reuses the run's loaded models). Metric intervals are Wilson score intervals at ``confidence``
    (``resamples`` and ``seed`` are passed on to :func:`kgprobe.suites.fpq.metrics.fpq_metrics`, which uses them only for a
    bootstrap interval)."""
    by_id = {it["id"]: it for it in items}
    missing = sorted({r["item_id"] for r in responses} - set(by_id))
    if missing:
        raise ValueError(f"{len(missing)} response(s) of model {model!r} answer items that are not in fpq_items "
                         f"(first: {missing[:3]}); re-materialize the responses after changing the questions")
    if judges and store is None and judge is None:
        raise ValueError("judging WH answers needs the response store (or a judge runner)")
    samples: list[dict[str, Any]] = []
    wh = [r for r in responses if by_id[r["item_id"]]["format"] == "wh"]
    for r in responses:
        if by_id[r["item_id"]]["format"] != "yn":
            continue
        samples.append(_sample_row(r, by_id[r["item_id"]], perturbation, judge="",
                                   label=parse_yes_no(r["text"], question=by_id[r["item_id"]]["question"])
                                   if r["error"] is None else "unknown"))
    with BackendPool() as pool:  # a judge this call loads itself is loaded once and released at the end
        judge = judge or judge_runner(pool, store, run_id=run_id, shard_size=shard_size, log=log)  # type: ignore[arg-type]
        for spec in judges:
            verdicts = _verdicts(spec, judge, wh, by_id, model, log)
            for r in wh:
                v = verdicts.get(r["response_id"]) if r["error"] is None else None
                label = parse_yes_no(v["text"]) if v and v["error"] is None else "unknown"
                samples.append(_sample_row(r, by_id[r["item_id"]], perturbation, judge=spec.name, label=label,
                                           judge_text=v["text"] if v else None,
                                           judge_error=v["error"] if v else None,
                                           judge_response_id=v["response_id"] if v else None))
    item_rows = score_items(list(by_id.values()), samples, model=model, perturbation=perturbation)
    metrics = fpq_metrics(item_rows, resamples=resamples, confidence=confidence, seed=seed)
    return ScoredPartition(samples=samples, items=item_rows, metrics=metrics, agreement=judge_agreement(item_rows))


def _verdicts(spec: ModelSpec, judge: Callable[[ModelSpec, list[Prompt]], dict[str, dict[str, Any]]],
              wh: Sequence[Mapping[str, Any]], by_id: Mapping[str, Mapping[str, Any]], model: str,
              log: Callable[[str], None]) -> dict[str, dict[str, Any]]:
    """One judge's verdicts on the WH answers that did not fail, by response id."""
    prompts = [judge_prompt(by_id[r["item_id"]], r["text"], r["response_id"]) for r in wh if r["error"] is None]
    # the reference oracle is not asked about free text (it has no gold verdict): its verdict says so
    verdicts = {p.item_id: {"text": None, "error": _ORACLE_CANNOT, "response_id": None}
                for p in prompts if oracle_cannot_judge(spec, p)}
    prompts = [p for p in prompts if p.item_id not in verdicts]
    log(f"judge {spec.name}: {len(prompts)} WH answers of {model} ({len({p.text for p in prompts})} distinct)")
    if prompts:
        verdicts.update(judge(spec, prompts))
    return verdicts


def _sample_row(r: Mapping[str, Any], item: Mapping[str, Any], perturbation: str, *, judge: str, label: str,
                judge_text: str | None = None, judge_error: str | None = None,
                judge_response_id: str | None = None) -> dict[str, Any]:
    return {
        "response_id": r["response_id"], "item_id": r["item_id"], "model": r["model"], "perturbation": perturbation,
        "sample_index": int(r["sample_index"]), "format": item["format"], "judge": judge, "text": r["text"],
        "error": r["error"], "label": label, "judge_text": judge_text, "judge_error": judge_error,
        "judge_response_id": judge_response_id,
    }


def oracle_failures(metrics: Sequence[Mapping[str, Any]], reference_judges: set[str]) -> list[dict[str, Any]]:
    """Metric rows on which the oracle is not perfect: every discriminative metric must be 1.0 (unknown share 0.0),
    and every generative one judged by a reference oracle judge too; n == 0 rows are skipped."""
    bad = []
    for m in metrics:
        if m["task"] == "generative" and m["judge"] not in reference_judges:
            continue
        if not m["n"]:
            continue
        want = 0.0 if m["metric"] == "unknown_share" else 1.0
        if not math.isclose(m["value"], want):
            bad.append({k: m[k] for k in ("task", "judge", "metric", "domain", "method", "hop", "n", "value")})
    return bad
