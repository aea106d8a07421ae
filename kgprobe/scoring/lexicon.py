"""English word knowledge for reading relation phrases, independent of any KG: word forms (a morphology library),
derivations (director <-> direct), synonym groups of relational vocabulary, converse concepts (son <-> father),
demonyms, and the label a relation key implies when a KG ships none.

Why a lexicon and not the KG's key names: a verdict must not change when a KG renames ``director`` to ``P57`` or
``directed_by``; what a phrase means is a fact of English, and what a relation means is read from its label. The
groups below are general English (the words people use for a relation in any domain), not one data set's phrasings;
a KG's own phrases are added in its reviewable phrase file (:mod:`kgprobe.scoring.relations`).

    >>> sorted(forms("directed"))[:2]
    ['direct', 'directed']
    >>> "star" in related("cast")
    True
"""

from __future__ import annotations

import re
from functools import lru_cache

import lemminflect

__all__ = [
    "CONVERSES",
    "COUNTRIES",
    "DEMONYMS",
    "EVALUATIVE",
    "FUNCTION_WORDS",
    "GENDERED_KIN",
    "KIN_HYPERNYMS",
    "MAKER_WORDS",
    "SAME_KIND_CONCEPTS",
    "SINGLE_VALUED_CONCEPTS",
    "SYMMETRIC_CONCEPTS",
    "SYMMETRIC_HYPERNYMS",
    "SYNONYM_GROUPS",
    "content_words",
    "covered",
    "forms",
    "key_to_label",
    "known",
    "participle",
    "parts_of_speech",
    "related",
]

#: Words with no relational content of their own: auxiliaries, determiners, pronouns, prepositions, conjunctions,
#: and adverbs of time or manner that do not change which relation a phrase states.
FUNCTION_WORDS = frozenset("""
a an the this that these those its his her their our your my s one ones some any each every
is was are were be been being am has have had having do does did done will would shall should can could may might must
also then later first originally famously currently previously formerly once still already now ever just only even
very well widely mainly mostly primarily notably best most more much many several both either
of in on at by to for from with into onto through after before under over about as than upon within without during
and or but nor so yet while which who whom whose what where when why how it he she they him them itself himself
herself themselves there here known titled entitled
""".split())

#: Words that make a claim evaluative ("best known for", "a prolific writer", "a key player"): no KG triple says
#: that, so such a claim is not in the KG whatever its relation.
EVALUATIVE = frozenset("""
best famous famously prolific greatest renowned celebrated iconic notable legendary key leading influential
important popular successful acclaimed finest greatest beloved
""".split())

