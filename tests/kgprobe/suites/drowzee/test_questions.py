"""Temporal questions as the paper asks them: the §4.5 operator mix (single layer, nesting under And / Or, the plain
atom template), gold answers that no unknown end decides, one horizon, drop counts per rule, and the rewording step
that keeps every entity, number and negation; on YAGO11k, 1,800 temporal items in seconds."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path

import pytest

from kgprobe.suites.drowzee.facts import DatedEvent
from kgprobe.suites.drowzee.questions import (
    DROP_REASONS,
    OPERATORS,
    formula_from_json,
    reword_items,
    rewording_problems,
    sample_formula,
    temporal_items,
)
from kgprobe.suites.drowzee.temporal import depth, holds, horizon, operator


def _completion(ev: dict, rng: random.Random, how: str) -> dict[str, list[tuple[int, int]]]:
    """One reading of the evidence's events where every end the data leaves open is filled in: at the start year,
    at the horizon, or at a random year between."""
    hi = ev["domain"][1]
    out = {}
    for name, e in ev["events"].items():
        spans = []
        for s, end in e["intervals"]:
            if s > hi:
                continue
            if end is None:
                if e["open_end"] == "ongoing":
                    end = hi
                else:
                    end = {"start": s, "horizon": hi, "random": rng.randint(s, hi)}[how]
            spans.append((s, min(end, hi)))
        out[name] = spans
    return out


def _gold_is_independent_of_unknown_ends(rows: list[dict], seed: int = 0) -> list[str]:
    """The items whose gold answer changes for some reading of the unknown ends (empty: none)."""
    rng = random.Random(seed)
    bad = []
    for r in rows:
        ev = json.loads(r["evidence"])
        f = formula_from_json(ev["formula"])
        lo, hi = ev["domain"]
        for how in ("start", "horizon", "random", "random", "random"):
            if holds(f, _completion(ev, rng, how), ev["year"], lo=lo, hi=hi) != (r["expected"] == "yes"):
                bad.append(f"{ev['formula_text']} @ {ev['year']} ({how})")
                break
    return bad


def test_the_mix_is_single_layer_with_nesting_only_under_and_or() -> None:
    rng = random.Random(0)
    names = [f"e{i}" for i in range(30)]
    seen: Counter = Counter()
    for _ in range(3000):
        f = sample_formula(rng, names)
        seen[(operator(f), depth(f))] += 1
    assert {op for op, _ in seen} == set(OPERATORS)
    assert {d for (op, d) in seen if op not in ("and", "or", "atom")} == {1} and seen[("atom", 0)] > 0
    assert {d for (op, d) in seen if op in ("and", "or")} == {1, 2}  # atoms, or single-layer operators, joined
    deeper: Counter = Counter()
    for _ in range(3000):
        f = sample_formula(rng, names, max_depth=2)
        deeper[(operator(f), depth(f))] += 1
    assert max(d for (op, d) in deeper if op not in ("and", "or")) == 2 and deeper[("finally", 2)] > 0
    assert max(d for (op, d) in deeper if op in ("and", "or")) == 3
    with pytest.raises(ValueError, match="max_depth"):
        sample_formula(rng, names, max_depth=0)


def _open_events(n: int = 40, seed: int = 1) -> list[DatedEvent]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        s = rng.randint(1900, 2010)
        kind = rng.choice(["state", "state", "point", "event"])
        if kind == "point":
            ivs: tuple = ((s, s),)
        elif rng.random() < 0.5:
            ivs = ((s, None),)  # end unknown
        else:
            ivs = ((s, s + rng.randint(0, 30)),)
        out.append(DatedEvent(name=f"ev{i}", label=f"Event number {i}", intervals=ivs, kind=kind,
                              entities=(f"Event number {i}",)))
    out.append(DatedEvent(name="late", label="Late event", intervals=((2020, 2100),)))  # past the horizon
    return out


def test_gold_answers_never_depend_on_an_unknown_end_and_drops_are_counted() -> None:
    events = _open_events()
    report: dict = {}
    rows = temporal_items(events, n_formulas=120, seed=3, report=report)
    assert len(rows) == 240 and Counter(r["expected"] for r in rows) == {"yes": 120, "no": 120}
    assert _gold_is_independent_of_unknown_ends(rows) == []
    assert set(report["dropped"]) == set(DROP_REASONS)
    # G[a,b] over an event known only at its start year is true only if the end is later: dropped for that reason
    assert report["dropped"]["true_only_with_unknown_end"] > 0 and report["dropped"]["never_true"] > 0
    assert report["formulas_asked"] == 120
    assert report["formulas_tried"] == 120 + sum(report["dropped"].values())
    # so the old reading (an unknown end lasts to the horizon) gives every asked year the same answer too
    flipped = 0
    for r in rows:
        ev = json.loads(r["evidence"])
        stretched = {n: [(s, 2024 if e is None else e) for s, e in x["intervals"]] for n, x in ev["events"].items()}
        flipped += holds(formula_from_json(ev["formula"]), stretched, ev["year"]) != (r["expected"] == "yes")
    assert flipped == 0  # every asked year is decided without the unknown ends, so also under that reading


def test_one_horizon_bounds_every_question_and_its_look_ahead() -> None:
    events = _open_events(seed=2)
    for hi in (2024, 1990):
        rows = temporal_items(events, n_formulas=60, seed=4, domain=(1, hi))
        assert rows
        for r in rows:
            ev = json.loads(r["evidence"])
            f = formula_from_json(ev["formula"])
            assert ev["domain"] == [1, hi] and ev["year"] + horizon(f) <= hi
            assert all(e <= hi for x in ev["events"].values() for _, e in x["known"])
            assert holds(f, {n: x["known"] for n, x in ev["events"].items()}, ev["year"], hi=hi) == (r["expected"] == "yes")
        assert _gold_is_independent_of_unknown_ends(rows) == []


def test_the_gold_reasoning_states_no_end_the_data_does_not_give() -> None:
    rows = temporal_items(_open_events(), n_formulas=80, seed=5)
    for r in rows:
        ev = json.loads(r["evidence"])
        for x in ev["events"].values():
            ends = {e for _, e in x["intervals"]}
            for line in r["gold_answer"].splitlines()[1:]:
                if line.startswith(f"- {x['label']} ended in "):
                    assert int(line.rsplit(" ", 1)[1].rstrip(".")) in ends, line
            if None in ends:
                assert f"- {x['label']} started in {x['intervals'][-1][0]}, and its end is not recorded." in r["gold_answer"]


# ------------------------------------------------------------------ rewording (§3.5)


def _rule_row(question: str) -> dict:
    ev = {"derived": {"subject": 1, "object": 2}, "entities": {"1": "Marie Curie", "2": "Warsaw"}}
    return {"item_id": "a", "task": "rule", "question": question, "evidence": json.dumps(ev)}


@pytest.mark.parametrize(("reworded", "problem"), [
    ("Was Marie Curie born in Warsaw in 1867?", None),
    ("Was Curie born in Warsaw in 1867?", "entity dropped or changed"),
    ("Was Marie Curie born in Warsaw in 1868?", "numbers differ"),
    ("Was Marie Curie not born in Warsaw in 1867?", "negation added or dropped"),
    ("", "empty rewording"),
])  # fmt: skip
def test_a_rewording_that_changes_an_entity_a_year_or_a_negation_is_rejected(reworded, problem) -> None:
    original = "Is it true that Marie Curie is born in Warsaw in 1867?"
    got = rewording_problems(original, reworded, ["Marie Curie", "Warsaw"])
    assert (got == []) if problem is None else got[0].startswith(problem)
    report: dict = {}
    [row] = reword_items([_rule_row(original)], lambda prompts: [reworded], model="m", report=report)
    assert row["original_question"] == original
    assert row["question"] == (reworded if problem is None else original)
    assert report["reworded"] == (problem is None) and report["rejected"] == (problem is not None)
    assert ("reworded_by" in json.loads(row["evidence"])) == (problem is None)


def test_rewording_prompts_carry_the_question() -> None:
    asked = []
    reword_items([_rule_row("Is it true that Marie Curie is born in Warsaw?")],
                 lambda prompts: asked.extend(prompts) or ["Was Marie Curie born in Warsaw?"], model="m")
    assert len(asked) == 1 and asked[0].endswith("Question: Is it true that Marie Curie is born in Warsaw?")
    with pytest.raises(ValueError, match="answered 0 of 1"):
        reword_items([_rule_row("x")], lambda prompts: [], model="m")


# ------------------------------------------------------------------ YAGO11k


@pytest.fixture(scope="module")
def yago11k(shared_data: Path):
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    root = shared_data / "kg/temporal/yago11k"
    con = duckdb.connect()
    report = load_kg(con, KGSource(format="temporal", triples=[root / f"{s}.tsv" for s in ("train", "valid", "test")],
                                   name="yago11k"))
    con.execute('USE "yago11k"')
    yield con, report.snapshot_id
    con.close()


@pytest.mark.shared_data
def test_yago11k_1800_temporal_items_whose_gold_no_unknown_end_decides(yago11k) -> None:
    from kgprobe.suites.base import ItemSource, breakdown_of
    from kgprobe.suites.drowzee.suite import DrowzeeSettings, DrowzeeSuite

    con, snapshot = yago11k
    settings = DrowzeeSettings(rules=["symmetric"], symmetric=["isMarriedTo"], n_formulas=900)
    t0 = time.perf_counter()
    result = DrowzeeSuite().items(ItemSource(con=con, kg="yago11k", snapshot_id=snapshot, settings=settings, seed=0))
    seconds = time.perf_counter() - t0
    rows = [r for r in result.items.to_pylist() if r["task"] == "temporal"]
    assert len(rows) == 1800 and seconds < 60  # measured about 3 s on a 2-core machine
    assert _gold_is_independent_of_unknown_ends(rows) == []
    meta = result.metadata["temporal"]
    detected = {k: v["event"] for k, v in meta["event_relations"].items()}
    assert {k for k, v in detected.items() if v} == {"created", "diedIn", "graduatedFrom", "hasWonPrize", "wasBornIn"}
    by = Counter((breakdown_of(r)["operator"], int(breakdown_of(r)["depth"])) for r in rows)
    assert {op for op, _ in by} == set(OPERATORS)
    assert all(d == (0 if op == "atom" else 1) for op, d in by if op not in ("and", "or"))
    # And / Or alternate over atoms (depth 1) and over temporal operators (depth 2): the And row measures the
    # conjunction, not only nesting (it was 6 at depth 1 and 220 at depth 2)
    for op in ("and", "or"):
        assert abs(by[(op, 1)] - by[(op, 2)]) <= 2 * 2, (op, by[(op, 1)], by[(op, 2)])  # two items per formula
    assert result.metadata["temporal_items_by_operator_and_depth"] == {f"{o}:{d}": n for (o, d), n in sorted(by.items())}
    # the examples: an award is a point, and an unknown end is never "ended in 2024"
    for r in rows:
        ev = json.loads(r["evidence"])
        for x in ev["events"].values():
            if x["relation"] == "hasWonPrize":
                assert x["kind"] == "point" and all(s == e for s, e in x["intervals"])
            if any(e is None for _, e in x["intervals"]):
                assert f"{x['label']} ended in" not in r["gold_answer"]
    stored = result.metadata["derivations_already_stored"]["symmetric"]
    assert stored["stored"] / stored["candidates"] > 0.9  # YAGO11k states both directions of most marriages
    assert all(breakdown_of(r)["in_kg"] == "false" for r in result.items.to_pylist() if r["task"] == "rule")
