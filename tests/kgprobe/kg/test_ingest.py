"""kgprobe.kg.ingest: every format, malformed input, idempotence, and the real data sets of ../shared/data."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgprobe.errors import IngestError
from kgprobe.kg import ingest
from kgprobe.kg.ingest import KGSource, load_kg


@pytest.fixture()
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    yield c
    c.close()


def _read_text(path: Path) -> str:
    return (gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()).decode("utf-8")


def _write(path: Path, text: str | bytes) -> Path:
    if path.suffix == ".gz":
        with gzip.open(path, "wb") as fh:
            fh.write(text.encode() if isinstance(text, str) else text)
    elif isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _triples(con: duckdb.DuckDBPyConnection, schema: str = "main") -> set[tuple[str, str, str]]:
    rows = con.execute(
        f"""SELECT h.key, r.key, t.key FROM "{schema}".triples x JOIN "{schema}".entities h ON h.id = x.head
        JOIN "{schema}".relations r ON r.id = x.relation JOIN "{schema}".entities t ON t.id = x.tail"""
    ).fetchall()
    return set(rows)


def _rejects(con: duckdb.DuckDBPyConnection, schema: str = "main") -> list[tuple]:
    return con.execute(f'SELECT line, raw, reason FROM "{schema}".rejects ORDER BY line').fetchall()


def _accounted(report) -> bool:
    return report.read == report.loaded + report.duplicates + report.rejected


# ---------------------------------------------------------------- delimited


@pytest.mark.parametrize("suffix", [".tsv", ".tsv.gz"])
def test_tsv_loads_labels_and_counts_duplicates(tmp_path: Path, con, suffix: str) -> None:
    triples = _write(tmp_path / f"kg{suffix}", "Ada_Lovelace\tborn_in\tLondon\nLondon\tcapital_of\tUK\nAda_Lovelace\tborn_in\tLondon\n")
    labels = _write(tmp_path / "labels.tsv", "London\tLondon_City\nUK\tUnited_Kingdom\n")
    rels = _write(tmp_path / "rels.json", json.dumps({"born_in": {"label": "place of birth"}, "capital_of": "capital of"}))
    report = load_kg(con, KGSource(triples=[triples], entity_labels=labels, relation_labels=rels))
    assert (report.read, report.loaded, report.duplicates, report.rejected) == (3, 2, 1, 0)
    assert _triples(con) == {("Ada_Lovelace", "born_in", "London"), ("London", "capital_of", "UK")}
    labels_by_key = dict(con.execute("SELECT key, label FROM entities").fetchall())
    # underscores become spaces in labels; an entity without a label keeps (a readable form of) its key
    assert labels_by_key == {"Ada_Lovelace": "Ada Lovelace", "London": "London City", "UK": "United Kingdom"}
    assert dict(con.execute("SELECT key, label FROM relations").fetchall()) == {
        "born_in": "place of birth", "capital_of": "capital of"}
    assert report.labelled_entities == 2 and report.label_coverage == pytest.approx(2 / 3)


def test_escaped_unicode_in_a_label_file_and_yago_language_prefixes_are_read_as_names(tmp_path: Path, con) -> None:
    # CoDEx's partial labels carry "Selma Lagerl\u00F6f" as written; YAGO3 names German-Wikipedia entities de/...
    triples = _write(tmp_path / "kg.tsv", "Q44519\tP106\tQ36180\nde/Adam_Kensy\tplaysFor\tFC_Bayern\n"
                                          "FK_Bod\u00f8/Glimt\tplaysFor\tde/x\n")
    labels = _write(tmp_path / "labels.tsv", "Q44519\tSelma Lagerl\\u00F6f\nQ36180\twriter \\user\n")
    load_kg(con, KGSource(triples=[triples], entity_labels=labels))
    assert dict(con.execute("SELECT key, label FROM entities").fetchall()) == {
        "Q44519": "Selma Lagerl\u00f6f", "Q36180": "writer \\user", "de/Adam_Kensy": "Adam Kensy",
        "FC_Bayern": "FC Bayern", "FK_Bod\u00f8/Glimt": "FK Bod\u00f8/Glimt", "de/x": "x"}


def test_ids_are_dense_and_ordered_by_key(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "kg.tsv", "c\tr\tb\nb\tr\ta\n")
    load_kg(con, KGSource(triples=f))
    assert con.execute("SELECT id, key FROM entities ORDER BY id").fetchall() == [(0, "a"), (1, "b"), (2, "c")]


def test_malformed_rows_are_rejected_with_line_and_reason_in_lenient_mode(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "kg.tsv", "a\tr\tb\nonly\ttwo\n\tr\tc\na\tr\tb\textra\nb\tr\tc\n")
    report = load_kg(con, KGSource(triples=f, lenient=True))
    assert (report.read, report.loaded, report.rejected) == (5, 2, 3)
    rejects = _rejects(con)
    assert [r[0] for r in rejects] == [2, 3, 4]
    assert "too few columns" in rejects[0][2]
    assert "empty" in rejects[1][2]
    assert "too many columns" in rejects[2][2]
    assert _accounted(report)


def test_strict_mode_names_file_and_line(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "kg.tsv", "a\tr\tb\nbroken line\n")
    with pytest.raises(IngestError, match=r"kg\.tsv, line 2: too few columns.*lenient=True"):
        load_kg(con, KGSource(triples=f))
    # nothing half-loaded: the failed load left no KG behind
    assert con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'triples'").fetchone()[0] == 0


def test_invalid_utf8_is_a_reject_not_a_traceback(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "kg.tsv", b"a\tr\tb\n\xff\xfe\tr\tc\nb\tr\tc\n")
    report = load_kg(con, KGSource(triples=f, lenient=True))
    assert (report.loaded, report.rejected) == (2, 1)
    assert _rejects(con)[0][0] == 2 and "encoding" in _rejects(con)[0][2]
    with pytest.raises(IngestError, match="line 2"):
        load_kg(duckdb.connect(), KGSource(triples=f))


def test_latin1_encoding_option(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "kg.tsv", "Zürich\tin\tSchweiz\n".encode("latin-1"))
    load_kg(con, KGSource(triples=f, encoding="latin-1"))
    assert _triples(con) == {("Zürich", "in", "Schweiz")}


@pytest.mark.parametrize("header", ["head,relation,tail\n", "subject,predicate,object\n", ""])
def test_csv_with_or_without_header(tmp_path: Path, con, header: str) -> None:
    f = _write(tmp_path / "kg.csv", header + 'a,r,b\n"New York, NY",located_in,USA\n')
    report = load_kg(con, KGSource(triples=f, format="csv"))
    assert report.read == 2
    assert _triples(con) == {("a", "r", "b"), ("New York, NY", "located_in", "USA")}


def test_parquet_with_named_columns_and_nulls(tmp_path: Path, con) -> None:
    f = tmp_path / "kg.parquet"
    pq.write_table(pa.table({"subject": ["a", "b", None], "predicate": ["r", "r", "r"], "object": ["b", "c", "a"]}), f)
    report = load_kg(con, KGSource(triples=f, format="parquet", lenient=True))
    assert (report.loaded, report.rejected) == (2, 1)
    assert _rejects(con)[0][0] == 3


def test_parquet_keys_as_stored_when_clean(tmp_path: Path, con) -> None:
    # the fast pass stages keys without trim; ids, counts and duplicates are the same as ever
    f = tmp_path / "kg.parquet"
    pq.write_table(pa.table({"head": ["b", "a", "b", "c"], "relation": ["r", "s", "r", "r"], "tail": ["a", "c", "a", "b"]}), f)
    report = load_kg(con, KGSource(triples=f, format="parquet"))
    assert (report.read, report.loaded, report.duplicates, report.rejected) == (4, 3, 1, 0)
    assert con.execute("SELECT id, key FROM entities ORDER BY id").fetchall() == [(0, "a"), (1, "b"), (2, "c")]
    assert _triples(con) == {("b", "r", "a"), ("a", "s", "c"), ("c", "r", "b")}


@pytest.mark.parametrize("lenient", [True, False])
def test_parquet_padded_keys_are_trimmed_and_blank_ones_rejected(tmp_path: Path, con, lenient: bool) -> None:
    # padding (an ASCII space, a no-break space U+00A0, an ideographic space U+3000) is trimmed as before, so padded
    # and clean spellings are one entity; a key that is only spaces is a rejected row, named by its row number
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(pa.table({"head": ["a", " a"], "relation": ["r", "r\u00a0"], "tail": ["b", "b"]}), first)
    pq.write_table(pa.table({"head": ["c", "\u3000", "b"], "relation": ["r", "r", "r"], "tail": ["a\u3000", "a", "c"]}), second)
    source = KGSource(triples=[first, second], format="parquet", lenient=lenient)
    if not lenient:
        with pytest.raises(IngestError, match=r"b\.parquet, line 2: empty or null"):
            load_kg(con, source)
        assert not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'triples'").fetchone()[0]
        return
    report = load_kg(con, source)
    assert (report.read, report.loaded, report.duplicates, report.rejected) == (5, 3, 1, 1)
    assert [k for (k,) in con.execute("SELECT key FROM entities ORDER BY id").fetchall()] == ["a", "b", "c"]
    assert [k for (k,) in con.execute("SELECT key FROM relations").fetchall()] == ["r"]
    assert _triples(con) == {("a", "r", "b"), ("c", "r", "a"), ("b", "r", "c")}
    assert [(line, reason.split(" (")[0]) for line, _, reason in _rejects(con)] == [(2, "empty or null head, relation or tail")]
    assert con.execute("SELECT source FROM rejects").fetchone()[0].endswith("b.parquet")


def test_parquet_empty_string_and_null_keys_are_rejected_once(tmp_path: Path, con) -> None:
    f = tmp_path / "kg.parquet"
    pq.write_table(pa.table({"head": ["a", "", None, "c"], "relation": ["r", "r", "r", "r"], "tail": ["b", "b", "b", " "]}), f)
    report = load_kg(con, KGSource(triples=f, format="parquet", lenient=True))
    assert (report.read, report.loaded, report.rejected) == (4, 1, 3)
    assert [line for line, _, _ in _rejects(con)] == [2, 3, 4]
    assert _triples(con) == {("a", "r", "b")}


def test_reload_replaces_an_older_schemas_tables(tmp_path: Path, con) -> None:
    # a KG loaded by an older version has an indexed entities table; a forced reload replaces it, rows and all
    con.execute("CREATE TABLE entities (id BIGINT PRIMARY KEY, key VARCHAR NOT NULL UNIQUE, label VARCHAR NOT NULL)")
    con.execute("INSERT INTO entities VALUES (0, 'old', 'old')")
    f = _write(tmp_path / "kg.tsv", "a\tr\tb\n")
    load_kg(con, KGSource(triples=f), force=True)
    assert con.execute("SELECT key FROM entities ORDER BY id").fetchall() == [("a",), ("b",)]
    assert not con.execute("SELECT count(*) FROM duckdb_indexes() WHERE table_name = 'entities'").fetchone()[0]
    assert not con.execute(
        "SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'entities' AND constraint_type IN ('UNIQUE', 'PRIMARY KEY')"
    ).fetchone()[0]


def test_missing_file_and_unknown_format_are_clear_errors(tmp_path: Path, con) -> None:
    with pytest.raises(IngestError, match=r"triples file .*nope\.tsv does not exist"):
        load_kg(con, KGSource(triples=tmp_path / "nope.tsv"))
    f = _write(tmp_path / "kg.tsv", "a\tr\tb\n")
    with pytest.raises(IngestError, match="unknown KG format 'xml'.*tsv, csv, parquet"):
        load_kg(con, KGSource(triples=f, format="xml"))
    with pytest.raises(IngestError, match="entity_labels file .*missing.tsv does not exist"):
        load_kg(con, KGSource(triples=f, entity_labels=tmp_path / "missing.tsv"))


def test_reload_is_idempotent_and_reuses_the_snapshot(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "kg.tsv", "a\tr\tb\nb\tr\tc\n")
    first = load_kg(con, KGSource(triples=f))
    second = load_kg(con, KGSource(triples=f))
    assert second.snapshot_id == first.snapshot_id and second.reused and not first.reused
    # a first load hashes its files on a thread beside the load; the id is the same content hash
    assert first.snapshot_id == ingest._snapshot_id(KGSource(triples=f))
    assert con.execute("SELECT snapshot_id FROM snapshots").fetchall() == [(first.snapshot_id,)]
    assert (second.read, second.loaded, second.triples) == (2, 2, 2)
    forced = load_kg(con, KGSource(triples=f), force=True)
    assert forced.snapshot_id == first.snapshot_id and not forced.reused
    assert con.execute("SELECT count(*) FROM triples").fetchone()[0] == 2
    _write(f, "a\tr\tb\n")
    changed = load_kg(con, KGSource(triples=f))
    assert changed.snapshot_id != first.snapshot_id
    assert con.execute("SELECT count(*) FROM triples").fetchone()[0] == 1


def test_two_kgs_live_in_their_own_schemas(tmp_path: Path, con) -> None:
    a = _write(tmp_path / "a.tsv", "x\tr\ty\n")
    b = _write(tmp_path / "b.tsv", "p\tq\tr\np\tq\ts\n")
    load_kg(con, KGSource(triples=a, name="first"))
    load_kg(con, KGSource(triples=b, name="second"))
    assert _triples(con, "first") == {("x", "r", "y")}
    assert len(_triples(con, "second")) == 2
    with pytest.raises(IngestError, match="must be an identifier"):
        load_kg(con, KGSource(triples=a, name="bad name"))


SIDE_FILES = {
    "header_and_blanks": "entity\ttype\na\tT1\n\n   \n\t\nb\t T2 \n",
    "no_header_no_final_newline": "a\tT1\nb\tT2",
    "bad_rows": "a\tT1\nnovalue\n\tT3\nc\t  \n d \tT4\textra\tcols\n",
    "header_only": "key\tvalue\n",
    "header_like_later": "a\tT1\nentity\ttype\n",
    "blank_first_line": "\nentity\ttype\n",
    "crlf": "a\tT1\r\nb\tT2\r\n",
    "unicode": "Zürich\tStadt\u00a0\n\u3000\tT\nx\x1f\tT\n",
}


@pytest.mark.parametrize("case", sorted(SIDE_FILES))
def test_side_file_fast_path_equals_line_by_line(tmp_path: Path, con, monkeypatch, case: str) -> None:
    # large side files of plain ASCII are split in Arrow; the result must be the Python line loop's, rejects included
    f = _write(tmp_path / "types.tsv", SIDE_FILES[case])

    def read(fast: bool):
        if not fast:
            monkeypatch.setattr(ingest, "_mapping_columns", lambda text, **_: None)
        stage = ingest._Stage(con, KGSource(triples=f, lenient=True))
        rows = _side_rows(con, ingest._read_mapping(stage, f, "entity_types", multi=True))
        monkeypatch.undo()
        return rows, stage.rejects, stage.side_files

    fast, slow = read(True), read(False)
    assert fast == slow
    plain = case not in ("crlf", "unicode")
    assert (ingest._mapping_columns(SIDE_FILES[case], first_line=1, width=2, skip=None) is not None) == plain


def _side_rows(con, table: str) -> list[tuple[str, str, int]]:
    return con.execute(f"SELECT key, value, line FROM {table} ORDER BY seq").fetchall()


def test_side_file_fast_path_counts(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "types.tsv", SIDE_FILES["bad_rows"])
    stage = ingest._Stage(con, KGSource(triples=f, lenient=True))
    # a row with more fields than key<TAB>value is rejected, not cut to its first two
    assert _side_rows(con, ingest._read_mapping(stage, f, "entity_types", multi=True)) == [("a", "T1", 1)]
    assert [(line, raw) for _, line, raw, _ in stage.rejects] == [(2, "novalue"), (3, "\tT3"), (4, "c\t  "),
                                                                   (5, " d \tT4\textra\tcols")]
    assert stage.rejects[-1][3] == "entity_types: 4 fields, expected 2 (key<TAB>value)"
    assert stage.side_files["entity_types"] == {"read": 5, "rejected": 4}


def test_entity_types_tsv_and_codex_style_json(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "kg.tsv", "Q1\tP1\tQ2\n")
    types = _write(tmp_path / "entity2types.json", json.dumps({"Q1": ["T1", "T2"], "Q2": ["T2"], "Q9": ["T1"]}))
    names = _write(tmp_path / "types.json", json.dumps({"T1": {"label": "human"}, "T2": {"label": "city"}}))
    report = load_kg(con, KGSource(triples=f, entity_types=types, type_labels=names))
    rows = con.execute("SELECT e.key, t.type, t.type_key FROM entity_types t JOIN entities e ON e.id = t.entity ORDER BY 1, 3").fetchall()
    # Q9 is not in the KG: its type is not loaded as a dangling row
    assert rows == [("Q1", "human", "T1"), ("Q1", "city", "T2"), ("Q2", "city", "T2")]
    assert report.side_files["entity_types"]["matched_entities"] == 2


# ---------------------------------------------------------------- RDF

NT = """<http://ex.org/Paris> <http://ex.org/capitalOf> <http://ex.org/France> .
<http://ex.org/Paris> <http://www.w3.org/2000/01/rdf-schema#label> "Paris"@en .
<http://ex.org/Paris> <http://www.w3.org/2000/01/rdf-schema#label> "Parigi"@it .
<http://ex.org/Paris> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/City> .
<http://ex.org/City> <http://www.w3.org/2000/01/rdf-schema#label> "city"@en .
<http://ex.org/Paris> <http://ex.org/population> "2100000"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://ex.org/Paris> <http://ex.org/capitalOf> <http://ex.org/France> .
"""


def test_ntriples_routes_literals_labels_and_types(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "kg.nt.gz", NT)
    report = load_kg(con, KGSource(triples=f, format="ntriples"))
    assert (report.read, report.duplicates, report.rejected) == (7, 1, 0) and _accounted(report)
    labels = dict(con.execute("SELECT key, label FROM entities").fetchall())
    assert labels["http://ex.org/Paris"] == "Paris"  # the English label wins over Italian
    assert labels["http://ex.org/France"] == "France"  # no label: the IRI's local name
    assert con.execute("SELECT type, type_key FROM entity_types").fetchall() == [("city", "http://ex.org/City")]
    lit = con.execute("SELECT l.value, l.datatype, l.lang FROM literals l ORDER BY 1").fetchall()
    assert ("2100000", "http://www.w3.org/2001/XMLSchema#integer", None) in lit
    assert ("Parigi", None, "it") in lit  # labels in other languages stay available as literals
    assert report.triples == 1


@pytest.mark.parametrize("keep_order", [True, False])
def test_ntriples_from_several_files_counts_duplicates_across_them(tmp_path: Path, con, keep_order: bool) -> None:
    # the first file's plain rows become the staging table, the second's are appended to it
    con.execute(f"SET preserve_insertion_order = {keep_order}")
    a = _write(tmp_path / "a.nt", NT)
    b = _write(tmp_path / "b.nt", "<http://ex.org/Paris> <http://ex.org/capitalOf> <http://ex.org/France> .\n"
               '<http://ex.org/Rome> <http://www.w3.org/2000/01/rdf-schema#label> "Rome"@en .\n'
               "<http://ex.org/Rome> <http://ex.org/capitalOf> <http://ex.org/Italy> .\n")
    report = load_kg(con, KGSource(triples=[a, b], format="ntriples"))
    assert (report.read, report.loaded, report.duplicates, report.rejected) == (10, 8, 2, 0)
    assert (report.triples, report.literals, report.entity_types) == (2, 2, 1)
    assert con.execute("SELECT label FROM entities WHERE key = 'http://ex.org/Rome'").fetchone()[0] == "Rome"
    assert con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0] is keep_order


def test_ntriples_strict_error_names_line_and_lenient_loads_the_rest(tmp_path: Path, con) -> None:
    text = NT.splitlines()
    text.insert(2, "<http://ex.org/a> <http://ex.org/b> this is not rdf .")
    f = _write(tmp_path / "kg.nt", "\n".join(text) + "\n")
    with pytest.raises(IngestError, match=r"kg\.nt, line 3: N-Triples syntax error"):
        load_kg(con, KGSource(triples=f, format="ntriples"))
    report = load_kg(con, KGSource(triples=f, format="ntriples", lenient=True))
    assert report.rejected == 1 and report.read == 8 and _accounted(report)
    assert _rejects(con)[0][0] == 3


def test_ntriples_lenient_repairs_missing_final_dot(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "kg.nt", "<http://e/a> <http://e/r> <http://e/b>\n<http://e/b> <http://e/r> <http://e/c> .\n<http://e/c> <http://e/r>\n")
    report = load_kg(con, KGSource(triples=f, format="ntriples", lenient=True))
    assert (report.loaded, report.repaired, report.rejected) == (2, 1, 1)
    assert _rejects(con)[0][0] == 3


def test_turtle_with_prefixes_and_lenient_resume(tmp_path: Path, con) -> None:
    ttl = """@prefix ex: <http://ex.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:Rome ex:capitalOf ex:Italy ;
    rdfs:label "Rome"@en .
