"""Reading and verifying ERBench answers: the answer (yes / no / unsure, or the chosen option), the rationale (do the
FD-inferred values appear in the explanation?) and the paper's measures A, R, AR, M and H.

Rationale matching is keyword matching, as in the paper (§3.2): an inferred value counts as mentioned when one of
its *variants* occurs in the answer as a whole-word phrase after both sides are folded. The entity-resolution
heuristics, each with its own tests:

==================  =====================================================================================
heuristic           what it accepts
==================  =====================================================================================
case                "AVATAR" for "Avatar" (casefold)
diacritics          "Andres" for "Andrés", "Bjork" for "Björk" (NFKD, combining marks dropped)
punctuation         "Spider Man" and "SpiderMan" for "Spider-Man"; "St Louis" for "St. Louis"
quotes              "\u201cAvatar\u201d", "'Avatar'" and "Worlds End" for "World's End" (quotes and apostrophes dropped)
articles            "Supremes" for "The Supremes" and the reverse (a / an / the dropped on both sides; kept
                    for a name of articles only, the band "The The")
middle initials     "Harry J. Potter" for "Harry Potter", "Peter Hunt" for "Peter R. Hunt" (one-letter words
                    dropped on both sides, only when two or more longer words remain)
Last, First         "Wilkie Collins" for "Collins, Wilkie"; each author of "Collins, Wilkie and Connolly, Joy"
last name           "Messi" for "L. Messi", only for columns the spec marks ``last_name`` (a person's last
                    word, skipping Jr. / Sr. / II / III)
club affixes        "Barcelona" for "FC Barcelona", only for columns the spec marks ``club`` (FC, CF, AC, ...)
number formats      "2009" for 2009.0, "1,000,000" for 1000000, "-34.783" for -34.7833328247 (a number in the
                    text with d >= 1 decimals matches a value that rounds to it at d decimals)
lists               "1908, 1948 and 2012" for "2012,1948,1908," (a ``list`` value: every element must appear)
==================  =====================================================================================

An LLM matcher is not used (the paper avoids it so as not to favour one vendor's model).

    >>> rationale_matches("Yes, it is \u201cAvatar\u201d by James Cameron.", ["Avatar"])
    True
    >>> binary_metrics([BinaryAnswer(text='Yes. The movie is "Avatar".', expected="yes", inferred=("Avatar",))]).AR
    1.0
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from kgprobe.scoring.answers import explain_yes_no

__all__ = [
    "BinaryAnswer",
    "ERMetrics",
    "binary_metrics",
    "fold",
    "knows_entity",
    "rationale_matches",
    "read_binary",
    "read_option",
    "value_mentioned",
    "variants",
]

BinaryLabel = Literal["yes", "no", "unsure", "unknown"]

_QUOTES = "\"'`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00b4\u2032\u2033\u00ab\u00bb"
_QUOTE_RE = re.compile(f"[{re.escape(_QUOTES)}]")
_PUNCT_RE = re.compile(r"[^\w\s]|_", re.UNICODE)
_ARTICLES = {"a", "an", "the"}
_SUFFIXES = {"jr", "sr", "ii", "iii", "iv"}
_CLUB_AFFIXES = {"fc", "cf", "ac", "afc", "sc", "sk", "sv", "fk", "cd", "rc", "ud", "ss", "as", "us", "if", "bk",
                 "club", "calcio", "1"}
_NUMBER_RE = re.compile(r"(?<![\w.])[-\u2212]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])[-\u2212]?\d+(?:\.\d+)?(?![\w])")
_UNSURE_RE = re.compile(r"^\W*(?:answer\s*:\s*)?(?:i\s+am\s+|i'm\s+)?(?:unsure|not\s+sure|uncertain)\b", re.IGNORECASE)
_OPTION_RE = re.compile(r"\boption\s*\(?(\d+)\)?", re.IGNORECASE)
_LEAD_NUMBER_RE = re.compile(r"^\W*\(?(\d+)\s*[).:]")
_NOTA_RE = re.compile(r"\bnone of (?:the )?(?:above|them)\b|\ball (?:the )?(?:options|statements) are (?:correct|true|accurate)"
                      r"|\bno (?:inaccurate|incorrect|false|wrong) option", re.IGNORECASE)


# ------------------------------------------------------------------------------------------------------ folding
def _strip_marks(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


@lru_cache(maxsize=1 << 14)
def fold(text: str, *, join_punct: bool = False, drop_initials: bool = False, articles: bool = False) -> str:
    """``text`` folded for matching: diacritics dropped, casefolded, quotes and apostrophes removed, other
    punctuation a space (``join_punct``: removed, so "Spider-Man" reads "spiderman"), articles dropped (kept with
    ``articles``) and spaces collapsed; ``drop_initials`` also drops one-letter words. Both sides of a match are
    folded the same way."""
    t = _QUOTE_RE.sub("", _strip_marks(text).casefold().replace("\u2212", "-"))
    t = _PUNCT_RE.sub("" if join_punct else " ", t)
    words = [w for w in t.split() if articles or w not in _ARTICLES]
    if drop_initials:
        longer = [w for w in words if len(w) > 1 or w.isdigit()]
        if len(longer) >= 2:
            words = longer
    return " ".join(words)


def _contains(haystack: str, needle: str) -> bool:
    return bool(needle) and f" {needle} " in f" {haystack} "


# ------------------------------------------------------------------------------------------------------ numbers
def _as_number(value: str) -> float | None:
    s = value.strip().replace("\u2212", "-").replace(",", "")
    try:
        x = float(s)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _numbers(text: str) -> list[tuple[float, int]]:
    out = []
    for m in _NUMBER_RE.finditer(text):
        s = m.group(0).replace("\u2212", "-").replace(",", "")
        decimals = len(s.split(".")[1]) if "." in s else 0
        out.append((float(s), decimals))
    return out


def _number_mentioned(x: float, text: str) -> bool:
    for y, decimals in _numbers(text):
        if x == int(x) and decimals == 0 and y == x:
            return True
        if decimals >= 1 and math.isclose(round(x, decimals), y, abs_tol=10 ** -(decimals + 3)):
            return True
    return False


# ------------------------------------------------------------------------------------------------------ variants
def _last_first(value: str) -> list[str]:
    """"Collins, Wilkie and Connolly, Joy" -> ["Wilkie Collins and Joy Connolly", "Wilkie Collins", "Joy Connolly"]."""
    people = [p.strip() for p in re.split(r"\s+and\s+|;|&", value) if p.strip()]
    turned = []
    for p in people:
        parts = [x.strip() for x in p.split(",")]
        if len(parts) != 2 or not parts[0] or not parts[1]:
            return []
        turned.append(f"{parts[1]} {parts[0]}")
    return [" and ".join(turned), *turned] if len(turned) > 1 else turned


def _last_name(value: str) -> str | None:
    words = [w for w in fold(value).split() if w not in _SUFFIXES]
    return words[-1] if words else None


def variants(value: str, *, last_name: bool = False, club: bool = False) -> list[str]:
    """The written forms of ``value`` that count as mentioning it (before folding): the value, its "First Last"
    form(s) when it reads "Last, First", its last name (``last_name``), the club name without affixes (``club``)."""
    out = [value]
    out += _last_first(value)
    if last_name:
        name = _last_name(value)
        if name:
            out.append(name)
    if club:
        words = [w for w in fold(value).split() if w not in _CLUB_AFFIXES]
        if words:
            out.append(" ".join(words))
    return out


def value_mentioned(value: str, text: str, *, last_name: bool = False, club: bool = False,
                    as_list: bool = False) -> bool:  # fmt: skip
    """Whether ``text`` mentions ``value`` under the heuristics of the module docstring. ``as_list``: the value is a
    comma-separated list (an Olympic city's years) and every element must be mentioned. An empty value counts as
    mentioned (there is nothing to look for)."""
    if as_list:
        parts = [p.strip() for p in str(value).split(",") if p.strip()]
        return all(value_mentioned(p, text, last_name=last_name, club=club) for p in parts)
    value = str(value).strip()
    if not value:
        return True
    x = _as_number(value)
    if x is not None and re.fullmatch(r"[-\u2212]?[\d,]*\.?\d+", value.strip()):
        return _number_mentioned(x, text)
    for v in variants(value, last_name=last_name, club=club):
        if not fold(v):  # a name of articles only ("The The"): compare with the articles kept
            if _contains(fold(text, articles=True), fold(v, articles=True)):
                return True
            continue
        for join in (False, True):
            if _contains(fold(text, join_punct=join), fold(v, join_punct=join)):
                return True
            if _contains(fold(text, join_punct=join, drop_initials=True), fold(v, join_punct=join, drop_initials=True)):
                return True
    return False


def rationale_matches(text: str | None, inferred: Sequence[str], *,
                      match: Mapping[str, Sequence[str]] | Sequence[Sequence[str]] | None = None) -> bool:  # fmt: skip
    """Whether every FD-inferred value of ``inferred`` is mentioned in ``text`` (the rationale check R). ``match``
    gives each value's extra heuristics (``last_name``, ``club``, ``list``), by position or by value."""
    if text is None:
        return False
    for i, value in enumerate(inferred):
        how: Sequence[str] = ()
        if isinstance(match, Mapping):
            how = match.get(str(value), ())
        elif match is not None and i < len(match):
            how = match[i] or ()
        if not value_mentioned(str(value), text, last_name="last_name" in how, club="club" in how,
                               as_list="list" in how):
            return False
    return True


# ------------------------------------------------------------------------------------------------------ answers
def read_binary(text: str | None, question: str | None = None) -> BinaryLabel:
    """The answer of a binary ERBench response: ``"yes"``, ``"no"``, ``"unsure"`` (the model says it does not know)
    or ``"unknown"`` (no answer can be read). The shared yes/no reader (:func:`kgprobe.scoring.answers.parse_yes_no`)
    reads yes and no; "Unsure" and every abstention it recognises read as unsure."""
    if text is None or not text.strip():
        return "unknown"
    if _UNSURE_RE.match(text):
        return "unsure"
    label, rule = explain_yes_no(text, question=question)
    if label in ("yes", "no"):
        return label
    return "unsure" if rule == "abstain" else "unknown"


def read_option(text: str | None, n_options: int) -> str:
    """The option an MC response picks: ``"1"`` ... ``str(n_options)``, ``"none"`` (None of the above),
    ``"multiple"`` (two different options named first), ``"unsure"`` or ``"unknown"``.

    As the released reader: the first line (or sentence) names the pick, "Option 2" or a leading "2." / "(2)"; a
    "None of the above" / "all options are correct" answer picks none; else the last sentence may name it."""
    if text is None or not text.strip():
        return "unknown"
    if _UNSURE_RE.match(text):
        return "unsure"
    stripped = text.strip()
    first = re.split(r"\n|(?<=[.!?])\s", stripped, maxsplit=1)[0]
    for part in (first, re.split(r"(?<=[.!?])\s+", stripped)[-1]):
        if _NOTA_RE.search(part) and not _OPTION_RE.search(part):
            return "none"
        picked = list(dict.fromkeys(m.group(1) for m in _OPTION_RE.finditer(part)))
        if not picked:
            m = _LEAD_NUMBER_RE.match(part)
            picked = [m.group(1)] if m else []
        picked = [p for p in picked if 1 <= int(p) <= n_options]
        if len(picked) == 1:
            return picked[0]
        if len(picked) > 1:
            return "multiple"
    if _NOTA_RE.search(stripped):
        return "none"
    return "unknown"


_KNOWN_NEG = re.compile(r"\b(?:no|not|never|unsure|uncertain|unknown|cannot|can't|don't|doesn't|didn't|isn't|wasn't|"
                        r"aren't|weren't|unable|however|but)\b|n't\b", re.IGNORECASE)
_KNOWN_YES = re.compile(r"\byes\b", re.IGNORECASE)


def knows_entity(text: str | None, *, names: Sequence[str] = ()) -> bool:
    """The known-entity reading of the paper (§B.2): True iff the answer says only yes, i.e. it says "yes" and
    nothing that denies, doubts or qualifies ("no", "not", "unsure", "but", ...). "Yes. Yes. Yes." is known; "Yes,
    but I am not sure about the director." and "I don't know." are not. ``names`` (the prompt's attribute values)
    are removed first, so that the "No" of "No Country for Old Men" is not read as a denial (as the released
    reader removes the title)."""
    if text is None or not text.strip():
        return False
    text = text.replace("\u2019", "'")
    for name in sorted((str(n) for n in names if n), key=len, reverse=True):
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    return bool(_KNOWN_YES.search(text)) and not _KNOWN_NEG.search(text)


# ------------------------------------------------------------------------------------------------------ metrics
@dataclass(frozen=True)
class BinaryAnswer:
    """One binary answer to score: the response ``text``, the ``expected`` answer ("yes" or "no") and the
    FD-inferred values that a correct rationale mentions."""

    text: str | None
    expected: str
    inferred: tuple[str, ...] = ()
    question: str | None = None


@dataclass(frozen=True)
class ERMetrics:
    """The paper's measures over ``n`` answers: answer accuracy A, rationale accuracy R, both AR, missing rate M
    (the model said unsure, or no answer could be read) and hallucination rate H = 1 - A - M."""

    n: float
    A: float
    R: float
    AR: float
    M: float
    H: float


def binary_metrics(answers: Iterable[BinaryAnswer]) -> ERMetrics:
    """A, R, AR, M and H of binary answers (all NaN when there are none). Unreadable answers count as missing, as
    in the released scripts, which read an answer that starts with neither yes nor no as unsure."""
    n = a = r = ar = m = 0
    for ans in answers:
        label = read_binary(ans.text, ans.question)
        ok_a = label == ans.expected.strip().lower()
        ok_r = rationale_matches(ans.text, ans.inferred)
        n += 1
        a += ok_a
        r += ok_r
        ar += ok_a and ok_r
        m += label in ("unsure", "unknown")
    if not n:
        nan = math.nan
        return ERMetrics(n=0.0, A=nan, R=nan, AR=nan, M=nan, H=nan)
    return ERMetrics(n=float(n), A=a / n, R=r / n, AR=ar / n, M=m / n, H=(n - a - m) / n)
