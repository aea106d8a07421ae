"""Drowzee's reasoning oracle (§3.6, Algorithm 3): read the answer, extract the triples the reasoning states, compare
the response graph with the ground-truth graph of the proof, and name the category.

* A refusal ("I don't know" at the beginning, or any phrase of :data:`REFUSALS` anywhere in a short answer) is not a
  hallucination: the paper's "correct and normal response", category CO (and counted on its own).
* Otherwise :func:`response_edges` reads the reasoning's triples with the shared claim extractor
  (:mod:`kgprobe.scoring.claims`: the KG names a fact mentions and the relation phrase between them, read by the
  phrase sets of the relation labels — word forms, derivations, synonyms, the user's phrasings,
  :mod:`kgprobe.scoring.relations` — or embedding, its direction and negation kept), else as a plain "S <relation
  words> O" sentence by the same phrase sets (:func:`plain_claims`). A temporal item's sentences are read the same
  way against its events that are KG facts, their year phrases set apart (:func:`event_edges`: "X passed away in Y
  in 2007" is the event "X died in Y" started and ended in 2007). A fact none of these reads goes to
  :class:`Extractor`, which turns each reasoning sentence into triples, offline: a relation phrase is found by
  the patterns of the relation labels (by phrase type, :mod:`.templates`) and of the user's aliases, or, between two
  linked mentions, by embedding similarity; the subject and object spans are linked against the KG's entity labels
  (and the item's event labels): exact, then normalised (case, accents, punctuation, a leading "the"), then by
  embedding (cosine >= the threshold). Sentences that deny (not, never, n't) give negated relations, which match
  no fact of a proof. Temporal sentences ("X started in 1837", "X ended in 1901", "X lasted from 1837 to 1901")
  give (event, started_in / ended_in, year) triples.
* :func:`graph_similarity`: node and edge Jaccard over semantically matched elements (same entity, same year, or
  cosine >= ``threshold`` of the labels; an edge also matches reversed for a symmetric relation, or as the declared
  inverse relation reversed), with one-to-one matching.
* :func:`category`: CO, EK (s_n < θ_n), EI (s_e < θ_e), OL (both).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kgprobe.suites.drowzee.templates import phrase_type

__all__ = [
    "CATEGORIES",
    "MISSING",
    "NO_TRIPLES",
    "REFUSALS",
    "Edge",
    "Extractor",
    "Node",
    "category",
    "claim_edges",
    "event_edges",
    "graph_similarity",
    "normalise",
    "plain_claims",
    "read_answer",
    "response_edges",
    "year_phrases",
]

#: Algorithm 3's categories: correct, erroneous knowledge, erroneous inference, both.
CATEGORIES: tuple[str, ...] = ("CO", "EK", "EI", "OL")
#: An answer whose reasoning yields no triple: its own share, neither correct nor a hallucination.
NO_TRIPLES = "NT"
#: A generation error: no answer to judge, left out of every share.
MISSING = "missing"

#: Refusals recognised anywhere in a short answer (:data:`SHORT_ANSWER_WORDS` words at most).
REFUSALS: tuple[str, ...] = (
    r"i\s+(?:do\s+not|don'?t)\s+know", r"i\s+(?:do\s+not|don'?t)\s+have\s+(?:enough|sufficient|the|any)\s+"
    r"(?:information|knowledge|data|details)", r"(?:there\s+is\s+)?(?:not|insufficient)\s+enough\s+information",
    r"(?:i\s+)?(?:cannot|can'?t|am\s+unable\s+to|'m\s+unable\s+to)\s+(?:answer|determine|say|tell|confirm|verify)",
    r"i\s*(?:'m|\s+am)\s+not\s+(?:sure|certain|aware)", r"(?:i\s+have\s+)?no\s+(?:information|knowledge)\s+(?:about|on|of)",
    r"(?:it\s+is\s+|it'?s\s+)?(?:unknown|unclear)\s+(?:to\s+me|whether)", r"\bi\s+am\s+unable\s+to\s+answer",
    r"beyond\s+my\s+knowledge", r"(?:cannot|can'?t)\s+be\s+determined",
)
SHORT_ANSWER_WORDS = 30
_REFUSAL_ANYWHERE = re.compile("|".join(f"(?:{r})" for r in REFUSALS), re.IGNORECASE)

STARTED, ENDED = "started_in", "ended_in"

_REFUSAL = re.compile(r"^\W*(?:answer\s*:\s*)?(?:i\s+(?:do\s+not|don'?t|don’t)\s+know|idk\b|i\s*(?:'m|’m|\s+am)\s+not\s+sure|"
                      r"i\s+cannot\s+(?:answer|determine|say)|i\s+can'?t\s+(?:answer|determine|say)|unknown\b)",
                      re.IGNORECASE)
#: A first line that announces the answer without giving it ("Sure! Here is my answer:", "Certainly. Here's the answer").
_PREAMBLE = re.compile(r"^\s*(?:(?:sure|certainly|of course|okay|ok)\b[^\n]*|here(?:\s+is|'s|’s)\s+(?:my|the)\s+"
                       r"(?:answer|response)\b[^\n]*)\n\s*", re.IGNORECASE)
_YES = re.compile(r"^\W*(?:answer\s*:\s*)?yes\b", re.IGNORECASE)
_NO = re.compile(r"^\W*(?:answer\s*:\s*)?no\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|never|no longer)\b|n't\b|n’t\b", re.IGNORECASE)
_DISCOURSE = re.compile(r"^(?:(?:as far as i know|as is well known|as we know|in fact|indeed|of course|actually|notably|"
                        r"importantly|moreover|furthermore|additionally|also|however|therefore|thus|hence|so|first|"
                        r"second|third|finally|in addition|historically|according to (?:my|the) knowledge|because|since|yes|no|"
                        r"the answer is (?:yes|no)|i (?:believe|think|know)(?: that)?|it is (?:true|known|a fact) that|"
                        r"and|but|while|whereas|which means(?: that)?)\b[,.:]?\s+)+",
                        re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)]|\(\d+\))\s*")
_COPULA = r"(?:is|was|are|were|has been|had been|is also|was also)"
_YEAR = r"(?:the year\s+)?(?P<{name}>-?\d{{1,4}})"


def read_answer(text: str | None) -> str:
    """The answer an output begins with: ``yes``, ``no``, ``refusal`` ("I don't know" and the like at the start,
    or a phrase of :data:`REFUSALS` anywhere in an answer of at most :data:`SHORT_ANSWER_WORDS` words: "Sorry, I
    don't know.", "No, I don't have enough information to answer this question.") or ``unknown`` (none of them:
    the answer cannot be read). A first line that only announces the answer ("Sure! Here is my answer to the
    question ...:", as Llama-2 chat models open) is skipped: the answer is the line after it.

        >>> read_answer('Sure! Here is my answer to the question "Is X Y?"\\nNo, because X is Z.')
        'no'
    """
    if not text or not text.strip():
        return "unknown"
    got = _PREAMBLE.match(text)
    if got and got.end() < len(text):
        text = text[got.end():]
    plain = text.replace("\u2019", "'")
    if _REFUSAL.match(plain):
        return "refusal"
    if len(plain.split()) <= SHORT_ANSWER_WORDS and _REFUSAL_ANYWHERE.search(plain):
        return "refusal"
    if _YES.match(text):
        return "yes"
    if _NO.match(text):
        return "no"
    return "unknown"


def normalise(text: str) -> str:
    """A mention as compared: lower case, accents and punctuation removed, spaces collapsed, no leading "the"."""
    t = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    t = re.sub(r"[^a-z0-9 ]+", " ", t)
    t = " ".join(t.split())
    return t.removeprefix("the ")


@dataclass(frozen=True)
class Node:
    """A graph node: a KG entity (``key`` its id), an event (``key`` its atom name), a year, or unlinked text."""

    kind: str
    key: str
    label: str


@dataclass(frozen=True)
class Edge:
    """A graph edge: ``relation`` is a relation key, ``started_in`` / ``ended_in``, ``not:<key>`` for a denied
    fact, or ``text:<phrase>`` for an unlinked phrase; ``relation_text`` is what it is compared by."""

    head: Node
    relation: str
    relation_text: str
    tail: Node


def _year_node(year: int | str) -> Node:
    return Node("year", str(int(year)), str(int(year)))


class Extractor:
    """Offline triple extraction from reasoning text. ``entities``: id -> label of the KG (or of the entities that
    matter); ``relations``: key -> label; ``aliases``: key -> extra verb phrases ("was born in");
    ``phrase_types``: key -> noun / passive / active overrides; ``embedder`` (optional) links what exact and
    normalised matching cannot, at cosine >= ``threshold``."""

    def __init__(self, entities: Mapping[int, str], relations: Mapping[str, str], *,
                 aliases: Mapping[str, Sequence[str]] | None = None, phrase_types: Mapping[str, str] | None = None,
                 embedder: Any = None, threshold: float = 0.8, relation_threshold: float = 0.8) -> None:  # fmt: skip
        self.entities = {int(k): str(v) for k, v in entities.items()}
        self.relations = dict(relations)
        self.embedder = embedder
        self.threshold = threshold
        self.relation_threshold = relation_threshold
        self._dotted = sorted({v for v in self.entities.values()
                               if re.search(r"[.!?;,]\s|\s(?:and|but|so|which|while|whereas)\s", v)}, key=len, reverse=True)
        self._exact: dict[str, list[int]] = {}
        self._norm: dict[str, list[int]] = {}
        for i, label in sorted(self.entities.items()):
            self._exact.setdefault(label, []).append(i)
            self._norm.setdefault(normalise(label), []).append(i)
        self._patterns: list[tuple[re.Pattern[str], str]] = []
        phrases: list[tuple[str, str, str]] = []
        for key, label in self.relations.items():
            phrases.append((label, phrase_type(label, phrase_types, key), key))
            for alias in (aliases or {}).get(key, ()):
                phrases.append((alias, "alias", key))
        for label, kind, key in sorted(phrases, key=lambda p: (-len(p[0]), p[0])):
            for pat in self._relation_patterns(label, kind):
                self._patterns.append((re.compile(pat, re.IGNORECASE), key))
        self._phrases = {key: [label] + list((aliases or {}).get(key, ())) for key, label in self.relations.items()}
        y = _YEAR.format
        self._temporal = [
            (re.compile(rf"^(?P<s>.+?) (?:lasted|ran|existed|lived|was|were|held|took place|happened|occurred)?\s*"
                        rf"from {y(name='a')} (?:to|until|till|through) {y(name='b')}\b", re.IGNORECASE), "span"),
            (re.compile(rf"^(?P<s>.+?) (?:started|began|begins|starts)(?: in| on| at)? {y(name='a')},? and "
                        rf"(?:ended|finished|ends|lasted until)(?: in| on| at)? {y(name='b')}\b", re.IGNORECASE), "span"),
            (re.compile(rf"^(?P<s>.+?) (?:started|began|begins|starts|start|begin|commenced|was founded|was established)"
                        rf"(?: in| on| at)? {y(name='a')}\b", re.IGNORECASE), STARTED),
            (re.compile(rf"^(?P<s>.+?) (?:ended|finished|ends|end|ceased|stopped|was dissolved)(?: in| on| at)? "
                        rf"{y(name='a')}\b", re.IGNORECASE), ENDED),
            (re.compile(rf"^(?P<s>.+?) (?:happened|occurred|took place)(?: in| on| at)? {y(name='a')}\b", re.IGNORECASE), "span1"),
        ]

    @staticmethod
    def _relation_patterns(label: str, kind: str) -> list[str]:
        rel = r"\s+".join(re.escape(w) for w in label.split())
        if kind == "noun":
            return [rf"^(?:the |a |an )?{rel} of (?P<s>.+?) {_COPULA} (?:not )?(?P<o>.+)$",
                    rf"^(?P<s>.+?)['’]s {rel} {_COPULA} (?:not )?(?P<o>.+)$",
                    rf"^(?P<o>.+?) {_COPULA} (?:not )?(?:the |a |an |one of the )?{rel}s? of (?P<s>.+)$"]
        if kind == "passive":
            return [rf"^(?P<s>.+?) {_COPULA} (?:not )?{rel} (?P<o>.+)$"]
        if kind == "alias":
            return [rf"^(?P<s>.+?) (?:{_COPULA} |did not |does not |do not |never )?(?:not )?{rel} (?P<o>.+)$"]
        return [rf"^(?P<s>.+?) (?:does not |do not |did not |never )?{rel} (?P<o>.+)$"]

    # ------------------------------------------------------------------------------------------ linking
    def link(self, span: str, *, events: Mapping[str, str] | None = None, prefer: Iterable[int] = ()) -> Node:
        """The node a mention names: an event of ``events`` (name -> label), a KG entity (exact, normalised, then
        embedding), or the mention's own text."""
        text = span.strip().strip("\"'“”‘’*`").rstrip(".,;:!?").strip()
        if "," in text and normalise(text) not in self._norm and text not in (events or {}).values():
            text = text.split(",")[0].strip()  # "Rome, as is well known," names Rome
        prefer = set(prefer)
        events = events or {}
        norm = normalise(text)
        for name, label in events.items():
            if label == text or normalise(label) == norm:
                return Node("event", name, label)
        for table, key in ((self._exact, text), (self._norm, norm)):
            ids = table.get(key)
            if ids:
                best = next((i for i in ids if i in prefer), ids[0])
                return Node("entity", str(best), self.entities[best])
        if self.embedder is not None and norm:
            cands = [("event", n, lab) for n, lab in events.items()]
            pool = [i for i in prefer if i in self.entities] or []
            cands += [("entity", str(i), self.entities[i]) for i in sorted(pool)]
            if cands:
                sims = self.embedder.similarity([text], [c[2] for c in cands])[0]
                k = int(np.argmax(sims))
                if float(sims[k]) >= self.threshold:
                    return Node(*cands[k])
        return Node("text", norm, text)

    def link_relation(self, phrase: str) -> tuple[str, str]:
        """(relation key, compared text) of a relation phrase: a label or alias (normalised), else the closest label
        by embedding at cosine >= ``relation_threshold``, else ``text:<phrase>``."""
        norm = normalise(phrase)
        for key, options in self._phrases.items():
            if any(normalise(o) == norm for o in options):
                return key, self.relations[key]
        if norm in (normalise(STARTED), "started in", "began in"):
            return STARTED, "started in"
        if norm in (normalise(ENDED), "ended in"):
            return ENDED, "ended in"
        if self.embedder is not None and norm and self.relations:
            keys = sorted(self.relations)
            sims = self.embedder.similarity([phrase], [self.relations[k] for k in keys])[0]
            k = int(np.argmax(sims))
            if float(sims[k]) >= self.relation_threshold:
                return keys[k], self.relations[keys[k]]
        return f"text:{norm}", phrase

    # ------------------------------------------------------------------------------------------ extraction
    def sentences(self, text: str) -> list[str]:
        """The reasoning's statements, one per line (bullets, numbering and the leading answer word removed)."""
        out = []
        for line in (text or "").splitlines():
            line = _BULLET.sub("", line).strip()
            line = re.sub(r"^(?:answer\s*:\s*)?(?:yes|no)\b[.,!:]?\s*", "", line, flags=re.IGNORECASE)
            if line:
                out.append(line)
        return out

    _CLAUSE = re.compile(r",?\s+(?:and|but|so|which|while|whereas)\s+|;\s*")

    def _mask(self, line: str) -> tuple[str, list[str]]:
        slots: list[str] = []
        for label in self._dotted:
            if label in line:
                slots.append(label)
                line = line.replace(label, f"\x00{len(slots) - 1}\x00")
        return line, slots

    @staticmethod
    def _unmask(part: str, slots: Sequence[str]) -> str:
        for k, label in enumerate(slots):
            part = part.replace(f"\x00{k}\x00", label)
        return part.strip()

    def _split(self, line: str) -> list[list[str]]:
        """A line's sentences, each as its clauses: split at sentence ends (not after an initial or a common
        abbreviation) and at ", and", ";", ", so", ", which", ", while", never inside a known label ("Dr.
        Strangelove", "War and Peace", "Museum of Fine Arts, Boston")."""
        masked, slots = self._mask(line)
        out = []
        for sentence in re.split(r"(?<![A-Z])(?<!\b(?:Dr|Mr|Ms|St|Jr|Sr|vs|No|Mt))(?<=[a-z0-9\)\]\x00])[.!?]\s+"
                                 r"(?=[A-Z\"“\x00])", masked):
            clauses = [self._unmask(c, slots) for c in self._CLAUSE.split(sentence)]
            clauses = [c for c in clauses if c]
            if clauses:
                out.append([self._unmask(sentence, slots), *clauses] if len(clauses) > 1 else clauses)
        return out

    def extract(self, text: str, *, events: Mapping[str, str] | None = None, prefer: Iterable[int] = ()) -> list[Edge]:
        """The triples stated by ``text`` (see the module docstring), in order, without repeats: per clause of each
        sentence, or, when no clause yields one, from the sentence as a whole."""
        prefer = list(prefer)
        out: list[Edge] = []
        for line in self.sentences(text):
            for parts in self._split(line):
                whole, clauses = parts[0], parts[1:]
                found: list[Edge] = []
                for clause in clauses:
                    found += self.extract_sentence(clause, events=events, prefer=prefer)
                if not found:
                    found = self.extract_sentence(whole, events=events, prefer=prefer)
                for edge in found:
                    if edge not in out:
                        out.append(edge)
        return out

    def extract_sentence(self, sentence: str, *, events: Mapping[str, str] | None = None,
                         prefer: Iterable[int] = ()) -> list[Edge]:  # fmt: skip
        """The triples of one sentence (usually one, two for "X lasted from A to B")."""
        s = _DISCOURSE.sub("", sentence.strip().rstrip(".!").strip())
        s = s[:1].upper() + s[1:] if s[:1].islower() and s[:4].lower() != "the " else s
        denied = bool(_NEGATION.search(s))
        for pat, kind in self._temporal:
            m = pat.match(s)
            if not m:
                continue
            node = self.link(m.group("s"), events=events, prefer=prefer)
            if kind == "span":
                return [Edge(node, STARTED, "started in", _year_node(m.group("a"))),
                        Edge(node, ENDED, "ended in", _year_node(m.group("b")))]
            if kind == "span1":
                return [Edge(node, STARTED, "started in", _year_node(m.group("a"))),
                        Edge(node, ENDED, "ended in", _year_node(m.group("a")))]
            return [Edge(node, kind, "started in" if kind == STARTED else "ended in", _year_node(m.group("a")))]
        for pat, key in self._patterns:
            m = pat.match(s)
            if m:
                head = self.link(m.group("s"), events=events, prefer=prefer)
                tail = self.link(m.group("o"), events=events, prefer=prefer)
                rel = f"not:{key}" if denied else key
                return [Edge(head, rel, ("not " if denied else "") + self.relations[key], tail)]
        return []


# ------------------------------------------------------------------------------------------------ shared claims


def claim_edges(claims: Sequence[Any], kg: Any, *, embedder: Any = None, threshold: float = 0.8,
                events: Mapping[str, str] | None = None) -> list[Edge]:  # fmt: skip
    """Edges of claims (:class:`kgprobe.scoring.claims.Claim`) read against ``kg``
    (:class:`~kgprobe.scoring.claims.KGFacts` of the item's entities and relations): a linked mention is its
    entity (or an event of ``events``, name -> label), an unlinked one its text, a year its year; the relation
    phrase is read as a relation key (a reversed reading swaps the ends; a negated claim gets ``not:<key>``),
    ``started_in`` / ``ended_in`` for a year, or stays ``text:<phrase>``."""
    out: list[Edge] = []
    for c in claims:
        if not (c.subject and c.relation and c.object):
            continue
        head, tail = _claim_node(c.subject, kg, events), _claim_node(c.object, kg, events)
        phrase = normalise(c.relation)
        dated = tail.kind == "year" and re.sub(r"^(?:was |is |were )", "", phrase)
        cands = [] if dated else kg.relation_candidates(c.relation, embedder=embedder, threshold=threshold)
        if dated and dated.split()[0] in ("started", "began", "start", "begin", "commenced", "founded"):
            edge = Edge(head, STARTED, "started in", tail)
        elif dated and dated.split()[0] in ("ended", "end", "finished", "ceased", "stopped", "dissolved"):
            edge = Edge(head, ENDED, "ended in", tail)
        elif cands:
            # of several readings ("in": located in, located in city, country), the one the item's facts hold
            held = [(k, r) for k, r in cands
                    if head.kind == tail.kind == "entity" and kg.holds(*((tail.key, k, head.key) if r
                                                                       else (head.key, k, tail.key)))]
            key, rev = (held or cands)[0]
            label = kg.relations.get(key, str(key))
            if rev:
                head, tail = tail, head
            edge = Edge(head, f"not:{key}" if c.negated else str(key), ("not " if c.negated else "") + label, tail)
        else:
            phrase = normalise(c.relation)
            edge = Edge(head, f"text:{'not ' if c.negated else ''}{phrase}", c.relation, tail)
        if edge not in out:
            out.append(edge)
    return out


def _claim_node(mention: str, kg: Any, events: Mapping[str, str] | None = None) -> Node:
    text = mention.strip()
    if re.fullmatch(r"-?\d{1,4}", text):
        return _year_node(text)
    for name, label in (events or {}).items():
        if normalise(label) == normalise(text):
            return Node("event", name, label)
    eid, _ = kg.resolve(text)
    if eid is not None:
        return Node("entity", str(eid), kg.entities[eid])
    return Node("text", normalise(text), text)


#: "S <relation words> O": a subject, the lower-case words of a relation phrase (at most six), and an object that
#: begins like a name (a capital, a digit or a quote); the phrase is then read by the relation labels' phrase sets.
_PLAIN = re.compile(r"^(?P<s>.+?)\s+(?P<r>(?:[a-z][a-z'’-]*\s+){0,5}[a-z][a-z'’-]*)\s+(?P<o>(?:the\s+)?[A-Z0-9\"“(].*?)"
                    r"[\s,.;:!]*$")
_PLAIN_NEG = re.compile(r"\b(?:not|never|no longer)\b|n['’]t\b", re.IGNORECASE)


def plain_claims(fact: str) -> list[Any]:
    """The one claim of a plain "S <relation words> O" sentence ("Teji Bachchan passed away in Delhi", "X was a
    player of Y"), whatever the KG knows of S and O: a fallback for a sentence whose names the item does not
    know, so that its relation is still read by the relation labels' phrase sets (:func:`claim_edges`); negation
    words deny it. None for a sentence of another shape."""
    from kgprobe.scoring.claims import Claim

    m = _PLAIN.match(fact.strip())
    if not m:
        return []
    rel = m.group("r")
    negated = bool(_PLAIN_NEG.search(rel))
    rel = " ".join(_PLAIN_NEG.sub(" ", rel).replace("did ", "").replace("does ", "").split())
    if not rel:
        return []
    return [Claim(m.group("s").strip(), rel, m.group("o").strip(), negated, fact)]


#: Year phrases of a dated statement: a span ("from 1957 to 1965", "between 1957 and 1965", "(1957-1965)"), a start
#: ("since 1957"), an end ("until 1965") and a point or start ("in 1957", "in the year 1957", "during 1957").
_YEAR_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), k) for p, k in (
    (r",?\s*\b(?:from|between)\s+(?:the\s+year\s+)?(?P<a>\d{3,4})\s+(?:to|until|till|through|and)\s+"
     r"(?:the\s+year\s+)?(?P<b>\d{3,4})\b", "span"),
    (r",?\s*\(?\b(?P<a>\d{3,4})\s*[-–—]\s*(?P<b>\d{3,4})\b\)?", "span"),
    (r",?\s*\b(?:since|starting in|beginning in)\s+(?:the\s+year\s+)?(?P<a>\d{3,4})\b", "start"),
    (r",?\s*\b(?:until|till|up to)\s+(?:the\s+year\s+)?(?P<b>\d{3,4})\b", "end"),
    (r",?\s*\b(?:in|during|around)\s+(?:the\s+year\s+)?(?P<a>\d{3,4})\b", "in"),
))


