"""kgprobe.kg.readable: id-like names are told from names, and items that would show one are rejected by group."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from kgprobe.kg.ingest import KGSource, load_kg
from kgprobe.kg.readable import is_id_like, label_report, reject_unreadable, unreadable_names


@pytest.mark.parametrize(("name", "id_like"), [
    ("Q408", True), ("P264", True), ("/m/0d05w3", True), ("/g/11b6xyz", True), ("12345", True), ("-3.5", True),
    ("9f86d081884c7d659a2feaa0", True), ("123e4567-e89b-12d3-a456-426614174000", True),
    ("Stan_Collymore", False), ("Stan Collymore", False), ("Quebec", False), ("Q", False), ("place of birth", False),
    ("deadbeef", False), ("Q408 Australia", False), ("/people/person/place_of_birth", False),
])
def test_is_id_like(name: str, id_like: bool) -> None:
    assert is_id_like(name) is id_like


@pytest.fixture()
def kg(tmp_path: Path):
    (tmp_path / "t.tsv").write_text("Q1\tP1\tQ2\nQ2\tP2\tQ3\nStan_Collymore\tP1\tQ1\n"
                                    "Q1\t/people/person/place_of_birth\t/m/0abc\n", encoding="utf-8")
    (tmp_path / "ent.tsv").write_text("Q1\tAustralia\n", encoding="utf-8")
    (tmp_path / "rel.tsv").write_text("P1\tdiplomatic relation\n", encoding="utf-8")
    con = duckdb.connect()
    load_kg(con, KGSource(name="k", triples=[tmp_path / "t.tsv"], entity_labels=tmp_path / "ent.tsv",
                          relation_labels=tmp_path / "rel.tsv"))
    yield con
    con.close()


def test_unreadable_names_and_report(kg) -> None:
    ents, rels = unreadable_names(kg, "k")
    # Q2, Q3 and the mid have no name; Stan_Collymore is its own name; Q1 has a label
    assert ents == {"Q2", "Q3", "/m/0abc"}
    assert rels == {"P2"}
    rep = label_report(kg, "k")
    assert (rep["entities"], rep["readable_entities"]) == (5, 2)
    assert rep["readable_share"] == pytest.approx(0.4)
    # a Freebase relation path is named by its last segment, and reported
    assert rep["path_relations"] == [["/people/person/place_of_birth", "place of birth"]]
    assert rep["unreadable_relations"] == ["P2"]


def test_reject_unreadable_drops_whole_groups() -> None:
    items = pa.Table.from_pylist([
        {"item_id": "a", "group_id": "g1", "question": "Does Australia have diplomatic relations with Q685?"},
        {"item_id": "b", "group_id": "g1", "question": "Does Australia have diplomatic relations with France?"},
        {"item_id": "c", "group_id": "g2", "question": "Was Stan Collymore born in 1990 in Q6850a?"},
        {"item_id": "d", "group_id": "g3", "question": "Is /m/0abc the birthplace of Australia?"},
    ])
    kept, rejects = reject_unreadable(items, {"Q685", "/m/0abc", "1990"})
    assert kept.num_rows == 0
    # 1990 is an unlabelled entity's key here, so c goes too; Q6850a is not an id of the KG
    assert sorted(r["item_id"] for r in rejects) == ["a", "b", "c", "d"]
    kept, rejects = reject_unreadable(items, {"Q685", "/m/0abc"})
    assert kept.column("item_id").to_pylist() == ["c"]
    by_id = {r["item_id"]: r for r in rejects}
    assert by_id["a"]["ids"] == ["Q685"] and by_id["d"]["ids"] == ["/m/0abc"]
    assert by_id["b"]["ids"] == [] and by_id["b"]["reason"].startswith("in a group with an item that names")
    assert reject_unreadable(items, set())[0].num_rows == 4


@pytest.mark.parametrize(("label", "steps", "clean"), [
    ("Singer-songwriter-GB", None, "Singer-songwriter"),
    ("50th Annual Grammy Awards-US", None, "50th Annual Grammy Awards"),
    ("Seiyū-GB", None, "Seiyū"),
    ("Waffen-SS", None, "Waffen-SS"),  # not a locale
    ("Me-TV", None, "Me-TV"),
    ("Jay-Z", None, "Jay-Z"),
    ("Children s Hospital", None, "Children's Hospital"),
    ("Soloist(s) Performance", None, "Soloist(s) Performance"),
    ("Selma Lagerl\\u00F6f", None, "Selma Lagerlöf"),
    ("San_Jos$00E9", None, "San_José"),  # Freebase's key escape
    ("$1000 prize", None, "$1000 prize"),  # a price, not an escape
    ("Actor-GB", ("unicode_escapes",), "Actor-GB"),  # only the steps asked for
    ("Actor-GB", (), "Actor-GB"),
])
def test_clean_label(label: str, steps, clean: str) -> None:
    from kgprobe.kg.readable import LABEL_CLEANUPS, clean_label

    assert clean_label(label, LABEL_CLEANUPS if steps is None else steps) == clean


def test_clean_label_names_unknown_steps() -> None:
    from kgprobe.kg.readable import clean_label, clean_labels

    with pytest.raises(ValueError, match="locale_suffix"):
        clean_label("x", ("lower",))
    assert clean_labels(pa.chunked_array([["Actor-GB", None]])).to_pylist() == ["Actor", None]


def test_an_id_in_a_gold_proof_rejects_its_group_as_one_in_the_question_does() -> None:
    import pyarrow as pa

    from kgprobe.suites.drowzee.suite import DrowzeeSuite

    items = pa.table({
        "item_id": ["a", "b", "c"], "group_id": ["g1", "g1", "g2"],
        "question": ["Is it true that Fritz Todt died of an illness?", "Is it true that Fritz Todt did not?",
                     "Is it true that Ada Lovelace was born in London?"],
        "gold_answer": ["No. The cause of death of Fritz Todt is Q3002150.", "Yes.", "Yes. Ada Lovelace was born in London."],
        "original_question": [None, None, None],
    })
    kept, rejects = reject_unreadable(items, {"Q3002150"})  # the question alone: nothing shows the id
    assert kept.num_rows == 3 and rejects == []
    kept, rejects = reject_unreadable(items, {"Q3002150"}, columns=DrowzeeSuite.named_text_columns)
    assert kept.column("item_id").to_pylist() == ["c"]
    assert [(r["item_id"], r["ids"]) for r in rejects] == [("a", ["Q3002150"]), ("b", [])]


def test_label_advice_says_where_the_labels_go(kg, tmp_path: Path) -> None:
    from kgprobe.kg.readable import label_advice

    report = label_report(kg, "k")
    assert label_advice("drowzee", report, rejected=0, kept=10) is None
    some = label_advice("drowzee", report, rejected=3, kept=1)
    assert "3 of its 4 items (75%)" in some and "kgs.k.entity_labels" in some and "require_labels: false" in some
    assert "Q2" in some and "P2" in some  # the ids it could not name
    everything = label_advice("drowzee", report, rejected=4, kept=0)
    assert everything.startswith("drowzee: every one of its 4 items")
    # a label file in the advised format names them: then nothing is left to advise
    (tmp_path / "ent2.tsv").write_text("Q1\tAustralia\nQ2\tFrance\nQ3\tParis\n/m/0abc\tCanberra\n", encoding="utf-8")
    (tmp_path / "rel2.tsv").write_text("P1\tdiplomatic relation\nP2\tcapital\n", encoding="utf-8")
    con = duckdb.connect()
    load_kg(con, KGSource(name="k", triples=[tmp_path / "t.tsv"], entity_labels=tmp_path / "ent2.tsv",
                          relation_labels=tmp_path / "rel2.tsv"))
    assert unreadable_names(con, "k") == (frozenset(), frozenset())


def test_wikidata12k_ships_no_entity_labels(shared_data: Path) -> None:
    """Wikidata12k's files name entities by QID only: every Drowzee question about it would show one."""
    from kgprobe.kg.readable import label_advice

    con = duckdb.connect()
    load_kg(con, KGSource(name="wikidata12k", format="temporal",
                          triples=[shared_data / "kg" / "temporal" / "wikidata12k" / "train.tsv"]))
    report = label_report(con, "wikidata12k")
    assert report["readable_share"] < 0.01 and report["entities"] > 10_000
    advice = label_advice("drowzee", report, rejected=2466, kept=0)
    assert "every one of its 2,466 items" in advice and "kgs.wikidata12k.entity_labels" in advice


def test_label_report_counts_labels_written_with_escaped_unicode(tmp_path) -> None:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    (tmp_path / "t.tsv").write_text("Q1\tP1\tQ2\nQ2\tP1\tQ3\nQ3\tP1\tG\\u00F6teborg\n", encoding="utf-8")
    (tmp_path / "l.tsv").write_text("Q1\tSelma Lagerl\\u00F6f\nQ2\tParis\nQ3\tSão Paulo\n", encoding="utf-8")
    con = duckdb.connect()
    load_kg(con, KGSource(triples=tmp_path / "t.tsv", entity_labels=tmp_path / "l.tsv", name="k"))
    rep = label_report(con, "k")
    # a label file's escape is decoded as it loads; a key without a label keeps its escape, which a question would
    # show as written (not the real "ã" of a label)
    assert con.execute("SELECT label FROM k.entities WHERE key = 'Q1'").fetchone()[0] == "Selma Lagerlöf"
    assert rep["escaped_labels"] == 1 and rep["escaped_examples"] == ["G\\u00F6teborg"]