#: Synonym groups of relational vocabulary (lemmas). A phrase word and a relation label word state the same relation
#: when their word forms fall in one group.
SYNONYM_GROUPS: tuple[frozenset[str], ...] = tuple(frozenset(g.split()) for g in """
direct director direction helm filmmaker
cast star act actor actress appear feature play role portray starring
produce producer production
write writer author authorship pen screenwriter screenplay script novelist coauthor co-author wrote penned
compose composer composition music score
perform performer sing singer record artist band vocalist musician sung cover release
publication publish release date premiere debut launch issue air
birth bear born native birthplace
death die pass dead decease perish victim kill
strike hit affect devastate ravage
summit climb ascend ascent ascender
subject story topic theme tell
bury burial inter grave rest entomb
spouse marry married marriage wife husband wed partner
child son daughter kid offspring
parent father mother dad mom sire
sibling brother sister
citizen citizenship nationality national passport
locate location situate lie site place territorial administrative base host hold venue
country nation locate situate
capital
headquarters headquarter base hq
member membership belong affiliate affiliation
team club squad side join sign transfer move represent play
number jersey shirt uniform wear kit
employ employer employee work hire
educate education study attend graduate alumnus school university college
teach teacher mentor tutor pupil disciple student train
award win receive prize honor honour recipient earn champion
nominate nomination nominee
genre style
language speak tongue
occupation profession job career
own owner ownership acquire
found founder establish inception start cofound co-found cofounder co-founder
develop developer design designer invent inventor build make create creator
manufacture manufacturer maker
platform available port support release play develop run
participant participate involve fight belligerent combatant force
discover discoverer describe identify propose introduce formulate devise conceive originate
gene genetic associate association mutation
specialty speciality field specialist expertise expert treat treatment
group belt family class orbit member
classify classification type category kind
symptom sign manifest manifestation characterize cause lead result present
diagnose diagnosis examination exam test detect
cause lead result
influence inspire
name eponym
part component
contain include comprise consist
border neighbor neighbour adjacent adjoin
flow run traverse cross
mouth empty drain discharge
religion faith religious
party political join member
induct induction inductee hall fame enshrine
live reside residence resident move relocate settle
league division compete
venue stadium ground home arena
coach manage manager trainer
elevation altitude height tall high
area size
population inhabitant resident
coordinate latitude longitude
code icao iata identifier designate
dissolve abolish defunct end fall collapse
length long
duration runtime minute
budget cost gross revenue
follow succeed successor sequel
precede predecessor prequel
base adapt adaptation
origin originate form
distribute distributor
label
shoot filming
sculpt sculptor
paint painter painting
architect
collection house hold keep display exhibit museum hang
depict portray show represent
commission
movement
currency money
lead leader president head govern rule ruler king queen monarch mayor chief ceo executive
position office serve play
instrument
sport
age old
""".strip().splitlines())

#: Concepts that state one relation read from either end: "X is the son of Y" states parent(X) = Y.
CONVERSES: dict[str, tuple[str, ...]] = {
    "child": ("parent",), "parent": ("child",), "student": ("teach",), "teach": ("student",), "pupil": ("teach",),
    "precede": ("follow",), "follow": ("precede",), "part": ("contain",), "contain": ("part", "locate"),
    "locate": ("contain",), "victim": ("die",)}

#: General kinship words and the kinship concepts each covers: a parent or child triple entails "X is related to
#: Y" and "Y is a descendant of X", never the other way round (a phrase word states a relation when the relation is
#: one the word covers; a relation labelled "relative" states no parent). Read one way only (:func:`covered`), and
#: never as a value of a single-valued relation: "X is related to Z" says nothing against X's father being Y.
KIN_HYPERNYMS: dict[str, frozenset[str]] = {
    **{w: frozenset({"child", "parent", "sibling"}) for w in ("relate", "relative", "kin", "kinship", "blood",
                                                                 "familial")},
    "descend": frozenset({"child"}), "descendant": frozenset({"child"}), "ancestor": frozenset({"parent"}),
}
#: Of :data:`KIN_HYPERNYMS`, the words that read the same both ways ("X and Y are related").
SYMMETRIC_HYPERNYMS = frozenset({"relate", "relative", "kin", "kinship", "blood", "familial"})

#: Verbs of making in general: "made / created / developed / built by" names whoever made a thing in any role (a
#: designer, a studio, a manufacturer), so such a phrase supports a designer or inventor triple but names no value
#: of it: "Pac-Man was created by Namco" is no wrong designer. A relation whose own label says it (a developer, a
#: creator) is stated whole by it.
MAKER_WORDS = frozenset({"make", "create", "develop", "build"})

#: Kinship words that add a gender to a kinship concept (father = male parent), with the concept they specify: a
#: denied "X is not the father of Y" contradicts only a triple that names that kinship by gender, since a parent
#: triple leaves open whether X is the father or the mother.
GENDERED_KIN: dict[str, str] = {
    "father": "parent", "mother": "parent", "dad": "parent", "mom": "parent", "son": "child", "daughter": "child",
    "brother": "sibling", "sister": "sibling", "husband": "spouse", "wife": "spouse"}

