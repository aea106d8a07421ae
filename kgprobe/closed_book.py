"""Prompts for question items: each KG-FPQ item rendered with its format's evaluation prompt, closed-book or with
its subject's (perturbed) subgraph as KG context."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgprobe.generation import Prompt
from kgprobe.prompts import closed_book_template, grounded_template, verbalise
from kgprobe.queries import fpq_subject_query_id

__all__ = ["fpq_prompts", "grounded_fpq_prompts"]


def _limited(items: Iterable[Mapping[str, Any]], formats: Sequence[str], limit: int | None) -> list[Mapping[str, Any]]:
    items = [it for it in items if it["format"] in formats]
    if limit is not None:
        keep = {it["id"] for it in sorted(items, key=lambda it: it["id"])[:limit]}
        items = [it for it in items if it["id"] in keep]
    return items


def fpq_prompts(items: Iterable[Mapping[str, Any]], *, formats: Sequence[str] = ("yn", "wh"), limit: int | None = None) -> list[Prompt]:
    """One :class:`Prompt` per KG-FPQ item of the given formats, in item order. ``limit`` keeps N items spread over
    the whole set (the N smallest item ids, which are content hashes), for a quick look at a large benchmark."""
    out = []
    for it in _limited(items, formats, limit):
        template = closed_book_template(it["format"])
        out.append(Prompt(item_id=it["id"], text=template.render(question=it["question"]), template_id=template.id,
                          gold=it["answer"], answer_kind=it["format"]))
    return out


def grounded_fpq_prompts(
    items: Iterable[Mapping[str, Any]],
    subgraphs: Mapping[str, Sequence[tuple[int, int, int]]],
    entity_labels: Mapping[int, str],
    relation_labels: Mapping[int, str],
    *,
    formats: Sequence[str] = ("yn", "wh"),
    limit: int | None = None,
) -> tuple[list[Prompt], dict[str, str]]:
    """KG-grounded prompts: each item with its subject's subgraph (``subgraphs``: query id -> triples, clean or
    perturbed) verbalised as facts. Returns the prompts and, per item, the query id whose subgraph it used; an item
    whose subject has no subgraph gets "(no facts)" rather than being dropped."""
    prompts, used = [], {}
    for it in _limited(items, formats, limit):
        qid = fpq_subject_query_id(int(it["subject"]))
        knowledge = verbalise(subgraphs.get(qid, ()), entity_labels, relation_labels)
        template = grounded_template(it["format"])
        prompts.append(Prompt(item_id=it["id"], text=template.render(knowledge=knowledge, question=it["question"]),
                              template_id=template.id, gold=it["answer"], answer_kind=it["format"]))
        used[it["id"]] = qid
    return prompts, used
