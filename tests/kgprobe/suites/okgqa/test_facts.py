"""Atomic facts against the KG: linking, supported / contradicted / not in KG, decomposition parsing."""

from __future__ import annotations

import duckdb
import pytest

from kgprobe.suites.okgqa.facts import (
    CONTRADICTED,
    NOT_IN_KG,
    SUPPORTED,
    KGFacts,
    check_fact,
    parse_fact_list,
    split_sentences,
)

KG = KGFacts(
    entities={1: "Guernica", 2: "Pablo Picasso", 3: "Salvador Dalí", 4: "Museo Reina Sofia", 5: "Madrid",
              6: "Sofia", 7: "Spain"},
    relations={0: "painted by", 1: "housed in", 2: "located in city", 3: "influenced by"},
    relation_keys={0: "painted_by", 1: "housed_in", 2: "located_in", 3: "influenced_by"},
    triples=frozenset({(1, 0, 2), (1, 1, 4), (4, 2, 5), (3, 3, 2)}),
    functional=frozenset({0, 1, 2}),
)


@pytest.mark.parametrize("fact,label", [
    ("Guernica was painted by Pablo Picasso.", SUPPORTED),
    ("Pablo Picasso painted Guernica.", SUPPORTED),                   # the active voice of "painted by"
    ("Guernica is housed in the Museo Reina Sofia.", SUPPORTED),      # "Sofia" inside it is not linked apart
    ("Guernica was painted by Salvador Dalí.", CONTRADICTED),         # functional relation, another object
    ("Guernica is housed in Madrid.", SUPPORTED),                     # the museum lies in Madrid: coarser, true
    ("Guernica is housed in Sofia.", CONTRADICTED),
    ("Salvador Dalí was influenced by Pablo Picasso.", SUPPORTED),
    ("Pablo Picasso was influenced by Salvador Dalí.", NOT_IN_KG),    # the KG's pair reversed: direction counts
    ("Salvador Dalí was influenced by Madrid.", NOT_IN_KG),           # not functional: the KG is silent
    ("Guernica is a large oil painting.", NOT_IN_KG),                 # one entity, nothing to match
    ("Cubism changed modern art.", NOT_IN_KG),                        # no KG entity at all
])  # fmt: skip
def test_verdicts(fact, label):
    assert check_fact(fact, KG).label == label


def test_linking_prefers_the_longest_label_and_keeps_order():
    assert KG.link("The Museo Reina Sofia in Madrid shows Guernica.") == [4, 5, 1]
    assert KG.link("Sofia") == [6]
    assert KG.link("Guernicas") == []  # whole words only


def test_contradiction_names_the_kg_object():
    v = check_fact("Guernica was painted by Salvador Dalí.", KG)
    assert v.ids == (1, 0, 2) and v.triple == ("1", "painted_by", "2") and v.reason == "functional" and v.decidable


def test_embedding_match_supports_a_paraphrase():
    class Near:
        """Close to "housed in" alone: the relation phrase is compared with relation labels."""

        def similarity(self, a, b):
            import numpy as np

            return np.array([[0.9 if y == "housed in" else 0.2 for y in b] for _ in a])

    fact = "Guernica sits in the Museo Reina Sofia."  # no word of "housed in", its forms or its synonyms
    assert check_fact(fact, KG).label == NOT_IN_KG
    assert check_fact(fact, KG, embedder=Near(), threshold=0.8).label == SUPPORTED


def test_evidence_round_trip_and_duckdb(tmp_path):
    assert KGFacts.from_evidence({"kg": KG.to_evidence()}) == KG
    path = tmp_path / "kg.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE entities (id BIGINT, key VARCHAR, label VARCHAR)")
    con.execute("CREATE TABLE relations (id BIGINT, key VARCHAR, label VARCHAR)")
    con.execute("CREATE TABLE triples (head BIGINT, relation BIGINT, tail BIGINT)")
    con.execute("INSERT INTO entities VALUES (1, 'a', 'A'), (2, 'b', 'B'), (3, 'c', 'C')")
    con.execute("INSERT INTO relations VALUES (0, 'r', 'rel'), (1, 's', 'sib')")
    con.execute("INSERT INTO triples VALUES (1, 0, 2), (1, 1, 2), (1, 1, 3)")
    con.close()
    kg = KGFacts.from_duckdb(path)
    assert kg.triples == {(1, 0, 2), (1, 1, 2), (1, 1, 3)}
    assert kg.functional == frozenset()  # one head says nothing: a relation needs min_subjects heads
    kg = KGFacts.from_duckdb(path, min_subjects=1)
    assert kg.functional == {0}  # "sib" has two tails for head 1


def test_decomposition_parsing():
    assert parse_fact_list("- A is B.\n- C is D.\n") == ["A is B.", "C is D."]
    assert parse_fact_list("1. A is B.\n2) C is D.") == ["A is B.", "C is D."]
    assert parse_fact_list("A is B. C is D here.") == ["A is B.", "C is D here."]
    assert parse_fact_list("") is None and parse_fact_list(None) is None
    assert split_sentences("Yes.") == []
    assert split_sentences("Guernica was painted by Picasso. Yes.\nIt hangs in Madrid now.") == [
        "Guernica was painted by Picasso.", "It hangs in Madrid now."]
