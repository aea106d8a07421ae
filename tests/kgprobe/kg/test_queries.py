"""kgprobe.kg.queries: linking mentions, question files, and seeded samples."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from kgprobe.errors import ConfigError
from kgprobe.kg.ingest import KGSource, load_kg
from kgprobe.kg.queries import EntityLinker, normalise_label, queries_from_file, queries_from_lists, sample_queries


@pytest.fixture()
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    (tmp_path / "kg.nt").write_text(
        "<http://dbpedia.org/resource/Marie_Curie> <http://dbpedia.org/ontology/birthPlace> <http://dbpedia.org/resource/Warsaw> .\n"
        "<http://dbpedia.org/resource/S%C3%A3o_Paulo> <http://dbpedia.org/ontology/country> <http://dbpedia.org/resource/Brazil> .\n"
        "<http://dbpedia.org/resource/Warsaw> <http://www.w3.org/2000/01/rdf-schema#label> \"Warszawa\"@en .\n"
        "<http://dbpedia.org/resource/Warsaw> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://dbpedia.org/ontology/City> .\n"
        "<http://dbpedia.org/resource/Brazil> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://dbpedia.org/ontology/Country> .\n"
        "<http://dbpedia.org/resource/S%C3%A3o_Paulo> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://dbpedia.org/ontology/City> .\n",
        encoding="utf-8",
    )
    c = duckdb.connect()
    load_kg(c, KGSource(triples=tmp_path / "kg.nt", format="ntriples"))
    return c


def test_normalise_label() -> None:
    assert normalise_label("São_Paulo") == "sao paulo"
    assert normalise_label("  Marie  Curie! ") == "marie curie"
    assert normalise_label("S%C3%A3o_Paulo") == "sao paulo"


@pytest.mark.parametrize(
    ("mention", "how"),
    [
        ("http://dbpedia.org/resource/Marie_Curie", "key"),
        ("Warszawa", "label"),
        ("marie curie", "normalised label"),
        ("http://dbpedia.org/resource/Warsaw", "key"),
        ("Sao Paulo", "normalised label"),
        ("http://dbpedia.org/resource/S%C3%A3o_Paulo", "key"),
    ],
)
def test_linking_order(con, mention: str, how: str) -> None:
    eid, method = EntityLinker(con).link(mention)
    assert eid is not None and method == how


def test_lists_keep_unmatched_mentions(con) -> None:
    q = queries_from_lists(EntityLinker(con), [{"id": "q1", "seeds": ["Warszawa", "Atlantis", "Warsaw"]}])[0]
    assert q.query_id == "q1" and len(q.seeds) == 1  # Warszawa and Warsaw are the same entity
    assert q.unmatched == ("Atlantis",)
    with pytest.raises(ConfigError, match="needs 'seeds'"):
        queries_from_lists(EntityLinker(con), [{"id": "q2"}])


def test_question_file_with_dict_cells(con, tmp_path: Path) -> None:
    f = tmp_path / "q.csv"
    f.write_text(
        ",question,dbpedia_entities,id\n"
        "0,Where was Marie Curie born?,\"{'person': 'http://dbpedia.org/resource/Marie_Curie'}\",7\n"
        "1,Tell me about Atlantis.,\"{'place': 'http://dbpedia.org/resource/Atlantis'}\",8\n",
        encoding="utf-8",
    )
    qs = queries_from_file(EntityLinker(con), f)
    assert [q.query_id for q in qs] == ["7", "8"]
    assert len(qs[0].seeds) == 1 and qs[0].text == "Where was Marie Curie born?"
    assert qs[1].seeds == () and qs[1].unmatched == ("http://dbpedia.org/resource/Atlantis",)
    with pytest.raises(ConfigError, match="no column 'entities'"):
        queries_from_file(EntityLinker(con), f, mention_column="entities")


def test_sample_is_seeded_and_per_type(con) -> None:
    a = sample_queries(con, per_type=5, seed=1)
    b = sample_queries(con, per_type=5, seed=1)
    assert a == b
    by_source = {}
    for q in a:
        by_source.setdefault(q.source, []).append(q)
    assert set(by_source) == {"sample:City", "sample:Country"}
    assert len(by_source["sample:City"]) == 2  # both cities occur in triples
    with pytest.raises(ConfigError, match="no entity of type"):
        sample_queries(con, per_type=1, types=["Planet"])


@pytest.mark.shared_data
def test_okgqa_questions_against_the_dbpedia_sample(shared_data: Path) -> None:
    con = duckdb.connect()
    load_kg(con, KGSource(triples=shared_data / "kg/dbpedia-sample/sansa_outliers_dataset.nt", format="ntriples", lenient=True))
    qs = queries_from_file(EntityLinker(con), shared_data / "seeds/okgqa/OKG/filtered_questions_50_v3.csv")
    assert len(qs) == 50
    # every mention is either linked or recorded as unmatched: none is lost
    assert all(len(q.seeds) + len(q.unmatched) >= 1 for q in qs)
    assert sum(len(q.unmatched) for q in qs) > 0
