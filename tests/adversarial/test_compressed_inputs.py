"""Compressed KG files cut short or corrupted in transit: a load must stop with the file and the line reached, in
strict and lenient mode alike (the rows after the cut are lost, not rejected), and leave the KG loaded before in
place. DuckDB's CSV reader loads the prefix of a truncated ``.gz`` without a word, so a half download would
otherwise become a KG missing half its facts."""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

import duckdb
import pytest

from kgprobe import KGSource, load_kg
from kgprobe.errors import IngestError

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample"


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _lines_before_cut(compressed: bytes) -> int:
    """The complete lines that a cut-short gzip stream still holds (zlib returns all it can decompress)."""
    return zlib.decompressobj(wbits=31).decompress(compressed).count(b"\n")


def _cut(tmp_path: Path, name: str, data: bytes) -> tuple[Path, int]:
    whole = _gz(data)
    path = tmp_path / name
    path.write_bytes(whole[: len(whole) // 2])
    return path, _lines_before_cut(whole[: len(whole) // 2]) + 1


def _flipped(tmp_path: Path, name: str, data: bytes) -> Path:
    whole = bytearray(_gz(data))
    whole[len(whole) // 2] ^= 0xFF
    path = tmp_path / name
    path.write_bytes(bytes(whole))
    return path


def _csv(tsv: bytes) -> bytes:
    return tsv.replace(b",", b" ").replace(b"\t", b",")


@pytest.mark.parametrize("lenient", [False, True])
@pytest.mark.parametrize("fmt", ["tsv", "csv"])
def test_a_cut_short_gzip_is_an_error_naming_the_line_reached(tmp_path: Path, fmt: str, lenient: bool) -> None:
    triples = (SAMPLE / "triples.tsv").read_bytes()
    path, line = _cut(tmp_path, f"kg.{fmt}.gz", triples if fmt == "tsv" else _csv(triples))
    assert 100 < line < triples.count(b"\n")  # half the sample: the prefix alone is a plausible KG
    con = duckdb.connect()
    good = load_kg(con, KGSource(triples=[SAMPLE / "triples.tsv"], name="kg"))
    with pytest.raises(IngestError, match=rf"^{re.escape(str(path))}, line {line}: the compressed file ends early"):
        load_kg(con, KGSource(triples=[path], format=fmt, lenient=lenient, name="kg"))
    # nothing half-loaded: the KG loaded before is still there, whole
    assert con.execute("SELECT count(*) FROM kg.triples").fetchone()[0] == good.triples == 1552
    assert con.execute("SELECT count(*) FROM kg.rejects").fetchone()[0] == 0


@pytest.mark.parametrize("lenient", [False, True])
def test_a_corrupt_gzip_is_an_error_naming_the_file(tmp_path: Path, lenient: bool) -> None:
    path = _flipped(tmp_path, "kg.tsv.gz", (SAMPLE / "triples.tsv").read_bytes())
    with pytest.raises(IngestError, match=rf"^{re.escape(str(path))}, line \d+: the compressed file ends early or is "
                                          "corrupt"):
        load_kg(duckdb.connect(), KGSource(triples=[path], lenient=lenient))


@pytest.mark.parametrize("role", ["temporal", "entity_labels", "entity_types"])
def test_a_cut_short_gzip_beside_the_triples_is_an_error_too(tmp_path: Path, role: str) -> None:
    # the temporal reader used to end in a raw EOFError traceback; labels and types were read through gzip whole
    source = {"temporal": "temporal.tsv", "entity_labels": "entity_labels.tsv", "entity_types": "entity_types.tsv"}
    path, line = _cut(tmp_path, f"{role}.tsv.gz", (SAMPLE / source[role]).read_bytes())
    side = {role: [path] if role == "temporal" else path}
    with pytest.raises(IngestError, match=rf"^{re.escape(str(path))}, line {line}: the compressed file ends early"):
        load_kg(duckdb.connect(), KGSource(triples=[SAMPLE / "triples.tsv"], lenient=True, **side))


def test_a_cut_short_gzip_of_rdf_and_json_is_an_error(tmp_path: Path) -> None:
    nt = b"".join(b"<http://x/e%d> <http://x/r> <http://x/e%d> .\n" % (i, i + 1) for i in range(20_000))
    path, line = _cut(tmp_path, "kg.nt.gz", nt)
    for fmt in ("ntriples", "turtle"):
        with pytest.raises(IngestError, match=rf"kg\.nt\.gz, line {line}: the compressed file ends early"):
            load_kg(duckdb.connect(), KGSource(triples=[path], format=fmt, lenient=True))


def test_a_whole_gzip_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "kg.tsv.gz"
    path.write_bytes(_gz((SAMPLE / "triples.tsv").read_bytes()) + _gz(b"extra\tmember\trow\n"))  # two members
    report = load_kg(duckdb.connect(), KGSource(triples=[path]))
    assert (report.read, report.rejected) == (1553, 0)
