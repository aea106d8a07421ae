"""The derivation rules in SQL over the sample KG: proofs, in-KG marks, no contradicted negation, caps, proposals."""

from __future__ import annotations

from collections import Counter

import pytest

from kgprobe.errors import ConfigError
from kgprobe.suites.drowzee.rules import RuleConfig, derive, propose_properties

from .conftest import SAMPLE_SETTINGS


def _config(**over) -> RuleConfig:
    s = {k: v for k, v in SAMPLE_SETTINGS.items() if k not in ("n_formulas", "open_end")}
    s.update(over)
    return RuleConfig(negation=tuple(s["negation"]), inverse=s["inverse"], inverse_labels=s["inverse_labels"],
                      symmetric=tuple(s["symmetric"]), transitive=tuple(s["transitive"]),
                      compositions=tuple(tuple(c) for c in s["compositions"]), same=tuple(s["same"]),
                      per_subject=s["per_subject"], per_rule=s["per_rule"], derived_only=s.get("derived_only", True))


def _kg(con):
    rel = {k: i for i, k in con.execute("SELECT id, key FROM relations").fetchall()}
    ent = {k: i for i, k in con.execute("SELECT id, key FROM entities").fetchall()}
    triples = set(con.execute("SELECT head, relation, tail FROM triples").fetchall())
    return rel, ent, triples


def test_every_rule_derives_facts_with_premises_from_the_kg(sample_kg) -> None:
    con, _ = sample_kg
    rel, _ent, triples = _kg(con)
    for derived_only in (True, False):
        facts = derive(con, _config(derived_only=derived_only), seed=0)
        assert set(Counter(f.rule for f in facts)) == {"negation", "inverse", "symmetric", "transitive", "composition",
                                                       "same"}
        for f in facts:
            assert f.premises and all(p in triples for p in f.premises), f
            if f.rule != "negation":
                assert f.in_kg == ((f.subject, rel.get(f.relation, -1), f.object) in triples), f
        stored = [f for f in facts if f.in_kg and f.rule in ("inverse", "symmetric", "transitive", "composition")]
        assert (not stored) if derived_only else stored


def test_stored_share_of_each_rule_is_counted_before_the_caps(sample_kg) -> None:
    con, _ = sample_kg
    rel, _, triples = _kg(con)
    report: dict = {}
    derive(con, _config(per_rule=5), seed=0, report=report)
    # the symmetric relations' edges whose reverse the KG also states, counted directly
    sym = {rel[k] for k in ("spouse", "sibling", "shares_border_with")}
    edges = [(h, r, t) for h, r, t in triples if r in sym and h != t]
    assert report["symmetric"]["candidates"] == len(edges)
    assert report["symmetric"]["stored"] == sum((t, r, h) in triples for h, r, t in edges) > 0
    assert 0 < report["symmetric"]["stored_share"] < 1 and set(report) == {"inverse", "symmetric", "transitive",
                                                                            "composition"}


def test_negation_is_never_contradicted_and_has_the_true_fact_as_proof(sample_kg) -> None:
    con, _ = sample_kg
    rel, _, triples = _kg(con)
    neg = [f for f in derive(con, _config(), seed=0) if f.rule == "negation"]
    assert len(neg) == 40  # the per-rule cap of the sample settings
    for f in neg:
        assert (f.subject, rel[f.relation], f.object) not in triples  # the negated statement is not a KG fact
        (h, r, t), = f.premises
        assert (h, r) == (f.subject, rel[f.relation]) and t != f.object and not f.truth


