"""Statement templates proposed from relation keys and labels: the rules by form, the Figure 9 prompt and the
reading of a model's reply, and the review rows."""

from __future__ import annotations

import pytest

from kgprobe.kg.verbalise import (
    figure9_prompt,
    parse_model_template,
    propose_template,
    propose_templates,
    propose_with_model,
    relation_phrase,
    render,
    review_rows,
)


@pytest.mark.parametrize(
    "key, label, template",
    [
        # Freebase paths: the last segment
        ("/people/person/place_of_birth", None, "The place of birth of {head} is {tail}."),
        ("/film/film/genre", "film film genre", "The genre of {head} is {tail}."),
        ("/location/location/contains", None, "{head} contains {tail}."),
        ("/influence/influence_node/influenced_by", None, "{head} was influenced by {tail}."),
        ("/location/administrative_division/first_level_division_of", None,
         "{head} is a first level division of {tail}."),
        ("/film/film/story_by", None, "{head} has a story by {tail}."),
        ("/base/locations/continents/countries_within", None, "{tail} is one of the countries within {head}."),
        ("/language/human_language/countries_spoken_in", None, "{head} is spoken in {tail}."),
        ("/people/ethnicity/languages_spoken", None, "{tail} is one of the languages spoken by {head}."),
        ("/people/ethnicity/people", None, "One of the people of {head} is {tail}."),
        ("/government/political_party/politicians_in_this_party", None,
         "{tail} is one of the politicians in the party {head}."),
        ("/music/genre/artists", None, "One of the artists of {head} is {tail}."),
        ("/base/americancomedy/celebrity_impressionist/celebrities_impersonated", None,
         "{tail} is one of the celebrities impersonated by {head}."),
        # compound (CVT) paths: the last meaningful segment, in its direction
        ("/base/schemastaging/person_extra/net_worth./measurement_unit/dated_money_value/currency", None,
         "{head} has a net worth whose currency is {tail}."),
        ("/film/film/release_date_s./film/film_regional_release_date/film_release_region", None,
         "{head} has a release date whose release region is {tail}."),
        ("/organization/organization_member/member_of./organization/organization_membership/organization", None,
         "{head} is a member of the organization {tail}."),
        ("/film/actor/film./film/performance/film", None, "The film of {head} is {tail}."),
        ("/award/award_winning_work/awards_won./award/award_honor/award", None,
         "{tail} is one of the awards won by {head}."),
        ("/award/award_category/winners./award/award_honor/award_winner", None, "One of the winners of {head} is {tail}."),
        ("/people/person/spouse_s./people/marriage/spouse", None, "The spouse of {head} is {tail}."),
        ("/location/location/adjoin_s./location/adjoining_relationship/adjoins", None, "{head} adjoins {tail}."),
        ("/film/film/other_crew./film/film_crew_gig/film_crew_role", None,
         "{head} has a crew gig whose crew role is {tail}."),
        ("/film/film/other_crew./film/film_crew_gig/crewmember", None, "{head} has a crew whose crewmember is {tail}."),
        ("/soccer/football_team/current_roster./soccer/football_roster_position/position", None,
         "{head} has a roster whose position is {tail}."),
        ("/education/educational_degree/people_with_this_degree./education/education/institution", None,
         "{head} has an education whose institution is {tail}."),
        # co-relations: the tail plays the head's role
        ("/award/award_nominee/award_nominations./award/award_nomination/award_nominee", None,
         "{head} shared an award nomination with {tail}."),
        ("/base/popstra/celebrity/dated./base/popstra/dated/participant", None, "{head} dated {tail}."),
        # a participle that names the intermediate node's verb: the head has that node, whichever side it is on
        ("/award/award_category/nominees./award/award_nomination/nominated_for", None,
         "{head} has an award nomination for {tail}."),
        # Wikidata labels by their part of speech
        ("P451", "unmarried partner", "The unmarried partner of {head} is {tail}."),
        ("P1412", "languages spoken, written, or signed",
         "{tail} is one of the languages spoken, written, or signed by {head}."),
        ("P102", "member of political party", "{head} is a member of the political party {tail}."),
        ("P131", "located in the administrative territorial entity",
         "{head} is located in the administrative territorial entity {tail}."),
        ("P530", "diplomatic relation", "{head} has diplomatic relations with {tail}."),
        ("P780", "symptoms", "One of the symptoms of {head} is {tail}."),
        ("P2283", "uses", "{head} uses {tail}."),
        ("dealsWith", None, "{head} deals with {tail}."),
        # opaque ids read their label; DBpedia and snake_case keys their words
        ("P19", "place of birth", "The place of birth of {head} is {tail}."),
        ("http://dbpedia.org/ontology/birthPlace", None, "The birth place of {head} is {tail}."),
        ("dbo:deathPlace", None, "The death place of {head} is {tail}."),
        ("born_in", "born in", "{head} was born in {tail}."),
        ("has_part", None, "The part of {head} is {tail}."),
        # YAGO's keys: their own "is" / "was", a past form read active, "has <noun>" as the noun
        ("wasBornIn", None, "{head} was born in {tail}."),
        ("actedIn", None, "{head} acted in {tail}."),
        ("wroteMusicFor", None, "{head} wrote music for {tail}."),
        ("created", None, "{head} created {tail}."),
        ("hasChild", None, "The child of {head} is {tail}."),
        ("hasWonPrize", None, "{head} has won the prize {tail}."),
        ("isCitizenOf", None, "{head} is a citizen of {tail}."),
        ("P138", "named after", "{head} was named after {tail}."),
        ("award_received", None, "{head} received the award {tail}."),
    ],
)
def test_rules_by_form(key: str, label: str | None, template: str) -> None:
    assert propose_template(key, label) == template


