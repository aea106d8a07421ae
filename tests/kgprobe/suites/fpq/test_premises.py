"""kgprobe.suites.fpq.edits.check_premises: a false premise the KG makes true is rejected with its reason."""

from __future__ import annotations

import duckdb

from kgprobe.kg.ingest import create_kg_tables
from kgprobe.suites.fpq.edits import Edit, check_premises

NAMES = ["Casino Royale", "spy film", "United Kingdom", "drama", "United States", "United Kingdom ", "Spy film",
         "Michelle Ruff", "Detroit", "USA"]
#          0 Casino Royale -genre-> 1 spy film, -country-> 2 United Kingdom; 7 Michelle Ruff -born in-> 8 Detroit,
#          -nationality-> 9 USA; 3 drama -genre of-> 0 (an inverse link); 5 is a second "United Kingdom"
TRIPLES = [(0, 0, 1), (0, 1, 2), (7, 2, 8), (7, 3, 9), (3, 4, 0)]


def _con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    create_kg_tables(con)
    con.executemany("INSERT INTO entities VALUES (?, ?, ?)", [(i, f"e{i}", n) for i, n in enumerate(NAMES)])
    con.executemany("INSERT INTO relations VALUES (?, ?, ?)",
                    [(i, k, k) for i, k in enumerate(["genre", "country", "born in", "nationality", "genre of"])])
    con.executemany("INSERT INTO triples VALUES (?, ?, ?)", TRIPLES)
    return con


def test_check_premises() -> None:
    con = _con()
    edits = [
        Edit(0, 0, 1, 2, "NSC", 1, ((0, 1, 2),)),   # UK: the film's country -> rejected
        Edit(0, 0, 1, 4, "NNSC", None, None),       # United States: not linked -> kept
        Edit(0, 0, 1, 5, "NNSC", None, None),       # another entity named United Kingdom -> rejected by name
        Edit(0, 0, 1, 6, "NNSR", None, None),       # "Spy film": the true object's name -> rejected
        Edit(7, 2, 8, 9, "NSC", 1, ((7, 3, 9),)),   # born in USA, her nationality -> rejected
        Edit(0, 0, 1, 3, "NDC", 1, ((3, 4, 0),)),   # drama links back to the film -> rejected
        Edit(0, 0, 1, None, "NDC", None, None, "no different-type entity within 5 directed hops"),
    ]
    got = check_premises(con, edits)
    assert [e.false_object for e in got] == [None, 4, None, None, None, None, None]
    assert got[1] == edits[1] and got[6] == edits[6]
    reasons = [e.reason for e in got]
    assert reasons[0].startswith("the subject reaches the false object through another relation")
    assert reasons[2].startswith("the subject reaches an entity of the false object's name")
    assert reasons[3].startswith("the false object is another object of the same relation")
    assert reasons[4] == reasons[5] == reasons[0]
    assert all(e.hop is None and e.path is None for e in got if e.false_object is None)
    assert check_premises(con, []) == []


def test_unnamed_entities_are_left_out() -> None:
    from kgprobe.suites.fpq.edits import DomainSpec, reject_unnamed_objects, select_true_triples

    con = _con()
    con.execute("UPDATE entities SET label = 'Q42' WHERE id = 8")  # Detroit has no name, only its QID
    con.executemany("INSERT INTO entity_types VALUES (?, ?, ?)", [(0, "film", "film"), (7, "human", "Q5")])
    domains = {"d": DomainSpec(types=["film", "Q5"])}
    every = {t.triple for t in select_true_triples(con, domains, 10)}
    named = {t.triple for t in select_true_triples(con, domains, 10, named_only=True)}
    assert (7, 2, 8) in every and named == every - {(7, 2, 8)} and (7, 3, 9) in named
    edits = [Edit(0, 0, 1, 8, "NNSC", None, None), Edit(0, 0, 1, 4, "NNSC", None, None)]
    got = reject_unnamed_objects(con, edits)
    assert got[0].false_object is None and got[0].reason.startswith("the false object has no readable name")
    assert got[1] == edits[1]


