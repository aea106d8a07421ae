"""Limited slices ask the KG facts other suites ask too: groups asserting a shared triple come first, ranked by the
triple alike in every suite, so two suites' slices pick the same facts (the consistency view needs them)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgprobe.project.plan import shared_triples
from kgprobe.suites.base import Suite, asserted_triple, limit_groups

TRIPLES = [f"E{i}|r|F{i}" for i in range(30)]


def _items(suite: str, triples: list[str], extra: int = 0) -> list[dict]:
    """One group per triple (an asserting item and one that asserts nothing), and ``extra`` groups without one."""
    out = []
    for t in triples:
        g = f"{suite}-{t}"
        out += [{"item_id": f"{suite}:{t}:a", "group_id": g, "evidence": json.dumps({"asserts": t.split("|")})},
                {"item_id": f"{suite}:{t}:b", "group_id": g, "evidence": json.dumps({"other": 1})}]
    out += [{"item_id": f"0{suite}{k}", "group_id": f"{suite}-plain{k}", "evidence": "{}"} for k in range(extra)]
    return out


def _triples(items: list[dict]) -> set[str]:
    return {t for it in items if (t := asserted_triple(it))}


@pytest.mark.parametrize("evidence", [None, "", "not json", "[1]", json.dumps({"asserts": ["a", "b"]}),
                                      json.dumps({"asserts": ["a", 1, "c"]})])
def test_an_item_without_a_well_formed_assert_asserts_nothing(evidence) -> None:
    assert asserted_triple({"evidence": evidence}) is None
    assert asserted_triple({"evidence": json.dumps({"asserts": ["a", "b", "c"]})}) == "a|b|c"


def test_without_prefer_the_smallest_item_ids_win() -> None:
    items = _items("s", TRIPLES[:5], extra=3)
    kept = limit_groups(items, 3, group=lambda it: it["group_id"], item_id=lambda it: it["item_id"])
    assert {it["group_id"] for it in kept} == {"s-plain0", "s-plain1", "s-plain2"}  # ids "0s..." sort first


def test_two_suites_pick_the_same_shared_facts() -> None:
    # suite a asks triples 0-19, suite b 10-29: 10 are shared; each has other groups whose ids sort first
    a, b = _items("a", TRIPLES[:20], extra=5), _items("b", TRIPLES[10:], extra=5)
    shared = _triples(a) & _triples(b)
    assert len(shared) == 10
    picked = [
        _triples(limit_groups(x, 4, group=lambda it: it["group_id"], item_id=lambda it: it["item_id"], prefer=shared))
        for x in (a, b)]
    assert picked[0] == picked[1] and len(picked[0]) == 4 and picked[0] <= shared
    # whole groups are kept, and more groups than shared facts fill up with the others by item id
    many = limit_groups(a, 12, group=lambda it: it["group_id"], item_id=lambda it: it["item_id"], prefer=shared)
    assert len(many) == 2 * 10 + 2 and _triples(many) >= shared
    assert {it["group_id"] for it in many} >= {"a-plain0", "a-plain1"}


def test_a_suite_selects_with_the_prefer_option() -> None:
    items = _items("a", TRIPLES[:20], extra=5)
    chosen = Suite().select(items, limit=2, prefer={TRIPLES[3], TRIPLES[7]})
    assert _triples(chosen) == {TRIPLES[3], TRIPLES[7]}


def _write(root, suite: str, items: list[dict]) -> None:
    folder = root / f"{suite}_items"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([{"item_id": it["item_id"], "evidence": it["evidence"]} for it in items]),
                   folder / "part-0.parquet")


def test_shared_triples_are_those_two_enabled_suites_assert(tmp_path) -> None:
    _write(tmp_path, "grapheval", _items("g", TRIPLES[:10]))
    _write(tmp_path, "drowzee", _items("d", TRIPLES[5:15]))
    _write(tmp_path, "erbench", _items("e", TRIPLES[14:20]))
    _write(tmp_path, "fpq", _items("f", TRIPLES[:30]))  # not enabled below: it counts for nothing
    enabled = {"grapheval", "drowzee", "erbench", "okgqa"}  # okgqa has no items written yet
    cfg = SimpleNamespace(warehouse=str(tmp_path / "kgprobe.duckdb"), has_suite=lambda name: name in enabled)
    assert shared_triples(cfg) == frozenset(TRIPLES[5:10]) | {TRIPLES[14]}
    # rewriting a suite's items is seen (the cache is keyed by the files)
    (tmp_path / "erbench_items" / "part-0.parquet").unlink()
    (tmp_path / "erbench_items").rmdir()
    _write(tmp_path, "erbench", _items("e", TRIPLES[:2]))
    assert shared_triples(cfg) == frozenset(TRIPLES[:2] + TRIPLES[5:10])
