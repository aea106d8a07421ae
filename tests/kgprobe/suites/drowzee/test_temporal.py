"""MTL over dated events: the worked examples of Drowzee's §3.4, the closed form against Definition 1 year by year on
random formulas (hypothesis), and the real event lists and temporal KGs."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgprobe.suites.drowzee.temporal import (
    And,
    Atom,
    Finally,
    Globally,
    Next,
    Not,
    Or,
    Until,
    brute_force_years,
    depth,
    holds,
    normalize,
    satisfying_bounds,
    satisfying_years,
)

EVENTS = {"charles_dickens": [(1812, 1870)], "victorian_era": [(1837, 1901)]}
DICKENS, VICTORIAN = Atom("charles_dickens"), Atom("victorian_era")


@pytest.mark.parametrize(("formula", "year", "expected", "interval"), [
    (DICKENS, 1800, False, [(1812, 1870)]),
    (VICTORIAN, 1900, True, [(1837, 1901)]),
    (Finally(0, 40, VICTORIAN), 1800, True, [(1797, 1901)]),
    (Globally(30, 50, VICTORIAN), 1800, False, [(1807, 1851)]),
    (Next(VICTORIAN), 1836, True, [(1836, 1900)]),
    (Until(10, 20, DICKENS, VICTORIAN), 1800, False, [(1817, 1861)]),
    (Not(VICTORIAN), 1800, True, [(1, 1836), (1902, 2024)]),
    (And(DICKENS, VICTORIAN), 1900, False, [(1837, 1870)]),
    (Or(DICKENS, VICTORIAN), 1900, True, [(1812, 1901)]),
])  # fmt: skip
def test_the_worked_examples_of_section_3_4(formula, year, expected, interval) -> None:
    assert satisfying_years(formula, EVENTS) == interval
    assert holds(formula, EVENTS, year) is expected


def test_ben_10_finally_within_one_to_three_years() -> None:
    # Table 1 / Fig. 3: F[1,3](Ben_10) with Ben 10 aired 2005-2008 holds on [2002, 2007], so not in 2000
    events = {"ben_10": [(2005, 2008)]}
    assert satisfying_years(Finally(1, 3, Atom("ben_10")), events) == [(2002, 2007)]
    assert not holds(Finally(1, 3, Atom("ben_10")), events, 2000)


def test_the_domain_bounds_negation_and_are_parameters() -> None:
    assert satisfying_years(Not(VICTORIAN), EVENTS, lo=1800, hi=1950) == [(1800, 1836), (1902, 1950)]
    assert holds(Not(VICTORIAN), EVENTS, 2030) is False  # outside the default domain [1, 2024]
    assert holds(Not(VICTORIAN), EVENTS, 2030, hi=2100) is True


def test_until_needs_the_first_event_strictly_between_only() -> None:
    events = {"a": [(5, 6)], "b": [(8, 8)]}
    # d = 1 needs nothing of a: b at t + 1 = 8 gives t = 7
    assert holds(Until(1, 1, Atom("a"), Atom("b")), events, 7)
    # t = 4, d = 4: a must hold at 5, 6, 7 -> 7 fails
    assert not holds(Until(4, 4, Atom("a"), Atom("b")), events, 4)
    assert satisfying_years(Until(0, 5, Atom("a"), Atom("b")), events) == [(7, 8)]
    # with a through 7, t = 4 reaches b at 8 over 5, 6, 7; t = 3 would need a at 4
    assert satisfying_years(Until(0, 5, Atom("a"), Atom("b")), {"a": [(5, 7)], "b": [(8, 8)]}) == [(4, 8)]


def test_bad_intervals_are_refused() -> None:
    with pytest.raises(ValueError, match="Finally"):
        Finally(5, 2, DICKENS)
    with pytest.raises(ValueError, match="Until"):
        Until(-1, 2, DICKENS, VICTORIAN)


def test_normalize_merges_adjacent_and_overlapping() -> None:
    assert normalize([(5, 9), (1, 2), (3, 4), (20, 19), (8, 12)]) == [(1, 12)]


# ------------------------------------------------------------------ property: closed form == Definition 1

_NAMES = ("a", "b", "c")


def _intervals() -> st.SearchStrategy:
    return st.lists(st.tuples(st.integers(-5, 60), st.integers(0, 15)).map(lambda p: (p[0], p[0] + p[1])),
                    max_size=4)


def _formulas(max_depth: int) -> st.SearchStrategy:
    atom = st.sampled_from(_NAMES).map(Atom)
    bounds = st.tuples(st.integers(0, 6), st.integers(0, 6)).map(lambda p: (min(p), max(p)))

    def extend(inner: st.SearchStrategy) -> st.SearchStrategy:
        return st.one_of(
            inner.map(Not), inner.map(Next),
            st.tuples(inner, inner).map(lambda p: And(*p)), st.tuples(inner, inner).map(lambda p: Or(*p)),
            st.tuples(bounds, inner).map(lambda p: Finally(p[0][0], p[0][1], p[1])),
            st.tuples(bounds, inner).map(lambda p: Globally(p[0][0], p[0][1], p[1])),
            st.tuples(bounds, inner, inner).map(lambda p: Until(p[0][0], p[0][1], p[1], p[2])),
        )  # fmt: skip

    return st.recursive(atom, extend, max_leaves=6).filter(lambda f: depth(f) <= max_depth)


@settings(max_examples=400, deadline=None)
@given(formula=_formulas(3), events=st.fixed_dictionaries({n: _intervals() for n in _NAMES}),
       domain=st.tuples(st.integers(-3, 20), st.integers(20, 70)))
def test_closed_form_equals_year_by_year_definition_1(formula, events, domain) -> None:
    lo, hi = domain
    got = satisfying_years(formula, events, lo=lo, hi=hi)
    assert got == brute_force_years(formula, events, lo=lo, hi=hi)
    # sorted, disjoint, non-adjacent, inclusive
    assert all(s <= e for s, e in got) and all(a[1] + 1 < b[0] for a, b in itertools.pairwise(got))


@settings(max_examples=300, deadline=None)
@given(formula=_formulas(3), starts=st.fixed_dictionaries({n: st.integers(0, 50) for n in _NAMES}),
       closed=st.fixed_dictionaries({n: _intervals() for n in _NAMES}), ends=st.data())
def test_sure_and_possible_years_bound_every_reading_of_the_unknown_ends(formula, starts, closed, ends) -> None:
    # each event: some closed intervals and one interval from its start whose end is unknown (anywhere up to 60)
    lo, hi = 0, 60
    known = {n: normalize([*closed[n], (starts[n], starts[n])]) for n in _NAMES}
    possible = {n: normalize([*closed[n], (starts[n], hi)]) for n in _NAMES}
    sure, maybe = satisfying_bounds(formula, known, possible, lo=lo, hi=hi)
    for _ in range(3):
        reading = {n: normalize([*closed[n], (starts[n], ends.draw(st.integers(starts[n], hi)))]) for n in _NAMES}
        got = satisfying_years(formula, reading, lo=lo, hi=hi)
        inside = lambda spans, y: any(s <= y <= e for s, e in spans)  # noqa: E731
        for year in range(-70, 70):
            if inside(sure, year):
                assert inside(got, year), (str(formula), year)
            if not inside(maybe, year):
                assert not inside(got, year), (str(formula), year)
    # with no unknown end the two sets are the satisfying years
    assert satisfying_bounds(formula, closed, closed, lo=lo, hi=hi) == (satisfying_years(formula, closed, lo=lo, hi=hi),) * 2


@settings(max_examples=150, deadline=None)
@given(formula=_formulas(2), events=st.fixed_dictionaries({n: _intervals() for n in _NAMES}),
       year=st.integers(-20, 80))
def test_holds_agrees_with_the_interval_membership(formula, events, year) -> None:
    years = satisfying_years(formula, events, lo=0, hi=60)
    assert holds(formula, events, year, lo=0, hi=60) == any(s <= year <= e for s, e in years)


# ------------------------------------------------------------------ real event lists


def _random_formula(rng: random.Random, names: list[str], d: int):
    if d == 0:
        return Atom(rng.choice(names))
    op = rng.choice(["not", "and", "or", "next", "finally", "globally", "until"])
    a, b = sorted((rng.randint(0, 30), rng.randint(0, 30)))
    sub = lambda: _random_formula(rng, names, rng.randint(0, d - 1))
    return {"not": lambda: Not(sub()), "and": lambda: And(sub(), sub()), "or": lambda: Or(sub(), sub()),
            "next": lambda: Next(sub()), "finally": lambda: Finally(a, b, sub()),
            "globally": lambda: Globally(a, b, sub()), "until": lambda: Until(a, b, sub(), sub())}[op]()


@pytest.mark.shared_data
def test_drowzee_events_closed_form_equals_brute_force(shared_data: Path) -> None:
    from kgprobe.suites.drowzee.facts import events_from_records

    records = json.loads((shared_data / "kg/temporal/drowzee/events.json").read_text(encoding="utf-8"))
    events = events_from_records(records)
    assert len(events) > 1000 and events["ev_18th century"] == [(1701, 1800)]
    rng = random.Random(0)
    names = sorted(events)
    for _ in range(60):
        formula = _random_formula(rng, names, 2)
        assert satisfying_years(formula, events) == brute_force_years(formula, events), formula


@pytest.mark.shared_data
@pytest.mark.parametrize("kg", ["yago11k", "wikidata12k"])
def test_temporal_kgs_closed_form_equals_brute_force(shared_data: Path, kg: str) -> None:
    from kgprobe.suites.drowzee.facts import events_from_tsv

    events = events_from_tsv(shared_data / "kg/temporal" / kg / "train.tsv")
    assert len(events) > 5000
    assert all(s <= e for spans in events.values() for s, e in spans)
    rng = random.Random(1)
    names = sorted(events)
    for _ in range(40):
        formula = _random_formula(rng, names, 2)
        assert satisfying_years(formula, events) == brute_force_years(formula, events), formula


# ------------------------------------------------------------------ questions (Table 3) and their balance


def test_table_3_templates() -> None:
    from kgprobe.suites.drowzee.templates import mtl2nl

    labels = {"charles_dickens": "Charles Dickens", "victorian_era": "Victorian era"}
    assert mtl2nl(DICKENS, 1800, labels) == 'Did "Charles Dickens" happen at year 1800?'
    q = mtl2nl(Until(10, 20, DICKENS, VICTORIAN), 1800, labels)
    assert q.startswith('Did "Event1" happen continuously until "Event2" started, during the period of the 10th to '
                        'the 20th year after the year 1800, where "Event1" is "Charles Dickens" happening')
    assert mtl2nl(Next(VICTORIAN), 1836, labels).startswith('Did "Event" happen in the next year of 1836')
    assert mtl2nl(Not(VICTORIAN), 1800, labels).startswith('Did "Event" not happen at year 1800')
    assert "the 1st to the 3rd year" in mtl2nl(Finally(1, 3, VICTORIAN), 2000, labels)


@pytest.mark.shared_data
@pytest.mark.parametrize("source", ["events", "yago11k", "wikidata12k"])
def test_questions_are_balanced_and_answered_by_definition_1(shared_data: Path, source: str) -> None:
    from collections import Counter

    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg
    from kgprobe.suites.drowzee.facts import events_from_kg, events_from_list
    from kgprobe.suites.drowzee.questions import formula_from_json, temporal_items

    if source == "events":
        events = events_from_list(json.loads((shared_data / "kg/temporal/drowzee/events.json").read_text("utf-8")))
    else:
        con = duckdb.connect()
        load_kg(con, KGSource(format="temporal", triples=[shared_data / "kg/temporal" / source / "train.tsv"], name="t"))
        con.execute('USE "t"')
        events = events_from_kg(con)
    rows = temporal_items(events, n_formulas=80, seed=5)
    assert Counter(r["expected"] for r in rows) == {"yes": 80, "no": 80}
    ops = Counter(json.loads(r["evidence"])["formula"][0] for r in rows)
    assert set(ops) == {"atom", "not", "and", "or", "next", "finally", "globally", "until"}
    for r in rows:
        ev = json.loads(r["evidence"])
        f = formula_from_json(ev["formula"])
        assert depth(f) <= (2 if ev["formula"][0] in ("and", "or") else 1) and 1 <= ev["year"] <= 2024
        assert holds(f, {n: e["known"] for n, e in ev["events"].items()}, ev["year"]) == (r["expected"] == "yes")


def test_until_follows_definition_1_not_the_wording_as_the_readme_says() -> None:
    # Dickens is not alive in 1811, yet he lives through 1812-1836 and the Victorian era starts in 1837 (d = 26)
    assert holds(Until(1, 30, DICKENS, VICTORIAN), EVENTS, 1811) and not holds(DICKENS, EVENTS, 1811)
    assert satisfying_years(Until(1, 30, DICKENS, VICTORIAN), EVENTS) == [(1811, 1900)]
