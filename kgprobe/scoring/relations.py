"""What the claim checker knows about each KG relation, read from its label (or, without one, its key) and the KG's
data, never from one data set's key names: the relation's words and their word forms and synonyms (a phrase set),
how its label reads (a role noun, a verb, a passive, a phrase ending in a preposition), the kind of value it holds
(entities, dates, numbers), and whether it is single-valued (from the whole KG with enough support, or declared).

:func:`phrase_file` writes it as a reviewable YAML document (``kgprobe init`` puts one beside the config);
:func:`read_phrase_file` reads a user's edits back: extra phrases, ``single_valued: true | false``, symmetric.

    >>> p = profile_of("cast member")
    >>> compatibility(("starred",), p)
    1.0
    >>> compatibility(("produced",), profile_of("director"))
    0.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgprobe.scoring.lexicon import (
    CONVERSES,
    FUNCTION_WORDS,
    SINGLE_VALUED_CONCEPTS,
    SYMMETRIC_CONCEPTS,
    SYMMETRIC_HYPERNYMS,
    content_words,
    covered,
    forms,
    key_to_label,
    participle,
    parts_of_speech,
    related,
)

__all__ = [
    "MEANING_SHARE",
    "MIN_SUBJECTS",
    "SINGLE_VALUED_SHARE",
    "RelationProfile",
    "compatibility",
    "direction",
    "most_values",
    "reads_both_ways",
    "phrase_file",
    "profile_of",
    "read_phrase_file",
]

#: A relation is single-valued in practice when at least this share of its subjects have one object ...
SINGLE_VALUED_SHARE = 0.9
#: ... among at least this many subjects (fewer say nothing: one film's table row makes every column functional).
MIN_SUBJECTS = 5
#: A relation whose label names something single-valued by meaning (:func:`by_meaning`: a father, a type) is
#: single-valued when this share of its subjects have one object: a KG lists variants (a myth's second father)
#: without making the relation many-valued. Two signals, neither counting alone.
MEANING_SHARE = 0.75

_PREPS = {"of", "in", "to", "for", "at", "on", "from", "with", "into", "as"}
_BE = {"is", "was", "are", "were", "be", "been", "being"}
_POSSESS = {"s", "his", "her", "its", "their", "has", "have", "had", "having", "whose"}


@dataclass(frozen=True)
class RelationProfile:
    """One relation as the checker reads it. ``words``: the content words of its label; ``concepts``: every base
    form that states it (word forms, derivations, synonyms, the user's phrases); ``converse``: forms that state it
    read from the other end ("son" for a ``father`` relation); ``kind``: how the label reads (``noun``: "director",
    "place of birth"; ``prep``: "born in", "capital of"; ``passive``: "directed by"; ``verb``: "directed");
    ``value``: ``entity``, ``date`` or ``number``; ``single_valued`` with the ``subjects`` and ``share`` it rests
    on (``declared`` when the user or config set it); ``phrases``: the user's own phrases (phrase -> reversed)."""

    label: str
    words: tuple[str, ...]
    concepts: frozenset[str]
    converse: frozenset[str] = frozenset()
    kind: str = "noun"
    value: str = "entity"
    single_valued: bool = False
    subjects: int = 0
    share: float = 0.0
    declared: bool = False
    symmetric: bool = False
    phrases: Mapping[str, bool] = field(default_factory=dict)


def _label_kind(label: str) -> str:
    toks = label.lower().split()
    if not toks:
        return "noun"
    if toks[-1] == "by":
        return "passive"
    if toks[-1] in _PREPS and len(toks) > 1:
        return "prep"
    words = [t for t in toks if t not in FUNCTION_WORDS]
    if not words:
        return "noun"
    head = words[0]
    if participle(head):
        return "prep"  # a participle: "located in the territorial entity", "born in" read in their own order
    lemmas = parts_of_speech(head)
    if "VERB" in lemmas and "NOUN" not in lemmas and toks[0] not in {"has", "have", "had"}:
        return "verb"
    return "noun"


def profile_of(label: str, *, key: str | None = None, phrases: Mapping[str, bool] | None = None) -> RelationProfile:
    """The profile a relation's label (or, when the label is only its key or an opaque id, the key's words) gives,
    before the KG's data are read (value kind, single-valued) and without declarations."""
    text = label
    if key is not None and (not label or label == key or label == str(key).replace("_", " ")):
        text = key_to_label(key)
    words = content_words(text)
    concepts: set[str] = set()
    for w in words:
        concepts |= related(w)
    for phrase in phrases or {}:
        for w in content_words(phrase):
            concepts |= forms(w)
    converse: set[str] = set()
    for c in list(concepts):
        for other in CONVERSES.get(c, ()):
            converse |= related(other)
    converse -= concepts
    return RelationProfile(label=text, words=words, concepts=frozenset(concepts), converse=frozenset(converse),
                           kind=_label_kind(text), symmetric=bool(set(words) & SYMMETRIC_CONCEPTS),
                           phrases=dict(phrases or {}))


#: Head words of relations that place one thing inside another ("located in", "situated in", "part of", "contains").
CONTAINMENT_HEADS = frozenset({"locate", "situate", "contain", "include", "part"})
#: Nouns of the places that hold others: a relation labelled only with them ("country", "continent", "city")
#: places its head inside its tail; "country of citizenship" or "place of birth" does not.
PLACE_NOUNS = frozenset({"country", "continent", "region", "state", "province", "county", "city", "town", "district",
                         "territory", "municipality", "island"})
#: Prepositions that say beside, not inside ("located on river", "flows through", "near").
_BESIDE = frozenset({"on", "at", "near", "along", "through", "beside", "across", "next"})


def containment(profile: RelationProfile) -> str | None:
    """How a relation places one thing inside another, read from its label's own words (not their synonyms):
    ``"inward"`` when its head lies in its tail ("located in", "located in the administrative territorial entity",
    "part of", "country", "continent"), ``"outward"`` when its head holds its tail ("contains", "includes"), None
    otherwise ("place of birth", "country of citizenship", "located on river", "member of") or when its values are
    dates or numbers."""
    if profile.value != "entity" or not profile.words or set(profile.label.lower().split()) & _BESIDE:
        return None
    head = forms(profile.words[0])
    if head & CONTAINMENT_HEADS:
        return "outward" if profile.kind != "passive" and head & {"contain", "include"} else "inward"
    if all(forms(w) & PLACE_NOUNS for w in profile.words):
        return "inward"
    return None


def _verbal(profile: RelationProfile) -> bool:
    """Whether a label opens with a verb ("born in", "plays for", "died in", "located in") rather than a noun
    ("capital of", "member of", "part of")."""
    toks = [t for t in profile.label.lower().split() if t not in _BE]
    if not toks:
        return False
    first = toks[0]
    pos = parts_of_speech(first)
    return participle(first) or ("VERB" in pos and first.endswith(("s", "ed")) and not first.endswith("ss"))


#: How many containment triples a coarser place may lie away from a thing and still hold it (church -> town ->
#: country): the claim checker's coarser values, KG-FPQ's false premises and Drowzee's negations read it alike.
CONTAINMENT_HOPS = 3


def containment_relations(con: Any) -> dict[int, str]:
    """The containment relations of the KG whose tables ``con`` reads unqualified, by id, each with its way
    (:func:`containment`: ``inward`` for "located in", "country", "part of"; ``outward`` for "contains")."""
    from kgprobe.sql import load_sql

    rows = con.execute(load_sql("kg/relation_labels")).fetchall()
    return {int(rid): way for rid, key, label in rows
            if (way := containment(profile_of(str(label), key=str(key)))) is not None}


def compatibility(phrase_words: Iterable[str], profile: RelationProfile, *, general: bool = True) -> float | None:
    """The share of a phrase's content words that state ``profile``'s relation (its word forms, derivations and
    synonyms, or their converses; with ``general``, also a general kinship word that covers it: "related to" for a
    parent relation); None for a phrase with no content word ("is", "is from", "'s", "in"), which states no
    relation of its own."""
    ws = [w for w in phrase_words if w not in FUNCTION_WORDS]
    if not ws:
        return None
    both = profile.concepts | profile.converse
    hit = sum(bool((forms(w) | (covered(w) if general else frozenset())) & both) for w in ws)
    return hit / len(ws)


def reads_both_ways(phrase_words: Iterable[str], profile: RelationProfile) -> bool:
    """Whether a phrase states ``profile``'s relation only by general kinship words that read the same both ways
    ("X and Y are related", "X is a relative of Y"): then either end may be the triple's head."""
    stating = [w for w in phrase_words if w not in FUNCTION_WORDS
               and (forms(w) | covered(w)) & (profile.concepts | profile.converse)]
    return bool(stating) and all(not forms(w) & (profile.concepts | profile.converse)
                                 and forms(w) & SYMMETRIC_HYPERNYMS for w in stating)


def direction(phrase: str, profile: RelationProfile) -> str | None:
    """Which way a claim's relation phrase reads ``profile``'s relation: ``"fwd"`` (the claim's subject is the
    triple's head), ``"rev"`` (its tail), or None when the phrase does not say ("is", "and").

    "X is the director of Y" and "X directed Y" make X the tail of a ``director`` relation; "X was directed by Y"
    and "X's director is Y" its head; for a label ending in a preposition ("capital of", "born in") the phrase's
    own order is the triple's; a converse word ("son of" for ``father``) turns the answer around."""
    toks = [t for t in phrase.lower().replace("’", "'").replace("'s", " s").split() if t]
    toks = [t.strip(".,;:!?\"()") for t in toks]
    toks = [t for t in toks if t]
    if tuple(t for t in toks if t not in _BE) == tuple(profile.label.lower().split()):
        return "fwd"  # the label itself between the two ends: "Marie Curie child Irène"
    for i, w in enumerate(toks):
        if w in FUNCTION_WORDS and w != "s":
            continue
        fw = forms(w)
        if not fw & (profile.concepts | profile.converse) and fw & SYMMETRIC_HYPERNYMS:
            continue  # "related to": either way
        fw = fw | covered(w)  # "a descendant of" reads as "a child of"
        same = bool(fw & profile.concepts)
        conv = not same and bool(fw & profile.converse)
        if not (same or conv):
            continue
        prev = toks[i - 1] if i else ""
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        before = set(toks[:i])
        if nxt == "by" or (bool(before & _BE) and participle(w) and nxt != "of"):
            d = "rev" if profile.kind == "verb" else "fwd"              # passive: the subject is the patient
            if conv and forms(w) & {"locate", "situate", "base", "house", "lie"}:
                # "X is located in Y" for "Y contains X" (or "X contained by Y"): the subject is what is inside
                return "rev" if profile.kind == "verb" else "fwd"
        elif before & _POSSESS and not (prev in _BE and nxt == "of"):
            # X's director is Y (Y directed X); X's capital is Y (Y capital of X); but a label that opens with a verb
            # names its tail with a noun: X's birthplace is Y (X born in Y), X's team is Y (X plays for Y)
            d = ("fwd" if _verbal(profile) else "rev") if profile.kind == "prep" else \
                ("rev" if profile.kind == "verb" else "fwd")
        elif nxt == "of" or prev in {"the", "a", "an"} or prev in _BE:
            d = "fwd" if profile.kind in {"prep", "verb"} else "rev"    # X is the director of Y
        else:
            d = "fwd" if profile.kind in {"prep", "verb"} else "rev"    # X directed Y
        if conv:
            d = "fwd" if d == "rev" else "rev"
        return d
    return None


#: Of :data:`SINGLE_VALUED_CONCEPTS`, those that stay single-valued for a relation between two entities (a place of
#: birth, a father), a thing's type (a spectral type), a work's performer and a person's nationality (RULES.md's
#: labellers read the last two as one per subject); a founder, a publisher or a release venue may be several.
_ENTITY_SINGLE = frozenset({"bear", "birth", "born", "die", "death", "father", "mother", "type", "perform", "performer",
                            "nationality", "citizen", "citizenship"})


def most_values(profile: RelationProfile) -> int | None:
    """How many values a relation between entities can have by its label's own words, when that is a small bound
    short of one: a person's parents are two (a father and a mother each one, :func:`by_meaning`). None otherwise."""
    if profile.value == "entity" and any("parent" in forms(w) for w in profile.words) \
            and not any(forms(w) & _ENTITY_SINGLE for w in profile.words):
        return 2
    return None


def by_meaning(profile: RelationProfile, *, values: bool = True) -> bool:
    """Whether a relation's own label words (not its synonyms) name something single-valued by meaning: for a
    relation of values (``values``), a birth date, a publication date, a code; for one between entities, a place of
    birth or death, a father, a mother, a type, a performer, a nationality."""
    concepts = SINGLE_VALUED_CONCEPTS if values else _ENTITY_SINGLE
    return any(forms(w) & concepts for w in profile.words)


def phrase_file(profiles: Mapping[Any, RelationProfile], keys: Mapping[Any, str]) -> str:
    """A reviewable YAML document of every relation's phrase set, value kind and single-valued verdict, keyed by
    relation key; :func:`read_phrase_file` reads a user's edits back."""
    import yaml

    doc: dict[str, Any] = {}
    for rid, p in sorted(profiles.items(), key=lambda kv: str(keys.get(kv[0], kv[0]))):
        entry: dict[str, Any] = {
            "label": p.label,
            "words": sorted({f for w in p.words for f in forms(w)}),
            "synonyms": sorted(p.concepts - {f for w in p.words for f in forms(w)}),
            "reads_as": p.kind, "value": p.value,
            "single_valued": p.single_valued,
            "evidence": f"{p.share:.2f} of {p.subjects} subjects have one object" + (" (declared)" if p.declared else ""),
        }
        if p.symmetric:
            entry["symmetric"] = True
        if p.phrases:
            entry["phrases"] = dict(p.phrases)
        doc[str(keys.get(rid, rid))] = entry
    head = ("# How the claim checker reads each relation of this KG. Edit and keep: `phrases` (phrase: reversed),\n"
            "# `single_valued` (true / false; a wrong value of a single-valued relation is contradicted),\n"
            "# `symmetric`. `words` and `synonyms` are derived from the label and shown for review.\n")
    return head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110)


