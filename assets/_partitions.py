"""Which partitions an asset check looks at: the one its run materialized, or all of them for a check run alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgprobe import warehouse as wh

__all__ = ["run_partition", "partitions_to_check"]


def run_partition(context: Any) -> dict[str, str] | None:
    """The partition (dimension -> value) of the run a check executes in; None when the run has no partition.
    A single-dimension key is returned under ``default_dim``'s name by :func:`partitions_to_check`."""
    tags = context.run.tags
    if "dagster/partition" not in tags:
        return None
    dims = {k.split("/")[-1]: v for k, v in tags.items() if k.startswith("dagster/partition/")}
    return dims or {"": tags["dagster/partition"]}


def partitions_to_check(context: Any, root: str | Path, asset: str, *, default_dim: str = "model") -> list[dict[str, str]]:
    """The written partitions of ``asset`` that the check's run materialized (all written ones when the run has no
    partition), so a check on one of 52 grounded partitions reads one partition, not 52."""
    wanted = run_partition(context)
    written = wh.partitions(root, asset)
    if wanted is None:
        return written
    if "" in wanted:
        wanted = {default_dim: wanted[""]}
    safe = {k: wh._safe(v) for k, v in wanted.items()}
    return [d for d in written if d == safe]
