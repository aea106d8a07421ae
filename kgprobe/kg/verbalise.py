"""Statement templates for a KG's relations, ``"{head} ... {tail}."``, proposed from each relation's key and label,
so that a statement about any KG reads as a sentence ("The place of birth of Ada Lovelace is London.") rather than
the key glued between two names. Suites that write statements from triples (GraphEval, KG-FPQ, Drowzee) share
it; every proposal is meant to be reviewed (:func:`review_rows` renders each on real triples).

Two proposers:

* :func:`propose_template` / :func:`propose_templates` (rule-based, no model): a Freebase path key is read by its
  segments (below); any other relation by its label (Wikidata ``P19`` -> "place of birth"), else by its key's words
  (DBpedia ``birthPlace``). A phrase is read by the parts of speech of its words (lemminflect, through
  :mod:`kgprobe.scoring.lexicon`):

  ====================================  ==================================================  ======================================
  phrase                                template                                            example
  ====================================  ==================================================  ======================================
  "has" and a noun phrase               (the noun phrase's template)                        "hasChild", "has part"
  "is", a singular noun, a preposition  ``{head} is a <noun> <prep> {tail}.``               "isCitizenOf"
  "is ..." / "has ..."                  ``{head} <phrase> {tail}.``                         "has won prize"
  a key's past form first               ``{head} <phrase> {tail}.``                         "actedIn", "created"
  verb in the third person              ``{head} <phrase> {tail}.``                         "contains", "shares border with"
  ... then a preposition and a noun     ``{head} <verb> <prep> the <noun> {tail}.``         "appears in ranked lists"
  ``<noun> this <noun>``                ``{tail} is one of the <noun> the <noun> {head}.``  "politicians in this party"
  past participle first                 ``{head} was|is <phrase> {tail}.``                  "born in", "located in"
  ends with "by"                        ``{head} has a <phrase> {tail}.``                   "story by"
  plural noun, participle, preposition  ``{head} is|was <participle> <prep> {tail}.``       "countries spoken in"
  plural noun, preposition              ``{tail} is one of the <phrase> {head}.``           "countries within"
  singular noun, preposition            ``{head} is a <phrase> {tail}.``                    "symptom of"
  plural noun, participles              ``{tail} is one of the <phrase> by {head}.``        "languages spoken, written, or signed"
  singular noun, participle             ``{head} <participle> the <rest> {tail}.``          "product or material produced"
  a subject's role noun, "of", a noun   ``{head} is a <noun> of the <rest> {tail}.``        "member of political party"
  a noun of relations                   ``{head} has <plural> with {tail}.``                "diplomatic relation"
  a noun phrase (everything else)       ``The <phrase> of {head} is {tail}.``               "place of birth"
  a plural noun phrase                  ``One of the <phrase> of {head} is {tail}.``        "artists", "symptoms"
  ====================================  ==================================================  ======================================

  "is" rather than "was" goes with the participles of a state (:data:`_STATIVE_PARTICIPLES`); the role nouns
  (:data:`_SUBJECT_NOUNS`), the nouns of relations (:data:`_WITH_NOUNS`), the adjectives that only pick an
  instance (:data:`_DETERMINER_ADJECTIVES`, "other crew" -> "crew") and a few plurals lemminflect reads as singular
  (:data:`_IRREGULAR_PLURALS`) are the only word lists. With ``many`` (a multi-valued relation, :func:`multi_valued`)
  "The film of {head} is {tail}." reads "One of the films of {head} is {tail}.".

  A Freebase path ``/domain/type/property`` is read by its property (Freebase's plural marker ``_s`` dropped). A
  compound (CVT) path ``/d/type/p1./d/node/p2`` reaches the tail through an intermediate node and is read by its
  last meaningful segment ``p2`` in its direction: a co-relation (``p2`` names the head's own role, or
  ``participant``) "{head} shared an award nomination with {tail}." ("{head} dated {tail}." for a node named by a
  participle); a path that collapses (``p2`` names the noun of ``p1``: ``teams`` ... ``team``, ``awards_won`` ...
  ``award``) reads as ``p1``; ``p1`` ending with a preposition "{head} is a member of the organization {tail}.";
  ``p2`` a participle of the node's own verb "{head} has an award nomination for {tail}."; otherwise "{head} has a
  release date whose release region is {tail}." (the node named by ``p1`` or by its type; words repeating the
  head's type dropped). A relation with no word to read (an opaque id without a label) gets None: its statements
  use the flagged fallback of the suite.
* :func:`propose_with_model`: the prompt of GraphEval's Figure 9 (three worked examples, then the relation and
  sample triples) sent to any model through a ``generate`` callable; the reply's template is kept only when it holds
  ``{head}`` and ``{tail}`` once each (else the rule-based proposal, marked as such).

    >>> propose_template("/people/person/place_of_birth")
    'The place of birth of {head} is {tail}.'
    >>> propose_template("/location/location/contains")
    '{head} contains {tail}.'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import lemminflect

from kgprobe.scoring.lexicon import forms, participle, parts_of_speech

__all__ = ["FIGURE9_PROMPT", "Proposal", "figure9_prompt", "indefinite_article", "parse_model_template",
           "propose_template", "propose_templates", "propose_with_model", "relation_phrase", "render", "review_rows",
           "multi_valued"]

_PREPOSITIONS = frozenset({"of", "by", "in", "for", "to", "from", "at", "with", "on", "into", "about", "as", "under",
                           "over", "than", "between", "within", "after", "before", "through", "against", "near",
                           "across", "behind", "during", "without", "upon", "via", "among", "around", "toward",
                           "towards"})
_IRREGULAR_PARTICIPLES = frozenset({"born", "written", "known", "made", "held", "won", "given", "taken", "built",
                                    "done", "seen", "shown", "chosen", "drawn", "sung", "spoken", "led", "run", "sold",
                                    "set", "found", "brought", "bought", "taught", "told", "kept", "left", "lost",
                                    "met", "paid", "read", "sent", "spent", "thrown", "worn", "buried"})
_NOT_PARTICIPLES = frozenset({"red", "bed", "seed", "need", "speed", "breed", "feed", "weed", "shed", "bred", "hundred",
                              "wed", "bled", "sled", "shred", "creed", "greed", "deed", "ted", "ned", "med"})
_THIRD_PERSON_VERBS = frozenset({"contains", "adjoins", "includes", "borders", "represents", "owns", "employs",
                                 "produces", "publishes", "follows", "precedes", "replaces", "succeeds", "influences",
                                 "sponsors", "operates", "serves", "hosts", "connects", "crosses", "flows", "speaks",
                                 "plays", "depicts", "features", "supports", "uses", "teaches", "studies", "governs",
                                 "manufactures", "develops", "designs", "directs", "writes", "broadcasts", "covers",
                                 "partially_contains"})
_VERB_STARTS = frozenset({"is", "has", "have", "was", "were", "are", "had", "can"})
#: Participles of a state that holds now ("is located in"); others read as past events ("was born in").
_STATIVE_PARTICIPLES = frozenset({"located", "spoken", "used", "practiced", "practised", "known", "based",
                                  "contained", "situated", "headquartered"})
#: Nouns that name the subject's own role ("member of political party": the head is the member).
_SUBJECT_NOUNS = frozenset({"member", "part", "instance", "subclass", "citizen", "resident", "student", "employee"})
#: Nouns of a relation the head has with the tail ("diplomatic relation").
_WITH_NOUNS = frozenset({"relation", "relations", "relationship", "relationships"})
#: Adjectives that only pick among instances, dropped before a noun ("other crew" -> "crew").
_DETERMINER_ADJECTIVES = frozenset({"other", "current"})
#: Plurals lemminflect reads as singular.
_IRREGULAR_PLURALS = {"people": "person", "children": "child", "men": "man", "women": "woman", "alumni": "alumnus",
                      "criteria": "criterion", "media": "medium"}
#: Tokens of a key that are no word: Freebase's plural marker ("spouse_s", "release_date_s").
_STRAY = frozenset({"s"})
_OPAQUE = re.compile(r"^(?:[A-Za-z]{0,2}\d+|[0-9a-f]{8,}|_:?\w+)$")


def _words(text: str) -> list[str]:
    """The words of a key segment or label: underscores, hyphens and camelCase split, lower-cased."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [w for w in re.split(r"[\s_\-]+", text.strip().lower()) if w]


