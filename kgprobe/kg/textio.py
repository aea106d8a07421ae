"""Reading KG text inputs in bounded memory: plain or gzip-compressed, a UTF-8 byte-order mark dropped, a file cut
short or corrupt refused with the line reached.

Every reader here holds one chunk of :data:`CHUNK_BYTES` (plus the line or JSON value that crosses its end) at a
time, whatever the size of the file, so a side file of gigabytes costs what a small one costs; the rows go to
DuckDB, whose memory is bounded by its own ``memory_limit``.

    >>> for first_line, text in text_chunks(Path("labels.tsv.gz"), "utf-8"):
    ...     ...   # whole lines; first_line is the 1-based number of the first one
"""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from kgprobe.errors import IngestError

__all__ = [
    "BOM",
    "CHUNK_BYTES",
    "JsonObjectStream",
    "byte_chunks",
    "check_compressed",
    "compressed_error",
    "decode_json",
    "line_blocks",
    "open_binary",
    "read_bytes",
    "text_chunks",
    "text_codec",
]

#: Bytes read from a file at a time by the streaming readers (the bound on what one chunk holds).
CHUNK_BYTES = 1 << 20
#: The UTF-8 byte-order mark that some editors (Excel, Notepad) put at the start of a file.
BOM = b"\xef\xbb\xbf"
# what a truncated or corrupt gzip stream raises while it is read
_GZIP_ERRORS = (EOFError, OSError, zlib.error)
# compressed bytes given to zlib at a time (what is lost of the output when a corrupt block fails its decoding)
_GZIP_INPUT = 1 << 16


