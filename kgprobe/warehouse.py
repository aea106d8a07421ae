"""The warehouse layout: one DuckDB file for the KG tables, Parquet per partition for everything partitioned.

A partitioned asset writes ``<root>/<asset>/<dim>=<value>[/<dim>=<value>]/part-0.parquet``; writing a partition
replaces exactly that folder (written beside it, then renamed), so parallel partition runs never write the same
file and a re-run is idempotent. :func:`register_views` exposes each asset as a DuckDB view with hive partitioning.

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
from collections.abc import Callable, Mapping
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["connect", "is_lock_conflict", "partition_dir", "partitions", "read_partition", "register_views",
           "safe_value", "write_partition"]

_SAFE = re.compile(r"[^A-Za-z0-9_.+-]")
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
    """A partition value as it appears in folder names (and in :func:`partitions`): file-name safe."""
    return _SAFE.sub("_", value)


def partition_dir(root: str | Path, asset: str, dims: Mapping[str, str] | None = None) -> Path:
    """The folder of one partition of ``asset`` (dimensions in sorted order, values made file-name safe)."""
    out = Path(root) / asset
    for dim in sorted(dims or {}):
        out = out / f"{dim}={safe_value(str(dims[dim]))}"  # type: ignore[index]
    return out


def write_partition(root: str | Path, asset: str, table: pa.Table, dims: Mapping[str, str] | None = None) -> Path:
    """Write ``table`` as the whole content of one partition, atomically replacing what was there."""
    final = partition_dir(root, asset, dims)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.{uuid.uuid4().hex}.tmp"
    tmp.mkdir()
    pq.write_table(table, tmp / "part-0.parquet")
    olds = []
    try:
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


def read_partition(root: str | Path, asset: str, dims: Mapping[str, str] | None = None) -> pa.Table:
    """Read one partition back (all its Parquet files)."""
    folder = partition_dir(root, asset, dims)
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"partition {folder} has not been materialized yet")
    return pa.concat_tables(pq.read_table(f) for f in files)


def _read_only(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT readonly FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    return bool(row and row[0])


def register_views(con: duckdb.DuckDBPyConnection, root: str | Path) -> list[str]:
    """Create (or replace) one DuckDB view per asset folder under ``root``, reading its Parquet with hive partitioning.

    On a read-only connection (``duckdb.connect(path, read_only=True)``, which may share the file with a writer)
    the views are temporary: they live in the connection's in-memory ``temp`` catalog and vanish when it closes."""
    names: list[str] = []
    root = Path(root)
    if not root.is_dir():
        return names
    kind = "TEMP VIEW" if _read_only(con) else "VIEW"
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        pattern = str(folder / "**" / "*.parquet")
        if not any(folder.rglob("*.parquet")):
            continue
        con.execute(
            f'CREATE OR REPLACE {kind} "{folder.name}" AS SELECT * FROM read_parquet($p, hive_partitioning = true, union_by_name = true)'.replace(
                "$p", "'" + pattern.replace("'", "''") + "'"
            )
        )
        names.append(folder.name)
    return names


def partitions(root: str | Path, asset: str) -> list[dict[str, str]]:
    """The partitions of ``asset`` written so far, as dimension -> value dicts (file-name-safe values)."""
    base = Path(root) / asset
    out = []
    for part in sorted(base.rglob("*.parquet")):
        dims = dict(p.split("=", 1) for p in part.parent.relative_to(base).parts if "=" in p)
        if dims not in out:
            out.append(dims)
    return out
