"""Load knowledge graphs into DuckDB: delimited triples, RDF, KoPL JSON, temporal facts and event lists.

Every row read is accounted for: it is loaded, counted as an exact duplicate of a row loaded before, or written
to the ``rejects`` table with its file, line and a reason, so that ``read == loaded + duplicates + rejected``.

    >>> con = duckdb.connect("warehouse/kgprobe.duckdb")
    >>> report = load_kg(con, KGSource(triples=["train.txt.gz"], format="tsv", entity_labels="mid2name.txt"))

Each KG lives in its own DuckDB schema (``KGSource.name``, default ``main``) with the tables of
:data:`kgprobe.sql.KG_TABLES`; entities and relations are dictionary-encoded to BIGINT ids ordered by key, so the
same input always gives the same ids. Re-loading the same input is idempotent: it yields the same ``snapshot_id``
(a content hash of the files and parse options) and, when that snapshot is already in the schema, reuses it.
"""

from __future__ import annotations

import codecs
import datetime as _dt
import hashlib
import io
import itertools
import json
import re
import time
import urllib.parse
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from kgprobe.errors import IngestError
from kgprobe.kg.textio import (
    BOM,
    JsonObjectStream,
    byte_chunks,
    check_compressed,
    compressed_error,
    decode_json,
    line_blocks,
    open_binary,
    read_bytes,
    text_chunks,
    text_codec,
)
from kgprobe.sql import KG_TABLES, create_kg_tables, load_sql, quote_identifier

__all__ = [
    "FORMATS",
    "PARSER_VERSION",
    "IngestReport",
    "KGSource",
    "load_kg",
]

#: The version of the readers in this module, part of every snapshot id: a change to what a reader loads, rejects or
#: labels from the same bytes bumps it, so that a KG loaded before the change is read again rather than reused.
#: 2: gzip files cut short refused, byte-order marks dropped, line breaks in labels and keys and repeated
#: rdfs:labels rejected. 3: escaped ``\\uXXXX`` in label files decoded, a YAGO key's language prefix
#: (``de/Adam_Kensy``) left out of the label a key gives.
PARSER_VERSION = 3

Format = Literal["tsv", "csv", "parquet", "ntriples", "turtle", "kopl", "temporal", "events"]
FORMATS: tuple[str, ...] = ("tsv", "csv", "parquet", "ntriples", "turtle", "kopl", "temporal", "events")

_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
# IRIs and language tags of bulk-split N-Triples lines that strict mode accepts without asking pyoxigraph: absolute
# IRIs of ASCII characters (a subset of RFC 3987: scheme, optional authority without user info, path, one query, one
# fragment, valid percent escapes) and BCP 47 tags of the form language[-script][-region]. Other distinct values are
# validated by pyoxigraph, one call each.
_IRI_CHAR = r"(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})"
_IRI_PCHAR = r"(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})"
_IRI_TAIL = r"(?:[A-Za-z0-9._~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})"
_IRI = (
    rf"[A-Za-z][A-Za-z0-9+.-]*:(?://{_IRI_CHAR}*(?::[0-9]*)?(?:/(?:{_IRI_PCHAR}|/)*)?|/?(?:{_IRI_PCHAR}(?:{_IRI_PCHAR}|/)*)?)"
    rf"(?:\?(?:{_IRI_TAIL})*)?(?:#(?:{_IRI_TAIL})*)?"
)
_LANGTAG = r"[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?"
# the bulk path for N-Triples (tests switch it off to compare with pyoxigraph alone)
_NTRIPLES_BULK = True
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_HEADER_NAMES = {
    "head", "relation", "tail", "subject", "predicate", "object", "h", "r", "t", "s", "p", "o",
    "rel", "start", "end", "start_year", "end_year", "begin",
}
_SIDE_HEADER_KEYS = {"id", "key", "entity", "entity_id", "mid", "relation", "relation_id", "qid", "pid"}
_SIDE_ROLES = ("entity_labels", "relation_labels", "entity_types", "type_labels")
_UNKNOWN_YEARS = {"", "0", "####", "-", "null", "none", "nan"}
_ONGOING_YEAR = 3000


@dataclass(frozen=True)
class KGSource:
    """Where a KG comes from and how to read it.

    ``triples`` are one or more files (``.gz`` is read transparently). Side files are optional: ``entity_labels``
    and ``relation_labels`` map keys to names (TSV ``key<TAB>label`` or a JSON object, values either strings or
    objects with a ``label``); ``entity_types`` maps entity keys to one or more types (TSV ``key<TAB>type`` rows or a
    JSON object of lists, like CoDEx's ``entity2types.json``), with type names from ``type_labels`` (like CoDEx's
    ``types.json``). ``name`` is the DuckDB schema the KG is loaded into, so several KGs share one warehouse.
    ``temporal`` adds dated facts (``head, relation, tail, start, end`` rows, as for format ``temporal``) to the
    same KG; their (head, relation, tail) also become triples. ``lenient`` records unparseable rows in ``rejects`` and loads the rest; strict mode (the default) stops at
    the first one with an error naming the file and line.
    """

    triples: Sequence[str | Path] | str | Path
    format: str = "tsv"
    entity_labels: str | Path | None = None
    relation_labels: str | Path | None = None
    entity_types: str | Path | None = None
    type_labels: str | Path | None = None
    temporal: Sequence[str | Path] | str | Path | None = None
    name: str = "main"
    lenient: bool = False
    header: bool | None = None
    encoding: str = "utf-8"
    label_lang: str = "en"

    @property
    def files(self) -> tuple[Path, ...]:
        """The triple files as paths, in the order given."""
        return _paths(self.triples)

    @property
    def temporal_files(self) -> tuple[Path, ...]:
        """The extra temporal-fact files as paths."""
        return _paths(self.temporal)

    def options(self) -> dict[str, Any]:
        """The parse options that change what is loaded (part of the snapshot id)."""
        return {
            "format": self.format,
            "lenient": self.lenient,
            "header": self.header,
            "encoding": self.encoding,
            "label_lang": self.label_lang,
        }


def _paths(value: Sequence[str | Path] | str | Path | None) -> tuple[Path, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, Path)):
        return (Path(value),)
    return tuple(Path(p) for p in value)


@dataclass(frozen=True)
class IngestReport:
    """What one :func:`load_kg` call did. ``read == loaded + duplicates + rejected`` for the triple files."""

    snapshot_id: str
    kg: str
    format: str
    read: int
    loaded: int
    duplicates: int
    rejected: int
    entities: int = 0
    relations: int = 0
    triples: int = 0
    literals: int = 0
    entity_types: int = 0
    temporal_facts: int = 0
    labelled_entities: int = 0
    repaired: int = 0
    reused: bool = False
    seconds: float = 0.0
    side_files: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def reject_rate(self) -> float:
        """Share of rows read that were rejected (0 when nothing was read)."""
        return self.rejected / self.read if self.read else 0.0

    @property
    def label_coverage(self) -> float:
        """Share of entities whose label came from a label source rather than from their key."""
        return self.labelled_entities / self.entities if self.entities else 0.0

    def as_dict(self) -> dict[str, Any]:
        """All fields plus the derived rates, for logs and asset metadata."""
        out = asdict(self)
        out["reject_rate"] = self.reject_rate
        out["label_coverage"] = self.label_coverage
        return out


# --------------------------------------------------------------------------------------------------------------
# Staging: every reader fills the same temporary tables, then _finish() encodes and writes the KG tables.
# --------------------------------------------------------------------------------------------------------------


@dataclass
class _Counts:
    read: int = 0
    loaded: int = 0
    duplicates: int = 0
    rejected: int = 0
    repaired: int = 0


class _Restage(Exception):
    """Raised when a fast staging pass met rows it does not handle exactly; ``load_kg`` reads the files again."""


class _Stage:
    """Temporary tables holding keys (not ids) while a KG is read."""

    def __init__(self, con: duckdb.DuckDBPyConnection, source: KGSource, *, exact: bool = False) -> None:
        self.con = con
        self.source = source
        # Parquet keys are staged as stored unless ``exact``; _finish checks the distinct keys for padding or blanks
        # (far fewer than rows) and raises _Restage when there is any, and load_kg then reads with trim per row
        self.exact = exact
        self.untrimmed = False
        # likewise strict N-Triples: the IRIs and language tags of the lines DuckDB split are validated once for the
        # whole load, on its distinct terms, unless ``exact`` (then once per file, before its rows are staged)
        self.unchecked_terms = False
        self.counts = _Counts()
        self.rejects: list[tuple[str, int | None, str | None, str]] = []
        # labels found inside the data itself (rdfs:label, KoPL names): key -> label
        self.entity_labels: dict[str, str] = {}
        self.relation_labels: dict[str, str] = {}
        self.side_files: dict[str, dict[str, int]] = {}
        # the triples of the plain N-Triples files as codes (see _plain_file); None while there are none
        self.coded: _Coded | None = None
        _drop_staged_triples(con)  # a view over _st_rdf after an RDF load (see rdf_route_triples.sql)
        _unregister_coded(con)
        con.execute("CREATE OR REPLACE TEMP TABLE _st_triples (head VARCHAR, relation VARCHAR, tail VARCHAR, src VARCHAR, line BIGINT)")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _st_literals (entity VARCHAR, relation VARCHAR, value VARCHAR, datatype VARCHAR, lang VARCHAR)"
        )
        con.execute("CREATE OR REPLACE TEMP TABLE _st_types (entity VARCHAR, type VARCHAR, type_key VARCHAR)")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _st_temporal (head VARCHAR, relation VARCHAR, tail VARCHAR, start_year INTEGER, "
            "end_year INTEGER, ongoing BOOLEAN, src VARCHAR, line BIGINT)"
        )
        con.execute("CREATE OR REPLACE TEMP TABLE _st_entities (key VARCHAR)")
        con.execute("CREATE OR REPLACE TEMP TABLE _st_rdf (s VARCHAR, p VARCHAR, o VARCHAR, lit VARCHAR, lang VARCHAR, dt VARCHAR)")
        # labels by key, from the data (rdfs:label, KoPL names) and then from the side files
        con.execute("CREATE OR REPLACE TEMP TABLE _labels_entity (key VARCHAR, label VARCHAR)")
        con.execute("CREATE OR REPLACE TEMP TABLE _labels_relation (key VARCHAR, label VARCHAR)")

    def reject(self, src: Path | str, line: int | None, raw: str | None, reason: str) -> None:
        """Record one unloadable row; in strict mode stop with an error that names the file and line."""
        if not self.source.lenient:
            where = f"{src}, line {line}" if line is not None else str(src)
            shown = f": {raw[:200]!r}" if raw else ""
            raise IngestError(
                f"{where}: {reason}{shown}. Fix the row, or load with KGSource(..., lenient=True) to record such rows "
                "in the rejects table and load the rest."
            )
        self.rejects.append((str(src), line, raw, reason))
        self.counts.rejected += 1

    def append(self, table: str, columns: dict[str, list[Any] | pa.Array]) -> None:
        """Append Python (or Arrow) columns to a staging table through Arrow (one bulk insert, no per-row SQL)."""
        if not columns or not next(iter(columns.values())):
            return
        names = ", ".join(columns)
        with _registered(self.con, pa.table(columns)) as view:
            self.con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {view}")


# --------------------------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------------------------


@contextmanager
def _registered(con: duckdb.DuckDBPyConnection, table: pa.Table) -> Iterator[str]:
    """Expose an Arrow table to SQL under a unique name for the duration of the block."""
    name = f"_arrow_{uuid.uuid4().hex[:12]}"
    con.register(name, table)
    try:
        yield name
    finally:
        con.unregister(name)


def _check_file(path: Path, role: str) -> None:
    if not path.exists():
        raise IngestError(f"{role} file {path} does not exist; check the path in your KG source (relative paths are "
                          "resolved from the working directory or the project config's folder)")
    if not path.is_file():
        raise IngestError(f"{role} path {path} is not a file")