#: Concepts of relations single-valued by meaning (one birth date, one publication date, one shirt number at a time):
#: such a relation is single-valued when the KG has too few subjects to tell and none of them has two values.
SINGLE_VALUED_CONCEPTS = frozenset("""
bear birth born die death publish publication release premiere debut inception found father mother code icao iata
latitude longitude coordinate elevation altitude population area length duration runtime height jersey shirt
uniform age
""".split())

#: Concepts of relations between two things of one kind (two people, two places, two works): which end is which
#: only the phrase can tell.
SAME_KIND_CONCEPTS = frozenset("""
child son daughter kid offspring parent father mother dad mom sire sibling brother sister spouse marry married wife
husband partner teach teacher student pupil mentor influence inspire follow succeed successor sequel precede
predecessor prequel border neighbor neighbour part contain include locate capital relative cousin uncle aunt nephew
niece grandparent grandchild grandfather grandmother ancestor descendant
""".split())

#: Concepts whose relation reads the same both ways ("X married Y" states spouse(Y, X) too).
SYMMETRIC_CONCEPTS = frozenset({"spouse", "sibling", "border", "partner", "marry", "married"})

_IRREGULAR = {
    "birth": "bear", "born": "bear", "death": "die", "dead": "die", "marriage": "marry", "married": "marry",
    "publication": "publish", "burial": "bury", "membership": "member", "citizenship": "citizen",
    "authorship": "author", "ownership": "own", "residence": "reside", "descent": "descend", "succession": "succeed",
    "successor": "succeed", "predecessor": "precede", "inception": "found", "foundation": "found",
    "composition": "compose", "production": "produce", "direction": "direct", "participation": "participate",
    "education": "educate", "location": "locate", "association": "associate", "adaptation": "adapt",
    "nomination": "nominate", "creation": "create", "formation": "form", "employment": "employ",
    "discovery": "discover", "invention": "invent", "distribution": "distribute", "translation": "translate",
    "performance": "perform", "appearance": "appear", "acquisition": "acquire", "depiction": "depict",
    "occupation": "occupy", "wrote": "write", "written": "write", "sang": "sing", "sung": "sing", "bore": "bear",
    "starring": "star", "cast": "cast", "led": "lead", "won": "win", "held": "hold", "fought": "fight",
    "built": "build", "made": "make", "founded": "found", "found": "found", "spoke": "speak", "spoken": "speak",
    "taught": "teach", "drew": "draw", "drawn": "draw", "ran": "run", "began": "begin", "begun": "begin",
}

_AGENT = re.compile(r"(.{3,}?)(?:er|or|ist|ant|ent)$")
_NOMINAL = re.compile(r"(.{3,}?)(?:ation|ition|ion|ment|ance|ence|al)$")


@lru_cache(maxsize=65536)
def parts_of_speech(word: str) -> dict[str, tuple[str, ...]]:
    """The dictionary lemmas of ``word`` by part of speech (lemminflect's ``{"VERB": ("direct",), ...}``; empty for
    a word the dictionary does not hold). Read-only: the result is cached."""
    return lemminflect.getAllLemmas(word)


def _lemmas(word: str) -> set[str]:
    pos = parts_of_speech(word)
    return {lem.lower() for upos in ("VERB", "NOUN", "ADJ") for lem in pos.get(upos, ())}


def _is_verb(word: str) -> bool:
    return "VERB" in parts_of_speech(word)


@lru_cache(maxsize=65536)
def forms(word: str) -> frozenset[str]:
    """The base forms a word can stand for: itself, its lemmas (verb, noun, adjective), a verb it derives from
    (director -> direct, publication -> publish, birth -> bear), each lower case."""
    w = word.lower().strip("'’")
    if not w:
        return frozenset()
    out = {w} | _lemmas(w)
    for base in list(out):
        if base in _IRREGULAR:
            out.add(_IRREGULAR[base])
        for rx, tails in ((_AGENT, ("", "e")), (_NOMINAL, ("", "e", "ate"))):
            m = rx.fullmatch(base)
            if m:
                for tail in tails:
                    cand = m.group(1) + tail
                    if _is_verb(cand):
                        out.add(cand)
                        break
    if w.endswith("ing") and len(w) > 5:
        out |= _lemmas(w)
    return frozenset(out)


