"""Readable questions: relation keys in words, every template a complete sentence (no dangling word, no raw key),
on hand-built formulas of every operator and nesting, on the sample KG and on YAGO11k."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from kgprobe.suites.drowzee.templates import mtl2nl, phrase_type, relation_phrase, rule_question
from kgprobe.suites.drowzee.temporal import And, Atom, Finally, Globally, Next, Not, Or, Until

from .conftest import SAMPLE_SETTINGS

_ENDINGS = ("?", ". Am I right?", ". Please judge the truthfulness of this statement.")
_DANGLING = {"after", "before", "of", "the", "a", "an", "and", "or", "to", "in", "at", "by", "for", "from", "with",
             "is", "was", "that", "within", "until", "where", "same"}
_KEYLIKE = re.compile(r"^(?:\w*_\w*|[a-z]+[A-Z]\w*)$")


def _problems(question: str, keys: set[str]) -> list[str]:
    """What makes a question no complete sentence: its ending, a dangling last word, a raw relation key (an
    identifier-like key appearing as a word), unbalanced quotes, empty quotes or doubled spaces."""
    out = []
    if not question.endswith(_ENDINGS):
        out.append("no sentence ending")
    last = re.sub(r"[?.!\"]+$", "", question.split(". Am I right?")[0].split(". Please judge")[0]).split()[-1]
    if last.lower() in _DANGLING:
        out.append(f"dangling {last!r}")
    words = set(re.findall(r"[\w/]+", question))
    raw = sorted(k for k in keys if _KEYLIKE.match(k) and k in words)
    if raw:
        out.append(f"raw key {raw[0]!r}")
    if question.count('"') % 2 or '""' in question or "  " in question:
        out.append("quotes or spacing")
    return out


@pytest.mark.parametrize(("key", "words", "kind"), [
    ("diedIn", "died in", "active"), ("hasWonPrize", "won the prize", "active"), ("wasBornIn", "was born in", "active"),
    ("isMarriedTo", "is married to", "active"), ("worksAt", "works at", "active"), ("playsFor", "plays for", "active"),
    ("owns", "owns", "active"), ("graduatedFrom", "graduated from", "active"), ("created", "created", "active"),
    ("award_received", "award received", "noun"), ("hasChild", "child", "noun"), ("hasCapital", "capital", "noun"),
    ("isCitizenOf", "is a citizen of", "active"), ("isLeaderOf", "is a leader of", "active"),
    ("isKnownFor", "is known for", "active"), ("happenedIn", "happened in", "active"),
    ("participatedIn", "participated in", "active"), ("actedIn", "acted in", "active"),
    ("wroteMusicFor", "wrote music for", "active"), ("directed", "directed", "active"),
    ("imports", "imports", "active"),
    ("located_in_the_administrative_territorial_entity", "located in the administrative territorial entity",
     "passive"),
])  # fmt: skip
def test_relation_keys_become_words(key, words, kind) -> None:
    assert relation_phrase(key) == relation_phrase(key, key) == words
    assert phrase_type(words) == kind
    assert relation_phrase(key, "a proper label") == "a proper label"
    assert relation_phrase(key, "a proper label", {key: "from the config"}) == "from the config"


_A, _B = Atom("a"), Atom("b")
_LAYER = [lambda x, y: Not(x), lambda x, y: Next(x), lambda x, y: Finally(1, 3, x), lambda x, y: Globally(2, 5, x),
          lambda x, y: Until(0, 4, x, y)]


def _every_shape():
    singles = [_A] + [mk(_A, _B) for mk in _LAYER]
    yield from singles
    for outer in (And, Or):
        for x, y in itertools.product(singles, repeat=2):
            yield outer(x, y)
    for mk, inner in itertools.product(_LAYER, _LAYER):  # max_depth 2
        yield mk(inner(_A, _B), _B)


@pytest.mark.parametrize("kinds", [{}, {"a": "state", "b": "point"}])
def test_every_temporal_template_is_a_complete_sentence(kinds) -> None:
    labels = {"a": "Fred MacMurray is married to June Haver", "b": "Victorian era"}
    for f in _every_shape():
        q = mtl2nl(f, 1950, labels, kinds=kinds)
        assert _problems(q, set()) == [], (str(f), q)
        assert " after?" not in q and " after and " not in q, q
    assert mtl2nl(_A, 1950, labels, kinds={"a": "state"}) == 'Did "Fred MacMurray is married to June Haver" hold in the year 1950?'
    assert mtl2nl(Not(_A), 1950, labels).endswith('where "Event" is "Fred MacMurray is married to June Haver" happening?')


@pytest.mark.parametrize("kind", ["noun", "passive", "active"])
@pytest.mark.parametrize("same", [False, True])
@pytest.mark.parametrize("opposite", [False, True])
@pytest.mark.parametrize("period", [None, (1957, 1965), (1970, 1970)])
def test_every_rule_template_is_a_complete_sentence(kind, same, opposite, period) -> None:
    rel = {"noun": "director", "passive": "born in", "active": "plays for"}[kind]
    q = rule_question(kind, "Ann Smith", rel, "Bob Jones", opposite=opposite, same=same, period=period)
    assert _problems(q, set()) == [] and "Ann Smith" in q and "Bob Jones" in q, q
    assert not re.search(r"share the same (born|plays)", q)
    if period is not None:  # past tense over the period, nothing in the present
        assert (" from 1957 to 1965" if period[0] != period[1] else " in 1970") in q
        clause = re.sub(r"^(Is it true that|It is not true that|It is impossible for) ", "", q)
        assert not re.search(r"\b(is|plays|share|have totally)\b", clause), q


def test_dated_rule_questions_read_in_the_past_tense() -> None:
    assert rule_question("active", "Lynn Margulis", "is married to", "Carl Sagan", opposite=False,
                         period=(1957, 1965)) == "Is it true that Lynn Margulis was married to Carl Sagan from 1957 to 1965?"
    assert rule_question("active", "A", "plays for", "B", opposite=True, same=True, period=(1994, 1997)) == (
        "It is not true that A played for the same one as B from 1994 to 1997. Am I right?")


def _items_questions(con, snapshot, settings) -> tuple[list[str], set[str]]:
    from kgprobe.suites.base import ItemSource
    from kgprobe.suites.drowzee.suite import DrowzeeSettings, DrowzeeSuite

    keys = {k for k, in con.execute("SELECT key FROM relations").fetchall()}
    result = DrowzeeSuite().items(ItemSource(con=con, kg="x", snapshot_id=snapshot,
                                             settings=DrowzeeSettings(**settings), seed=0))
    return [r["question"] for r in result.items.to_pylist()], keys


def test_every_question_of_the_sample_reads_as_a_sentence(sample_kg) -> None:
    con, snapshot = sample_kg
    questions, keys = _items_questions(con, snapshot, SAMPLE_SETTINGS)
    assert len(questions) > 300
    bad = [(q, p) for q in questions for p in _problems(q, keys)]
    assert bad == [], bad[:5]


@pytest.mark.shared_data
def test_every_question_of_yago11k_reads_as_a_sentence(shared_data: Path) -> None:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    root = shared_data / "kg/temporal/yago11k"
    con = duckdb.connect()
    report = load_kg(con, KGSource(format="temporal", triples=[root / "train.tsv"], name="y"))
    con.execute('USE "y"')
    questions, keys = _items_questions(con, report.snapshot_id, dict(
        symmetric=["isMarriedTo"], same=["playsFor", "isAffiliatedTo"], n_formulas=300, per_rule=100, max_depth=2))
    assert len(questions) > 800 and {"diedIn", "hasWonPrize", "playsFor"} <= keys
    bad = [(q, p) for q in questions for p in _problems(q, keys)]
    assert bad == [], bad[:5]
    text = "\n".join(questions)
    # dated same_P pairs are asked in the past tense over the years both played there
    assert " died in " in text and " won the prize " in text and " played for the same one as " in text
    assert " plays for the same one as " not in text


def test_a_question_opens_with_a_capital() -> None:
    # a label written lower case (Wikidata's "stroke") opening Table 2's statement; a label's own capitals are kept
    assert rule_question("noun", "Chuck Berry", "cause of death", "stroke", opposite=True).startswith(
        "Stroke is not the cause of death of Chuck Berry.")
    assert rule_question("active", "iPhone", "uses", "iOS", opposite=False) == "Is it true that iPhone uses iOS?"
    assert rule_question("passive", "eBay", "founded in", "1995", opposite=True).startswith("It is impossible for eBay")
    assert rule_question("active", "stroke", "happened in", "Berlin", opposite=True).startswith("It is not true")
