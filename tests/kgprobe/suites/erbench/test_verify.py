"""Answer reading, rationale matching (one set of hand-written cases per entity-resolution heuristic) and the
measures of the contract API."""

from __future__ import annotations

import math

import pytest

from kgprobe.suites.erbench import BinaryAnswer, binary_metrics, knows_entity
from kgprobe.suites.erbench.verify import (
    measures,
    rationale_matches,
    read_binary,
    read_choice,
    read_option,
    value_mentioned,
)

HEURISTICS = {
    "case": [("Avatar", "the film AVATAR (2009)", {}, True), ("Avatar", "the film Avatars", {}, False)],
    "diacritics": [("Andrés Iniesta", "Andres Iniesta played", {}, True), ("Björk", "starring Bjork.", {}, True),
                   ("Björk", "starring Bjorn.", {}, False)],
    "punctuation": [("Spider-Man", "It is Spider Man.", {}, True), ("Spider-Man", "SpiderMan 2", {}, True),
                    ("St. Louis", "held in St Louis", {}, True), ("Spider-Man", "Spider Woman", {}, False)],
    "quotes": [("Avatar", "the movie \u201cAvatar\u201d", {}, True), ("At World's End", "At Worlds End", {}, True),
               ("Schindler's List", "'Schindler\u2019s List'", {}, True)],
    "articles": [("The Supremes", "a song by Supremes", {}, True), ("Supremes", "by The Supremes", {}, True),
                 ("The Host", "The Hostage", {}, False), ("the the", "The song is by The The.", {}, True),
                 ("The The", "The song is by Depeche Mode.", {}, False)],
    "middle initials": [("Harry Potter", "Harry J. Potter wrote", {}, True), ("Peter R. Hunt", "by Peter Hunt", {}, True),
                        ("Harry Potter", "Harry Styles", {}, False)],
    "last, first": [("Collins, Wilkie", "written by Wilkie Collins", {}, True),
                    ("Collins, Wilkie and Connolly, Joy", "by Wilkie Collins and Joy Connolly", {}, True),
                    ("Hodge, Paul", "by Paul Smith", {}, False)],
    "last name": [("L. Messi", "Messi played for Barcelona", {"last_name": True}, True),
                  ("L. Messi", "Messi played for Barcelona", {}, False),
                  ("Martin Luther King Jr.", "King spoke", {"last_name": True}, True)],
    "club affixes": [("FC Barcelona", "he played for Barcelona", {"club": True}, True),
                     ("FC Barcelona", "he played for Barcelona", {}, False)],
    "number formats": [("2009.0", "released in 2009.", {}, True), ("1000000", "1,000,000 people", {}, True),
                       ("-34.7833328247", "latitude -34.783", {}, True), ("-34.7833328247", "latitude -34.79", {}, False),
                       ("10.0", "number 10 in 2019", {}, True), ("10.0", "number 100", {}, False),
                       ("1954", "born on 1954-08-16", {}, True), ("1954", "born in 19540", {}, False)],
    "lists": [("2012,1948,1908,", "in 1908, 1948 and 2012", {"as_list": True}, True),
              ("2012,1948,1908,", "in 1908 and 2012", {"as_list": True}, False)],
}


@pytest.mark.parametrize("heuristic,value,text,options,expected",
                         [(h, *case) for h, cases in HEURISTICS.items() for case in cases])
def test_each_heuristic_on_hand_written_cases(heuristic: str, value: str, text: str, options: dict, expected: bool) -> None:
    assert value_mentioned(value, text, **options, rationale_match="kgprobe") is expected, heuristic


def test_rationale_needs_every_inferred_value_and_honours_per_value_heuristics() -> None:
    text = "Kangin Lee played for Valencia CF, in Valencia."
    assert rationale_matches(text, ["Kangin Lee", "Valencia CF"])
    assert not rationale_matches(text, ["Kangin Lee", "Valencia CF", "1992"])
    assert rationale_matches("Lee wore 16", ["K. Lee"], match=[["last_name"]])
    assert not rationale_matches(None, ["x"])