def _is_participle(word: str) -> bool:
    w = word.strip(",")
    if w in _NOT_PARTICIPLES or not w.isalpha():
        return False
    return w in _IRREGULAR_PARTICIPLES or (len(w) > 4 and w.endswith("ed")) or (len(w) > 3 and participle(w)
                                                                                 and "NOUN" not in parts_of_speech(w))


def _third_person_verb(words: Sequence[str]) -> bool:
    """Whether a phrase starts with a verb in the third person ("contains", "deals with", "shares border with"):
    a listed verb, or a word that is only a verb (not also a noun: "colors" is read as a noun) in its -s form,
    or one that is also a noun but is followed by a noun and ends with a preposition."""
    first = words[0]
    if "_".join(words) in _THIRD_PERSON_VERBS or first in _THIRD_PERSON_VERBS:
        return True
    pos = parts_of_speech(first)
    if "VERB" not in pos or not first.endswith("s"):
        return False
    if not any(first in lemminflect.getAllInflections(lemma, upos="VERB").get("VBZ", ()) for lemma in pos["VERB"]):
        return False
    if len(words) > 1 and _is_participle(words[1]):  # "places exported to": a noun
        return False
    if "NOUN" not in pos:
        return True
    return 1 < len(words) <= 3 and words[-1] in _PREPOSITIONS


