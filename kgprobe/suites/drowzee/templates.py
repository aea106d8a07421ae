"""Drowzee's wording: relation phrase types and the question templates of Table 2, the temporal templates of
Table 3 (MTL2NL), the prompts of Table 4, and the declarative sentences a perfect answer states its knowledge in.

Phrase types (Fig. 7): a relation label is a *noun phrase* ("place of birth", "spouse"), a *passive verb phrase*
("painted by", "located in") or an *active verb phrase* ("flows through", "shares border with"). The type decides
both the question (Table 2, a positive and an opposite-semantics phrasing whose answer flips) and the declarative
sentence of a fact:

=========  ===============================================  ==============================================
type       question (positive / opposite)                   declarative sentence
=========  ===============================================  ==============================================
noun       Is it true that O is the R of S? /               The R of S is O.
           O is not the R of S. Please judge the
           truthfulness of this statement.
passive    Is it true that S is R O? /                       S is R O.
           It is impossible for S to be R O. Am I right?
active     Is it true that S R O? /                          S R O.
           It is not true that S R O. Am I right?
same_P     Is it true that A and B share the same R? /       (the two premises)
           A and B have totally different R. Please
           judge the truthfulness of this statement.
           (a verb R: Is it true that A R the same one
           as B? / It is not true that ... Am I right?)
=========  ===============================================  ==============================================

A relation key without a label becomes words (:func:`relation_phrase`: ``diedIn`` -> "died in", ``hasWonPrize`` ->
"won the prize", ``award_received`` -> "award received"); a label file or the suite config's ``relation_phrases``
give better ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kgprobe.suites.drowzee.temporal import (
    And,
    Atom,
    Finally,
    Formula,
    Globally,
    Next,
    Not,
    Or,
    Until,
)

__all__ = [
    "DANGLING",
    "PHRASE_TYPES",
    "PROMPT_TEMPLATES",
    "fact_sentence",
    "mtl2nl",
    "past_tense",
    "phrase_type",
    "prompt_text",
    "relation_phrase",
    "rule_question",
    "temporal_question",
    "year_sentences",
]

PHRASE_TYPES: tuple[str, ...] = ("noun", "passive", "active")

_ACTIVE_VERBS = {"flows", "depicts", "follows", "replaces", "contains", "shares", "owns", "influences", "uses",
                 "has", "includes", "borders", "applies", "created", "influenced", "won", "plays", "works",
                 "graduated", "died", "is", "was",
                 # past verbs that take no "is": YAGO's happenedIn, participatedIn, actedIn, wroteMusicFor, directed
                 "happened", "occurred", "participated", "acted", "wrote", "directed", "edited", "lived",
                 "imports", "exports", "deals"}
_PARTICIPLES = {"born", "made", "written", "held", "known", "built", "founded", "buried", "sung", "drawn", "shown",
                "given", "taken", "won", "led", "sold", "run", "set", "kept", "housed", "named", "located",
                "based", "painted", "composed", "directed", "sculpted", "commissioned", "educated", "married",
                "killed", "designed", "owned", "maintained", "affiliated"}


_PREPOSITIONS = {"by", "in", "at", "from", "to", "for", "on", "of", "with", "as", "into", "after", "through", "under"}


def phrase_type(label: str, overrides: Mapping[str, str] | None = None, key: str | None = None) -> str:
    """The phrase type of a relation label (``noun``, ``passive``, ``active``): an override for its key wins; a
    label opening with a finite verb is active ("flows through", "died in", "owns", "won the prize", "is married
    to") unless a "by" follows it; one opening with a past participle followed by more words is passive ("painted
    by", "located in"); a third-person verb before a preposition is active ("lives in"); any other a noun phrase."""
    if overrides and key in overrides:
        kind = overrides[key]
        if kind not in PHRASE_TYPES:
            raise ValueError(f"phrase type of {key!r} must be one of {PHRASE_TYPES}, got {kind!r}")
        return kind
    words = label.strip().lower().split()
    if not words:
        return "noun"
    first = words[0]
    if first in _ACTIVE_VERBS and (len(words) == 1 or words[1] != "by"):
        return "active"
    if len(words) >= 2 and (first in _PARTICIPLES or (first.endswith("ed") and len(first) > 4)):
        return "passive"
    third_person = first.endswith("s") and not first.endswith("ss") and len(first) > 3
    if len(words) >= 2 and words[1] in _PREPOSITIONS and third_person:
        return "active"
    return "noun"


def _participle(word: str) -> bool:
    return word in _PARTICIPLES or word.endswith(("ed", "en"))


def _has_participle(words: list[str]) -> list[str]:
    """ "has won prize" -> "won the prize": a perfect-tense key reads as a past verb with its object; "has child" ->
    "child" (a noun: "Y is the child of X"); "is citizen of" -> "is a citizen of"."""
    if len(words) >= 3 and words[0] in ("has", "have", "had") and _participle(words[1]):
        return [words[1], "the", *words[2:]]
    if len(words) >= 2 and words[0] == "has":
        return words[1:]
    if (len(words) >= 3 and words[0] == "is" and words[-1] in _PREPOSITIONS and words[1] not in _PARTICIPLES
            and not words[1].endswith("ed") and words[1] not in ("a", "an", "the")):
        from kgprobe.kg.verbalise import indefinite_article

        return ["is", indefinite_article(words[1]), *words[1:]]
    return words


def relation_phrase(key: str, label: str | None = None, overrides: Mapping[str, str] | None = None) -> str:
    """The words a question uses for a relation: the config's phrase for ``key`` (``relation_phrases``), else its
    label when the label is words (not the key again), else the key made into words: camelCase and snake_case
    split, lower-cased (acronyms kept), "has <participle> X" turned into "<participle> the X", "has X" into the
    noun X and "is X of" into "is a X of".

        >>> relation_phrase("diedIn"), relation_phrase("hasWonPrize"), relation_phrase("award_received")
        ('died in', 'won the prize', 'award received')
        >>> relation_phrase("hasChild"), relation_phrase("isCitizenOf"), relation_phrase("isLocatedIn")
        ('child', 'is a citizen of', 'is located in')
    """
    if overrides and overrides.get(key):
        return overrides[key]
    if label and label.strip() and not _is_key(label.strip()) and label.strip() != key:
        return label.strip()
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key.strip().strip("<>"))
    words = [w if w.isupper() and len(w) > 1 else w.lower() for w in re.split(r"[\s_\-]+", text) if w]
    return " ".join(_has_participle(words))


