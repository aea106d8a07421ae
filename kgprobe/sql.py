"""DuckDB SQL files of ``sql/``, loaded by name, and the KG table schema."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import duckdb

__all__ = ["KG_TABLES", "SQL_DIR", "create_kg_tables", "load_sql"]

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"

#: Tables of one KG, in creation order. Each lives in the KG's own DuckDB schema.
KG_TABLES = (
    "entities",
    "relations",
    "triples",
    "entity_types",
    "literals",
    "temporal_facts",
    "rejects",
    "snapshots",
)


@cache
def load_sql(name: str) -> str:
    """Return the text of ``sql/<name>.sql``, where ``name`` names the package folder too (``"kg/khop_step"``); one
    statement, parameters bound as ``$name``."""
    path = SQL_DIR / f"{name}.sql"
    if not path.is_file():
        raise FileNotFoundError(f"SQL file {path} is missing; kgprobe must be installed from a checkout (pip install -e .)")
    return path.read_text(encoding="utf-8")


def create_kg_tables(con: duckdb.DuckDBPyConnection, schema: str = "main") -> None:
    """Create the KG tables (empty, if absent) in ``schema`` and make it the connection's default schema."""
    con.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    con.execute(f'USE "{schema}"')
    for table in KG_TABLES:
        con.execute(load_sql(f"kg/create_{table}"))