def test_inferred_types_draw_from_the_relations_range() -> None:
    from kgprobe.suites.fpq.edits import edit, infer_types_from_relations

    con = duckdb.connect()
    create_kg_tables(con)
    names = ["Casino Royale", "spy film", "United Kingdom", "drama", "Title X", "comedy"]
    keys = ["/film/film/genre", "/film/film/country", "/media_common/netflix_genre/titles"]
    con.executemany("INSERT INTO entities VALUES (?, ?, ?)", [(i, f"e{i}", n) for i, n in enumerate(names)])
    con.executemany("INSERT INTO relations VALUES (?, ?, ?)", [(i, k, k) for i, k in enumerate(keys)])
    # the UK is a Netflix genre (head of netflix_genre/titles) and a film's country; spy film a genre and a
    # Netflix genre
    con.executemany("INSERT INTO triples VALUES (?, ?, ?)",
                    [(0, 0, 1), (4, 0, 3), (4, 0, 5), (0, 1, 2), (2, 2, 0), (1, 2, 4)])
    infer_types_from_relations(con)
    loose = {e.false_object for s in range(40) for e in edit(con, [(0, 0, 1)], methods=("NSC",), seed=s)}
    ranged = {e.false_object for s in range(40) for e in edit(con, [(0, 0, 1)], methods=("NSC",), seed=s,
                                                                ranges=True)}
    assert 2 in loose  # every type of spy film: the UK is a candidate as a Netflix genre
    assert ranged == {3, 5}  # the range of /film/film/genre: genres only
    from kgprobe.suites.fpq.edits import inferred_type_sources

    assert inferred_type_sources(con) == [
        {"key": "/film/film/genre", "head_type": "film", "tail_type": "genre", "triples": 3},
        {"key": "/media_common/netflix_genre/titles", "head_type": "netflix_genre", "tail_type": "titles", "triples": 2},
        {"key": "/film/film/country", "head_type": "film", "tail_type": "country", "triples": 1},
    ]


def test_a_coarser_place_that_holds_the_true_object_is_no_false_premise() -> None:
    con = duckdb.connect()
    create_kg_tables(con)
    names = ["William Shakespeare", "Holy Trinity Church", "Stratford-upon-Avon", "United Kingdom", "France",
             "Westminster Abbey", "London", "England", "Europe"]
    keys = ["buried_in", "located_in_city", "country", "contains", "place of birth"]
    con.executemany("INSERT INTO entities VALUES (?, ?, ?)", [(i, f"e{i}", n) for i, n in enumerate(names)])
    con.executemany("INSERT INTO relations VALUES (?, ?, ?)", [(i, k, k.replace("_", " ")) for i, k in enumerate(keys)])
    con.executemany("INSERT INTO triples VALUES (?, ?, ?)", [
        (0, 0, 1),  # Shakespeare buried in Holy Trinity Church
        (1, 1, 2),  # ... located in the city Stratford-upon-Avon
        (2, 2, 3),  # Stratford's country: the United Kingdom
        (5, 1, 6), (6, 2, 3),  # Westminster Abbey in London, in the UK (not Shakespeare's)
        (8, 3, 7),  # Europe contains England: read from the outside
        (7, 3, 2),  # England contains Stratford
    ])
    edits = [
        Edit(0, 0, 1, 3, "NDC", 3, None),   # buried in the United Kingdom: 2 containment triples out -> rejected
        Edit(0, 0, 1, 2, "NDC", 2, None),   # buried in Stratford-upon-Avon: one out -> rejected
        Edit(0, 0, 1, 7, "NDC", None, None),  # England contains Stratford -> rejected
        Edit(0, 0, 1, 8, "NDC", None, None),  # Europe: England -> Stratford -> church is 3 steps -> rejected
        Edit(0, 0, 1, 4, "NNSC", None, None),  # France holds nothing of his -> kept
        Edit(0, 0, 1, 6, "NDC", None, None),  # London: the Abbey's city, not his church's -> kept
        Edit(0, 0, 1, 5, "NSC", None, None),  # Westminster Abbey: a finer place elsewhere -> kept
    ]
    got = check_premises(con, edits)
    assert [e.false_object for e in got] == [None, None, None, None, 4, 6, 5]
    assert all(e.reason.startswith("the false object holds the true object") for e in got[:4])
    # a relation that places nothing (no containment word) is never walked
    con.execute("UPDATE relations SET label = 'twinned with', key = 'twinned_with' WHERE id = 1")
    assert [e.false_object for e in check_premises(con, edits[:2])] == [3, 2]


