"""Statements and verified negatives: checked against the KG with plain Python sets, on the sample KG and on tiny
KGs built to trip each rule."""

from __future__ import annotations

from collections import Counter, defaultdict

import duckdb
import pytest

from kgprobe.errors import ConfigError
from kgprobe.suites.base import check_items
from kgprobe.suites.grapheval.statements import (
    StatementOptions,
    build_statements,
    verify_negatives,
)
from kgprobe.suites.grapheval.templates import resolve_templates, split_template

from .conftest import SAMPLE, tiny_kg


def _kg(con: duckdb.DuckDBPyConnection):
    triples = set(con.execute("SELECT h.key, r.key, t.key FROM triples x JOIN entities h ON h.id = x.head "
                              "JOIN relations r ON r.id = x.relation JOIN entities t ON t.id = x.tail").fetchall())
    label = dict(con.execute("SELECT key, lower(label) FROM entities").fetchall())
    types = defaultdict(set)
    for k, t in con.execute("SELECT e.key, et.type FROM entity_types et JOIN entities e ON e.id = et.entity").fetchall():
        types[k].add(t)
    return triples, label, types


@pytest.fixture(scope="module")
def sample_set(sample_con):
    return build_statements(sample_con, StatementOptions(per_relation=4, negatives=3), snapshot_id="s", seed=7)


def test_sample_negatives_are_false_in_the_kg(sample_con, sample_set) -> None:
    triples, label, _ = _kg(sample_con)
    surface = {(label[h], r, label[t]) for h, r, t in triples}
    rows = sample_set.items.to_pylist()
    check_items("grapheval", sample_set.items)
    groups = defaultdict(list)
    for r in rows:
        groups[r["group_id"]].append(r)
    positive_texts = {r["question"] for r in rows if r["polarity"] == "positive"}
    assert len(positive_texts) == sum(r["polarity"] == "positive" for r in rows)  # no two positives read alike
    for members in groups.values():
        pos = [m for m in members if m["polarity"] == "positive"]
        negs = [m for m in members if m["polarity"] == "negative"]
        assert len(pos) == 1 and 1 <= len(negs) <= 3 and all(n["negatives"] == len(negs) for n in members)
        p = pos[0]
        assert (p["head_key"], p["relation_key"], p["tail_key"]) in triples and p["expected"] == "true"
        assert len({n["question"] for n in negs}) == len(negs)
        for n in negs:
            t = (n["head_key"], n["relation_key"], n["tail_key"])
            assert t not in triples and (label[t[0]], t[1], label[t[2]]) not in surface
            assert n["question"] not in positive_texts and n["expected"] == "false"
            changed = [part for part, a, b in zip(("head", "relation", "tail"), t,
                                                  (p["head_key"], p["relation_key"], p["tail_key"])) if a != b]
            assert changed == [n["corrupted"]]
    per_relation = Counter(r["relation_key"] for r in rows if r["polarity"] == "positive")
    assert max(per_relation.values()) <= 4
    assert len(per_relation) == sample_con.execute("SELECT count(*) FROM relations").fetchone()[0]
    assert sample_set.metadata["negatives"] == sum(r["polarity"] == "negative" for r in rows)


def test_typed_corruption_keeps_the_type(sample_con, sample_set) -> None:
    _, _, types = _kg(sample_con)
    rows = sample_set.items.to_pylist()
    pos = {r["group_id"]: r for r in rows if r["polarity"] == "positive"}
    checked = 0
    for n in rows:
        if n["polarity"] != "negative" or n["corrupted"] not in ("head", "tail"):
            continue
        p = pos[n["group_id"]]
        old, new = (p["head_key"], n["head_key"]) if n["corrupted"] == "head" else (p["tail_key"], n["tail_key"])
        assert types[old] & types[new], (old, new)
        checked += 1
    assert checked > 100