def year_phrases(fact: str) -> tuple[str, list[tuple[str, int | None, int | None]]]:
    """The fact without its year phrases, and the phrases as (kind, first year, last year): ``span``, ``start``,
    ``end`` or ``in`` (:data:`_YEAR_PHRASES`)."""
    found: list[tuple[str, int | None, int | None]] = []
    for pat, kind in _YEAR_PHRASES:
        def take(m: re.Match[str], kind: str = kind) -> str:
            a, b = m.groupdict().get("a"), m.groupdict().get("b")
            found.append((kind, int(a) if a else None, int(b) if b else None))
            return " "
        fact = pat.sub(take, fact)
    return " ".join(fact.split()).strip(" ,"), found


def _dated(node: Node, kind: str, years: Sequence[tuple[str, int | None, int | None]]) -> list[Edge]:
    """Start and end edges of a dated statement about ``node``: a span gives both; "in" gives both for a point
    event (``kind`` point or event) and the start of a state ("X married Y in 1957")."""
    out = []
    for what, a, b in years:
        if a is not None and what in ("span", "start", "in"):
            out.append(Edge(node, STARTED, "started in", _year_node(a)))
        if what == "in" and kind != "state" and a is not None:
            out.append(Edge(node, ENDED, "ended in", _year_node(a)))
        if b is not None and what in ("span", "end"):
            out.append(Edge(node, ENDED, "ended in", _year_node(b)))
    return out


