"""Drowzee's oracle on YAGO11k (issue 41, item 2): ordinary prose about the KG's facts is read through the relation
labels' phrase sets (shared with the claim checker), on rule items and on temporal items alike, with no phrase list
keyed by one data set's relation names. Every correct answer below is CO; every wrong temporal answer is judged
(never NT) and never CO."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgprobe.suites.base import ScoringOptions, breakdown_of
from kgprobe.suites.drowzee.suite import DrowzeeSettings, DrowzeeSuite

pytestmark = pytest.mark.shared_data

SUITE = DrowzeeSuite()
SETTINGS = DrowzeeSettings(symmetric=["isMarriedTo"], same=["playsFor"], n_formulas=900, per_rule=300)


@pytest.fixture(scope="module")
def rows(shared_data: Path) -> list[dict]:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg
    from kgprobe.suites.base import ItemSource

    root = shared_data / "kg/temporal/yago11k"
    con = duckdb.connect()
    report = load_kg(con, KGSource(format="temporal", triples=[root / f"{s}.tsv" for s in ("train", "valid", "test")],
                                   name="y"))
    con.execute('USE "y"')
    out = SUITE.items(ItemSource(con=con, kg="y", snapshot_id=report.snapshot_id, seed=0, settings=SETTINGS))
    con.close()
    return out.items.to_pylist()


@pytest.fixture(scope="module")
def embedder():
    from kgprobe.embedding import Embedder

    return Embedder()


def _rule(rows, rule, relation=None):
    return next(r for r in rows if r["task"] == "rule" and breakdown_of(r)["rule"] == rule
                and breakdown_of(r)["phrasing"] == "positive" and relation in (None, breakdown_of(r)["relation"]))


def _premises(item):
    ev = json.loads(item["evidence"])
    lab = {int(k): v for k, v in ev["entities"].items()}
    return [(lab[p["head"]], lab[p["tail"]]) for p in ev["premises"]], lab[ev["derived"]["object"]]


def _temporal(rows, relation, shape):
    """The first temporal item with an event of ``relation`` of one interval: ``point`` (an event relation),
    ``end`` (a state with an end year); with that event's name."""
    for r in rows:
        if r["task"] != "temporal":
            continue
        for name, e in json.loads(r["evidence"])["events"].items():
            if e["relation"] == relation and len(e["intervals"]) == 1:
                got = "point" if e["kind"] == "point" else ("end" if e["intervals"][0][1] is not None else "open")
                if got == shape:
                    return r, name
    raise AssertionError(f"no {shape} event of {relation}")


def _dated_answer(item, name, sentence, *, right=True):
    """The Yes/No, the item's other events as its gold sentences, and ``sentence`` for the event ``name``."""
    ev = json.loads(item["evidence"])
    others = [s for n, e in ev["events"].items() if n != name for s in ev["sentences"] if s.startswith(e["label"] + " ")]
    answer = "Yes." if (item["expected"] == "yes") == right else "No."
    return " ".join([answer, *others, sentence])


def _event(item, name):
    e = json.loads(item["evidence"])["events"][name]
    (head, tail), ((start, end),) = e["entities"], e["intervals"]
    return head, tail, start, end


def _score(cases, embedder):
    """Each (item, answer) scored on its own: the heuristic extractor's category and triples."""
    out = []
    for item, text in cases:
        response = {"response_id": "r", "item_id": item["item_id"], "model": "m", "sample_index": 0, "text": text,
                    "error": None}
        scored = SUITE.score([item], [response], model="m", scoring=ScoringOptions(embedder=embedder),
                             settings=SETTINGS)
        (sample,) = [s for s in scored.samples if s["judge"] == "heuristic"]
        out.append((sample["category"], text, sample["triples"]))
    return out


def test_fifteen_ordinary_phrasings_of_correct_answers_are_correct(rows, embedder) -> None:
    yes = lambda item: "Yes." if item["expected"] == "yes" else "No."  # noqa: E731
    cases = []
    married = _rule(rows, "symmetric")
    ((a, b),), _ = _premises(married)
    cases += [(married, f"{yes(married)} {a} married {b}."), (married, f"{yes(married)} {a} is the spouse of {b}.")]
    died = _rule(rows, "negation", "diedIn")
    ((a, b),), other = _premises(died)
    cases.append((died, f"{yes(died)} {a} passed away in {b}, not in {other}."))
    born = _rule(rows, "negation", "wasBornIn")
    ((a, b),), _ = _premises(born)
    cases.append((born, f"{yes(born)} {a}'s birthplace is {b}."))
    same = _rule(rows, "same")
    ((a, club), (b, club2)), _ = _premises(same)
    cases.append((same, f"{yes(same)} {a} was a player of {club}, and {b} was a player of {club2}."))
    for relation, shape, write in [
        ("isMarriedTo", "end", "{h} was the spouse of {t} from {s} to {e}."),
        ("diedIn", "point", "{h} passed away in {t} in {s}."),
        ("wasBornIn", "point", "{h} was born in {t} in {s}."),
        ("playsFor", "end", "{h} played for {t} from {s} to {e}."),
        ("hasWonPrize", "point", "{h} won the {t} in {s}."),
        ("created", "point", "{h} created {t} in {s}."),
        ("graduatedFrom", "point", "{h} graduated from {t} in {s}."),
        ("isAffiliatedTo", "end", "{h} was a member of {t} from {s} to {e}."),
        ("worksAt", "end", "{h} worked at {t} from {s} to {e}."),
        ("owns", "end", "{h} owned {t} from {s} to {e}."),
    ]:
        item, name = _temporal(rows, relation, shape)
        h, t, s, e = _event(item, name)
        cases.append((item, _dated_answer(item, name, write.format(h=h, t=t, s=s, e=e))))
    assert len(cases) == 15
    got = _score(cases, embedder)
    assert [c for c, _, _ in got] == ["CO"] * 15, [g for g in got if g[0] != "CO"]


def test_wrong_temporal_answers_are_judged_not_left_without_triples(rows, embedder) -> None:
    cases = []
    for relation, shape, write in [
        ("isMarriedTo", "end", "{h} married {t} in {s7}."),
        ("diedIn", "point", "{h} died in {t} in {s_3}."),
        ("diedIn", "point", "{h} passed away in Paris in {s}."),
        ("wasBornIn", "point", "{h} was born in {t} in {s2}."),
        ("playsFor", "end", "{h} played for {t} from {s3} to {e4}."),
        ("playsFor", "end", "{h} joined {t} in {s_5}."),
        ("hasWonPrize", "point", "{h} received the {t} in {s7}."),
        ("created", "point", "{h} created {t} in {s_3}."),
        ("graduatedFrom", "point", "{h} graduated from {t} in {s2}."),
        ("isAffiliatedTo", "end", "{h} was a member of {t} between {s_5} and {s_3}."),
        ("worksAt", "end", "{h} worked at {t} from {e4} to {e9}."),
        ("owns", "end", "{h} owned {t} until {s_3}."),
    ]:
        item, name = _temporal(rows, relation, shape)
        h, t, s, e = _event(item, name)
        sentence = write.format(h=h, t=t, s=s, s7=s + 7, s_3=s - 3, s2=s + 2, s3=s + 3, e4=e + 4 if e else 0,
                                s_5=s - 5, e9=e + 9 if e else 0)
        cases.append((item, _dated_answer(item, name, sentence, right=False)))
    got = _score(cases, embedder)
    assert all(c in ("EK", "EI", "OL") for c, _, _ in got), got
