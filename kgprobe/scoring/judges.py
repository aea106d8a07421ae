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

__all__ = ["judge_runner"]


def judge_runner(pool: BackendPool, store: ResponseStore, *, run_id: str | None = None, shard_size: int = 64,
                 log: Callable[[str], None] = lambda _msg: None) -> Callable[[ModelSpec, list[Prompt]], dict[str, dict[str, Any]]]:  # fmt: skip
    """A function that runs one judge on prompts and returns its verdict per prompt ``item_id`` (the judged
    answer's response id): raw text, error and the verdict's own response id. The judge's model comes from
    ``pool``, so a model that both answers and judges in one run is loaded once."""

    def judge(spec: ModelSpec, prompts: list[Prompt]) -> dict[str, dict[str, Any]]:
        unique = list({p.item_id: p for p in prompts}.values())
        if not unique:
            return {}
        run_generation(pool.get(spec), model=spec.name, prompts=unique, params=spec.params, store=store,
                       run_id=run_id, shard_size=shard_size, batch_size=spec.batch_size, log=log)
        rows = store.rows_for(spec.name, unique, spec.params).to_pylist()
        return {r["item_id"]: {"text": r["text"], "error": r["error"], "response_id": r["response_id"]} for r in rows}

    return judge
