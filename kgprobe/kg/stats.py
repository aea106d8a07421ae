"""Summaries of loaded KGs for logs, asset metadata and data-quality checks."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from kgprobe.kg.ingest import KGSource, _snapshot_id
from kgprobe.sql import load_sql, quote_identifier

__all__ = ["current_snapshot", "dangling_ids", "kg_summary", "labels", "source_summary"]


def source_summary(source: KGSource) -> dict[str, Any]:
    """Name, format, files and the snapshot id a load of ``source`` will carry."""
    return {
        "kg": source.name,
        "format": source.format,
        "files": ", ".join(p.name for p in (*source.files, *source.temporal_files)),
        "snapshot_id": _snapshot_id(source),
    }


def kg_summary(con: duckdb.DuckDBPyConnection, kg: str) -> dict[str, Any]:
    """Counts, reject rate, most common reject reason and label/type coverage of the latest load of ``kg``."""
    s = f"{quote_identifier(kg)}"
    row = con.execute(
        f"""SELECT (SELECT count(*) FROM {s}.entities), (SELECT count(*) FROM {s}.relations),
        (SELECT count(*) FROM {s}.triples), (SELECT count(*) FROM {s}.temporal_facts),
        (SELECT count(DISTINCT entity) FROM {s}.entity_types)"""
    ).fetchall()[0]
    snap = con.execute(f"SELECT snapshot_id, report FROM {s}.snapshots ORDER BY loaded_at DESC LIMIT 1").fetchall()
    report = json.loads(snap[0][1]) if snap and snap[0][1] else {}
    reason = con.execute(
        f"SELECT reason, count(*) AS n FROM {s}.rejects GROUP BY reason ORDER BY n DESC, reason LIMIT 1"
    ).fetchall()
    entities = row[0]
    labelled = int(report.get("labelled_entities", 0))
    return {
        "kg": kg,
        "snapshot_id": snap[0][0] if snap else None,
        "entities": entities,
        "relations": row[1],
        "triples": row[2],
        "temporal_facts": row[3],
        "typed_entities": row[4],
        "read": int(report.get("read", 0)),
        "rejected": int(report.get("rejected", 0)),
        "reject_rate": float(report.get("reject_rate", 0.0)),
        "top_reject_reason": f"{reason[0][0]} ({reason[0][1]})" if reason else "",
        "labelled_entities": labelled,
        "label_coverage": labelled / entities if entities else 0.0,
    }


def dangling_ids(con: duckdb.DuckDBPyConnection, kg: str) -> dict[str, int]:
    """Per table, the rows of ``kg`` that reference an entity or relation id that does not exist."""
    con.execute(f"USE {quote_identifier(kg)}")
    row = con.execute(load_sql("kg/check_dangling_ids")).fetchall()[0]
    return dict(zip(("triples", "entity_types", "literals", "temporal_facts"), (int(v) for v in row), strict=True))


def current_snapshot(con: duckdb.DuckDBPyConnection, kg: str) -> str:
    """The snapshot id of the latest load of ``kg`` (the lineage every derived row carries)."""
    rows = con.execute(f"SELECT snapshot_id FROM {quote_identifier(kg)}.snapshots ORDER BY loaded_at DESC LIMIT 1").fetchall()
    if not rows:
        raise LookupError(f"KG {kg!r} has not been loaded into this warehouse; materialize the 'kg' asset first")
    return str(rows[0][0])


def labels(con: duckdb.DuckDBPyConnection, kg: str) -> tuple[dict[int, str], dict[int, str]]:
    """Entity-id -> label and relation-id -> label maps of ``kg``."""
    ents = dict(con.execute(f"SELECT id, label FROM {quote_identifier(kg)}.entities").fetchall())
    rels = dict(con.execute(f"SELECT id, label FROM {quote_identifier(kg)}.relations").fetchall())
    return ents, rels