def _plural(word: str) -> bool:
    """Whether a noun is plural: lemminflect knows a singular lemma of it, or (unknown word) its ending says so."""
    w = word.strip(",")
    if w in _IRREGULAR_PLURALS:
        return True
    pos = parts_of_speech(w)
    if pos and "NOUN" not in pos:  # "appears": a verb
        return False
    lemmas = pos.get("NOUN")
    if lemmas:
        return w.endswith("s") and any(lemma != w for lemma in lemmas) and not w.endswith("ss")
    return len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ics", "ous", "news"))


def _singular(word: str) -> str:
    w = word.strip(",")
    if w in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[w]
    if not _plural(w):
        return w
    lemmas = [lemma for lemma in parts_of_speech(w).get("NOUN", ()) if lemma != w]
    if lemmas:
        return lemmas[0]
    return w[:-3] + "y" if w.endswith("ies") else w[:-1]


def _plural_of(word: str) -> str:
    if _plural(word):
        return word
    return lemminflect.getInflection(word, "NNS")[0] if lemminflect.getInflection(word, "NNS") else word + "s"


def indefinite_article(text: str) -> str:
    """"a" or "an" before ``text`` by its first sounds: "an airport", "a university", "a one-off", "an hour"."""
    t = text.lower()
    if t.startswith(("uni", "use", "usu", "ut", "eu", "one")):
        return "a"
    return "an" if t[:1] in "aeiou" or t.startswith(("hon", "hour", "heir")) else "a"



def _forms(word: str) -> frozenset[str]:
    return forms(word.strip(","))


def _same(a: Sequence[str], b: Sequence[str]) -> bool:
    """Two phrases name the same thing: word by word, a shared base form (singular, verb, noun)."""
    return len(a) == len(b) and all(x == y or _forms(x) & _forms(y) for x, y in zip(a, b, strict=True))