def _open_text(path: Path, encoding: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(open_binary(path), encoding=text_codec(encoding), errors="strict", newline="")


def _read_bytes(path: Path, encoding: str = "utf-8") -> bytes:
    """All of ``path`` (decompressed), without a UTF-8 byte-order mark when ``encoding`` is UTF-8."""
    return read_bytes(path, strip_bom=_is_utf8(encoding))


def _is_utf8(encoding: str) -> bool:
    return codecs.lookup(encoding).name == "utf-8"


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _snapshot_id(source: KGSource) -> str:
    """The content hash of ``source``: its files, its parse options and :data:`PARSER_VERSION`."""
    h = hashlib.sha256()
    h.update(json.dumps({"parser": PARSER_VERSION, **source.options()}, sort_keys=True).encode())
    for role, paths in (
        ("triples", source.files),
        ("temporal", source.temporal_files),
        ("entity_labels", [source.entity_labels] if source.entity_labels else []),
        ("relation_labels", [source.relation_labels] if source.relation_labels else []),
        ("entity_types", [source.entity_types] if source.entity_types else []),
        ("type_labels", [source.type_labels] if source.type_labels else []),
    ):
        for p in paths:
            h.update(f"{role}:{_file_digest(Path(p))};".encode())
    return h.hexdigest()[:16]


def _pretty(name: str) -> str:
    """A readable label from a key: underscores become spaces (the key itself is kept as the entity key)."""
    return name.replace("_", " ").strip() or name


def _iri_label(iri: str) -> str:
    """A readable fallback label for an IRI: its local name, percent-decoded, underscores as spaces."""
    local = re.split(r"[/#:]", iri.rstrip("/#"))[-1] or iri
    return _pretty(urllib.parse.unquote(local))


def _fallback_label(key: str) -> str:
    return _iri_label(key) if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", key) and "/" in key else _pretty(key)


def _unescape_labels(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """Decode the ``\\uXXXX`` escapes of the labels in ``table`` (key, label), so that no question shows one; the
    number of labels changed."""
    from kgprobe.kg.readable import UNICODE_ESCAPE, unescape_unicode

    rows = con.execute(f"SELECT key, label FROM {table} WHERE regexp_matches(label, $p)",
                       {"p": UNICODE_ESCAPE}).fetchall()
    fixed = [(unescape_unicode(label), key) for key, label in rows]
    if fixed:
        con.executemany(f"UPDATE {table} SET label = ? WHERE key = ?", fixed)
    return len(fixed)


def _split_row(line: str, delim: str) -> list[str]:
    return [part.strip() for part in line.rstrip("\r\n").split(delim)]


def _is_header(fields: Sequence[str], names: set[str]) -> bool:
    return bool(fields) and all(f.strip().lower().replace(" ", "_") in names for f in fields[: max(1, len(fields))])


# --------------------------------------------------------------------------------------------------------------
# Delimited triples (TSV, CSV) and Parquet
# --------------------------------------------------------------------------------------------------------------


def _read_delimited(stage: _Stage, path: Path, delim: str) -> None:
    """Read head/relation/tail rows with DuckDB's CSV reader, keeping every malformed row as a reject."""
    con, src = stage.con, stage.source
    header = src.header
    if header is None:
        header = _first_line_is_header(path, delim, src.encoding)
    quote = '"' if delim == "," else ""
    con.execute("DROP TABLE IF EXISTS _csv_rej_err; DROP TABLE IF EXISTS _csv_rej_scan")
    try:
        parsed = con.execute(
            load_sql("kg/ingest_read_csv" if delim == "," else "kg/ingest_read_tsv"),
            {"path": str(path), "delim": delim, "quote": quote, "header": header, "encoding": src.encoding, "src": str(path)},
        ).fetchall()[0][0]
    except duckdb.Error as exc:
        check_compressed(path)  # a corrupt .gz is named as such, not as a TSV problem
        if delim == "\t" and _cr_breaks_reader(path):
            # DuckDB's reader stops on a carriage return that does not end a line; split on \n alone instead, so
            # such a row is rejected with its line number and the rest of the file loads
            _read_tsv_by_line(stage, path, header)
            return
        raise IngestError(f"{path}: cannot be read as {'CSV' if delim == ',' else 'TSV'} triples ({exc}). Check the "
                          "format and encoding options of the KG source.") from exc
    errors = con.execute(
        # a line can carry several errors: one reject per line, with its first error
        "SELECT line, arg_min(csv_line, column_idx), arg_min(error_type, column_idx), arg_min(error_message, column_idx) "
        "FROM _csv_rej_err GROUP BY line ORDER BY line"
    ).fetchall()
    stage.counts.read += parsed + len(errors)
    # Rows with an empty field parse fine but cannot be loaded; their line numbers are found by a second, slow
    # pass over the file, which only runs when such rows exist.
    empty = con.execute(
        "DELETE FROM _st_triples WHERE src = $src AND (coalesce(head, '') = '' OR coalesce(relation, '') = '' "
        "OR coalesce(tail, '') = '')",
        {"src": str(path)},
    ).fetchall()[0][0]
    if delim == ",":
        # a quoted CSV field may hold a line break; as a key it would be its own label (the TSV rules reject it)
        for raw in con.execute(
            "DELETE FROM _st_triples WHERE src = $src AND regexp_matches(concat(head, relation, tail), '[\\r\\n]') "
            "RETURNING concat_ws(' | ', head, relation, tail)", {"src": str(path)}
        ).fetchall():
            stage.reject(path, None, raw[0], "a carriage return or line feed inside a field (a key is one line)")
    if errors or empty:
        # the last line of a .gz cut short reads as a malformed row: say what happened instead (the check of every
        # compressed file beside the load catches a cut at a line end, which DuckDB's reader passes over silently)
        check_compressed(path)
    for line, raw, etype, message in errors:
        stage.reject(path, int(line) if line is not None else None, raw, _csv_reason(etype, message))
    if empty:
        for line_no, raw in _lines_with_empty_field(path, delim, src.encoding, header):
            stage.reject(path, line_no, raw, "empty head, relation or tail")


def _cr_breaks_reader(path: Path) -> bool:
    """Whether ``path`` holds a carriage return that does not end a line, or mixes CRLF and LF line ends (what
    DuckDB's reader stops on); read a chunk at a time."""
    cr = crlf = lf = 0
    last = b""
    for _, block in byte_chunks(path):
        cr += block.count(b"\r")
        crlf += block.count(b"\r\n") + (last == b"\r" and block[:1] == b"\n")
        lf += block.count(b"\n")
        last = block[-1:]
    return cr != crlf or (crlf > 0 and lf != crlf)


def _read_tsv_by_line(stage: _Stage, path: Path, header: bool) -> None:
    """TSV triples split on ``\n`` only (a final ``\r`` is part of the line end), fields kept verbatim as DuckDB's
    reader keeps them: a row with a carriage return inside a field, the wrong number of fields, an empty field or
    text not in the declared encoding is rejected with its line number; blank lines are skipped. Read and staged a
    chunk at a time, so memory does not grow with the file."""
    encoding = stage.source.encoding
    for first, block in line_blocks(path, strip_bom=_is_utf8(encoding)):
        try:
            text = block.decode(encoding)
        except UnicodeDecodeError:
            _stage_tsv_lines(stage, path, header, first, block.split(b"\n"))
        else:
            _stage_tsv_text(stage, path, header, first, text)


def _stage_tsv_text(stage: _Stage, path: Path, header: bool, first: int, text: str) -> None:
    """:func:`_stage_tsv_lines` for a block that is valid text, in Arrow and Polars: the good rows go to staging
    as columns, and only the bad ones (few) through Python, to be rejected with their line numbers."""
    lines = pl.from_arrow(pc.split_pattern(pa.array([text], pa.large_string()), "\n").flatten()).str.strip_suffix("\r")
    row = lines != ""
    if header and first == 1:
        row[0] = False
    fields = lines.str.split_exact("\t", 2).struct.unnest()
    ok = ((lines.str.count_matches("\t", literal=True) == 2) & ~lines.str.contains("\r", literal=True)
          & (fields["field_0"] != "") & (fields["field_1"] != "") & (fields["field_2"] != "")).fill_null(False)
    good = row & ok
    n = int(good.sum())
    stage.counts.read += n
    stage.append("_st_triples", {"head": fields["field_0"].filter(good).to_arrow().cast(pa.string()),
                                 "relation": fields["field_1"].filter(good).to_arrow().cast(pa.string()),
                                 "tail": fields["field_2"].filter(good).to_arrow().cast(pa.string()),
                                 "src": pa.array([str(path)] * n, pa.string()), "line": pa.nulls(n, pa.int64())})
    for i in (row & ~ok).arg_true().to_list():
        _stage_tsv_lines(stage, path, False, first + i, [lines[i].encode(stage.source.encoding)])


def _stage_tsv_lines(stage: _Stage, path: Path, header: bool, first: int, lines: list[bytes]) -> None:
    """Stage ``lines`` (from line number ``first`` on) of :func:`_read_tsv_by_line`, one by one."""
    encoding = stage.source.encoding
    good: dict[str, list[Any]] = {"head": [], "relation": [], "tail": [], "src": [], "line": []}
    for number, raw in enumerate(lines, start=first):
        if header and number == 1:
            continue
        raw = raw.removesuffix(b"\r")
        if not raw:
            continue
        stage.counts.read += 1
        try:
            line = raw.decode(encoding)
        except UnicodeDecodeError:
            stage.reject(path, number, raw.decode(encoding, errors="replace"), "not valid text in the declared encoding")
            continue
        parts = line.split("\t")
        if "\r" in line:
            stage.reject(path, number, line, "a carriage return inside a field (only \\n ends a row)")
        elif len(parts) != 3:
            stage.reject(path, number, line, f"too {'few' if len(parts) < 3 else 'many'} columns (expected head, "
                                             "relation, tail)")
        elif not all(parts):
            stage.reject(path, number, line, "empty head, relation or tail")
        else:
            for key, value in zip(("head", "relation", "tail"), parts, strict=True):
                good[key].append(value)
            good["src"].append(str(path))
            good["line"].append(None)
    stage.append("_st_triples", good)


def _csv_reason(etype: str | None, message: str | None) -> str:
    kinds = {
        "MISSING COLUMNS": "too few columns (expected head, relation, tail)",
        "TOO MANY COLUMNS": "too many columns (expected head, relation, tail)",
        "INVALID UNICODE": "not valid text in the declared encoding",
        "UNQUOTED VALUE": "a quote character inside an unquoted value",
        "LINE SIZE OVER MAXIMUM": "line too long",
    }
    if etype and etype.upper() in kinds:
        return kinds[etype.upper()]
    if "unicode" in (message or "").lower() or "encod" in (etype or "").lower():
        return kinds["INVALID UNICODE"]
    return (message or etype or "malformed row").splitlines()[0]


def _first_line_is_header(path: Path, delim: str, encoding: str) -> bool:
    try:
        with _open_text(path, encoding) as fh:
            first = fh.readline()
    except (UnicodeDecodeError, OSError, EOFError):
        return False
    return _is_header(_split_row(first, delim), _HEADER_NAMES)


def _lines_with_empty_field(path: Path, delim: str, encoding: str, header: bool) -> Iterator[tuple[int, str]]:
    with _open_text(path, encoding) as fh:
        for number, line in enumerate(fh, start=1):
            if header and number == 1:
                continue
            parts = _split_row(line, delim)
            if line.rstrip("\r\n") and len(parts) == 3 and not all(parts):
                yield number, line.rstrip("\r\n")


def _read_parquet(stage: _Stage, path: Path) -> None:
    con = stage.con
    try:
        cols = [r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet($p)", {"p": str(path)}).fetchall()]
    except duckdb.Error as exc:
        raise IngestError(f"{path}: not a readable Parquet file ({exc})") from exc
    lower = {c.lower(): c for c in cols}
    for names in (("head", "relation", "tail"), ("subject", "predicate", "object"), ("h", "r", "t")):
        if all(n in lower for n in names):
            chosen = [lower[n] for n in names]
            break
    else:
        if len(cols) < 3:
            raise IngestError(f"{path}: a Parquet triples file needs columns head, relation, tail (found {cols})")
        chosen = cols[:3]
    h, r, t = (f"CAST({quote_identifier(c, what=f'{path}: column')} AS VARCHAR)" for c in chosen)
    # Parquet row numbers of bad rows come with the scan (file_row_number) when the file has no column of that name;
    # a window row_number() numbers the rows in one thread.
    if "file_row_number" in lower:
        rows = f"SELECT {h} AS head, {r} AS relation, {t} AS tail, row_number() OVER () AS line FROM read_parquet($p)"
    else:
        rows = f"SELECT {h} AS head, {r} AS relation, {t} AS tail, file_row_number + 1 AS line FROM read_parquet($p, file_row_number = true)"
    rows = f"SELECT trim(head) AS head, trim(relation) AS relation, trim(tail) AS tail, line FROM ({rows})"
    read = con.execute("SELECT count(*) FROM read_parquet($p)", {"p": str(path)}).fetchone()[0]
    stage.counts.read += read
    if not stage.exact:
        # Keys as stored: trim costs more per row than the rest of staging, and real keys are rarely padded.
        # Rows with a NULL or empty key, and (in _finish) any distinct key that trim would change, send the load
        # back through the exact pass below.
        stage.untrimmed = True
        good = con.execute(
            f"INSERT INTO _st_triples SELECT {h}, {r}, {t}, NULL, NULL FROM read_parquet($p) "
            f"WHERE {h} <> '' AND {r} <> '' AND {t} <> ''",
            {"p": str(path)},
        ).fetchone()[0]
        if good != read:
            raise _Restage
        return
    # the good rows first, without row numbers (nothing after staging needs them); only when some row was left out
    # does a second scan find the bad rows and their numbers
    good = con.execute(
        f"INSERT INTO _st_triples SELECT trim({h}), trim({r}), trim({t}), NULL, NULL FROM read_parquet($p) "
        f"WHERE {' AND '.join(_clean_key(f'trim({x})') for x in (h, r, t))}",
        {"p": str(path)},
    ).fetchone()[0]
    if good == read:
        return
    bad = con.execute(
        f"SELECT line, concat_ws(' | ', head, relation, tail), coalesce(head, '') = '' OR coalesce(relation, '') = '' "
        f"OR coalesce(tail, '') = '' FROM ({rows}) WHERE NOT ({' AND '.join(_clean_key(x) for x in ('head', 'relation', 'tail'))}) "
        "ORDER BY line",
        {"p": str(path)},
    ).fetchall()
    for line, raw, empty in bad:
        stage.reject(path, int(line), raw, "empty or null head, relation or tail (line = row number)" if empty else
                     "a carriage return or line feed inside a field (line = row number)")


def _clean_key(column: str) -> str:
    """SQL that is true when ``column`` is a loadable key: not NULL, not empty, and one line (the TSV rules: a key
    with a line break would be its own label, and could start a line of its own in a prompt)."""
    return f"(coalesce({column}, '') <> '' AND NOT regexp_matches({column}, '[\\r\\n]'))"


# --------------------------------------------------------------------------------------------------------------
# RDF: N-Triples and Turtle through pyoxigraph
# --------------------------------------------------------------------------------------------------------------


class _RdfSink:
    """Collects statements parsed by pyoxigraph as raw columns of ``_st_rdf`` (routing happens later, in SQL)."""

    def __init__(self, stage: _Stage) -> None:
        self.stage = stage
        self.cols: dict[str, list[Any]] = {k: [] for k in ("s", "p", "o", "lit", "lang", "dt")}
        self.statements = 0

    def add(self, quad: Any) -> None:
        """Add one statement."""
        self.consume((quad,))

    def consume(self, quads: Iterator[Any] | Sequence[Any]) -> None:
        """Add every statement of ``quads``; the loop is written for speed (it sees every statement of a dump)."""
        import pyoxigraph as ox

        named, literal = ox.NamedNode, ox.Literal
        c = self.cols
        s_, p_, o_, lit_, lang_, dt_ = c["s"].append, c["p"].append, c["o"].append, c["lit"].append, c["lang"].append, c["dt"].append
        n = 0
        try:
            for quad in quads:
                n += 1
                s, o = quad.subject, quad.object
                s_(s.value if type(s) is named else f"_:{s.value}")
                p_(quad.predicate.value)
                if type(o) is literal:
                    lang = o.language
                    o_(None)
                    lit_(o.value)
                    lang_(lang)
                    dt_(None if lang else o.datatype.value)
                else:
                    o_(o.value if type(o) is named else f"_:{o.value}")
                    lit_(None)
                    lang_(None)
                    dt_(None)
        finally:
            self.statements += n

    def flush(self) -> None:
        self.stage.append("_st_rdf", self.cols)
        self.cols = {k: [] for k in self.cols}


def _read_rdf(stage: _Stage, path: Path, fmt: str) -> None:
    import pyoxigraph as ox

    rdf_format = ox.RdfFormat.N_TRIPLES if fmt == "ntriples" else ox.RdfFormat.TURTLE
    sink = _RdfSink(stage)
    rejected_before = stage.counts.rejected
    # the bulk path reads the file in DuckDB and decodes it in Python only when some line needs pyoxigraph
    if fmt == "ntriples" and _NTRIPLES_BULK and _ntriples_bulk(stage, path, sink, ox, rdf_format):
        sink.flush()
        stage.counts.read += sink.statements + (stage.counts.rejected - rejected_before)
        return
    data = _read_bytes(path, stage.source.encoding)
    try:
        text = data.decode(stage.source.encoding)
    except UnicodeDecodeError as exc:
        if fmt != "ntriples" or not stage.source.lenient:
            line = data[: exc.start].count(b"\n") + 1
            stage.reject(path, line, None, f"not valid {stage.source.encoding} text")
            if fmt != "ntriples":
                stage.counts.read += 1
                return
        text = None
    if fmt == "ntriples":
        _parse_ntriples(stage, path, data, text, sink, ox, rdf_format)
    else:
        _parse_turtle(stage, path, data, sink, ox, rdf_format)
    sink.flush()
    stage.counts.read += sink.statements + (stage.counts.rejected - rejected_before)


def _syntax_line(exc: Exception) -> int | None:
    line = getattr(exc, "lineno", None)
    if isinstance(line, int):
        return line
    m = re.search(r"line (\d+)", str(exc))
    return int(m.group(1)) if m else None


def _parse_ntriples(
    stage: _Stage, path: Path, data: bytes, text: str | None, sink: _RdfSink, ox: Any, rdf_format: Any
) -> None:
    """Parse N-Triples with pyoxigraph: the whole file in one pass; if that fails in lenient mode, again line by
    line (N-Triples is line based), so that one bad line costs one reject."""
    if text is not None:
        try:
            sink.consume(ox.parse(data, rdf_format, lenient=stage.source.lenient))
            return
        except SyntaxError as exc:
            if not stage.source.lenient:
                line = _syntax_line(exc)
                stage.reject(path, line, _nth_line(data, line), f"N-Triples syntax error: {_first_line(exc)}")
        sink.cols = {k: [] for k in sink.cols}
        sink.statements = 0
    for number, raw_bytes in enumerate(data.split(b"\n"), start=1):
        try:
            raw = raw_bytes.decode(stage.source.encoding).rstrip("\r")
        except UnicodeDecodeError:
            stage.reject(path, number, raw_bytes.decode(stage.source.encoding, "replace"), f"not valid {stage.source.encoding} text")
            continue
        _parse_ntriples_line(stage, path, number, raw, sink, ox, rdf_format)


def _parse_ntriples_line(stage: _Stage, path: Path, number: int, raw: str, sink: _RdfSink, ox: Any, rdf_format: Any) -> None:
    """Parse one N-Triples line leniently: skip blanks and comments, repair a missing final dot, else reject."""
    line = raw.strip()
    if not line or line.startswith("#"):
        return
    try:
        quads = list(ox.parse(line.encode(), rdf_format, lenient=True))
    except SyntaxError as exc:
        # A common defect of hand-made dumps: a line that lacks its terminating " .". It is repaired (and
        # counted) when appending the dot makes it a valid statement; anything else is a reject.
        if not line.endswith("."):
            try:
                sink.consume(list(ox.parse((line + " .").encode(), rdf_format, lenient=True)))
                stage.counts.repaired += 1
                return
            except SyntaxError:
                pass
        stage.reject(path, number, raw, f"N-Triples syntax error: {_first_line(exc)}")
        return
    sink.consume(quads)


@contextmanager
def _unordered(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Let DuckDB write tables in any row order for the duration of the block, then restore the connection's
    setting: staging tables have no order, and keeping the input's order makes writing a dump's statements cost
    about twice as much."""
    before = con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()[0][0]
    con.execute("SET preserve_insertion_order = false")
    try:
        yield
    finally:
        con.execute(f"SET preserve_insertion_order = {'true' if before else 'false'}")


def _ntriples_bulk(stage: _Stage, path: Path, sink: _RdfSink, ox: Any, rdf_format: Any) -> bool:
    """N-Triples in bulk: DuckDB splits the plain lines, pyoxigraph parses the others. Returns False (and stages
    nothing) when pyoxigraph finds an error it cannot place on a line, or the file is not valid text in its
    encoding, so that the caller parses the whole file with pyoxigraph and reports what it reports.

    A plain line is one that pyoxigraph reads as it is written (no escapes) and accepts in the mode of the load;
    lenient mode, like pyoxigraph's, does not validate IRIs, strict mode validates every distinct IRI and language
    tag (an invalid one sends the file to the whole-file path, which raises pyoxigraph's error with its line). The
    other lines are parsed by pyoxigraph in one call per kind: four-field lines that are not plain, whose line
    numbers DuckDB does not keep (they are only needed on an error, and then the whole-file path finds them), and
    lines that are not four fields, which keep their line numbers; in lenient mode an error among the latter sends
    only those lines to the line-by-line parser (when the file does not parse as a whole). So both paths load the
    same statements, reject the same lines and raise the same error.
    """
    with _unordered(stage.con):
        if not stage.exact and _is_utf8(stage.source.encoding) and _plain_file(stage, path, sink):
            return True
        return _split_ntriples(stage, path, sink, ox, rdf_format)


# the terms of a plain line (see ingest_ntriples_fast.sql): an IRI without <, >, " or \ inside that does not start
# with _:, and a blank node label
_PLAIN_IRI_BAD = ["<", ">", '"', "\\"]
_BLANK_NODE = r"^_:[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_-])?$"


@dataclass
class _Coded:
    """The triples of a load's plain N-Triples files (see :func:`_plain_file`) as codes. Every term of those files
    is read as a category of one Polars mapping made for the load, so that a term has the same code in every block
    and file; the triples' ids are then looked up once per distinct term (:meth:`register_ids`) rather than once
    per row, and no statement's text is copied into DuckDB (on FB15k-237 the text of 272k statements is 40 MB,
    their codes 3 MB)."""

    # a mapping of its own, not Polars' global one, which keeps every string it ever saw for the life of the process
    dtype: pl.DataType = field(default_factory=lambda: pl.Categorical(pl.Categories(f"kgprobe-load-{uuid.uuid4().hex}")))
    #: s, p, o codes (UInt32) of the statements that are triples (not rdf:type)
    triples: list[pl.DataFrame] = field(default_factory=list)
    #: code, key of the terms and of the predicates of those statements
    terms: list[pl.DataFrame] = field(default_factory=list)
    predicates: list[pl.DataFrame] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Polars drops a mapping that no data uses any more, and the blocks keep only codes: this empty column keeps
        # the codes of every block valid until the load is done
        self._keepalive = pl.Series([], dtype=self.dtype)

    @property
    def rows(self) -> int:
        return sum(t.height for t in self.triples)

    def register_keys(self, con: duckdb.DuckDBPyConnection) -> None:
        """Register the distinct keys of the terms and of the predicates, ``_st_coded_keys`` and
        ``_st_coded_relations`` (``code, key``): the keys of the entities and relations of these triples."""
        self._distinct = {name: pl.concat(parts).unique("code")
                          for name, parts in (("_st_coded_keys", self.terms), ("_st_coded_relations", self.predicates))}
        for name, keys in self._distinct.items():
            con.register(name, keys.to_arrow())

    def register_ids(self, con: duckdb.DuckDBPyConnection, q_schema: str) -> None:
        """Register the triples with the ids of the KG's entities and relations as ``_st_coded_ids`` (``head,
        relation, tail``), once both tables are written: each code's id is read from them once, and a block's
        codes become ids by a gather (32-bit ids while they fit: half the memory of a large file's)."""
        ids = {}
        for name, table in (("_st_coded_keys", "entities"), ("_st_coded_relations", "relations")):
            found = con.execute(f"SELECT c.code, t.id FROM {name} c JOIN {q_schema}.{table} t ON t.key = c.key").pl()
            keys = self._distinct[name]
            if found.height != keys.height:
                missing = keys.height - found.height
                raise AssertionError(f"{missing} keys of the plain N-Triples are not among the {table}")
            width = pl.Int32 if (found["id"].max() or 0) < 2**31 else pl.Int64
            lookup = pl.zeros((keys["code"].max() or 0) + 1, dtype=width, eager=True)
            ids[table] = lookup.scatter(found["code"], found["id"])

        def column(lookup: pl.Series, code: str) -> pa.ChunkedArray:
            return pa.chunked_array([lookup.gather(t[code]).to_arrow() for t in self.triples],
                                    type=pa.int32() if lookup.dtype == pl.Int32 else pa.int64())

        table = pa.table({"head": column(ids["entities"], "s"), "relation": column(ids["relations"], "p"),
                          "tail": column(ids["entities"], "o")})
        # DuckDB scans an Arrow table a batch per thread: batches (zero-copy slices) let both cores take part in
        # the triples' DISTINCT (29 ms instead of 42 on FB15k-237)
        con.register("_st_coded_ids", pa.Table.from_batches(table.to_batches(max_chunksize=1 << 16), table.schema))


_CODED = ("_st_coded_keys", "_st_coded_relations", "_st_coded_ids")


def _unregister_coded(con: duckdb.DuckDBPyConnection) -> None:
    for name in _CODED:
        con.unregister(name)


def _plain_file(stage: _Stage, path: Path, sink: _RdfSink) -> bool:
    """Stage a UTF-8 N-Triples file whose every line is plain and links two resources (``<s> <p> <o> .`` or blank
    nodes as subject or object, single spaces, no literal, no comment, blank line or carriage return) with Polars'
    CSV reader, in blocks of :data:`_PLAIN_BLOCK_BYTES` of whole lines, the checks and the bracket stripping done on
    each block's distinct terms rather than per line: its triples are kept as codes (:class:`_Coded`), its rdf:type
    statements go to ``_st_rdf``; ``_split_ntriples`` splits any other file in DuckDB. Returns False, having staged
    nothing, when some line is not of that form (the file then goes through ``_split_ntriples``, so what is loaded,
    rejected or raised is that path's). A line of this form is a plain line of ``ingest_ntriples_fast.sql`` and is
    staged with the same values; strict mode validates each block's distinct IRIs (an invalid one also sends the file
    to ``_split_ntriples``, whose check of the load's terms sends the load to the exact pass, which raises
    pyoxigraph's error with its line)."""
    coded = stage.coded or _Coded()
    blocks = []
    try:
        with open_binary(path) as fh:
            for first, data in _whole_lines(fh, _PLAIN_BLOCK_BYTES):
                block = _plain_block(data, first, strict=not stage.source.lenient, dtype=coded.dtype)
                if block is None:
                    return False
                blocks.append(block)
    except (EOFError, OSError, zlib.error):
        return False  # a .gz file cut short or corrupt: the DuckDB path reads its prefix and the load's check reports it
    rows = sum(triples.height + (typed.height if typed is not None else 0) for triples, _, _, typed in blocks)
    if not rows:
        return False
    for triples, terms, predicates, typed in blocks:
        coded.triples.append(triples)
        coded.terms.append(terms)
        coded.predicates.append(predicates)
        if typed is not None:
            stage.append("_st_rdf", {c: typed[c].to_arrow() for c in typed.columns})
    stage.coded = coded
    sink.statements += rows
    return True


#: the bytes of N-Triples that the Polars pass reads at a time (whole lines; a longer line is read whole)
_PLAIN_BLOCK_BYTES = 64 << 20


def _whole_lines(fh: Any, size: int) -> Iterator[tuple[bool, bytes]]:
    """(whether it is the first, block) over the bytes of ``fh`` in blocks of about ``size`` bytes cut after a
    ``\n`` (the last may lack one)."""
    rest, first = b"", True
    while block := fh.read(size):
        block = rest + block if rest else block
        cut = block.rfind(b"\n") + 1
        rest = block[cut:]
        if cut:
            yield first, block if cut == len(block) else block[:cut]
            first = False
    if rest:
        yield first, rest


def _plain_block(data: bytes, first: bool, *, strict: bool,
                 dtype: pl.DataType) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame | None] | None:
    """A block of plain resource lines (see :func:`_plain_file`) read with its terms as categories of ``dtype``:
    the codes ``s, p, o`` of its triples, the ``code, key`` of their distinct terms and predicates (a key is an IRI
    without its brackets, a blank node as written) and its rdf:type statements as keys ``s, p, o`` (None if there
    are none); None when some line is not of that form or, in ``strict`` mode, some IRI is not one that
    pyoxigraph's strict parser accepts."""
    if (first and data.startswith(BOM)) or b"\r" in data:
        return None
    # a line of other than four fields fails the read or gives nulls (a blank line gives a row of nulls, a blank
    # first line fails the read), so the rows are the lines without counting them
    try:
        df = pl.read_csv(data, separator=" ", quote_char=None, has_header=False, comment_prefix=None,
                         schema={"s": dtype, "p": dtype, "o": dtype, "dot": pl.String})
    except (pl.exceptions.PolarsError, ValueError):
        return None  # a line of another number of fields, or not UTF-8
    if df.null_count().sum_horizontal().item() or not (df["dot"] == ".").all():
        return None
    # the checks see each distinct term once, as text
    terms, predicates = pl.concat([df["s"], df["o"]]).unique(), df["p"].unique()
    resources, names = terms.cast(pl.String), predicates.cast(pl.String)

    def iri(text: pl.Series) -> pl.Series:
        inner = text.str.strip_prefix("<").str.strip_suffix(">")
        return (text.str.starts_with("<") & text.str.ends_with(">") & (text.str.len_bytes() >= 2)
                & ~inner.str.contains_any(_PLAIN_IRI_BAD) & ~inner.str.starts_with("_:"))

    named = iri(resources)
    if not (named | resources.str.contains(_BLANK_NODE)).all() or not iri(names).all():
        return None
    # strict mode validates the block's distinct IRIs here, where they are at hand, rather than collecting every
    # term of the load again in DuckDB afterwards
    if strict and not _iris_valid(pl.concat([resources.filter(named), names]).str.head(-1).str.tail(-1)):
        return None

    def key(text: pl.Series | pl.Expr) -> Any:  # an IRI loses its brackets, a blank node label has none
        return text.str.strip_prefix("<").str.strip_suffix(">")

    typed = None
    is_type = names == f"<{_RDF_TYPE}>"
    if is_type.any():  # an rdf:type statement names a type, not a triple: it is routed with the other statements
        rows = df["p"].to_physical() == predicates.to_physical().filter(is_type)[0]
        typed = df.filter(rows).select(key(pl.col(c).cast(pl.String)) for c in ("s", "p", "o"))
        df = df.filter(~rows)
        terms, predicates = pl.concat([df["s"], df["o"]]).unique(), df["p"].unique()
        resources, names = terms.cast(pl.String), predicates.cast(pl.String)
    return (df.select(pl.col("s", "p", "o").to_physical()),
            pl.DataFrame({"code": terms.to_physical(), "key": key(resources)}),
            pl.DataFrame({"code": predicates.to_physical(), "key": key(names)}), typed)


#: :data:`_IRI` matched against a whole string by Polars (its patterns are ASCII classes that RE2, which DuckDB
#: uses, and Rust's regex engine read alike)
_IRI_WHOLE = f"^(?:{_IRI})$"


def _iris_valid(iris: pl.Series) -> bool:
    """Whether pyoxigraph's strict mode accepts every IRI of ``iris`` (without brackets): as in
    :func:`_plain_terms_valid`, those that fail the quick pattern are checked one by one with pyoxigraph itself."""
    suspects = iris.filter(~iris.str.contains(_IRI_WHOLE))
    if suspects.is_empty():
        return True
    import pyoxigraph as ox

    for value in suspects:
        try:
            ox.NamedNode(value)
        except ValueError:
            return False
    return True


def _split_ntriples(stage: _Stage, path: Path, sink: _RdfSink, ox: Any, rdf_format: Any) -> bool:
    con, lenient = stage.con, stage.source.lenient
    con.execute("DROP TABLE IF EXISTS _csv_rej_err; DROP TABLE IF EXISTS _csv_rej_scan")
    try:
        con.execute(load_sql("kg/ingest_ntriples_fast"), {"path": str(path), "encoding": stage.source.encoding})
        if not lenient and not stage.exact:
            stage.unchecked_terms = True
        elif not lenient and not _plain_terms_valid(con, ox, "kg/ingest_ntriples_terms"):
            con.execute("DROP TABLE IF EXISTS _nt_fast")
            return False
        # a line can carry several errors; each line is parsed once
        numbered = [r[0] for r in con.execute("SELECT DISTINCT line FROM _csv_rej_err ORDER BY line").fetchall()]
        odd = [r[0] for r in con.execute("SELECT raw FROM _nt_fast WHERE NOT plain").fetchall()]
    except duckdb.InvalidInputException:
        con.execute("DROP TABLE IF EXISTS _nt_fast")
        return False  # the CSV reader could not take the file at all (an encoding it cannot read, say)
    try:
        if odd and not _consume_lines(sink, odd, lenient, ox, rdf_format):
            _reset(sink)
            return False
        if numbered:
            # DuckDB lists a line that is not valid text in the encoding among these; such a file goes to the caller
            try:
                text = _read_bytes(path, stage.source.encoding).decode(stage.source.encoding)
            except UnicodeDecodeError:
                _reset(sink)
                return False
            lines = text.split("\n")
            raws = [lines[n - 1].rstrip("\r") if 0 < n <= len(lines) else "" for n in numbered]
            if not _consume_lines(sink, raws, lenient, ox, rdf_format):
                # as the whole-file path: a file that parses as a whole is taken as a whole (lenient pyoxigraph lets
                # a literal run over a line end), else line by line; strict mode raises there with the line
                if not lenient or _parses(text, ox, rdf_format):
                    _reset(sink)
                    return False
                for number, raw in zip(numbered, raws, strict=True):
                    _parse_ntriples_line(stage, path, number, raw, sink, ox, rdf_format)
        fast = _stage_plain_rows(con)
    finally:
        con.execute("DROP TABLE IF EXISTS _nt_fast")
    sink.statements += int(fast)
    return True


def _stage_plain_rows(con: duckdb.DuckDBPyConnection) -> int:
    """Move the plain rows of ``_nt_fast`` into ``_st_rdf`` and return how many there were. While ``_st_rdf`` is
    still empty (the first file of a load) the table itself becomes ``_st_rdf``, which saves copying every
    statement of a dump once more."""
    if con.execute("SELECT count(*) FROM _st_rdf").fetchall()[0][0]:
        return con.execute(load_sql("kg/ingest_ntriples_fast_stage")).fetchall()[0][0]
    con.execute("DELETE FROM _nt_fast WHERE NOT plain")
    con.execute("ALTER TABLE _nt_fast DROP COLUMN plain")
    con.execute("ALTER TABLE _nt_fast DROP COLUMN raw")
    con.execute("DROP TABLE _st_rdf")
    con.execute("ALTER TABLE _nt_fast RENAME TO _st_rdf")
    return con.execute("SELECT count(*) FROM _st_rdf").fetchall()[0][0]


def _plain_terms_valid(con: duckdb.DuckDBPyConnection, ox: Any, terms: str) -> bool:
    """Whether pyoxigraph's strict mode accepts every IRI and language tag that the SQL ``terms`` collects (those of
    one file's plain lines, or of the whole load): those that fail the quick patterns are checked one by one with
    pyoxigraph's own validation."""
    con.execute(load_sql(terms))
    try:
        suspects = con.execute(load_sql("kg/ingest_ntriples_strict_check"), {"iri": _IRI, "langtag": _LANGTAG}).fetchall()
    finally:
        con.execute("DROP TABLE IF EXISTS _nt_terms")
    if suspects and ox is None:
        import pyoxigraph as ox
    for kind, value in suspects:
        try:
            ox.NamedNode(value) if kind == "iri" else ox.Literal("", language=value)
        except ValueError:
            return False
    return True


def _parses(text: str, ox: Any, rdf_format: Any) -> bool:
    """Whether lenient pyoxigraph parses all of ``text`` without an error."""
    try:
        for _ in ox.parse(text.encode(), rdf_format, lenient=True):
            pass
    except SyntaxError:
        return False
    return True


def _consume_lines(sink: _RdfSink, lines: list[str], lenient: bool, ox: Any, rdf_format: Any) -> bool:
    """Add the statements of N-Triples ``lines`` (one statement or comment each) to ``sink`` in one pyoxigraph
    call. On a syntax error, or when some line did not give exactly one statement (lenient pyoxigraph lets a literal
    run over a line end), add none and return False."""
    before = {k: len(v) for k, v in sink.cols.items()}, sink.statements
    expected = sum(1 for line in lines if line.strip(" \t") and not line.lstrip(" \t").startswith("#"))
    try:
        sink.consume(ox.parse("\n".join(lines).encode(), rdf_format, lenient=lenient))
    except SyntaxError:
        _reset(sink, before)
        return False
    if sink.statements - before[1] != expected:
        _reset(sink, before)
        return False
    return True


def _reset(sink: _RdfSink, to: tuple[dict[str, int], int] | None = None) -> None:
    """Drop the statements added to ``sink`` since ``to`` (all of them by default)."""
    lengths, statements = to if to is not None else ({k: 0 for k in sink.cols}, 0)
    for k, n in lengths.items():
        del sink.cols[k][n:]
    sink.statements = statements


def _parse_turtle(stage: _Stage, path: Path, data: bytes, sink: _RdfSink, ox: Any, rdf_format: Any) -> None:
    """Turtle statements span lines: on an error (lenient mode) the offending line is rejected and parsing resumes
    on the next line, with the prefixes declared before it."""
    lines = data.split(b"\n")
    start = 0
    prefixes: list[bytes] = []
    while start < len(lines):
        chunk = b"\n".join([*prefixes, *lines[start:]])
        offset = start - len(prefixes)  # line k of the chunk is line k + offset of the file
        try:
            sink.consume(ox.parse(chunk, rdf_format, lenient=stage.source.lenient))
            return
        except SyntaxError as exc:
            rel = _syntax_line(exc)
            line = rel + offset if rel is not None else None
            raw = lines[line - 1].decode(stage.source.encoding, "replace") if line and 0 < line <= len(lines) else None
            stage.reject(path, line, raw, f"Turtle syntax error: {_first_line(exc)}")
            if line is None or line <= start:
                return
            prefixes = [ln for ln in lines[:line] if ln.lstrip().lower().startswith((b"@prefix", b"prefix", b"@base", b"base"))]
            start = line


def _route_rdf(stage: _Stage) -> None:
    """Distribute raw RDF statements: rdf:type to types, rdfs:label (in the wanted language) to labels, other
    literals to literals, the rest to triples. Exact duplicate statements are counted once."""
    con = stage.con
    with _unordered(con):
        _route_rdf_statements(stage)


def _route_rdf_statements(stage: _Stage) -> None:
    con = stage.con
    want = stage.source.label_lang
    if not con.execute("SELECT EXISTS (SELECT 1 FROM _st_rdf)").fetchone()[0]:
        return  # only the triples of plain files, kept as codes (_Coded): _st_triples stays the empty staging table
    # a statement has either a resource object (a type or a triple) or a literal: the distinct statements of the
    # three routes add up to the distinct statements, without a distinct copy of all of them. Triples are counted
    # when they are written (by _finish, as for every other format); the other routes here.
    con.execute("DROP TABLE _st_triples")
    con.execute(load_sql("kg/rdf_route_triples"))
    total = con.execute(
        "SELECT count(*) FROM _st_rdf WHERE o IS NULL OR p = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'"
    ).fetchall()[0][0]
    distinct = con.execute(load_sql("kg/rdf_label_rank"), {"want": want}).fetchall()[0][0]
    distinct += con.execute(load_sql("kg/rdf_route_types")).fetchall()[0][0]
    stage.counts.duplicates += total - distinct
    stage.counts.loaded += distinct - _reject_rdf_labels(stage)
    for target in ("literals", "entities", "labels"):
        con.execute(load_sql(f"kg/rdf_route_{target}"))
    con.execute("DROP TABLE _rdf_ranked")


def _reject_rdf_labels(stage: _Stage) -> int:
    """Reject the rdfs:label statements that the TSV rules would reject: a label holding a carriage return or line
    feed, and a second label of an entity in the language of the label kept (its rank is set to -1, so it is
    neither a label nor a literal). Returns how many were rejected."""
    con = stage.con
    con.execute(load_sql("kg/rdf_label_rejects"))
    rejected = con.execute("SELECT s, lit, lang, kept FROM _rdf_label_rejects ORDER BY s, lit").fetchall()
    where = _ntriples_lines(stage, {(s, lit, lang) for s, lit, lang, _ in rejected}) if rejected else {}
    for s, lit, lang, kept in rejected:
        raw = f"<{s}> <{_RDFS_LABEL}> {json.dumps(lit, ensure_ascii=False)}{f'@{lang}' if lang else ''} ."
        reason = ("entity_labels: a carriage return or line feed inside an rdfs:label (a label is one line)"
                  if kept is None else
                  f"entity_labels: a second rdfs:label{f'@{lang}' if lang else ''} of {s} "
                  f"({json.dumps(kept, ensure_ascii=False)} is kept)")
        stage.reject(*where.get((s, lit, lang), (_rdf_sources(stage), None)), raw, reason)
    if rejected:
        con.execute(load_sql("kg/rdf_label_drop_rejects"))
    con.execute("DROP TABLE _rdf_label_rejects")
    return len(rejected)


def _ntriples_lines(stage: _Stage, wanted: set[tuple[str, str, str | None]]) -> dict[tuple[str, str, str | None],
                                                                                    tuple[str, int]]:
    """The file and line of each rdfs:label statement ``(subject, label, language)`` of ``wanted``, found by a
    second pass over N-Triples files that only runs when some label was rejected (statements are routed without
    their lines). Turtle statements span lines: there the files are named without a line."""
    if stage.source.format != "ntriples":
        return {}
    import pyoxigraph as ox

    subjects = {f"<{s}>".encode(stage.source.encoding) if not s.startswith("_:") else s.encode() for s, _, _ in wanted}
    found: dict[tuple[str, str, str | None], tuple[str, int]] = {}
    for path in stage.source.files:
        for first, block in line_blocks(path, strip_bom=_is_utf8(stage.source.encoding)):
            if b"rdf-schema#label" not in block:
                continue
            for i, raw in enumerate(block.split(b"\n")):
                head = raw.split(maxsplit=1)
                if b"rdf-schema#label" not in raw or not head or head[0] not in subjects:
                    continue
                try:
                    quads = list(ox.parse(raw, ox.RdfFormat.N_TRIPLES, lenient=True))
                except SyntaxError:
                    continue
                for q in quads:
                    s = q.subject.value if type(q.subject) is ox.NamedNode else f"_:{q.subject.value}"
                    key = (s, q.object.value, getattr(q.object, "language", None))
                    if key in wanted:
                        found.setdefault(key, (str(path), first + i))
            if len(found) == len(wanted):
                return found
    return found


def _rdf_sources(stage: _Stage) -> str:
    # RDF statements are routed after every file is read, without their file and line
    return ", ".join(str(p) for p in stage.source.files)


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _nth_line(data: bytes, line: int | None) -> str | None:
    if not line:
        return None
    parts = data.split(b"\n", line)
    return parts[line - 1].decode("utf-8", "replace") if len(parts) >= line else None


# --------------------------------------------------------------------------------------------------------------
# KoPL JSON knowledge bases
# --------------------------------------------------------------------------------------------------------------


def _read_kopl(stage: _Stage, path: Path) -> None:
    try:
        kb = decode_json(_read_bytes(path, stage.source.encoding).decode(stage.source.encoding), what=path)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise IngestError(f"{path}{f', line {line}' if line else ''}: not a valid KoPL JSON knowledge base ({exc})") from exc
    if not isinstance(kb, dict) or "entities" not in kb:
        raise IngestError(f"{path}: a KoPL knowledge base is a JSON object with 'entities' (and 'concepts'); "
                          f"found keys {sorted(kb) if isinstance(kb, dict) else type(kb).__name__}")
    concepts = kb.get("concepts") or {}
    entities = kb["entities"]
    heads: list[str] = []
    rels: list[str] = []
    tails: list[str] = []
    l_ent: list[str] = []
    l_rel: list[str] = []
    l_val: list[str] = []
    l_dt: list[str | None] = []
    types: list[tuple[str, str, str]] = []
    for ekey, ent in entities.items():
        name = ent.get("name") if isinstance(ent, dict) else None
        if not isinstance(ent, dict):
            stage.counts.read += 1
            stage.reject(path, None, f"entities.{ekey}", "entity is not a JSON object")
            continue
        if name and _LINE_BREAK.search(str(name)):
            stage.counts.read += 1
            stage.reject(path, None, f"entities.{ekey}.name = {json.dumps(name, ensure_ascii=False)}",
                         "a carriage return or line feed inside a name (a label is one line)")
        elif name:
            stage.entity_labels.setdefault(ekey, str(name))
        l_ent.append(ekey)  # registers the entity even when it has no facts
        l_rel.append("")
        l_val.append("")
        l_dt.append("__entity__")
        for concept in ent.get("instanceOf") or []:
            stage.counts.read += 1
            cname = (concepts.get(concept) or {}).get("name") or concept
            types.append((ekey, str(cname), str(concept)))
        for i, rel in enumerate(ent.get("relations") or []):
            stage.counts.read += 1
            obj, pred = rel.get("object"), rel.get("relation") or rel.get("predicate")
            where = f"entities.{ekey}.relations[{i}]"
            if not obj or not pred:
                stage.reject(path, None, where, "relation without 'relation' or 'object'")
                continue
            if obj not in entities:
                stage.reject(path, None, where, f"object {obj!r} is not an entity of the knowledge base")
                continue
            if rel.get("direction", "forward") == "backward":
                heads.append(obj), rels.append(pred), tails.append(ekey)
            else:
                heads.append(ekey), rels.append(pred), tails.append(obj)
        for i, attr in enumerate(ent.get("attributes") or []):
            stage.counts.read += 1
            value = attr.get("value") if isinstance(attr, dict) else None
            if not isinstance(value, dict) or "value" not in value or not attr.get("key"):
                stage.reject(path, None, f"entities.{ekey}.attributes[{i}]", "attribute without 'key' or 'value'")
                continue
            v = str(value["value"])
            unit = value.get("unit")
            l_ent.append(ekey)
            l_rel.append(str(attr["key"]))
            l_val.append(f"{v} {unit}" if unit and unit != "1" else v)
            l_dt.append(str(value.get("type") or "string"))
    stage.append("_st_triples", {"head": heads, "relation": rels, "tail": tails})
    stage.append("_st_types", {"entity": [t[0] for t in types], "type": [t[1] for t in types], "type_key": [t[2] for t in types]})
    stage.append("_st_literals", {"entity": l_ent, "relation": l_rel, "value": l_val, "datatype": l_dt, "lang": [None] * len(l_ent)})
    stage.con.execute("INSERT INTO _st_entities SELECT entity FROM _st_literals WHERE datatype = '__entity__'")
    stage.con.execute("DELETE FROM _st_literals WHERE datatype = '__entity__'")


# --------------------------------------------------------------------------------------------------------------
# Temporal facts and event lists
# --------------------------------------------------------------------------------------------------------------


def _year(text: str) -> tuple[int | None, bool]:
    """(year, ongoing) from a year field: 3000 = still true, 0 / #### / empty = unknown; dates keep their year."""
    t = text.strip().strip('"').lower()
    if t in _UNKNOWN_YEARS or set(t) <= {"#"}:
        return None, False
    m = re.match(r"^(-?\d{1,4})(?:[-/].*)?$", t)
    if not m:
        raise ValueError(f"not a year: {text!r}")
    year = int(m.group(1))
    if year == _ONGOING_YEAR:
        return None, True
    if year == 0:
        return None, False
    return year, False


def _read_temporal(stage: _Stage, path: Path) -> None:
    delim = "," if path.name.lower().endswith((".csv", ".csv.gz")) else "\t"
    header = stage.source.header
    cols: dict[str, list[Any]] = {k: [] for k in ("head", "relation", "tail", "start_year", "end_year", "ongoing", "src", "line")}
    try:
        fh = _open_text(path, stage.source.encoding)
    except OSError as exc:
        raise IngestError(f"{path}: cannot be opened ({exc})") from exc
    with fh:
        number = 0
        while True:
            try:
                line = fh.readline()
            except (EOFError, OSError, zlib.error) as exc:
                raise compressed_error(path, number + 1, exc) from None
            except UnicodeDecodeError:
                number += 1
                stage.counts.read += 1
                stage.reject(path, number, None, f"not valid {stage.source.encoding} text")
                # resynchronise on the next newline of the underlying bytes
                fh = _resync(fh)
                continue
            if not line:
                break
            number += 1
            if not line.strip():
                continue
            parts = _split_row(line, delim)
            if number == 1 and (header or (header is None and _is_header(parts, _HEADER_NAMES))):
                continue
            stage.counts.read += 1
            if len(parts) != 5:
                stage.reject(path, number, line.rstrip("\r\n"), f"expected 5 columns (head, relation, tail, start, end), found {len(parts)}")
                continue
            h, r, t, s, e = parts
            if not (h and r and t):
                stage.reject(path, number, line.rstrip("\r\n"), "empty head, relation or tail")
                continue
            try:
                start, _ = _year(s)
                end, ongoing = _year(e)
            except ValueError as exc:
                stage.reject(path, number, line.rstrip("\r\n"), str(exc))
                continue
            if start is not None and end is not None and end < start:
                stage.reject(path, number, line.rstrip("\r\n"), f"end year {end} before start year {start}")
                continue
            for k, v in zip(cols, (h, r, t, start, end, ongoing, str(path), number)):
                cols[k].append(v)
            if len(cols["head"]) >= _ROWS_PER_INSERT:
                stage.append("_st_temporal", cols)
                cols = {k: [] for k in cols}
    stage.append("_st_temporal", cols)


def _resync(fh: io.TextIOWrapper) -> io.TextIOWrapper:
    raw = fh.buffer
    raw.readline()
    return io.TextIOWrapper(raw, encoding=fh.encoding, errors="strict", newline="")


_EVENT_RELATION = "occurs"


def _read_events(stage: _Stage, path: Path) -> None:
    try:
        records = decode_json(_read_bytes(path, stage.source.encoding).decode(stage.source.encoding), what=path)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise IngestError(f"{path}{f', line {line}' if line else ''}: not a valid JSON event list ({exc})") from exc
    if not isinstance(records, list):
        raise IngestError(f"{path}: an event list is a JSON array of {{type: begin|end, relation, year}} records")
    # An event name can recur (a front of two wars): each begin opens a span, each end closes the latest open one.
    spans: dict[str, list[list[int | None]]] = {}
    seen: set[tuple[str, str, int, Any, Any]] = set()
    for i, rec in enumerate(records):
        stage.counts.read += 1
        where = f"[{i}] {json.dumps(rec)[:200]}"
        if not isinstance(rec, dict) or rec.get("type") not in ("begin", "end") or not rec.get("relation"):
            stage.reject(path, None, where, "event record needs type 'begin' or 'end' and a 'relation' (event name)")
            continue
        if _LINE_BREAK.search(str(rec["relation"])):
            stage.reject(path, None, where, "a carriage return or line feed inside an event name (a label is one line)")
            continue
        try:
            year = int(rec["year"])
        except (KeyError, TypeError, ValueError):
            stage.reject(path, None, where, "event record without an integer 'year'")
            continue
        name = str(rec["relation"])
        key = (name, rec["type"], year, rec.get("mm"), rec.get("dd"))
        if key in seen:
            stage.counts.duplicates += 1
            continue
        seen.add(key)
        event_spans = spans.setdefault(name, [])
        if rec["type"] == "begin":
            event_spans.append([year, None])
        else:
            open_spans = [s for s in event_spans if s[1] is None and s[0] is not None]
            if open_spans and open_spans[-1][0] <= year:  # type: ignore[operator]
                open_spans[-1][1] = year
            else:
                event_spans.append([None, year])
        stage.counts.loaded += 1
    rows = [(name, s[0], s[1]) for name in sorted(spans) for s in spans[name]]
    for name in spans:
        stage.entity_labels.setdefault(name, _pretty(re.sub(r"^ev_", "", name)))
    stage.relation_labels.setdefault(_EVENT_RELATION, "occurs")
    stage.append(
        "_st_temporal",
        {
            "head": [r[0] for r in rows],
            "relation": [_EVENT_RELATION] * len(rows),
            "tail": [None] * len(rows),
            "start_year": [r[1] for r in rows],
            "end_year": [r[2] for r in rows],
            "ongoing": [False] * len(rows),
            "src": [str(path)] * len(rows),
            "line": [None] * len(rows),
        },
    )


# --------------------------------------------------------------------------------------------------------------
# Side files: labels and types
# --------------------------------------------------------------------------------------------------------------

def _read_mapping(stage: _Stage, path: Path, role: str, *, multi: bool) -> str:
    """Stage the (key, value) rows of a side file, in file order, into the temporary table ``_side_<role>``
    (``key, value, line, seq``) and return its name. The file is a TSV (``key<TAB>value``, optional header) or one
    JSON object; either is read a chunk at a time (:mod:`kgprobe.kg.textio`), so memory does not grow with the
    file, and a UTF-8 byte-order mark at its start is dropped.

    TSV lines end at ``\\n`` only (a final ``\\r`` belongs to the line end), so line numbers and counts agree with
    ``wc -l`` whatever other line-break characters (form feed, U+0085, U+2028) a label holds. A row is rejected, with
    its line number, when it has no value, an empty key or value, a carriage return inside a field, or more fields
    than the header declares (two without a header: ``key<TAB>value``; a header such as ``id<TAB>label<TAB>source``
    declares three, the third ignored). A JSON entry is rejected, with the line of its key, when its key or value
    holds a carriage return or line feed (what a TSV row cannot hold); a null or empty value (or an object without
    ``label`` or ``name``) carries no label and is counted as ``empty``. In a single-valued file (labels, type names)
    a key given again with another value is rejected too (the first value is kept), and a repeat with the same value
    is counted as a duplicate."""
    _check_file(path, role)
    con = stage.con
    con.execute("CREATE OR REPLACE TEMP TABLE _side_rows (key VARCHAR, value VARCHAR, line BIGINT, seq BIGINT)")
    stats = {"read": 0, "rejected": 0}
    chunks = text_chunks(path, stage.source.encoding)
    try:
        first = next(chunks, None)
        is_json = first is not None and first[1].lstrip().startswith("{")
        if first is not None and not is_json:
            _read_tsv_mapping(stage, path, role, stats, itertools.chain([first], chunks))
    finally:
        chunks.close()
    if is_json:
        _read_json_mapping(stage, path, role, stats)
    table = f"_side_{role}"
    if multi:
        con.execute(f"DROP TABLE IF EXISTS {table}")
        con.execute(f"ALTER TABLE _side_rows RENAME TO {table}")
    else:
        _first_of_each_key(stage, path, role, table, stats)
    stage.side_files[role] = stats
    return table


def _read_tsv_mapping(stage: _Stage, path: Path, role: str, stats: dict[str, int],
                      chunks: Iterator[tuple[int, str]]) -> None:
    """Stage the rows of a TSV side file's text ``chunks`` (see :func:`_read_mapping`); the header, if any, is
    on the file's first line and sets the number of fields a row may have."""
    header, width = False, 2
    for number, text in chunks:
        if number == 1:
            first = text.split("\n", 1)[0].removesuffix("\r")
            parts = first.split("\t")
            if first.strip() and parts[0].strip().lower() in _SIDE_HEADER_KEYS:
                header, width = True, max(2, len(parts))
        skip = number if header and number == 1 else None
        rows = _mapping_columns(text, first_line=number, width=width, skip=skip)
        if rows is None:
            rows = _mapping_lines(text, first_line=number, width=width, skip=skip)
        keys, values, lines, bad, read = rows
        stats["read"] += read
        for line_no, line, reason in bad:
            stats["rejected"] += 1
            stage.rejects.append((str(path), line_no, line, f"{role}: {reason}"))
        stage.append("_side_rows", {"key": keys, "value": values, "line": lines, "seq": lines})


def _mapping_lines(text: str, *, first_line: int, width: int, skip: int | None) -> _MappingRows:
    """The TSV rows of ``text`` (whole lines from line ``first_line`` on; line ``skip`` is the header), line by
    line in Python: keys, values, their line numbers, the rejected (line number, line, reason) and the number of
    rows read (header and blank lines not counted)."""
    keys: list[str] = []
    values: list[str] = []
    lines: list[int] = []
    bad: list[tuple[int, str, str]] = []
    read = 0
    for number, raw in enumerate(text.split("\n"), start=first_line):
        line = raw.removesuffix("\r")
        if not line.strip() or number == skip:
            continue
        read += 1
        parts = line.split("\t")
        reason = _mapping_row_problem(parts, width, "\r" in line)
        if reason:
            bad.append((number, line, reason))
            continue
        keys.append(parts[0].strip())
        values.append(parts[1].strip())
        lines.append(number)
    return keys, values, lines, bad, read


def _read_json_mapping(stage: _Stage, path: Path, role: str, stats: dict[str, int]) -> None:
    """Stage the entries of a JSON side file (see :func:`_read_mapping`), read as a stream of entries."""
    stats["empty"] = 0
    cols: dict[str, list[Any]] = {k: [] for k in ("key", "value", "line", "seq")}
    entries = JsonObjectStream(path, stage.source.encoding, role=role, object_pairs_hook=_json_pairs)
    for lines, keys, values, plain in entries.batches():
        stats["read"] += len(keys)
        if plain and all(map(str.strip, values)):  # strings without control characters: loaded as they are
            cols["key"] += keys
            cols["value"] += values
            cols["line"] += lines
        else:
            for line, key, value in zip(lines, keys, values, strict=True):
                _json_entry(stage, path, role, stats, cols, line, key, value)
        if len(cols["key"]) >= _ROWS_PER_INSERT:
            _append_side_rows(stage, cols)
    _append_side_rows(stage, cols)


def _append_side_rows(stage: _Stage, cols: dict[str, list[Any]]) -> None:
    """Insert the collected rows (their ``seq`` continues the table's) and empty ``cols``."""
    start = stage.con.execute("SELECT count(*) FROM _side_rows").fetchone()[0]
    cols["seq"] = list(range(start, start + len(cols["key"])))
    stage.append("_side_rows", cols)
    for k in cols:
        cols[k] = []


def _json_entry(stage: _Stage, path: Path, role: str, stats: dict[str, int], cols: dict[str, list[Any]], line: int,
                key: str, value: Any) -> None:
    """Collect the rows of one JSON entry (a list gives one row per element), or count or reject them."""
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, _JsonPairs):
            fields = dict(v.pairs)
            v = fields.get("label") or fields.get("name")
        if v is None or str(v).strip() == "":
            stats["empty"] += 1
            continue
        v = str(v)
        if _LINE_BREAK.search(key) or _LINE_BREAK.search(v):
            stats["rejected"] += 1
            stage.rejects.append((str(path), line, f"{key}\t{v}",
                                  f"{role}: a carriage return or line feed inside a key or value (a label is one "
                                  "line)"))
            continue
        cols["key"].append(key)
        cols["value"].append(v)
        cols["line"].append(line)


#: Rows collected in Python (a JSON side file, temporal facts) before they are inserted into DuckDB.
_ROWS_PER_INSERT = 20_000
# what no label may hold: a row of a TSV file cannot, and in a prompt it could start a line of its own
_LINE_BREAK = re.compile(r"[\r\n]")
_MappingRows = tuple[Any, Any, Any, list[tuple[int, str, str]], int]


def _mapping_row_problem(parts: Sequence[str], width: int, cr: bool) -> str | None:
    if cr:
        return "a carriage return inside a field (only \\n ends a row)"
    if len(parts) < 2 or not parts[0].strip() or not parts[1].strip():
        return "expected key<TAB>value"
    if len(parts) > width:
        return f"{len(parts)} fields, expected {width} (key<TAB>value{'<TAB>...' if width > 2 else ''})"
    return None


class _JsonPairs:
    """A JSON object as its (key, value) pairs in file order, repeated keys included."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


def _json_pairs(pairs: list[tuple[str, Any]]) -> _JsonPairs:
    return _JsonPairs(pairs)


def _first_of_each_key(stage: _Stage, path: Path, role: str, table: str, stats: dict[str, int]) -> None:
    """Keep the first row of each key of ``_side_rows`` in ``table`` (key, value); a later row of a key is counted
    as a duplicate (same value) or rejected, with its line and the line of the value kept (another value)."""
    con = stage.con
    total, keys = con.execute("SELECT count(*), count(DISTINCT key) FROM _side_rows").fetchone()
    stats["duplicates"] = 0
    con.execute(f"DROP TABLE IF EXISTS {table}")
    if total == keys:  # the usual case: one row per key
        con.execute(f"ALTER TABLE _side_rows RENAME TO {table}")
        return
    con.execute(load_sql("kg/side_later_rows"))
    stats["duplicates"] = con.execute("SELECT count(*) FROM _side_later WHERE value = kept").fetchone()[0]
    for key, value, line, at in con.execute(
            "SELECT key, value, line, kept_line FROM _side_later WHERE value <> kept ORDER BY seq").fetchall():
        stats["rejected"] += 1
        stage.rejects.append((str(path), line, f"{key}\t{value}",
                              f"{role}: key {key!r} given again with another value (line {at} is kept)"))
    con.execute("DROP TABLE _side_later")
    con.execute(f"CREATE TEMP TABLE {table} AS SELECT key, arg_min(value, seq) AS value, min(line) AS line, "
                "min(seq) AS seq FROM _side_rows GROUP BY key")
    con.execute("DROP TABLE _side_rows")


# tab, newline and printable ASCII: text with any other character is read line by line in Python
_PLAIN_TSV_BYTES = b"\t\n" + bytes(range(0x20, 0x7F))


def _mapping_columns(text: str, *, first_line: int, width: int, skip: int | None) -> _MappingRows | None:
    """What :func:`_mapping_lines` returns, in Arrow and Polars, for text of printable ASCII, tabs and newlines only
    (a side file of millions of entity types): there ``str.strip`` strips spaces (and tabs, for telling blank
    lines). None for other text."""
    if not text.isascii() or text.encode("ascii").translate(None, _PLAIN_TSV_BYTES):
        return None
    lines = pl.from_arrow(pc.split_pattern(pa.array([text], pa.large_string()), "\n").flatten())
    fields = lines.str.split_exact("\t", 1).struct.unnest()  # the first two fields; field_1 is null without a tab
    keys, values = fields["field_0"].str.strip_chars(" "), fields["field_1"].str.strip_chars(" ")
    row = lines.str.strip_chars(" \t") != ""
    if skip is not None:
        row[skip - first_line] = False
    ok = (values.is_not_null() & (keys != "") & (values != "")).fill_null(False)
    wide = lines.str.count_matches("\t", literal=True) + 1 > width
    good = row & ok & ~wide
    bad = [(i + first_line, lines[i], _mapping_row_problem(lines[i].split("\t"), width, False))
           for i in (row & ~(ok & ~wide)).arg_true().to_list()]
    return (keys.filter(good).to_arrow().cast(pa.string()), values.filter(good).to_arrow().cast(pa.string()),
            (good.arg_true().cast(pl.Int64) + first_line).to_arrow(), bad, int(row.sum()))


# --------------------------------------------------------------------------------------------------------------
# Encoding and writing
# --------------------------------------------------------------------------------------------------------------


def _finish(stage: _Stage, digest: Callable[[], str], checked: Callable[[], None], started: float) -> IngestReport:
    """Encode the staged rows and write the KG tables, the rejects and the snapshot in one transaction, once
    ``checked`` (the check of the compressed inputs, which ran beside the reading) has passed."""
    checked()
    con, src = stage.con, stage.source
    fmt = src.format
    count_triples_on_insert = False
    if fmt in ("ntriples", "turtle"):
        _route_rdf(stage)

    # exact duplicates: among dated rows (their triples are derived, not counted again) and among triple rows
    if fmt != "events":
        total = con.execute("SELECT count(*) FROM _st_temporal").fetchone()[0]
        distinct = con.execute("SELECT count(*) FROM (SELECT DISTINCT head, relation, tail, start_year, end_year, ongoing FROM _st_temporal)").fetchone()[0]
        stage.counts.duplicates += total - distinct
        stage.counts.loaded += distinct
    if fmt not in ("events", "temporal"):
        # counted after the triples are written (see below): the DISTINCT insert gives the count for free
        count_triples_on_insert = True
        if fmt == "kopl":
            # literal and type statements are loaded too; duplicates among them are counted
            lit_total = con.execute("SELECT count(*) FROM _st_literals").fetchone()[0]
            lit_distinct = con.execute("SELECT count(*) FROM (SELECT DISTINCT * FROM _st_literals)").fetchone()[0]
            ty_total = con.execute("SELECT count(*) FROM _st_types").fetchone()[0]
            ty_distinct = con.execute("SELECT count(*) FROM (SELECT DISTINCT entity, type_key FROM _st_types)").fetchone()[0]
            stage.counts.duplicates += (lit_total - lit_distinct) + (ty_total - ty_distinct)
            stage.counts.loaded += lit_distinct + ty_distinct

    # every entity key that occurs anywhere in the data
    coded = stage.coded
    if coded is not None:
        coded.register_keys(con)
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _st_keys AS
        SELECT head AS key FROM _st_triples UNION SELECT tail FROM _st_triples
        UNION SELECT head FROM _st_temporal UNION SELECT tail FROM _st_temporal WHERE tail IS NOT NULL
        UNION SELECT key FROM _st_entities WHERE key IS NOT NULL
        {"UNION SELECT key FROM _st_coded_keys" if coded else ""}
        """
    )
    if stage.untrimmed:
        # a padded key, or one with a line break, sends the load through the exact pass
        padded = con.execute(
            "SELECT EXISTS (SELECT 1 FROM _st_keys WHERE trim(key) <> key OR regexp_matches(key, '[\\r\\n]')) "
            "OR EXISTS (SELECT 1 FROM (SELECT DISTINCT relation FROM _st_triples) WHERE trim(relation) <> relation "
            "OR regexp_matches(relation, '[\\r\\n]'))"
        ).fetchone()[0]
        if padded:
            raise _Restage
    if stage.unchecked_terms and not _plain_terms_valid(con, None, "kg/ingest_ntriples_load_terms"):
        raise _Restage

    # side files: labels and types, staged in DuckDB; labels found in the data win over a side file's
    for kind, found in (("entity", stage.entity_labels), ("relation", stage.relation_labels)):
        stage.append(f"_labels_{kind}", {"key": list(found), "label": list(found.values())})
        side = getattr(src, f"{kind}_labels")
        if side:
            table = _read_mapping(stage, Path(side), f"{kind}_labels", multi=False)
            # only the labels of keys in the KG are kept (a label file often names far more)
            used = "SEMI JOIN _st_keys k ON k.key = s.key" if kind == "entity" else ""
            con.execute(f"INSERT INTO _labels_{kind} SELECT s.key, s.value FROM {table} s {used} "
                        f"WHERE NOT EXISTS (SELECT 1 FROM _labels_{kind} l WHERE l.key = s.key)")
            con.execute(f"DROP TABLE {table}")
            _unescape_labels(con, f"_labels_{kind}")
    if src.entity_types:
        names = _read_mapping(stage, Path(src.type_labels), "type_labels", multi=False) if src.type_labels else None
        types = _read_mapping(stage, Path(src.entity_types), "entity_types", multi=True)
        con.execute(f"INSERT INTO _st_types SELECT t.key, coalesce(n.value, t.value), t.value FROM {types} t "
                    f"LEFT JOIN {names} n ON n.key = t.value ORDER BY t.seq" if names else
                    f"INSERT INTO _st_types SELECT key, value, value FROM {types} ORDER BY seq")
    if stage.rejects and not src.lenient:
        first = stage.rejects[0]
        raise IngestError(f"{first[0]}, line {first[1]}: {first[3]}: {first[2]!r}. Fix the row or load with lenient=True.")

    # the side tables are often empty; their joins would still build a hash table over every entity
    has = {t: con.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0] for t in ("_st_literals", "_st_temporal", "_st_types")}

    schema = src.name
    q_schema = quote_identifier(schema, what="KG name")
    create_kg_tables(con, schema)
    con.execute("BEGIN TRANSACTION")
    try:
        # replaced rather than emptied: dropping is cheaper than deleting a large KG row by row, and a schema made
        # by an older version gets today's table definitions
        for table in KG_TABLES:
            if table != "snapshots":
                con.execute(f"DROP TABLE {q_schema}.{table}")
                con.execute(load_sql(f"kg/create_{table}"))
        # entities: every key that occurs anywhere in the data, ordered by key so ids are stable; labels are joined
        # in at insert time (an UPDATE of the table afterwards costs more than the whole load). kg_readable gives
        # NULL only for NULL, so it reads the label, or the key when there is none, once per row
        con.execute(load_sql("kg/macro_fallback_label"))
        con.execute(
            f"""
            INSERT INTO {q_schema}.entities (id, key, label)
            SELECT row_number() OVER (ORDER BY k.key) - 1, k.key, kg_readable(coalesce(l.label, k.key))
            FROM _st_keys k LEFT JOIN _labels_entity l ON l.key = k.key
            """
        )
        labelled = con.execute(
            f"SELECT count(*) FROM {q_schema}.entities e SEMI JOIN _labels_entity l ON l.key = e.key"
        ).fetchall()[0][0]
        con.execute(
            f"""
            INSERT INTO {q_schema}.relations (id, key, label)
            SELECT row_number() OVER (ORDER BY k.key) - 1, k.key, kg_readable(coalesce(l.label, k.key))
            FROM (
                SELECT relation AS key FROM _st_triples UNION SELECT relation FROM _st_literals
                UNION SELECT relation FROM _st_temporal {"UNION SELECT key FROM _st_coded_relations" if coded else ""}
            ) k LEFT JOIN _labels_relation l ON l.key = k.key
            """
        )
        keyed = """SELECT head, relation, tail FROM _st_triples
                   UNION ALL SELECT head, relation, tail FROM _st_temporal WHERE tail IS NOT NULL"""

        def ids(rows: str) -> str:
            return f"""SELECT h.id AS head, r.id AS relation, t.id AS tail FROM ({rows}) s
                       JOIN {q_schema}.entities h ON h.key = s.head
                       JOIN {q_schema}.relations r ON r.key = s.relation
                       JOIN {q_schema}.entities t ON t.key = s.tail"""

        # the plain N-Triples' triples come with their ids (see _Coded); those of other files and the dated facts'
        # are joined
        coded_ids = "SELECT head, relation, tail FROM _st_coded_ids"
        if coded is not None:
            coded.register_ids(con, q_schema)

        def with_coded(rows: str) -> str:
            return ids(rows) if coded is None else f"{coded_ids} UNION ALL {ids(rows)}"

        triples_written = con.execute(
            f"INSERT INTO {q_schema}.triples SELECT DISTINCT head, relation, tail FROM ({with_coded(keyed)})"
        ).fetchall()[0][0]
        if count_triples_on_insert:
            staged = con.execute("SELECT count(*) FROM _st_triples").fetchall()[0][0] + (coded.rows if coded else 0)
            has_dated = con.execute("SELECT count(*) FROM _st_temporal WHERE tail IS NOT NULL").fetchall()[0][0]
            # the undated triples alone, by key when all are keyed (no join needed to tell them apart)
            undated = "SELECT head, relation, tail FROM _st_triples"
            distinct = triples_written if not has_dated else con.execute(
                f"SELECT count(*) FROM (SELECT DISTINCT head, relation, tail FROM "
                f"({undated if coded is None else with_coded(undated)}))"
            ).fetchall()[0][0]
            stage.counts.duplicates += staged - distinct
            stage.counts.loaded += distinct
        if has["_st_literals"]:
            con.execute(
                f"""
                INSERT INTO {q_schema}.literals
                SELECT DISTINCT e.id, r.id, s.value, s.datatype, s.lang FROM _st_literals s
                JOIN {q_schema}.entities e ON e.key = s.entity
                JOIN {q_schema}.relations r ON r.key = s.relation
                ORDER BY 1, 2, 3
                """
            )
        if has["_st_temporal"]:
            con.execute(
                f"""
                INSERT INTO {q_schema}.temporal_facts
                SELECT DISTINCT h.id, r.id, t.id, s.start_year, s.end_year, s.ongoing FROM _st_temporal s
                JOIN {q_schema}.entities h ON h.key = s.head
                JOIN {q_schema}.relations r ON r.key = s.relation
                LEFT JOIN {q_schema}.entities t ON t.key = s.tail
                ORDER BY 1, 2, 3, 4, 5
                """
            )
        # types of entities that are not in the KG are counted as unused, not loaded as dangling rows
        _type_labels_from_rdf(con)
        if has["_st_types"]:
            con.execute(
                f"""
                INSERT INTO {q_schema}.entity_types
                SELECT DISTINCT e.id, coalesce(s.type, s.type_key), s.type_key FROM _st_types s
                JOIN {q_schema}.entities e ON e.key = s.entity
                ORDER BY 1, 3
                """
            )
        if src.entity_types:
            # the typed entities that are in the KG: those the insert above joined (one id per key)
            used = con.execute(f"SELECT count(DISTINCT entity) FROM {q_schema}.entity_types").fetchone()[0]
            stage.side_files["entity_types"]["matched_entities"] = used
        if stage.rejects:
            con.executemany(f"INSERT INTO {q_schema}.rejects VALUES (?, ?, ?, ?)", stage.rejects)
        counts = dict(
            zip(
                ("entities", "relations", "triples", "literals", "entity_types", "temporal_facts"),
                con.execute(
                    f"""SELECT (SELECT count(*) FROM {q_schema}.entities), (SELECT count(*) FROM {q_schema}.relations),
                    (SELECT count(*) FROM {q_schema}.triples), (SELECT count(*) FROM {q_schema}.literals),
                    (SELECT count(*) FROM {q_schema}.entity_types), (SELECT count(*) FROM {q_schema}.temporal_facts)"""
                ).fetchone(),
                strict=True,
            )
        )
        c = stage.counts
        snapshot_id = digest()
        report = IngestReport(
            snapshot_id=snapshot_id,
            kg=schema,
            format=fmt,
            read=c.read,
            loaded=c.loaded,
            duplicates=c.duplicates,
            rejected=c.rejected,
            labelled_entities=labelled,
            repaired=c.repaired,
            seconds=round(time.perf_counter() - started, 3),
            side_files=stage.side_files,
            **counts,
        )
        if report.read != report.loaded + report.duplicates + report.rejected:
            raise AssertionError(f"row accounting is off for {src.files}: {report}")
        con.execute(
            f"INSERT INTO {q_schema}.snapshots VALUES ($id, $source, $format, $read, $loaded, $rejected, $dups, $at, $report)",
            {
                "id": snapshot_id,
                "source": json.dumps([str(p) for p in src.files]),
                "format": fmt,
                "read": report.read,
                "loaded": report.loaded,
                "rejected": report.rejected,
                "dups": report.duplicates,
                "at": _dt.datetime.now(_dt.UTC).replace(tzinfo=None),
                "report": json.dumps(report.as_dict()),
            },
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return report


def _type_labels_from_rdf(con: duckdb.DuckDBPyConnection) -> None:
    # rdf:type objects are classes, not entities; their readable name is their rdfs:label or local name
    keys = [r[0] for r in con.execute("SELECT DISTINCT type_key FROM _st_types WHERE type IS NULL").fetchall()]
    if not keys:
        return
    labels = dict(con.execute("SELECT key, label FROM _labels_entity WHERE key IN (SELECT unnest($k))",
                              {"k": keys}).fetchall())
    names = {k: _pretty(labels[k]) if k in labels else _fallback_label(k) for k in keys}  # few: class IRIs
    with _registered(con, pa.table({"k": list(names), "n": list(names.values())})) as view:
        con.execute(f"UPDATE _st_types AS s SET type = a.n FROM {view} a WHERE s.type IS NULL AND s.type_key = a.k")


def _latest_snapshot(con: duckdb.DuckDBPyConnection, schema: str) -> tuple[str, str] | None:
    """(snapshot id, report JSON) of the latest load of ``schema`` when its tables are filled, else None."""
    q_schema = quote_identifier(schema, what="KG name")
    try:
        latest = con.execute(
            f"SELECT snapshot_id, report FROM {q_schema}.snapshots ORDER BY loaded_at DESC LIMIT 1"
        ).fetchall()
        filled = con.execute(f"SELECT count(*) FROM {q_schema}.entities").fetchall()[0][0]
    except duckdb.Error:
        return None
    if not latest or not latest[0][1] or not filled:
        return None
    return latest[0][0], latest[0][1]


def _stored_report(report_json: str) -> IngestReport:
    stored = json.loads(report_json)
    known = {f for f in IngestReport.__dataclass_fields__}
    return IngestReport(**{k: v for k, v in stored.items() if k in known and k != "reused"}, reused=True)


def load_kg(con: duckdb.DuckDBPyConnection, source: KGSource, *, force: bool = False) -> IngestReport:
    """Load ``source`` into the KG tables of schema ``source.name`` and return what was read, loaded and rejected.

    The load replaces that KG's tables in one transaction (a failure leaves the previous KG in place). When the
    schema already holds the same snapshot (same content hash), nothing is re-read unless ``force`` is set and the
    stored counts come back with ``reused=True``.
    """
    started = time.perf_counter()
    if source.format not in FORMATS:
        raise IngestError(f"unknown KG format {source.format!r}; use one of: {', '.join(FORMATS)}")
    if not _SCHEMA_NAME.match(source.name):
        raise IngestError(f"KG name {source.name!r} must be an identifier (letters, digits, underscores) — it names a DuckDB schema")
    if not source.files:
        raise IngestError("the KG source lists no triple files")
    for path in source.files:
        _check_file(path, "triples")
    for path in source.temporal_files:
        _check_file(path, "temporal")
    for role in _SIDE_ROLES:
        side = getattr(source, role)
        if side is not None:
            _check_file(Path(side), role)
    if source.type_labels and not source.entity_types:
        raise IngestError("type_labels given without entity_types; type names label the types of entity_types")
    latest = None if force else _latest_snapshot(con, source.name)
    if latest is not None:
        snapshot_id = _snapshot_id(source)
        if snapshot_id == latest[0]:
            return replace(_stored_report(latest[1]), seconds=round(time.perf_counter() - started, 3))
    # threads beside the load (hashlib, zlib and DuckDB all release the GIL): the content hash, when nothing stored
    # was there to compare it with, is only needed when the load is written; every .gz input is decompressed once
    # through, since DuckDB's reader loads the prefix of one cut short without a word
    workers = ThreadPoolExecutor(2, thread_name_prefix="kgprobe-ingest")
    digest: Callable[[], str] = (lambda: snapshot_id) if latest is not None else workers.submit(_snapshot_id, source).result
    sides = [Path(getattr(source, role)) for role in _SIDE_ROLES if getattr(source, role) is not None]
    checks = [workers.submit(check_compressed, p) for p in (*source.files, *source.temporal_files, *sides)
              if p.suffix == ".gz"]

    def checked() -> None:
        for check in checks:
            check.result()

    try:
        try:
            return _load(_Stage(con, source), digest, checked, started)
        except _Restage:
            return _load(_Stage(con, source, exact=True), digest, checked, started)
    finally:
        workers.shutdown(wait=False, cancel_futures=True)
        _drop_staged_triples(con)
        _unregister_coded(con)
        for t in ("_st_rdf", "_st_literals", "_st_types", "_st_temporal", "_st_entities", "_st_keys", "_pq_rows",
                  "_csv_rej_err", "_csv_rej_scan", "_labels_entity", "_labels_relation", "_side_rows", "_side_later",
                  *(f"_side_{role}" for role in _SIDE_ROLES)):
            con.execute(f"DROP TABLE IF EXISTS {t}")


def _drop_staged_triples(con: duckdb.DuckDBPyConnection) -> None:
    """Drop ``_st_triples``, a temporary table or, after an RDF load, a view (see rdf_route_triples.sql)."""
    view = con.execute("SELECT count(*) FROM duckdb_views() WHERE temporary AND view_name = '_st_triples'").fetchone()[0]
    con.execute("DROP VIEW IF EXISTS _st_triples" if view else "DROP TABLE IF EXISTS _st_triples")


def _load(stage: _Stage, digest: Callable[[], str], checked: Callable[[], None], started: float) -> IngestReport:
    for path in stage.source.files:
        _read_file(stage, path)
    for path in stage.source.temporal_files:
        _read_temporal(stage, path)
    return _finish(stage, digest, checked, started)


def _read_file(stage: _Stage, path: Path) -> None:
    fmt = stage.source.format
    if fmt == "tsv":
        _read_delimited(stage, path, "\t")
    elif fmt == "csv":
        _read_delimited(stage, path, ",")
    elif fmt == "parquet":
        _read_parquet(stage, path)
    elif fmt in ("ntriples", "turtle"):
        _read_rdf(stage, path, fmt)
    elif fmt == "kopl":
        _read_kopl(stage, path)
    elif fmt == "temporal":
        _read_temporal(stage, path)
    elif fmt == "events":
        _read_events(stage, path)
