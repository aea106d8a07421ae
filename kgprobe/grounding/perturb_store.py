"""Perturbed subgraphs as table rows with their change log, and the triple scorer's versioned artifact folder."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from kgprobe.kg.graph import Subgraph
from kgprobe.grounding.perturb import PerturbResult, parse_perturbation, perturb_detailed

__all__ = ["PERTURBED_SCHEMA", "artifact_dir", "perturb_subgraphs", "query_seed", "scorer_key"]

_TRIPLE = pa.struct([("head", pa.int64()), ("relation", pa.int64()), ("tail", pa.int64())])
PERTURBED_SCHEMA = pa.schema([
    ("query_id", pa.string()),
    ("perturbation", pa.string()),
    ("method", pa.string()),
    ("level", pa.float64()),
    ("triples", pa.list_(_TRIPLE)),
    ("changes", pa.list_(pa.struct([("index", pa.int64()), ("original", _TRIPLE), ("new", _TRIPLE), ("changed", pa.string())]))),
    ("n_edges", pa.int64()),
    ("target", pa.int64()),
    ("changed", pa.int64()),
    ("actual_share", pa.float64()),
    ("skipped", pa.int64()),
    ("seed", pa.int64()),
    ("snapshot_id", pa.string()),
    ("scorer_id", pa.string()),
])


def query_seed(seed: int, query_id: str, perturbation: str) -> int:
    """A per-(query, perturbation) seed derived from the config seed, so queries are perturbed independently and
    the result does not depend on which other queries or partitions run."""
    digest = hashlib.sha256(f"{seed}|{query_id}|{perturbation}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _t(triple: Sequence[int] | None) -> dict[str, int] | None:
    return None if triple is None else {"head": int(triple[0]), "relation": int(triple[1]), "tail": int(triple[2])}


def perturb_subgraphs(
    subgraphs: Mapping[str, Subgraph], perturbation: str, *, seed: int, scorer: Any = None, snapshot_id: str = "",
    scorer_id: str = "",
) -> pa.Table:
    """Every subgraph perturbed by ``perturbation`` (``none``, ``RS-0.1`` ...), one row per query with the new
    triples, every change (source index, before, after, what changed), the requested and actual share."""
    method, level = parse_perturbation(perturbation)
    rows = []
    for qid, sub in subgraphs.items():
        s = query_seed(seed, qid, perturbation)
        if method == "none":
            triples, changes, target, share, skipped = sub.triples, [], 0, 0.0, 0
        else:
            res: PerturbResult = perturb_detailed(sub.triples, method, level, seed=s, scorer=scorer, nodes=sub.nodes)
            triples, target, share, skipped = res.triples, res.target, res.actual_share, len(res.skipped)
            changes = [{"index": c.index, "original": _t(c.original), "new": _t(c.new), "changed": c.changed} for c in res.changes]
        rows.append({
            "query_id": qid, "perturbation": perturbation, "method": method, "level": level,
            "triples": [_t(t) for t in triples], "changes": changes, "n_edges": len(sub.triples), "target": target,
            "changed": len(changes), "actual_share": share, "skipped": skipped, "seed": s, "snapshot_id": snapshot_id,
            "scorer_id": scorer_id,
        })
    return pa.Table.from_pylist(rows, schema=PERTURBED_SCHEMA)


def scorer_key(snapshot_id: str, config: Mapping[str, Any]) -> str:
    """The id of a scorer artifact: a hash of the KG snapshot and the training config (same inputs, same id)."""
    return hashlib.sha256(json.dumps({"snapshot": snapshot_id, **config}, sort_keys=True).encode()).hexdigest()[:16]


def subgraph_triples(table: pa.Table) -> np.ndarray:
    """The distinct ``(head, relation, tail)`` triples of every subgraph of ``table`` (a ``ppr_subgraphs`` table:
    :func:`kgprobe.kg.subgraph_store.subgraphs_to_table`), sorted, as an (n, 3) int64 array: what
    ``perturbation.scorer_train_on: subgraphs`` trains s_G on."""
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return np.empty((0, 3), dtype=np.int64)
    flat = pc.list_flatten(table.column("triples")).combine_chunks()
    if len(flat) == 0:
        return np.empty((0, 3), dtype=np.int64)
    arr = np.stack([flat.field(name).to_numpy(zero_copy_only=False).astype(np.int64)
                    for name in ("head", "relation", "tail")], axis=1)
    return np.unique(arr, axis=0)


def triples_digest(triples: np.ndarray) -> str:
    """A short hash of a training-triple array (part of the scorer's id when it is trained on the subgraphs)."""
    return hashlib.sha256(np.ascontiguousarray(triples, dtype=np.int64).tobytes()).hexdigest()[:16]


def artifact_dir(root: str | Path, key: str) -> Path:
    """Where the scorer artifact ``key`` lives under the warehouse root."""
    return Path(root) / "triple_scorer" / key
