"""FDs joined to a KG: a BN(Y) question on a record whose triple is in the KG asserts that triple (for the
cross-suite consistency view), and ``prefer_kg`` samples such records first."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import duckdb
import pytest

from kgprobe.errors import ConfigError
from kgprobe.kg.ingest import KGSource, load_kg
from kgprobe.suites.base import ItemSource, check_items
from kgprobe.suites.erbench import ERBenchSuite, load_erdb
from kgprobe.suites.erbench.spec import KGLink, parse_spec

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"
SAMPLE = EXAMPLES / "sample"


@pytest.fixture(scope="module")
def kg_and_db(sample_spec_data):
    """The sample KG in schema ``sample`` and the sample database in ``erdb``, in one DuckDB (as the warehouse)."""
    con = duckdb.connect()
    load_kg(con, KGSource(triples=[SAMPLE / "triples.tsv"], format="tsv", entity_labels=SAMPLE / "entity_labels.tsv",
                          relation_labels=SAMPLE / "relation_labels.tsv", name="sample"))
    load_erdb(con, parse_spec(sample_spec_data))
    kg = {tuple(r) for r in con.execute(
        "SELECT h.label, r.key, t.label FROM sample.triples x JOIN sample.entities h ON h.id = x.head "
        "JOIN sample.entities t ON t.id = x.tail JOIN sample.relations r ON r.id = x.relation").fetchall()}
    return con, kg


def _items(con, kg: str | None, **settings) -> list[dict]:
    suite = ERBenchSuite()
    s = suite.Settings.model_validate({"db": "sample/erdb/erdb.yaml", "question_types": ["binary"], **settings})
    result = suite.items(ItemSource(con=con, kg=kg, snapshot_id="", settings=s, seed=0, config_dir=EXAMPLES))
    check_items("erbench", result.items)
    return result.items.to_pylist()


def test_the_sample_spec_links_movies_and_capitals_to_the_kg(sample_spec_data) -> None:
    spec = parse_spec(sample_spec_data)
    links = {fd.name: fd.kg for fd in spec.fds if fd.kg}
    assert links == {"movie_title": KGLink("directed_by", "title", "director"),
                     "country_by_capital": KGLink("capital_of", "capital", "name")}


def test_bn_y_asserts_exactly_the_records_whose_triple_the_kg_holds(kg_and_db) -> None:
    con, kg = kg_and_db
    rows = _items(con, "sample")
    asserted, by_fd = [], {"movie_title": 0, "country_by_capital": 0}
    for r in rows:
        evidence = json.loads(r["evidence"])
        record = evidence["record"]
        if r["qtype"] != "BN(Y)" or r["fd"] not in by_fd:
            assert "asserts" not in evidence  # BN(N), known-entity prompts and unlinked FDs assert nothing
            continue
        head, rel, tail = ((record["title"], "directed_by", record["director"]) if r["fd"] == "movie_title"
                           else (record["capital"], "capital_of", record["name"]))
        if (head, rel, tail) in kg:
            assert evidence["asserts"] == [head, rel, tail]
            asserted.append(r)
            by_fd[r["fd"]] += 1
        else:
            assert "asserts" not in evidence
    # the sample KG has 13 of the films' director triples and 26 of the countries' capitals
    assert by_fd == {"movie_title": 13, "country_by_capital": 26}
    assert all(r["expected"] == "yes" for r in asserted)


def test_without_a_kg_nothing_is_asserted(kg_and_db) -> None:
    con, _ = kg_and_db
    assert not any("asserts" in json.loads(r["evidence"]) for r in _items(con, None))


@pytest.mark.parametrize("prefer", [False, True])
def test_prefer_kg_samples_the_records_the_kg_holds_first(kg_and_db, prefer) -> None:
    con, _ = kg_and_db
    rows = _items(con, "sample", limit_per_fd=10, prefer_kg=prefer)
    bn_y = [r for r in rows if r["qtype"] == "BN(Y)"]
    counts = {fd: sum(1 for r in bn_y if r["fd"] == fd) for fd in ("movie_title", "country_by_capital", "olympics_city")}
    assert counts == {"movie_title": 10, "country_by_capital": 10, "olympics_city": 10}
    linked = {fd: sum(1 for r in bn_y if r["fd"] == fd and "asserts" in json.loads(r["evidence"]))
              for fd in ("movie_title", "country_by_capital")}
    if prefer:
        assert linked == {"movie_title": 10, "country_by_capital": 10}
    else:  # a seeded spread: some records are in the KG, not all
        assert 0 < linked["movie_title"] + linked["country_by_capital"] < 20
    # the unlinked FD samples the same records either way
    olympics = sorted(r["item_id"] for r in bn_y if r["fd"] == "olympics_city")
    again = _items(con, "sample", limit_per_fd=10, prefer_kg=not prefer)
    assert olympics == sorted(r["item_id"] for r in again if r["fd"] == "olympics_city" and r["qtype"] == "BN(Y)")


def test_a_kg_that_is_not_loaded_is_a_clear_error(sample_spec_data) -> None:
    con = duckdb.connect()
    load_erdb(con, parse_spec(sample_spec_data))
    with pytest.raises(ConfigError, match="'nowhere'.*not loaded"):
        _items(con, "nowhere")


@pytest.mark.parametrize(("kg", "match"), [
    ({"relation": "directed_by", "head": "title", "tail": "budget"}, r"fds\[movie_title\]\.kg\.tail.*budget"),
    ({"relation": "", "head": "title", "tail": "director"}, r"kg\.relation"),
    ({"relation": "directed_by", "head": "title", "tail": "title"}, "different columns"),
    ({"relation": "directed_by", "head": "title", "tail": "director", "inverse": True}, r"unknown key\(s\) \['inverse'\]"),
    ("directed_by", "expected a mapping"),
])
def test_a_bad_kg_link_names_the_fd_and_key(sample_spec_data, kg, match) -> None:
    data = copy.deepcopy(sample_spec_data)
    data["fds"][0]["kg"] = kg
    with pytest.raises(ConfigError, match=match):
        parse_spec(data)


def test_a_kg_link_needs_a_binary_question(sample_spec_data) -> None:
    data = copy.deepcopy(sample_spec_data)
    mc_only = next(f for f in data["fds"] if f["name"] == "movie_facts")
    mc_only["kg"] = {"relation": "directed_by", "head": "title", "tail": "director"}
    with pytest.raises(ConfigError, match=r"fds\[movie_facts\]\.kg: only a binary question"):
        parse_spec(data)