@pytest.mark.parametrize("text,label", [
    ("Yes, the movie is Avatar.", "yes"), ("No, it is not true. The movie Parasite ...", "no"),
    ("Unsure. I don't know that movie.", "unsure"), ("I'm not sure about this.", "unsure"),
    ("**No**. There is no such movie.", "no"), ("The sky is blue.", "unknown"), ("", "unknown"), (None, "unknown"),
])
def test_read_binary(text, label) -> None:
    assert read_binary(text) == label


@pytest.mark.parametrize("text,n,label", [
    ("Option 2: It was produced in the country China.", 3, "2"), ("2. It was produced in China", 3, "2"),
    ("None of the above. All options are correct.", 3, "none"), ("Option 1 and Option 3 are false.", 3, "multiple"),
    ("Option 7: nonsense", 3, "unknown"), ("Yes.", 3, "unknown"), ("Unsure.", 3, "unsure"),
    ("The director is wrong.\nTherefore the answer is Option 1.", 3, "1"),
])
def test_read_option(text, n, label) -> None:
    assert read_option(text, n) == label


@pytest.mark.parametrize("text,known", [
    ("Yes.", True), ("Yes. Yes. Yes.", True), ("yes", True), ("Yes, but I am not sure about the director.", False),
    ("No.", False), ("Yes. No.", False), ("I don't know.", False), ("", False), ("Unsure.", False),
])
def test_knows_entity_only_yes_setting(text, known) -> None:
    assert knows_entity(text, rule="only_yes") is known


@pytest.mark.parametrize("text,known", [
    ("Yes.", True), ("Yes, but I am not sure about the director.", True), ("I'm not sure.", True),
    ("No.", False), ("Yes. No.", False), ("No, I don't know it.", False), ("", False),
])
def test_knows_entity_defaults_to_the_reading_of_tables_2_and_4(text, known) -> None:
    # the released scripts' reading: known unless the answer says the word "no"
    assert knows_entity(text) is known


def test_knows_entity_ignores_the_entity_names_of_the_prompt() -> None:
    text = "Yes, No Country for Old Men is directed by the Coen brothers."
    for rule in ("released", "only_yes"):
        assert not knows_entity(text, rule=rule)
        assert knows_entity(text, names=["No Country for Old Men"], rule=rule)


def test_binary_metrics_contract() -> None:
    answers = [
        BinaryAnswer(text='Yes. The movie is "Avatar".', expected="yes", inferred=("Avatar",)),   # A, R
        BinaryAnswer(text="Yes.", expected="yes", inferred=("Titanic",)),                       # A only
        BinaryAnswer(text="Yes, it is Jaws.", expected="no", inferred=("Jaws",)),                # R only
        BinaryAnswer(text="Unsure, I do not know.", expected="no", inferred=("Alien",)),         # missing
    ]
    m = binary_metrics(answers)
    assert (m.n, m.A, m.R, m.AR, m.M) == (4.0, 0.5, 0.5, 0.25, 0.25)
    assert m.H == pytest.approx(1 - m.A - m.M) and m.H == 0.25
    assert all(isinstance(getattr(m, f), float) for f in ("n", "A", "R", "AR", "M", "H"))
    empty = binary_metrics([])
    assert empty.n == 0.0 and math.isnan(empty.A)


