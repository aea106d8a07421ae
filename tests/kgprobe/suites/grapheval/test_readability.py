"""The readability gate: each check on statements that fail it and on near misses that must pass, the seeded
sample, the error that names examples and the setting, and statements whose labels are ids counted apart."""

from __future__ import annotations

import pyarrow as pa
import pytest

from kgprobe.suites.grapheval.readability import CHECKS, ReadabilityError, check_readability, problems


@pytest.mark.parametrize(("text", "head", "tail", "found"), [
    # the statements
    ("The film release region of the release date s of Cloud Atlas is Israel.", "Cloud Atlas", "Israel",
     ["dangling_s"]),
    ("Zimbabwe is the deals with Botswana.", "Zimbabwe", "Botswana", ["is_the_verb"]),
    ("Africa is the countries within South Sudan.", "Africa", "South Sudan", ["is_the_verb"]),
    ("Mahatma Gandhi signed the languages spoken, written, or English.", "Mahatma Gandhi", "English",
     ["dangling_conjunction"]),
    ("Q102813 was unmarried partner Q4612.", "Q102813", "Q4612", ["unresolved_id", "missing_article"]),
    ("The continent of Ghana is Q15.", "Ghana", "Q15", ["unresolved_id"]),
    ("The genre of /m/0abc is Drama.", "/m/0abc", "Drama", ["unresolved_id"]),
    ("Brazil was exported to the exported to Sierra Leone.", "Brazil", "Sierra Leone", ["doubled_words"]),
    ("{head} contains Paris.", "France", "Paris", ["placeholder"]),
    # near misses that read well: a label's own words, a label's "(s)", "is a <noun> of", a participle
    ("Duran Duran was influenced by The The.", "Duran Duran", "The The", []),
    ("One of the winners of Grammy Award for Best Soloist(s) Performance is Yo-Yo Ma.",
     "Grammy Award for Best Soloist(s) Performance", "Yo-Yo Ma", []),
    ("Ghana is a member of United Nations.", "Ghana", "United Nations", []),
    ("French is spoken in France.", "French", "France", []),
    ("Cloud Atlas has a release date whose release region is Israel.", "Cloud Atlas", "Israel", []),
    ("Bosnia and Herzegovina has diplomatic relations with Serbia.", "Bosnia and Herzegovina", "Serbia", []),
    ("South Sudan is one of the countries within Africa.", "Africa", "South Sudan", []),
    ("The capital of France is the Paris of 2024.", "France", "the Paris of 2024", []),
])
def test_problems(text: str, head: str, tail: str, found: list[str]) -> None:
    assert problems(text, head, tail) == found
    assert set(found) <= set(CHECKS)


def _items(texts: list[tuple[str, str, str]]) -> pa.Table:
    return pa.table({"question": [t[0] for t in texts], "head_label": [t[1] for t in texts],
                     "tail_label": [t[2] for t in texts]})


def test_the_gate_fails_with_examples_and_the_setting_to_change() -> None:
    good = [(f"Person {i} was born in Town {i}.", f"Person {i}", f"Town {i}") for i in range(90)]
    bad = [(f"Town {i} is the countries within Land {i}.", f"Town {i}", f"Land {i}") for i in range(10)]
    items = _items(good + bad)
    report = check_readability(items, sample=100, max_share=0.2, seed=3)  # 10% fail: under 20%
    assert (report.checked, report.failing, report.by_check["is_the_verb"]) == (100, 10, 10)
    assert report.share == pytest.approx(0.1) and report.interval[0] < 0.1 < report.interval[1]
    assert report.examples[0]["checks"] == "is_the_verb"
    with pytest.raises(ReadabilityError, match=r"10 of 100 .*max_unreadable_share.*is the countries within"):
        check_readability(items, sample=100, max_share=0.05, seed=3)


def test_the_sample_is_seeded_and_id_labels_are_counted_apart() -> None:
    rows = [(f"Person {i} was born in Town {i}.", f"Person {i}", f"Town {i}") for i in range(500)]
    rows += [(f"The continent of Q{i} is Q15.", f"Q{i}", "Q15") for i in range(500)]
    items = _items(rows)
    a = check_readability(items, sample=200, seed=1)
    b = check_readability(items, sample=200, seed=1)
    c = check_readability(items, sample=200, seed=2)
    assert a == b and (a.checked, a.id_labels) != (c.checked, c.id_labels)
    assert a.checked + a.id_labels == 200 and a.failing == 0  # ids are the labels' fault, not the templates'
    assert 0.35 < a.id_label_share < 0.65
    assert a.as_metadata()["id_label_statements"] == a.id_labels
