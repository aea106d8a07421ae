"""Data-quality rules of the KG-FPQ stage, as pure functions over rows, so assets and tests share them.

Rows are the dicts of :meth:`kgprobe.fpq.Edit.as_row` and :meth:`kgprobe.fpq.FPQItem.as_row`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import duckdb

__all__ = [
    "count_table",
    "duplicate_questions",
    "edit_violations",
    "item_violations",
    "method_coverage",
]

_NEAR = {"NSC", "NDC"}


def edit_violations(con: duckdb.DuckDBPyConnection, edits: Sequence[Mapping[str, Any]], *, max_hops: int = 5) -> list[dict[str, Any]]:
    """Edits that break the method's definition: a false triple already in the KG, NSC/NDC hops outside
    1..max_hops, NN* hops within max_hops, or a false object equal to the true one."""
    made = [e for e in edits if e.get("false_object") is not None]
    bad: list[dict[str, Any]] = []
    if made:
        con.register("_fpq_false", _triples_table(made))
        try:
            existing = {
                tuple(r)
                for r in con.execute(
                    "SELECT f.head, f.relation, f.tail FROM _fpq_false f "
                    "JOIN triples t ON t.head = f.head AND t.relation = f.relation AND t.tail = f.tail"
                ).fetchall()
            }
        finally:
            con.unregister("_fpq_false")
    else:
        existing = set()
    for e in made:
        why = []
        if (e["subject"], e["relation"], e["false_object"]) in existing:
            why.append("false triple exists in the KG")
        if e["false_object"] == e["true_object"]:
            why.append("false object equals the true object")
        hop = e.get("hop")
        if e["method"] in _NEAR and not (hop is not None and 1 <= hop <= max_hops):
            why.append(f"{e['method']} hop {hop} outside 1..{max_hops}")
        if e["method"] not in _NEAR and hop is not None and hop <= max_hops:
            why.append(f"{e['method']} hop {hop} within {max_hops}")
        if why:
            bad.append({"subject": e["subject"], "relation": e["relation"], "method": e["method"],
                        "false_object": e["false_object"], "problem": "; ".join(why)})
    return bad


def _triples_table(edits: Sequence[Mapping[str, Any]]) -> Any:
    import pyarrow as pa

    return pa.table({
        "head": [e["subject"] for e in edits],
        "relation": [e["relation"] for e in edits],
        "tail": [e["false_object"] for e in edits],
    })


def item_violations(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """FPQs that do not contain their edited object's label, or still contain the true object's label."""
    bad = []
    for it in items:
        if it["premise"] != "fpq":
            continue
        q = it["question"]
        why = []
        if it["false_object_label"] not in q:
            why.append("edited object missing from the question")
        if it["true_object_label"] in q and it["true_object_label"] not in it["false_object_label"]:
            why.append("true object still in the question")
        if why:
            bad.append({"id": it["id"], "question": q, "problem": "; ".join(why)})
    return bad


def method_coverage(edits: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Per method, the share of true triples for which it found a false object."""
    tried: Counter[str] = Counter()
    found: Counter[str] = Counter()
    for e in edits:
        tried[e["method"]] += 1
        found[e["method"]] += e.get("false_object") is not None
    return {m: found[m] / tried[m] for m in sorted(tried)}


def duplicate_questions(items: Iterable[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """Question texts (per format) asked more than once, with their counts."""
    counts = Counter((it["format"], it["question"]) for it in items)
    return sorted(((q, n) for (fmt, q), n in counts.items() if n > 1), key=lambda x: (-x[1], x[0]))


def count_table(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Question counts per domain x method x hop (the shape of KG-FPQ's Table 11); TPQs under method 'TPQ'."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for it in items:
        method = it["method"] or "TPQ"
        hop = "-" if it["hop"] is None else str(it["hop"])
        counts[(it["domain"], method, hop)] += 1
    return [{"domain": d, "method": m, "hop": h, "questions": n} for (d, m, h), n in sorted(counts.items())]
