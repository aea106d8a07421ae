"""OKGQA questions: the taxonomy, templates over the sample KG, imported CSVs (own sample and OKGQA's released
ones), generated JSON validation, and the queries they become."""

from __future__ import annotations

import json

import pytest

from kgprobe.generation.backends.reference import ReferenceBackend, open_gold
from kgprobe.generation.records import Prompt, SamplingParams
from kgprobe.kg.queries import EntityLinker, okgqa_query_id, okgqa_question_queries
from kgprobe.suites.okgqa.questions import (
    SUBTYPES,
    TYPES,
    UNKNOWN_SUBTYPE,
    generation_prompt,
    infer_subtype,
    parse_generated,
    questions_from_csv,
    subtype_of,
)


def test_taxonomy_is_five_types_of_two_subtypes():
    assert len(SUBTYPES) == 10 and set(SUBTYPES.values()) == set(TYPES)
    assert all(list(SUBTYPES.values()).count(t) == 2 for t in TYPES)
    assert subtype_of("Contrast_Analysis") == ("comparative", "contrast analysis")
    # a bare type names no sub-type: it is not its first sub-type
    assert subtype_of("predictive") == ("predictive", UNKNOWN_SUBTYPE)
    assert subtype_of("poetry") is None


def test_templates_fill_fitting_types(sample_build, sample_con):
    qs = sample_build["questions"]
    assert {q["subtype"] for q in qs} >= {"character description", "relationship explanation", "contrast analysis"}
    types: dict[int, set[str]] = {}
    for e, t in sample_con.execute("SELECT entity, type FROM entity_types").fetchall():
        types.setdefault(e, set()).add(t)
    for q in qs:
        assert q["rejected"] is None and q["seeds"] and q["provenance"].startswith("template:")
        if q["subtype"] == "character description":
            assert types[q["seeds"][0]] & {"painter", "composer", "writer", "scientist", "politician", "monarch",
                                            "poet", "architect", "sculptor", "philosopher", "film director",
                                            "playwright", "mathematician", "activist", "engineer", "actor",
                                            "musician", "pope", "person"}
        if q["subtype"] == "contrast analysis":
            assert len(q["seeds"]) == 2 and types[q["seeds"][0]] & types[q["seeds"][1]]
        for label in json.loads(q["placeholders"]).values():
            assert label in q["question"]
    # the sample has no events: that shape is reported, not silently dropped
    assert any(r["template"] == "event-desc-v1" for r in sample_build["template_rejects"])
    queries = okgqa_question_queries(qs)
    assert [q.query_id for q in queries] == [okgqa_query_id(q["question_id"]) for q in qs]
    assert queries[0].seeds == tuple(qs[0]["seeds"])


def test_csv_import_links_iris_and_rejects_what_does_not_link(tmp_path, sample_con):
    path = tmp_path / "q.csv"
    path.write_text(
        ",question,type,placeholders,naturalness,difficulty,dbpedia_entities\n"
        "0,Describe Marie Curie's work.,character description,{'person': 'Marie Curie'},high,easy,"
        "{'person': 'http://dbpedia.org/resource/Marie_Curie'}\n"
        "1,Compare Paris and Rome.,contrast analysis,\"{'entity A': 'Paris', 'entity B': 'Rome'}\",high,medium,"
        "\"{'entity A': 'http://dbpedia.org/resource/Paris', 'entity B': 'http://dbpedia.org/resource/Rome'}\"\n"
        "2,What about Atlantis?,trend prediction,{'entity': 'Atlantis'},high,hard,"
        "{'entity': 'http://dbpedia.org/resource/Atlantis'}\n", encoding="utf-8")
    qs = questions_from_csv(EntityLinker(sample_con), path, snapshot_id="s")
    assert [len(q.seeds) for q in qs] == [1, 2, 0]
    assert qs[0].rejected is None and qs[0].type == "descriptive" and qs[0].provenance == "q.csv:2"
    assert qs[2].rejected == "no entity links to this KG" and qs[2].unmatched == ("http://dbpedia.org/resource/Atlantis",)
    assert okgqa_question_queries([q.as_row() for q in qs])[-1].query_id == okgqa_query_id(qs[1].question_id)


@pytest.mark.shared_data
def test_okgqa_released_questions_load_as_is(shared_data, sample_con):
    path = shared_data / "seeds" / "okgqa" / "OKG" / "filtered_questions_50_v3.csv"
    if not path.exists():
        pytest.skip(f"{path} not found")
    qs = questions_from_csv(EntityLinker(sample_con), path)
    assert len(qs) >= 40
    assert {q.type for q in qs if q.type} <= set(TYPES)
    # the released file gives types only: every sub-type is inferred from Table 1's phrasings or unknown
    assert all(q.subtype == UNKNOWN_SUBTYPE or q.subtype.endswith(" (inferred)") for q in qs)
    assert sum(q.subtype.endswith(" (inferred)") for q in qs) >= 0.8 * len(qs)
    linked = [q for q in qs if q.rejected is None]
    # the sample KG is small: some of OKGQA's entities (Marie Curie, Paris, ...) are in it, most are not
    assert 0 < len(linked) < len(qs)
    assert all(all(m.startswith("http://dbpedia.org/resource/") for m in q.mentions) for q in qs if q.mentions)


