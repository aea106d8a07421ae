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

Before the rules, invisible characters are removed everywhere in the text that is read (zero-width spaces and
joiners U+200B, U+200C, U+200D, U+2060, the byte-order mark U+FEFF, the soft hyphen U+00AD and the direction marks
U+200E, U+200F: "\\u200bYes" is yes) and no-break spaces (U+00A0, U+2007, U+202F) read as spaces. Then the start of the
text is cleared of what cannot be the answer: markdown (``**``, ``__``, backticks, headings, quotes, bullets) and
leading punctuation, "Answer:" / "A:" / "The answer is" / "Final answer:" style prefixes, an echoed question
("Question: ...?"), apologies and fillers ("I'm sorry, but", "Well,", "Based on the facts,", "As an AI model,", and
"Sure," / "Right," when more follows: "Sure! Here is ..." opens replies of either polarity). Rules 2-6 read only the
first 400 characters, where the answer is; rule 7 alone reads the last 200, and only for an explicit verdict.

The rules, in the order they apply (the name is what ``explain_*`` returns):

1. ``empty``: ``None``, an empty text, or one of whitespace and invisible characters only -> unknown.
2. ``both``: the text opens with both options ("Yes or no", "Yes/No", "Yes and no", "True or false") -> unknown.
3. ``abstain``: the text opens with a hedge or an abstention: "I don't know", "I'm not sure", "unsure", "It is not
   possible to say", "cannot be determined", "there is not enough information", "no idea", "no information", and
   the probability words "maybe", "perhaps", "possibly", "probably", "likely", "unlikely", "it depends". A hedge
   before the answer wins over the answer: "I'm not sure, but yes" is unknown, because a guess the model itself
   disowns is not a commitment and must not earn credit. (:func:`parse_true_false` reads it as "idk", the explicit
   abstention GraphEval counts.)
4. ``answer_word``: the text opens with an answer word. "yes", "yeah", "yep", "yup" -> yes, whatever follows;
   "nope", "nah" -> no. "no" reads the same as "yes" wherever it cannot be a determiner: before punctuation
   (including "?" and "…": "No?", "No…"), a bracket ("No (he died in Rome)"), a line break or the end; before a
   pronoun, article, possessive or adverb that begins a clause ("No it isn't", "No the Tagus ...", "No actually,
   ..."); and before a capitalised name that is the subject of a clause, i.e. capitalised words (in the original
   text; "da", "de", "of", "von" ... and initials such as "J." may join them) followed by an auxiliary, "never",
   "not" or a past-tense verb ("No Titian died in Rome", "No Martin Luther King Jr. was ..."). Everywhere else
   "no" is a determiner and answers nothing: "No information ...", "No evidence ...", "No one ...", "No Titian
   paintings survive ..." (a name followed by a noun), and also "No Evidence was found" (a closed list of
   determiner nouns is never read as a name). "Yes" has no determiner use, so every other template reads the same
   with "Yes" as with "No" (the tests check this property).
   Words that only answer when they stand alone, followed by punctuation other than "?" or the end ("Correct.",
   "Indeed, ...", "True", "Absolutely!"; "Correct?" asks back): correct, true, indeed, absolutely, certainly,
   definitely, exactly, affirmative, accurate, factual -> yes; incorrect, false, wrong, negative, never,
   inaccurate, untrue, non-factual -> no. The prompts ask in English, but a model that answers in another language
   has still committed, so a closed set of standalone answer words of major languages reads the same way: sí / si /
   sì, oui, ja, да, 是 / 是的 / 对 / 对的, はい -> yes; non, nein, нет, 不 / 不是 / 不对 / 否, いいえ -> no (Spanish and
   Italian "no" is the English word). Standing alone is what keeps "Non-fiction ..." and "Si-based ..." out. "Sure"
   and "Right" -> yes only as the whole answer ("Sure.", "Right!"); followed by more they are fillers (above), so
   "Sure, but I can't say" is an abstention and "Sure! Here is some information" is no answer.
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
   have. Without the question these answers fall through to rules 7 and 8 (unknown unless they end in a verdict).