def _within(short: Sequence[str], long: Sequence[str]) -> bool:
    """``short`` occurs in ``long`` as consecutive words (compared by base form)."""
    return bool(short) and any(_same(short, long[i:i + len(short)]) for i in range(len(long) - len(short) + 1))


def _head_noun(words: Sequence[str]) -> str:
    """The noun a noun phrase is about: the word before its first "of", else its last word."""
    return words[words.index("of") - 1] if "of" in words[1:] else words[-1]


def _aux(word: str) -> str:
    return "is" if word.strip(",") in _STATIVE_PARTICIPLES else "was"


def _past_tense(word: str) -> bool:
    """Whether ``word`` is a verb's simple past ("acted", "wrote", "created"), not only its participle ("born")."""
    w = word.strip(",")
    return any(w in lemminflect.getAllInflections(lemma, upos="VERB").get("VBD", ())
               for lemma in parts_of_speech(w).get("VERB", ()))


def _phrase_template(words: list[str], *, from_key: bool = False) -> str | None:
    """A template from a relation's phrase (its words, lower case; a label's commas kept on its words), by the
    phrase's form (the table of the module docstring). ``from_key``: the words are a key's own (``actedIn``,
    ``hasChild``), whose authors wrote "is" / "was" where they meant it (``wasBornIn``), so a past form reads
    active ("{head} acted in {tail}.")."""
    words = [w for w in words if w not in _STRAY]
    if not words or not any(ch.isalpha() for w in words for ch in w):
        return None
    text = " ".join(words)
    bare = [w.strip(",") for w in words]
    first, last = bare[0], bare[-1]
    if first in ("has", "have") and len(bare) > 1 and not (bare[1] in _PREPOSITIONS or bare[-1] in _PREPOSITIONS):
        if _is_participle(bare[1]) and len(bare) > 2:  # "has won prize"
            return f"{{head}} {first} {bare[1]} the {' '.join(words[2:])} {{tail}}."
        if not _is_participle(bare[1]) and bare[1] not in ("a", "an", "the"):  # "has child": the noun phrase
            return _phrase_template(words[1:])
    if first in ("is", "are") and len(bare) == 3 and bare[2] in _PREPOSITIONS and not _is_participle(bare[1]) \
            and "NOUN" in parts_of_speech(bare[1]) and not _plural(bare[1]):  # "is citizen of"
        return f"{{head}} is {indefinite_article(bare[1])} {bare[1]} {bare[2]} {{tail}}."
    if first in _VERB_STARTS and len(bare) > 1:
        return f"{{head}} {text} {{tail}}."
    if from_key and "by" not in bare and _past_tense(first) and first not in _STATIVE_PARTICIPLES:
        return f"{{head}} {text} {{tail}}."  # YAGO's "actedIn", "created", "wroteMusicFor"
    if _third_person_verb(bare):
        if len(bare) > 2 and bare[1] in _PREPOSITIONS and bare[-1] not in _PREPOSITIONS:  # "appears in ranked lists"
            rest = " ".join(_singular(w) for w in bare[2:])
            return f"{{head}} {first} {bare[1]} the {rest} {{tail}}."
        return f"{{head}} {text} {{tail}}."
    if "this" in bare[1:-1]:  # Freebase's "people_with_this_degree": the head is "this degree"
        i = bare.index("this")
        before, noun = " ".join(words[:i]), " ".join(words[i + 1:])
        lead = "one of the" if any(_plural(w) for w in bare[:i]) else "the"
        return f"{{tail}} is {lead} {before} the {noun} {{head}}."
    if _is_participle(first) and (len(bare) == 1 or bare[1] in _PREPOSITIONS or "by" in bare
                                  or bare[-1] in _PREPOSITIONS):
        return f"{{head}} {_aux(first)} {text} {{tail}}."
    if last == "by" and len(bare) > 1:
        if any(_is_participle(w) for w in bare[:-1]):
            return f"{{head}} was {text} {{tail}}."
        return f"{{head}} has {indefinite_article(text)} {text} {{tail}}."
    if last in _PREPOSITIONS and len(bare) > 1:
        if _is_participle(bare[-2]):
            if _plural(bare[-3]) if len(bare) > 2 else False:  # "countries spoken in": the head is spoken in the tail
                rest = " ".join(words[-2:])
                return f"{{head}} {_aux(bare[-2])} {rest} {{tail}}."
            return f"{{head}} was {text} {{tail}}."
        if _plural(first):  # "countries within": the tail is one of them
            return f"{{tail}} is one of the {text} {{head}}."
        return f"{{head}} is {indefinite_article(text)} {text} {{tail}}."
    if _is_participle(last) and len(bare) > 1:
        noun = next(i for i, w in enumerate(bare) if _is_participle(w)) - 1
        if noun >= 0 and _plural(bare[noun]):  # "languages spoken, written, or signed", "film sets designed"
            return f"{{tail}} is one of the {text} by {{head}}."
        return f"{{head}} {last} the {' '.join(words[:-1]).rstrip(',')} {{tail}}."
    if first in _SUBJECT_NOUNS and len(bare) > 2 and bare[1] == "of":  # "member of political party"
        return f"{{head}} is {indefinite_article(first)} {first} of the {' '.join(words[2:])} {{tail}}."
    if last in _WITH_NOUNS:  # "diplomatic relation": the head has relations with the tail
        return f"{{head}} has {' '.join(words[:-1] + [_plural_of(last)])} with {{tail}}."
    lead = "One of the" if _plural(_head_noun(bare)) else "The"
    return f"{lead} {text} of {{head}} is {{tail}}."


