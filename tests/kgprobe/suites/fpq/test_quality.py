"""kgprobe.suites.fpq.quality: the blocking re-check of every edit (including its path) and the hop histogram."""

from __future__ import annotations

import math

import duckdb
import pytest

from kgprobe.suites.fpq import edits as fpq
from kgprobe.suites.fpq.quality import PAPER_HOP_COUNTS, edit_violations, hop_histogram
from kgprobe.sql import create_kg_tables

# 0 -R0-> 1 -R1-> 2 -R1-> 3 <-R1- 4; every entity has type A.
TRIPLES = [(0, 0, 1), (1, 1, 2), (2, 1, 3), (4, 1, 3)]


@pytest.fixture()
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    create_kg_tables(con)
    con.executemany("INSERT INTO entities VALUES (?, ?, ?)", [(i, f"e{i}", f"entity {i}") for i in range(5)])
    con.executemany("INSERT INTO relations VALUES (?, ?, ?)", [(0, "r0", "R0"), (1, "r1", "R1")])
    con.executemany("INSERT INTO triples VALUES (?, ?, ?)", TRIPLES)
    con.executemany("INSERT INTO entity_types VALUES (?, ?, ?)", [(i, "A", "a") for i in range(5)])
    return con


def _edit(method: str, false_object: int, hop: int | None, path: list[list[int]] | None) -> dict:
    return {"subject": 0, "relation": 0, "true_object": 1, "false_object": false_object, "method": method, "hop": hop,
            "path": path}  # fmt: skip


@pytest.mark.parametrize("directed", [True, False])
def test_edits_made_by_edit_pass(con, directed: bool) -> None:
    rows = [e.as_row() for s in range(16) for e in fpq.edit(con, [(0, 0, 1)], seed=s, directed=directed)]
    assert any(r["method"] == "NSC" and r["false_object"] is not None for r in rows)
    assert edit_violations(con, rows, directed=directed) == []


@pytest.mark.parametrize(
    ("edit", "directed", "problem"),
    [
        # 0 -> 1 -> 2 -> 3 <- 4: reaching 4 walks the last triple backwards
        (_edit("NSC", 4, 4, [[0, 0, 1], [1, 1, 2], [2, 1, 3], [4, 1, 3]]), True,
         "path does not walk head -> tail from the subject"),
        (_edit("NSC", 4, 4, [[0, 0, 1], [1, 1, 2], [2, 1, 3], [4, 1, 3]]), False, None),
        (_edit("NSC", 3, 3, [[0, 0, 1], [1, 1, 2]]), True, "path of 2 triples for hop 3"),
        (_edit("NSC", 3, 2, [[0, 0, 1], [1, 0, 3]]), True, "path holds a triple that is not in the KG"),
        (_edit("NSC", 3, 2, [[0, 0, 1], [1, 1, 2]]), True, "path does not end at the false object"),
        (_edit("NDC", 2, 7, [[0, 0, 1]] * 7), True, "NDC hop 7 outside 1..5; path does not walk head -> tail from the subject"),
        (_edit("NNSC", 2, 2, None), True, "NNSC hop 2 within 5"),
        (_edit("NNSR", 1, None, None), True, "false triple exists in the KG; false object equals the true object"),
    ],
)
def test_broken_edits_are_named(con, edit: dict, directed: bool, problem: str | None) -> None:
    bad = edit_violations(con, [edit], directed=directed)
    assert [b["problem"] for b in bad] == ([] if problem is None else [problem])


def test_hop_histogram_counts_near_edits_beside_the_paper() -> None:
    edits = [_edit("NSC", 2, 1, None)] * 3 + [_edit("NSC", 3, 2, None), _edit("NDC", 3, 5, None),
                                              _edit("NNSC", 4, None, None), _edit("NSC", None, None, None)]  # fmt: skip
    rows = {(r["method"], r["hop"]): r for r in hop_histogram(edits)}
    assert len(rows) == 10
    assert (rows[("NSC", 1)]["edits"], rows[("NSC", 1)]["share"]) == (3, 0.75)
    assert (rows[("NSC", 2)]["edits"], rows[("NSC", 3)]["edits"]) == (1, 0)
    assert (rows[("NDC", 5)]["edits"], rows[("NDC", 5)]["share"]) == (1, 1.0)
    # Table 11 pooled over art, people and place: NSC 1-hop (1988 + 858 + 237) of 14,860
    assert rows[("NSC", 1)]["paper_share"] == pytest.approx(3083 / 14860)
    assert sum(r["paper_share"] for r in rows.values() if r["method"] == "NDC") == pytest.approx(1.0)
    assert all(sum(v) == total for v, total in ((PAPER_HOP_COUNTS[d][m], t) for d, t in
               (("art", 4969), ("people", 4897), ("place", 4994)) for m in ("NSC", "NDC")))  # fmt: skip


def test_hop_histogram_without_near_edits_is_undefined() -> None:
    rows = hop_histogram([_edit("NNSR", 4, None, None)], max_hops=6)
    assert len(rows) == 12 and all(r["edits"] == 0 and math.isnan(r["share"]) for r in rows)
    assert all(math.isnan(r["paper_share"]) for r in rows if r["hop"] == 6)
