"""Data-quality rules of the KG-FPQ stage, as pure functions over rows, so assets and tests share them.

Rows are the dicts of :meth:`kgprobe.suites.fpq.edits.Edit.as_row` and :meth:`kgprobe.suites.fpq.edits.FPQItem.as_row`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import duckdb

__all__ = [
    "PAPER_HOP_COUNTS",
    "count_table",
    "duplicate_questions",
    "edit_violations",
    "hop_histogram",
    "item_violations",
    "method_coverage",
]

_NEAR = {"NSC", "NDC"}

#: KG-FPQ's Table 11: NSC and NDC false-premise questions per domain at hops 1..5 (each row sums to the domain's
#: total: art 4,969, people 4,897, place 4,994). The shape a run's hop histogram is compared with.
PAPER_HOP_COUNTS: dict[str, dict[str, tuple[int, ...]]] = {
    "art": {"NSC": (1988, 342, 500, 748, 1391), "NDC": (764, 168, 389, 1038, 2610)},
    "people": {"NSC": (858, 370, 937, 807, 1925), "NDC": (923, 234, 575, 943, 2222)},
    "place": {"NSC": (237, 244, 610, 1133, 2770), "NDC": (403, 150, 509, 1043, 2889)},
}


def edit_violations(con: duckdb.DuckDBPyConnection, edits: Sequence[Mapping[str, Any]], *, max_hops: int = 5,
                    directed: bool = True) -> list[dict[str, Any]]:  # fmt: skip
    """Edits that break the method's definition: a false triple already in the KG, NSC/NDC hops outside
    1..max_hops, NN* hops within max_hops, a false object equal to the true one, or an NSC/NDC path that is not a
    chain of KG triples from the subject to the false object of ``hop`` steps (walked head -> tail when
    ``directed``)."""
    made = [e for e in edits if e.get("false_object") is not None]
    bad: list[dict[str, Any]] = []
    existing = _in_kg(con, [(e["subject"], e["relation"], e["false_object"]) for e in made])
    steps = _in_kg(con, [tuple(t) for e in made for t in (e.get("path") or ())])
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
        if e["method"] in _NEAR and hop is not None:
            problem = _path_problem(e, [tuple(t) for t in e.get("path") or ()], steps, directed)
            if problem:
                why.append(problem)
        if why:
            bad.append({"subject": e["subject"], "relation": e["relation"], "method": e["method"],
                        "false_object": e["false_object"], "problem": "; ".join(why)})
    return bad


def _path_problem(e: Mapping[str, Any], path: list[tuple], in_kg: set[tuple], directed: bool) -> str | None:
    if len(path) != e["hop"]:
        return f"path of {len(path)} triples for hop {e['hop']}"
    if any(t not in in_kg for t in path):
        return "path holds a triple that is not in the KG"
    at = e["subject"]
    for h, _, t in path:
        if at != h and (directed or at != t):
            return "path does not walk head -> tail from the subject" if directed else "path is not a chain"
        at = t if at == h else h
    return None if at == e["false_object"] else "path does not end at the false object"


def _in_kg(con: duckdb.DuckDBPyConnection, triples: Sequence[tuple]) -> set[tuple]:
    """The given (head, relation, tail) triples that are in the KG's ``triples`` table."""
    if not triples:
        return set()
    import pyarrow as pa

    heads, relations, tails = (list(c) for c in zip(*triples, strict=True))
    con.register("_fpq_check", pa.table({"head": heads, "relation": relations, "tail": tails}))
    try:
        return {
            tuple(r)
            for r in con.execute(
                "SELECT f.head, f.relation, f.tail FROM _fpq_check f "
                "JOIN triples t ON t.head = f.head AND t.relation = f.relation AND t.tail = f.tail"
            ).fetchall()
        }
    finally:
        con.unregister("_fpq_check")


def hop_histogram(edits: Iterable[Mapping[str, Any]], *, max_hops: int = 5) -> list[dict[str, Any]]:
    """Per NSC/NDC method and hop 1..max_hops: this run's edits and share, beside the paper's share (Table 11,
    pooled over its three domains; hops beyond 5 have no paper value). Why call it: the hop mix decides how hard
    the near edits are, and ``hop_sampling`` changes it, so a run should show it next to the paper's."""
    counts: Counter[tuple[str, int]] = Counter()
    for e in edits:
        if e["method"] in _NEAR and e.get("false_object") is not None and e.get("hop") is not None:
            counts[(e["method"], int(e["hop"]))] += 1
    rows = []
    for method in ("NSC", "NDC"):
        total = sum(n for (m, _), n in counts.items() if m == method)
        paper = [sum(d[method][k] for d in PAPER_HOP_COUNTS.values()) for k in range(5)]
        for hop in range(1, max_hops + 1):
            n = counts[(method, hop)]
            rows.append({
                "method": method, "hop": hop, "edits": n, "share": n / total if total else float("nan"),
                "paper_share": paper[hop - 1] / sum(paper) if hop <= 5 else float("nan"),
            })  # fmt: skip
    return rows


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