@lru_cache(maxsize=65536)
def participle(word: str) -> bool:
    """Whether ``word`` is a verb's past participle ("held", "born", "written", "directed")."""
    w = word.lower()
    for lemma in parts_of_speech(w).get("VERB", ()):
        infl = lemminflect.getAllInflections(lemma, upos="VERB")
        if w in infl.get("VBN", ()) or ("VBN" not in infl and w in infl.get("VBD", ())):
            return True
    return False


def known(word: str) -> bool:
    """Whether a word is in the relational vocabulary (some synonym group holds one of its forms)."""
    idx = _group_index()
    return any(f in idx for f in forms(word))


@lru_cache(maxsize=1)
def _group_index() -> dict[str, tuple[int, ...]]:
    idx: dict[str, list[int]] = {}
    for i, group in enumerate(SYNONYM_GROUPS):
        for w in group:
            idx.setdefault(w, []).append(i)
    return {k: tuple(v) for k, v in idx.items()}


@lru_cache(maxsize=65536)
def related(word: str) -> frozenset[str]:
    """Every base form that states the same relation as ``word``: its :func:`forms` and the members of each synonym
    group one of them is in."""
    base = forms(word)
    out = set(base)
    idx = _group_index()
    for f in base:
        for gi in idx.get(f, ()):
            out |= SYNONYM_GROUPS[gi]
    return frozenset(out)


def covered(word: str) -> frozenset[str]:
    """The kinship concepts a general kinship word covers (:data:`KIN_HYPERNYMS`): ``{"child", "parent",
    "sibling"}`` for "related", ``{"child"}`` for "descendant"; empty for every other word."""
    out: set[str] = set()
    for f in forms(word):
        out |= KIN_HYPERNYMS.get(f, frozenset())
    return frozenset(out)


_WORD = re.compile(r"[a-z][a-z'\-]*")


def content_words(text: str) -> tuple[str, ...]:
    """The words of a relation phrase that carry its meaning (lower case, function words and bare adverbs
    dropped), in order."""
    out = []
    for w in _WORD.findall(text.lower().replace("’", "'")):
        w = w.strip("'-")
        if w.endswith("'s"):
            w = w[:-2]
        if not w or w in FUNCTION_WORDS or len(w) < 2:
            continue
        if w.endswith("ly") and _only_adverb(w):
            continue
        out.append(w)
    return tuple(out)


def _only_adverb(word: str) -> bool:
    return set(parts_of_speech(word)) == {"ADV"}


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def key_to_label(key: str) -> str:
    """The words a relation key implies when the KG gives no label: the last path segment of an IRI or Freebase
    path (``/film/film/directed_by`` -> "directed by"), camelCase and snake_case split (``wasBornIn`` -> "was born
    in"); an opaque id (``P57``, ``r12``) gives itself."""
    k = str(key).strip().rstrip("/>").lstrip("<")
    if "./" in k:  # a Freebase path through a mediator: "/people/person/places_lived./people/place_lived/location"
        parts = k.split("./")
        first, last = key_to_label(parts[0]), key_to_label(parts[-1])
        first = re.sub(r"\s+s$", "", first)  # Freebase's plural marker: "spouse_s"
        words = list(dict.fromkeys(first.split() + last.split()))
        return " ".join(words)
    for sep in ("#", "/", ":"):
        if sep in k:
            tail = k.rsplit(sep, 1)[-1]
            if re.search(r"[A-Za-z]{2}", tail):
                k = tail
    k = k.split(".")[-1] if re.search(r"[A-Za-z]{2}", k.split(".")[-1]) else k
    k = _CAMEL.sub(" ", k).replace("_", " ").replace("-", " ")
    k = re.sub(r"\b(\w{3,}ed)(by|in|of|to)\b", r"\1 \2", k)  # Freebase's "containedby"
    return " ".join(k.split()).lower() or str(key)