7. ``final_verdict``: only when rules 2-6 found nothing at the start, the text ends with an explicit verdict in
   its last 200 characters: a sentence, clause or line that opens with a verdict marker ("So", "Thus",
   "Therefore", "Hence", "In conclusion", "Overall", ...; "Answer:", "The answer is", "Final answer:", "Verdict:";
   "So it is" / "So the statement is") directly followed by yes / true -> yes or no / false -> no, and nothing
   after that sentence ("... So the answer is No.", "...\\n\\nAnswer: No", "... He died in Rome, so the answer is
   no.", "... Therefore, no, he did not."). A bare "No." at the end, a verdict mid-text, a hedged one ("So the
   answer is probably no") or one followed by another sentence is no verdict: a reasoning model may try out both
   answers before it commits, and only the marked conclusion is its answer. An answer at the start still wins.
8. ``no_answer``: nothing above decided (a cut-off "The answer is", a statement that does not address the question,
   gibberish, a long explanation without a marked verdict) -> unknown.

The true / false / IDK reading (GraphEval's statements) adds one rule after 7, because the statement prompt gives
the model the three answers to say and small models wrap them in text:

9. ``statement_verdict``: in the first 400 characters, every verdict on "the statement" (also "it", "this",
   "that", "the claim", or the end of a quoted restatement: ``"X" is indeed true``), "is" / "was" then optional
   emphasis ("indeed", "definitely", "not only", ...) then true / correct / accurate or false / incorrect /
   inaccurate / wrong, with "not" or "isn't" ("it's not", "wasn't") flipping it, and "I don't think" before it
   flipping it again ("I don't think that's true" is false; "The statement is not false" is true); the prompt's
   answers in quotes ("The answer is 'Yes, the statement is true.'"); and "I don't know" / "I do not know". A
   verdict in a sentence that echoes the instructions or talks about the task ("If you know the statement is true,
   answer ...", "Otherwise", "you are asked", "whether", "must", "should", "designed to", "provide") does not
   count. All verdicts found agree -> that label; they disagree -> unknown (rule ``both``).

Three more rules guard the true / false / IDK reading:

10. ``echo``: sentences at the start that repeat the instructions (they open as the prompt does, "You are given
    a statement", "Answer 'Yes, the statement is true.' ...", or quote an answer to give under a condition: "If
    you know ..., answer 'No, the statement is false.'") are skipped, so their quoted verdicts are not read as the
    model's; an answer of echoes only is unknown.
11. ``restatement`` / ``negated_restatement`` (only when the statement is given): the first clause states the
    statement back, word for word up to articles, case and emphasis ("Guanajuato is indeed in the country
    Mexico.") -> true; with one negation ("... is not in ...", "isn't", "never") -> false.
12. ``both``: a true or false reading whose opening (the first sentence, and the next one when the first is a bare
    verdict such as "True.") also holds a verdict of another polarity or "I don't know" ("Yes, the statement is
    false."; "True. Actually, no, it is false.") -> unknown: the answer contradicts itself. A verdict word after
    "not" or "n't" is read negated ("No, it is not true." and "No, that's not correct." agree; "Yes, the statement
    is not true." contradicts itself).

Before rules 2-12 the true / false / IDK reading masks a quoted restatement of the statement: a quoted span (double,
curly or single quotes; an apostrophe inside a word neither opens nor closes one) that "is", "was", "isn't" ...
follows, or that "the statement" / "the claim" precedes, stands as ``"…"``, so "The statement 'X' is true." reads
as with double quotes, and the words inside the quotes ("The statement 'Nothing false is ever true' is true.") are
no verdict. Quoted answers ("The answer is 'No, the statement is false.'") are not masked.

The first answer wins: rules 2-6 read only the start of the text, so "No, ... Yes, ..." is no and an explanation
that contradicts the answer word ("No. Voltaire died in the Getty Museum.") does not change it. "There is no evidence
that X ..." neither answers nor abstains (a reader cannot tell a cautious no from "I can't say"), so it is
unknown under both readings.

The functions are pure and fast (tens of thousands of texts per second): every pattern is compiled once, and only
the first 400 and, when they decide nothing, the last 200 characters are read.
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
#: How far from the end rule 7 looks for a final verdict: one or two sentences.
_TAIL = 200

_MARKUP = re.compile(r"[*_`]+")
# Characters a reader cannot see must not hide the answer ("\u200bYes" from a tokenizer or a copied web page).
_INVISIBLE = str.maketrans({**dict.fromkeys(map(ord, "\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u00ad")),
                            **dict.fromkeys(map(ord, "\u00a0\u2007\u202f"), " ")})

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
      | (?:sure|right)[ \t]*[,.!:;\-–—]\s*(?![\s.!…"')\]]*$)(?:but\s+)?
      | (?:based\s+on|according\s+to)\b[^,.:\n]{0,150}[,:]\s*(?:but\s+)?
    )*""",
    re.VERBOSE,
)

# A word or phrase "stands alone" when punctuation (not "?"; a hyphen only after a space, so "no-one" is one word),
# a line break or the end follows it.
_ALONE = r"""(?=["')\]]*(?:[ \t]*(?:[.,!;:–—…，。！；：、]|\n|$)|[ \t]+-))"""

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

# Words that cannot follow a determiner "no", so after "no" they begin a clause: "No it isn't", "No the Tagus ...".
_CLAUSE_START = ("it|it's|its|he|she|they|i|i'm|we|you|that|that's|this|there|there's|not|never|the|he's|she's"
                 "|they're|absolutely|definitely|certainly|way|his|her|their|my|actually|but|because|rather|instead"
                 "|however|sorry")
# Longer words first, so "是的" is not read as "是" followed by "的" (which does not stand alone).
_YES_ALONE = ("correct|true|indeed|absolutely|certainly|definitely|exactly|affirmative|accurate|factual"
              "|sí|si|sì|oui|ja|да|是的|是|对的|对|はい")
_NO_ALONE = "incorrect|false|wrong|negative|never|inaccurate|untrue|non-?factual|non|nein|нет|不是|不对|不|否|いいえ"
_INTENSIFIER = r"(?:absolutely|certainly|definitely|of\s+course|indeed|surely)"
# The end of a word: a closing quote may follow ("'Yes'"), a contraction may not ("yes'm", "not'll").
_WORD_END = r"(?!\w|'\w)"

_WORD = re.compile(
    rf"""(?:
        (?P<yes>yes|yeah|yep|yup|yea){_WORD_END}
      | (?P<no>nope|nah){_WORD_END}
      | (?P<no2>no)(?:{_ALONE}|["')\]]*[ \t]*[?(\[]|\s+(?:{_CLAUSE_START})(?![\w'\-]))
      | {_INTENSIFIER}\s+(?:(?P<yes2>yes){_WORD_END}|(?P<no3>not{_WORD_END}|no{_ALONE}))
      | (?P<yes3>{_YES_ALONE}){_ALONE}
      | (?P<no4>{_NO_ALONE}){_ALONE}
      | (?P<yes4>sure|right)(?=["')\]]*[\s.!…]*$)
    )""",
    re.VERBOSE,
)

# "No" before a capitalised word: a name that is the subject of a clause ("No Titian died in Rome") or the head of a
# determiner phrase ("No Titian paintings survive"). Only a verb right after the name tells them apart.
_NO_THEN = re.compile(r"no[ \t]+")
_NAME_WORD = re.compile(r"([^\W\d_][\w'\-]*)(\.?)[ \t]*")
# Lower-case words inside a name ("Leonardo da Vinci", "Ludwig van Beethoven", "Mary of Teck").
_NAME_LINKS = frozenset({"da", "de", "di", "del", "della", "van", "von", "der", "den", "la", "le", "du", "des", "of",
                         "the", "y", "al", "bin", "ibn"})
# Abbreviations that do not end the sentence after a name ("Martin Luther King Jr. was").
_NAME_ABBREVIATIONS = frozenset({"jr", "sr", "st", "dr", "mr", "mrs", "ms", "mt"})
# Nouns that follow a determiner "no", capitalised or not ("No Evidence was found" is no answer).
_DETERMINER_NOUNS = frozenset({"evidence", "information", "data", "one", "idea", "clue", "record", "records", "proof",
                               "source", "sources", "mention", "indication", "documentation", "reliable", "credible",
                               "known", "such", "other", "single", "further", "historical", "definitive", "clear",
                               "answer", "comment", "way", "doubt", "matter", "more", "longer", "reason", "sign",
                               "trace", "details", "specific", "available", "confirmed", "verified", "direct"})

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
# What may follow a name that is the subject of a clause (besides any past tense in "-ed").
_VERB_AFTER_NAME = frozenset({*_COPULAS, *(n for ns in _NEGATED.values() for n in ns), *_PAST.values(), "do", "does",
                              "did", "don't", "doesn't", "didn't", "am", "never", "not", "indeed", "actually", "also",
                              "really", "only", "himself", "herself", "itself"})

_ANSWER_IS = (r"(?:(?:the|my|our)\s+)?(?:final\s+|short\s+|correct\s+)?answer"
              r"\s*(?:[:=\-–—]|\s+(?:is|would\s+be)\b\s*:?)\s*")
# Rule 7: an explicit verdict that opens the last sentence, clause or line and ends the text, the verdict word
# standing alone as in _ALONE ("so the answer is no-one's guess" is none), perhaps with a short rest of its clause.
_VERDICT = re.compile(
    rf"""[.,!?:;\n]["'()\[\]\s#>•\-]*
    (?:
        (?:so|thus|therefore|hence|overall|ultimately|in\s+conclusion|to\s+conclude|in\s+summary
          |to\s+summari[sz]e|in\s+short|conclusion)
        \s*[,:\-–—]?\s*
        (?:{_ANSWER_IS}|(?:the\s+(?:statement|claim|premise)|this|that|it)\s+is\s+)?
      | {_ANSWER_IS}
      | (?:final\s+)?verdict\s*[:=\-–—]\s*
    )
    (?:(?P<yes>yes|true)|(?P<no>no|false))
    (?:["')\]]*(?:[ \t]*[,;:–—]|[ \t]+-)[^.!?\n]{{0,150}})?
    ["')\]]*[\s.!…]*$""",
    re.VERBOSE,
)

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


def explain_true_false(text: str | None, *, statement: str | None = None) -> tuple[TrueFalseLabel, str]:
    """The true/false/idk reading of ``text`` and the name of the rule that decided it.

    The same rules as :func:`explain_yes_no` without the question: yes-words read as true, no-words as false, and a
    hedge or abstention (rule ``abstain``) as "idk", since GraphEval asks the model to say when it does not know;
    then rules 9-11 of the module docstring (echoed instructions, restatements of ``statement``, contradictions).

        >>> explain_true_false("Paris is indeed in France.", statement="Paris is in France.")
        ('true', 'restatement')
    """
    if text is not None and isinstance(text, str):
        rest = _strip_echo(text)
        if rest is None:
            return "unknown", "echo"
        text = _mask_quoted(rest)
    polarity, rule = _read(text, None)
    if polarity is None and statement and text:
        negated = _restates_statement(text, statement)
        if negated is not None:
            polarity, rule = ("no", "negated_restatement") if negated else ("yes", "restatement")
    if polarity == "yes" or polarity == "no":
        label: TrueFalseLabel = "true" if polarity == "yes" else "false"
        assert text is not None
        if _contradicted(text, label):
            return "unknown", "both"
        return label, rule
    if polarity == "abstain":
        return "idk", rule
    if rule == "no_answer" and text:
        return _statement_verdict(text)
    return "unknown", rule


_TF_VERDICT = re.compile(
    r"""(?:\b(?:the\s+|this\s+|that\s+)?(?:statement|claim)\b|\b(?:it|this|that)\b|["\u201d](?=\s))\s*
        (?:is|was|would\s+be|seems|(?<=\w)'s)(?P<negated>n't)?\s+
        (?:(?:indeed|definitely|actually|certainly|completely|entirely|absolutely|also|not\s+only|in\s+fact)\s+)*
        (?P<neg>not\s+(?:(?:entirely|completely|quite|necessarily)\s+)?)?
        (?:(?P<true>true|correct|accurate|factual)|(?P<false>false|incorrect|inaccurate|wrong|untrue))\b
      | \bi\s+(?:do\s+not|don't)\s+know\b(?P<idk>)""",
    re.VERBOSE,
)
# an echo of the instructions: a verdict that follows one of these in its sentence is not the model's answer
_TF_ECHO = re.compile(r"\b(?:if|otherwise|whether|you\s+(?:are|can|will|need)|asked\s+to|task|must|should|requires?"
                      r"|designed\s+to|provide)\b")
_TF_SENTENCE_END = re.compile(r"[.!?\n](?=\s|$)")


# A quoted span: double or curly quotes, or single quotes that open after a non-word character and close before one
# (so "don't" and "doesn't" inside it neither open nor close it).
_QUOTED = re.compile(r"""["\u201c][^"\u201c\u201d\n]{1,300}?["\u201d]
                       |(?<!\w)['\u2018](?=\S)[^\n]{1,300}?(?<=\S)['\u2019](?!\w)""", re.VERBOSE)
# what makes a quoted span the statement a verdict is about: a verdict verb after it, or "the statement" before it
_QUOTE_SUBJECT_AFTER = re.compile(r"\s*,?\s*(?:is|was|isn't|wasn't|would\s+be|seems|appears|holds)\b", re.IGNORECASE)
_QUOTE_SUBJECT_BEFORE = re.compile(r"\b(?:statement|claim|sentence|assertion)\s*(?:that\s*)?[:,]?\s*$", re.IGNORECASE)


def _mask_quoted(text: str) -> str:
    """``text`` with each quoted restatement of the statement (a quoted span that "is" / "was" ... follows, or that
    "the statement" / "the claim" precedes) replaced by ``"…"``: "The statement 'X is false' is true." reads as
    ``The statement "…" is true.``, the same with single or double quotes, and words inside the quotes are no
    verdict. Quoted answers ("The answer is 'No, the statement is false.'") are kept."""
    if "'" not in text and '"' not in text and not any(c in text for c in "\u2018\u201c"):
        return text
    out, pos = [], 0
    for m in _QUOTED.finditer(text):
        if _QUOTE_SUBJECT_AFTER.match(text, m.end()) or _QUOTE_SUBJECT_BEFORE.search(text, 0, m.start()):
            out.append(text[pos:m.start()])
            out.append('"\u2026"')
            pos = m.end()
    return "".join(out) + text[pos:] if out else text


_DISBELIEF_BEFORE = re.compile(r"\bi\s+(?:don't|do\s+not)\s+(?:think|believe)\s+(?:that\s+)?$")


def _verdict_label(m: re.Match[str]) -> str:
    """The label of a :data:`_TF_VERDICT` match on the statement: its adjective, flipped by "not" or "isn't", and
    again by "I don't think" before it ("I don't think that's true")."""
    negated = (m.group("neg") is not None) != (m.group("negated") is not None)
    negated ^= _DISBELIEF_BEFORE.search(m.string, 0, m.start()) is not None
    return "true" if (m.group("true") is not None) != negated else "false"


def _statement_verdict(text: str) -> tuple[TrueFalseLabel, str]:
    """Rule 9 of the true / false / IDK reading (see the module docstring)."""
    head = _MARKUP.sub("", text[:_HEAD].translate(_INVISIBLE)).replace("\u2019", "'").lower()
    labels = set()
    for m in _TF_VERDICT.finditer(head):
        before = head[:m.start()]
        ends = [e.end() for e in _TF_SENTENCE_END.finditer(before)]
        sentence = before[ends[-1]:] if ends else before
        if _TF_ECHO.search(sentence):
            continue
        if m.group("idk") is not None:
            labels.add("idk")
        else:
            labels.add(_verdict_label(m))
    if len(labels) == 1:
        return labels.pop(), "statement_verdict"
    return "unknown", "both" if labels else "no_answer"


def parse_true_false(text: str | None, *, statement: str | None = None) -> TrueFalseLabel:
    """``"true"``, ``"false"``, ``"idk"`` (the model said it does not know) or ``"unknown"`` (unreadable).

    The label of GraphEval-style answers to "is this statement true, false, or don't you know?"; equal to
    ``explain_true_false(text, statement=statement)[0]``. Given the ``statement`` asked about, an answer that
    states it back ("Guanajuato is indeed in the country Mexico.") is true and one that denies it is false.

        >>> parse_true_false("I cannot verify this.")
        'idk'
        >>> parse_true_false("Yes, the statement is false.")
        'unknown'
    """
    return explain_true_false(text, statement=statement)[0]


# Rule 10: a sentence that repeats the prompt's instructions: it quotes an answer to give under a condition
# ("Answer 'Yes, the statement is true.' if you know ..."), or opens as the instructions do.
_ECHO_OPEN = re.compile(r"""[\s#>*"'`]*(?:(?:instruction|input)\s*:|below\s+is\s+an\s+instruction|you\s+are\s+(?:given|asked)
                        |(?:otherwise,?\s+)?answer\s*["'\u2018\u201c])""", re.VERBOSE)
_QUOTED_VERDICT = re.compile(r"""["'\u2018\u201c][^"'\u2019\u201d]{0,60}?(?:true|false|know)[.!]?["'\u2019\u201d]""")
_ECHO_WORD = re.compile(r"\b(?:if|otherwise|when|unless)\b")
_SENTENCE = re.compile(r"""(?:[^.!?\n"'\u2018\u201c]|["'\u2018\u201c][^"'\u2019\u201d\n]{0,80}["'\u2019\u201d]|["'\u2018\u201c])*
                       (?:[.!?]+["')\]]*|\n+|$)""", re.VERBOSE)


def _sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``; a quoted span up to 80 characters stays inside its sentence."""
    out, pos = [], 0
    while pos < len(text):
        m = _SENTENCE.match(text, pos)
        end = m.end() if m and m.end() > pos else len(text)
        out.append((pos, end))
        pos = end
    return out


def _strip_echo(text: str) -> str | None:
    """``text`` without the sentences at its start that echo the instructions (rule 10); None when nothing else is
    left of a text that had such a sentence."""
    lowered = text.replace("\u2019", "'").lower()
    start = 0
    for a, b in _sentences(lowered):
        sentence = lowered[a:b]
        if not sentence.strip():
            start = b
            continue
        quoted = _QUOTED_VERDICT.search(sentence)
        if _ECHO_OPEN.match(sentence) or (quoted and _ECHO_WORD.search(sentence)):
            start = b
            continue
        break
    if start == 0:
        return text
    rest = text[start:]
    return rest if rest.strip() else None


_EMPHASIS = frozenset({"indeed", "actually", "definitely", "certainly", "really", "truly", "in", "fact", "also"})


def _statement_tokens(text: str) -> list[str]:
    return [w for w in _TOKEN.findall(text.replace("\u2019", "'").lower()) if w not in _ARTICLES]


def _restates_statement(text: str, statement: str) -> bool | None:
    """Rule 11: False if the first sentence of ``text`` states ``statement`` back (up to articles, case, quotes and
    emphasis such as "indeed"), True if it states it with one negation ("not", "never", or "isn't" for "is"), None
    otherwise. A following clause after a comma or "because" may add to it."""
    head = _MARKUP.sub("", text[:_HEAD].translate(_INVISIBLE))
    first = re.split(r"[.!?;\n]|,\s|\s(?:because|since|as|which)\s", head, maxsplit=1)[0]
    said = _statement_tokens(first)
    stated = _statement_tokens(statement.strip().rstrip(".!"))
    if len(stated) < 2 or not said:
        return None
    plain = [w for w in said if w not in _EMPHASIS]
    stated_plain = [w for w in stated if w not in _EMPHASIS]
    if plain == stated_plain:
        return False
    for i, w in enumerate(plain):
        if w in ("not", "never") and plain[:i] + plain[i + 1:] == stated_plain:
            return True
        if w.endswith("n't") and w[:-3] in _NEGATED and plain[:i] + [w[:-3]] + plain[i + 1:] == stated_plain:
            return True
        if w in ("isn't", "wasn't", "aren't", "weren't") and plain[:i] + [w[:-3]] + plain[i + 1:] == stated_plain:
            return True
    return None


_NEGATION_BEFORE = re.compile(r"(?:\bnot|n't)\s+$")
_STANDALONE_VERDICT = re.compile(r"(?:^|[\s,.;:!(\"'])(?:(?P<yes>yes|true|correct)|(?P<no>no|false|incorrect))(?=\s*[,.;:!]|\s*$)")


def _opening(text: str) -> str:
    """The first sentence of the answer after its preamble, and the next one too when the first is a bare verdict
    ("True. Actually, no, it is false."): where a contradiction makes the answer unreadable (rule 12)."""
    head = _MARKUP.sub("", text[:_HEAD].translate(_INVISIBLE)).replace("\u2019", "'").lower()
    pre = _PREAMBLE.match(head)
    head = head[pre.end():] if pre else head
    spans = [(a, b) for a, b in _sentences(head) if head[a:b].strip()]
    if not spans:
        return ""
    a, b = spans[0]
    if len(_TOKEN.findall(head[a:b])) <= 2 and len(spans) > 1:
        b = spans[1][1]
    return head[a:b]


def _contradicted(text: str, label: str) -> bool:
    """Rule 12: the opening of the answer also holds a verdict of another polarity (or an "I don't know")."""
    opening = _opening(text)
    found = set()
    read = []
    for m in _TF_VERDICT.finditer(opening):
        read.append(m.span())
        if m.group("idk") is not None:
            found.add("idk")
        else:
            found.add(_verdict_label(m))
    for m in _STANDALONE_VERDICT.finditer(opening):
        yes = m.group("yes") is not None
        if any(a <= m.start("yes" if yes else "no") < b for a, b in read):
            continue  # the adjective of a verdict just read ("that's true" after "I don't think")
        # "not true", "isn't correct", "not false": the negation before the word flips it
        if _NEGATION_BEFORE.search(opening, 0, m.start("yes" if yes else "no")) and m.group("no") != "no":
            yes = not yes
        found.add("true" if yes else "false")
    return bool(found - {label})


def _read(text: str | None, question: str | None) -> tuple[_Polarity, str]:
    if text is None:
        return None, "empty"
    if not isinstance(text, str):
        raise TypeError(f"answer text must be str or None, got {type(text).__name__}: {text!r}")
    truncated = len(text) > _HEAD
    raw = text[:_HEAD].translate(_INVISIBLE)
    if truncated and len(raw) < _HEAD:
        # Invisible characters took room in the head: read as much visible text as a clean answer would give. Only
        # here is the whole text translated, so long answers cost no more than before.
        raw = text.translate(_INVISIBLE)
        truncated = len(raw) > _HEAD
        raw = raw[:_HEAD]
    if not raw.strip() and (not truncated or not text.translate(_INVISIBLE).strip()):
        return None, "empty"
    cased = _MARKUP.sub("", raw).replace("’", "'")
    head = cased.lower()
    # The original case tells a name from a common noun after "no"; a few characters change length when lower-cased
    # ("İ"), and then the rule that needs it reads nothing rather than the wrong position.
    cased_or_none: str | None = cased if len(cased) == len(head) else None
    preamble = _PREAMBLE.match(head)
    if preamble:
        head = head[preamble.end():]
        if cased_or_none is not None:
            cased_or_none = cased_or_none[preamble.end():]
    if not head:
        return _final_verdict(text)
    if _BOTH.match(head):
        return None, "both"
    if _ABSTAIN.match(head):
        return "abstain", "abstain"
    m = _WORD.match(head)
    if m:
        # Exactly one named group matches, and it names the answer ("yes", "yes2", ..., "no4").
        return ("yes" if (m.lastgroup or "").startswith("yes") else "no"), "answer_word"
    if cased_or_none is not None:
        m = _NO_THEN.match(head)
        if m and _names_a_subject(cased_or_none, m.end()):
            return "no", "answer_word"
    m = _PHRASE.match(head)
    if m:
        return ("yes" if m.group("yes") else "no"), "answer_phrase"
    if question:
        claim = _claim(question)
        if claim is not None:
            negated = _restates(head, truncated, claim)
            if negated is not None:
                return ("no", "negated_restatement") if negated else ("yes", "restatement")
    return _final_verdict(text)


def _names_a_subject(cased: str, start: int) -> bool:
    """True if ``cased[start:]`` (original case, right after "no ") opens with a capitalised name and then a verb,
    so that "no" answers ("No Titian died in Rome"); False for a determiner phrase ("No Titian paintings survive")."""
    pos = start
    name = False
    for _ in range(10):
        m = _NAME_WORD.match(cased, pos)
        if not m:
            return False
        word, dot = m.group(1), m.group(2)
        lower = word.lower()
        if word[0].isupper():
            if not name and lower in _DETERMINER_NOUNS:
                return False
            # A full stop after a name ends the sentence ("No Titian."), except after an initial or "Jr.".
            if dot and len(word) > 1 and lower not in _NAME_ABBREVIATIONS:
                return False
            name = True
        elif not name:
            return False
        elif lower in _NAME_LINKS and not dot:
            pass
        else:
            return lower in _VERB_AFTER_NAME or (len(lower) > 3 and lower.endswith("ed"))
        pos = m.end()
    return False


def _final_verdict(text: str) -> tuple[_Polarity, str]:
    """Rule 7 (``final_verdict``) on the end of ``text``, else rule 8 (``no_answer``)."""
    start = max(0, len(text) - _TAIL)
    tail = _MARKUP.sub("", text[start:].translate(_INVISIBLE)).replace("’", "'").lower()
    # The verdict must open a sentence; at the very start of the text nothing precedes it, so stand in a line break.
    m = _VERDICT.search("\n" + tail if start == 0 else tail)
    if m:
        return ("yes" if m.group("yes") else "no"), "final_verdict"
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
