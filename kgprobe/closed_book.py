"""Closed-book prompts for question items: each KG-FPQ item rendered with its format's evaluation prompt."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgprobe.generation import Prompt
from kgprobe.prompts import closed_book_template

__all__ = ["fpq_prompts"]


def fpq_prompts(items: Iterable[Mapping[str, Any]], *, formats: Sequence[str] = ("yn", "wh"), limit: int | None = None) -> list[Prompt]:
    """One :class:`Prompt` per KG-FPQ item of the given formats, in item order. ``limit`` keeps N items spread over
    the whole set (the N smallest item ids, which are content hashes), for a quick look at a large benchmark."""
    items = [it for it in items if it["format"] in formats]
    if limit is not None:
        keep = {it["id"] for it in sorted(items, key=lambda it: it["id"])[:limit]}
        items = [it for it in items if it["id"] in keep]
    out = []
    for it in items:
        if it["format"] not in formats:
            continue
        template = closed_book_template(it["format"])
        out.append(Prompt(item_id=it["id"], text=template.render(question=it["question"]), template_id=template.id,
                          gold=it["answer"], answer_kind=it["format"]))
    return out