def _is_key(text: str) -> bool:
    """Whether a label is an identifier rather than words: one token with an underscore or an inner capital."""
    return " " not in text and ("_" in text or re.search(r"[a-z][A-Z]", text) is not None)


_PAST = {"is": "was", "are": "were", "has": "had", "have": "had", "does": "did", "do": "did", "wins": "won",
         "makes": "made", "leads": "led", "holds": "held", "gives": "gave", "takes": "took", "writes": "wrote",
         "sings": "sang", "builds": "built", "teaches": "taught", "finds": "found", "becomes": "became"}


def past_tense(phrase: str) -> str:
    """A verb phrase's first word in the past tense ("plays for" -> "played for", "is married to" -> "was married
    to", "lives in" -> "lived in"); a word already past ("created", "won", "died in") stays."""
    words = phrase.split(" ", 1)
    w = words[0]
    low = w.lower()
    if low in _PAST:
        out = _PAST[low]
    elif low.endswith("ies") and len(low) > 4:
        out = w[:-3] + "ied"
    elif low.endswith(("sses", "shes", "ches", "xes", "zes")):
        out = w[:-2] + "ed"
    elif low.endswith("es") and len(low) > 3:
        out = w[:-1] + "d"
    elif low.endswith("s") and not low.endswith("ss") and len(low) > 3:
        out = w[:-1] + "ed"
    else:
        out = w
    return " ".join([out, *words[1:]])


def _when(period: tuple[int, int]) -> str:
    start, end = period
    return f"in {start}" if start == end else f"from {start} to {end}"


def _sentence_case(text: str) -> str:
    """``text`` opening with a capital when its first word is all lower case (a label such as "stroke" or "cancer"
    that opens the sentence); a word with its own capitals ("iPhone") is kept as written."""
    first = text.split(" ", 1)[0]
    return text[:1].upper() + text[1:] if first.islower() else text


def rule_question(kind: str, subject: str, relation: str, obj: str, *, opposite: bool, same: bool = False,
                  period: tuple[int, int] | None = None) -> str:  # fmt: skip
    """Table 2's question for ``relation(subject, obj)`` in the relation's phrase ``kind``; ``opposite`` gives the
    opposite-semantics phrasing (its expected answer is the flip); ``same`` the same_P wording (a noun relation
    "share the same R"; a verb one "S R the same one as O", since "share the same plays for" is no sentence).
    ``period`` (first year, last year) asks it in the past tense over those years, for a fact a temporal KG dates:
    "Is it true that X was married to Y from 1965 to 1972?".
    The question opens with a capital ("Stroke is not the cause of death of ...")."""
    return _sentence_case(_rule_question(kind, subject, relation, obj, opposite=opposite, same=same, period=period))


