"""What asset checks share: which partitions a check looks at, and the result of a Great Expectations suite."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from kgprobe import warehouse as wh
from kgprobe.scoring.quality import ExpectationOutcome, failed, outcomes_markdown

__all__ = ["expectations_result", "partitions_to_check"]


def partitions_to_check(context: Any, root: str | Path, asset: str, *, default_dim: str = "model") -> list[dict[str, str]]:
    """The written partitions of ``asset`` that the check's run materialized (all written ones when the run has no
    partition), so a check on one of 52 grounded partitions reads one partition, not 52. A single-dimension
    partition key is read as ``default_dim``."""
    tags = context.run.tags
    written = wh.partitions(root, asset)
    if "dagster/partition" not in tags:
        return written
    wanted = {k.split("/")[-1]: v for k, v in tags.items() if k.startswith("dagster/partition/")}
    wanted = wanted or {default_dim: tags["dagster/partition"]}
    return [d for d in written if d == wanted]


def expectations_result(outcomes: Sequence[ExpectationOutcome]) -> dg.AssetCheckResult:
    """A check result from suite outcomes: passed when something was validated and nothing failed; the failures (or,
    when all passed, every outcome) as a Markdown table."""
    bad = failed(outcomes)
    return dg.AssetCheckResult(passed=bool(outcomes) and not bad, metadata={
        "expectations": len(outcomes), "failed": len(bad),
        "results": dg.MetadataValue.md(outcomes_markdown(bad or outcomes)),
    })
