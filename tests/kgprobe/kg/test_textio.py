"""kgprobe.kg.textio: the chunked readers give what a whole-file read gives, whatever the chunk size (a line, a
CRLF, a JSON entry or a multi-byte character cut by a chunk's end), and name the line where a broken file stops."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import duckdb
import pytest

from kgprobe.errors import IngestError
from kgprobe.kg import textio
from kgprobe.kg.ingest import KGSource, load_kg

TRIPLES = "a\tr\tb\r\nc\tr\rx\td\r\nÉ\tr\tc\r\n\r\ng\tr\th\tj\r\nk\tr\tl"
LABELS_TSV = "entity\tlabel\na\tAlpha\nc\tCharlie\nnovalue\nc\tOther\nÉ\tÉcho\nc\tCharlie\n a \t spaced \n"
LABELS_JSON = json.dumps({"a": "Alpha", "c": {"label": "Char\nlie"}, "É": "Écho", "b": "", "k": "K\u00e9y"},
                         indent=1)[:-1] + ',\n"a": "Again", "z": "Zed"}'


def _load(folder: Path, suffix: str = "") -> tuple:
    files = {"t.tsv": TRIPLES, "l.tsv": LABELS_TSV, "l.json": LABELS_JSON}
    for name, text in files.items():
        path = folder / (name + suffix)
        path.write_bytes(gzip.compress(text.encode(), mtime=0) if suffix else text.encode())
    out = []
    for labels in ("l.tsv", "l.json"):
        con = duckdb.connect()
        report = load_kg(con, KGSource(triples=[folder / f"t.tsv{suffix}"], entity_labels=folder / f"{labels}{suffix}",
                                       lenient=True, name="kg"))
        out.append(((report.read, report.loaded, report.rejected), report.side_files,
                    con.execute("SELECT line, raw, reason FROM kg.rejects ORDER BY line, reason").fetchall(),
                    con.execute("SELECT key, label FROM kg.entities ORDER BY key").fetchall()))
    return tuple(out)


@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("chunk", [1, 2, 5, 13])
def test_chunked_reads_equal_a_whole_read(tmp_path: Path, monkeypatch, chunk: int, suffix: str) -> None:
    whole = _load(tmp_path, suffix)
    monkeypatch.setattr(textio, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(textio, "_JSON_LOOKAHEAD", 3)
    assert _load(tmp_path, suffix) == whole
    tsv, js = whole
    # the triples: a CR inside a field and a fourth field rejected with their lines; the labels' rules
    assert tsv[0] == (5, 3, 2) and [r[0] for r in tsv[2] if "columns" in r[2] or "carriage" in r[2]][:2] == [2, 5]
    assert {("a", "Alpha"), ("c", "Charlie"), ("É", "Écho")} <= set(tsv[3])
    assert tsv[1]["entity_labels"] == {"read": 7, "rejected": 3, "duplicates": 1}
    assert js[1]["entity_labels"] == {"read": 7, "rejected": 2, "empty": 1, "duplicates": 0}
    assert {("a", "Alpha"), ("c", "c"), ("É", "Écho"), ("k", "Kéy")} <= set(js[3])


def test_text_chunks_name_the_line_of_a_bad_character(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "l.tsv"
    path.write_bytes(b"a\tAlpha\nb\tBr\xe9vo\n")
    monkeypatch.setattr(textio, "CHUNK_BYTES", 4)
    with pytest.raises(IngestError, match=r"l\.tsv, line 2: not valid utf-8 text"):
        list(textio.text_chunks(path, "utf-8"))


def test_a_json_label_file_that_is_not_one_object_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "l.json"
    for text, line, what in [('{"a": "x",\n"b" "y"}', 2, "expected ':'"), ('{"a": "x"}\n[1]', 2, "text after"),
                             ('{"a": "x",\n\n "b": "y"', 3, "expected ',' or '}'"), ('{"a": [1,\n', 2, "invalid JSON")]:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(IngestError, match=rf"l\.json, line {line}: {what}"):
            list(textio.JsonObjectStream(path, "utf-8", role="entity_labels"))