def _rule_question(kind: str, subject: str, relation: str, obj: str, *, opposite: bool, same: bool = False,
                   period: tuple[int, int] | None = None) -> str:  # fmt: skip
    """The question of :func:`rule_question`, as its template writes it."""
    if period is not None:
        return _dated_question(kind, subject, relation, obj, opposite=opposite, same=same, when=_when(period))
    if same:
        if kind == "noun":
            return (f"{subject} and {obj} have totally different {relation}. Please judge the truthfulness of this "
                    f"statement." if opposite else f"Is it true that {subject} and {obj} share the same {relation}?")
        verb = f"is {relation}" if kind == "passive" else relation
        clause = f"{subject} {verb} the same one as {obj}"
        return f"It is not true that {clause}. Am I right?" if opposite else f"Is it true that {clause}?"
    if kind == "passive":
        return (f"It is impossible for {subject} to be {relation} {obj}. Am I right?" if opposite
                else f"Is it true that {subject} is {relation} {obj}?")
    if kind == "active":
        return (f"It is not true that {subject} {relation} {obj}. Am I right?" if opposite
                else f"Is it true that {subject} {relation} {obj}?")
    return (f"{obj} is not the {relation} of {subject}. Please judge the truthfulness of this statement." if opposite
            else f"Is it true that {obj} is the {relation} of {subject}?")


def _dated_question(kind: str, subject: str, relation: str, obj: str, *, opposite: bool, same: bool,
                    when: str) -> str:  # fmt: skip
    """:func:`rule_question` in the past tense over ``when`` ("in 1970", "from 1965 to 1972")."""
    if same:
        if kind == "noun":
            return (f"{subject} and {obj} had totally different {relation} {when}. Please judge the truthfulness of "
                    f"this statement." if opposite else
                    f"Is it true that {subject} and {obj} shared the same {relation} {when}?")
        verb = f"was {relation}" if kind == "passive" else past_tense(relation)
        clause = f"{subject} {verb} the same one as {obj} {when}"
        return f"It is not true that {clause}. Am I right?" if opposite else f"Is it true that {clause}?"
    if kind == "passive":
        return (f"It is impossible for {subject} to have been {relation} {obj} {when}. Am I right?" if opposite
                else f"Is it true that {subject} was {relation} {obj} {when}?")
    if kind == "active":
        return (f"It is not true that {subject} {past_tense(relation)} {obj} {when}. Am I right?" if opposite
                else f"Is it true that {subject} {past_tense(relation)} {obj} {when}?")
    return (f"{obj} was not the {relation} of {subject} {when}. Please judge the truthfulness of this statement."
            if opposite else f"Is it true that {obj} was the {relation} of {subject} {when}?")


def fact_sentence(kind: str, subject: str, relation: str, obj: str) -> str:
    """The declarative sentence of the fact ``relation(subject, obj)`` (the knowledge a perfect answer lists)."""
    if kind == "passive":
        text = f"{subject} is {relation} {obj}"
    elif kind == "active":
        text = f"{subject} {relation} {obj}"
    else:
        text = f"The {relation} of {subject} is {obj}"
    return _sentence_case(text if text.endswith(".") else text + ".")


def year_sentences(event: str, start: int, end: int | None, *, kind: str = "event",
                   open_end: str = "unknown") -> list[str]:  # fmt: skip
    """The declarative sentences of one interval of an event, stating only what the data gives: a point "happened
    in" its year; an interval started and ended; one without an end started and is still ongoing (``open_end``
    ``ongoing``) or has no recorded end (never an invented end year)."""
    if kind == "point" or (end is not None and end == start and kind != "state"):
        return [f"{event} happened in {start}."]
    if end is None:
        return [f"{event} started in {start} and is still ongoing." if open_end == "ongoing"
                else f"{event} started in {start}, and its end is not recorded."]
    return [f"{event} started in {start}.", f"{event} ended in {end}."]


# ------------------------------------------------------------------------------------------------ Table 3


def _ordinal(n: int) -> str:
    if 11 <= n % 100 <= 13:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }".replace(" ", "")


def _frame(lo: int, hi: int) -> str:
    return f"the {_ordinal(lo)} to the {_ordinal(hi)} year"


#: Words a complete question never ends on (before its question mark).
DANGLING: frozenset[str] = frozenset({"after", "before", "of", "the", "a", "an", "and", "or", "to", "in", "at", "by",
                                      "for", "from", "with", "is", "was", "that", "within", "until", "where"})


