"""The readability gate: a seeded sample of statements, each checked for signs that it does not read as an
English sentence, and an error when more than a set share fail (the items are not written).

A statement's template part (its text with the head and tail labels masked) is checked, so that a label such as
"Duran Duran" or "The The" is not read as a fault; ids and stray tokens are looked for in the whole text:

* ``doubled_words``: one to three words repeated at once, an article between allowed ("exported to the exported
  to", "of of");
* ``dangling_s``: a lone "s" token, the trace of Freebase's plural marker ("the release date s of") or of a lost
  apostrophe in a label;
* ``is_the_verb``: "is the" / "was the" before a plural or a verb form ("Zimbabwe is the deals with Botswana.",
  "Africa is the countries within South Sudan.");
* ``unresolved_id``: a Wikidata id or a Freebase mid shown as a name ("Q42", "/m/0d05w3");
* ``dangling_conjunction``: "or" / "and" right before a label, a label's list cut short ("{head} signed the
  languages spoken, written, or {tail}.");
* ``missing_article``: "is" / "was" and at most one word, then a bare singular noun right before a label ("{head}
  was unmarried partner {tail}.");
* ``placeholder``: a template's ``{head}`` / ``{tail}`` left in the text.

Statements whose head or tail label is itself an id (:func:`kgprobe.kg.readable.is_id_like`: a KG with partial
labels) are counted apart (``id_label_share``, with a warning by the suite): the items asset drops them when
``kgs.<kg>.require_labels`` holds (the default), and the other checks are about templates.

    >>> problems("Cloud Atlas has a release date s whose release region is Israel.", "Cloud Atlas", "Israel")
    ['dangling_s']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from kgprobe.errors import ConfigError
from kgprobe.kg.readable import is_id_like
from kgprobe.scoring.lexicon import participle, parts_of_speech
from kgprobe.scoring.stats import wilson_ci
from kgprobe.suites.grapheval.statements import ItemStream

__all__ = ["CHECKS", "ReadabilityError", "ReadabilityReport", "check_readability", "problems", "take_rows"]

#: The checks, in the order they are reported.
CHECKS: tuple[str, ...] = ("doubled_words", "dangling_s", "is_the_verb", "unresolved_id", "dangling_conjunction",
                           "missing_article", "placeholder")

_DOUBLED = re.compile(r"\b(\w+(?:\s+\w+){0,2})\s+(?:(?:the|a|an)\s+)?\1\b", re.IGNORECASE)
_DANGLING = re.compile(r"(?<![\w'’(])s(?![\w'’)])")
_IS_THE = re.compile(r"\b(?:is|was|are|were) the (\w+)")
_ID = re.compile(r"(?<![\w/])(?:[QP][0-9]+|/[mg]/[0-9a-z_]+)(?![\w/])")
_HEAD, _TAIL = "\u27e8head\u27e9", "\u27e8tail\u27e9"
_CONJUNCTION = re.compile(r"\b(?:or|and),? \u27e8(?:head|tail)\u27e9")
_BARE_NOUN = re.compile(r"\b(?:is|was) (?:\w+ )?(\w+) \u27e8(?:head|tail)\u27e9")
_FUNCTION = frozenset({"a", "an", "the", "of", "in", "at", "by", "for", "to", "from", "with", "on", "into", "as",
                       "within", "about", "under", "over", "than", "between", "and", "or", "not", "also"})


def _bare_noun(word: str) -> bool:
    w = word.lower()
    if w in _FUNCTION:
        return False
    pos = parts_of_speech(w)
    return "NOUN" in pos and not participle(w) and "ADV" not in pos and "ADP" not in pos


def _verb_or_plural(word: str) -> bool:
    w = word.lower()
    pos = parts_of_speech(w)
    if not pos:
        return False
    if "NOUN" not in pos and "ADJ" not in pos:  # only a verb: "is the spoken"
        return "VERB" in pos
    if participle(w) and "NOUN" not in pos:
        return True
    # a plural noun or a verb's -s form: "is the countries", "is the deals with"
    return w.endswith("s") and not w.endswith("ss") and any(lemma != w for lemma in pos.get("NOUN", ()))


def problems(text: str, head: str | None = None, tail: str | None = None) -> list[str]:
    """The checks of :data:`CHECKS` that ``text`` fails; ``head`` and ``tail`` (its labels) are masked for the
    checks of the template part."""
    masked = text
    for label, mark in sorted(((head, _HEAD), (tail, _TAIL)), key=lambda x: -len(x[0] or "")):
        if label:
            masked = masked.replace(label, mark)
    out = []
    if _DOUBLED.search(masked):
        out.append("doubled_words")
    if _DANGLING.search(text):
        out.append("dangling_s")
    if any(_verb_or_plural(m.group(1)) for m in _IS_THE.finditer(masked)):
        out.append("is_the_verb")
    if _ID.search(text):
        out.append("unresolved_id")
    if _CONJUNCTION.search(masked):
        out.append("dangling_conjunction")
    if any(_bare_noun(m.group(1)) for m in _BARE_NOUN.finditer(masked)):
        out.append("missing_article")
    if "{head}" in text or "{tail}" in text:
        out.append("placeholder")
    return out


@dataclass(frozen=True)
class ReadabilityReport:
    """What the gate found: statements checked, those failing a check (share with its Wilson interval, counts
    per check, examples), and the statements left out for an id-like label (their share of the sample)."""

    checked: int
    failing: int
    share: float
    interval: tuple[float, float]
    by_check: dict[str, int]
    examples: list[dict[str, Any]]
    id_labels: int
    id_label_share: float

    def as_metadata(self) -> dict[str, Any]:
        return {"readability_checked": self.checked, "readability_failing": self.failing,
                "readability_failing_share": self.share, "readability_failing_interval": list(self.interval),
                "readability_by_check": [{"check": c, "statements": n} for c, n in self.by_check.items()],
                "readability_examples": self.examples, "id_label_statements": self.id_labels,
                "id_label_share": self.id_label_share}


def take_rows(table: pa.Table | ItemStream, rows: np.ndarray) -> pa.Table:
    """``table.take(rows)`` without joining the table's chunks: Arrow's take on a chunked column first concatenates
    the column (a copy of every statement's text to read a few hundred); a one-row slice is a view. An
    :class:`~kgprobe.suites.grapheval.statements.ItemStream` builds just the rows asked for."""
    rows = np.asarray(rows, np.int64)
    if isinstance(table, ItemStream):
        return table.take(rows)
    if not len(rows):
        return table.take(pa.array(rows, pa.int64()))
    if rows.min() < 0 or rows.max() >= table.num_rows:
        raise IndexError(f"row index out of bounds for a table of {table.num_rows} rows")
    return pa.concat_tables([table.slice(int(r), 1) for r in rows])


class ReadabilityError(ConfigError):
    """More than the allowed share of the sampled statements fail a readability check."""


def check_readability(items: pa.Table | ItemStream, *, sample: int = 200, max_share: float = 0.05, seed: int = 0,
                      examples: int = 5, setting: str = "suites.grapheval") -> ReadabilityReport:  # fmt: skip
    """Check a seeded sample of ``sample`` statements of ``items`` (``question``, ``head_label``, ``tail_label``);
    raise :class:`ReadabilityError` naming examples and the settings to change when more than ``max_share`` of
    those with readable labels fail a check. ``setting`` names the config section in the message."""
    n = items.num_rows
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, size=min(sample, n), replace=False)) if n else np.zeros(0, np.int64)
    picked = take_rows(items, rows).select(["question", "head_label", "tail_label"]).to_pylist()
    counts = dict.fromkeys(CHECKS, 0)
    failing, shown, id_labels = 0, [], 0
    for r in picked:
        if is_id_like(r["head_label"] or "") or is_id_like(r["tail_label"] or ""):
            id_labels += 1
            continue
        found = problems(r["question"], r["head_label"], r["tail_label"])
        for c in found:
            counts[c] += 1
        if found:
            failing += 1
            if len(shown) < examples:
                shown.append({"statement": r["question"], "checks": ", ".join(found)})
    checked = len(picked) - id_labels
    share = failing / checked if checked else 0.0
    report = ReadabilityReport(checked=checked, failing=failing, share=share,
                               interval=wilson_ci(failing, checked) if checked else (0.0, 1.0), by_check=counts,
                               examples=shown, id_labels=id_labels,
                               id_label_share=id_labels / len(picked) if picked else 0.0)
    if share > max_share:
        listed = "; ".join(f"\"{e['statement']}\" ({e['checks']})" for e in shown)
        raise ReadabilityError(
            f"grapheval: {failing} of {checked} sampled statements ({share:.1%}) do not read as sentences (more than "
            f"{setting}.max_unreadable_share {max_share:.1%}), e.g. {listed}. Write templates for their relations "
            f"in {setting}.templates, keep {setting}.label_cleanup on, or raise {setting}.max_unreadable_share")
    return report