def test_uniform_corruption_crosses_types(sample_con) -> None:
    _, _, types = _kg(sample_con)
    s = build_statements(sample_con, StatementOptions(per_relation=4, corruption="uniform", parts=("tail",)), seed=7)
    rows = s.items.to_pylist()
    pos = {r["group_id"]: r for r in rows if r["polarity"] == "positive"}
    crossed = sum(not (types[pos[n["group_id"]]["tail_key"]] & types[n["tail_key"]])
                  for n in rows if n["polarity"] == "negative")
    assert crossed > 0.5 * sum(n["polarity"] == "negative" for n in rows)
    assert {n["corrupted"] for n in rows if n["polarity"] == "negative"} == {"tail"}


def test_seeded_and_stable(sample_con, sample_set) -> None:
    again = build_statements(sample_con, StatementOptions(per_relation=4, negatives=3), snapshot_id="s", seed=7)
    assert again.items.equals(sample_set.items)
    other = build_statements(sample_con, StatementOptions(per_relation=4, negatives=3), snapshot_id="s", seed=8)
    assert set(other.items.column("item_id").to_pylist()) != set(sample_set.items.column("item_id").to_pylist())
    # every triple: the same positives' negatives do not depend on the cap (draws hash the triple, not its rank)
    full = build_statements(sample_con, StatementOptions(per_relation=None, negatives=3), snapshot_id="s", seed=7)
    assert full.metadata["positives_drawn"] == sample_con.execute("SELECT count(*) FROM triples").fetchone()[0]
    assert set(sample_set.items.column("item_id").to_pylist()) <= set(full.items.column("item_id").to_pylist())


def test_blocks_and_threads_do_not_change_the_draw(sample_con, monkeypatch) -> None:
    import numpy as np

    from kgprobe.suites.grapheval import statements

    def draw():
        d = statements.draw_statements(sample_con, StatementOptions(per_relation=None, negatives=3), seed=5,
                                       rejects=True)
        return d, [t.to_list() for t in d.texts(sample_con)]

    (one, one_texts) = draw()
    monkeypatch.setattr(statements, "_BLOCK", 7)  # many small blocks, several per thread, and the texts in blocks
    monkeypatch.setattr(statements, "_THREADS", 3)
    (many, many_texts) = draw()
    assert one.neg_part.size > 100 and (one.neg_part >= 0).sum() > 100
    for name in ("neg_head", "neg_relation", "neg_tail", "neg_part", "neg_attempt", "exhausted"):
        assert np.array_equal(getattr(one, name), getattr(many, name)), name
    for name, values in one.rejected.items():
        assert np.array_equal(values, many.rejected[name]), name  # in (attempt, slot) order either way
    assert one.reject_counts == many.reject_counts and one.metadata == many.metadata
    assert one_texts == many_texts


def test_rejects_are_counted_with_reasons(sample_set) -> None:
    counts = sample_set.metadata["rejected_by_reason"]
    rejects = sample_set.rejects.to_pylist()
    by_reason = Counter(r["reason"] for r in rejects)
    for reason in ("unchanged", "in_kg", "duplicate_negative"):
        assert counts.get(reason, 0) == by_reason.get(reason, 0)
    assert counts["in_kg"] > 0  # the sample KG is dense enough that some draws hit a fact
    assert all(r["kind"] == "negative" for r in rejects)
    assert sum(c["candidates"] for c in sample_set.reject_counts) == sum(
        n for r, n in by_reason.items() if r != "exhausted")


def test_same_label_and_in_kg_are_rejected() -> None:
    # two entities called "Paris"; the fact is stated through one of them only
    con = tiny_kg([("paris_fr", "capital_of", "france"), ("lyon", "city_of", "france"),
                   ("paris_tx", "city_of", "texas")], labels={"paris_fr": "Paris", "paris_tx": "Paris"})
    reasons = verify_negatives(con, [("paris_fr", "capital_of", "france"), ("paris_tx", "capital_of", "france"),
                                     ("lyon", "capital_of", "france"), ("nowhere", "capital_of", "france")])
    assert reasons == ["in_kg", "same_label", None, "unknown_key"]
    # with only same-named heads to draw from, every head corruption is rejected as same_label and given up
    s = build_statements(con, StatementOptions(per_relation=None, negatives=1, parts=("head",), max_attempts=5),
                         seed=0)
    rows = s.rejects.to_pylist()
    capital = [r for r in rows if r["positive_relation_key"] == "capital_of" and r["kind"] == "negative"]
    assert {r["reason"] for r in capital} <= {"unchanged", "same_label", "in_kg", "exhausted"}