def event_edges(fact: str, kg: Any, facts: Mapping[tuple[str, str, str], tuple[str, str, str]], *,
                embedder: Any = None, threshold: float = 0.8) -> list[Edge]:  # fmt: skip
    """The triples of a dated statement of a temporal item ("Teji Bachchan passed away in Mumbai in 2007", "X was
    the spouse of Y from 1922 to 2002"): the fact read without its year phrases by the shared claim extractor (or
    as a plain "S <relation words> O" sentence, :func:`plain_claims`), its relation by the relation labels'
    phrase sets; a fact that is an event of the item (``facts``: (head, relation, tail) of ``kg`` -> (event name,
    label, kind); a symmetric relation's either way) becomes that event node, dated by the year phrases
    (:func:`_dated`); any other fact stays an edge of its own, its years dating a node of its text (a wrong fact
    is judged, not lost). Empty when the statement names no fact."""
    from kgprobe.scoring.claims import heuristic_claims

    rest, years = year_phrases(fact)
    if not rest:
        return []
    edges = claim_edges(heuristic_claims(rest, kg), kg, embedder=embedder, threshold=threshold)
    if not edges:
        edges = [e for e in claim_edges(plain_claims(rest), kg, embedder=embedder, threshold=threshold)
                 if not e.relation.startswith("text:") and "entity" in (e.head.kind, e.tail.kind)]
    out: list[Edge] = []
    for e in edges:
        hit = facts.get((e.head.key, e.relation, e.tail.key))
        profile = kg.profiles.get(e.relation)
        if hit is None and (e.relation in kg.symmetric or (profile is not None and profile.symmetric)):
            hit = facts.get((e.tail.key, e.relation, e.head.key))
        if hit is not None and years:
            out += _dated(Node("event", hit[0], hit[1]), hit[2], years)
        elif years:
            node = Node("text", normalise(f"{e.head.label} {e.relation_text} {e.tail.label}"),
                        f"{e.head.label} {e.relation_text} {e.tail.label}")
            kind = next((k for (_, r, _), (_, _, k) in facts.items() if r == e.relation), "state")
            # the fact's own edge too: its ends are compared, not only its wording (which embeds close to an
            # event's label whatever place it names: "X died in Paris" / "X died in Mumbai")
            out += [e] + (_dated(node, kind, years) if not e.relation.startswith("not:") else [])
        else:
            out.append(e)  # an undated fact: not the item's graph of years, so it counts against the answer
    return out


