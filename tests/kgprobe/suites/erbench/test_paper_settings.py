"""The paper's settings: first-N sampling, distractors drawn over rows, FD-violating rows kept (and the previous
behaviour as named settings), raw values in known-entity prompts, the Q:/A: wrapper of multiple-choice prompts,
templates that would hold their own answer, spec aliases, known entities counted per question type, R-ext and
intervals clustered by entity."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from kgprobe.errors import ConfigError
from kgprobe.scoring.stats import wilson_ci
from kgprobe.suites.base import ItemSource
from kgprobe.suites.erbench import ERBenchSuite, load_erdb
from kgprobe.suites.erbench.questions import QuestionOptions, build_items
from kgprobe.suites.erbench.scoring import (
    clustered_wilson,
    common_metrics,
    known_setting_keep,
    metrics_for,
    rationale_ext,
    read_sample,
)
from kgprobe.suites.erbench.spec import parse_spec
from kgprobe.suites.erbench.suite import ERBenchWarning

_MC = {"questions": ["What is the false option about the movie {title}?", "What's the inaccurate option about the "
                     "movie {title}?", "What is the wrong option regarding the movie {title}?"],
       "options": {"director": ["Directed by {director}.", "It was directed by {director}.", "Director: {director}."],
                   "country": ["Produced in {country}.", "Made in {country}.", "Country: {country}."]},
       "known": {"lhs": "Do you know the movie {title}?", "director": "Did {director} direct {title}?",
                 "country": "Was {title} produced in {country}?"}}


def _films(tmp_path: Path, n_usa: int = 90, n_other: int = 10) -> Path:
    """films.csv: n_usa films made in the USA, then n_other films each made in a different country; directors'
    birth years for a decade format."""
    lines = ["title,director,country,born"]
    for i in range(n_usa):
        lines.append(f"Film {i},Director {i},USA,{1940 + i % 10}")
    for i in range(n_other):
        lines.append(f"Other {i},Maker {i},Country {i},1950")
    (tmp_path / "films.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def _spec(tmp_path: Path, **extra) -> dict:
    return {"name": "films", "source": {"kind": "csv", "path": str(tmp_path)},
            "relations": {"films": {"file": "films.csv", "columns": ["title", "director", "country", "born"]}},
            "formats": {"films.born": "decade"},
            "fds": [{"name": "film_facts", "dataset": "movie", "relation": "films", "lhs": ["title"],
                     "rhs": ["director", "country"], "mc": _MC},
                    {"name": "film_title", "dataset": "movie", "relation": "films", "lhs": ["director", "born"],
                     "rhs": ["title"], "basic": "Is there a film by {director}, born in the {born}?",
                     "negated": "Is it true that there is no film by {director}, born in the {born}?",
                     "known": "Do you know {title}? Was {director} born in year {born}?"}],
            **extra}


def _items(spec_data: dict, **opts) -> list[dict]:
    con = duckdb.connect()
    spec = parse_spec(spec_data)
    load_erdb(con, spec, fd_violations=opts.pop("fd_violations", "keep"))
    return build_items(con, spec, QuestionOptions(**opts)).to_pylist()


# ------------------------------------------------------------------------------------------------ distractors
def test_distractors_by_row_follow_value_frequency_and_by_value_are_uniform(tmp_path: Path) -> None:
    spec = _spec(_films(tmp_path, n_usa=300, n_other=30))
    share = {}
    for how in ("by_row", "by_value"):
        items = _items(spec, distractors=how, binary=False, known=False, seed=3)
        false_country = [it for it in items if it["qtype"] == "MC" and it["phrasing"] == 0
                         and it["entity"].startswith("Other") and it["expected"] == "2"]
        assert len(false_country) >= 8
        share[how] = sum("Produced in USA." in it["question"] for it in false_country) / len(false_country)
        # the false value always differs from the record's own
        assert all(f"Produced in Country {it['entity'].split()[1]}." not in it["question"] for it in false_country)
    # over rows, USA is 300 of the 329 other rows (~91%); over distinct values 1 of 30 (~3%)
    assert share["by_row"] > 0.7 and share["by_value"] < 0.3


# ------------------------------------------------------------------------------------------------ sampling
def test_sample_first_takes_the_first_rows_and_seeded_a_hash_order(tmp_path: Path) -> None:
    spec = _spec(_films(tmp_path))
    first = {it["entity"] for it in _items(spec, limit=5, multiple_choice=False, known=False)}
    assert first == {f"Director {i}\x1f{1940 + i}" for i in range(5)}
    seeded = {it["entity"] for it in _items(spec, limit=5, sample="seeded", multiple_choice=False, known=False)}
    assert len(seeded) == 5 and seeded != first


def test_fd_violations_drop_warns_naming_the_rows_inside_the_first_n(tmp_path: Path) -> None:
    _films(tmp_path)
    with open(tmp_path / "films.csv", "a", encoding="utf-8") as fh:
        fh.write("Film 1,Someone Else,USA,1941\n")   # row 101 contradicts Film 1's director (row 2)
    spec = _spec(tmp_path)
    suite = ERBenchSuite()
    for mode, limit, warned in (("drop", 50, True), ("drop", None, True), ("keep", 50, False)):
        con = duckdb.connect()
        load_erdb(con, parse_spec(spec), fd_violations=mode)
        settings = suite.Settings.model_validate({"db": spec, "limit_per_fd": limit, "fd_violations": mode,
                                                  "known_entity": False})
        source = ItemSource(con=con, kg=None, snapshot_id="", settings=settings, seed=0, config_dir=tmp_path)
        if warned:
            with pytest.warns(ERBenchWarning, match=r"films row 2 .*Film 1") as record:
                result = suite.items(source)
            assert "row 101" in str(record[0].message) or limit is not None
            assert {d["row"] for d in result.metadata["dropped_in_sample"]} >= {2}
        else:
            result = suite.items(source)
            assert result.metadata["dropped_in_sample"] == []
            # kept: Film 1 is asked about, with its first row's director
            film1 = [it for it in result.items.to_pylist() if it["entity"] == "Film 1" and it["qtype"] == "MC"]
            assert film1 and all("Director 1" in it["gold"] or it["expected"] == "1" for it in film1)


# ------------------------------------------------------------------------------------------------ prompts
def test_known_entity_prompts_show_raw_values_not_display_formats(tmp_path: Path) -> None:
    items = _items(_spec(_films(tmp_path)), multiple_choice=False)
    known = next(it for it in items if it["qtype"] == "known" and it["entity"].startswith("Director 3\x1f"))
    question = next(it for it in items if it["qtype"] == "BN(Y)" and it["entity"].startswith("Director 3\x1f"))
    assert "born in year 1943?" in known["question"]
    assert "born in the 1940s?" in question["question"]


def test_mc_prompts_are_wrapped_in_q_and_a(tmp_path: Path) -> None:
    items = _items(_spec(_films(tmp_path)), binary=False, limit=3)
    mc = [it for it in items if it["task"] == "multiple_choice"]
    prompts = ERBenchSuite().prompts(mc)
    assert prompts and all(p.text.startswith("Q: What") and p.text.endswith("\n\nA: ") for p in prompts)
    assert all("\nOption 1: " in p.text and "\nOption 2: " in p.text for p in prompts)
    # the released multiple-choice validation asks its known-entity prompts as "Q: ...\nA:"; the binary one bare
    known = [it for it in items if it["task"] == "known_entity"]
    assert known and {it["qtype"] for it in known} == {"known_mc"}
    assert [p.text for p in ERBenchSuite().prompts(known)] == [f"Q: {it['question']}\nA:" for it in known]
    binary_known = [it for it in _items(_spec(_films(tmp_path)), multiple_choice=False, limit=3) if it["qtype"] == "known"]
    assert binary_known and [p.text for p in ERBenchSuite().prompts(binary_known)] == [it["question"] for it in binary_known]


@pytest.mark.parametrize("where,template", [
    ("basic", "Did {director} make {title}?"),
    ("mc", "What is the false option about the film directed by {director}?"),
])
def test_a_question_naming_its_answer_is_rejected(tmp_path: Path, where: str, template: str) -> None:
    spec = _spec(tmp_path)
    if where == "basic":
        spec["fds"][1]["basic"] = template
        match = r"fds\[film_title\]\.basic: names \['title'\]"
    else:
        spec["fds"][0]["mc"] = {**_MC, "questions": [template] * 3}
        match = r"fds\[film_facts\]\.mc\.questions\[0\]: names \['director'\]"
    with pytest.raises(ConfigError, match=match):
        parse_spec(spec)


# ------------------------------------------------------------------------------------------------ aliases
def test_spec_aliases_per_column_and_per_value_reach_the_rationale_check(tmp_path: Path) -> None:
    spec = _spec(_films(tmp_path), aliases={"films.country": {"USA": ["United States", "American"]},
                                            "Director 7": ["D. Seven"]})
    parsed = parse_spec(spec)
    assert parsed.aliases_of("films", "country", "USA") == ("United States", "American")
    assert parsed.aliases_of("films", "director", "Director 7") == ("D. Seven",)
    items = _items(spec, binary=False, known=False, limit=20)
    usa = next(it for it in items if it["qtype"] == "MC" and it["inferred"] == ["USA"])
    text = f"Option {usa['expected']}: it is wrong; the film was made in the United States."
    assert read_sample(usa, text, None)["rationale"] is True
    assert read_sample({**usa, "aliases": None}, text, None)["rationale"] is False
    with pytest.raises(ConfigError, match=r"aliases\.films\.nope"):
        parse_spec(_spec(tmp_path, aliases={"films.nope": {"a": ["b"]}}))


# ------------------------------------------------------------------------------------------------ scoring
def _vote(model: str, group: str, task: str, *, dataset: str = "movie", qtype: str = "BN(Y)", knows=None,
          correct: bool = True, rationale=True, hop=(), hops: int = 1) -> dict:
    return {"item_id": f"{model}-{group}-{task}-{qtype}", "model": model, "perturbation": "none", "task": task,
            "dataset": dataset, "qtype": qtype, "known_group": group, "hops": hops, "knows": knows,
            "correct": correct, "missing": False, "rationale": rationale, "hop_rationale": list(hop)}


def _model_votes(model: str, bn_known: int, mc_known: int) -> list[dict]:
    votes = []
    for i in range(30):
        g = f"bn{i}"
        votes.append(_vote(model, g, "known_entity", qtype="known", knows=i < bn_known, rationale=None))
        votes.append(_vote(model, g, "binary"))
        g = f"mc{i}"
        votes.append(_vote(model, g, "known_entity", qtype="known_mc", knows=i < mc_known, rationale=None))
        votes.append(_vote(model, g, "multiple_choice", qtype="MC"))
    return votes


def test_known_entities_count_per_question_type_with_na_below_20() -> None:
    votes = _model_votes("m", bn_known=25, mc_known=5)
    rows = metrics_for(votes, model="m", perturbation="none", entities="known", keep=known_setting_keep(votes))
    by_task = Counter(r["task"] for r in rows if r["metric"] == "answer_accuracy")
    assert by_task == {"binary": 1}                      # MC: 5 known < 20, n/a
    acc = next(r for r in rows if r["metric"] == "answer_accuracy")
    assert acc["n"] == 25


def test_common_setting_counts_each_question_type_apart() -> None:
    # b knows 25 binary entities but only 5 MC ones: it is evaluated on binary, left out of MC's common set
    votes = _model_votes("a", bn_known=30, mc_known=30) + _model_votes("b", bn_known=25, mc_known=5)
    rows = [r for r in common_metrics(votes) if r["metric"] == "answer_accuracy"]
    n = {(r["model"], r["task"]): r["n"] for r in rows}
    assert n[("a", "binary")] == n[("b", "binary")] == 25
    assert n[("a", "multiple_choice")] == 30 and ("b", "multiple_choice") not in n


def test_rationale_ext_readings() -> None:
    flags = [[True, False], [True, True], [False, None]]
    # default (the released code, Table 4): per question 1/2, 1, 0 -> their mean
    assert rationale_ext(flags) == pytest.approx((1 / 2 + 1 + 0) / 3)
    # the paper's text as a named setting: per hop 2/3 and 1/2 -> their mean
    assert rationale_ext(flags, reading="per_hop") == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert math.isnan(rationale_ext([[None], []])) and math.isnan(rationale_ext([[None], []], reading="per_hop"))
    with pytest.raises(ValueError, match="reading"):
        rationale_ext(flags, reading="mean")


def _hop_votes() -> list[dict]:
    # 25 known entities; 20 complete paths (hop 2 right on the even ones), 5 whose last hop has no value (hop 1
    # wrong there, and the answer right)
    votes = []
    for i in range(25):
        g = f"h{i}"
        votes.append(_vote("m", g, "known_entity", qtype="known", knows=True, rationale=None, hops=2,
                           dataset="movie_director"))
        hop = (True, i % 2 == 0) if i < 20 else (False, None)
        votes.append(_vote("m", g, "multihop", dataset="movie_director", hops=2, hop=hop))
    return votes


def test_rationale_ext_and_hops_default_to_table_4_in_every_setting() -> None:
    votes = _hop_votes()
    for entities, keep in (("all", lambda v: True), ("known", known_setting_keep(votes))):
        rows = metrics_for(votes, model="m", perturbation="none", entities=entities, keep=keep)
        ext = next(r for r in rows if r["metric"] == "rationale_ext")
        # per question: 10 questions at 1, 10 at 1/2, 5 at 0
        assert ext["value"] == pytest.approx((10 + 5) / 25) and ext["n"] == 25
        assert ext["interval"] == "wilson_mean" and ext["ci_low"] < ext["value"] < ext["ci_high"]
        hop1 = next(r for r in rows if r["metric"] == "hop_rationale_accuracy" and r["breakdown"]["hop"] == "1")
        # the released restriction: every hop over the 20 complete paths only (hop 1 right on all of them)
        assert hop1["n"] == 20 and hop1["value"] == 1.0
        assert {r["breakdown"].get("hop") for r in rows if r["metric"] == "hop_rationale_accuracy"} == {"1", "2"}
    rows = metrics_for(votes, model="m", perturbation="none", entities="all", hop_questions="each",
                       rationale_ext_reading="per_hop")
    hop1 = next(r for r in rows if r["metric"] == "hop_rationale_accuracy" and r["breakdown"]["hop"] == "1")
    assert hop1["n"] == 25 and hop1["value"] == pytest.approx(20 / 25)
    ext = next(r for r in rows if r["metric"] == "rationale_ext")
    assert ext["value"] == pytest.approx((20 / 25 + 10 / 20) / 2) and ext["n"] == 20


def test_rationale_ext_interval_does_not_collapse_for_a_perfect_model() -> None:
    votes = [_vote("m", f"h{i}", "multihop", dataset="movie_director", hops=2, hop=(True, True)) for i in range(20)]
    for reading in ("per_question", "per_hop"):
        ext = next(r for r in metrics_for(votes, model="m", perturbation="none", entities="all",
                                          rationale_ext_reading=reading) if r["metric"] == "rationale_ext")
        assert ext["value"] == 1.0 and ext["ci_high"] == 1.0
        assert ext["ci_low"] == pytest.approx(wilson_ci(20, 20)[0]) and ext["ci_low"] < 0.9


def test_mc_intervals_cluster_the_phrasings_by_entity() -> None:
    # ten entities, three phrasings each, all answered alike: as informative as ten answers, not thirty
    flags = [i < 6 for i in range(10) for _ in range(3)]
    clusters = [f"e{i}" for i in range(10) for _ in range(3)]
    deff, low, high = clustered_wilson(flags, clusters)
    assert deff == pytest.approx(3.0)
    assert (low, high) == pytest.approx(wilson_ci(6, 10), abs=1e-9)
    # independent phrasings: no correction
    mixed = [True, False, True] * 10
    deff, low, high = clustered_wilson(mixed, clusters)
    assert deff == pytest.approx(1.0) and (low, high) == pytest.approx(wilson_ci(20, 30), abs=1e-9)
    votes = [_vote("m", c, "multiple_choice", qtype="MC", correct=f) | {"item_id": f"{c}-{k}"}
             for k, (f, c) in enumerate(zip(flags, clusters))]
    row = next(r for r in metrics_for(votes, model="m", perturbation="none", entities="all")
               if r["metric"] == "answer_accuracy")
    assert row["n"] == 30 and (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_ci(6, 10), abs=1e-9)


def test_suite_settings_default_to_the_tables_readings_and_pass_the_named_ones_through() -> None:
    from types import SimpleNamespace

    from kgprobe.suites.erbench.suite import ERBenchSettings

    fields = ERBenchSettings.model_fields
    assert fields["known_reading"].default == "released" and fields["rationale_ext"].default == "per_question"
    assert fields["hop_questions"].default == "complete" and fields["nota_rationale"].default == "zero"
    votes = _hop_votes()
    suite = ERBenchSuite()

    def ext(settings) -> float:
        rows = suite.metrics(votes, {}, model="m", perturbation="none", settings=settings)
        return next(r["value"] for r in rows if r["metric"] == "rationale_ext" and r["breakdown"]["entities"] == "known")

    assert ext(None) == pytest.approx(15 / 25)
    assert ext(SimpleNamespace(rationale_ext="per_hop", hop_questions="each")) == pytest.approx((20 / 25 + 10 / 20) / 2)
    common = suite.cross_model_metrics(votes, {}, settings=SimpleNamespace(min_known=20, rationale_ext="per_hop",
                                                                           hop_questions="each"))
    hop1 = next(r for r in common if r["metric"] == "hop_rationale_accuracy" and r["breakdown"]["hop"] == "1")
    assert hop1["n"] == 25


# ------------------------------------------------------------------------------------------------ empty slots
def _noted(tmp_path: Path, known: str, **fd) -> dict:
    """notes.csv: four films, two with a note; an FD whose known-entity prompt is ``known``."""
    (tmp_path / "notes.csv").write_text("title,director,country,note\nFilm A,Ann,USA,classic\nFilm B,Bob,UK,\n"
                                        "Film C,Cy,USA,cult\nFilm D,Di,France,\n", encoding="utf-8")
    return {"name": "notes", "source": {"kind": "csv", "path": str(tmp_path)},
            "relations": {"notes": {"file": "notes.csv", "columns": ["title", "director", "country", "note"]}},
            "fds": [{"name": "note_director", "dataset": "notes", "relation": "notes", "lhs": ["title"],
                     "rhs": ["director"], "basic": "Is there a film titled {title}?",
                     "negated": "Is it true that there is no film titled {title}?", "known": known, **fd}]}


def test_a_prompt_that_renders_an_empty_slot_is_refused_naming_the_template_and_a_record(tmp_path: Path) -> None:
    template = "Do you know {title} by {director}? Is it a {note} film?"
    with pytest.raises(ConfigError, match=r"fds\[note_director\]\.known: the template 'Do you know \{title\} by "
                                          r"\{director\}\? Is it a \{note\} film\?' renders \{note\} empty in 2 "
                                          r"prompt\(s\), e.g. for the record .*\"title\": \"Film [BD]\"") as err:
        _items(_noted(tmp_path, template))
    assert "Is it a  film?" in str(err.value) and "[[...]]" in str(err.value)
    # the check covers every prompt template, not only known-entity ones: multiple choice too
    mc = {"questions": ["Which is false about {title}?"] * 3,
          "options": {"director": ["By {director}."] * 3, "country": ["Made in {country}, a {note} film."] * 3},
          "known": {"lhs": "Do you know {title}?", "country": "Was {title} made in {country}?"}}
    spec = _noted(tmp_path, "Do you know {title}?")
    spec["fds"].append({"name": "note_facts", "dataset": "notes", "relation": "notes", "lhs": ["title"],
                        "rhs": ["director", "country"], "mc": mc})
    with pytest.raises(ConfigError, match=r"fds\[note_facts\]\.mc\.options\.country\[0\]: the template "
                                          r"'Made in \{country\}, a \{note\} film\.' renders \{note\} empty"):
        _items(spec)
    mc["options"]["country"] = ["Made in {country}[[, a {note} film]]."] * 3
    options = {it["entity"]: it["options"][1] for it in _items(spec, binary=False) if it["qtype"] == "MC"
               and it["phrasing"] == 0 and it["expected"] == "1"}
    assert options and all(o in ("Made in USA, a classic film.", "Made in UK.", "Made in USA, a cult film.",
                                 "Made in France.") for o in options.values())


def test_an_optional_clause_is_left_out_where_one_of_its_fields_is_empty(tmp_path: Path) -> None:
    template = "Do you know {title}?[[ If yes, is it a {note} film by {director}?]]"
    known = {it["entity"]: it["question"] for it in _items(_noted(tmp_path, template)) if it["qtype"] == "known"}
    assert known == {"Film A": "Do you know Film A? If yes, is it a classic film by Ann?",
                     "Film B": "Do you know Film B?", "Film C": "Do you know Film C? If yes, is it a cult film by Cy?",
                     "Film D": "Do you know Film D?"}


@pytest.mark.parametrize("template", ["Do you know {title}?[[ Is it {note}?", "Do you know {title}? ]]",
                                      "[[Do you know [[{title}]]?]]"])
def test_an_unbalanced_optional_clause_is_a_config_error(tmp_path: Path, template: str) -> None:
    with pytest.raises(ConfigError, match=r"fds\[note_director\]\.known: an optional clause opens with \[\["):
        parse_spec(_noted(tmp_path, template))


# ------------------------------------------------------------------------------------------------ float format
def test_float_format_shows_the_stored_coordinates_as_the_released_prompts(tmp_path: Path) -> None:
    (tmp_path / "airports.csv").write_text("name,lat,lon\nTorca,-34.7833328247,-72.0508346558\nNaone,-15.0,"
                                           "168.0829925537\n", encoding="utf-8")
    spec = {"name": "air", "source": {"kind": "csv", "path": str(tmp_path)},
            "relations": {"airports": {"file": "airports.csv", "columns": ["name", "lat", "lon"]}},
            "formats": {"airports.lat": "float", "airports.lon": "float"},
            "fds": [{"name": "airport_name", "dataset": "airport", "relation": "airports", "lhs": ["lat", "lon"],
                     "rhs": ["name"], "basic": "Is there an airport located at latitude {lat} and longitude {lon}?",
                     "negated": "Is it true that there are no airports located at latitude {lat} and longitude {lon}?",
                     "known": "Is the {name} Airport located at latitude {lat}, longitude {lon}?"}]}
    items = _items(spec)
    questions = {(it["inferred"][0] if it["inferred"] else it["question"].split()[2], it["qtype"]): it["question"]
                 for it in items}
    assert questions[("Torca", "BN(Y)")] == ("Is there an airport located at latitude -34.7833328247 and longitude "
                                             "-72.0508346558?")
    assert questions[("Naone", "BN(N)")] == ("Is it true that there are no airports located at latitude -15.0 and "
                                             "longitude 168.0829925537?")
    # the known-entity prompt too (raw values elsewhere; a float column as the released prompts write it)
    assert questions[("Naone", "known")] == "Is the Naone Airport located at latitude -15.0, longitude 168.0829925537?"
    # round: 4, the previous default, shortens them
    spec["formats"] = {"airports.lat": {"round": 4}, "airports.lon": {"round": 4}}
    rounded = [it["question"] for it in _items(spec) if it["qtype"] == "BN(Y)"]
    assert "Is there an airport located at latitude -34.7833 and longitude -72.0508?" in rounded


# ------------------------------------------------------------------------------------------------ multi-hop rows
def test_each_multihop_start_record_gets_its_question_even_when_names_repeat(tmp_path: Path) -> None:
    (tmp_path / "players.csv").write_text("player,club\nFernandinho,Manchester City\nPaulinho,Guangzhou FC\n"
                                          "Fernandinho,Hebei FC\nPaulinho,SC Braga\nPaulinho,Portimonense SC\n",
                                          encoding="utf-8")
    (tmp_path / "clubs.csv").write_text("club,city\nManchester City,manchester\nGuangzhou FC,guangzhou\n"
                                        "Hebei FC,langfang\nSC Braga,braga\nPortimonense SC,portimao\n", encoding="utf-8")
    spec = {"name": "soccer", "source": {"kind": "csv", "path": str(tmp_path)},
            "relations": {"players": {"file": "players.csv", "columns": ["player", "club"]},
                          "clubs": {"file": "clubs.csv", "columns": ["club", "city"]}},
            "foreign_keys": ["players.club -> clubs.club"],
            "multihop": [{"name": "player_city", "path": ["players.club -> clubs.club"], "show": ["player"],
                          "target": "clubs.city", "basic": "Is the club {player} played for in {city}?",
                          "negated": "Is it true that the club {player} played for is not in {city}?",
                          "known": "Did {player} play for {players.club} in {city}?"}]}
    items = _items(spec)
    basic = [it for it in items if it["qtype"] == "BN(Y)"]
    assert sorted(it["hop_values"][0] for it in basic) == ["Guangzhou FC", "Hebei FC", "Manchester City",
                                                           "Portimonense SC", "SC Braga"]
    assert len({it["item_id"] for it in items}) == len(items) == 15
    assert len({it["known_group"] for it in items}) == 5
