"""Tests for kgprobe.answers: one case per documented rule, adversarial texts, and real SmolLM2 answers.

``data/smollm2_yes_no.tsv`` holds every distinct (question, answer) pair SmolLM2-135M-Instruct gave to KG-FPQ
yes/no prompts, labelled by hand as a careful reader would, not by the parser. Columns, tab-separated with a header:
``text`` (the raw answer, JSON-encoded so line breaks and tabs survive; decode with ``json.loads``), ``label``
(yes / no / unknown), ``note`` (why, for labels that are not obvious), ``question`` (the question of the prompt).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgprobe.answers import (
    TRUE_FALSE_LABELS,
    YES_NO_LABELS,
    explain_true_false,
    explain_yes_no,
    parse_true_false,
    parse_yes_no,
)
from kgprobe.backends.reference import ANSWER_TEXTS

FIXTURE = Path(__file__).parent / "data" / "smollm2_yes_no.tsv"
RULES = ("empty", "both", "abstain", "answer_word", "answer_phrase", "restatement", "negated_restatement", "no_answer")


def _fixture() -> list[dict[str, str]]:
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]
    for row in rows:
        row["text"] = json.loads(row["text"])
    return rows


# One or more cases per rule: (text, question, label, rule).
RULE_CASES = [
    (None, None, "unknown", "empty"),
    ("", None, "unknown", "empty"),
    ("  \n\t ", None, "unknown", "empty"),
    ("Yes or No", None, "unknown", "both"),
    ("Yes/No", None, "unknown", "both"),
    ("Yes and no.", None, "unknown", "both"),
    ("I don't know", None, "unknown", "abstain"),
    ("I'm not sure, but yes", None, "unknown", "abstain"),
    ("Probably not.", None, "unknown", "abstain"),
    ("Yes.", None, "yes", "answer_word"),
    ("No", None, "no", "answer_word"),
    ("Absolutely not", None, "no", "answer_word"),
    ("That's correct.", None, "yes", "answer_phrase"),
    ("I don't think so.", None, "no", "answer_phrase"),
    ("Titian died in Venice.", "Did Titian die in Venice?", "yes", "restatement"),
    ("Titian did not die in Venice.", "Did Titian die in Venice?", "no", "negated_restatement"),
    ("The answer is", None, "unknown", "no_answer"),
    ("Titian died in Venice.", None, "unknown", "no_answer"),
]


@pytest.mark.parametrize(("text", "question", "label", "rule"), RULE_CASES)
def test_each_rule(text, question, label, rule):
    assert explain_yes_no(text, question=question) == (label, rule)


def test_every_documented_rule_has_a_case_and_is_in_the_docstring():
    import kgprobe.answers as answers

    assert {rule for *_, rule in RULE_CASES} == set(RULES)
    doc = answers.__doc__ or ""
    positions = [doc.index(f"``{rule}``") for rule in RULES]
    assert positions == sorted(positions), "rules are documented in the order they apply"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # the brief's examples
        ("Yes.", "yes"),
        ("yes, it is true that Venice is in Italy", "yes"),
        ("**No**", "no"),
        ("No, he did not. Yes, he was born there.", "no"),
        ("Correct.", "yes"),
        ("Indeed", "yes"),
        ("Absolutely!", "yes"),
        ("Nope", "no"),
        ("Incorrect", "no"),
        ("I don't know", "unknown"),
        ("unsure", "unknown"),
        ("It is not possible to say", "unknown"),
        ("This cannot be determined from the question.", "unknown"),
        ("cannot be determined", "unknown"),
        ("There is not enough information to answer.", "unknown"),
        ("", "unknown"),
        ("   ", "unknown"),
        (None, "unknown"),
        ("The answer is", "unknown"),
        # markdown and prefixes do not hide the answer
        ("Answer: Yes", "yes"),
        ("A: No.", "no"),
        ("**Answer:** __No__", "no"),
        ("## Yes\nTitian died in Venice.", "yes"),
        ("> No, it is not.", "no"),
        ("`Yes`", "yes"),
        ('"No."', "no"),
        ("- Yes", "yes"),
        ("...No", "no"),
        ("The answer is: **No**", "no"),
        ("The answer is yes.", "yes"),
        ("Final answer: no", "no"),
        ("Question: Did Titian die in Venice? Answer: Yes", "yes"),
        ("Did Titian die in Venice? No.", "no"),
        ("Sorry, no.", "no"),
        ("Well, yes.", "yes"),
        ("Based on the facts above, no.", "no"),
        ("NO.", "no"),
        ("No\nTitian died in Venice.", "no"),
        ("No it isn't.", "no"),
        ("Of course not.", "no"),
        ("Not at all.", "no"),
        ("Nope, never.", "no"),
        ("Never.", "no"),
        ("That is not true.", "no"),
        ("The statement is false.", "no"),
        ("Of course!", "yes"),
        ("Certainly yes.", "yes"),
        ("I think so.", "yes"),
        ("I'm afraid not.", "no"),
        ("The answer is not factual.", "no"),
        # adversarial: an answer word only counts as an answer
        ("Nothing suggests that Titian died in Venice.", "unknown"),
        ("Yesterday Titian died.", "unknown"),
        ("Know your history: Titian died in Venice.", "unknown"),
        ("Not sure", "unknown"),
        ("No information is available about this.", "unknown"),
        ("No evidence suggests he died there.", "unknown"),
        ("No one knows.", "unknown"),
        ("No-one knows where he died.", "unknown"),
        ("No Titian paintings survive in Venice.", "unknown"),
        ("There is no evidence that Titian died in Venice.", "unknown"),
        ("Absolutely no evidence supports it.", "unknown"),
        ("Certainly Titian died in Venice.", "unknown"),
        ("Correctly identifying the city is hard.", "unknown"),
        ("Truly a great painter.", "unknown"),
        ("False premise.", "unknown"),
        ("It is true that Titian never visited Rome.", "unknown"),
        ("Yes and no one disputes it.", "yes"),
        ("Nobody knows.", "unknown"),
        ("Maybe.", "unknown"),
        ("I'm sorry, but I cannot answer that.", "unknown"),
        ("As an AI language model, I cannot verify this.", "unknown"),
        ("Sure! Here is some information about Titian.", "unknown"),
        ("Correct?", "unknown"),
        ("Is it?", "unknown"),
        ("Titian", "unknown"),
        ("???", "unknown"),
    ],
)
def test_yes_no_examples(text, label):
    assert parse_yes_no(text) == label


@pytest.mark.parametrize(
    ("text", "question", "label"),
    [
        ('The original language of "Citizen Kane" is English.', "Is the original language of Citizen Kane English?",
         "yes"),
        ("The Bay of Bengal is indeed a part of the Rembrandt.", "Is the Bay of Bengal part of the Rembrandt?", "yes"),
        ("Martin Luther King Jr. was not a citizen of Raiding.", "Was Martin Luther King Jr. a citizen of Raiding?",
         "no"),
        ("Martin Luther King Jr. wasn't a citizen of Raiding.", "Was Martin Luther King Jr. a citizen of Raiding?",
         "no"),
        ("The Tagus flows through the city of Lisbon.", "Does the Tagus flow through the city of Lisbon?", "yes"),
        ("The Tagus doesn't flow through the city of Lisbon.", "Does the Tagus flow through the city of Lisbon?", "no"),
        ("Titian never died in Venice.", "Did Titian die in Venice?", "no"),
        ("Titian died in Venice in 1576.", "Did Titian die in Venice?", "yes"),
        ("Titian died in Venice, Italy.", "Did Titian die in Venice?", "yes"),
        # the whole prompt may be passed as the question
        ("Titian died in Venice.", 'Question: Did Titian die in Venice? Respond solely with "Yes" or "No".', "yes"),
        # a different fact is not a denial, and the claim must end the clause
        ("Titian died in Rome.", "Did Titian die in Venice?", "unknown"),
        ("Titian did not die in Rome; he died in Venice.", "Did Titian die in Venice?", "unknown"),
        ("Titian died in Venice Beach.", "Did Titian die in Venice?", "unknown"),
        ("The original language of The Brothers Karamazov is French.",
         "Is the original language of The Brothers Karamazov Franz Liszt?", "unknown"),
        ("The original language of Das Rheingold Japanese is \"Aurora\".",
         "Is the original language of Das Rheingold Japanese?", "unknown"),
        # not a yes/no question: no restatement rule
        ("Titian died in Venice.", "Where did Titian die?", "unknown"),
        # answer words still come first
        ("No. Titian died in Venice.", "Did Titian die in Venice?", "no"),
    ],
)
def test_restatement_needs_the_question_and_the_exact_claim(text, question, label):
    assert parse_yes_no(text, question=question) == label


@pytest.mark.parametrize(
    ("text", "label", "rule"),
    [
        (None, "unknown", "empty"),
        ("", "unknown", "empty"),
        ("True or false", "unknown", "both"),
        ("I don't know.", "idk", "abstain"),
        ("I am not sure.", "idk", "abstain"),
        ("I cannot verify this claim.", "idk", "abstain"),
        ("I'm not sure, but I think it is true.", "idk", "abstain"),
        ("There is not enough information.", "idk", "abstain"),
        ("True.", "true", "answer_word"),
        ("Yes", "true", "answer_word"),
        ("False", "false", "answer_word"),
        ("No.", "false", "answer_word"),
        ("This is true.", "true", "answer_phrase"),
        ("The statement is true.", "true", "answer_phrase"),
        ("That's incorrect.", "false", "answer_phrase"),
        ("This statement is false.", "false", "answer_phrase"),
        ("The answer is", "unknown", "no_answer"),
        ("Titian was a painter from Cadore", "unknown", "no_answer"),
        ("asdf qwerty", "unknown", "no_answer"),
        ("There is no evidence for this.", "unknown", "no_answer"),
    ],
)
def test_true_false(text, label, rule):
    assert explain_true_false(text) == (label, rule)
    assert parse_true_false(text) == label


@pytest.mark.parametrize(("kind", "gold", "expected"), [
    ("yn", "yes", "yes"), ("yn", "no", "no"), ("", "yes", "yes"), ("", "no", "no"),
])
def test_reference_backend_texts_read_as_meant(kind, gold, expected):
    assert parse_yes_no(ANSWER_TEXTS[kind][gold]) == expected


@pytest.mark.parametrize(("gold", "expected"), [("yes", "true"), ("no", "false"), ("unknown", "idk")])
def test_reference_true_false_texts_read_as_meant(gold, expected):
    assert parse_true_false(ANSWER_TEXTS["tf"][gold]) == expected


def test_non_text_is_a_programming_error():
    with pytest.raises(TypeError, match="float"):
        parse_yes_no(float("nan"))  # type: ignore[arg-type]


def test_labels_are_the_documented_sets():
    assert YES_NO_LABELS == ("yes", "no", "unknown")
    assert TRUE_FALSE_LABELS == ("true", "false", "idk", "unknown")


def test_fixture_is_complete_and_hand_labelled():
    rows = _fixture()
    assert len(rows) == 80
    assert len({(r["question"], r["text"]) for r in rows}) == len(rows)
    assert {r["label"] for r in rows} <= set(YES_NO_LABELS)
    assert any("\n" in r["text"] for r in rows), "JSON decoding restores line breaks"


def test_real_smollm2_answers_match_the_hand_labels():
    rows = _fixture()
    wrong = []
    for i, r in enumerate(rows, start=2):
        got, rule = explain_yes_no(r["text"], question=r["question"])
        if got != r["label"]:
            wrong.append(f"line {i}: {r['text']!r} -> {got} ({rule}), labelled {r['label']} ({r['note']})")
    assert not wrong, "\n".join(wrong)


def test_without_the_question_a_real_answer_is_read_the_same_or_unknown():
    for r in _fixture():
        label, rule = explain_yes_no(r["text"], question=r["question"])
        alone = parse_yes_no(r["text"])
        if rule in ("restatement", "negated_restatement"):
            assert alone == "unknown", r["text"]
        else:
            assert alone == label, r["text"]


def test_parse_is_the_first_element_of_explain():
    for r in _fixture():
        for question in (None, r["question"]):
            label, rule = explain_yes_no(r["text"], question=question)
            assert parse_yes_no(r["text"], question=question) == label
            assert rule in RULES
            assert parse_true_false(r["text"]) == explain_true_false(r["text"])[0]