def mtl2nl(formula: Formula, year: int, labels: Mapping[str, str] | None = None, *,
           kinds: Mapping[str, str] | None = None) -> str:  # fmt: skip
    """Table 3's question for ``(formula, year)``: MTL2NL applied recursively, subformulas named "Event" and defined
    after the question, as the paper's templates do. ``kinds`` says which atoms are facts that hold over years
    (``state``: "holding", asked "Did … hold in the year t?") rather than events ("happening"); a nested
    operator's frame counts from "that year", so no description ends in a dangling "after".

        >>> mtl2nl(Finally(0, 40, Atom("victorian_era")), 1800, {"victorian_era": "Victorian era"})
        'Did "Event" finally happen within the time frame of the 0th to the 40th year after the year 1800, where "Event" is defined as "Victorian era" happening?'
    """
    labels = labels or {}
    kinds = kinds or {}

    def desc(f: Formula) -> str:
        if isinstance(f, Atom):
            return f'"{labels.get(f.name, f.name)}" {"holding" if kinds.get(f.name) == "state" else "happening"}'
        if isinstance(f, Not):
            if isinstance(f.f, Atom):
                return (f'"{labels.get(f.f.name, f.f.name)}" not '
                        f'{"holding" if kinds.get(f.f.name) == "state" else "happening"}')
            return f"{desc(f.f)} not being the case"
        if isinstance(f, And):
            return f"both {desc(f.a)} and {desc(f.b)}"
        if isinstance(f, Or):
            return f"either {desc(f.a)} or {desc(f.b)}"
        if isinstance(f, Next):
            return f"{desc(f.f)} in the year after that year"
        if isinstance(f, Finally):
            return f"{desc(f.f)} at some point within {_frame(f.lo, f.hi)} after that year"
        if isinstance(f, Globally):
            return f"{desc(f.f)} throughout {_frame(f.lo, f.hi)} after that year"
        return (f"{desc(f.a)} continuously until {desc(f.b)} starts, within {_frame(f.lo, f.hi)} after that "
                f"year")

    f = formula
    if isinstance(f, Atom):
        if kinds.get(f.name) == "state":
            return f'Did "{labels.get(f.name, f.name)}" hold in the year {year}?'
        return f'Did "{labels.get(f.name, f.name)}" happen at year {year}?'
    if isinstance(f, Finally):
        return (f'Did "Event" finally happen within the time frame of {_frame(f.lo, f.hi)} after the year {year}, '
                f'where "Event" is defined as {desc(f.f)}?')
    if isinstance(f, Globally):
        return (f'Did "Event" globally happen within the time frame of {_frame(f.lo, f.hi)} after the year {year}, '
                f'where "Event" is defined as {desc(f.f)}?')
    if isinstance(f, Next):
        return f'Did "Event" happen in the next year of {year}, where "Event" is defined as {desc(f.f)}?'
    if isinstance(f, Until):
        return (f'Did "Event1" happen continuously until "Event2" started, during the period of {_frame(f.lo, f.hi)} '
                f'after the year {year}, where "Event1" is {desc(f.a)} and "Event2" is {desc(f.b)}?')
    if isinstance(f, And):
        return (f'Did both "Event1" and "Event2" happen at year {year}, where "Event1" is {desc(f.a)} and '
                f'"Event2" is {desc(f.b)}?')
    if isinstance(f, Or):
        return (f'Did either "Event1" or "Event2" happen at year {year}, where "Event1" is {desc(f.a)} and '
                f'"Event2" is {desc(f.b)}?')
    return f'Did "Event" not happen at year {year}, where "Event" is {desc(f.f)}?'


temporal_question = mtl2nl


# ------------------------------------------------------------------------------------------------ Table 4

#: Table 4's prompts: the instruction (system message) and the relation / temporal query.
PROMPT_TEMPLATES: dict[str, str] = {
    "instruction": "Answer the question with your knowledge and reasoning power.",
    "relation": ("Given the question: {question}, please provide an answer with your knowledge and reasoning power. "
                 "Think of it step by step with a human-like reasoning process. After giving the answer, list the "
                 "knowledge used in your reasoning process in the form of declarative sentences and point by point. "
                 "The answer must contain 'Yes', 'No' or 'I don't know' at the beginning."),
    "temporal": ("Given the question: {question}, please provide an answer with your knowledge and reasoning power "
                 "upon metric temporal logic. Think it step by step with a human-like reasoning process. After giving "
                 "the answer, list the evidence from your temporal reasoning in the form of declarative sentences and "
                 "point by point. The answer must contain 'Yes', 'No' or 'I don't know' at the beginning."),
}

_SPACE = re.compile(r"\s+")


def prompt_text(task: str, question: str) -> str:
    """Table 4's query for a ``rule`` (relation) or ``temporal`` question."""
    return PROMPT_TEMPLATES["temporal" if task == "temporal" else "relation"].format(question=_SPACE.sub(" ", question))
