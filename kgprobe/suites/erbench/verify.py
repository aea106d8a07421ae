"""Reading and verifying ERBench answers: the answer (yes / no / unsure, or the chosen option), the rationale (do the
FD-inferred values appear in the explanation?) and the paper's measures A, R, AR, M and H.

Rationale matching is keyword matching, as in the paper (§3.2). Two readings (:data:`RATIONALE_MATCHES`):
``rationale_match="released"`` (the default, the released scripts' check, which produced Tables 2 and 4): one of the
value's spellings occurs in the answer as a case-insensitive substring; ``rationale_match="kgprobe"``: an inferred
value counts as mentioned when one of its *variants* occurs in the answer as a whole-word phrase after both sides
are folded, with the entity-resolution heuristics below, each with its own tests. Binary answers likewise have two
readings (:data:`ANSWER_READINGS`): ``released`` (default; the first line starts with yes or no, else unsure) and
``kgprobe`` (the shared yes/no reader). kgprobe's heuristics:

==================  =====================================================================================
heuristic           what it accepts
==================  =====================================================================================
case                "AVATAR" for "Avatar" (casefold)
diacritics          "Andres" for "Andrés", "Bjork" for "Björk" (NFKD, combining marks dropped)
punctuation         "Spider Man" and "SpiderMan" for "Spider-Man"; "St Louis" for "St. Louis"
quotes              "\u201cAvatar\u201d", "'Avatar'" and "Worlds End" for "World's End" (quotes and apostrophes dropped)
possessives         "Avatar's director" for "Avatar", "Messi's number" for "Messi" (a possessive 's dropped too)
articles            "Supremes" for "The Supremes" and the reverse (a / an / the dropped on both sides; kept
                    for a name of articles only, the band "The The")
middle initials     "Harry J. Potter" for "Harry Potter", "Peter Hunt" for "Peter R. Hunt" (one-letter words
                    dropped on both sides, only when two or more longer words remain)
middle names        "Harry James Potter" for "Harry Potter" (one or two words after the first of a 2-3 word name)
Last, First         "Wilkie Collins" for "Collins, Wilkie"; each author of "Collins, Wilkie and Connolly, Joy"
last name           "Messi" for "L. Messi", only for columns the spec marks ``last_name`` (a person's last
                    word, skipping Jr. / Sr. / II / III)
first name          "Cristiano" for "Cristiano Ronaldo", only for columns the spec marks ``first_name``
club affixes        "Barcelona" for "FC Barcelona", only for columns the spec marks ``club`` (FC, CF, AC, ...)
aliases             "United States" for "USA", "Bayern Munich" for "FC Bayern München", "live-action" for
                    "non-animation": the spec's ``aliases`` per column or per value
negation            never "animation" in "a non-animation movie" or "not animation" (a match right after non /
                    not / no / never does not count; "No. Avatar is ..." and "No, Avatar ..." do: a negator that
                    ends its sentence or clause is the answer word)
number formats      "2009" for 2009.0, "1,000,000" for 1000000, "No.10" for 10, "-34.783" for -34.7833328247 (a
                    number in the text with d decimals matches a value that rounds to it at d decimals, d at
                    least 2 or all the value's; with two or more, one within 0.005 matches too), never "-34.8"
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
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from kgprobe.scoring.answers import explain_yes_no

__all__ = [
    "BinaryAnswer",
    "ChoiceAnswer",
    "ANSWER_READINGS",
    "ERMetrics",
    "KNOWN_RULES",
    "NOTA_RATIONALE_READINGS",
    "RATIONALE_MATCHES",
    "Reading",
    "binary_metrics",
    "choice_metrics",
    "fold",
    "knows_entity",
    "measures",
    "rationale_matches",
    "read_binary",
    "read_binary_answer",
    "read_choice",
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
_NUMBER_PREFIX_RE = re.compile(r"(?i)(?:\bno|\bnr|\bnum|#)\.?\s*(?=\d)")
_MIN_DECIMALS = 2
_POSSESSIVE_RE = re.compile(r"(?<=\w)['\u2019\u2032`]s\b|(?<=s)['\u2019](?=\s|$)")
_NEGATORS = ("non", "not", "no", "never")
#: a negator that ends its sentence or clause ("No. Avatar is ...", "No, James Cameron ..."): the answer word, not a
#: negation of what follows; marked with a word that survives folding so that _find does not read it as one
_NEGATOR_AT_STOP_RE = re.compile(r"\b(non|not|no|never)(?=\s*(?:[.!?;:,]|\n))", re.IGNORECASE)
_STOP_MARK = "negatorstop"
_UNSURE_RE = re.compile(r"^\W*(?:answer\s*:\s*)?(?:i\s+am\s+|i'm\s+)?(?:unsure|not\s+sure|uncertain)\b", re.IGNORECASE)
_OPTION_RE = re.compile(r"\boption\s*\(?(\d+)\)?", re.IGNORECASE)
_LEAD_NUMBER_RE = re.compile(r"^\W*\(?(\d+)\s*[).:]")
_NOTA_RE = re.compile(r"\bnone of (?:the )?(?:above|them|options)\b"
                      r"|\ball (?:of )?(?:the )?(?:options|statements|choices|answers)(?: given| provided| above)? "
                      r"(?:are|seem|appear) (?:to be )?(?:correct|true|accurate|right)"
                      r"|\bno (?:inaccurate|incorrect|false|wrong) (?:option|statement|choice)", re.IGNORECASE)
#: "The inaccurate option is 2", "the false statement is Option 3", "The answer is (2)": the pick named after a verdict
_PICK_RE = re.compile(r"\b(?:false|inaccurate|incorrect|wrong|untrue|odd)\s+(?:option|statement|choice|one)\s*"
                      r"(?:here\s+)?(?:is|would be|:)\s*(?:option\s*)?\(?(\d+)\)?"
                      r"|\banswer\s+(?:is|would be|:)\s*:?\s*(?:option\s*)?\(?(\d+)\)?", re.IGNORECASE)
#: "The false option about <anything> is Option 2": a verdict that names its pick after the question's own words
_VERDICT_RE = re.compile(r"^\W*the\s+(?:false|inaccurate|incorrect|wrong|untrue)\s+(?:option|statement|choice)\b.{0,200}?"
                         r"\bis\s+(?:option\s*)?\(?(\d+)\)?", re.IGNORECASE | re.DOTALL)
#: what follows "Option k" when the answer calls it right ("Option 1 is correct, but Option 2 is false")
_CALLED_TRUE_RE = re.compile(r"^\W*(?:\([^)]*\)\s*)?(?:is|are|seems|appears)\s+(?:to\s+be\s+)?(?:correct|true|accurate|right)\b",
                             re.IGNORECASE)
_FORMAT_ECHO_RE = re.compile(r"^\W*(?:yes\s*/\s*no|yes\s+or\s+no)\s*:\s*", re.IGNORECASE)
_YES_UNSURE_RE = re.compile(r"^\W*yes\s*/\s*unsure\b", re.IGNORECASE)
#: "There is no such movie.": a denial that the asked-about thing exists
_NO_SUCH_RE = re.compile(r"^\W*(?:there\s+(?:is|are|was|were)\s+no\b|no\s+such\b|i\s+(?:could|can)\s*(?:no|')t\s+find\s+any\b)",
                         re.IGNORECASE)
_NEGATED_QUESTION_RE = re.compile(r"^\s*is\s+it\s+true\s+that\b.*\b(?:no|not|never|nor|none)\b|\bthere\s+(?:are|is)\s+no\b",
                                  re.IGNORECASE | re.DOTALL)


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
    text = _NUMBER_PREFIX_RE.sub(" ", text)
    for m in _NUMBER_RE.finditer(text):
        s = m.group(0).replace("\u2212", "-").replace(",", "")
        decimals = len(s.split(".")[1]) if "." in s else 0
        out.append((float(s), decimals))
    return out


def _number_mentioned(x: float, text: str, value_decimals: int = 0) -> bool:
    # a rounded mention keeps at least two decimals (or all the value has): "-34.78" names -34.7833, "-34.8" does not
    need = min(value_decimals, _MIN_DECIMALS)
    for y, decimals in _numbers(text):
        if x == int(x) and decimals == 0 and y == x:
            return True
        if decimals >= max(1, need) and math.isclose(round(x, decimals), y, abs_tol=10 ** -(decimals + 3)):
            return True
        # two or more decimals that agree with the value to half a hundredth ("approximately 35.0353" for 35.0352):
        # the two decimals the released check compares, without its substring match of shorter numbers
        if decimals >= _MIN_DECIMALS and abs(x - y) <= 0.005 + 1e-9:
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


def variants(value: str, *, last_name: bool = False, club: bool = False, first_name: bool = False,
             aliases: Sequence[str] = ()) -> list[str]:  # fmt: skip
    """The written forms of ``value`` that count as mentioning it (before folding): the value, its "First Last"
    form(s) when it reads "Last, First", its last name (``last_name``), its first name (``first_name``), the club
    name without affixes (``club``) and the spec's ``aliases`` of the value."""
    out = [value]
    out += _last_first(value)
    if last_name:
        name = _last_name(value)
        if name:
            out.append(name)
    if first_name:
        words = [w for w in fold(value).split() if len(w) > 1]
        if len(words) >= 2:
            out.append(words[0])
    if club:
        words = [w for w in fold(value).split() if w not in _CLUB_AFFIXES]
        if words:
            out.append(" ".join(words))
    out += [str(a) for a in aliases if str(a).strip()]
    return out