def test_symmetric_inverse_and_transitive_facts(sample_kg) -> None:
    con, _ = sample_kg
    rel, ent, _ = _kg(con)
    facts = derive(con, _config(per_rule=300), seed=0)
    keyed = {(f.rule, f.relation, f.subject, f.object): f for f in facts}
    # Brazil -> Colombia is stated one way only: the symmetric rule derives Colombia -> Brazil, not yet in the KG
    f = keyed[("symmetric", "shares_border_with", ent["Colombia"], ent["Brazil"])]
    assert not f.in_kg and f.premises == ((ent["Brazil"], rel["shares_border_with"], ent["Colombia"]),)
    # father(Cosima Wagner, Franz Liszt) -> child(Franz Liszt, Cosima Wagner): no child triple says so
    f = keyed[("inverse", "child", ent["Franz_Liszt"], ent["Cosima_Wagner"])]
    assert not f.in_kg and f.truth
    # child(Lord Byron, Ada Lovelace) is a KG triple: asked only when stored facts are asked too
    assert ("inverse", "child", ent["Lord_Byron"], ent["Ada_Lovelace"]) not in keyed
    every = derive(con, _config(per_rule=300, derived_only=False), seed=0)
    assert {(f.rule, f.relation, f.subject, f.object): f for f in every}[
        ("inverse", "child", ent["Lord_Byron"], ent["Ada_Lovelace"])].in_kg
    # located_in(Louvre, Paris), located_in(Paris, France) -> located_in(Louvre, France)
    f = keyed[("transitive", "located_in", ent["Louvre"], ent["France"])]
    assert f.premises == ((ent["Louvre"], rel["located_in"], ent["Paris"]), (ent["Paris"], rel["located_in"], ent["France"]))
    same = [f for f in facts if f.rule == "same" and f.relation == "directed_by"]
    assert same and all(f.premises[0][2] == f.premises[1][2] and f.subject != f.object for f in same)


def test_caps_per_subject_and_per_rule_and_seeded_order(sample_kg) -> None:
    con, _ = sample_kg
    facts = derive(con, _config(per_subject=2, per_rule=25), seed=3)
    assert max(Counter((f.rule, f.subject) for f in facts).values()) <= 2
    assert max(Counter(f.rule for f in facts).values()) <= 25
    assert facts == derive(con, _config(per_subject=2, per_rule=25), seed=3)
    assert facts != derive(con, _config(per_subject=2, per_rule=25), seed=4)


def test_unknown_relations_are_config_errors(sample_kg) -> None:
    con, _ = sample_kg
    with pytest.raises(ConfigError, match="suites.drowzee.symmetric.*borders_on"):
        derive(con, _config(symmetric=("borders_on",)), seed=0)


def test_properties_proposed_from_the_data(sample_kg) -> None:
    con, _ = sample_kg
    props = propose_properties(con, threshold=0.95)
    sym = {r["key"]: r for r in props["symmetric"]}
    assert "shares_border_with" in sym and sym["shares_border_with"]["edges"] == 50
    assert sym["shares_border_with"]["reversed"] == 48 and "born_in" not in sym
    assert {"born_in", "died_in", "capital_of"} <= {r["key"] for r in props["functional"]}
    assert "located_in" not in {r["key"] for r in props["transitive"]}  # its chains are not closed in the data


def test_proposals_find_inverse_pairs() -> None:
    import duckdb

    from kgprobe.sql import create_kg_tables

    con = duckdb.connect()
    create_kg_tables(con)
    con.execute("INSERT INTO relations VALUES (1, 'father', 'father'), (2, 'child', 'child'), (3, 'likes', 'likes')")
    con.execute("INSERT INTO entities SELECT i, 'e' || i, 'E' || i FROM range(10) t(i)")
    con.execute("INSERT INTO triples VALUES (1,1,2),(3,1,4),(5,1,6),(2,2,1),(4,2,3),(6,2,5),(1,3,7),(8,3,1)")
    props = propose_properties(con, threshold=0.95, min_support=3)
    assert [(r["relation"], r["inverse"], r["share"]) for r in props["inverse"]] == [("child", "father", 1.0)]
    transitive = derive(con, RuleConfig(negation=(), transitive=("likes",)), seed=0)
    assert [(f.subject, f.object) for f in transitive] == [(8, 7)]