ex:broken ex:p "unterminated .
ex:Milan ex:locatedIn ex:Italy .
"""
    f = _write(tmp_path / "kg.ttl", ttl)
    with pytest.raises(IngestError, match=r"kg\.ttl, line 5: Turtle syntax error"):
        load_kg(con, KGSource(triples=f, format="turtle"))
    report = load_kg(con, KGSource(triples=f, format="turtle", lenient=True))
    assert ("http://ex.org/Milan", "http://ex.org/locatedIn", "http://ex.org/Italy") in _triples(con)
    assert report.rejected >= 1 and _rejects(con)[0][0] == 5 and _accounted(report)


# ---------------------------------------------------------------- KoPL, temporal, events


def test_kopl_concepts_become_types(tmp_path: Path, con) -> None:
    kb = {
        "concepts": {"C1": {"name": "city", "subclassOf": []}, "C2": {"name": "human", "subclassOf": []}},
        "entities": {
            "E1": {"name": "Akron", "instanceOf": ["C1"], "attributes": [
                {"key": "population", "value": {"type": "quantity", "value": 199110, "unit": "1"}, "qualifiers": {}}],
                "relations": []},
            "E2": {"name": "LeBron James", "instanceOf": ["C2"], "attributes": [],
                   "relations": [{"relation": "place of birth", "direction": "forward", "object": "E1", "qualifiers": {}},
                                 {"relation": "friend", "direction": "forward", "object": "E404", "qualifiers": {}}]},
        },
    }
    f = _write(tmp_path / "kb.json", json.dumps(kb))
    report = load_kg(con, KGSource(triples=f, format="kopl", lenient=True))
    assert _triples(con) == {("E2", "place of birth", "E1")}
    assert dict(con.execute("SELECT key, label FROM entities").fetchall()) == {"E1": "Akron", "E2": "LeBron James"}
    assert sorted(con.execute("SELECT type FROM entity_types").fetchall()) == [("city",), ("human",)]
    assert con.execute("SELECT value, datatype FROM literals").fetchall() == [("199110", "quantity")]
    assert report.rejected == 1 and "E404" in _rejects(con)[0][2] and _accounted(report)


def test_temporal_years_unknown_and_ongoing(tmp_path: Path, con) -> None:
    f = _write(tmp_path / "t.tsv", "A\tmarried\tB\t1950\t3000\nA\tworks\tC\t0\t1960\nD\tcreated\tE\t####\t####\nA\tx\tB\t1990\t1980\nA\tmarried\tB\t1950\t3000\n")
    report = load_kg(con, KGSource(triples=f, format="temporal", lenient=True))
    rows = con.execute("SELECT r.key, start_year, end_year, ongoing FROM temporal_facts f JOIN relations r ON r.id = f.relation ORDER BY 1").fetchall()
    assert rows == [("created", None, None, False), ("married", 1950, None, True), ("works", None, 1960, False)]
    assert (report.read, report.loaded, report.duplicates, report.rejected) == (5, 3, 1, 1)
    assert "before start year" in _rejects(con)[0][2]
    assert len(_triples(con)) == 3  # dated facts are triples of the KG too


def test_event_lists_pair_begin_and_end(tmp_path: Path, con) -> None:
    events = [
        {"type": "begin", "relation": "ev_War", "dd": 1, "mm": 1, "year": 1914},
        {"type": "end", "relation": "ev_War", "dd": 1, "mm": 1, "year": 1918},
        {"type": "begin", "relation": "ev_War", "dd": 1, "mm": 1, "year": 1939},
        {"type": "end", "relation": "ev_War", "dd": 1, "mm": 1, "year": 1945},
        {"type": "end", "relation": "ev_War", "dd": 1, "mm": 1, "year": 1945},
        {"type": "begin", "relation": "ev_Expo"},
    ]
    f = _write(tmp_path / "events.json", json.dumps(events))
    report = load_kg(con, KGSource(triples=f, format="events", lenient=True))
    rows = con.execute("SELECT e.label, start_year, end_year FROM temporal_facts f JOIN entities e ON e.id = f.head ORDER BY 2").fetchall()
    assert rows == [("War", 1914, 1918), ("War", 1939, 1945)]
    assert (report.read, report.loaded, report.duplicates, report.rejected) == (6, 4, 1, 1)


# ---------------------------------------------------------------- real data (../shared/data)


@pytest.mark.shared_data
@pytest.mark.slow
def test_fb15k237_with_names(shared_data: Path, con) -> None:
    d = shared_data / "kg" / "fb15k-237"
    report = load_kg(con, KGSource(triples=[d / "train.txt.gz"], entity_labels=d / "FB15k_mid2name.txt",
                                   relation_labels=d / "relation2text.txt", name="fb15k237"))
    assert (report.read, report.loaded, report.rejected, report.duplicates) == (272_115, 272_115, 0, 0)
    assert report.relations == 237 and report.entities == 14_505
    assert report.label_coverage == 1.0
    label = con.execute("SELECT label FROM fb15k237.entities WHERE key = '/m/016ywr'").fetchone()[0]
    assert label == "Jeremy Irons"


@pytest.mark.shared_data
def test_codex_m_with_types(shared_data: Path, con) -> None:
    d = shared_data / "kg" / "codex"
    report = load_kg(con, KGSource(triples=d / "codex-m" / "train.txt", relation_labels=d / "relations/en/relations.json",
                                   entity_labels=d / "partial_entity_labels_en.tsv",
                                   entity_types=d / "types/entity2types.json", type_labels=d / "types/en/types.json"))
    assert report.read == 185_584 and report.loaded == 185_584
    assert report.entities == 17_050 and report.relations == 51
    typed = con.execute("SELECT count(DISTINCT entity) FROM entity_types").fetchone()[0]
    assert typed == 17_050  # the README's claim: entity2types.json covers every CoDEx-M entity
    assert report.labelled_entities == 849
    assert con.execute("SELECT label FROM relations WHERE key = 'P749'").fetchone()[0] == "parent organization"


@pytest.mark.shared_data
def test_dbpedia_samples(shared_data: Path, con) -> None:
    d = shared_data / "kg" / "dbpedia-sample"
    nt = load_kg(con, KGSource(triples=d / "sansa_outliers_dataset.nt", format="ntriples", lenient=True, name="nt"))
    assert (nt.read, nt.loaded, nt.duplicates, nt.rejected) == (831, 806, 25, 0)  # 806 distinct, as rdflib counts
    with pytest.raises(IngestError, match="line 1: .*rdf:langString"):
        load_kg(con, KGSource(triples=d / "sansa_outliers_dataset.nt", format="ntriples", name="strict"))
    ttl = load_kg(con, KGSource(triples=d / "smart_instance_types_en.ttl", format="turtle", name="ttl"))
    assert ttl.read == 60 and ttl.entity_types == 60 and ttl.rejected == 0
    nodot = load_kg(con, KGSource(triples=d / "kafkasl_dbpedia_countries_no-final-dot.nt.txt", format="ntriples",
                                  lenient=True, name="nodot"))
    # 9,444 lines lack their final " ." and are repaired; the truncated last line is the only reject
    assert (nodot.repaired, nodot.rejected, nodot.read) == (9_444, 1, 9_445) and _accounted(nodot)
    assert _rejects(con, "nodot")[0][0] == 9_445


@pytest.mark.shared_data
def test_yago11k_temporal(shared_data: Path, con) -> None:
    report = load_kg(con, KGSource(triples=shared_data / "kg/temporal/yago11k/train.tsv", format="temporal"))
    assert report.read == 16_408 and report.loaded + report.duplicates == 16_408 and report.rejected == 0
    ongoing, unknown_start = con.execute(
        "SELECT count(*) FILTER (WHERE ongoing), count(*) FILTER (WHERE start_year IS NULL) FROM temporal_facts"
    ).fetchone()
    assert ongoing > 1_000 and unknown_start > 0
    assert con.execute("SELECT count(*) FROM temporal_facts WHERE end_year = 3000 OR start_year = 0").fetchone()[0] == 0


@pytest.mark.shared_data
def test_kopl_example_kb(shared_data: Path, con) -> None:
    report = load_kg(con, KGSource(triples=shared_data / "seeds/kopl/example_kb.json", format="kopl"))
    assert report.entities == 4 and report.triples == 5 and report.rejected == 0
    types = dict(con.execute("SELECT e.label, t.type FROM entity_types t JOIN entities e ON e.id = t.entity").fetchall())
    assert types["LeBron James"] == "basketball player" and types["Cleveland Cavaliers"] == "basketball team"


TRICKY_NT = r"""<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .
<http://ex.org/a> <http://ex.org/name> "caf\u00E9 \"quoted\"" .
<http://ex.org/a> <http://ex.org/name> "Zürich"@de-CH .
_:node1 <http://ex.org/p> <http://ex.org/a> .
<http://ex.org/a%20b> <http://ex.org/p> <http://ex.org/c?x=1#frag> .
<http://ex.org/a> <http://ex.org/n> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://ex.org/\u00E9t\u00E9> <http://ex.org/p> <http://ex.org/b> .
<urn:isbn:123> <http://ex.org/p> "plain" .
  <http://ex.org/x>	<http://ex.org/p>	<http://ex.org/y>	.