def open_binary(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes, decompressed when its name ends in ``.gz``."""
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")  # noqa: SIM115 - closed by caller


def text_codec(encoding: str) -> str:
    """The codec that reads ``encoding``: UTF-8 as ``utf-8-sig``, which drops a leading byte-order mark (a BOM kept
    would glue itself to the first key or label and make it match nothing)."""
    return "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding


def compressed_error(path: Path, line: int, exc: BaseException) -> IngestError:
    """The error for a ``.gz`` input that breaks off (or fails its checksum) at line ``line``."""
    return IngestError(
        f"{path}, line {line}: the compressed file ends early or is corrupt ({exc or type(exc).__name__}); the rows "
        "after this line cannot be read, so nothing of this KG was loaded. Download or compress the file again "
        "(`gzip -t` checks it)."
    )


def check_compressed(path: Path) -> None:
    """Raise an :class:`~kgprobe.errors.IngestError` naming ``path`` and the line reached when ``path`` is a
    ``.gz`` file that is cut short or corrupt (nothing to do for other files).

    DuckDB's CSV reader stops at the end of what decompresses and loads that prefix without a word, so every
    compressed input is read through once (beside the load) before anything is written."""
    if path.suffix == ".gz":
        for _ in byte_chunks(path):
            pass


def _gunzip(fh: BinaryIO) -> Iterator[bytes]:
    """The decompressed bytes of the gzip stream ``fh`` (members one after another), at most :data:`CHUNK_BYTES`
    at a time. Unlike :mod:`gzip`, every byte that decompresses is returned before a stream that ends early raises
    :class:`EOFError` (so the line reached is exact), and a bomb's output is never held whole."""
    d = zlib.decompressobj(wbits=31)
    fed = False  # whether the current member has begun
    data = b""
    while True:
        if not data:
            data = fh.read(_GZIP_INPUT)
            if not data:
                if fed and not d.eof:
                    raise EOFError("the compressed data ends before the end-of-stream marker")
                return
        if d.eof:
            d, fed = zlib.decompressobj(wbits=31), False
        fed = True
        out = d.decompress(data, CHUNK_BYTES)
        data = d.unused_data if d.eof else d.unconsumed_tail
        if out:
            yield out


def byte_chunks(path: Path) -> Iterator[tuple[int, bytes]]:
    """(number of newlines before the chunk, chunk) over the bytes of ``path``, decompressed when its name ends in
    ``.gz``; a broken gzip stream is an :class:`~kgprobe.errors.IngestError` with the line reached."""
    lines = 0
    with open(path, "rb") as fh:
        blocks = _gunzip(fh) if path.suffix == ".gz" else iter(lambda: fh.read(CHUNK_BYTES), b"")
        while True:
            try:
                block = next(blocks, None)
            except _GZIP_ERRORS as exc:
                raise compressed_error(path, lines + 1, exc) from None
            if block is None:
                return
            yield lines, block
            lines += block.count(b"\n")


def line_blocks(path: Path, *, strip_bom: bool = True) -> Iterator[tuple[int, bytes]]:
    """(number of the first line, block) in blocks of about :data:`CHUNK_BYTES` of whole lines: the bytes of
    ``path`` cut after a ``\n`` (the file's last line may lack one). A UTF-8 BOM at the start is dropped unless
    ``strip_bom`` is false. For readers that decode line by line when a block is not valid text (so that one line
    in the wrong encoding costs one reject)."""
    rest = b""
    number = 1
    first = True
    for _, block in byte_chunks(path):
        if first:
            first = False
            if strip_bom:
                block = block.removeprefix(BOM)
        block = rest + block
        cut = block.rfind(b"\n") + 1
        rest = block[cut:]
        if cut:
            yield number, block[:cut]
            number += block.count(b"\n", 0, cut)
    if rest:
        yield number, rest


def text_chunks(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    """(number of the first line, text) in chunks of about :data:`CHUNK_BYTES` of whole lines (each ends with
    ``\\n`` except perhaps the file's last), decoded with :func:`text_codec`. Text that is not valid in
    ``encoding`` is an :class:`~kgprobe.errors.IngestError` naming the file and line."""
    decoder = codecs.getincrementaldecoder(text_codec(encoding))(errors="strict")
    rest = ""
    number = 1
    for before, block in byte_chunks(path):
        try:
            text = rest + decoder.decode(block)
        except UnicodeDecodeError as exc:
            line = before + block[: max(0, exc.start)].count(b"\n") + 1
            raise IngestError(f"{path}, line {line}: not valid {encoding} text; pass the right encoding in the KG "
                              "source") from None
        cut = text.rfind("\n") + 1
        rest = text[cut:]
        if cut:
            yield number, text[:cut]
            number += text.count("\n", 0, cut)
    try:
        rest += decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise IngestError(f"{path}, line {number}: not valid {encoding} text (the file ends inside a character); "
                          "pass the right encoding in the KG source") from None
    if rest:
        yield number, rest


def decode_json(text: str, *, what: Path | str) -> Any:
    """``json.loads(text)`` for a whole JSON input (read with :func:`text_codec`, so a byte-order mark is gone),
    with nesting too deep for Python an :class:`~kgprobe.errors.IngestError` naming ``what`` rather than a
    ``RecursionError``. A syntax error is raised as :class:`json.JSONDecodeError` (the caller says what the file
    should be)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise IngestError(f"{what}: JSON nested too deeply to read (thousands of levels of [ or {{); no KG file "
                          "needs that, so it is refused") from None


# an entry whose key and value are strings without escapes or control characters (then they are as written),
# followed by its comma
_PLAIN_ITEM = re.compile(r'"([^"\\\x00-\x1f]*)"[ \t\r\n]*:[ \t\r\n]*"([^"\\\x00-\x1f]*)"[ \t\r\n]*,[ \t\r\n]*')
# characters kept read ahead of an entry, so that an entry shorter than this is never cut by the end of a chunk
_JSON_LOOKAHEAD = 1 << 16


class JsonObjectStream:
    """The (line, key, value) entries of a file holding one JSON object, read one entry at a time, so a label file
    of any size is read in bounded memory (each value, parsed by :mod:`json`, must fit in memory: labels and type
    lists do). Repeated keys are all returned, in file order; objects inside values come as :class:`list` of
    (key, value) pairs when ``pairs`` is set, else as :class:`dict`.

    A file that is not one JSON object, or that breaks off, is an :class:`~kgprobe.errors.IngestError` naming
    the file and line; so is nesting too deep for Python's JSON parser."""

    def __init__(self, path: Path, encoding: str, *, role: str, object_pairs_hook: Any = None) -> None:
        self.path = path
        self.role = role
        self._chunks = text_chunks(path, encoding)
        self._decoder = json.JSONDecoder(object_pairs_hook=object_pairs_hook)
        self._buf = ""
        self._pos = 0
        # line numbers are counted forward from a mark, not from the start of the buffer each time
        self._mark = 0
        self._mark_line = 1  # the line of self._buf[self._mark]
        self._eof = False

    def _line(self, pos: int) -> int:
        """The line of ``self._buf[pos]`` (``pos`` at or after the last position asked about)."""
        self._mark_line += self._buf.count("\n", self._mark, pos)
        self._mark = pos
        return self._mark_line

    def _fail(self, what: str, pos: int | None = None) -> IngestError:
        line = self._line(max(self._mark, self._pos if pos is None else pos))
        return IngestError(f"{self.path}, line {line}: {what}; a {self.role} file in JSON is one object of key -> "
                           "value")

    def _more(self) -> bool:
        """Append the next chunk to the buffer (dropping what has been read); False at the end of the file."""
        if self._eof:
            return False
        chunk = next(self._chunks, None)
        if chunk is None:
            self._eof = True
            return False
        self._line(self._pos)
        self._buf = self._buf[self._pos:] + chunk[1]
        self._pos = self._mark = 0
        return True

    def _skip_space(self) -> str:
        """The next character that is not white space ('' at the end of the file)."""
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in " \t\r\n":
                self._pos += 1
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._more():
                return ""

    def _value(self, what: str) -> Any:
        """Decode the JSON value that starts at the current position, reading more of the file while it runs past
        the end of what has been read."""
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                # a value cut by the end of the chunk reads as a syntax error near the end of the buffer
                if self._more():
                    continue
                raise self._fail(f"invalid JSON in {what} ({exc.msg})", exc.pos) from None
            except RecursionError:
                raise self._fail(f"{what} is nested too deeply to read (thousands of levels of [ or {{)") from None
            if end == len(self._buf) and not self._eof and self._more():
                continue  # a number may go on in the next chunk
            self._pos = end
            return value

    def __iter__(self) -> Iterator[tuple[int, str, Any]]:
        for lines, keys, values, _ in self.batches():
            yield from zip(lines, keys, values, strict=True)

    def batches(self) -> Iterator[tuple[list[int], list[str], list[Any], bool]]:
        """The entries as (lines, keys, values, plain) batches: a run of ``"key": "value"`` entries without escapes
        (the bulk of a label file, read with one regular expression each) with ``plain`` set, or one other entry."""
        if self._skip_space() != "{":
            raise self._fail("not a JSON object")
        self._pos += 1
        if self._skip_space() == "}":
            self._pos += 1
        else:
            while True:
                if self._skip_space() != '"':
                    raise self._fail("expected a key in double quotes")
                if len(self._buf) - self._pos < _JSON_LOOKAHEAD:
                    self._more()
                run = self._plain_run()
                if run[0]:
                    yield (*run, True)
                    continue
                line = self._line(self._pos)
                key = self._value("a key")
                if self._skip_space() != ":":
                    raise self._fail(f"expected ':' after the key {key!r}")
                self._pos += 1
                self._skip_space()
                yield [line], [key], [self._value(f"the value of {key!r}")], False
                sep = self._skip_space()
                self._pos += 1
                if sep == "}":
                    break
                if sep != ",":
                    raise self._fail("expected ',' or '}' after a value", self._pos - 1)
        if self._skip_space():
            raise self._fail("text after the end of the object")

    def _plain_run(self) -> tuple[list[int], list[str], list[str]]:
        """The plain entries (each followed by a comma) from the current position up to the read-ahead margin."""
        buf, pos = self._buf, self._pos
        stop = len(buf) if self._eof else len(buf) - _JSON_LOOKAHEAD
        lines: list[int] = []
        keys: list[str] = []
        values: list[str] = []
        line, last = self._line(pos), pos
        match = _PLAIN_ITEM.match
        m = match(buf, pos)
        while m is not None and pos < stop:
            line += buf.count("\n", last, pos)
            last = pos
            lines.append(line)
            keys.append(m[1])
            values.append(m[2])
            pos = m.end()
            m = match(buf, pos)
        self._mark, self._mark_line, self._pos = last, line, pos
        return lines, keys, values


def read_bytes(path: Path, *, strip_bom: bool = True) -> bytes:
    """All of ``path``, decompressed, without a leading UTF-8 byte-order mark unless ``strip_bom`` is false; a
    ``.gz`` file cut short is an :class:`~kgprobe.errors.IngestError` with the line reached. For the parsers that
    need a whole file at once (RDF, KoPL and event lists)."""
    data = b"".join(block for _, block in byte_chunks(path))
    return data.removeprefix(BOM) if strip_bom else data