@pytest.mark.parametrize("question,qtype,want", [
    ("Please describe Marie Curie's contributions to the field of chemistry.", "descriptive", "character description"),
    ("Provide a detailed description of the background and course of the French Revolution.", "descriptive",
     "event description"),
    ("Why did Nixon choose to resign from the presidency in 1974?", "explanatory", "cause explanation"),
    ("Explain the relationship between Alexander the Great and Aristotle and its significance.", "explanatory",
     "relationship explanation"),
    ("Based on Tesla's historical behavior, in which fields do you think it might innovate in the future?",
     "predictive", "trend prediction"),
    ("Based on the current international situation, how do you predict climate change policies will develop?",
     "predictive", "outcome prediction"),
    ("Compare and contrast the leadership styles of Steve Jobs and Bill Gates.", "comparative", "contrast analysis"),
    ("Compare the impact of World War I and World War II on the global order.", "comparative",
     "historical comparison"),
    ("How do you evaluate Martin Luther King's impact on the civil rights movement?", "critical",
     "evaluation and reflection"),
    ("How do you think machine learning technology can be applied to medical diagnostics?", "critical",
     "application and practice"),
    ("What is the capital of France?", "descriptive", None),
    # a phrasing of another type's sub-type does not count
    ("Why did Nixon resign?", "critical", None),
])  # fmt: skip
def test_subtype_inferred_from_table1_phrasings(question, qtype, want):
    assert infer_subtype(question, qtype) == want


def test_csv_with_a_bare_type_marks_its_subtype_inferred_or_unknown(tmp_path, sample_con):
    path = tmp_path / "q.csv"
    path.write_text(
        ",question,type,placeholders,naturalness,difficulty,dbpedia_entities\n"
        "0,Why did Marie Curie move to Paris?,explanatory,{'person': 'Marie Curie'},high,easy,"
        "{'person': 'http://dbpedia.org/resource/Marie_Curie'}\n"
        "1,What did Marie Curie eat?,predictive,{'person': 'Marie Curie'},high,easy,"
        "{'person': 'http://dbpedia.org/resource/Marie_Curie'}\n", encoding="utf-8")
    qs = questions_from_csv(EntityLinker(sample_con), path)
    assert [(q.type, q.subtype) for q in qs] == [("explanatory", "cause explanation (inferred)"),
                                                 ("predictive", UNKNOWN_SUBTYPE)]
    assert all(q.rejected is None for q in qs)


def _gen(obj) -> str:
    return "Here it is: " + json.dumps(obj)


@pytest.mark.parametrize("obj,reason", [
    ({"question": "Compare Paris and Rome.", "type": "contrast analysis",
      "placeholders": {"entity A": "Paris", "entity B": "Rome"}, "naturalness": "high", "difficulty": "easy",
      "dbpedia_entities": {"entity A": "http://dbpedia.org/resource/Paris",
                           "entity B": "http://dbpedia.org/resource/Rome"}}, None),
    ({"question": "Q?", "type": "contrast analysis", "placeholders": {}, "naturalness": "high"}, "missing field"),
    ({"question": "Q?", "type": "gossip", "placeholders": {}, "naturalness": "high", "difficulty": "easy",
      "dbpedia_entities": {"a": "Paris"}}, "unknown type"),
    ({"question": "Q?", "type": "trend prediction", "placeholders": {}, "naturalness": "superb", "difficulty": "easy",
      "dbpedia_entities": {"a": "Paris"}}, "naturalness"),
    ({"question": "Q?", "type": "trend prediction", "placeholders": {}, "naturalness": "high", "difficulty": "easy",
      "dbpedia_entities": {"a": "http://dbpedia.org/resource/Atlantis"}}, "no entity links"),
])  # fmt: skip
def test_generated_questions_are_validated_and_linked(obj, reason, sample_con):
    q = parse_generated(_gen(obj), linker=EntityLinker(sample_con), generator="g", index=0)
    if reason is None:
        assert q.rejected is None and len(q.seeds) == 2 and q.type == "comparative" and q.source == "generated"
    else:
        assert reason in q.rejected
    assert "no JSON" in parse_generated("I cannot", linker=EntityLinker(sample_con), generator="g", index=1).rejected