def _segment(half: str) -> tuple[list[str], list[str]]:
    """(type words, property words) of one half of a Freebase path, ``/domain/type/property``."""
    parts = [p for p in half.strip("/").split("/") if p]
    prop = [w for w in _words(parts[-1]) if w not in _STRAY] if parts else []
    return (_words(parts[-2]) if len(parts) >= 2 else []), prop


def _drop_type_words(phrase: list[str], head_type: list[str]) -> list[str]:
    """``phrase`` without its leading words when they spell the head's type ("film release region" of a film ->
    "release region"), when a word is left."""
    n = len(head_type)
    return phrase[n:] if n and len(phrase) > n and phrase[:n] == head_type else phrase


def _noun_of(phrase: Sequence[str]) -> int:
    """The index of the noun a Freebase property is about: the word before a participle, a preposition or "this"
    ("awards won", "politicians in this party"), else the last word."""
    for i, w in enumerate(phrase[1:], 1):
        if w in _PREPOSITIONS or w == "this" or _is_participle(w):
            return i - 1
    return len(phrase) - 1


def _path_template(key: str) -> str | None:
    """A template for a Freebase path key: its last meaningful segment, read in its direction (see the module
    docstring)."""
    halves = [h for h in key.split("./") if h.strip("/")]
    head_type, p1 = _segment(halves[0])
    if len(halves) == 1:
        return _phrase_template(p1)
    cvt, p2 = _segment(halves[-1])
    if not p2 or not p1:
        return _phrase_template(p2 or p1)
    s1, s2, st = [_singular(w) for w in p1], [_singular(w) for w in p2], [_singular(w) for w in head_type]
    cvt = _drop_type_words(cvt, head_type)
    cvt_text = " ".join(cvt)
    # a co-relation: the tail plays the head's own role in the intermediate node (co-nominees, co-winners)
    if (_same(s2, st) or p2 == ["participant"]) and not any(_is_participle(w) for w in cvt[1:]):
        if len(cvt) == 1 and _is_participle(cvt[0]):  # "dated"
            return f"{{head}} {cvt[0]} {{tail}}."
        return f"{{head}} shared {indefinite_article(cvt_text)} {cvt_text} with {{tail}}."
    # the first segment ends with a preposition: it reads as the relation, the last segment names the tail
    if p1[-1] in _PREPOSITIONS:
        first = _phrase_template(p1)
        last = " ".join(_drop_type_words(p2, head_type))
        if _within(s2, s1) and first is not None:  # "places exported to" ... "exported to"
            return first
        if first is not None and first.endswith(" {tail}.") and first.startswith("{head} "):
            return first[:-len("{tail}.")] + f"the {last} {{tail}}."
    # the path collapses: the last segment names the noun of the first ("teams" ... "team", "awards won" ...
    # "award", "winners" ... "award winner")
    n1 = _noun_of(p1)
    if sum(_plural(w) for w in p1) > 1 and _within(s2, s1):  # "students graduates" ... "student": the last, plural
        return _phrase_template(p2[:-1] + [_plural_of(p2[-1])])
    if _same(s2[-1:], s1[n1:n1 + 1]) and (_within(s2, s1) or _within(s1, s2)):
        verb = _phrase_template(p2)
        if verb is not None and verb.startswith("{head} ") and " was " not in verb and " is " not in verb:
            return verb  # "adjoins"
        return _phrase_template(p1 if len(p1) >= len(p2) or _plural(p1[n1]) else p2)
    if _is_participle(p2[0]):  # "nominated for", "honored for"
        rest = " ".join(p2[1:])
        if cvt and _forms(cvt[-1]) & _forms(p2[0]):  # "award nomination" ... "nominated for"
            return " ".join(f"{{head}} has {indefinite_article(cvt_text)} {cvt_text} {rest} {{tail}}.".split())
        return f"{{head}} {_aux(p2[0])} {' '.join(p2)} {{tail}}."
    # the general case: the head has an intermediate node whose <last segment> is the tail
    last = _drop_type_words(p2, head_type)
    candidates = []
    pos = parts_of_speech(p1[n1])
    if not any(_is_participle(w) for w in p1[1:]) and "this" not in p1 and (not pos or "NOUN" in pos):
        noun = [w for w in s1 if w not in _DETERMINER_ADJECTIVES] or s1
        candidates.append(noun)
    if cvt:
        candidates.append(cvt)
    for noun in candidates:  # not "a roster position whose position"
        if not _same(last, noun[-len(last):]) and not _within(noun, last):
            n = " ".join(noun)
            verb = "include" if _plural(_head_noun(last)) else "is"
            return f"{{head}} has {indefinite_article(n)} {n} whose {' '.join(last)} {verb} {{tail}}."
    lead = "One of the" if _plural(_head_noun(last)) else "The"
    return f"{lead} {' '.join(last)} of the {' '.join(candidates[0] if candidates else p1)} of {{head}} is {{tail}}."