def _find(haystack: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``haystack`` as whole words and not right after a negator ("animation" is not
    mentioned by "a non-animation movie" nor by "not animation")."""
    if not needle:
        return False
    h, n = f" {haystack} ", f" {needle} "
    start = h.find(n)
    while start >= 0:
        before = h[:start].split()
        if not before or before[-1] not in _NEGATORS or needle.split()[0] in _NEGATORS:
            return True
        start = h.find(n, start + 1)
    return False


def _middle_names(haystack: str, needle: str) -> bool:
    """"Harry James Potter" for "Harry Potter": a two- or three-word name with one or two extra words after the
    first one."""
    words = needle.split()
    if not 2 <= len(words) <= 3 or any(len(w) < 2 or w.isdigit() for w in words):
        return False
    rest = r"\s+".join(re.escape(w) for w in words[1:])
    return re.search(rf"(?:^|\s){re.escape(words[0])}(?:\s+[^\s]+){{1,2}}\s+{rest}(?:\s|$)", haystack) is not None


#: how a rationale is matched: ``released`` (the released ``error_analysis.py`` scripts, which produced Tables 2 and
#: 4: a variant found as a case-insensitive substring anywhere in the answer) or ``kgprobe`` (whole words, not
#: after a negator, with the number and name heuristics of the module docstring)
RATIONALE_MATCHES = ("released", "kgprobe")
_RELEASED_SPECIAL_RE = re.compile(r"[^a-zA-Z0-9\s]")
#: the released check's club edits (a ``club`` column): affixes dropped, "U.C. " joined, " de " and " City" dropped
_RELEASED_CLUB_EDITS = ((" CF", ""), (" FK", ""), ("FC ", ""), ("AC ", ""), ("RC ", ""), ("U.C. ", "U.C."),
                        (" de ", " "), ("Al ", ""), (" SK", ""), ("SL ", ""), ("SV ", ""), (" City", ""), ("1. ", ""))


def _released_fold(text: str) -> str:
    """The released check's folding: non-Latin letters to ASCII (NFKD, the rest dropped), lower case."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()


def _released_forms(value: str, *, last_name: bool, club: bool, first_name: bool, first_word: bool,
                    aliases: Sequence[str]) -> list[str]:  # fmt: skip
    """The spellings the released check looks for: the value, its spec variants and aliases, a club's name with the
    released edits (``club``: "Manchester" for "Manchester City", "Athletic Club Bilbao"), its first word
    (``first_word``: the released Book publisher heuristic, "Harlequin" for "Harlequin Books") and, for a number
    with decimals, the value rounded and cut to two decimals ("-34.78")."""
    forms = variants(value, last_name=last_name, club=club, first_name=first_name, aliases=aliases)
    if club:
        forms += [value.replace(old, new) for old, new in _RELEASED_CLUB_EDITS if old in value]
    if first_word and " " in value.strip():
        forms.append(value.strip().split(" ")[0])
    if (x := _as_number(value)) is not None and "." in value:
        whole, _, decimals = value.strip().partition(".")
        forms += [f"{x:.2f}", f"{whole}.{decimals[:2]}"]
    return forms


def _released_mentioned(forms: Sequence[str], text: str) -> bool:
    """The released check: a form occurs in the text as a substring, both sides folded (:func:`_released_fold`),
    or after both lose every character but ASCII letters, digits and spaces ("19" is found in "2019", "US" in
    "because", "Madrid" in any Madrid club's name)."""
    t = _released_fold(text)
    t_plain = _RELEASED_SPECIAL_RE.sub("", t).replace("  ", " ")
    for form in forms:
        f = _released_fold(str(form)).strip()
        if f and f in t:
            return True
        f_plain = _RELEASED_SPECIAL_RE.sub("", f).replace("  ", " ").strip()
        if f_plain and f_plain in t_plain:
            return True
    return False


def value_mentioned(value: str, text: str, *, last_name: bool = False, club: bool = False,
                    as_list: bool = False, first_name: bool = False, aliases: Sequence[str] = (),
                    first_word: bool = False, rationale_match: str = "released") -> bool:  # fmt: skip
    """Whether ``text`` mentions ``value``. ``rationale_match="released"`` (default: the reading that produced
    Tables 2 and 4): one of the value's spellings (its variants, aliases, its first word with ``first_word``, a
    number cut to two decimals) occurs in the text as a case-insensitive substring, as the released scripts check
    ("19" counts in "2019"). ``rationale_match="kgprobe"``: the heuristics of the module docstring (whole words,
    not after a negator; ``first_word`` is not used). ``as_list``: the value is a comma-separated list (an Olympic
    city's years) and every element must be mentioned. ``aliases``: other spellings of the value that count too
    ("United States" for "USA"). An empty value counts as mentioned (there is nothing to look for).

        >>> text = "He joined in 2019."
        >>> value_mentioned("19", text), value_mentioned("19", text, rationale_match="kgprobe")
        (True, False)
    """
    if rationale_match not in RATIONALE_MATCHES:
        raise ValueError(f"value_mentioned: rationale_match must be one of {', '.join(RATIONALE_MATCHES)}, "
                         f"got {rationale_match!r}")
    if as_list:
        parts = [p.strip() for p in str(value).split(",") if p.strip()]
        return all(value_mentioned(p, text, last_name=last_name, club=club, first_name=first_name,
                                   rationale_match=rationale_match) for p in parts)
    value = str(value).strip()
    if not value:
        return True
    if rationale_match == "released":
        return _released_mentioned(_released_forms(value, last_name=last_name, club=club, first_name=first_name,
                                                   first_word=first_word, aliases=aliases), text)
    texts = [text] + ([t] if (t := _POSSESSIVE_RE.sub("", text)) != text else [])
    x = _as_number(value)
    if x is not None and re.fullmatch(r"[-\u2212]?[\d,]*\.?\d+", value.strip()):
        decimals = len(value.split(".")[1]) if "." in value else 0
        if any(_number_mentioned(x, t, decimals) for t in texts):
            return True
        value_forms: list[str] = [str(a) for a in aliases]
    else:
        value_forms = variants(value, last_name=last_name, club=club, first_name=first_name, aliases=aliases)
    texts = [_NEGATOR_AT_STOP_RE.sub(rf"\1 {_STOP_MARK}", t) for t in texts]
    value_forms = [_NEGATOR_AT_STOP_RE.sub(rf"\1 {_STOP_MARK}", v) for v in value_forms]
    for t in texts:
        for v in value_forms:
            if not fold(v):  # a name of articles only ("The The"): compare with the articles kept
                if _find(fold(t, articles=True), fold(v, articles=True)):
                    return True
                continue
            for join in (False, True):
                if _find(fold(t, join_punct=join), fold(v, join_punct=join)):
                    return True
                if _find(fold(t, join_punct=join, drop_initials=True), fold(v, join_punct=join, drop_initials=True)):
                    return True
            if _middle_names(fold(t), fold(v)):
                return True
    return False


def _how(match: Mapping[str, Sequence[str]] | Sequence[Sequence[str]] | None, i: int, value: str) -> Sequence[str]:
    if isinstance(match, Mapping):
        return match.get(str(value), ())
    if match is not None and i < len(match):
        return match[i] or ()
    return ()


def rationale_matches(text: str | None, inferred: Sequence[str], *,
                      match: Mapping[str, Sequence[str]] | Sequence[Sequence[str]] | None = None,
                      aliases: Mapping[str, Sequence[str]] | None = None,
                      rationale_match: str = "released") -> bool:  # fmt: skip
    """Whether every FD-inferred value of ``inferred`` is mentioned in ``text`` (the rationale check R). ``match``
    gives each value's extra heuristics (``last_name``, ``first_name``, ``club``, ``list``, ``first_word``), by
    position or by value; ``aliases`` maps a value to its other spellings; ``rationale_match`` is the reading
    (:func:`value_mentioned`: ``released``, the default, or ``kgprobe``)."""
    if text is None:
        return False
    for i, value in enumerate(inferred):
        how = _how(match, i, value)
        if not value_mentioned(str(value), text, last_name="last_name" in how, club="club" in how,
                               as_list="list" in how, first_name="first_name" in how,
                               first_word="first_word" in how, aliases=tuple((aliases or {}).get(str(value), ())),
                               rationale_match=rationale_match):
            return False
    return True


# ------------------------------------------------------------------------------------------------------ answers
#: how a binary answer is read: ``released`` (the released ``error_analysis.py``, which produced Tables 2 and 4: the
#: answer's first line, lower-cased, starts with "yes" or "no", else it is unsure) or ``kgprobe`` (the shared yes/no
#: reader: an answer that does not start with yes or no is read by its content)
ANSWER_READINGS = ("released", "kgprobe")
_RELEASED_ECHO_RE = re.compile(r"yes\s*/\s*no:|yes or no: ?")


def _read_binary_released(text: str) -> BinaryLabel:
    """The released reader: the first line lower-cased, an echoed "yes/no:" or "yes or no:" dropped, "yes/unsure"
    and "no/unsure" read as unsure; then "yes" if it starts with "yes", "no" if it starts with "no" (so "Not
    sure." reads no, as there), else unsure."""
    line = text.strip().split("\n", 1)[0].lower()
    line = _RELEASED_ECHO_RE.sub("", line).strip()
    line = line.replace("yes/unsure", "unsure").replace("no/unsure", "unsure").strip()
    if line.startswith("yes"):
        return "yes"
    if line.startswith("no"):
        return "no"
    return "unsure"


def read_binary(text: str | None, question: str | None = None, *, answer_reading: str = "kgprobe") -> BinaryLabel:
    """The answer of a binary ERBench response: ``"yes"``, ``"no"``, ``"unsure"`` (the model says it does not know)
    or ``"unknown"`` (no answer can be read). ``answer_reading="kgprobe"`` (this function's default, also the
    reader of known-entity answers' labels): the shared yes/no reader
    (:func:`kgprobe.scoring.answers.parse_yes_no`) reads yes and no; "Unsure" and every abstention it recognises read
    as unsure. ``answer_reading="released"`` (the default of :func:`read_binary_answer`, the reading of Tables 2
    and 4): the first line starts with yes or no, anything else is unsure."""
    if answer_reading not in ANSWER_READINGS:
        raise ValueError(f"read_binary: answer_reading must be one of {', '.join(ANSWER_READINGS)}, "
                         f"got {answer_reading!r}")
    if text is None or not text.strip():
        return "unknown"
    if answer_reading == "released":
        return _read_binary_released(text)
    # an answer that echoes the requested format: "Yes/No: Yes", "Yes or no: unsure", "Yes/Unsure." (undecided)
    text = _FORMAT_ECHO_RE.sub("", text, count=1)
    if _UNSURE_RE.match(text) or _YES_UNSURE_RE.match(text):
        return "unsure"
    label, rule = explain_yes_no(text, question=question)
    if label in ("yes", "no"):
        return label
    if rule != "abstain" and _NO_SUCH_RE.match(text):
        # "There is no such movie." answers "Is there a movie ...?" with no, and "Is it true that there are no
        # movies ...?" with yes
        return "yes" if question and _NEGATED_QUESTION_RE.search(question) else "no"
    return "unsure" if rule == "abstain" else "unknown"


def _picks(part: str, n_options: int) -> list[str]:
    """The options ``part`` names as its pick: "Option k" mentions that the text does not call correct, else a
    verdict naming a number ("The inaccurate option is 2"), else a leading "2." / "(2)"."""
    picked = []
    for m in _OPTION_RE.finditer(part):
        if not _CALLED_TRUE_RE.match(part[m.end():m.end() + 60]):
            picked.append(m.group(1))
    if not picked:
        picked = [g for m in _PICK_RE.finditer(part) for g in m.groups() if g][:1]
    if not picked:
        m = _LEAD_NUMBER_RE.match(part)
        picked = [m.group(1)] if m else []
    picked = list(dict.fromkeys(picked))
    return [p for p in picked if 1 <= int(p) <= n_options]


def read_option(text: str | None, n_options: int) -> str:
    """The option an MC response picks: ``"1"`` ... ``str(n_options)``, ``"none"`` (None of the above),
    ``"multiple"`` (two different options named first), ``"unsure"`` or ``"unknown"``.

    As the released reader: the first line (or sentence) names the pick, "Option 2", "The inaccurate option is 2"
    or a leading "2." / "(2)", leaving out options it calls correct ("Option 1 is correct, but Option 2 is
    false" picks 2); a "None of the above" / "All of the options are correct" answer picks none; else the last
    sentence may name it."""
    if text is None or not text.strip():
        return "unknown"
    if _UNSURE_RE.match(text):
        return "unsure"
    stripped = text.strip()
    first = re.split(r"\n|(?<=[.!?])\s", stripped, maxsplit=1)[0]
    verdict = _VERDICT_RE.search(stripped)
    if verdict and not _picks(first, n_options) and 1 <= int(verdict.group(1)) <= n_options:
        # "The wrong option regarding the song "X" (feat. Y) is Option 2: ..." names its pick past a period
        return verdict.group(1)
    for part in (first, re.split(r"(?<=[.!?])\s+", stripped)[-1]):
        picked = _picks(part, n_options)
        if _NOTA_RE.search(part) and not picked:
            return "none"
        if len(picked) == 1:
            return picked[0]
        if len(picked) > 1:
            return "multiple"
    if _NOTA_RE.search(stripped):
        return "none"
    return "unknown"


_KNOWN_NEG = re.compile(r"\b(?:no|not|never|unsure|uncertain|unknown|cannot|can't|don't|doesn't|didn't|isn't|wasn't|"
                        r"aren't|weren't|unable|however|but)\b|n't\b", re.IGNORECASE)
_KNOWN_YES = re.compile(r"\byes\b|^\W*i\s+(?:do\s+)?know\b|^\W*i\s+am\s+familiar\b|^\W*i'm\s+familiar\b",
                        re.IGNORECASE)


KNOWN_RULES = ("released", "only_yes")
_NO_WORD = re.compile(r"\bno\b", re.IGNORECASE)


def knows_entity(text: str | None, *, names: Sequence[str] = (), rule: str = "released") -> bool:
    """Whether a known-entity answer says the model knows the entity (§B.2). ``rule="released"`` (default): the
    released scripts' reading, which produced the paper's Tables 2, 4 and 13: known unless the answer contains the
    word "no" ("I'm not sure." is known there). ``rule="only_yes"`` (the paper's text, stricter): True iff the
    answer says only yes, i.e. it says "yes" (or "I know ...") and nothing that denies, doubts or qualifies ("no",
    "not", "unsure", "but", ...); "Yes. Yes. Yes." is known, "Yes, but I am not sure about the director." and "I
    don't know." are not; it keeps far fewer entities than the tables were computed on (GPT-4 Book: 353 against
    639). ``names`` (the prompt's attribute values) are removed first, so that the "No" of "No Country for Old Men"
    is not read as a denial (as the released reader removes the title).

        >>> knows_entity("Yes, I know it."), knows_entity("I'm not sure."), knows_entity("No.")
        (True, True, False)
        >>> knows_entity("I'm not sure.", rule="only_yes")
        False
    """
    if rule not in KNOWN_RULES:
        raise ValueError(f"knows_entity: rule must be one of {', '.join(KNOWN_RULES)}, got {rule!r}")
    if text is None or not text.strip():
        return False
    text = text.replace("\u2019", "'")
    for name in sorted((str(n) for n in names if n), key=len, reverse=True):
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    if rule == "released":
        return not _NO_WORD.search(text)
    return bool(_KNOWN_YES.search(text)) and not _KNOWN_NEG.search(text)


# ------------------------------------------------------------------------------------------------------ metrics
@dataclass(frozen=True)
class BinaryAnswer:
    """One binary answer to score: the response ``text``, the ``expected`` answer ("yes" or "no"), the FD-inferred
    values that a correct rationale mentions, the question (read for negated questions) and other spellings of the
    inferred values (``aliases``: value -> spellings)."""

    text: str | None
    expected: str
    inferred: tuple[str, ...] = ()
    question: str | None = None
    aliases: Mapping[str, Sequence[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ChoiceAnswer:
    """One multiple-choice answer to score: the response ``text``, the number of options shown, the ``expected``
    pick (the 1-based number of the false option as a string, or ``"none"`` for None of the above), the values the
    rationale must mention (``inferred``: the false option's true value) and their other spellings (``aliases``)."""

    text: str
    n_options: int
    expected: str
    inferred: tuple[str, ...] = ()
    aliases: Mapping[str, Sequence[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """One answer read: ``label`` (yes / no / unsure / unknown; or the option, none, multiple, unsure, unknown),
    whether it is ``correct``, whether its rationale mentions every inferred value (None: nothing to check) and
    whether it counts as ``missing`` (M)."""

    label: str
    correct: bool
    rationale: bool | None
    missing: bool


def read_binary_answer(answer: BinaryAnswer, *, match: Sequence[Sequence[str]] | None = None,
                       answer_reading: str = "released", rationale_match: str = "released") -> Reading:  # fmt: skip
    """The reading of one binary answer, as :func:`binary_metrics` and the suite's scoring count it: unreadable
    answers are missing, as in the released scripts. ``answer_reading`` (:data:`ANSWER_READINGS`): ``released``
    (default, Tables 2 and 4: an answer whose first line starts with neither yes nor no is unsure) or ``kgprobe``
    (such an answer is read by its content); ``rationale_match`` (:data:`RATIONALE_MATCHES`): ``released``
    (default, substring) or ``kgprobe`` (whole words). ``match``: each inferred value's extra heuristics
    (``last_name``, ...), by position."""
    label = read_binary(answer.text, answer.question, answer_reading=answer_reading)
    return Reading(label=label, correct=label == answer.expected.strip().lower(),
                   rationale=rationale_matches(answer.text, answer.inferred, match=match, aliases=answer.aliases,
                                               rationale_match=rationale_match),
                   missing=label in ("unsure", "unknown"))


NOTA_RATIONALE_READINGS = ("zero", "skip")


def read_choice(answer: ChoiceAnswer, *, match: Sequence[Sequence[str]] | None = None,
                nota_rationale: str = "zero", rationale_match: str = "released") -> Reading:  # fmt: skip
    """The reading of one multiple-choice answer, as :func:`choice_metrics` and the suite's scoring count it.

    A is the pick equal to ``expected``; R is every inferred value mentioned; M is an answer that says it is
    unsure. A None-of-the-above question has no false option whose true value to look for: with
    ``nota_rationale="zero"`` (default, the released ``error_analysis.py``) its rationale counts as wrong (R and AR
    count it 0), with ``"skip"`` it is None (left out of R and AR). ``rationale_match``: ``released`` (default,
    the released substring check, Table 2) or ``kgprobe`` (whole words; see :func:`value_mentioned`). An answer whose
    pick cannot be read, or that names several options, is wrong, not missing: the released reader reads it as
    "None of the above", which is why the paper's MC columns have H = 1 - A."""
    label = read_option(answer.text, int(answer.n_options))
    expected = str(answer.expected).strip().lower()
    # "none", "None of the above", "NONE OF ABOVE" (the released logs), "nota"; "Option 2" / "2." name option 2
    if expected.startswith("none") or expected == "nota":
        expected = "none"
    elif m := re.fullmatch(r"(?:option\s*)?\(?(\d+)\)?\.?", expected):
        expected = str(int(m.group(1)))
    if nota_rationale not in NOTA_RATIONALE_READINGS:
        raise ValueError(f"read_choice: nota_rationale must be one of {', '.join(NOTA_RATIONALE_READINGS)}, "
                         f"got {nota_rationale!r}")
    if expected == "none":
        rationale = False if nota_rationale == "zero" else None
    else:
        rationale = rationale_matches(answer.text, answer.inferred, match=match, aliases=answer.aliases,
                                      rationale_match=rationale_match)
    return Reading(label=label, correct=label == expected, rationale=rationale, missing=label == "unsure")


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


def measures(readings: Sequence[Reading]) -> ERMetrics:
    """A, R, AR, M and H of answers already read (:func:`read_binary_answer`, :func:`read_choice`): R and AR over the
    readings that have a rationale to check."""
    n = len(readings)
    if not n:
        nan = math.nan
        return ERMetrics(n=0.0, A=nan, R=nan, AR=nan, M=nan, H=nan)
    a = sum(r.correct for r in readings)
    m = sum(r.missing for r in readings)
    with_r = [r for r in readings if r.rationale is not None]
    r_share = sum(bool(r.rationale) for r in with_r) / len(with_r) if with_r else math.nan
    ar_share = sum(bool(r.rationale) and r.correct for r in with_r) / len(with_r) if with_r else math.nan
    return ERMetrics(n=float(n), A=a / n, R=r_share, AR=ar_share, M=m / n, H=(n - a - m) / n)


def binary_metrics(answers: Iterable[BinaryAnswer], *, answer_reading: str = "released",
                   rationale_match: str = "released") -> ERMetrics:  # fmt: skip
    """A, R, AR, M and H of binary answers (all NaN when there are none), read as Tables 2 and 4 were by default
    (``answer_reading`` and ``rationale_match``, see :func:`read_binary_answer`): an answer whose first line
    starts with neither yes nor no is unsure (missing), a rationale names a value when it contains it."""
    return measures([read_binary_answer(a, answer_reading=answer_reading, rationale_match=rationale_match)
                     for a in answers])


def choice_metrics(answers: Iterable[ChoiceAnswer], *, rationale_match: str = "released") -> ERMetrics:
    """A, R, AR, M and H of multiple-choice answers (the paper's MC definitions; all NaN when there are none): A the
    share picking the false option (or None of the above where that is expected), R the share whose rationale
    mentions the false option's true value (a None-of-the-above question counts 0, as the released code), AR both, M the share that say they
    are unsure, H = 1 - A - M. Unreadable and multiple picks are wrong (see :func:`read_choice`).

        >>> choice_metrics([ChoiceAnswer("Option 2: the country is wrong; it is USA.", 3, "2", ("USA",))]).AR
        1.0
    """
    return measures([read_choice(a, rationale_match=rationale_match) for a in answers])
