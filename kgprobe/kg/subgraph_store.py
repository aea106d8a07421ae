"""Subgraphs as table rows (one row per query, nested node and triple lists) and the paper-style size table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

import pyarrow as pa

from kgprobe.kg.graph import Subgraph

__all__ = ["SUBGRAPH_SCHEMA", "STAT_COLUMNS", "mean_stats", "subgraphs_from_table", "subgraphs_to_table"]

SUBGRAPH_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("seeds", pa.list_(pa.int64())),
        ("nodes", pa.list_(pa.int64())),
        ("triples", pa.list_(pa.struct([("head", pa.int64()), ("relation", pa.int64()), ("tail", pa.int64())]))),
        ("n_nodes", pa.int64()),
        ("n_edges", pa.int64()),
        ("capped_nodes", pa.int64()),
        ("snapshot_id", pa.string()),
        ("params", pa.string()),
    ]
)

#: The columns of OKGQA's subgraph table, in :func:`kgprobe.kg.graph.subgraph_stats` names.
STAT_COLUMNS = ("nodes", "edges", "avg_degree", "clustering", "density", "tokens")


def subgraphs_to_table(
    subgraphs: Mapping[str, Subgraph], seeds: Mapping[str, Sequence[int]], *, snapshot_id: str, params: str
) -> pa.Table:
    """One row per query with its seeds, sorted nodes and triples, and lineage (KG snapshot, parameters as JSON)."""
    rows = []
    for qid, sub in subgraphs.items():
        rows.append(
            {
                "query_id": qid,
                "seeds": list(seeds[qid]),
                "nodes": sorted(sub.nodes),
                "triples": [{"head": h, "relation": r, "tail": t} for h, r, t in sub.triples],
                "n_nodes": len(sub.nodes),
                "n_edges": len(sub.triples),
                "capped_nodes": sub.capped_nodes,
                "snapshot_id": snapshot_id,
                "params": params,
            }
        )
    return pa.Table.from_pylist(rows, schema=SUBGRAPH_SCHEMA)


def subgraphs_from_table(table: pa.Table) -> tuple[dict[str, Subgraph], dict[str, list[int]]]:
    """The subgraphs and seeds of a table written by :func:`subgraphs_to_table`."""
    subs: dict[str, Subgraph] = {}
    seeds: dict[str, list[int]] = {}
    for row in table.to_pylist():
        triples = [(t["head"], t["relation"], t["tail"]) for t in row["triples"]]
        subs[row["query_id"]] = Subgraph(frozenset(row["nodes"]), triples, row.get("capped_nodes") or 0)
        seeds[row["query_id"]] = list(row["seeds"])
    return subs, seeds


def mean_stats(stats: Iterable[Mapping[str, float]]) -> dict[str, Any]:
    """Means of :data:`STAT_COLUMNS` over many subgraphs (the paper reports means), plus the count."""
    stats = list(stats)
    out: dict[str, Any] = {"queries": len(stats)}
    for col in STAT_COLUMNS:
        values = [float(s[col]) for s in stats if col in s]
        out[col] = fmean(values) if values else 0.0
    return out