@pytest.mark.parametrize("key, label", [("P19", None), ("Q42", ""), ("", None), ("12345", None)])
def test_nothing_readable_gives_none(key: str, label: str | None) -> None:
    assert propose_template(key, label) is None


def test_relation_phrase_of_a_compound_key() -> None:
    assert relation_phrase("/a/b/net_worth./c/d/currency") == (["currency"], ["net", "worth"])
    assert relation_phrase("/a/b/film./c/d/film") == (["film"], [])


def test_every_proposal_holds_head_and_tail_once() -> None:
    keys = ["/people/person/place_of_birth", "/a/b/c./d/e/f", "born_in", "contains", "x_of", "made_by", "P1"]
    out = propose_templates([(k, None) for k in keys])
    assert set(out) == set(keys) and out["P1"].template is None
    for p in out.values():
        assert p.method == "rules"
        if p.template is not None:
            assert p.template.count("{head}") == 1 and p.template.count("{tail}") == 1


def test_figure9_prompt_and_the_model_reply() -> None:
    prompt = figure9_prompt("place of birth", [("Ada Lovelace", "London"), ("Alan Turing", "Maida Vale")])
    assert prompt.startswith("You are given a few samples of a relation in the format of <head, relation, tail>.")
    assert '"{head} was educated at {tail}."' in prompt and "<Ada Lovelace, place of birth, London>" in prompt
    assert prompt.rstrip().endswith("<Alan Turing, place of birth, Maida Vale>")
    assert parse_model_template('statement template: "{head} was born in {tail}."') == "{head} was born in {tail}."
    assert parse_model_template("Sure!\n{head} was born in {tail}") == "{head} was born in {tail}."
    assert parse_model_template("The template is {head} {head}.") is None
    assert parse_model_template(None) is None


def test_propose_with_model_keeps_the_rules_where_the_reply_is_unusable() -> None:
    seen = []

    def generate(prompts):
        seen.extend(prompts)
        return ['"{head} was born in {tail}."', "I cannot help with that."]

    out = propose_with_model([("/people/person/place_of_birth", None), ("/film/film/genre", None)],
                             {"/people/person/place_of_birth": [("Ada Lovelace", "London")]}, generate)
    assert len(seen) == 2 and "<Ada Lovelace, /people/person/place_of_birth, London>" in seen[0]
    assert out["/people/person/place_of_birth"].template == "{head} was born in {tail}."
    assert out["/people/person/place_of_birth"].method == "model"
    assert (out["/film/film/genre"].template, out["/film/film/genre"].method) == (
        "The genre of {head} is {tail}.", "model_rejected")
    with pytest.raises(ValueError, match="replies"):
        propose_with_model([("a", None)], {}, lambda prompts: [])


def test_render_and_review_rows() -> None:
    assert render("{tail} is the capital of {head}.", "France", "Paris {x}") == "Paris {x} is the capital of France."
    rows = review_rows({"r": "The r of {head} is {tail}."}, {"r": [("A", "B"), ("C", "D"), ("E", "F")]},
                       sources={"r": "proposed"})
    assert rows == [{"relation_key": "r", "source": "proposed", "template": "The r of {head} is {tail}.",
                     "examples": "The r of A is B. | The r of C is D."}]


def test_multi_valued_relations_read_one_of_many() -> None:
    import duckdb

    from kgprobe.kg.verbalise import multi_valued

    con = duckdb.connect()
    con.execute("CREATE TABLE relations (id BIGINT, key VARCHAR, label VARCHAR)")
    con.execute("CREATE TABLE triples (head BIGINT, relation BIGINT, tail BIGINT)")
    con.execute("INSERT INTO relations VALUES (0, '/film/actor/film', NULL), (1, 'P19', 'place of birth')")
    # actors with several films (2 of 3 heads); one place of birth each but for 1 of 20 heads (5%)
    con.execute("INSERT INTO triples VALUES (1, 0, 10), (1, 0, 11), (2, 0, 10), (2, 0, 12), (3, 0, 10)")
    con.executemany("INSERT INTO triples VALUES (?, 1, ?)", [(h, 100 + h) for h in range(20)])
    con.execute("INSERT INTO triples VALUES (0, 1, 99)")
    assert multi_valued(con) == frozenset({"/film/actor/film"})
    assert multi_valued(con, share=0.06) == frozenset({"/film/actor/film"})
    assert multi_valued(con, share=0.05) == frozenset({"/film/actor/film", "P19"})
    assert propose_template("/film/actor/film", many=True) == "One of the films of {head} is {tail}."
    assert propose_template("P19", "place of birth", many=True) == "One of the places of birth of {head} is {tail}."
    assert propose_template("P40", "child", many=True) == "One of the children of {head} is {tail}."
    # a template that does not name the tail as an attribute keeps its form
    assert propose_template("/location/location/contains", many=True) == "{head} contains {tail}."
    assert propose_templates([("/film/actor/film", None)], many={"/film/actor/film"})[
        "/film/actor/film"].template.startswith("One of the films")
