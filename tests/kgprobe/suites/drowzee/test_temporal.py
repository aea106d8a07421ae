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


# [R-Until] (§3.4, Fig. 11-12, with [R-Until-0]), checked by hand: Event2 at t + d and, for d >= 1, Event1 at every
# year t .. t + d - 1 (one stretch of Event1); d = 0 is Event2 at t.
_A1, _B1 = {"a": [(5, 6)], "b": [(8, 8)]}, {"a": [(5, 7)], "b": [(8, 8)]}
UNTIL_BY_HAND = [
    # 1. the paper's worked example: d = 20 reaches the era's start 1837 with Dickens alive 1817-1836
    (EVENTS, Until(10, 20, DICKENS, VICTORIAN), 1817, True),
    # 2. d = 10 from 1861 reaches 1871 (the era holds) with Dickens alive 1861-1870: Fig. 12's upper end
    (EVENTS, Until(10, 20, DICKENS, VICTORIAN), 1861, True),
    # 3. from 1862 every d >= 10 reaches 1872 or later, so Dickens would have to live through 1871 (he died 1870)
    (EVENTS, Until(10, 20, DICKENS, VICTORIAN), 1862, False),
    # 4. Dickens is not alive in 1811, so he cannot hold "continuously" from 1811 (Definition 1's text said yes)
    (EVENTS, Until(1, 30, DICKENS, VICTORIAN), 1811, False),
    # 5. from 1812 (his birth), d = 25 reaches 1837 with Dickens alive 1812-1836
    (EVENTS, Until(1, 30, DICKENS, VICTORIAN), 1812, True),
    # 6. [R-Until-0]: with 0 in the interval, b now is enough (b at 8), a need not hold at 8
    (_A1, Until(0, 5, Atom("a"), Atom("b")), 8, True),
    # 7. without 0, d >= 1 needs a at 8 itself: a is 5-6, so no
    (_A1, Until(1, 5, Atom("a"), Atom("b")), 8, False),
    # 8. a holds 5-7, b at 8: from 4 a does not hold at 4, so no d works
    (_B1, Until(1, 5, Atom("a"), Atom("b")), 4, False),
    # 9. from 5, d = 3: a at 5, 6, 7 and b at 8
    (_B1, Until(1, 5, Atom("a"), Atom("b")), 5, True),
    # 10. from 5 with d <= 2, t + d is 6 or 7, where b does not hold (d = 3 is outside [1, 2])
    (_B1, Until(1, 2, Atom("a"), Atom("b")), 5, False),
    # 11. a gap in Event1: a holds in 2000 and 2010-2015, b in 2012; from 2000 a fails in 2001-2009, so no, even
    # though the encoding's helper1 of the later stretch ([2012, 2016]) contains 2012 ("continuously" rules it out)
    ({"a": [(2000, 2000), (2010, 2015)], "b": [(2012, 2012)]}, Until(2, 20, Atom("a"), Atom("b")), 2000, False),
    # 12. same events from 2010: d = 2, a at 2010 and 2011, b at 2012
    ({"a": [(2000, 2000), (2010, 2015)], "b": [(2012, 2012)]}, Until(2, 20, Atom("a"), Atom("b")), 2010, True),
    # 13. b may start while a still holds or the year after a ends: a 1900-1910, b from 1905; from 1908, d = 3
    # reaches 1911 with a at 1908-1910 (helper1 ends at a's end + 1)
    ({"a": [(1900, 1910)], "b": [(1905, 1920)]}, Until(3, 3, Atom("a"), Atom("b")), 1908, True),
    # 14. from 1909, d = 3 reaches 1912 and a would have to hold in 1911
    ({"a": [(1900, 1910)], "b": [(1905, 1920)]}, Until(3, 3, Atom("a"), Atom("b")), 1909, False),
]


@pytest.mark.parametrize(("events", "formula", "year", "expected"), UNTIL_BY_HAND)
def test_until_follows_r_until_on_hand_checked_cases(events, formula, year, expected) -> None:
    assert holds(formula, events, year) is expected
    assert any(s <= year <= e for s, e in satisfying_years(formula, events)) is expected
    assert satisfying_years(formula, events) == brute_force_years(formula, events)


def test_until_reproduces_the_paper_interval_and_the_encoding_intersects_with_event1() -> None:
    assert satisfying_years(Until(10, 20, DICKENS, VICTORIAN), EVENTS) == [(1817, 1861)]  # Fig. 12
    # every year of an Until without 0 in its interval lies in Event1's years (the final "nm1 ∩ nm_f" of [R-Until])
    assert satisfying_years(Until(1, 30, DICKENS, VICTORIAN), EVENTS) == [(1812, 1870)]
    assert satisfying_years(Until(0, 5, Atom("a"), Atom("b")), _A1) == [(8, 8)]


def test_the_andrea_levy_until_item_is_no() -> None:
    # YAGO11k: "Andrea Levy created Small Island (novel)" 2004 (a point: created is an event relation);
    # "Billy Hughes is affiliated to Liberal Party of Australia" from 1944, end unknown (3000): surely 1944, maybe
    # 1944-2024. "Did Levy's novel happen continuously until Hughes's affiliation started, during the 1st to the
    # 11th year after 1943?" Event1 does not hold in 1943 (nor before 2004), so no d works: gold No whatever the end.
    levy, hughes = Atom("Andrea_Levy created Small_Island"), Atom("Billy_Hughes isAffiliatedTo Liberal_Party")
    known = {levy.name: [(2004, 2004)], hughes.name: [(1944, 1944)]}
    possible = {levy.name: [(2004, 2004)], hughes.name: [(1944, 2024)]}
    f = Until(1, 11, levy, hughes)
    sure, maybe = satisfying_bounds(f, known, possible)
    assert not any(s <= 1943 <= e for s, e in maybe)  # a "no" however long the affiliation lasted
    assert sure == [] and maybe == [(2004, 2004)]
    assert not holds(f, possible, 1943)


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
