"""Read a model's free-text answer as a label: yes / no / unknown, or true / false / idk / unknown.

KG-FPQ asks yes/no questions and scores the answers, and its FPQ-Judge answers "Yes" (factual) or "No"; GraphEval
asks whether a statement is true, false, or the model does not know. Models rarely answer with the bare word, so the
labels are only as trustworthy as the reading of "**No**, Titian died in Venice", "Answer: Yes." or "I'm not sure".
The rules below read like a careful human reader, and where they cannot decide they say ``"unknown"``; they never
guess. Callers store the raw text beside the label: these functions neither change nor keep the text, so any label
can be re-read later with better rules, and :func:`explain_yes_no` names the rule behind each one for reports.

    >>> parse_yes_no("**No**, Titian died in Venice.")
    'no'
    >>> explain_yes_no("Titian did not die in Venice.", question="Did Titian die in Venice?")
    ('no', 'negated_restatement')

Before the rules, the start of the text is cleared of what cannot be the answer: markdown (``**``, ``__``, backticks,
headings, quotes, bullets) and leading punctuation, "Answer:" / "A:" / "The answer is" / "Final answer:" style
prefixes, an echoed question ("Question: ...?"), apologies and fillers ("I'm sorry, but", "Well,", "Based on the
facts,", "As an AI model,"). Only the first 400 characters are read: the answer is at the start or nowhere.

The rules, in the order they apply (the name is what ``explain_*`` returns):

1. ``empty``: ``None``, an empty or whitespace-only text -> unknown.
2. ``both``: the text opens with both options ("Yes or no", "Yes/No", "Yes and no", "True or false") -> unknown.
3. ``abstain``: the text opens with a hedge or an abstention: "I don't know", "I'm not sure", "unsure", "It is not
   possible to say", "cannot be determined", "there is not enough information", "no idea", "no information", and
   the probability words "maybe", "perhaps", "possibly", "probably", "likely", "unlikely", "it depends". A hedge
   before the answer wins over the answer: "I'm not sure, but yes" is unknown, because a guess the model itself
   disowns is not a commitment and must not earn credit. (:func:`parse_true_false` reads it as "idk", the explicit
   abstention GraphEval counts.)
4. ``answer_word``: the text opens with an answer word. "yes", "yeah", "yep", "yup" -> yes, whatever follows;
   "nope", "nah" -> no; "no" -> no when punctuation, a line break or the end follows, or a clause begins ("No it
   isn't", "No, ..."), but not where "no" is a determiner ("No information ...", "No evidence ...", "No one ...").
   Words that only answer when they stand alone, followed by punctuation or the end ("Correct.", "Indeed, ...",
   "True", "Absolutely!"): correct, true, indeed, absolutely, certainly, definitely, exactly, affirmative,
   accurate, factual -> yes; incorrect, false, wrong, negative, never, inaccurate, untrue, non-factual -> no.
   An intensifier followed by "not" / "yes" / "no" ("Absolutely not", "Of course not", "Certainly yes") -> that
   answer. "Absolutely nothing suggests ..." is no answer: the word does not stand alone.
5. ``answer_phrase``: the text opens with a standalone verdict phrase: "That's correct", "This is true", "It is
   true", "The statement is true", "Of course", "I think so", "I believe so" -> yes; "That's incorrect", "That is
   not true", "The statement is false", "Not at all", "Not really", "Not true", "I don't think so", "I'm afraid
   not" -> no. As in rule 4 the phrase must stand alone: "It is true that X never ..." says nothing about the
   question by itself.
6. ``restatement`` / ``negated_restatement`` (only when the question is given): the first clause states the
   question's claim back, word for word up to articles, case and quotes ("Is A B?" -> "A is B", "A is indeed B";
   "Did A die in B?" -> "A died in B"; "Does A flow ..." -> "A flows ...") -> yes; or denies it ("A is not B",
   "A isn't B", "A did not die in B", "A never died in B", "A does not flow ...") -> no. The claim must end the
   clause: punctuation, the end, or an adjunct ("in", "on", "at", "during", "after", "before", "since", "until",
   "when", "while", "because", "where", "aged", "around") follows, so "A is not B, but C" is no and "A died in B in
   1576" is yes, while "A died in B Beach" restates nothing. Answers that state a different fact ("A died in C")
   are never read as no: that reading needs world knowledge (is the relation single-valued?) the reader does not
   have. Without the question these answers are unknown (rule 7), never a different label.
7. ``no_answer``: nothing above decided (a cut-off "The answer is", a statement that does not address the question,
   gibberish) -> unknown.

The first answer wins: rules 2-6 read only the start of the text, so "No, ... Yes, ..." is no and an explanation
that contradicts the answer word ("No. Voltaire died in the Getty Museum.") does not change it. "There is no evidence
that X ..." neither answers nor abstains (a reader cannot tell a cautious no from "I can't say"), so it is
unknown under both readings.

The functions are pure and fast (tens of thousands of texts per second): every pattern is compiled once and only
the start of the text is read.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice
from typing import Literal, TypeAlias

__all__ = [
    "TRUE_FALSE_LABELS",
    "YES_NO_LABELS",
    "TrueFalseLabel",
    "YesNoLabel",
    "explain_true_false",
    "explain_yes_no",
    "parse_true_false",
    "parse_yes_no",
]

YesNoLabel: TypeAlias = Literal["yes", "no", "unknown"]
TrueFalseLabel: TypeAlias = Literal["true", "false", "idk", "unknown"]

#: Every label :func:`parse_yes_no` returns.
YES_NO_LABELS: tuple[YesNoLabel, ...] = ("yes", "no", "unknown")
#: Every label :func:`parse_true_false` returns; "idk" is an explicit abstention, "unknown" an unreadable answer.
TRUE_FALSE_LABELS: tuple[TrueFalseLabel, ...] = ("true", "false", "idk", "unknown")

_HEAD = 400

_MARKUP = re.compile(r"[*_`]+")

# What may stand before the answer. One greedy repetition: it always matches (possibly empty), so nothing backtracks.
_PREAMBLE = re.compile(
    r"""(?:
        [\s#>•·"'“”‘()\[\]{}.,;:!…|~=+\-–—]+
      | (?:here(?:'s|\s+is)\s+)?(?:(?:the|my|our)\s+)?(?:(?:final|short|correct|right|best|true)\s+)?
        (?:answer|response|reply|output|verdict|judge?ment)\b(?:\s+to\s+(?:the|this|your|that)\s+question)?
        (?:\s+(?:is|would\s+be|will\s+be)\b\s*:?|\s*[:=\-–—]|[ \t]*\n|\s*$)
      | [aq]\s*:
      | question\s*:[^?\n]{0,300}\?
      | (?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b[^?.!\n]{0,200}\?
      | (?:(?:i'm|i\s+am|im)\s+sorry|sorry|i\s+apologi[sz]e|unfortunately|well|hmm+|um+|uh+|ok(?:ay)?|so|actually
          |honestly|in\s+short|in\s+summary|to\s+summari[sz]e|in\s+my\s+opinion
          |as\s+an\s+ai(?:\s+(?:language\s+)?(?:model|assistant))?)
        \b(?:\s*[,.!:;\-–—]\s*|\s+)(?:but\s+)?
      | (?:based\s+on|according\s+to)\b[^,.:\n]{0,150}[,:]\s*(?:but\s+)?
    )*""",
    re.VERBOSE,
)

# A word or phrase "stands alone" when punctuation (not "?"; a hyphen only after a space, so "no-one" is one word),
# a line break or the end follows it.
_ALONE = r"""(?=["')\]]*(?:[ \t]*(?:[.,!;:–—]|\n|$)|[ \t]+-))"""

_BOTH = re.compile(
    r"(?:yes\s*(?:/|,?\s*\b(?:or|and)\b)\s*no|no\s*(?:/|,?\s*\b(?:or|and)\b)\s*yes"
    r"|true\s*(?:/|,?\s*\b(?:or|and)\b)\s*false|false\s*(?:/|,?\s*\b(?:or|and)\b)\s*true)"
    r"(?![\w'])(?!\s+(?:one|longer|doubt|more|matter)\b)"
)

_ABSTAIN = re.compile(
    r"""(?:
        i\s+(?:do\s+not|don't|dont|do\s+n't)\s+(?:know|have\s+(?:enough\s+|sufficient\s+|any\s+|the\s+)?
            (?:information|data|knowledge|context|access|details|way))
      | i\s+(?:have\s+no|haven't\s+(?:got\s+)?(?:any|a))\s+(?:idea|clue|information|knowledge|data|way)
      | (?:i'm|i\s+am|im)\s+(?:not\s+(?:sure|certain|able|aware)|unsure|uncertain|unable|afraid\s+(?:that\s+)?i)
      | i\s+(?:can\s*not|can't|cant|could\s+not|couldn't|am\s+not\s+able\s+to)\s+(?:say|tell|know|determine|verify
            |confirm|answer|be\s+(?:sure|certain)|provide|find|access|help|assist|comment|judge|assess|decide|give)
      | (?:it\s+is|it's|it\s+was|this\s+is|that\s+is)\s+(?:not\s+(?:possible|clear|known|certain)|impossible
            |unclear|uncertain|unknown|difficult|hard|unanswerable|ambiguous|debatable|unverifiable)
      | (?:it|this|that|the\s+answer|which)\s+(?:can\s*not|can't|cannot)\s+be\s+(?:determined|said|known
            |verified|confirmed|answered|established|decided)
      | (?:can\s*not|can't)\s+(?:be\s+(?:determined|said|known|verified|confirmed|answered)|say|tell|verify
            |confirm|answer|know|determine)
      | there\s+(?:is|'s|are)\s+(?:not\s+(?:enough|sufficient)|insufficient|no\s+(?:way\s+to|information|data
            |(?:clear|definitive|definite|simple)\s+answer))
      | there\s+(?:isn't|aren't)\s+(?:enough|sufficient|any\s+(?:information|data|way))
      | (?:not\s+(?:sure|certain|enough|possible|clear|known|necessarily)|unsure|uncertain|unclear|unknown
            |undetermined|undecided|unanswerable|insufficient|maybe|perhaps|possibly|probably|likely|unlikely
            |it\s+depends|depends|hard\s+to|difficult\s+to|idk|no\s+(?:idea|clue|information|data|comment|way\s+to)
            |no[\s-]+one\s+(?:knows|can)|nobody\s+knows|impossible\s+to|who\s+knows|unable\s+to|need\s+more|n/a)
    )\b""",
    re.VERBOSE,
)

_CLAUSE_START = ("it|it's|its|he|she|they|i|i'm|we|you|that|that's|this|there|there's|not|never|the|he's|she's"
                 "|they're|absolutely|definitely|certainly|way")
_YES_ALONE = "correct|true|indeed|absolutely|certainly|definitely|exactly|affirmative|accurate|factual"
_NO_ALONE = "incorrect|false|wrong|negative|never|inaccurate|untrue|non-?factual"
_INTENSIFIER = r"(?:absolutely|certainly|definitely|of\s+course|indeed|surely)"

_WORD = re.compile(
    rf"""(?:
        (?P<yes>yes|yeah|yep|yup|yea)(?![\w'])
      | (?P<no>nope|nah)(?![\w'])
      | (?P<no2>no)(?:{_ALONE}|\s+(?:{_CLAUSE_START})\b)
      | {_INTENSIFIER}\s+(?:(?P<yes2>yes)(?![\w'])|(?P<no3>not(?![\w'])|no{_ALONE}))
      | (?P<yes3>{_YES_ALONE}){_ALONE}
      | (?P<no4>{_NO_ALONE}){_ALONE}
    )""",
    re.VERBOSE,
)

_SUBJECT = (r"(?:(?:the|this|that)\s+(?:statement|claim|assertion|premise|answer|information|fact)"
            r"|that|this|it|which)")
_TRUE_ADJ = r"(?:true|correct|right|accurate|factual|the\s+case)"
_FALSE_ADJ = r"(?:false|incorrect|wrong|inaccurate|untrue|not\s+factual|non-?factual)"
_MOD = r"(?:(?:indeed|absolutely|definitely|certainly|entirely|completely|quite)\s+)?"
_PHRASE = re.compile(
    rf"""(?:
        (?P<no>{_SUBJECT}(?:'s\s+not|\s+is\s+not|\s+isn't|\s+was\s+not|\s+wasn't)\s+{_MOD}{_TRUE_ADJ}
          | {_SUBJECT}(?:'s|\s+is|\s+was)\s+{_MOD}{_FALSE_ADJ}
          | not\s+(?:at\s+all|really|true|correct|right|accurate|factual|so|the\s+case)
          | i\s+(?:don't|do\s+not)\s+(?:think|believe)\s+so | i\s+(?:think|believe)\s+not
          | (?:i'm|i\s+am)\s+afraid\s+not)
      | (?P<yes>{_SUBJECT}(?:'s|\s+is|\s+was)\s+{_MOD}{_TRUE_ADJ}
          | of\s+course | i\s+(?:think|believe)\s+so | (?:i'm|i\s+am)\s+afraid\s+so)
    ){_ALONE}""",
    re.VERBOSE,
)

_TOKEN = re.compile(r"\w+(?:['\-.]\w+)*")
_ARTICLES = frozenset({"a", "an", "the"})
# The claim ends the clause at punctuation or where an adjunct begins ("died in Venice in 1576"), never mid-name.
_CLAUSE_END = re.compile(r"""["')\]]*(?:[ \t]*[.!;,:\n]|[ \t]+(?:in|on|at|during|after|before|since|until|when|while
                         |because|where|aged|around)[ \t]+\w)""", re.VERBOSE)
_TRAILING = "\"')] \t\n"

_COPULAS = frozenset({"is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would", "should",
                      "may", "might", "must"})
_NEGATED = {"is": ("isn't",), "are": ("aren't",), "was": ("wasn't",), "were": ("weren't",), "has": ("hasn't",),
            "have": ("haven't",), "had": ("hadn't",), "can": ("can't", "cannot"), "could": ("couldn't",),
            "will": ("won't",), "would": ("wouldn't",), "should": ("shouldn't",), "must": ("mustn't",)}
_PAST = {"be": "was", "become": "became", "begin": "began", "bear": "bore", "bring": "brought", "build": "built",
         "buy": "bought", "choose": "chose", "come": "came", "do": "did", "draw": "drew", "drive": "drove",
         "fall": "fell", "feel": "felt", "fight": "fought", "find": "found", "flee": "fled", "fly": "flew",
         "get": "got", "give": "gave", "go": "went", "grow": "grew", "have": "had", "hold": "held", "keep": "kept",
         "know": "knew", "lead": "led", "leave": "left", "lose": "lost", "make": "made", "meet": "met",
         "put": "put", "read": "read", "ride": "rode", "rise": "rose", "run": "ran", "say": "said", "see": "saw",
         "sell": "sold", "send": "sent", "set": "set", "sing": "sang", "sit": "sat", "speak": "spoke",
         "spend": "spent", "stand": "stood", "swim": "swam", "take": "took", "teach": "taught", "tell": "told",
         "think": "thought", "throw": "threw", "understand": "understood", "win": "won", "write": "wrote"}
_THIRD = {"be": "is", "have": "has", "do": "does", "go": "goes"}

_Polarity: TypeAlias = Literal["yes", "no", "abstain"] | None


def explain_yes_no(text: str | None, *, question: str | None = None) -> tuple[YesNoLabel, str]:
    """The yes/no reading of ``text`` and the name of the rule that decided it (see the module docstring).

    Call it where a report or a debugging session needs to know why an answer got its label; ``question`` (the
    question or the whole prompt) enables the restatement rules, which read "Titian died in Venice." as yes.

        >>> explain_yes_no("I'm not sure, but yes")
        ('unknown', 'abstain')
    """
    polarity, rule = _read(text, question)
    if polarity == "yes" or polarity == "no":
        return polarity, rule
    return "unknown", rule


def parse_yes_no(text: str | None, *, question: str | None = None) -> YesNoLabel:
    """``"yes"``, ``"no"`` or ``"unknown"``: what a careful reader takes as the answer to a yes/no question.

    The label of KG-FPQ's yn answers and of its FPQ-Judge's verdicts; equal to ``explain_yes_no(...)[0]``.

        >>> parse_yes_no("Answer: **Yes**, it is.")
        'yes'
    """
    return explain_yes_no(text, question=question)[0]


def explain_true_false(text: str | None) -> tuple[TrueFalseLabel, str]:
    """The true/false/idk reading of ``text`` and the name of the rule that decided it.

    The same rules as :func:`explain_yes_no` without the question: yes-words read as true, no-words as false, and a
    hedge or abstention (rule ``abstain``) as "idk", since GraphEval asks the model to say when it does not know.
    """
    polarity, rule = _read(text, None)
    if polarity == "yes":
        return "true", rule
    if polarity == "no":
        return "false", rule
    if polarity == "abstain":
        return "idk", rule
    return "unknown", rule


def parse_true_false(text: str | None) -> TrueFalseLabel:
    """``"true"``, ``"false"``, ``"idk"`` (the model said it does not know) or ``"unknown"`` (unreadable).

    The label of GraphEval-style answers to "is this statement true, false, or don't you know?"; equal to
    ``explain_true_false(text)[0]``.

        >>> parse_true_false("I cannot verify this.")
        'idk'
    """
    return explain_true_false(text)[0]


def _read(text: str | None, question: str | None) -> tuple[_Polarity, str]:
    if text is None:
        return None, "empty"
    if not isinstance(text, str):
        raise TypeError(f"answer text must be str or None, got {type(text).__name__}: {text!r}")
    if not text.strip():
        return None, "empty"
    truncated = len(text) > _HEAD
    head = _MARKUP.sub("", text[:_HEAD]).replace("’", "'").lower()
    preamble = _PREAMBLE.match(head)
    if preamble:
        head = head[preamble.end():]
    if not head:
        return None, "no_answer"
    if _BOTH.match(head):
        return None, "both"
    if _ABSTAIN.match(head):
        return "abstain", "abstain"
    m = _WORD.match(head)
    if m:
        return ("yes" if m.group("yes") or m.group("yes2") or m.group("yes3") else "no"), "answer_word"
    m = _PHRASE.match(head)
    if m:
        return ("yes" if m.group("yes") else "no"), "answer_phrase"
    if question:
        claim = _claim(question)
        if claim is not None:
            negated = _restates(head, truncated, claim)
            if negated is not None:
                return ("no", "negated_restatement") if negated else ("yes", "restatement")
    return None, "no_answer"


@lru_cache(maxsize=8192)
def _claim(question: str) -> tuple[str, tuple[str, ...]] | None:
    """The auxiliary and the remaining words (no articles) of the last "Question: ...?", or None if it is not a
    yes/no question that opens with an auxiliary ("Is", "Did", "Does", ...)."""
    q = question.replace("’", "'").lower()
    start = q.rfind("question:")
    if start >= 0:
        q = q[start + len("question:"):]
    end = q.find("?")
    if end >= 0:
        q = q[:end]
    words = [w for w in _TOKEN.findall(q) if w not in _ARTICLES]
    if len(words) < 3 or not (words[0] in _COPULAS or words[0] in ("do", "does", "did")):
        return None
    return words[0], tuple(words[1:])


def _past(verb: str) -> tuple[str, ...]:
    if verb in _PAST:
        return (_PAST[verb],)
    if verb.endswith("e"):
        return (verb + "d",)
    if verb.endswith("y") and len(verb) > 1 and verb[-2] not in "aeiou":
        return (verb[:-1] + "ied",)
    return (verb + "ed", verb + verb[-1] + "ed")


def _third(verb: str) -> str:
    if verb in _THIRD:
        return _THIRD[verb]
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 1 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _verb_forms(aux: str, verb: str) -> list[tuple[bool, tuple[str, ...]]]:
    """(negated, words) for each way an answer may state "<aux> ... <verb>" back, in place of ``aux`` and the
    first word after the subject."""
    if aux in _COPULAS:
        forms = [(False, (aux, verb)), (False, (aux, "indeed", verb)), (True, (aux, "not", verb)),
                 (True, (aux, "never", verb))]
        forms += [(True, (n, verb)) for n in _NEGATED.get(aux, ())]
        return forms
    if aux == "did":
        return ([(False, (p,)) for p in _past(verb)] + [(False, ("did", verb)), (True, ("did", "not", verb)),
                (True, ("didn't", verb))] + [(True, ("never", p)) for p in _past(verb)])
    present = _third(verb) if aux == "does" else verb
    return [(False, (present,)), (False, (aux, verb)), (True, (aux, "not", verb)), (True, (aux + "n't", verb)),
            (True, ("never", present))]


def _restates(head: str, truncated: bool, claim: tuple[str, tuple[str, ...]]) -> bool | None:
    """False if the first clause of ``head`` states the claim back, True if it denies it, None if neither."""
    aux, rest = claim
    found = ((m.group(), m.end()) for m in _TOKEN.finditer(head))
    tokens = list(islice(((w, e) for w, e in found if w not in _ARTICLES), len(rest) + 4))
    words = [w for w, _ in tokens]
    for k in range(1, len(rest)):
        if k > len(words) or words[k - 1] != rest[k - 1]:
            return None
        for negated, verb_words in _verb_forms(aux, rest[k]):
            expected = (*verb_words, *rest[k + 1:])
            stop = k + len(expected)
            if tuple(words[k:stop]) == expected:
                end = tokens[stop - 1][1]
                if _CLAUSE_END.match(head, end) or (not truncated and not head[end:].strip(_TRAILING)):
                    return negated
    return None
