"""The warehouse layout: one DuckDB file for the KG tables, Parquet per partition for everything partitioned.

A partitioned asset writes ``<root>/<asset>/<dim>=<value>[/<dim>=<value>]/part-0.parquet``; writing a partition
replaces exactly that folder (written beside it, then renamed), so parallel partition runs never write the same
file and a re-run is idempotent. A value is escaped in the folder name (:func:`safe_value`: ``openai/gpt-4o`` is
``model=openai%2Fgpt-4o``), so two values never share a folder and :func:`partitions` gives the real values back;
nothing reads a column from a folder name (no hive partitioning): rows carry their own ``model`` and
``perturbation``. Hidden folders (``.<name>.<id>.tmp`` of a write killed before its rename, ``.old`` ones) are
never read, are reported, and are removed by the next write of that partition. :func:`register_views` exposes each
asset as a DuckDB view.

Several runs use one warehouse at once (a backfill with ``max_concurrent_runs`` above 1): DuckDB lets many processes
read the file or one process write it, so :func:`connect` waits out a conflicting lock (ingestion or the leaderboard
writing while other runs read) with backoff instead of failing the step.
"""

from __future__ import annotations

import errno
import os
import random
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["connect", "is_lock_conflict", "leftovers", "partition_dir", "partitions", "read_partition",
           "register_views", "safe_value", "unsafe_value", "write_partition", "write_partition_batches"]

_KEEP = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-")
#: Longest escaped value in a folder name (file systems allow 255 bytes per name, with ``<dim>=`` before it).
_MAX_NAME = 200
#: A hidden leftover folder of a killed write older than this is removed by the next write of its partition (a
#: younger one may belong to a write still running beside this one).
STALE_S = 600.0
_LOCK = re.compile(r"Could not set lock on file|Conflicting lock is held", re.IGNORECASE)
#: How long :func:`connect` waits for another process's lock on the DuckDB file before giving up, by default.
LOCK_TIMEOUT_S = 300.0