def test_generation_prompt_is_d2():
    system, user = generation_prompt("trend prediction", ["Vienna"])
    assert system.startswith("Generate open-ended questions about different types: character description")
    assert '"dbpedia_entities"' in user and "Vienna" in user


def test_reference_backend_open_kind():
    gold = open_gold("Fact one.\nFact two.", ["A false fact."])
    p = Prompt(item_id="i", text="Question: q\n\nAnswer:", template_id="t", gold=gold, answer_kind="open")
    params = SamplingParams(n=1, temperature=0.0)
    assert ReferenceBackend("oracle").generate([p], params)[0][0].text == "Fact one.\nFact two."
    assert ReferenceBackend("random").generate([p], params)[0][0].text == "A false fact."
    assert ReferenceBackend("always-yes").generate([p], params)[0][0].text == "Yes."
    bad = Prompt(item_id="i", text="x", template_id="t", gold="not json", answer_kind="open")
    assert ReferenceBackend("oracle").generate([bad], params)[0][0].error


@pytest.mark.parametrize("seed", [0, 7])
def test_template_fills_are_the_first_in_the_seeded_orders(seed):
    # the database orders and cuts; the reference walks every fitting entity in Python as the orders say: a
    # head's first pair by md5 of "seed:head:tail" (one question per head), single entities by their content id,
    # each type's pool (an entity in the first of its types) in md5 order of "seed:id", paired two by two
    import hashlib

    import duckdb
    import numpy as np

    from kgprobe.sql import create_kg_tables
    from kgprobe.suites.base import content_id
    from kgprobe.suites.okgqa.questions import QuestionTemplate, template_questions

    rng = np.random.default_rng(seed)
    n = 300
    con = duckdb.connect()
    create_kg_tables(con)
    con.executemany("INSERT INTO entities VALUES (?, ?, ?)", [(i, f"e{i}", f"Entity {i}") for i in range(n)])
    con.execute("INSERT INTO relations VALUES (0, 'r', 'r')")
    triples = {(int(h), 0, int(t)) for h, t in zip(rng.integers(0, n - 20, 1500), rng.integers(0, n - 20, 1500),
                                                    strict=True)}  # the last 20 entities are in no triple
    con.executemany("INSERT INTO triples VALUES (?, ?, ?)", sorted(triples))
    types = {(i, t) for i in range(n) for t in ("person", "film", "city") if rng.random() < 0.4}
    con.executemany("INSERT INTO entity_types VALUES (?, ?, ?)", [(e, t, t) for e, t in sorted(types)])
    md5 = lambda *parts: hashlib.md5(":".join(map(str, parts)).encode()).hexdigest()  # noqa: E731
    typed = lambda ts: {e for e, t in types if t in ts}  # noqa: E731
    in_kg = {e for h, _, t in triples for e in (h, t)}
    templates = (QuestionTemplate("one", "character description", "About {a}.", ("person", "city"),
                                  placeholders=("person",)),
                 QuestionTemplate("pair", "contrast analysis", "{a} and {b}?", ("person", "film"), pair="same_type",
                                  placeholders=("entity A", "entity B")),
                 QuestionTemplate("linked", "cause explanation", "Why {a} with {b}?", ("person",), ("city", "film"),
                                  "linked", ("person", "entity")))
    singles = sorted(typed({"person", "city"}) & in_kg, key=lambda e: content_id(seed, e))
    pools: dict[str, list[int]] = {}
    for e in sorted(typed({"person", "film"}) & in_kg):
        first = min(t for x, t in types if x == e and t in ("person", "film"))
        pools.setdefault(first, []).append(e)
    pairs = [(p[i], p[i + 1]) for _, p in sorted(pools.items())
             for p in [sorted(p, key=lambda e: (md5(seed, e), e))] for i in range(0, len(p) - 1, 2)]
    pairs.sort(key=lambda ab: content_id(seed, *ab))
    linked, used = [], set()
    heads, tails = typed({"person"}), typed({"city", "film"})
    for h, t in sorted({(h, t) for h, _, t in triples if h != t and h in heads and t in tails},
                       key=lambda ht: (md5(seed, *ht), *ht)):
        if h not in used:
            used.add(h)
            linked.append((h, t))
    for k in (1, 5, 1000):
        got, rejects = template_questions(con, templates, per_template=k, seed=seed)
        assert rejects == []
        by = {tpl.id: [q.seeds for q in got if q.provenance == f"template:{tpl.id}"] for tpl in templates}
        assert by["one"] == [(e,) for e in singles[:k]]
        assert by["pair"] == pairs[:k]
        assert by["linked"] == linked[:k]
    assert len(singles) > 50 and len(pairs) > 20 and len(linked) > 20  # k = 1000 takes them all
