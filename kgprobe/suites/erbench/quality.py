"""Checks of a loaded ``erdb`` schema: what the ``erdb`` asset's blocking check reports."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from kgprobe.sql import quote_identifier
from kgprobe.suites.erbench.spec import ERSpec, identifier

__all__ = ["erdb_violations"]


def erdb_violations(con: duckdb.DuckDBPyConnection, spec: ERSpec, *, schema: str = "erdb",
                    fd_violations: str = "keep") -> list[dict[str, Any]]:  # fmt: skip
    """Problems of the loaded database, one row each (empty when sound): a relation without rows, a latest
    snapshot whose accounting is off (read != loaded + rejected), an FD with a left-hand side that has two
    right-hand sides (only when the load dropped FD violations: kept, they are the data as it is), a checked
    foreign-key value without its referenced row."""
    s = quote_identifier(identifier(schema, "schema"))
    q = lambda name: quote_identifier(identifier(name, "identifier"))
    out: list[dict[str, Any]] = []
    try:
        report = con.execute(f"SELECT report FROM {s}._snapshots ORDER BY loaded_at DESC LIMIT 1").fetchone()
    except duckdb.CatalogException:
        return [{"problem": f"schema {schema} was never loaded", "detail": "materialize the erdb asset"}]
    tables = json.loads(report[0])["tables"] if report else {}
    for name in spec.relations:
        counts = tables.get(name)
        n = con.execute(f"SELECT count(*) FROM {s}.{q(name)}").fetchone()[0]
        if n == 0:
            out.append({"problem": "empty relation", "detail": name})
        if counts and counts["read"] != counts["loaded"] + counts["rejected"]:
            out.append({"problem": "accounting", "detail": f"{name}: {counts}"})
    for fd in spec.fds if fd_violations == "drop" else ():
        lhs, rhs = ", ".join(q(c) for c in fd.lhs), ", ".join(q(c) for c in fd.rhs)
        n = con.execute(f"SELECT count(*) FROM (SELECT {lhs} FROM {s}.{q(fd.relation)} GROUP BY {lhs} "
                        f"HAVING count(DISTINCT row({rhs})) > 1)").fetchone()[0]
        if n:
            out.append({"problem": "FD violated", "detail": f"{fd.name}: {n} left-hand sides"})
    for fk in spec.foreign_keys:
        if not fk.checked:
            continue
        n = con.execute(f"SELECT count(*) FROM {s}.{q(fk.relation)} WHERE {q(fk.column)} NOT IN "
                        f"(SELECT {q(fk.ref_column)} FROM {s}.{q(fk.ref_relation)})").fetchone()[0]
        if n:
            out.append({"problem": "FK violated", "detail": f"{fk.label}: {n} rows"})
    return out