def read_phrase_file(path: str | Path) -> dict[str, dict[str, Any]]:
    """A phrase file's declarations by relation key: ``phrases`` (phrase -> reversed), ``single_valued``,
    ``symmetric`` (each only when given). Raises :class:`kgprobe.errors.ConfigError` naming the file and key."""
    from kgprobe.errors import ConfigError
    from kgprobe.yaml_io import load_yaml

    path = Path(path)
    try:
        doc = load_yaml(path.read_text(encoding="utf-8"), what=str(path)) or {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the relation phrase file ({exc})") from exc
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: a relation phrase file is a mapping of relation key -> settings")
    out: dict[str, dict[str, Any]] = {}
    for key, entry in doc.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: {key}: expected a mapping (label, phrases, single_valued, ...)")
        got: dict[str, Any] = {}
        phrases = entry.get("phrases") or {}
        if isinstance(phrases, list):
            phrases = {str(p): False for p in phrases}
        if not isinstance(phrases, dict):
            raise ConfigError(f"{path}: {key}.phrases: expected phrase: reversed (true/false) pairs or a list")
        got["phrases"] = {str(p): bool(v) for p, v in phrases.items()}
        for flag in ("single_valued", "symmetric"):
            if flag in entry:
                if not isinstance(entry[flag], bool):
                    raise ConfigError(f"{path}: {key}.{flag}: expected true or false, got {entry[flag]!r}")
                got[flag] = entry[flag]
        out[str(key)] = got
    return out
