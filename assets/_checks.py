"""What asset checks share: which partitions a check looks at, and the result of a Great Expectations suite."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from kgprobe import warehouse as wh
from kgprobe.scoring.quality import ExpectationOutcome, failed, outcomes_markdown

__all__ = ["RANGE_END", "RANGE_START", "concat", "expectations_result", "partition_dims", "partitions_to_check"]


def partitions_to_check(context: Any, root: str | Path, asset: str, *, default_dim: str = "model",
                        partitions_def: dg.PartitionsDefinition | None = None) -> list[dict[str, str]]:
    """The written partitions of ``asset`` that the check's run materialized (all written ones when the run has no
    partition), so a check on one of 52 grounded partitions reads one partition, not 52. A run over a range of
    partitions (``kgprobe run`` runs each grounded model's levels as one) checks the written partitions in the range,
    which ``partitions_def`` (the asset's) orders. A single-dimension partition key is read as ``default_dim``."""
    tags = context.run.tags
    written = wh.partitions(root, asset)
    start, end = tags.get(RANGE_START), tags.get(RANGE_END)
    if start is not None and end is not None and partitions_def is not None:
        keys = partitions_def.get_partition_keys_in_range(dg.PartitionKeyRange(start, end))
        wanted_all = [partition_dims(partitions_def, key, default_dim) for key in keys]
        return [d for d in written if d in wanted_all]
    if "dagster/partition" not in tags:
        return written
    wanted = {k.split("/")[-1]: v for k, v in tags.items() if k.startswith("dagster/partition/")}
    wanted = wanted or {default_dim: tags["dagster/partition"]}
    return [d for d in written if d == wanted]


#: The run tags of a run over a range of partitions (Dagster's names).
RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def partition_dims(partitions_def: dg.PartitionsDefinition, key: str, default_dim: str = "model") -> dict[str, str]:
    """A partition key as dimension -> value (``{"model": "oracle", "perturbation": "RS-0.2"}``); a
    single-dimension key as ``{default_dim: key}``."""
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return dict(partitions_def.get_partition_key_from_str(key).keys_by_dimension)
    return {default_dim: key}


def concat(tables: Sequence[Any]) -> Any:
    """One Arrow table of the partitions' tables (a check validates a ranged run's partitions together: every
    uniqueness rule's key holds the partition's dimensions)."""
    import pyarrow as pa

    return tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")


def expectations_result(outcomes: Sequence[ExpectationOutcome]) -> dg.AssetCheckResult:
    """A check result from suite outcomes: passed when something was validated and nothing failed; the failures (or,
    when all passed, every outcome) as a Markdown table."""
    bad = failed(outcomes)
    return dg.AssetCheckResult(passed=bool(outcomes) and not bad, metadata={
        "expectations": len(outcomes), "failed": len(bad),
        "results": dg.MetadataValue.md(outcomes_markdown(bad or outcomes)),
    })
