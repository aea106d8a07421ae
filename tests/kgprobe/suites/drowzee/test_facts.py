"""Dated facts as events: each source's end convention (YAGO11k / Wikidata12k 3000 = unknown end), event relations
detected from the data as points at their start year, the horizon, and gold sentences that state no end the data
does not give."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from kgprobe.kg.ingest import KGSource, load_kg
from kgprobe.suites.drowzee.facts import DatedEvent, detect_event_relations, events_from_kg, events_from_list
from kgprobe.suites.drowzee.temporal import Atom, Globally, satisfying_bounds, satisfying_years
from kgprobe.suites.drowzee.templates import year_sentences

ROWS = """\
Fred_MacMurray\tisMarriedTo\tJune_Haver\t1954\t3000
Fred_MacMurray\tisMarriedTo\tLillian_Lamont\t1936\t1953
Hermann_Emil_Fischer\thasWonPrize\tDavy_Medal\t1890\t3000
Marie_Curie\thasWonPrize\tDavy_Medal\t1903\t3000
Pierre_Curie\thasWonPrize\tNobel_Prize\t1903\t1903
Some_Company\towns\tSome_Firm\t0\t1950
Some_Company\towns\tOther_Firm\t1960\t####
Some_Company\towns\tThird_Firm\t1950\t1970
Other_Company\towns\tThird_Firm\t1940\t1945
"""


@pytest.fixture()
def kg(tmp_path: Path):
    path = tmp_path / "facts.tsv"
    path.write_text(ROWS, encoding="utf-8")
    con = duckdb.connect()
    load_kg(con, KGSource(format="temporal", triples=[path], name="t"))
    con.execute('USE "t"')
    yield con
    con.close()


def _by_label(events: list[DatedEvent]) -> dict[str, DatedEvent]:
    return {e.label: e for e in events}


def test_end_3000_is_an_unknown_end_unless_the_source_says_ongoing(kg) -> None:
    report: dict = {}
    events = _by_label(events_from_kg(kg, report=report))
    haver = events["Fred MacMurray is married to June Haver"]
    assert haver.kind == "state" and haver.intervals == ((1954, None),) and haver.open
    # known to hold in its start year only; it may hold up to the horizon, not "until 2024"
    assert haver.known(2024) == [(1954, 1954)] and haver.possible(2024) == [(1954, 2024)]
    assert events["Fred MacMurray is married to Lillian Lamont"].known(2024) == [(1936, 1953)]
    assert events["Some Company owns Other Firm"].intervals == ((1960, None),)  # "####" is unknown too
    assert report["facts_without_start"] == 1 and report["facts_with_unknown_end"] == 2
    ongoing = _by_label(events_from_kg(kg, open_end="ongoing"))
    assert ongoing["Fred MacMurray is married to June Haver"].known(2024) == [(1954, 2024)]
    assert not ongoing["Fred MacMurray is married to June Haver"].open
    assert ongoing["Some Company owns Other Firm"].known(2024) == [(1960, 1960)]  # "####" stays unknown
    with pytest.raises(ValueError, match="open_end"):
        events_from_kg(kg, open_end="forever")


def test_event_relations_are_detected_from_the_data_and_read_as_points(kg) -> None:
    report: dict = {}
    events = _by_label(events_from_kg(kg, report=report))
    detected = report["event_relations"]
    assert detected["hasWonPrize"] == {"facts": 3, "share": 1.0, "event": True, "source": "data"}
    assert detected["isMarriedTo"]["share"] == 0.5 and not detected["isMarriedTo"]["event"]
    fischer = events["Hermann Emil Fischer won the prize Davy Medal"]
    assert fischer.kind == "point" and fischer.intervals == ((1890, 1890),) and fischer.possible(2024) == [(1890, 1890)]
    # the example: G[5,6](Fischer won the Davy Medal) at 1941 was "yes" with the medal held to 2024
    f = Globally(5, 6, Atom(fischer.name))
    sure, maybe = satisfying_bounds(f, {fischer.name: fischer.known()}, {fischer.name: fischer.possible()})
    assert sure == maybe == [] and 1941 in range(1890, 2025)
    assert satisfying_years(f, {fischer.name: [(1890, 2024)]}) == [(1885, 2018)]  # the old reading
    # overrides per relation, both ways
    over = _by_label(events_from_kg(kg, event_relations={"hasWonPrize": False, "isMarriedTo": True}, report=report))
    assert over["Hermann Emil Fischer won the prize Davy Medal"].intervals == ((1890, None),)
    assert over["Fred MacMurray is married to Lillian Lamont"].intervals == ((1936, 1936),)
    assert report["event_relations"]["isMarriedTo"]["source"] == "config"


def test_detection_threshold_and_what_counts() -> None:
    rows = [("r", 1900, None, False), ("r", 1900, 1900, False), ("r", 1900, 1950, False), ("r", None, None, False),
            ("s", 1900, None, True), ("s", 1900, 1950, False)]
    got = detect_event_relations(rows, threshold=0.6)
    assert got["r"]["facts"] == 3 and got["r"]["share"] == round(2 / 3, 4) and got["r"]["event"]
    assert got["s"]["share"] == 0.5 and not got["s"]["event"]
    # under the "ongoing" convention a 3000 end is a state still true, not a missing end
    assert detect_event_relations(rows, open_end="ongoing")["s"]["share"] == 0.0


def test_one_horizon_for_kg_facts_and_event_lists() -> None:
    listed = events_from_list([{"type": "begin", "relation": "ev_21st century", "year": 2001},
                               {"type": "end", "relation": "ev_21st century", "year": 2100},
                               {"type": "begin", "relation": "ev_open", "year": 2010}])
    century, opened = listed
    kg_fact = DatedEvent(name="x", label="x", intervals=((2001, None),), kind="state", open_end="ongoing")
    for horizon in (2024, 2030):
        assert century.known(horizon) == kg_fact.known(horizon) == [(2001, horizon)]
    assert century.intervals == ((2001, 2100),)  # the data's end is kept for the reasoning, cut for evaluation
    assert opened.intervals == ((2010, None),) and opened.open and opened.known(2024) == [(2010, 2010)]
    late = DatedEvent(name="y", label="y", intervals=((2030, 2040),))
    assert late.known(2024) == [] and late.known(2035) == [(2030, 2035)]


@pytest.mark.parametrize(("end", "kind", "open_end", "expected"), [
    (1953, "state", "unknown", ["E started in 1936.", "E ended in 1953."]),
    (None, "state", "unknown", ["E started in 1936, and its end is not recorded."]),
    (None, "state", "ongoing", ["E started in 1936 and is still ongoing."]),
    (1936, "point", "unknown", ["E happened in 1936."]),
])  # fmt: skip
def test_gold_sentences_state_no_end_the_data_does_not_give(end, kind, open_end, expected) -> None:
    assert year_sentences("E", 1936, end, kind=kind, open_end=open_end) == expected