def test_duplicate_positive_statements_are_dropped() -> None:
    con = tiny_kg([("paris_fr", "twinned_with", "rome"), ("paris_tx", "twinned_with", "rome"),
                   ("rome", "twinned_with", "paris_fr"), ("berlin", "twinned_with", "rome")],
                  labels={"paris_fr": "Paris", "paris_tx": "Paris"})
    s = build_statements(con, StatementOptions(per_relation=None, negatives=1), seed=0)
    assert s.metadata["positives_drawn"] == 4 and s.metadata["positives_unique"] == 3
    dropped = [r for r in s.rejects.to_pylist() if r["reason"] == "duplicate_statement"]
    assert [(r["head_key"], r["text"]) for r in dropped] == [("paris_tx", "Paris twinned with rome.")]
    # the paper keeps every triple: without dedup both Paris statements are asked
    kept = build_statements(con, StatementOptions(per_relation=None, negatives=1, dedup=False), seed=0)
    assert kept.metadata["positives_unique"] == 4
    assert not [r for r in kept.rejects.to_pylist() if r["reason"] == "duplicate_statement"]
    texts = [t for t, e in zip(kept.items.column("question").to_pylist(), kept.items.column("expected").to_pylist())
             if e == "true"]
    assert sorted(texts).count("Paris twinned with rome.") == 2


def test_the_profiles_dedup_by_default_as_they_say() -> None:
    from kgprobe.suites.grapheval.suite import GraphEvalSettings, statement_options

    settings = GraphEvalSettings()
    assert statement_options(settings, profile="paper").dedup is False
    assert statement_options(settings, profile="kgprobe").dedup is True
    assert statement_options(GraphEvalSettings(dedup=True), profile="paper").dedup is True


def test_templates_config_then_fallback(sample_con) -> None:
    opts = StatementOptions(per_relation=2, templates={"born_in": "{head} was born in {tail}."})
    s = build_statements(sample_con, opts, seed=0)
    sources = {t.key: t.source for t in s.templates}
    assert sources["born_in"] == "config" and sum(v == "fallback" for v in sources.values()) == len(sources) - 1
    assert len(s.metadata["fallback_relations"]) == len(sources) - 1
    born = [r for r in s.items.to_pylist() if r["relation_key"] == "born_in" and r["polarity"] == "positive"]
    assert all(r["question"] == f"{r['head_label']} was born in {r['tail_label']}." for r in born)
    died = [r for r in s.items.to_pylist() if r["relation_key"] == "died_in" and r["polarity"] == "positive"]
    assert all(r["question"] == f"{r['head_label']} place of death {r['tail_label']}." for r in died)
    assert all(r["template_source"] == "fallback" for r in died)


def test_bundled_sample_templates_cover_every_relation(sample_con) -> None:
    from kgprobe.suites.grapheval.templates import load_template_file

    templates = load_template_file(SAMPLE / "grapheval" / "templates.yaml")
    keys = {k for (k,) in sample_con.execute("SELECT key FROM relations").fetchall()}
    assert set(templates) == keys
    assert all(split_template(t) for t in templates.values())


