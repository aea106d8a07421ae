"""Fixtures of the GraphEval tests: the bundled sample KG in an in-memory DuckDB, and a tiny KG built by hand."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import pytest

from kgprobe.kg.ingest import KGSource, load_kg

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"
SAMPLE = EXAMPLES / "sample"


@pytest.fixture(scope="session")
def sample_con() -> duckdb.DuckDBPyConnection:
    """The sample KG (triples, labels, types) loaded into the main schema of an in-memory DuckDB."""
    con = duckdb.connect()
    load_kg(con, KGSource(triples=[SAMPLE / "triples.tsv"], format="tsv", entity_labels=SAMPLE / "entity_labels.tsv",
                          relation_labels=SAMPLE / "relation_labels.tsv", entity_types=SAMPLE / "entity_types.tsv"))
    return con


def tiny_kg(triples: Sequence[tuple[str, str, str]], labels: dict[str, str] | None = None,
            types: dict[str, str] | None = None) -> duckdb.DuckDBPyConnection:
    """A KG of ``triples`` (keys) with entity ``labels`` (default: the key) and one type per entity in ``types``."""
    from kgprobe.sql import create_kg_tables

    con = duckdb.connect()
    create_kg_tables(con)
    labels = labels or {}
    ents = sorted({x for h, _, t in triples for x in (h, t)} | set(labels))
    rels = sorted({r for _, r, _ in triples})
    con.executemany("INSERT INTO entities VALUES (?, ?, ?)", [(i, k, labels.get(k, k)) for i, k in enumerate(ents)])
    con.executemany("INSERT INTO relations VALUES (?, ?, ?)", [(i, k, k.replace("_", " ")) for i, k in enumerate(rels)])
    eid, rid = {k: i for i, k in enumerate(ents)}, {k: i for i, k in enumerate(rels)}
    con.executemany("INSERT INTO triples VALUES (?, ?, ?)", [(eid[h], rid[r], eid[t]) for h, r, t in triples])
    if types:
        con.executemany("INSERT INTO entity_types VALUES (?, ?, ?)", [(eid[e], t, t) for e, t in types.items()])
    return con