# a comment line
<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # trailing comment
"""


def _reference_statements(data: bytes) -> set[tuple]:
    """What pyoxigraph alone reads from the file, as (subject, predicate, object-or-literal) tuples."""
    import pyoxigraph as ox

    out = set()
    for q in ox.parse(data, ox.RdfFormat.N_TRIPLES, lenient=True):
        s = q.subject.value if isinstance(q.subject, ox.NamedNode) else None
        o = q.object
        obj = ("iri", o.value) if isinstance(o, ox.NamedNode) else ("lit", o.value, o.language) if isinstance(o, ox.Literal) else ("bnode",)
        out.add((s, q.predicate.value, obj))
    return out


def _loaded_statements(con) -> set[tuple]:
    triples = con.execute(
        """SELECT CASE WHEN h.key LIKE '\\_:%' ESCAPE '\\' THEN NULL ELSE h.key END, r.key, t.key, t.key LIKE '\\_:%' ESCAPE '\\'
        FROM triples x JOIN entities h ON h.id = x.head JOIN relations r ON r.id = x.relation JOIN entities t ON t.id = x.tail"""
    ).fetchall()
    lits = con.execute(
        """SELECT CASE WHEN e.key LIKE '\\_:%' ESCAPE '\\' THEN NULL ELSE e.key END, r.key, l.value, l.lang
        FROM literals l JOIN entities e ON e.id = l.entity JOIN relations r ON r.id = l.relation"""
    ).fetchall()
    return {(s, p, ("bnode",) if blank else ("iri", o)) for s, p, o, blank in triples} | {
        (s, p, ("lit", v, lang)) for s, p, v, lang in lits}


@pytest.mark.parametrize("lenient", [False, True])
def test_ntriples_reads_exactly_what_pyoxigraph_reads(tmp_path: Path, con, lenient: bool) -> None:
    # lenient mode splits plain lines in bulk with DuckDB and hands the others to pyoxigraph
    f = _write(tmp_path / "tricky.nt", TRICKY_NT + '<http://ex.org/q> <http://ex.org/v> "two words"@EN .\n')
    report = load_kg(con, KGSource(triples=f, format="ntriples", lenient=lenient))
    assert report.rejected == 0 and report.read == 11 and report.duplicates == 1
    assert _loaded_statements(con) == _reference_statements(f.read_bytes())


def test_ntriples_lenient_bulk_path_on_plain_lines(tmp_path: Path, con) -> None:
    lines = [f"<http://ex.org/e{i}> <http://ex.org/r{i % 3}> <http://ex.org/e{i + 1}> ." for i in range(50)]
    lines += ['<http://ex.org/e1> <http://ex.org/name> "Alpha"@en-GB .', '<http://ex.org/e1> <http://ex.org/n> "7"^^<http://ex.org/int> .']
    lines.insert(10, "<http://ex.org/broken> <http://ex.org/r0>")
    f = _write(tmp_path / "plain.nt", "\n".join(lines) + "\n")
    report = load_kg(con, KGSource(triples=f, format="ntriples", lenient=True))
    assert (report.read, report.rejected, report.loaded) == (53, 1, 52) and _rejects(con)[0][0] == 11
    assert _loaded_statements(con) == _reference_statements("\n".join(x for x in lines if "broken" not in x).encode())


@pytest.mark.shared_data
def test_ntriples_bulk_path_matches_pyoxigraph_on_dbpedia(shared_data: Path, con) -> None:
    path = shared_data / "kg/dbpedia-sample/sansa_outliers_dataset.nt"
    load_kg(con, KGSource(triples=path, format="ntriples", lenient=True))
    ref = {s for s in _reference_statements(path.read_bytes())
           if s[1] not in ("http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "http://www.w3.org/2000/01/rdf-schema#label")}
    loaded = {s for s in _loaded_statements(con) if s[1] != "http://www.w3.org/2000/01/rdf-schema#label"}
    assert loaded == ref and len(ref) > 600


# ---------------------------------------------------------------- N-Triples: the bulk path equals pyoxigraph alone

# Each case is a whole file; the bulk path (DuckDB splits the plain lines) must load, count, reject and raise exactly
# what the pyoxigraph-only path does, in strict and in lenient mode.
NT_CASES = {
    "plain": "".join(f"<http://ex.org/e{i}> <http://ex.org/r{i % 4}> <http://ex.org/e{(i * 7) % 23}> .\n" for i in range(60))
    + "<http://ex.org/e1> <http://ex.org/r1> <http://ex.org/e7> .\n",
    "tricky": TRICKY_NT,
    # resources only (IRIs, blank nodes, rdf:type), no final line break: read by the Polars pass (_plain_file)
    "plain_resources": "_:b1 <http://ex.org/p> <http://ex.org/Z\u00fcrich> .\n<http://ex.org/Z\u00fcrich> <http://ex.org/p> _:b.2 .\n"
    "<http://ex.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/City> .\n"
    "<http://ex.org/a> <http://ex.org/p> _:b1 .\n<http://ex.org/a> <http://ex.org/p> _:b1 .\n<> <http://ex.org/q> <http://ex.org/a> .",
    "blank_nodes": "_:b1 <http://ex.org/p> _:b.2 .\n_:b.2 <http://ex.org/p> <http://ex.org/a> .\n"
    "<http://ex.org/a> <http://ex.org/p> _:x_y-z .\n_:b1 <http://ex.org/name> \"b\" .\n_:1a <http://ex.org/p> _:b1 .\n",
    "literals": '<http://ex.org/a> <http://ex.org/v> "tab\\there" .\n'
    '<http://ex.org/a> <http://ex.org/v> "line\\nbreak \\"q\\" back\\\\slash" .\n'
    '<http://ex.org/a> <http://ex.org/v> "\\u00E9t\\u00E9 \\U0001F600" .\n'
    '<http://ex.org/a> <http://ex.org/v> "" .\n'
    '<http://ex.org/a> <http://ex.org/v> ""@en .\n'
    '<http://ex.org/a> <http://ex.org/v> "x"^^<http://www.w3.org/2001/XMLSchema#string> .\n'
    '<http://ex.org/a> <http://ex.org/v> "x" .\n'
    '<http://ex.org/a> <http://ex.org/v> "12"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
    '<http://ex.org/a> <http://ex.org/v> "abc"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
    '<http://ex.org/a> <http://ex.org/v> "Zürich spaced"@de-CH .\n',
    "language_tags": "".join(
        f'<http://ex.org/a> <http://www.w3.org/2000/01/rdf-schema#label> "n{i}"@{tag} .\n'
        for i, tag in enumerate(["en", "EN-gb", "zh-Hant-TW", "es-419", "i-klingon", "en-GB-oxendict", "de-1996"])
    ),
    "comments_blank_crlf": "# header comment\r\n\r\n<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\r\n   \r\n"
    "<http://ex.org/a>\t<http://ex.org/p>\t<http://ex.org/c>\t.\r\n<http://ex.org/a> <http://ex.org/p> <http://ex.org/d>.\r\n"
    "<http://ex.org/a><http://ex.org/p><http://ex.org/e>.#no space\r\n# a b c\n",
    "iris": "<http://ex.org/Z\u00fcrich> <http://ex.org/p> <http://ex.org/caf\u00e9> .\n"
    "<http://ex.org/a%20b> <http://ex.org/p> <http://user@ex.org:8080/x?q=1&r=2#f> .\n"
    "<http://[::1]/x> <http://ex.org/p> <urn:isbn:0451450523> .\n"
    "<mailto:someone@ex.org> <http://ex.org/p> <file:///tmp/x> .\n"
    "<http://ex.org/\\u00E9> <http://ex.org/p> <http://ex.org/b> .\n"
    "<HTTP://EX.ORG/Upper> <http://ex.org/p> <http://ex.org/b?a?b> .\n",
    "types_and_labels": NT,
    # errors: each is rejected in lenient mode and stops a strict load at its line
    "missing_dot": "<http://ex.org/a> <http://ex.org/p> <http://ex.org/b>\n<http://ex.org/a> <http://ex.org/p> <http://ex.org/c> .\n",
    "junk_line": "<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\nthis is not rdf at all\n<http://ex.org/a> <http://ex.org/q> <http://ex.org/b> .\n",
    "junk_after_dot": "<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . junk\n",
    "unterminated_literal": '<http://ex.org/a> <http://ex.org/p> "open .\n<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n',
    "four_field_junk": "<http://ex.org/a> <http://ex.org/p> junk .\n<http://ex.org/b> <http://ex.org/p> <http://ex.org/c> .\n",
    "relative_iri": "<http://ex.org/a> <http://ex.org/p> <b> .\n<a> <http://ex.org/p> <http://ex.org/b> .\n",
    "iri_with_space": "<http://ex.org/a b> <http://ex.org/p> <http://ex.org/c> .\n",
    "bad_percent": "<http://ex.org/a> <http://ex.org/p> <http://ex.org/%zz> .\n",
    "two_fragments": "<http://ex.org/a> <http://ex.org/p> <http://ex.org/b#c#d> .\n",
    "bad_port": "<http://ex.org:80x/a> <http://ex.org/p> <http://ex.org/b> .\n",
    "noncharacter_iri": "<http://ex.org/a> <http://ex.org/p> <http://ex.org/\ufffe> .\n",
    "bad_language_tags": '<http://ex.org/a> <http://ex.org/p> "x"@abcdefghij .\n<http://ex.org/a> <http://ex.org/p> "y"@en-a .\n'
    '<http://ex.org/a> <http://ex.org/p> "z"@en--ltr .\n',
    "lang_string_datatype": '<http://ex.org/a> <http://ex.org/p> "x"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> .\n',
    "blank_node_iri": "<_:x> <http://ex.org/p> <http://ex.org/b> .\n",
    "literal_subject": '"lit" <http://ex.org/p> <http://ex.org/b> .\n',
    "iri_grammar_chars": "<http://ex.org/{a}> <http://ex.org/p> <http://ex.org/a|b> .\n<http://ex.org/a^b> <http://ex.org/p> "
    "<http://ex.org/a`b> .\n<http://ex.org/a\x01b> <http://ex.org/p> <http://ex.org/c> .\n",
    "bare_carriage_return": '<http://ex.org/a> <http://ex.org/p> "x\ry" .\n<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n'
    "<http://ex.org/a> <http://ex.org/p> <http://ex.org/c>\r.\n<http://ex.org/a> <http://ex.org/q> <http://ex.org/b> .\n",
    "literal_across_lines": '<http://ex.org/a> <http://ex.org/p> "one\ntwo" .\n<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n',
    # bytes that are not UTF-8, in an IRI of a plain line and in a literal with spaces
    "invalid_utf8": b'<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n<http://ex.org/a\xff> <http://ex.org/p> <http://ex.org/c> .\n'
    b'<http://ex.org/a> <http://ex.org/p> "two \xc3 words" .\n<http://ex.org/b> <http://ex.org/p> <http://ex.org/c> .\n',
}


def _whole_output(con, schema: str) -> dict[str, Any]:
    """Every KG table of ``schema`` by keys (not ids), for comparing two loads."""
    q = lambda sql: sorted(con.execute(sql.replace("S.", f'"{schema}".')).fetchall(), key=repr)
    return {
        "entities": q("SELECT key, label FROM S.entities"),
        "relations": q("SELECT key, label FROM S.relations"),
        "triples": q("SELECT h.key, r.key, t.key FROM S.triples x JOIN S.entities h ON h.id = x.head "
                     "JOIN S.relations r ON r.id = x.relation JOIN S.entities t ON t.id = x.tail"),
        "literals": q("SELECT e.key, r.key, l.value, l.datatype, l.lang FROM S.literals l JOIN S.entities e ON e.id = l.entity "
                      "JOIN S.relations r ON r.id = l.relation"),
        "entity_types": q("SELECT e.key, t.type, t.type_key FROM S.entity_types t JOIN S.entities e ON e.id = t.entity"),
        "rejects": q("SELECT line, raw, reason FROM S.rejects"),
    }


def _load_both_ways(path: Path, lenient: bool, monkeypatch) -> tuple[Any, Any]:
    from kgprobe.kg import ingest

    out = []
    for bulk in (True, False):
        monkeypatch.setattr(ingest, "_NTRIPLES_BULK", bulk)
        c = duckdb.connect()
        try:
            report = load_kg(c, KGSource(triples=path, format="ntriples", lenient=lenient))
            fields = {k: v for k, v in report.as_dict().items() if k not in ("seconds", "snapshot_id")}
            out.append((fields, _whole_output(c, "main")))
        except IngestError as exc:
            out.append(("IngestError", str(exc)))
        finally:
            c.close()
    return out[0], out[1]


@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
@pytest.mark.parametrize("case", sorted(NT_CASES))
def test_ntriples_bulk_path_equals_pyoxigraph_path(tmp_path: Path, monkeypatch, case: str, lenient: bool) -> None:
    f = _write(tmp_path / f"{case}.nt", NT_CASES[case])
    bulk, reference = _load_both_ways(f, lenient, monkeypatch)
    assert bulk == reference
    if bulk[0] != "IngestError":
        assert bulk[0]["read"] == bulk[0]["loaded"] + bulk[0]["duplicates"] + bulk[0]["rejected"]


@pytest.mark.parametrize(("lenient", "block"), [(False, None), (True, None), (False, 512), (True, 512)],
                         ids=["strict-one_block", "lenient-one_block", "strict-blocks_of_512_bytes", "lenient-blocks_of_512_bytes"])
def test_ntriples_polars_pass_stages_what_the_duckdb_split_stages(tmp_path: Path, monkeypatch, lenient: bool,
                                                                  block: int | None) -> None:
    from kgprobe.kg import ingest

    if block:  # lines cut into many blocks: a bad line in a later block still sends the whole file to the split
        monkeypatch.setattr(ingest, "_PLAIN_BLOCK_BYTES", block)
    taken: list[bool] = []
    kept: list[tuple[int, int]] = []  # after each file the Polars pass took: triples kept as codes, rows of _st_rdf
    polars_pass = ingest._plain_file

    def record(stage: Any, *args: Any) -> bool:
        taken.append(polars_pass(stage, *args))
        if taken[-1]:
            kept.append((stage.coded.rows, stage.con.execute("SELECT count(*) FROM _st_rdf").fetchone()[0]))
        return taken[-1]

    plain = NT_CASES["plain_resources"] + "\n" + NT_CASES["plain"]
    files = {name: _write(tmp_path / f"{name}.nt", text) for name, text in {
        "plain": plain, "literal": plain + '<http://ex.org/a> <http://ex.org/v> "x" .\n',
        "blank_line": plain.replace("\n", "\n\n", 1), "blank_first_line": "\n" + plain,
        "blank_last_lines": plain + "\n\n", "spaces_line": plain + "  \n", "crlf": plain.replace("\n", "\r\n"),
        "tab": plain.replace("> <", ">\t<", 1), "odd_blank_node": plain + "_:b. <http://ex.org/p> <http://ex.org/a> .\n",
    }.items()}
    files["plain_gz"] = _write(tmp_path / "plain.nt.gz", plain)
    # no blank node: every term is an IRI and loses its brackets by slicing (a non-ASCII IRI among them)
    iris_only = "<http://ex.org/Gen\u00e8ve> <http://ex.org/p> <http://ex.org/\u00c5s> .\n" + "".join(
        line for line in plain.splitlines(keepends=True) if "_:" not in line)
    assert iris_only.count("\n") > 50
    files["iris_only"] = _write(tmp_path / "iris_only.nt", iris_only)
    # the empty IRI <> is not absolute: in strict mode the Polars pass, which validates the IRIs of each block,
    # declines the files above that hold it and takes this one
    files["valid"] = _write(tmp_path / "valid.nt", "".join(line for line in plain.splitlines(keepends=True)
                                                           if not line.startswith("<> ")))
    # dated facts beside it: their triples join the file's (one repeats a triple of the file, one names new keys)
    dated = _write(tmp_path / "dated.tsv", "http://ex.org/e1\thttp://ex.org/r1\thttp://ex.org/e7\t1990\t2000\n"
                   "http://ex.org/a\thttp://ex.org/born\thttp://ex.org/New\t1950\t\n")
    files["valid_dated"] = files["valid"]
    # only rdf:type statements: no triple at all, every statement routed
    files["types_only"] = _write(tmp_path / "types_only.nt", "".join(
        f"<http://ex.org/e{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/C{i % 3}> .\n" for i in range(9)))
    # several files, two of them taken by the Polars pass: the codes of their terms are shared (the second repeats
    # triples of the first and names new keys) and the statements of the file the split reads join them
    second = _write(tmp_path / "second.nt", "<http://ex.org/e1> <http://ex.org/r1> <http://ex.org/e7> .\n"
                    "<http://ex.org/e7> <http://ex.org/r9> <http://ex.org/Second> .\n")
    files["several"] = [files["valid"], files["literal"], second]
    taken_by_polars = {"valid", "valid_dated", "types_only"} | ({"plain", "plain_gz", "iris_only"} if lenient else set())
    outputs = {}
    for name, path in files.items():
        for on in (True, False):
            taken.clear()
            kept.clear()
            monkeypatch.setattr(ingest, "_plain_file", record if on else lambda *a: False)
            c = duckdb.connect()
            try:
                report = load_kg(c, KGSource(triples=path, format="ntriples", lenient=lenient,
                                             temporal=dated if name == "valid_dated" else None))
                outputs[name, on] = ({k: v for k, v in report.as_dict().items() if k not in ("seconds",)}, _whole_output(c, "main"))
            except IngestError as exc:
                outputs[name, on] = ("IngestError", str(exc))
            finally:  # nothing of the load is left registered or staged
                assert not c.execute("SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal").fetchall()
                assert not c.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
                c.close()
            if on and name == "several":
                assert taken == [True, False, True]
                # the rdf:type statement of the first file; the second's triples join the first's codes
                assert kept == [(65, 1), (67, 69)]
            elif on:
                assert taken[:1] == [name in taken_by_polars], name
                # every statement, however many blocks it was read in: the triples as codes, rdf:type in _st_rdf
                lines = [line for line in _read_text(path).splitlines() if line]
                typed = sum("rdf-syntax-ns#type" in line for line in lines)
                assert kept == ([(len(lines) - typed, typed)] if taken[:1] == [True] else []), name
        assert outputs[name, True] == outputs[name, False], name
    if lenient:  # (strict pyoxigraph stops at the <> of the file the split reads)
        assert (outputs["several", True][0]["triples"], outputs["several", True][0]["literals"]) == (65, 1)
    if not lenient:  # strict pyoxigraph stops at <>
        assert outputs["plain", True][0] == "IngestError" and "plain.nt, line 6: N-Triples syntax error" in outputs["plain", True][1]
        assert outputs["valid", True][0]["triples"] == 63  # the 64 below but the one from <>
        # the dated facts add one triple (the other is the file's) and their new entity
        assert outputs["valid_dated", True][0]["triples"] == 64 and outputs["valid_dated", True][0]["temporal_facts"] == 2
        assert "http://ex.org/New" in {k for k, _ in outputs["valid_dated", True][1]["entities"]}
        return
    fields, tables = outputs["plain", True]
    # 6 + 61 lines, two of them repeats; one rdf:type statement (a type, not a triple); blank nodes are entities
    assert (fields["read"], fields["duplicates"], fields["triples"], fields["entity_types"]) == (67, 2, 64, 1)
    assert {k for k, _ in tables["entities"]} >= {"_:b1", "_:b.2", "http://ex.org/Z\u00fcrich", "http://ex.org/a"}


@pytest.mark.slow
def test_ntriples_bulk_cases_cover_errors_and_loads(tmp_path: Path, monkeypatch) -> None:
    # the cases above are only worth comparing if they exercise both outcomes in both modes
    strict_errors = lenient_rejects = 0
    for case, text in NT_CASES.items():
        f = _write(tmp_path / f"{case}.nt", text)
        strict, _ = _load_both_ways(f, False, monkeypatch)
        lenient, _ = _load_both_ways(f, True, monkeypatch)
        strict_errors += strict[0] == "IngestError"
        lenient_rejects += lenient[0] != "IngestError" and lenient[0]["rejected"] > 0
    assert strict_errors >= 12 and lenient_rejects >= 5


def test_ntriples_strict_bulk_error_names_the_line(tmp_path: Path, con) -> None:
    lines = [f"<http://ex.org/e{i}> <http://ex.org/r> <http://ex.org/e{i + 1}> ." for i in range(100)]
    lines[41] = "<http://ex.org/e41> <http://ex.org/r> <http://ex.org/bad%zz> ."
    f = _write(tmp_path / "kg.nt", "\n".join(lines) + "\n")
    with pytest.raises(IngestError, match=r"kg\.nt, line 42: N-Triples syntax error: .*percent encoding"):
        load_kg(con, KGSource(triples=f, format="ntriples"))


def test_ntriples_strict_terms_are_checked_for_the_whole_load(tmp_path: Path, con) -> None:
    # the IRIs and language tags of the DuckDB-split lines are checked once, on the load's distinct terms; a bad one
    # in the second file (an object, a predicate or a language tag) still stops the load at its file and line
    good = _write(tmp_path / "a.nt", "<http://ex.org/a> <http://ex.org/r> <http://ex.org/b> .\n")
    for name, bad, match in [
        ("object", "<http://ex.org/b> <http://ex.org/r> <http://ex.org/bad%zz> .", "percent encoding"),
        ("predicate", "<http://ex.org/b> <http://ex.org/r%zz> <http://ex.org/a> .", "percent encoding"),
        ("language", '<http://ex.org/b> <http://ex.org/r> "x"@abcdefghij .', "subtag"),
    ]:
        second = _write(tmp_path / f"b_{name}.nt", "<http://ex.org/b> <http://ex.org/r> <http://ex.org/c> .\n" + bad + "\n")
        with pytest.raises(IngestError, match=rf"b_{name}\.nt, line 2: N-Triples syntax error: .*{match}"):
            load_kg(con, KGSource(triples=[good, second], format="ntriples"))
        report = load_kg(con, KGSource(triples=[good, second], format="ntriples", lenient=True))
        assert (report.read, report.loaded, report.rejected) == (3, 3, 0)  # lenient, like pyoxigraph, loads them


def test_ntriples_iri_and_language_patterns_accept_only_what_pyoxigraph_accepts() -> None:
    # the bulk path trusts an IRI or language tag that matches these patterns without asking pyoxigraph
    import random

    import pyoxigraph as ox

    from kgprobe.kg.ingest import _IRI, _LANGTAG

    rng = random.Random(7)
    pieces = ["http", "urn", "a", ":", "//", "/", "?", "#", "@", "%", "%2F", "%zz", "[", "]", ":80", "x", "é", " ", "-",
              ".", "~", "!", "$", "&", "'", "(", "*", "+", ",", ";", "=", "_", "9", "{", "|", "\\", "^", "`", '"', "<"]
    iris = ["http://ex.org/a", "urn:isbn:1", "mailto:a@b", "http://a:8080/x?y#z", "file:///x", "a:", "http:"]
    schemes = ["http", "urn", "a", "x+y.z-1", "HTTP", "9x", "", "h ttp", "_"]
    iris += [rng.choice(schemes) + ":" + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10))) for _ in range(4000)]
    letters = ["a", "b", "en", "zh", "Hant", "GB", "419", "1996", "x", "-", "--", "abcdefghi", "i"]
    tags = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 5))) for _ in range(2000)]
    c = duckdb.connect()
    matched_iris = [v for (v,) in c.execute("SELECT v FROM unnest($v) t(v) WHERE regexp_full_match(v, $p)",
                                             {"v": iris, "p": _IRI}).fetchall()]
    matched_tags = [v for (v,) in c.execute("SELECT v FROM unnest($v) t(v) WHERE regexp_full_match(v, $p)",
                                             {"v": tags, "p": _LANGTAG}).fetchall()]
    assert len(matched_iris) > 100 and len(matched_tags) > 50  # the fuzz reaches the patterns
    for iri in matched_iris:
        ox.NamedNode(iri)  # raises ValueError if pyoxigraph's strict check disagrees
    for tag in matched_tags:
        ox.Literal("x", language=tag)