def test_template_rules() -> None:
    assert split_template("{tail} is the capital of {head}.") == ("", False, " is the capital of ", ".")
    with pytest.raises(ValueError):
        split_template("The nationality of head is tail.")
    with pytest.raises(ConfigError, match="born_in"):
        resolve_templates([(0, "born_in", "born in")], config={"born_in": "{head} was born."})
    out, meta = resolve_templates([(0, "http://dbpedia.org/ontology/birthPlace", "birth place"), (1, "x", "x rel")],
                                  dbpedia={"birthPlace": "The birthplace of {head} is {tail}.", "bad": "no slots"})
    assert [t.source for t in out] == ["dbpedia", "fallback"] and meta["dbpedia_templates_skipped"] == ["bad"]


def test_labels_with_braces_are_not_placeholders() -> None:
    con = tiny_kg([("a", "rel", "b"), ("c", "other", "b")], labels={"a": "{tail}", "b": "B"})
    s = build_statements(con, StatementOptions(per_relation=None, negatives=1, parts=("tail",), corruption="uniform"),
                         seed=0)
    questions = {(r["head_key"], r["relation_key"], r["tail_key"]): r["question"] for r in s.items.to_pylist()}
    assert questions[("a", "rel", "b")] == "{tail} rel B."


def test_a_positive_without_any_valid_negative_is_not_written() -> None:
    con = tiny_kg([("a", "rel", "b")])
    s = build_statements(con, StatementOptions(per_relation=None, negatives=1, parts=("relation",), max_attempts=3),
                         seed=0)
    assert s.items.num_rows == 0 and s.metadata["positives_without_negatives"] == 1
    assert s.metadata["rejected_by_reason"] == {"unchanged": 3, "exhausted": 1, "duplicate_statement": 0}


def test_drawn_texts_are_the_item_questions(sample_con, sample_set) -> None:
    from kgprobe.suites.grapheval.statements import draw_statements

    drawn = draw_statements(sample_con, StatementOptions(per_relation=4, negatives=3), seed=7)
    positives, negatives = drawn.texts(sample_con)
    rows = sample_set.items.to_pylist()
    # every positive written has at least one negative; its negatives follow it, slot by slot
    with_negatives = (drawn.neg_part >= 0).any(axis=1)
    assert [r["question"] for r in rows if r["polarity"] == "positive"] == [
        t for t, keep in zip(positives.to_list(), with_negatives, strict=True) if keep]
    assert sorted(r["question"] for r in rows if r["polarity"] == "negative") == sorted(negatives.to_list())
    assert drawn.metadata == sample_set.metadata


def test_key_set_membership_matches_python_sets() -> None:
    import numpy as np

    from kgprobe.suites.grapheval.statements import _EMPTY, _key, _KeySet

    rng = np.random.default_rng(3)
    keys = np.concatenate([rng.integers(-2**63, 2**63 - 1, 5000, dtype=np.int64), [_EMPTY, 0, -1, 7, 7]])
    probe = np.concatenate([keys[::3], rng.integers(-2**63, 2**63 - 1, 5000, dtype=np.int64), [_EMPTY, 8]])
    expected = np.array([x in set(keys.tolist()) for x in probe.tolist()])
    assert (_KeySet(keys).contains(probe) == expected).all()
    assert not _KeySet(keys[:-5]).contains(np.array([_EMPTY])).any()
    # beyond 62 bits the packing gives way to a hash: still one key per distinct triple here
    a, b, c = (rng.integers(0, 3_000_000, 20_000) for _ in range(3))
    packed = _key(a, b, c, 3_000_000, 3_000_000, 3_000_000)
    assert len(np.unique(packed)) == len({*zip(a.tolist(), b.tolist(), c.tolist())})


def test_evidence_is_json_for_hostile_labels() -> None:
    import json

    hostile = {"a": 'Say "hi"\\ then\nleave', "b": "B; DROP TABLE x; {{ tail }} <script>é</script>\t\x01"}
    con = tiny_kg([("a", "rel", "b"), ("c", "other", "b"), ("a", "other", "c")], labels=hostile)
    s = build_statements(con, StatementOptions(per_relation=None, negatives=1, corruption="uniform"), seed=0,
                         snapshot_id='snap "1"')
    rows = s.items.to_pylist()
    assert rows
    for row in rows:
        evidence = json.loads(row["evidence"])
        assert evidence["snapshot_id"] == 'snap "1"'
        assert evidence["labels"] == [row["head_label"], row["relation_label"], row["tail_label"]]
        assert evidence["triple"] == [row["head_key"], row["relation_key"], row["tail_key"]]
        assert (evidence["asserts"] is not None) == (row["polarity"] == "positive")
        assert row["question"].startswith(row["head_label"])  # the fallback template: "{head} <relation> {tail}."
    assert hostile["a"] in {r["head_label"] for r in rows}