#: Demonyms and adjectives of nationality -> the country's English name (general English, for "X is Belgian").
DEMONYMS: dict[str, str] = {
    d: c.replace("_", " ") for d, c in (entry.split(":") for entry in """
afghan:Afghanistan albanian:Albania algerian:Algeria american:United_States andorran:Andorra angolan:Angola
argentine:Argentina argentinian:Argentina armenian:Armenia australian:Australia austrian:Austria
azerbaijani:Azerbaijan bahraini:Bahrain bangladeshi:Bangladesh belarusian:Belarus belgian:Belgium beninese:Benin
bolivian:Bolivia bosnian:Bosnia_and_Herzegovina brazilian:Brazil british:United_Kingdom bulgarian:Bulgaria
burkinabe:Burkina_Faso cameroonian:Cameroon canadian:Canada chadian:Chad chilean:Chile chinese:China
colombian:Colombia congolese:Congo croatian:Croatia cuban:Cuba cypriot:Cyprus czech:Czech_Republic
danish:Denmark dominican:Dominican_Republic dutch:Netherlands ecuadorian:Ecuador egyptian:Egypt english:England
eritrean:Eritrea estonian:Estonia ethiopian:Ethiopia fijian:Fiji filipino:Philippines finnish:Finland
french:France gabonese:Gabon gambian:Gambia georgian:Georgia german:Germany ghanaian:Ghana greek:Greece
guatemalan:Guatemala guinean:Guinea haitian:Haiti honduran:Honduras hungarian:Hungary icelandic:Iceland
indian:India indonesian:Indonesia iranian:Iran iraqi:Iraq irish:Ireland israeli:Israel italian:Italy
ivorian:Ivory_Coast jamaican:Jamaica japanese:Japan jordanian:Jordan kazakh:Kazakhstan kenyan:Kenya
korean:South_Korea kosovan:Kosovo kuwaiti:Kuwait latvian:Latvia lebanese:Lebanon liberian:Liberia libyan:Libya
lithuanian:Lithuania luxembourgish:Luxembourg macedonian:North_Macedonia malagasy:Madagascar malaysian:Malaysia
malian:Mali maltese:Malta mexican:Mexico moldovan:Moldova mongolian:Mongolia montenegrin:Montenegro
moroccan:Morocco mozambican:Mozambique namibian:Namibia nepalese:Nepal zealander:New_Zealand
nicaraguan:Nicaragua nigerian:Nigeria nigerien:Niger norwegian:Norway pakistani:Pakistan palestinian:Palestine
panamanian:Panama paraguayan:Paraguay persian:Iran peruvian:Peru polish:Poland portuguese:Portugal qatari:Qatar
romanian:Romania russian:Russia rwandan:Rwanda saudi:Saudi_Arabia scottish:Scotland senegalese:Senegal
serbian:Serbia singaporean:Singapore slovak:Slovakia slovakian:Slovakia slovenian:Slovenia somali:Somalia
spanish:Spain sudanese:Sudan swedish:Sweden swiss:Switzerland syrian:Syria taiwanese:Taiwan tanzanian:Tanzania
thai:Thailand togolese:Togo tunisian:Tunisia turkish:Turkey ugandan:Uganda ukrainian:Ukraine uruguayan:Uruguay
uzbek:Uzbekistan venezuelan:Venezuela vietnamese:Vietnam welsh:Wales yemeni:Yemen zambian:Zambia
zimbabwean:Zimbabwe roman:Rome greek:Greece
""".split())
}

#: The countries the demonyms name (Rome, a city's "Roman", is none): one kind of place, whatever relations a KG
#: holds of each.
COUNTRIES: frozenset[str] = frozenset(c for c in DEMONYMS.values() if c != "Rome")
