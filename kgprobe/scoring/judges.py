"""Judges: a configured model reading another model's open answer, run through the same runner and response store
as the answers, so a judged answer is never judged twice and a killed run resumes.

    >>> judge = judge_runner(pool, store, run_id=run_id)
    >>> verdicts = judge(spec, prompts)       # {prompt.item_id: {"text", "error", "response_id"}}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgprobe.generation.records import ModelSpec, Prompt
from kgprobe.generation.runner import BackendPool, run_generation
from kgprobe.generation.store import ResponseStore

__all__ = ["ORACLE_CANNOT_JUDGE", "judge_runner", "oracle_cannot_judge"]

#: The verdict's error for a prompt the reference oracle judge is not asked: it has no gold verdict (free text).
ORACLE_CANNOT_JUDGE = ("oracle judge: the answer is not one of the reference texts, so it has no gold verdict and "
                       "is not asked")


def oracle_cannot_judge(spec: ModelSpec, prompt: Prompt) -> bool:
    """Whether ``spec`` is the reference oracle and ``prompt`` has no gold verdict: its failure is certain, and
    asking would only store the same failure again on every run."""
    return spec.backend == "reference" and getattr(spec.config, "kind", None) == "oracle" and prompt.gold is None


def judge_runner(pool: BackendPool, store: ResponseStore, *, run_id: str | None = None, shard_size: int = 4096,
                 log: Callable[[str], None] = lambda _msg: None, max_failed_share: float | None = None
                 ) -> Callable[[ModelSpec, list[Prompt]], dict[str, dict[str, Any]]]:  # fmt: skip
    """A function that runs one judge on prompts and returns its verdict per prompt ``item_id`` (the judged
    answer's response id): raw text, error and the verdict's own response id. The judge's model comes from
    ``pool``, so a model that both answers and judges in one run is loaded once. The reference oracle is not asked
    what it has no gold verdict for (:func:`oracle_cannot_judge`): that verdict's error says so. A judge whose failed
    requests pass ``max_failed_share`` of its prompts fails the run (:func:`run_generation`)."""

    def judge(spec: ModelSpec, prompts: list[Prompt]) -> dict[str, dict[str, Any]]:
        unique = list({p.item_id: p for p in prompts}.values())
        verdicts = {p.item_id: {"text": None, "error": ORACLE_CANNOT_JUDGE, "response_id": None}
                    for p in unique if oracle_cannot_judge(spec, p)}
        unique = [p for p in unique if p.item_id not in verdicts]
        if not unique:
            return verdicts
        run_generation(pool.get(spec), model=spec.name, prompts=unique, params=spec.params, store=store,
                       run_id=run_id, shard_size=shard_size, batch_size=spec.batch_size, log=log,
                       max_failed_share=max_failed_share)
        rows = store.rows_for(spec.name, unique, spec.params).to_pylist()
        verdicts.update({r["item_id"]: {"text": r["text"], "error": r["error"], "response_id": r["response_id"],
                                        "logprobs": r.get("logprobs")} for r in rows})
        return verdicts

    return judge