# ------------------------------------------------------------------------------------------------ the paper's matcher
@pytest.mark.parametrize("value,text,options,expected", [
    # possessives: the apostrophe dropped must not glue the "s" to the name
    ("Avatar", "Avatar's director is James Cameron.", {}, True),
    ("L. Messi", "Messi's number was 10.", {"last_name": True}, True),
    # a boolean attribute's value is not mentioned by its negation
    ("animation", "Avatar is a non-animation movie.", {}, False),
    ("animation", "It is not animation.", {}, False),
    ("animation", "It is an animation movie.", {}, True),
    ("non-animation", "Avatar is a non-animation movie.", {}, True),
    ("animation", "No animation, but a live-action film.", {}, False),
    # the answer word "No." / "No," is not a negation of the next sentence's entity (released Gemini answers, Music
    # BN(N) 378 and 1067, and a Soccer-style one)
    ("sweet", 'No.\n\nSweet, a British glam rock band, released a song titled "Fox on the Run" in 1974.', {}, True),
    ("the beatles", 'No.\n\nThe Beatles released a song titled "Here, There and Everywhere" in 1966.', {}, True),
    ("L. Messi", "No, Messi wore number 10 for FC Barcelona.", {"last_name": True}, True),
    ("Avatar", "Not. Avatar was directed by James Cameron.", {}, True),
    ("Dr. No", "Yes. Dr. No. It was directed by Terence Young.", {}, True),
    # rounding keeps at least two decimals
    ("-34.7833", "latitude -34.8", {}, False),
    ("-34.7833", "latitude -34.78", {}, True),
    ("10.5", "number 10.5", {}, True),
    # "No.10" names the number 10
    ("10", "he wore No.10 at the club", {}, True),
    ("10", "he wore #10", {}, True),
    # middle names and the first name
    ("Harry Potter", "Harry James Potter", {}, True),
    ("Harry Potter", "Harry met Sally and Potter", {}, False),
    ("Cristiano Ronaldo", "Cristiano played for Juventus", {"first_name": True}, True),
    ("Cristiano Ronaldo", "Cristiano played for Juventus", {}, False),
    # aliases from the spec
    ("USA", "produced in the United States", {"aliases": ("United States", "American")}, True),
    ("USA", "produced in the United States", {}, False),
    ("FC Bayern München", "he played for Bayern Munich", {"aliases": ("Bayern Munich",)}, True),
    ("non-animation", "it is a live-action film", {"aliases": ("live-action", "not an animation")}, True),
    ("non-animation", "it is not an animation", {"aliases": ("live-action", "not an animation")}, True),
])
def test_paper_matcher_cases(value, text, options, expected) -> None:
    assert value_mentioned(value, text, **options, rationale_match="kgprobe") is expected


@pytest.mark.parametrize("text,question,label", [
    ("There is no such movie.", "Is there a movie, released in 2009, starring X where Y is the director?", "no"),
    ("There is no such movie.", "Is it true that there are no movies, released in 2009, starring X where Y is the "
                                "director?", "yes"),
])
def test_read_binary_reads_an_existence_denial_against_the_question(text, question, label) -> None:
    assert read_binary(text, question) == label


@pytest.mark.parametrize("text,n,label", [
    ("All of the options are correct.", 3, "none"),
    ("Option 1 is correct, but Option 2 is false.", 3, "2"),
    ("The inaccurate option is 2: the country is not China.", 3, "2"),
    ("The false statement is Option 3.", 3, "3"),
    ("Option 1 and Option 3 are false.", 3, "multiple"),
])
def test_read_option_released_answer_shapes(text, n, label) -> None:
    assert read_option(text, n) == label


def test_knows_entity_reads_i_know_as_known() -> None:
    assert knows_entity("I know the movie Avatar (2009), directed by James Cameron.", rule="only_yes")
    assert not knows_entity("I don't know the movie Avatar.", rule="only_yes")


# ------------------------------------------------------------------------------------------------ the MC contract
def test_choice_metrics_contract() -> None:
    from kgprobe.suites.erbench import ChoiceAnswer, choice_metrics

    answers = [
        ChoiceAnswer("Option 2: It was produced in the country China. It was produced in the United States.", 3, "2",
                     ("USA",), {"USA": ["United States"]}),                                   # A, R (alias)
        ChoiceAnswer("Option 2: It was produced in China.", 3, "2", ("USA",)),                 # A only
        ChoiceAnswer("Option 1: wrong director; the country is USA.", 3, "2", ("USA",)),        # R only
        ChoiceAnswer("I am not sure.", 3, "3", ("animation",)),                                 # missing
        ChoiceAnswer("The answer could be anything.", 3, "1", ("James Cameron",)),              # unreadable: wrong
        ChoiceAnswer("None of the above. All options are correct.", 3, "none"),                 # A, no R
    ]
    m = choice_metrics(answers)
    assert m.n == 6.0
    assert m.A == pytest.approx(3 / 6) and m.M == pytest.approx(1 / 6)
    assert m.H == pytest.approx(1 - m.A - m.M) and m.H == pytest.approx(2 / 6)
    # a None-of-the-above question counts 0 in R and AR, as the released error_analysis.py
    assert m.R == pytest.approx(2 / 6) and m.AR == pytest.approx(1 / 6)
    skipped = measures([read_choice(a, nota_rationale="skip") for a in answers])
    assert skipped.R == pytest.approx(2 / 5) and skipped.AR == pytest.approx(1 / 5)   # only questions with a false option
    assert skipped.A == m.A
    with pytest.raises(ValueError, match="nota_rationale"):
        read_choice(answers[0], nota_rationale="drop")
    assert math.isnan(choice_metrics([]).A)