def response_edges(text: str, kg: Any, extractor: Extractor, *, events: Mapping[str, str] | None = None,
                   prefer: Iterable[int] = (), embedder: Any = None, threshold: float = 0.8,
                   event_facts: Mapping[tuple[str, str, str], tuple[str, str, str]] | None = None) -> list[Edge]:
    """The triples a reasoning states, offline, per reasoning sentence. A rule item's: the shared claim
    extractor's (:func:`kgprobe.scoring.claims.heuristic_claims` then :func:`claim_edges`; the relation phrase read
    by the relation labels' phrase sets), else a plain "S <relation words> O" sentence (:func:`plain_claims`),
    else ``extractor`` (the label patterns, the user's aliases, embeddings). A temporal item's (``events``): a
    sentence that opens with an event's label ("<event> started in 1837") by ``extractor``; any other first as a
    dated fact (:func:`event_edges`, with ``event_facts``), then by ``extractor``."""
    from kgprobe.scoring.claims import heuristic_claims

    prefer = list(prefer)
    labels = sorted({normalise(v) for v in (events or {}).values()}, key=len, reverse=True)
    out: list[Edge] = []
    for line in extractor.sentences(text or ""):
        for parts in extractor._split(line):  # sentences, never split inside a known label ("Symphony No. 9")
            fact = _DISCOURSE.sub("", parts[0].strip())
            found: list[Edge] = []
            if not events:
                found = claim_edges(heuristic_claims(fact, kg), kg, embedder=embedder, threshold=threshold)
                if not found:
                    found = [e for e in claim_edges(plain_claims(fact), kg, embedder=embedder, threshold=threshold)
                             if not e.relation.startswith("text:") and "entity" in (e.head.kind, e.tail.kind)]
            else:
                if any(normalise(fact).startswith(lab) for lab in labels if lab):
                    found = extractor.extract(fact, events=events, prefer=prefer)
                if not found:
                    found = event_edges(fact, kg, event_facts or {}, embedder=embedder, threshold=threshold)
            if not found:
                found = extractor.extract(fact, events=events, prefer=prefer)
            for edge in found:
                if edge not in out:
                    out.append(edge)
    return out


