"""The warehouse resource: one DuckDB file for the KG tables and a Parquet folder per partitioned asset."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow as pa

from kgprobe import warehouse as wh

__all__ = ["WarehouseResource"]


class WarehouseResource(dg.ConfigurableResource):
    """``path`` is the DuckDB file (default ``warehouse/kgprobe.duckdb``); Parquet partitions live beside it."""

    path: str = "warehouse/kgprobe.duckdb"

    @property
    def root(self) -> Path:
        """The folder that holds the DuckDB file and the Parquet partitions."""
        return Path(self.path).parent

    @contextmanager
    def connect(self, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection to the DuckDB file; only ingestion (and the leaderboard) open it for writing. While another
        run's process holds a conflicting lock, it waits with backoff (:func:`kgprobe.warehouse.connect`)."""
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        if read_only and not Path(self.path).exists():
            raise FileNotFoundError(f"warehouse {self.path} does not exist yet; materialize the ingest assets first")
        con = wh.connect(self.path, read_only=read_only)  # waits out another run's conflicting lock
        try:
            yield con
        finally:
            con.close()

    def write_partition(self, asset: str, table: pa.Table, dims: Mapping[str, str] | None = None) -> Path:
        """Replace one partition of ``asset`` with ``table`` (Parquet)."""
        return wh.write_partition(self.root, asset, table, dims)

    def read_partition(self, asset: str, dims: Mapping[str, str] | None = None) -> pa.Table:
        """Read one partition of ``asset``."""
        return wh.read_partition(self.root, asset, dims)
