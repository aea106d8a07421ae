"""Estimated against actual: what each partition's plan said before generation, beside what the run then used.

The generation assets keep each partition's :class:`~kgprobe.generation.cost.PlanRow` (with the run that acted on
it); :func:`cost_rows` adds up, per model, suite and setting, the plan's estimates and the tokens and dollars of the
answers that run actually generated, so a reader sees how far ``kgprobe plan`` can be trusted for the next run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["cost_rows"]

_SUMS = ("planned_samples", "generated_samples", "input_tokens_est", "input_tokens", "output_tokens_est",
         "output_tokens", "cost_usd_est", "cost_usd")


def cost_rows(entries: Iterable[tuple[Mapping[str, Any], Iterable[Mapping[str, Any]]]]) -> list[dict[str, Any]]:
    """One row per (model, suite, setting) from ``(plan, generated)`` pairs: the plans' ``to_generate``,
    ``input_tokens``, ``output_tokens`` and ``cost_usd`` summed (``_est``), beside the samples, tokens and cost of the
    answers the plan's run generated in that partition (``generated``: response rows with ``tokens_in``,
    ``tokens_out``, ``cost``, ``error``; rows of one ``response_id``, items sharing a prompt, count once). A cost is None when nothing in the cell has one (unpriced models)."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for plan, generated in entries:
        key = (str(plan["model"]), str(plan["suite"]), str(plan.get("setting") or "closed"))
        row = out.setdefault(key, {"model": key[0], "suite": key[1], "setting": key[2], "partitions": 0,
                                   **{k: 0 for k in _SUMS}, "priced": False})
        row["partitions"] += 1
        row["planned_samples"] += plan["to_generate"] or 0
        row["input_tokens_est"] += plan["input_tokens"] or 0
        row["output_tokens_est"] += plan["output_tokens"] or 0
        if plan.get("cost_usd") is not None:
            row["cost_usd_est"] += plan["cost_usd"]
            row["priced"] = True
        seen: set[str] = set()
        for r in generated:
            if r.get("error") is not None:
                continue
            # items that share a prompt share its answer (one response_id): it was generated and paid for once
            rid = r.get("response_id")
            if rid is not None:
                if rid in seen:
                    continue
                seen.add(rid)
            row["generated_samples"] += 1
            row["input_tokens"] += r.get("tokens_in") or 0
            row["output_tokens"] += r.get("tokens_out") or 0
            row["cost_usd"] += r.get("cost") or 0.0
    rows = []
    for row in out.values():
        priced = row.pop("priced")
        if not priced:
            row["cost_usd_est"] = None
            row["cost_usd"] = row["cost_usd"] or None
        rows.append(row)
    return sorted(rows, key=lambda r: (r["model"], r["suite"], r["setting"]))
