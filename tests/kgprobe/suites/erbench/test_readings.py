"""The readings of ERBench answers: the defaults are the released scripts' (``answer_reading: released``,
``rationale_match: released``), which produced the paper's Tables 2 and 4; kgprobe's are named settings. The
answers below are excerpts of the authors' released logs (DILAB-KAIST/ERBench ``binary/results/gpt4/
soccer_olympic.log``, ``multi_choice/results/{gpt4,mistral}/...``)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kgprobe.errors import ConfigError
from kgprobe.suites.erbench import BinaryAnswer, ChoiceAnswer, binary_metrics, choice_metrics
from kgprobe.suites.erbench.scoring import read_sample
from kgprobe.suites.erbench.spec import parse_spec
from kgprobe.suites.erbench.suite import ERBenchSettings, with_readings
from kgprobe.suites.erbench.verify import read_binary, read_binary_answer, read_choice, value_mentioned

#: GPT-4, Soccer & Olympic BN(Y) (entity 144): one of the 419 answers that start with neither yes nor no
AS_AN_AI = ("As an AI, I don't have real-time data. But as of the last update, Thiago Alcantara, a well-known "
            "footballer named Thiago, played for Bayern Munich in 2019. Munich is a city in Germany, and it hosted the "
            "Summer Olympics in 1972. So, the answer is yes.")
UNSURE = ("Unsure. Without specific information about which soccer club Thiago played for in 2019, it's impossible "
          "to determine whether the city it's located in has ever hosted the Summer Olympics.")
TURIN = ("Yes, the city where Cristiano Ronaldo played soccer in 2019, which is Turin (as he played for Juventus), has "
         "not hosted the Summer Olympics. However, it did host the Winter Olympics in 2006.")
#: GPT-4 Book MC: the false option's true publisher is "Harlequin Books"
HARLEQUIN = ("Option 3: Published by the publisher named Bethany House. Explanation: The book \"McKettrick's Heart\" "
             "by Linda Lael Miller was not published by Bethany House. It was actually published by HQN, a division of "
             "Harlequin Enterprises.")
#: GPT-4 Soccer MC: the false option's true league is "Spain Primera Division"
LA_LIGA = ("Option 4: Participated in league named Polish T-Mobile Ekstraklasa during the year 2019.\n\nExplanation: "
           "Lionel Messi, commonly known as L. Messi, has never played in the Polish T-Mobile Ekstraklasa. He has "
           "spent the majority of his career playing for FC Barcelona in Spain's La Liga.")
#: Mistral Airport MC: the false option's true country code is "CA" (Canada), which the answer never names
BECAUSE = ("46.1614 latitude. Explanation: Option 2 is the wrong answer because the airport Sydney / J.A. Douglas "
           "McCurdy is located at -60.0478 longitude, not 46.1614 latitude.")


@pytest.mark.parametrize("text,released,kgprobe", [
    (AS_AN_AI, "unsure", "yes"),       # the released reader: neither yes nor no first, so unsure
    (UNSURE, "unsure", "unsure"),
    (TURIN, "yes", "yes"),             # the first word decides, whatever follows
    ("Yes/No: No. Turin never hosted them.", "no", "no"),
    ("Not sure.", "no", "unsure"),     # the released reader's prefix test: "not sure" starts with "no"
    ("Answer unclear.\nYes, it did.", "unsure", "unknown"),  # only the first line counts there
])
def test_binary_answer_readings_on_released_answers(text: str, released: str, kgprobe: str) -> None:
    assert read_binary_answer(BinaryAnswer(text, "yes")).label == released      # the contract's default
    assert read_binary(text, answer_reading="released") == released
    assert read_binary(text, answer_reading="kgprobe") == kgprobe


def test_binary_metrics_default_is_the_reading_of_table_4() -> None:
    answers = [BinaryAnswer(AS_AN_AI, "yes", ("Bayern Munich",)), BinaryAnswer(UNSURE, "yes", ("Bayern Munich",))]
    released = binary_metrics(answers)
    assert (released.A, released.M, released.H, released.R) == (0.0, 1.0, 0.0, 0.5)
    ours = binary_metrics(answers, answer_reading="kgprobe")
    assert (ours.A, ours.M, ours.AR) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError, match="answer_reading"):
        binary_metrics(answers, answer_reading="content")


@pytest.mark.parametrize("value,text,options,released,kgprobe", [
    ("Harlequin Books", HARLEQUIN, {"first_word": True}, True, False),   # the released publisher heuristic
    ("Spain Primera Division", LA_LIGA, {"aliases": ("Spanish",)}, False, False),
    ("CA", BECAUSE, {"aliases": ("Canada",)}, True, False),              # "ca" inside "because"
    ("19", "He wore the number 10 in 2019.", {}, True, False),
    ("Manchester City", "He played in Manchester.", {"club": True}, True, False),   # the released " City" edit
    ("FC Bayern München", "He played for Bayern Munchen.", {"club": True}, True, True),
    ("-34.7833328247", "It lies at -34.78 latitude.", {}, True, True),
    ("animation", "It is a non-animation film.", {}, True, False),     # no negation guard in the released check
])
def test_rationale_match_readings(value: str, text: str, options: dict, released: bool, kgprobe: bool) -> None:
    assert value_mentioned(value, text, **options) is released
    assert value_mentioned(value, text, **options, rationale_match="released") is released
    assert value_mentioned(value, text, **options, rationale_match="kgprobe") is kgprobe


def test_choice_readings_on_released_answers() -> None:
    harlequin = ChoiceAnswer(HARLEQUIN, 3, "3", ("Harlequin Books",))
    assert read_choice(harlequin, match=[["first_word"]]).rationale is True
    assert read_choice(harlequin, match=[["first_word"]], rationale_match="kgprobe").rationale is False
    la_liga = ChoiceAnswer(LA_LIGA, 4, "4", ("Spain Primera Division",), {"Spain Primera Division": ["La Liga"]})
    assert choice_metrics([la_liga]).R == 1.0
    assert choice_metrics([ChoiceAnswer(BECAUSE, 4, "4", ("CA",))]).R == 1.0
    assert choice_metrics([ChoiceAnswer(BECAUSE, 4, "4", ("CA",))], rationale_match="kgprobe").R == 0.0


def test_spec_aliases_per_reading() -> None:
    spec = parse_spec({
        "source": {"kind": "csv", "path": "."},
        "relations": {"players": {"file": "p.csv", "columns": ["player", "club", "league"]}},
        "fds": [{"name": "f", "relation": "players", "lhs": ["player"], "rhs": ["club", "league"],
                 "basic": "Did {player} play?", "negated": "Did {player} never play?",
                 "match": {"club": ["club", "first_word"]}}],
        "aliases": {"Spain Primera Division": ["Spanish"]},
        "released_aliases": {"Real Madrid CF": ["Madrid"]},
        "kgprobe_aliases": {"players.league": {"Spain Primera Division": ["La Liga"]}},
    })
    assert spec.aliases_of("players", "league", "Spain Primera Division") == ("Spanish",)
    assert spec.aliases_of("players", "league", "Spain Primera Division", rationale_match="kgprobe") == (
        "Spanish", "La Liga")
    assert spec.aliases_of("players", "club", "Real Madrid CF") == ("Madrid",)
    assert spec.aliases_of("players", "club", "Real Madrid CF", rationale_match="kgprobe") == ()
    assert tuple(spec.fds[0].match["club"]) == ("club", "first_word")
    with pytest.raises(ConfigError, match=r"kgprobe_aliases"):
        parse_spec({"source": {"kind": "csv", "path": "."},
                    "relations": {"players": {"file": "p.csv", "columns": ["player", "club"]}},
                    "fds": [{"name": "f", "relation": "players", "lhs": ["player"], "rhs": ["club"],
                             "basic": "Did {player} play?", "negated": "Did {player} never play?"}],
                    "kgprobe_aliases": ["La Liga"]})


def test_settings_default_to_the_released_readings() -> None:
    fields = ERBenchSettings.model_fields
    assert fields["answer_reading"].default == "released" and fields["rationale_match"].default == "released"
    with pytest.raises(ValidationError):
        ERBenchSettings(db={}, answer_reading="content")
    with pytest.raises(ValidationError):
        ERBenchSettings(db={}, rationale_match="substring")


def test_read_sample_follows_the_settings_and_the_items_aliases_per_reading() -> None:
    item = {"task": "multihop", "expected": "yes", "inferred": ["FC Bayern München", "munich", "1972"],
            "hop_values": ["FC Bayern München", "munich", "1972"], "match": ["club", "", "list"],
            "question": "Did the city ... hosted the Summer Olympics?",
            "aliases": '{"FC Bayern M\\u00fcnchen": ["Bayern Munich"]}',
            "kgprobe_aliases": '{"FC Bayern M\\u00fcnchen": ["Bayern"]}'}
    released = read_sample(item, AS_AN_AI, None)
    assert released["label"] == "unsure" and released["hop_rationale"] == [True, True, True]
    ours = read_sample(item, AS_AN_AI, None, answer_reading="kgprobe", rationale_match="kgprobe")
    assert ours["label"] == "yes" and ours["hop_rationale"] == [True, True, True]
    short = "Yes. Thiago played for Bayern, in Munich, host in 1972."
    assert read_sample(item, short, None)["hop_rationale"][0] is False     # "Bayern" is a kgprobe alias only
    assert read_sample(item, short, None, rationale_match="kgprobe")["hop_rationale"][0] is True


def test_metric_rows_name_their_reading() -> None:
    rows = [{"task": "binary", "breakdown": {"dataset": "soccer"}}, {"task": "multiple_choice", "breakdown": {}},
            {"task": "multiple_choice", "breakdown": {"dataset": "soccer"}},
            {"task": "known_entity", "breakdown": {"dataset": "soccer"}}, {"task": "other", "breakdown": {"x": "y"}},
            {"task": "binary", "breakdown": {}}]
    settings = ERBenchSettings(db={}, answer_reading="kgprobe")
    out = with_readings(rows, settings)
    assert out[0]["breakdown"] == {"dataset": "soccer", "reading": "answer_reading=kgprobe, rationale_match=released, "
                                                                   "known_reading=released"}
    assert out[1]["breakdown"] == {}                   # an overall row stays overall (the headline among them)
    assert out[2]["breakdown"]["reading"] == "rationale_match=released, known_reading=released"
    assert out[3]["breakdown"]["reading"] == "known_reading=released"
    assert "reading" not in out[4]["breakdown"] and out[5]["breakdown"] == {}


def test_report_section_lists_the_readings_of_its_cells() -> None:
    from types import SimpleNamespace

    from kgprobe.suites.erbench.report import section

    reading = "answer_reading=kgprobe, rationale_match=kgprobe, known_reading=released"
    row = {"model": "m", "perturbation": "none", "suite": "erbench", "task": "binary", "judge": "",
           "metric": "answer_accuracy", "breakdown": {"dataset": "soccer", "qtype": "BN(Y)", "entities": "all",
                                                      "reading": reading},
           "higher_is_better": True, "n": 10, "value": 0.5, "ci_low": 0.2, "ci_high": 0.8, "interval": "wilson",
           "item_ids": []}
    out = section(SimpleNamespace(models=("m",)), [row])
    assert out.data["readings"] == [reading]
    assert out.data["settings"][0]["rows"][0]["A"].startswith("0.50")