def test_reversals_of_mostly_symmetric_relations_are_rejected_when_asked() -> None:
    # married_to is symmetric in 4 of its 5 triples (a-b, b-a, c-d, d-c; e-f has no reverse); likes is not.
    # Corrupting the relation of f-likes-e gives f-married_to-e, the reverse of a KG triple of married_to
    triples = [("a", "married_to", "b"), ("b", "married_to", "a"), ("c", "married_to", "d"),
               ("d", "married_to", "c"), ("e", "married_to", "f"), ("a", "likes", "c"), ("f", "likes", "e")]
    con = tiny_kg(triples)
    opts = dict(per_relation=None, negatives=1, parts=("relation",), corruption="uniform", max_attempts=30)
    plain = build_statements(con, StatementOptions(**opts), seed=0)
    strict = build_statements(con, StatementOptions(**opts, symmetric_reversals=0.6), seed=0)
    assert plain.metadata["symmetric_relations"] == 0 and strict.metadata["symmetric_relations"] == 1
    negs = {(r["head_key"], r["relation_key"], r["tail_key"]) for r in strict.items.to_pylist()
            if r["polarity"] == "negative"}
    assert ("f", "married_to", "e") not in negs  # the reverse of e-f, a likely fact
    rejected = [r for r in strict.rejects.to_pylist() if r["reason"] == "symmetric_reversal"]
    assert rejected and all(r["relation_key"] == "married_to" and
                            (r["tail_key"], "married_to", r["head_key"]) in set(triples) for r in rejected)
    # without the option the same reversal is a verified negative (it is not a KG triple)
    assert ("f", "married_to", "e") in {(r["head_key"], r["relation_key"], r["tail_key"])
                                        for r in plain.items.to_pylist() if r["polarity"] == "negative"}


def test_a_uniform_sample_of_positives_is_seeded_and_independent_of_relations(sample_con) -> None:
    a = build_statements(sample_con, StatementOptions(per_relation=None, positives=100, negatives=1), seed=4)
    b = build_statements(sample_con, StatementOptions(per_relation=None, positives=100, negatives=1), seed=4)
    pos = [r for r in a.items.to_pylist() if r["polarity"] == "positive"]
    assert len(pos) == 100 and a.items.equals(b.items)
    # triple-weighted: relations appear about as often as in the KG, not capped per relation
    per_relation = {}
    for r in pos:
        per_relation[r["relation_key"]] = per_relation.get(r["relation_key"], 0) + 1
    capped = build_statements(sample_con, StatementOptions(per_relation=2, negatives=1), seed=4)
    assert max(per_relation.values()) > 2
    assert max(sum(1 for r in capped.items.to_pylist() if r["polarity"] == "positive" and r["relation_key"] == k)
               for k in per_relation) <= 2


def test_another_task_gets_its_own_ids(sample_con) -> None:
    a = build_statements(sample_con, StatementOptions(per_relation=2, negatives=1), snapshot_id="s", seed=0)
    b = build_statements(sample_con, StatementOptions(per_relation=2, negatives=1, task="statement_kgprobe"),
                         snapshot_id="s", seed=0)
    assert a.items.column("question").equals(b.items.column("question"))
    assert not set(a.items.column("item_id").to_pylist()) & set(b.items.column("item_id").to_pylist())
    assert set(b.items.column("task").to_pylist()) == {"statement_kgprobe"}


