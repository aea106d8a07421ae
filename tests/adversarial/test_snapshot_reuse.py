"""A stored KG snapshot is reused only when the same bytes would be read the same way: a snapshot loaded by an
older parser (before a fix to what it loads, rejects or labels) or with other parse options is read again, not
served with its old labels and counts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from kgprobe import KGSource, load_kg
from kgprobe.kg import ingest


@pytest.fixture
def source(tmp_path: Path) -> KGSource:
    (tmp_path / "t.tsv").write_text("a\tr\tb\nc\tr\td\n", encoding="utf-8")
    (tmp_path / "l.tsv").write_bytes(b"\xef\xbb\xbfa\tAlpha\nc\tCharlie\n")
    return KGSource(triples=[tmp_path / "t.tsv"], entity_labels=tmp_path / "l.tsv", name="kg")


def _labels(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("SELECT key, label FROM kg.entities").fetchall())


def test_a_snapshot_from_another_parser_version_is_read_again(source: KGSource, monkeypatch) -> None:
    con = duckdb.connect()
    first = load_kg(con, source)
    # what an older parser left behind: labels it read differently (here, the first one lost to a byte-order mark)
    con.execute("UPDATE kg.entities SET label = key")
    assert load_kg(con, source).reused and _labels(con)["a"] == "a"  # same parser, same bytes: reused as stored
    monkeypatch.setattr(ingest, "PARSER_VERSION", ingest.PARSER_VERSION + 1)
    again = load_kg(con, source)
    assert not again.reused and again.snapshot_id != first.snapshot_id
    assert _labels(con) == {"a": "Alpha", "b": "b", "c": "Charlie", "d": "d"}
    assert con.execute("SELECT count(DISTINCT snapshot_id) FROM kg.snapshots").fetchone()[0] == 2


@pytest.mark.parametrize("option", [{"lenient": True}, {"header": False}, {"encoding": "latin-1"}, {"label_lang": "de"}])
def test_a_snapshot_loaded_with_other_parse_options_is_read_again(source: KGSource, option: dict) -> None:
    con = duckdb.connect()
    first = load_kg(con, source)
    other = load_kg(con, replace(source, **option))
    assert not other.reused and other.snapshot_id != first.snapshot_id
    assert load_kg(con, replace(source, **option)).reused


def test_the_snapshot_id_names_the_parser_version(source: KGSource, monkeypatch) -> None:
    ids = set()
    for version in (ingest.PARSER_VERSION, ingest.PARSER_VERSION + 1):
        monkeypatch.setattr(ingest, "PARSER_VERSION", version)
        ids.add(load_kg(duckdb.connect(), source).snapshot_id)
    assert len(ids) == 2
