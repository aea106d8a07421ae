"""Answer formats: how an answer of each kind is read as a label, and how an item's sample labels are voted.

Every suite asks its questions in one of four formats, and the reading of an answer belongs to the format, not to
the suite, so that two suites asking yes/no questions read "No, he died in Rome." the same way:

==================  ====================================================  =============================================
format              reader (text -> label)                                labels
==================  ====================================================  =============================================
``yes_no``          :func:`kgprobe.scoring.answers.parse_yes_no`, given   yes, no, unknown
                    the question (a restatement of the claim is yes)
``true_false_idk``  :func:`kgprobe.scoring.answers.parse_true_false`      true, false, idk, unknown
``choice``          :func:`read_choice`: the option the answer picks, by  an option's label, or unknown
                    letter ("B", "(b)", "Answer: B") or by its text
``open``            a judge's verdict on the answer, read as yes/no       yes (factual), no, unknown
==================  ====================================================  =============================================

The vote of an item is the plurality of its samples' labels, "unknown" counting as a label; a tie or no samples is
unknown (:func:`kgprobe.scoring.stats.vote`), for every format.

    >>> FORMATS["yes_no"].read("No, he died in Rome.", {"question": "Did Titian die in Venice?"})
    'no'
    >>> read_choice("I think it is (B).", ["Paris", "Lyon", "Nice"])
    'Lyon'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgprobe.errors import ConfigError
from kgprobe.scoring.answers import parse_true_false, parse_yes_no
from kgprobe.scoring.stats import vote

__all__ = ["ANSWER_FORMATS", "FORMATS", "AnswerFormat", "answer_format", "read_choice"]

#: The answer formats a suite's items may have.
ANSWER_FORMATS: tuple[str, ...] = ("yes_no", "true_false_idk", "choice", "open")

_LETTER = re.compile(r"""^\W*(?:(?:the\s+)?(?:final\s+)?(?:answer|option|choice)\s*(?:is\s*)?[:=-]?\s*)?
                          [(\[]?([a-z])[)\].:]?(?:\s|$|[,;])""", re.IGNORECASE | re.VERBOSE)


def read_choice(text: str | None, options: Sequence[str]) -> str:
    """The option ``text`` picks among ``options``, or ``"unknown"``.

    A leading option letter wins ("B", "(b)", "B.", "Answer: B", "The answer is C"); else the one option whose
    text occurs in the answer (case-insensitive; an answer naming two options picks none). Why: multiple-choice
    answers name their pick either way, and a reader that guesses between two named options would credit a hedge.
    """
    if not text or not text.strip() or not options:
        return "unknown"
    m = _LETTER.match(text.strip())
    if m:
        index = ord(m.group(1).lower()) - ord("a")
        if 0 <= index < len(options):
            return options[index]
    lowered = text.casefold()
    named = [o for o in options if o and o.casefold() in lowered]
    return named[0] if len(named) == 1 else "unknown"


@dataclass(frozen=True)
class AnswerFormat:
    """One answer format: its labels, its reader and its vote. ``read(text, item)`` gets the item row (a reader may
    need its question or options); ``judged`` formats are read by a judge model, not by ``read``."""

    name: str
    labels: tuple[str, ...]
    read: Callable[[str | None, Mapping[str, Any]], str]
    judged: bool = False

    def vote(self, labels: Sequence[str]) -> str:
        """The item's label from its samples' labels (plurality; a tie or none is unknown)."""
        return vote(labels)


def _read_open(text: str | None, item: Mapping[str, Any]) -> str:
    # the text read here is the judge's verdict ("Yes" = the answer is factual), not the model's answer
    return parse_yes_no(text)


FORMATS: dict[str, AnswerFormat] = {
    "yes_no": AnswerFormat("yes_no", ("yes", "no", "unknown"),
                           lambda text, item: parse_yes_no(text, question=item.get("question"))),
    "true_false_idk": AnswerFormat("true_false_idk", ("true", "false", "idk", "unknown"),
                                   lambda text, item: parse_true_false(text)),
    "choice": AnswerFormat("choice", (), lambda text, item: read_choice(text, list(item.get("options") or ()))),
    "open": AnswerFormat("open", ("yes", "no", "unknown"), _read_open, judged=True),
}


def answer_format(name: str) -> AnswerFormat:
    """The :class:`AnswerFormat` called ``name``; an unknown name is a :class:`~kgprobe.errors.ConfigError`."""
    if name not in FORMATS:
        raise ConfigError(f"unknown answer format {name!r}; use one of {', '.join(ANSWER_FORMATS)}")
    return FORMATS[name]
