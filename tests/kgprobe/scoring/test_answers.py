"""Tests for kgprobe.scoring.answers: one case per documented rule, adversarial texts, and real SmolLM2 answers.

``data/smollm2_yes_no.tsv`` holds every distinct (question, answer) pair SmolLM2-135M-Instruct gave to KG-FPQ
yes/no prompts, labelled by hand as a careful reader would, not by the parser. Columns, tab-separated with a header:
``text`` (the raw answer, JSON-encoded so line breaks and tabs survive; decode with ``json.loads``), ``label``
(yes / no / unknown), ``note`` (why, for labels that are not obvious), ``question`` (the question of the prompt).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgprobe.scoring.answers import (
    TRUE_FALSE_LABELS,
    YES_NO_LABELS,
    explain_true_false,
    explain_yes_no,
    parse_true_false,
    parse_yes_no,
)
from kgprobe.generation.backends.reference import ANSWER_TEXTS

FIXTURE = Path(__file__).parent / "data" / "smollm2_yes_no.tsv"
RULES = ("empty", "both", "abstain", "answer_word", "answer_phrase", "restatement", "negated_restatement",
         "final_verdict", "no_answer")
# A long explanation that answers nothing by itself (about 530 characters, more than the 400 the start rules read).
RAMBLE = ("Titian was a Venetian painter of the sixteenth century whose portraits and altarpieces shaped the course "
          "of European art. ") * 4


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
    (RAMBLE + "So the answer is No.", None, "no", "final_verdict"),
    ("The answer is", None, "unknown", "no_answer"),
    ("Titian died in Venice.", None, "unknown", "no_answer"),
]


@pytest.mark.parametrize(("text", "question", "label", "rule"), RULE_CASES)
def test_each_rule(text, question, label, rule):
    assert explain_yes_no(text, question=question) == (label, rule)


def test_every_documented_rule_has_a_case_and_is_in_the_docstring():
    import kgprobe.scoring.answers as answers

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


# Each "no" answer that the old rules read as unknown though its "yes" mirror was read, and the mirror.
@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Yes Titian died in Venice.", "yes"),
        ("No Titian died in Rome.", "no"),
        ("Yes Martin Luther King Jr. was a citizen of Atlanta.", "yes"),
        ("No Martin Luther King Jr. was not a citizen of Raiding.", "no"),
        ("No Leonardo da Vinci died in Amboise.", "no"),
        ("No Venice is in Italy.", "no"),
        ("No actually, he died in Rome.", "no"),
        ("Yes?", "yes"),
        ("No?", "no"),
        ("Yes...", "yes"),
        ("No...", "no"),
        ("Yes…", "yes"),
        ("No…", "no"),
        ("Yes (he died in Venice)", "yes"),
        ("No (he died in Rome)", "no"),
        ("No [he died in Rome]", "no"),
        ("'Yes'", "yes"),
        ("'No'", "no"),
        ("\u200bYes", "yes"),
        ("\ufeffYes", "yes"),
        ("\u200bNo", "no"),
        ("\ufeffNo.", "no"),
        ("\u200cYes\u200d", "yes"),
        ("\u2060No\u2060", "no"),
        ("**\u200bNo**", "no"),
        ("Answer:\u00a0No", "no"),
        ("No\u00a0it isn't.", "no"),
        ("Yes\u00a0it is.", "yes"),
        ("No\u00a0(he died in Rome)", "no"),
    ],
)
def test_no_reads_as_readily_as_yes(text, label):
    assert parse_yes_no(text) == label


# Templates with a slot for the answer word: wherever "no" cannot be a determiner, "No" must read as no exactly
# when "Yes" reads as yes (and under the same rule). The last group is read by neither.
SYMMETRIC_TEMPLATES = [
    "{}", "{}.", "{}!", "{}?", "{}...", "{}…", "{},", "{};", "{}:", "{} -", "{} —", "{}\n",
    "{}\nTitian died in Venice.", "{}, he did.", "{}. Titian died in Venice.", "{} (see above)", "{} it is.",
    "{} he did.", "{} the Tagus flows there.",
    "{} Titian died in Venice.", "{} Venice is in Italy.", "{} Leonardo da Vinci died in Amboise.",
    "{} J. Paul Getty founded it.", "{} Martin Luther King Jr. was a citizen.", "{} i think so.",
    "**{}**", "__{}__", "`{}`", '"{}."', "'{}'", "> {}", "- {}", "## {}", "...{}", "({})", "[{}]",
    "Answer: {}", "A: {}", "The answer is {}.", "Final answer: **{}**",
    "Question: Did Titian die in Venice? Answer: {}",
    "Did Titian die in Venice? {}.", "Sorry, {}.", "Well, {}.", "Sure! {}.", "Right, {}.",
    "Based on the facts above, {}.", "Absolutely {}.", "Certainly {}!",
    "\u200b{}", "\ufeff{}", "{}\u200b.", " \u00a0{}", "\u200e{}\u200f",
    RAMBLE + "So the answer is {}.", RAMBLE + "\n\nAnswer: {}", RAMBLE + "Therefore, {}.",
    RAMBLE + "In conclusion, the answer is {}, he did not.", "Titian was a painter. So, {}.",
    # read by neither
    "I'm not sure, but {}.", "Maybe {}.", "Perhaps {}.", "Yes or no? {}", "The answer is probably {}.",
    RAMBLE + "{}.", RAMBLE + "So the answer is probably {}.", RAMBLE + "So the answer is {}. He died in 1576.",
]


@pytest.mark.parametrize("template", SYMMETRIC_TEMPLATES)
@pytest.mark.parametrize("case", [str.capitalize, str.lower, str.upper])
def test_yes_and_no_are_read_symmetrically(template, case):
    yes_label, yes_rule = explain_yes_no(template.format(case("yes")))
    no_label, no_rule = explain_yes_no(template.format(case("no")))
    assert (yes_label == "yes") == (no_label == "no"), (yes_label, no_label)
    assert yes_label != "no" and no_label != "yes"
    assert yes_rule == no_rule
    yes_tf, no_tf = parse_true_false(template.format(case("yes"))), parse_true_false(template.format(case("no")))
    assert (yes_tf == "true") == (no_tf == "false")


def test_most_symmetric_templates_are_read():
    read = [t for t in SYMMETRIC_TEMPLATES if parse_yes_no(t.format("No")) == "no"]
    assert len(read) == len(SYMMETRIC_TEMPLATES) - 8


# The one intended asymmetry: "no" is also a determiner, "yes" never is. "Yes X" is yes whatever X is; "No X" is
# unknown (or an abstention) where X is the noun phrase "no" determines.
@pytest.mark.parametrize(
    ("template", "no_label"),
    [
        ("{} evidence suggests he died there.", "unknown"),
        ("{} Evidence was found.", "unknown"),
        ("{} information is available.", "unknown"),
        ("{} one knows.", "unknown"),
        ("{} idea.", "unknown"),
        ("{} Titian paintings survive in Venice.", "unknown"),
        ("{} Titian's paintings survive in Venice.", "unknown"),
        ("{} Titian-inspired works survive.", "unknown"),
        ("{} Titian.", "unknown"),
        ("{} in-person records exist.", "unknown"),
        ("{} \"Titian\" appears here.", "unknown"),
    ],
)
def test_determiner_no_is_the_one_asymmetry(template, no_label):
    assert parse_yes_no(template.format("Yes")) == "yes"
    assert parse_yes_no(template.format("No")) == no_label


@pytest.mark.parametrize(
    ("text", "label", "rule"),
    [
        # "Sure" / "Right" answer only as the whole reply; followed by more they are the filler of a chat reply
        ("Sure.", "yes", "answer_word"),
        ("Sure!", "yes", "answer_word"),
        ("**Sure**", "yes", "answer_word"),
        ("Right.", "yes", "answer_word"),
        ("Right!", "yes", "answer_word"),
        ("Sure?", "unknown", "no_answer"),
        ("Right?", "unknown", "no_answer"),
        ("Sure thing.", "unknown", "no_answer"),
        ("Sure, but I can't say for certain.", "unknown", "abstain"),
        ("Sure! Here is some information about Titian.", "unknown", "no_answer"),
        ("Sure! The answer is No.", "no", "answer_word"),
        ("Right, so the answer is yes.", "yes", "answer_word"),
        ("Right now I cannot check.", "unknown", "no_answer"),
        # already read before this change, by the standalone-word and phrase rules
        ("Correct.", "yes", "answer_word"),
        ("Correct?", "unknown", "no_answer"),
        ("Correct…", "yes", "answer_word"),
        ("That's false", "no", "answer_phrase"),
        ("That's false.", "no", "answer_phrase"),
        ("That's right", "yes", "answer_phrase"),
        ("That's right.", "yes", "answer_phrase"),
    ],
)
def test_sure_right_correct_and_thats(text, label, rule):
    assert explain_yes_no(text) == (label, rule)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Sí", "yes"), ("Sí.", "yes"), ("Si.", "yes"), ("Sì!", "yes"), ("Oui.", "yes"), ("Ja", "yes"),
        ("Ja, das stimmt.", "yes"), ("Да.", "yes"), ("是", "yes"), ("是的", "yes"), ("是的。", "yes"),
        ("是的，他死在威尼斯。", "yes"), ("对。", "yes"), ("はい", "yes"), ("はい。", "yes"),
        ("No.", "no"), ("Non.", "no"), ("Non", "no"), ("Nein", "no"), ("Nein!", "no"), ("Нет", "no"),
        ("Нет.", "no"), ("不", "no"), ("不是", "no"), ("不是。", "no"), ("不对", "no"), ("否", "no"), ("いいえ", "no"),
        ("Answer: Nein", "no"), ("**Oui**", "yes"),
        # standalone only: a prefix of a longer word or sentence is no answer
        ("Non-fiction is my favourite.", "unknown"), ("Non sono sicuro.", "unknown"), ("Si-based chips", "unknown"),
        ("Simon says", "unknown"), ("Japan is far.", "unknown"), ("是一个城市。", "unknown"), ("不知道", "unknown"),
        ("Nonsense.", "unknown"), ("Daily news.", "unknown"),
    ],
)
def test_non_english_answer_words_stand_alone(text, label):
    assert parse_yes_no(text) == label


@pytest.mark.parametrize(
    ("text", "label", "rule"),
    [
        (RAMBLE + "So the answer is No.", "no", "final_verdict"),
        (RAMBLE + "So the answer is yes.", "yes", "final_verdict"),
        (RAMBLE + "\n\n**Answer: No**", "no", "final_verdict"),
        (RAMBLE + "\nFinal answer: Yes\n", "yes", "final_verdict"),
        (RAMBLE + "Therefore, no.", "no", "final_verdict"),
        (RAMBLE + "Therefore, no, he did not die in Venice.", "no", "final_verdict"),
        (RAMBLE + "He died in Rome, so the answer is no.", "no", "final_verdict"),
        (RAMBLE + "In conclusion, the statement is false.", "no", "final_verdict"),
        (RAMBLE + "Verdict: true", "yes", "final_verdict"),
        ("Titian was a Venetian painter. So, yes.", "yes", "final_verdict"),
        # no explicit marker, a hedge, a verdict mid-text, or something after it: no verdict
        (RAMBLE, "unknown", "no_answer"),
        (RAMBLE + "No.", "unknown", "no_answer"),
        (RAMBLE + "Titian did not die in Venice.", "unknown", "no_answer"),
        (RAMBLE + "So the answer is probably no.", "unknown", "no_answer"),
        (RAMBLE + "So the answer is no. He died in Rome in 1576.", "unknown", "no_answer"),
        (RAMBLE + "So the answer is yes or no.", "unknown", "no_answer"),
        (RAMBLE + "So the answer is no-one's guess.", "unknown", "no_answer"),
        (RAMBLE + "So the answer is nothing simple.", "unknown", "no_answer"),
        ("So the answer is no. " + RAMBLE, "no", "answer_word"),
        # the start still wins over the end
        ("Yes. " + RAMBLE + "So the answer is no.", "yes", "answer_word"),
        ("I'm not sure. " + RAMBLE + "So the answer is no.", "unknown", "abstain"),
        ("Yes or no? " + RAMBLE + "So the answer is no.", "unknown", "both"),
    ],
)
def test_a_final_verdict_is_read_only_when_explicit(text, label, rule):
    assert explain_yes_no(text) == (label, rule)


def test_the_start_decides_before_the_end_is_read():
    question = "Did Titian die in Venice?"
    assert explain_yes_no("Titian died in Venice. " + RAMBLE + "So the answer is no.", question=question) == (
        "yes", "restatement")


@pytest.mark.parametrize(
    ("text", "label", "rule"),
    [
        ("\u200b", "unknown", "empty"),
        ("\u200b \ufeff\u00a0", "unknown", "empty"),
        ("\u200b" * 500, "unknown", "empty"),
        # invisible characters take no room from the 400 characters read
        ("\u200b" * 500 + "Yes", "yes", "answer_word"),
        (" " * 500 + "Yes", "unknown", "no_answer"),
        ("Y\u00ades", "yes", "answer_word"),
    ],
)
def test_invisible_characters(text, label, rule):
    assert explain_yes_no(text) == (label, rule)


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
        # the same rules as the yes/no reading, symmetric
        ("No?", "false", "answer_word"),
        ("No…", "false", "answer_word"),
        ("No (it is not)", "false", "answer_word"),
        ("No Titian died in Rome.", "false", "answer_word"),
        ("\u200bTrue.", "true", "answer_word"),
        ("\ufeffFalse", "false", "answer_word"),
        ("Sure.", "true", "answer_word"),
        ("Non.", "false", "answer_word"),
        ("Sure, but I don't know.", "idk", "abstain"),
        (RAMBLE + "Therefore, the statement is false.", "false", "final_verdict"),
        (RAMBLE + "So it is true.", "true", "final_verdict"),
        (RAMBLE, "unknown", "no_answer"),
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


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # a verdict on the statement anywhere in the head, as a small model wraps the prompt's answers
        ('The statement "Ada Lovelace was born in London" is indeed true. She was born there in 1815.', "true"),
        ("I would say \"No, the statement is false.\"", "false"),
        ("Looking at it again, the answer is 'Yes, the statement is true.'", "true"),
        ("Marie Curie won a Nobel Prize in Physics. The statement is true.", "true"),
        ('The statement "Rome is in Spain" is a common mistake. This statement is not true.', "false"),
        ('The statement "Lyon is in France" is not only true but also well known.', "true"),
        ("Verdi wrote many operas. I don't know if this is one of them.", "idk"),
        # an echo of the instructions is not the model's answer
        ("If you know the statement is true, you can answer \"Yes, the statement is true.\"", "unknown"),
        ("The answer must be a statement that is true based on the information.", "unknown"),
        ("You are asked to judge whether the statement is true or false.", "unknown"),
        # verdicts that disagree
        ("Paris lies on the Seine, so the statement is true. Then again, the statement is false.", "unknown"),
    ],
)
def test_true_false_reads_a_verdict_on_the_statement(text, label):
    assert parse_true_false(text) == label
    assert explain_true_false(text)[1] in ({"statement_verdict"} if label != "unknown" else {"no_answer", "both", "echo"})
    # the yes/no reading is unchanged: rule 9 belongs to the true / false / IDK reading only
    assert parse_yes_no(text) in ("yes", "no", "unknown")


STATEMENT = "Guanajuato is in the country Mexico."


@pytest.mark.parametrize(
    "text, statement, label, rule",
    [
        # a verdict word and a verdict of the other polarity in the first sentence contradict each other
        ("Yes, the statement is false.", None, "unknown", "both"),
        ("No, the statement is true.", None, "unknown", "both"),
        ("Yes, I don't know.", None, "unknown", "both"),
        # a bare verdict corrected in the next sentence
        ("True. Actually, no, it is false.", None, "unknown", "both"),
        # a bare verdict followed by an explanation that agrees (or says nothing) keeps its label
        ("True. It is in Mexico.", None, "true", "answer_word"),
        ("No. Voltaire died in the Getty Museum.", None, "false", "answer_word"),
        ("Yes, the statement is true.", None, "true", "answer_word"),
        # echoed instructions are no answer
        ("Answer 'Yes, the statement is true.' if you know the statement is true.", None, "unknown", "echo"),
        ("Answer 'Yes, the statement is true.' if you know the statement is true. Answer 'No, the statement is "
         "false.' if you know the statement is false. Otherwise, answer 'I don't know.'", None, "unknown", "echo"),
        # ... and what follows them is the answer
        ("Answer 'Yes, the statement is true.' if you know the statement is true.\n\nNo, the statement is false.",
         None, "false", "answer_word"),
        ("You are given a statement. I don't know.", None, "idk", "abstain"),
        # the model's own quoted answer is not an echo
        ("The answer is 'No, the statement is false.'", None, "false", "answer_word"),
        # restatements need the statement
        ("Guanajuato is indeed in the country Mexico.", STATEMENT, "true", "restatement"),
        ("Guanajuato is in the country Mexico, as it is a state of it.", STATEMENT, "true", "restatement"),
        ("guanajuato is in THE country mexico", STATEMENT, "true", "restatement"),
        ("Guanajuato is not in the country Mexico.", STATEMENT, "false", "negated_restatement"),
        ("Guanajuato isn't in the country Mexico.", STATEMENT, "false", "negated_restatement"),
        ("Guanajuato is indeed in the country Mexico.", None, "unknown", "no_answer"),
        # a different fact is not a restatement
        ("Guanajuato is in the country Spain.", STATEMENT, "unknown", "no_answer"),
        ("Guanajuato is in the country Mexico City.", STATEMENT, "unknown", "no_answer"),
    ],
)
def test_true_false_echoes_restatements_and_contradictions(text, statement, label, rule):
    assert explain_true_false(text, statement=statement) == (label, rule)
    assert parse_true_false(text, statement=statement) == label


PARIS = "Paris is the capital of France."


@pytest.mark.parametrize(
    "text, label",
    [
        # negated verdict words (issue 40; the first five open 1,607 of GPT-4's and 9,906 of Mistral's answers in the
        # ERBench authors' logs, all read as unknown before)
        ("No, it is not true. Lionel Messi played for FC Barcelona with the number 10 in 2019.", "false"),
        ("No. It is not true. The song was actually sung by Barry Manilow in 1977.", "false"),
        ("No, that is not true. There is no airport located at those exact coordinates.", "false"),
        ("No, it's not true. The group Godspell released a song titled \"Day by Day\" in 1971.", "false"),
        ("No, I don't think that's true.\n\nI'm just an AI, I don't have access to real-time information.", "false"),
        ("The statement is not true.", "false"),
        ("No, the statement is not true.", "false"),
        ("That is not correct.", "false"),
        ("No, that's not correct.", "false"),
        ("The statement isn't true.", "false"),
        ("It's not true.", "false"),
        ("This statement is not accurate.", "false"),
        ("Not true.", "false"),
        ("The statement is incorrect.", "false"),
        ("That's wrong.", "false"),
        ("Wrong.", "false"),
        ("Incorrect. Paris is the capital of France.", "false"),
        ("False. The statement is not true.", "false"),
        ("The statement is not false.", "true"),
        ("Yes, the statement is not false.", "true"),
        ("It is not incorrect.", "true"),
        ("Yes, the statement is true.", "true"),
        ("No, the statement is false.", "false"),
        ("Yes, it is true. The soccer player from Argentina who wore the number 10 is Lionel Messi.", "true"),
        # still contradictions
        ("Yes, the statement is not true.", "unknown"),
        ("No, the statement is true.", "unknown"),
        ("No, the statement is not false.", "unknown"),
        # quoting both ways: the quoted statement is the subject; its words are no verdict
        ("The statement 'Paris is the capital of France.' is true.", "true"),
        ("The statement \"Paris is the capital of France.\" is true.", "true"),
        ("The statement \u2018Paris is the capital of France.\u2019 is true.", "true"),
        ("The statement \u201cParis is the capital of France.\u201d is true.", "true"),
        ("The statement 'Paris is the capital of France.' is not true.", "false"),
        ("The statement \"Paris is the capital of France.\" is not true.", "false"),
        ("The statement 'Paris is not the capital of France' is false.", "false"),
        ("The statement \"Paris is not the capital of France\" is false.", "false"),
        ("The statement 'Nothing false is ever true' is true.", "true"),
        ("The statement \"Nothing false is ever true\" is true.", "true"),
        ("The statement 'The claim is true' is false.", "false"),
        ("'No Country for Old Men was directed by the Coen brothers.' is true.", "true"),
        ("\"No Country for Old Men was directed by the Coen brothers.\" is false.", "false"),
        ("Yes, the statement 'Paris doesn't lie in Spain' is true.", "true"),
        ("No, the statement \"The claim is true\" is not true.", "false"),
        # the model's own quoted answer still counts
        ("The answer is 'No, the statement is false.'", "false"),
        ("I would say \"Yes, the statement is true.\"", "true"),
    ],
)
def test_true_false_reads_negated_verdicts_and_quoted_statements(text, label):
    assert parse_true_false(text) == label
    assert parse_true_false(text, statement=PARIS) == label


@pytest.mark.parametrize("statement", ["Paris is the capital of France.", "True Grit was directed by the Coen brothers.",
                                       "No Country for Old Men is a film.", "It is not false that X won."])
@pytest.mark.parametrize("verdict, label", [("true", "true"), ("not true", "false"), ("false", "false"),
                                            ("not false", "true"), ("correct", "true"), ("incorrect", "false")])
@pytest.mark.parametrize("quote", ["'{}'", '"{}"', "\u2018{}\u2019", "\u201c{}\u201d"])
def test_the_quotes_around_a_restated_statement_do_not_change_the_verdict(statement, verdict, label, quote):
    text = f"The statement {quote.format(statement)} is {verdict}."
    assert parse_true_false(text) == label
    assert parse_true_false(text, statement=statement) == label
