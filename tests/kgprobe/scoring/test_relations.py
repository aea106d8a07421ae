"""What the claim checker knows about a relation and a value, read from labels and data: word forms, derivations
and synonyms, label readings, typed literals, and the reviewable phrase file a user edits."""

from __future__ import annotations

import pytest

from kgprobe.errors import ConfigError
from kgprobe.scoring.claims import CONTRADICTED, NOT_IN_KG, SUPPORTED, Claim, KGFacts, check_claim, check_fact
from kgprobe.scoring.lexicon import key_to_label
from kgprobe.scoring.literals import agree, parse_literal
from kgprobe.scoring.relations import compatibility, direction, profile_of, read_phrase_file


@pytest.mark.parametrize("key,label", [
    ("/film/film/directed_by", "directed by"),
    ("wasBornIn", "was born in"),
    ("isMarriedTo", "is married to"),
    ("hasChild", "has child"),
    ("http://dbpedia.org/ontology/birthPlace", "birth place"),
    ("/location/location/containedby", "contained by"),
    ("/people/person/places_lived./people/place_lived/location", "places lived location"),
    ("/people/person/spouse_s./people/marriage/spouse", "spouse"),
    ("P57", "p57"),
])  # fmt: skip
def test_a_key_gives_the_words_of_a_relation_without_a_label(key, label):
    assert key_to_label(key) == label


@pytest.mark.parametrize("phrase,label,score", [
    (("starred",), "cast member", 1.0),
    (("directed",), "director", 1.0),
    (("released",), "publication date", 1.0),
    (("born",), "place of birth", 1.0),
    (("produced",), "director", 0.0),
    (("captained",), "member of sports team", 0.0),
    (("sang",), "performer", 1.0),
    (("son",), "father", 1.0),  # a converse: "X is the son of Y" states father(X) = Y
])  # fmt: skip
def test_phrase_compatibility_reads_word_forms_and_synonyms(phrase, label, score):
    assert compatibility(phrase, profile_of(label)) == score


@pytest.mark.parametrize("phrase,label,way", [
    ("directed", "director", "rev"),             # X directed Y: X is the director of the film Y
    ("was directed by", "director", "fwd"),
    ("is the director of", "director", "rev"),
    ("'s director is", "director", "fwd"),
    ("was born in", "place of birth", "fwd"),
    ("is the son of", "father", "fwd"),          # X is the son of Y: father(X) = Y
    ("is the father of", "father", "rev"),
    ("is located in", "contains", "rev"),        # X is located in Y: Y contains X
    ("is located in", "contained by", "fwd"),
    ("is preceded by", "is followed by", "rev"),
])  # fmt: skip
def test_direction_of_a_phrase(phrase, label, way):
    assert direction(phrase, profile_of(label)) == way


@pytest.mark.parametrize("claim,kg,agrees", [
    ("December 2009", "2009-12-18", True), ("2009", "2009-12-18", True), ("August 2007", "September, 2007", False),
    ("the 1990s", "1997", True), ("753 BC", "-0753-04-21", True), ("27 BC", "-0028", False),
    ("approximately 2.3 million employees", "2300000", True), ("1,000,000", "1,034,000", True),
    ("23", "7", False), ("1.8", "1.83", True), ("published in September", "September, 1997", None),
])  # fmt: skip
def test_values_agree_at_their_common_granularity(claim, kg, agrees):
    c, k = parse_literal(claim.replace("published in ", "")), parse_literal(kg)
    assert c is not None and k is not None
    assert agree(c, k) is agrees if agrees is not None else agree(c, k) is True


def test_a_value_in_another_unit_system_gets_no_verdict():
    assert agree(parse_literal("29,029 feet"), parse_literal("8848")) is None
    assert parse_literal("Avatar") is None and parse_literal("Apollo 11 mission") is None


def test_evaluative_claims_are_not_in_the_kg():
    kg = KGFacts.from_triples([("Stevenson", "author_of", "Treasure_Island")] +
                              [(f"w{i}", "author_of", f"b{i}") for i in range(6)],
                              relation_labels={"author_of": "author of"},
                              entity_labels={"Stevenson": "Robert Louis Stevenson", "Treasure_Island": "Treasure Island"})
    assert check_fact("Robert Louis Stevenson wrote Treasure Island.", kg).label == SUPPORTED
    v = check_claim(Claim("Robert Louis Stevenson", "is best known for", "Treasure Island"), kg)
    assert (v.label, v.reason) == (NOT_IN_KG, "evaluative")


def test_phrase_file_round_trip_and_declarations(tmp_path):
    triples = [(f"film{i}", "star", f"actor{i}") for i in range(6)] + [("film0", "year", "2009")]
    kg = KGFacts.from_triples(triples, relation_labels={"star": "cast member", "year": "publication date"})
    text = kg.relation_file()
    assert "star:" in text and "label: cast member" in text and "single_valued: true" in text  # 6 of 6: one star
    path = tmp_path / "relations.yaml"
    path.write_text(text.replace("single_valued: true", "single_valued: false", 1)
                    + "\nyear:\n  phrases: {hit cinemas in: false}\n", encoding="utf-8")
    decl = read_phrase_file(path)
    assert decl["star"]["single_valued"] is False and decl["year"]["phrases"] == {"hit cinemas in": False}
    edited = kg.with_relation_settings(decl)
    # the data alone make one star per film look single-valued; the user's declaration says it is not
    assert check_claim(Claim("film0", "stars", "actor3"), kg).label == CONTRADICTED
    assert check_claim(Claim("film0", "stars", "actor3"), edited).label == NOT_IN_KG
    assert check_claim(Claim("film0", "hit cinemas in", "2009"), edited).label == SUPPORTED
    path.write_text("star: [not, a, mapping]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"relations.yaml: star: expected a mapping"):
        read_phrase_file(path)
