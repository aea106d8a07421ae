"""kgprobe.scoring.formats: one reader and one vote per answer format, shared by every suite."""

from __future__ import annotations

import pytest

from kgprobe.errors import ConfigError
from kgprobe.scoring.formats import ANSWER_FORMATS, FORMATS, answer_format, read_choice


@pytest.mark.parametrize(
    ("fmt", "text", "item", "label"),
    [
        ("yes_no", "No, he died in Rome.", {"question": "Did Titian die in Venice?"}, "no"),
        ("yes_no", "Titian died in Venice.", {"question": "Did Titian die in Venice?"}, "yes"),  # restatement
        ("yes_no", "Titian died in Venice.", {}, "unknown"),  # without the question nothing restates
        ("true_false_idk", "False.", {}, "false"),
        ("true_false_idk", "I don't know.", {}, "idk"),
        ("choice", "(b) Lyon", {"options": ["Paris", "Lyon", "Nice"]}, "Lyon"),
        ("choice", "Answer: C", {"options": ["Paris", "Lyon", "Nice"]}, "Nice"),
        ("choice", "It is Paris, not Lyon.", {"options": ["Paris", "Lyon", "Nice"]}, "unknown"),  # two named
        ("choice", "Surely Nice.", {"options": ["Paris", "Lyon", "Nice"]}, "Nice"),
        ("choice", "D", {"options": ["Paris", "Lyon", "Nice"]}, "unknown"),  # no option D
        ("open", "Yes", {}, "yes"),  # a judge's verdict: the answer is factual
        ("open", None, {}, "unknown"),
    ],
)
def test_each_format_reads_its_answers(fmt: str, text: str | None, item: dict, label: str) -> None:
    assert FORMATS[fmt].read(text, item) == label


def test_the_vote_is_the_plurality_for_every_format() -> None:
    for name in ANSWER_FORMATS:
        fmt = answer_format(name)
        assert fmt.vote(["a", "a", "b"]) == "a" and fmt.vote(["a", "b"]) == "unknown" and fmt.vote([]) == "unknown"
    assert answer_format("open").judged and not answer_format("yes_no").judged


def test_unknown_format_names_the_choices() -> None:
    with pytest.raises(ConfigError, match="unknown answer format 'essay'; use one of yes_no, true_false_idk"):
        answer_format("essay")


def test_read_choice_needs_options_and_text() -> None:
    assert read_choice("", ["x"]) == "unknown" and read_choice("A", []) == "unknown"
