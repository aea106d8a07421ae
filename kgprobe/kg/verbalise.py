"""Statement templates for a KG's relations, ``"{head} ... {tail}."``, proposed from each relation's key and label,
so that a statement about any KG reads as a sentence ("The place of birth of Ada Lovelace is London.") rather than
the key glued between two names. Suites that write statements from triples (GraphEval, KG-FPQ, Drowzee) share
it; every proposal is meant to be reviewed (:func:`review_rows` renders each on real triples).

Two proposers:

* :func:`propose_template` / :func:`propose_templates` (rule-based, no model): the relation's phrase is taken from
  its key when the key is a path (Freebase ``/people/person/place_of_birth``; a compound key through an
  intermediate node, ``/film/actor/film./film/performance/film``, gives the last segment of each half), from its
  label otherwise (Wikidata ``P19`` -> "place of birth"), from the key's words last (DBpedia ``birthPlace``). The
  phrase is then read by its form:

  =====================================  ==========================================  ============================
  phrase                                 template                                    example
  =====================================  ==========================================  ============================
  verb in the third person               ``{head} <phrase> {tail}.``                 "contains", "adjoins"
  past participle first                  ``{head} was <phrase> {tail}.``             "nominated for", "born in"
  ends with "by" (no participle before)  ``{head} has <phrase> {tail}.``              "story by"
  ends with a preposition                ``{head} is the <phrase> {tail}.``          "first level division of"
  ends with a past participle            ``{head} <verb> the <rest> {tail}.``        "film sets designed"
  "is ..." / "has ..."                   ``{head} <phrase> {tail}.``                 "has part", "is a"
  a noun phrase (everything else)        ``The <phrase> of {head} is {tail}.``       "place of birth", "genre"
  a plural noun phrase                   ``One of the <phrase> of {head} is {tail}.``  "artists"
  =====================================  ==========================================  ============================

  A compound key with two different nouns reads "The <second> of the <first> of {head} is {tail}." ("The currency
  of the net worth of ..."); one whose first half ends with a preposition reads "{head} is <first> the <second>
  {tail}." ("is member of the organization"). A relation with no word to read (an opaque id without a label) gets None: its
  statements use the flagged fallback of the suite.
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["FIGURE9_PROMPT", "Proposal", "figure9_prompt", "parse_model_template", "propose_template",
           "propose_templates", "propose_with_model", "relation_phrase", "render", "review_rows"]

_PREPOSITIONS = frozenset({"of", "by", "in", "for", "to", "from", "at", "with", "on", "into", "about", "as", "under",
                           "over", "than", "between", "within"})
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
_OPAQUE = re.compile(r"^(?:[A-Za-z]{0,2}\d+|[0-9a-f]{8,}|_:?\w+)$")


def _words(text: str) -> list[str]:
    """The words of a key segment or label: underscores, hyphens and camelCase split, lower-cased."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [w for w in re.split(r"[\s_\-]+", text.strip().lower()) if w]


def _is_participle(word: str) -> bool:
    return word in _IRREGULAR_PARTICIPLES or (len(word) > 4 and word.endswith("ed") and word not in _NOT_PARTICIPLES)


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
        words = _words(label)
        if words:
            return words, []
    if _OPAQUE.match(key):
        return [], []
    return _words(key), []


def propose_template(key: str, label: str | None = None) -> str | None:
    """A statement template for the relation ``key`` (with its ``label``) by the rules of the module docstring, or
    None when neither names it in words."""
    phrase, intermediate = relation_phrase(key, label)
    if not phrase or not any(ch.isalpha() for w in phrase for ch in w):
        return None
    text = " ".join(phrase)
    first, last = phrase[0], phrase[-1]
    if "_".join(phrase) in _THIRD_PERSON_VERBS or (len(phrase) <= 2 and first in _THIRD_PERSON_VERBS):
        return f"{{head}} {text} {{tail}}."
    if first in _VERB_STARTS and len(phrase) > 1:
        return f"{{head}} {text} {{tail}}."
    if _is_participle(first) and (len(phrase) == 1 or phrase[1] in _PREPOSITIONS or len(phrase) == 2):
        return f"{{head}} was {text} {{tail}}."
    if last == "by" and len(phrase) > 1 and not _is_participle(phrase[-2]):
        return f"{{head}} has {' '.join(phrase[:-1])} by {{tail}}."
    if last in _PREPOSITIONS and len(phrase) > 1:
        if _is_participle(phrase[-2]):
            return f"{{head}} was {text} {{tail}}."
        return f"{{head}} is the {text} {{tail}}."
    if _is_participle(last) and len(phrase) > 1:
        return f"{{head}} {last} the {' '.join(phrase[:-1])} {{tail}}."
    if intermediate and intermediate[-1] in _PREPOSITIONS:
        return f"{{head}} is {' '.join(intermediate)} the {text} {{tail}}."
    lead = "One of the" if _plural(last) else "The"
    if intermediate:
        return f"{lead} {text} of the {' '.join(intermediate)} of {{head}} is {{tail}}."
    return f"{lead} {text} of {{head}} is {{tail}}."


def _plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "ics", "ous", "news"))


@dataclass(frozen=True)
class Proposal:
    """A relation's proposed template and how it was made (``rules`` or ``model``; ``model_rejected`` when the
    model's reply held no usable template and the rules' proposal stands)."""

    key: str
    label: str | None
    template: str | None
    method: str


def propose_templates(relations: Iterable[tuple[str, str | None]]) -> dict[str, Proposal]:
    """Rule-based proposals for ``(key, label)`` pairs: ``{key: Proposal}`` (template None where nothing is
    readable)."""
    return {key: Proposal(key, label, propose_template(key, label), "rules") for key, label in relations}


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