def test_labels_are_cleaned_as_the_setting_says() -> None:
    labels = {"a": "Actor-GB", "b": "Pozna\\u0144", "c": "Children s Hospital", "d": "Sheffield F.C."}
    con = tiny_kg([("a", "rel", "b"), ("c", "rel", "d"), ("a", "other", "d")], labels=labels)
    opts = StatementOptions(per_relation=None, negatives=1, parts=("tail",), corruption="uniform")
    rows = build_statements(con, opts, seed=0).items.to_pylist()
    pos = {(r["head_key"], r["tail_key"]): r for r in rows if r["polarity"] == "positive"}
    assert pos[("a", "b")]["question"] == "Actor rel Poznań."
    assert (pos[("a", "b")]["head_label"], pos[("a", "b")]["tail_label"]) == ("Actor", "Poznań")
    # a label's own full stop ends the sentence; a lost apostrophe comes back
    assert pos[("c", "d")]["question"] == "Children's Hospital rel Sheffield F.C."
    raw = build_statements(con, StatementOptions(per_relation=None, negatives=1, parts=("tail",),
                                                 corruption="uniform", label_cleanup=()), seed=0).items.to_pylist()
    assert {r["question"] for r in raw if r["polarity"] == "positive"} >= {"Actor-GB rel Pozna\\u0144."}
    with pytest.raises(ValueError, match="label_cleanup"):
        StatementOptions(label_cleanup=("lowercase",))


def test_templated_only_asks_and_corrupts_with_the_reviewed_relations_alone() -> None:
    triples = [(f"{rel[0]}{i}", rel, f"{rel[0]}x{i}") for i in range(12)
               for rel in ("spouse", "unmarried_partner", "employer")]
    con = tiny_kg(triples)
    reviewed = {"spouse": "{head} is married to {tail}.", "employer": "{head} works for {tail}."}
    for corruption in ("uniform", "typed"):
        opts = StatementOptions(per_relation=None, negatives=3, parts=("relation",), corruption=corruption,
                                templates=reviewed, templated_only=True)
        rows = build_statements(con, opts, seed=0).items.to_pylist()
        assert rows and not any("unmarried" in r["question"] for r in rows), corruption
        assert {r["question"].split()[1] for r in rows} == {"is", "works"}
        assert not any(r["question"].startswith("u") for r in rows)  # no positive of the left-out relation
    # without it the left-out relation is asked and drawn, with a proposed template
    rows = build_statements(con, StatementOptions(per_relation=None, negatives=3, parts=("relation",),
                                                  templates=reviewed), seed=0).items.to_pylist()
    assert any("unmarried" in r["question"] for r in rows)


def test_items_do_not_depend_on_the_chunk_size(sample_con, sample_set, monkeypatch) -> None:
    # the items are built a chunk of positives at a time: chunks of at most 7 rows (7 // (1 + 3) = one positive and
    # its negatives each) must give the very table that one chunk gives, and the same rejects
    import kgprobe.suites.grapheval.statements as statements

    monkeypatch.setattr(statements, "_ROWS_PER_CHUNK", 7)
    small = build_statements(sample_con, StatementOptions(per_relation=4, negatives=3), snapshot_id="s", seed=7)
    assert small.items.column("item_id").num_chunks == len(small.items.column("group_id").unique()) > 1
    assert sample_set.items.column("item_id").num_chunks < small.items.column("item_id").num_chunks
    assert small.items.equals(sample_set.items) and small.rejects.equals(sample_set.rejects)
    check_items("grapheval", small.items)