def relation_phrase(key: str, label: str | None = None) -> tuple[list[str], list[str]]:
    """The words a relation is read from: ``(phrase, intermediate)``. ``intermediate`` is the first half's noun of a
    compound key (``/a/b/c./d/e/f``), else empty. Empty ``phrase`` when nothing is readable."""
    key = (key or "").strip()
    if "/" in key and not key.startswith(("http://", "https://")):
        halves = [h for h in key.split("./") if h.strip("/")]
        segments = [h.rstrip("/").split("/")[-1] for h in halves]
        if len(segments) >= 2:
            first, last = _words(segments[0]), _words(segments[-1])
            return (last, first) if first != last else (first, [])
        return _words(segments[0]), []
    if key.startswith(("http://", "https://")):
        key = re.split(r"[/#]", key.rstrip("/#"))[-1]
    elif ":" in key and not key.endswith(":"):
        key = key.split(":")[-1]
    if label and label.strip() and label.strip() != key:
        words = _label_words(label)
        if words:
            return words, []
    if _OPAQUE.match(key):
        return [], []
    return _words(key), []


def _label_words(label: str) -> list[str]:
    """A label's words, lower case, commas kept on the word before them ("spoken, written, or signed")."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", label.strip())
    return [w for w in re.split(r"[\s_]+|(?<=\w)-(?=\w)", text.lower()) if w and w != ","]


def _is_path(key: str) -> bool:
    key = (key or "").strip()
    return "/" in key and not key.startswith(("http://", "https://")) and key.startswith("/")


def propose_template(key: str, label: str | None = None, *, many: bool = False) -> str | None:
    """A statement template for the relation ``key`` (with its ``label``) by the rules of the module docstring, or
    None when neither names it in words. ``many``: the relation gives a head several tails (see
    :func:`multi_valued`), so "The film of {head} is {tail}." reads "One of the films of {head} is {tail}."."""
    if _is_path(key) and (not label or not label.strip() or label.strip() == key or _is_path_label(key, label)):
        template = _path_template(key.strip())
    else:
        phrase, _ = relation_phrase(key, label)
        template = _phrase_template(phrase, from_key=not _label_words(label or "") or (label or "").strip() == key)
    m = _SINGLE.fullmatch(template or "")
    if many and m:
        words = m.group(1).split(" ")
        i = words.index("of") - 1 if "of" in words[1:] else len(words) - 1
        words[i] = _plural_of(words[i])
        return f"One of the {' '.join(words)} of {{head}} is {{tail}}."
    return template


_SINGLE = re.compile(r"The (.+) of \{head\} is \{tail\}\.")


def multi_valued(con: Any, *, share: float = 0.1) -> frozenset[str]:
    """Keys of the relations of the KG ``con`` reads unqualified (``triples``, ``relations``) where at least
    ``share`` of the heads have more than one tail: their statements read "One of the ... of {head} is {tail}."."""
    rows = con.execute(
        "SELECT r.key FROM (SELECT relation, head, count(*) > 1 AS multi FROM triples GROUP BY relation, head) x "
        "JOIN relations r ON r.id = x.relation GROUP BY r.key HAVING avg(multi::INT) >= $share",
        {"share": share}).fetchall()
    return frozenset(r[0] for r in rows)


def _is_path_label(key: str, label: str) -> bool:
    """Whether ``label`` only spells the path's words (FB15k-237's relation2text: "film film genre")."""
    return set(_words(label.replace(".", " "))) <= set(_words(key.replace("/", " ").replace(".", " ")))


@dataclass(frozen=True)
class Proposal:
    """A relation's proposed template and how it was made (``rules`` or ``model``; ``model_rejected`` when the
    model's reply held no usable template and the rules' proposal stands)."""

    key: str
    label: str | None
    template: str | None
    method: str


def propose_templates(relations: Iterable[tuple[str, str | None]], *,
                      many: Collection[str] = frozenset()) -> dict[str, Proposal]:  # fmt: skip
    """Rule-based proposals for ``(key, label)`` pairs: ``{key: Proposal}`` (template None where nothing is
    readable); ``many``: keys of relations with several tails per head (:func:`multi_valued`)."""
    return {key: Proposal(key, label, propose_template(key, label, many=key in many), "rules")
            for key, label in relations}


#: GraphEval's Figure 9: the few-shot prompt its relation templates were first generated with.
FIGURE9_PROMPT = (
    "You are given a few samples of a relation in the format of <head, relation, tail>. You need to write a "
    "statement template about the relation, which will be used to generate a statement for a given head entity and "
    "the tail entity. I will give you 3 examples as below.\n\n"
    'relation: "education"\ntriple samples:\n<Mamphono Khaketla, education, National University of Lesotho>\n...\n'
    "<A.D. Frazier, education, University of North Carolina at Chapel Hill>\n\n"
    'statement template: "{{head}} was educated at {{tail}}."\n\n'
    'relation: "channel"\ntriple samples:\n<Way Out, channel, CBS>\n...\n<19+, channel, TVN (Poland)>\n\n'
    'statement template: "{{head}} is broadcasted on {{tail}}."\n\n'
    'relation "curator"\ntriple samples:\n<Alicante Museum of Contemporary Art, curator, Alicante>\n...\n'
    "<Baturyn Museum of Archeology, curator, Hetman's Capital>\n\n"
    'statement template: "{{head}} is curated by {{tail}}."\n\n'
    "according to the above 3 examples, please write a statement template for the folloing relation:\n\n"
    "relation: {relation}\ntriple samples:\n{triples}"
)


def figure9_prompt(relation: str, samples: Sequence[tuple[str, str]]) -> str:
    """Figure 9's prompt for ``relation`` (its label or key) with sample ``(head label, tail label)`` pairs."""
    triples = "\n".join(f"<{h}, {relation}, {t}>" for h, t in samples)
    return FIGURE9_PROMPT.format(relation=relation, triples=triples)