# ------------------------------------------------------------------------------------------------ graphs


def _node_text(n: Node) -> str:
    return n.label


def graph_similarity(response: Sequence[Edge], ground: Sequence[Edge], *, embedder: Any = None,
                     threshold: float = 0.8, symmetric: Iterable[str] = (),
                     inverse: Mapping[str, str | Iterable[str]] | None = None,
                     optional: Sequence[Edge] = ()) -> tuple[float, float]:  # fmt: skip
    """``(s_n, s_e)``: Jaccard similarity of the nodes and of the edges of the response graph and the ground-truth
    graph, where two nodes are the same when they are the same entity, event or year, or (entities and text) their
    labels' cosine is >= ``threshold``; two edges when their ends are the same nodes and their relations are the
    same key or have labels at cosine >= ``threshold`` (a symmetric relation's edge also matches reversed, and an
    edge of a declared inverse pair matches its inverse reversed; inverses are sets, read both ways). Matching is
    one-to-one (greedy). ``optional`` edges (the derived fact) may be stated or not: a response edge matching one
    counts as matched, and an unstated one is not missed."""
    symmetric = set(symmetric)
    inverses: dict[str, set[str]] = {}
    for k, v in (inverse or {}).items():
        for x in ([v] if isinstance(v, str) else v):
            inverses.setdefault(k, set()).add(x)
            inverses.setdefault(x, set()).add(k)
    nots = {f"not:{k}": {f"not:{x}" for x in v} for k, v in inverses.items()}
    inverses.update(nots)
    r_nodes = _nodes(response)
    g_nodes = _nodes(ground)
    vec: dict[str, np.ndarray] = {}
    if embedder is not None:
        # only texts without an exact partner on the other side need a vector (none, for a perfect answer)
        r_texts = {n.label for n in r_nodes if n.kind != "year"} | {e.relation_text for e in response}
        g_texts = {n.label for n in g_nodes if n.kind != "year"} | {e.relation_text for e in ground}
        r_norm, g_norm = {normalise(t) for t in r_texts}, {normalise(t) for t in g_texts}
        r_open = sorted(t for t in r_texts if normalise(t) not in g_norm)
        g_open = sorted(t for t in g_texts if normalise(t) not in r_norm)
        if r_open and g_open:
            texts = sorted(set(r_open) | g_texts)
            vec = dict(zip(texts, embedder.embed(texts)))

    def same_text(a: str, b: str) -> bool:
        if a == b or normalise(a) == normalise(b):
            return True
        if a in vec and b in vec:
            return float(vec[a] @ vec[b]) >= threshold
        return False

    def same_node(a: Node, b: Node) -> bool:
        if a.kind == "year" or b.kind == "year":
            return a.kind == b.kind and a.key == b.key
        if a.kind == b.kind and a.key == b.key:
            return True
        if a.kind == "entity" and b.kind == "entity":
            return False  # two different KG entities are different, however alike their names
        return same_text(a.label, b.label)

    def same_rel(a: Edge, b: Edge) -> bool:
        if a.relation == b.relation:
            return True
        if a.relation.startswith("not:") != b.relation.startswith("not:"):
            return False
        return same_text(a.relation_text, b.relation_text)

    def same_edge(a: Edge, b: Edge) -> bool:
        if same_rel(a, b) and same_node(a.head, b.head) and same_node(a.tail, b.tail):
            return True
        if a.relation == b.relation and a.relation in symmetric:
            return same_node(a.head, b.tail) and same_node(a.tail, b.head)
        if b.relation in inverses.get(a.relation, ()):
            return same_node(a.head, b.tail) and same_node(a.tail, b.head)
        return False

    optional = [e for e in optional if e not in ground]
    if optional:
        extra = [e for e in response if not any(same_edge(e, g) for g in ground)
                 and any(same_edge(e, o) for o in optional)]
        rest = [e for e in response if e not in extra]
        matched = _matches(rest, list(ground), same_edge)
        total = len(response) + len(ground) - matched
        s_e = 1.0 if total == 0 else (matched + len(extra)) / total
        stated = [o for o in optional if any(same_edge(e, o) for e in extra)]
        return _jaccard(r_nodes, _nodes([*ground, *stated]), same_node), s_e
    return _jaccard(r_nodes, g_nodes, same_node), _jaccard(list(response), list(ground), same_edge)


def _nodes(edges: Sequence[Edge]) -> list[Node]:
    out: list[Node] = []
    for e in edges:
        for n in (e.head, e.tail):
            if n not in out:
                out.append(n)
    return out


def _matches(a: Sequence[Any], b: Sequence[Any], same: Any) -> int:
    used: set[int] = set()
    matched = 0
    for x in a:
        for j, y in enumerate(b):
            if j not in used and same(x, y):
                used.add(j)
                matched += 1
                break
    return matched


def _jaccard(a: Sequence[Any], b: Sequence[Any], same: Any) -> float:
    if not a and not b:
        return 1.0
    matched = _matches(a, b, same)
    return matched / (len(a) + len(b) - matched)


def category(s_n: float, s_e: float, *, theta_n: float = 0.8, theta_e: float = 0.8) -> str:
    """Algorithm 3: OL when both similarities fall below their thresholds, EI when the edges do, EK when the nodes
    do, else CO."""
    if s_e < theta_e and s_n < theta_n:
        return "OL"
    if s_e < theta_e:
        return "EI"
    if s_n < theta_n:
        return "EK"
    return "CO"
