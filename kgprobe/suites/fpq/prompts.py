"""Prompts for question items: each KG-FPQ item rendered with its format's evaluation prompt, closed-book or with
its subject's (perturbed) subgraph as KG context."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgprobe.generation import Prompt
from kgprobe.generation.prompts import closed_book_template, grounded_template, verbalise
from kgprobe.kg.queries import fpq_subject_query_id
from kgprobe.suites.base import limit_groups

__all__ = ["fpq_prompt", "fpq_prompts", "grounded_fpq_prompts", "limit_items", "premise_key"]


def premise_key(item: Mapping[str, Any]) -> tuple[int, int, int]:
    """The true triple ``(subject, relation, true_object)`` an item is about: its TPQ and every FPQ edited from it,
    in every format, share it."""
    return int(item["subject"]), int(item["relation"]), int(item["true_object"])


def limit_items(items: Iterable[Mapping[str, Any]], *, formats: Sequence[str] = ("yn", "wh"), limit: int | None = None) -> list[Mapping[str, Any]]:
    """The items of the given formats, or with ``limit``, every item of ``limit`` true triples.

    A limit keeps whole premise groups (a TPQ with all its FPQs, in every format), so the gated FPQ accuracy, which
    needs each FPQ's TPQ, is defined on a limited run too. The triples kept are the ones whose smallest item id
    (a content hash) is smallest: a spread over the whole set that does not change when the set grows elsewhere.
    """
    return limit_groups([it for it in items if it["format"] in formats], limit, group=premise_key,
                        item_id=lambda it: str(it["id"]), unit="true triples")


def fpq_prompt(item: Mapping[str, Any], knowledge: str | None = None) -> Prompt:
    """An item's prompt: KG-FPQ's Table 6 closed book, or with ``knowledge`` (the verbalised facts) OKGQA's D.1
    grounded prompt. The reference backends answer from ``gold``, the item's answer."""
    if knowledge is None:
        template = closed_book_template(item["format"])
        text = template.render(question=item["question"])
    else:
        template = grounded_template(item["format"])
        text = template.render(knowledge=knowledge, question=item["question"])
    return Prompt(item_id=item["id"], text=text, template_id=template.id, gold=item["answer"],
                  answer_kind=item["format"], system=template.system)


def fpq_prompts(items: Iterable[Mapping[str, Any]], *, formats: Sequence[str] = ("yn", "wh"), limit: int | None = None) -> list[Prompt]:
    """One :class:`Prompt` per KG-FPQ item of the given formats, in item order. ``limit`` keeps the items of N true
    triples (see :func:`limit_items`), for a quick look at a large benchmark."""
    return [fpq_prompt(it) for it in limit_items(items, formats=formats, limit=limit)]


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
    for it in limit_items(items, formats=formats, limit=limit):
        qid = fpq_subject_query_id(int(it["subject"]))
        prompts.append(fpq_prompt(it, verbalise(subgraphs.get(qid, ()), entity_labels, relation_labels)))
        used[it["id"]] = qid
    return prompts, used