def test_premises_are_checked_per_subject_by_name_both_ways_and_per_relation_for_places() -> None:
    """Each test joins an edit's own subject (and, for coarser places, its own relation): a name, a link or a place
    that belongs to another subject, or to another relation of the same subject, rejects nothing."""
    con = duckdb.connect()
    create_kg_tables(con)
    names = ["Ada", "London", "Paris", "France", "Charles", "Byron", "George", "Naples", "Italy", " charles",
             "GEORGE", "Marie", "Pierre", "Oxford", "Oxfordshire", "Eve", "Lyon", "Rhone", "Kent", "England"]
    keys = ["born_in", "lived_in", "located_in", "mentor_of", "employer", "sibling"]
    con.executemany("INSERT INTO entities VALUES (?, ?, ?)", [(i, f"e{i}", n) for i, n in enumerate(names)])
    con.executemany("INSERT INTO relations VALUES (?, ?, ?)", [(i, k, k.replace("_", " ")) for i, k in enumerate(keys)])
    con.executemany("INSERT INTO triples VALUES (?, ?, ?)", [
        (0, 0, 1),  # Ada born in London
        (0, 1, 2), (2, 2, 3),  # Ada lived in Paris, in France
        (0, 1, 7), (7, 2, 8),  # ... and in Naples, in Italy: another object of lived in
        (18, 1, 0), (18, 2, 19),  # Kent -lived in-> Ada (the relation the other way), Kent in England
        (4, 3, 0),  # Charles mentor of Ada: a link into the subject
        (0, 5, 5), (6, 5, 0),  # Ada's siblings: Byron (out), George (in)
        (0, 4, 13), (13, 2, 14),  # Ada's employer Oxford, in Oxfordshire: another relation's object
        (12, 3, 11),  # Pierre mentor of Marie: not Ada's
        (15, 1, 16), (16, 2, 17),  # Eve lived in Lyon, in the Rhone
    ])
    edits = [
        Edit(0, 0, 1, 9, "NNSC", None, None),    # " charles": Charles's name, linked in through mentor of -> rejected
        Edit(0, 5, 5, 10, "NNSC", None, None),   # "GEORGE": George's name, a sibling the other way -> rejected
        Edit(0, 0, 1, 11, "NNSC", None, None),   # Marie: a name linked to Pierre, not to Ada -> kept
        Edit(15, 1, 16, 10, "NNSC", None, None),  # "GEORGE" for Eve: Ada's sibling's name -> kept
        Edit(15, 1, 16, 2, "NNSC", None, None),  # Paris for Eve: Ada's place -> kept
        Edit(0, 0, 1, 2, "NNSC", None, None),    # Paris: Ada lived there -> rejected (another relation)
        Edit(0, 1, 2, 8, "NNDC", None, None),    # Italy holds Naples, another place she lived -> rejected
        Edit(0, 1, 2, 19, "NNDC", None, None),   # England holds Kent, linked by lived in the other way -> rejected
        Edit(0, 1, 2, 14, "NNDC", None, None),   # Oxfordshire holds her employer, not a place she lived -> kept
        Edit(0, 1, 2, 17, "NNDC", None, None),   # the Rhone holds Eve's Lyon -> kept
        Edit(15, 1, 16, 3, "NNDC", None, None),  # France holds Ada's Paris, not Eve's Lyon -> kept
        Edit(0, 0, 1, 8, "NNDC", None, None),    # Italy for born in: holds no birthplace of hers -> kept
    ]
    got = check_premises(con, edits)
    assert [e.false_object for e in got] == [None, None, 11, 10, 2, None, None, None, 14, 17, 3, 8]
    assert got[0].reason.startswith("the subject reaches an entity of the false object's name through another")
    assert got[1].reason == "the false object is another object of the same relation for the subject (same name)"
    assert got[5].reason.startswith("the subject reaches the false object through another relation")
    assert all(e.reason.startswith("the false object holds the true object") for e in got[6:8])
    assert all(g == e for g, e in zip(got, edits, strict=True) if g.false_object is not None)  # kept as they were
