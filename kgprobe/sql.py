"""DuckDB SQL files of ``sql/``, loaded by name, and the KG table schema."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import duckdb

from kgprobe.errors import IngestError

__all__ = ["KG_TABLES", "SQL_DIR", "create_kg_tables", "load_sql", "quote_identifier"]

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


def quote_identifier(name: str, *, what: str = "identifier") -> str:
    """``name`` as a quoted DuckDB identifier, for every table, schema or column name put into SQL text: the name
    between double quotes, each ``"`` in it doubled, so that whatever the name holds (a quote, ``)``, ``;``, a
    subquery) is read as one name and never as SQL. Names come from data (Parquet column names, source tables), so
    this is the one place they are quoted. An empty name and a NUL character cannot be quoted and are an
    :class:`~kgprobe.errors.IngestError` naming ``what``.

        >>> quote_identifier('he"ad')
        '"he""ad"'
    """
    if not isinstance(name, str) or not name or "\x00" in name:
        raise IngestError(f"{what} {name!r} cannot be used as an SQL name (it is empty or holds a NUL character); "
                          "rename it in the data")
    return '"' + name.replace('"', '""') + '"'


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
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_identifier(schema, what='schema')}")
    con.execute(f"USE {quote_identifier(schema, what='schema')}")
    for table in KG_TABLES:
        con.execute(load_sql(f"kg/create_{table}"))