def is_lock_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is DuckDB refusing to open a file another process holds locked (worth waiting out)."""
    return isinstance(exc, duckdb.IOException) and bool(_LOCK.search(str(exc)))


def connect(path: str | Path, *, read_only: bool = False, timeout_s: float = LOCK_TIMEOUT_S,
            sleep: Callable[[float], None] = time.sleep) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file at ``path``, waiting while another process holds a conflicting lock on it.

    DuckDB allows one writing process or many reading ones. A run that opens the file while another run writes it
    (or writes while others read) gets a lock error; this retries with exponential backoff and jitter (0.05 s
    doubling up to 2 s) for up to ``timeout_s`` seconds, then raises the last lock error, which names the holder's
    PID. Any other error is raised at once.

        >>> con = connect("warehouse/kgprobe.duckdb", read_only=True)  # doctest: +SKIP
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            if not is_lock_conflict(exc) or time.monotonic() + delay > deadline:
                raise
        sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, 2.0)


def safe_value(value: str) -> str:
    """A partition value as it appears in a folder name: letters, digits and ``_.+-`` kept, every other byte of its
    UTF-8 as ``%XX``, so distinct values get distinct folders (``a/b`` is ``a%2Fb``, ``a_b`` stays ``a_b``) and
    :func:`unsafe_value` gives the value back. Values that were already file-name safe keep their old folder.

        >>> safe_value("llama3:8b")
        'llama3%3A8b'
    """
    text = "".join(chr(b) if b in _KEEP else f"%{b:02X}" for b in value.encode("utf-8"))
    if value in ("", ".", ".."):  # never an empty or relative folder name
        text = "".join(f"%{b:02X}" for b in value.encode("utf-8")) or "%"
    if len(text) > _MAX_NAME:
        from kgprobe.errors import ConfigError

        raise ConfigError(f"partition value {value[:60]!r}... is too long for a folder name ({len(text)} characters "
                          f"escaped, at most {_MAX_NAME}); give it a shorter name in the config")
    return text


def unsafe_value(text: str) -> str:
    """The value that :func:`safe_value` escaped as ``text`` (a folder name of an older version, with ``_`` for
    every unsafe character, reads as itself)."""
    from urllib.parse import unquote

    return "" if text == "%" else unquote(text, errors="replace")


def partition_dir(root: str | Path, asset: str, dims: Mapping[str, str] | None = None) -> Path:
    """The folder of one partition of ``asset`` (dimensions in sorted order, values escaped by :func:`safe_value`)."""
    out = Path(root) / asset
    for dim in sorted(dims or {}):
        out = out / f"{dim}={safe_value(str(dims[dim]))}"  # type: ignore[index]
    return out


def write_partition(root: str | Path, asset: str, table: pa.Table, dims: Mapping[str, str] | None = None) -> Path:
    """Write ``table`` as the whole content of one partition, atomically replacing what was there. Leftovers of
    earlier writes of this partition killed before their rename (hidden ``.tmp`` / ``.old`` folders older than
    :data:`STALE_S`) are removed first."""
    return _write(root, asset, dims, lambda path: pq.write_table(table, path))


def write_partition_batches(root: str | Path, asset: str, batches: Iterable[pa.RecordBatch], schema: pa.Schema,
                            dims: Mapping[str, str] | None = None, *,
                            check: Callable[[Path], None] | None = None) -> Path:  # fmt: skip
    """As :func:`write_partition`, for a table that comes as ``batches`` (of ``schema``) and need not fit in memory:
    each batch is written as it arrives (a row group or more each). ``check(path)`` runs on the written Parquet file
    before it replaces the partition; an exception from it (or from the batches) leaves the partition as it was."""

    def write(path: Path) -> None:
        with pq.ParquetWriter(path, schema) as out:
            for batch in batches:
                out.write_batch(batch)
        if check is not None:
            check(path)

    return _write(root, asset, dims, write)


def _write(root: str | Path, asset: str, dims: Mapping[str, str] | None, write: Callable[[Path], None]) -> Path:
    final = partition_dir(root, asset, dims)
    final.parent.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for left in final.parent.glob(f".{glob_escape(final.name)}.*"):
        try:
            if left.name.endswith((".tmp", ".old")) and now - left.stat().st_mtime > STALE_S:
                shutil.rmtree(left, ignore_errors=True)
        except FileNotFoundError:
            pass
    tmp = final.parent / f".{final.name}.{uuid.uuid4().hex}.tmp"
    tmp.mkdir()
    olds = []
    try:
        write(tmp / "part-0.parquet")
        # Two writers of one partition (a run re-launched while the first still ends, say) may move in between the
        # move aside and the rename: the rename then finds a folder again, which is moved aside in turn. The last
        # rename wins, as a last write would.
        for _ in range(100):
            if final.exists():
                olds.append(final.parent / f".{final.name}.{uuid.uuid4().hex}.old")
                try:
                    os.replace(final, olds[-1])
                except FileNotFoundError:  # the other writer moved it first
                    olds.pop()
            try:
                os.replace(tmp, final)
                break
            except OSError as exc:  # final reappeared, not empty: the other writer's rename came between
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
        else:
            raise OSError(f"could not replace partition {final}: another process kept writing it")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for old in olds:
            shutil.rmtree(old, ignore_errors=True)
    return final


def glob_escape(name: str) -> str:
    """``name`` with the characters that :meth:`pathlib.Path.glob` reads as a pattern made literal."""
    import glob

    return glob.escape(name)


def read_partition(root: str | Path, asset: str, dims: Mapping[str, str] | None = None) -> pa.Table:
    """Read one partition back (all its Parquet files)."""
    folder = partition_dir(root, asset, dims)
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"partition {folder} has not been materialized yet")
    return pa.concat_tables(pq.read_table(f) for f in files)


def _data_files(base: Path) -> tuple[dict[tuple[tuple[str, str], ...], list[Path]], list[Path]]:
    """The Parquet files under ``base`` grouped by partition (dimension, value) pairs, and the hidden leftovers that
    were skipped. Hidden folders (a killed write's ``.tmp``, a replaced ``.old``) and set-aside ``damaged-`` shards
    are never data."""
    groups: dict[tuple[tuple[str, str], ...], list[Path]] = {}
    hidden: list[Path] = []
    if not base.is_dir():
        return groups, hidden
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        for d in sorted(dirnames):
            if d.startswith("."):
                hidden.append(here / d)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files = sorted(here / f for f in filenames if f.endswith(".parquet") and not f.startswith((".", "damaged-")))
        if files:
            parts = here.relative_to(base).parts
            key = tuple((k, unsafe_value(v)) for k, v in (p.split("=", 1) for p in parts if "=" in p))
            groups.setdefault(key, []).extend(files)
    return groups, hidden


def leftovers(root: str | Path, asset: str) -> list[Path]:
    """Hidden folders under ``asset`` that readers skip: what a write killed before its rename left behind (the
    next write of that partition removes them once they are :data:`STALE_S` old)."""
    return _data_files(Path(root) / asset)[1]


def _warn_leftovers(hidden: Sequence[Path]) -> None:
    if hidden:
        import warnings

        warnings.warn(f"warehouse: skipped {len(hidden)} leftover folder(s) of interrupted writes (not data): "
                      f"{', '.join(str(h) for h in hidden[:5])}; the next write of each partition removes them",
                      RuntimeWarning, stacklevel=3)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _read_only(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT readonly FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    return bool(row and row[0])


def register_views(con: duckdb.DuckDBPyConnection, root: str | Path) -> list[str]:
    """Create (or replace) one DuckDB view per asset folder under ``root`` over its Parquet files (hidden leftovers
    and set-aside shards skipped). Columns come from the files only (no hive partitioning, which would overwrite a
    stored ``model`` with its folder name); a partition whose rows lack a dimension column get it from the
    unescaped folder name. On a read-only connection (``duckdb.connect(path, read_only=True)``, which may share
    the file with a writer) the views are temporary: they live in the connection's in-memory ``temp`` catalog and
    vanish when it closes. Returns the view names."""
    names = []
    root = Path(root)
    if not root.is_dir():
        return names
    kind = "TEMP VIEW" if _read_only(con) else "VIEW"
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        groups, hidden = _data_files(folder)
        _warn_leftovers(hidden)
        if not groups:
            continue
        selects = []
        for key, files in sorted(groups.items()):
            columns = set()
            for f in files:
                try:
                    columns.update(pq.read_schema(f).names)
                except Exception:  # noqa: BLE001 - an unreadable file fails the view's query, with DuckDB's message
                    pass
            fill = "".join(f", {_literal(v)} AS {_ident(k)}" for k, v in key if k not in columns)
            paths = "[" + ", ".join(_literal(str(f)) for f in files) + "]"
            selects.append(f"SELECT *{fill} FROM read_parquet({paths}, hive_partitioning = false, "
                           "union_by_name = true)")
        con.execute(f"CREATE OR REPLACE {kind} {_ident(folder.name)} AS " + " UNION ALL BY NAME ".join(selects))
        names.append(folder.name)
    return names


def partitions(root: str | Path, asset: str) -> list[dict[str, str]]:
    """The partitions of ``asset`` written so far, as dimension -> value dicts (the real values, unescaped).
    Leftover hidden folders of interrupted writes are not partitions: they are skipped with a warning."""
    groups, hidden = _data_files(Path(root) / asset)
    _warn_leftovers(hidden)
    return [dict(key) for key in sorted(groups)]