@pytest.mark.parametrize("text,only_yes,released", [
    ("Yes, yes, yes.", True, True),
    ("I'm not sure about this book.", False, True),       # the released reader only looks for "no"
    ("No, I don't know it.", False, False),
    ("Yes. No Country for Old Men is by the Coens.", True, True),    # "No" of the title removed (names)
])
def test_knows_entity_rules(text, only_yes, released) -> None:
    names = ["No Country for Old Men"] if "Country" in text else []
    assert knows_entity(text, names=names, rule="only_yes") is only_yes
    assert knows_entity(text, names=names, rule="released") is released
    assert knows_entity(text, names=names) is released


@pytest.mark.parametrize("value,text,expected", [
    ("35.0352", "The actual latitude is approximately 35.0353.", True),   # agrees to half a hundredth
    ("108.706", "approximately 108.703", True),
    ("-34.7833", "latitude -34.79", False),
    ("19", "he wore 19 in 2019", True),
    ("19", "between 2019 and 2020", False),                              # not a substring of another number
])
def test_numbers_agree_to_two_decimals_and_never_inside_another_number(value, text, expected) -> None:
    assert value_mentioned(value, text, rationale_match="kgprobe") is expected


@pytest.mark.parametrize("text,n,label", [
    ('The wrong option regarding the song "Colder Weather" (feat. Little Big Town) by the artist Zac Brown Band is '
     'Option 2: The song is categorized as pop/rock genre. Option 1 is right.', 2, "2"),
    ('The false option about the song "96 Tears" by ? & the Mysterians is Option 1: The song was released in 1987, '
     'not 1966 as Option 2 would suggest.', 2, "1"),
])
def test_read_option_verdict_past_a_period_in_the_question(text, n, label) -> None:
    assert read_option(text, n) == label


@pytest.mark.parametrize("text,label", [
    ("Yes/No: Yes\n\nExplanation: the book is ...", "yes"), ("Yes/No: Unsure\n\nI cannot confirm.", "unsure"),
    ("Yes/Unsure.\n\nAs an AI language model ...", "unsure"), ("Yes or no: No. There is none.", "no"),
])
def test_read_binary_answers_that_echo_the_format(text, label) -> None:
    assert read_binary(text) == label


@pytest.mark.parametrize("expected", ["2", " 2", "Option 2", "02"])
def test_choice_expected_spellings_of_an_option(expected) -> None:
    from kgprobe.suites.erbench import ChoiceAnswer, choice_metrics

    assert choice_metrics([ChoiceAnswer("Option 2: wrong.", 3, expected)]).A == 1.0


@pytest.mark.parametrize("expected", ["none", "None of the above", "NONE OF ABOVE"])
def test_choice_expected_none_of_the_above(expected) -> None:
    from kgprobe.suites.erbench import ChoiceAnswer, choice_metrics

    answer = ChoiceAnswer("None of the above. All options are correct.", 3, expected)
    m = choice_metrics([answer])
    assert m.A == 1.0 and m.R == 0.0 and m.AR == 0.0     # the released code counts its rationale 0
    assert math.isnan(measures([read_choice(answer, nota_rationale="skip")]).R)