_TEMPLATE_IN_REPLY = re.compile(r"""["\u201c]?([^"\u201c\u201d\n]*\{head\}[^"\u201c\u201d\n]*)["\u201d]?""")


def parse_model_template(reply: str | None) -> str | None:
    """The statement template in a model's reply to :func:`figure9_prompt` (the first line or quoted span with
    ``{head}`` and ``{tail}`` once each, a "statement template:" prefix removed), or None."""
    for m in _TEMPLATE_IN_REPLY.finditer(reply or ""):
        text = re.sub(r"^\s*(?:statement\s+template\s*:\s*)", "", m.group(1), flags=re.I).strip().strip('"')
        if text.count("{head}") == 1 and text.count("{tail}") == 1:
            return text if text.endswith((".", "!", "?")) else text + "."
    return None


def propose_with_model(relations: Sequence[tuple[str, str | None]], samples: Mapping[str, Sequence[tuple[str, str]]],
                       generate: Callable[[list[str]], list[str]]) -> dict[str, Proposal]:  # fmt: skip
    """Templates proposed by a model: one Figure 9 prompt per ``(key, label)`` with its ``samples[key]`` (head and
    tail labels of real triples), sent in one call of ``generate`` (prompts -> replies, e.g. a backend's first
    sample). A reply without a usable template keeps the rule-based proposal (method ``model_rejected``)."""
    prompts = [figure9_prompt(label or key, samples.get(key, ())) for key, label in relations]
    replies = generate(prompts) if prompts else []
    if len(replies) != len(prompts):
        raise ValueError(f"propose_with_model: {len(prompts)} prompts but {len(replies)} replies from generate")
    out = {}
    for (key, label), reply in zip(relations, replies, strict=True):
        template = parse_model_template(reply)
        out[key] = (Proposal(key, label, template, "model") if template is not None
                    else Proposal(key, label, propose_template(key, label), "model_rejected"))
    return out


def render(template: str, head: str, tail: str) -> str:
    """The statement of ``template`` for one pair of labels (braces in a label are kept as they are)."""
    h, t = template.index("{head}"), template.index("{tail}")
    if h < t:
        return template[:h] + head + template[h + 6:t] + tail + template[t + 6:]
    return template[:t] + tail + template[t + 6:h] + head + template[h + 6:]


def review_rows(templates: Mapping[str, str], examples: Mapping[str, Sequence[tuple[str, str]]], *,
                sources: Mapping[str, str] | None = None, per_relation: int = 2) -> list[dict[str, str]]:  # fmt: skip
    """One row per relation for a person to review: key, source, template and up to ``per_relation`` statements
    rendered on real triples (``examples[key]``: head and tail labels)."""
    rows = []
    for key in sorted(templates):
        pairs = list(examples.get(key, ()))[:per_relation]
        rows.append({"relation_key": key, "source": (sources or {}).get(key, ""), "template": templates[key],
                     "examples": " | ".join(render(templates[key], h, t) for h, t in pairs)})
    return rows
