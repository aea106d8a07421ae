"""The warehouse layout: one DuckDB file for the KG tables, Parquet per partition for everything partitioned.

A partitioned asset writes ``<root>/<asset>/<dim>=<value>[/<dim>=<value>]/part-0.parquet``; writing a partition
replaces exactly that folder (written beside it, then renamed), so parallel partition runs never write the same
file and a re-run is idempotent. :func:`register_views` exposes each asset as a DuckDB view with hive partitioning.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["partition_dir", "partitions", "read_partition", "register_views", "safe_value", "write_partition"]

_SAFE = re.compile(r"[^A-Za-z0-9_.+-]")


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
    old = final.parent / f".{final.name}.{uuid.uuid4().hex}.old"
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def read_partition(root: str | Path, asset: str, dims: Mapping[str, str] | None = None) -> pa.Table:
    """Read one partition back (all its Parquet files)."""
    folder = partition_dir(root, asset, dims)
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"partition {folder} has not been materialized yet")
    return pa.concat_tables(pq.read_table(f) for f in files)


def register_views(con: duckdb.DuckDBPyConnection, root: str | Path) -> list[str]:
    """Create (or replace) one DuckDB view per asset folder under ``root``, reading its Parquet with hive partitioning."""
    names = []
    root = Path(root)
    if not root.is_dir():
        return names
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        pattern = str(folder / "**" / "*.parquet")
        if not any(folder.rglob("*.parquet")):
            continue
        con.execute(
            f'CREATE OR REPLACE VIEW "{folder.name}" AS SELECT * FROM read_parquet($p, hive_partitioning = true, union_by_name = true)'.replace(
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