def test_an_item_stream_builds_the_table_rows_it_is_asked_for(sample_con, sample_set, monkeypatch) -> None:
    # streamed, the items are built when read: its batches, its rows taken at random and its counts must be the
    # table's, across many chunks (7 rows: one positive and its negatives a chunk), and a second read the same
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    import kgprobe.suites.grapheval.statements as statements

    monkeypatch.setattr(statements, "_ROWS_PER_CHUNK", 7)
    table = sample_set.items
    stream = build_statements(sample_con, StatementOptions(per_relation=4, negatives=3), snapshot_id="s", seed=7,
                              stream=True).items
    assert isinstance(stream, statements.ItemStream) and stream.num_rows == table.num_rows > 20
    batches = list(stream.batches())
    assert len(batches) == len(table.column("group_id").unique()) > 1
    assert pa.Table.from_batches(batches).equals(table.combine_chunks())
    assert stream.read_all().equals(table) and stream.reader().read_all().equals(table.combine_chunks())
    rows = np.random.default_rng(0).permutation(table.num_rows)[:25]  # unsorted, from many groups
    assert stream.take(rows).equals(table.take(pa.array(rows)).combine_chunks())
    assert stream.take(np.array([table.num_rows - 1, 0, 0])).column("item_id").to_pylist() == \
        [table.column("item_id")[table.num_rows - 1].as_py(), *[table.column("item_id")[0].as_py()] * 2]
    with pytest.raises(IndexError):
        stream.take(np.array([table.num_rows]))
    positive, relation = stream.positive_rows()
    assert positive.tolist() == np.flatnonzero(pc.equal(table.column("polarity"), "positive")).tolist()
    keys = dict(sample_con.execute("SELECT id, key FROM relations").fetchall())
    assert [keys[r] for r in relation] == table.column("relation_key").take(pa.array(positive)).to_pylist()
    counted = Counter(table.column("relation_key").to_pylist())
    assert {keys[i]: int(n) for i, n in enumerate(stream.rows_by_relation) if n} == counted


def test_a_sample_of_positives_checks_against_sorted_keys_with_the_same_result(sample_con, monkeypatch) -> None:
    # few positives against the KG: its keys are a sorted array, not a hash set; both must give the same statements
    import kgprobe.suites.grapheval.statements as statements

    built: list[str] = []

    def spy(cls):
        class Spy(cls):
            def __init__(self, keys):
                built.append(cls.__name__)
                super().__init__(keys)
        return Spy

    monkeypatch.setattr(statements, "_SortedKeys", spy(statements._SortedKeys))
    monkeypatch.setattr(statements, "_KeySet", spy(statements._KeySet))
    options = StatementOptions(per_relation=None, positives=30, negatives=3, max_attempts=4)
    sorted_keys = build_statements(sample_con, options, snapshot_id="s", seed=3)
    assert built.count("_SortedKeys") == 2 and sorted_keys.metadata["rejected_by_reason"].get("in_kg", 0) > 0
    monkeypatch.setattr(statements, "_SortedKeys", statements._KeySet)  # the hash set for the KG's keys too
    built.clear()
    hashed = build_statements(sample_con, options, snapshot_id="s", seed=3)
    assert "_SortedKeys" not in built and built.count("_KeySet") >= 2
    assert hashed.items.equals(sorted_keys.items) and hashed.rejects.equals(sorted_keys.rejects)
    assert hashed.metadata == sorted_keys.metadata
    # the labels and evidence of a sample are read for its own entities only: each row still names its keys' labels
    import json

    from kgprobe.kg.readable import LABEL_CLEANUPS, clean_label

    names = sample_con.execute("SELECT key, label FROM entities").fetchall()
    label = {k: clean_label(v, LABEL_CLEANUPS) for k, v in names}
    rows = sorted_keys.items.to_pylist()
    assert len({r["head_key"] for r in rows} | {r["tail_key"] for r in rows}) * 2 < len(label)
    triples = _kg(sample_con)[0]
    for r in rows:
        assert ((r["head_key"], r["relation_key"], r["tail_key"]) in triples) == (r["polarity"] == "positive")
        assert (r["head_label"], r["tail_label"]) == (label[r["head_key"]], label[r["tail_key"]])
        evidence = json.loads(r["evidence"])
        assert evidence["triple"] == [r["head_key"], r["relation_key"], r["tail_key"]]
        assert evidence["labels"] == [r["head_label"], r["relation_label"], r["tail_label"]]
