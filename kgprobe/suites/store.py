"""Writing a suite's items as the partition of its items asset: the ones that name an entity only by an unreadable id
left out (whole groups, each with its reason), the rest checked (:func:`~kgprobe.suites.base.check_items`) and
written, with the counts and preview the asset shows. Items that come as a :class:`pyarrow.RecordBatchReader` (an
:class:`~kgprobe.suites.base.ItemsResult` of more items than memory holds) are filtered, checked and written a batch
at a time; their ids' uniqueness is checked on the written file (DuckDB, which spills to disk) before it replaces
the partition.

    >>> stored = store_items(root, "grapheval_items", "grapheval", result.items, unreadable={"Q42"})
    >>> stored.rows, stored.by_format, stored.rejected
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from kgprobe.kg.readable import reject_unreadable
from kgprobe.suites.base import check_answer_formats, check_item_schema, check_items
from kgprobe.warehouse import write_partition, write_partition_batches

__all__ = ["StoredItems", "store_items"]

_PREVIEW = ("task", "answer_format", "question", "expected")


@dataclass
class StoredItems:
    """What was written: ``rows`` items, counted by (task, answer format), the first ``preview`` rows (task,
    answer format, question, expected) and one row per item left out for naming an unreadable id (``rejected``)."""

    rows: int = 0
    by_format: Counter = field(default_factory=Counter)
    preview: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)

    def add(self, items: pa.Table, preview: int) -> None:
        self.rows += items.num_rows
        # counted in Arrow: a Python dict per item is gigabytes for ERBench's 9M items on a 1M-row table
        counts = items.group_by(["task", "answer_format"]).aggregate([([], "count_all")]).to_pylist()
        self.by_format.update({(r["task"], r["answer_format"]): r["count_all"] for r in counts})
        if len(self.preview) < preview:
            self.preview += items.select(list(_PREVIEW)).slice(0, preview - len(self.preview)).to_pylist()


def store_items(root: str | Path, asset: str, suite: str, items: pa.Table | pa.RecordBatchReader, *,
                unreadable: Collection[str] = (), columns: tuple[str, ...] = ("question",),
                preview: int = 30) -> StoredItems:  # fmt: skip
    """Write ``items`` of ``suite`` as the (unpartitioned) partition of ``asset`` under warehouse ``root`` without
    the groups whose ``columns`` show one of the ``unreadable`` names; raise ValueError (and leave the partition as
    it was) when they fail :func:`~kgprobe.suites.base.check_items`."""
    stored = StoredItems()
    names = frozenset(unreadable)
    if isinstance(items, pa.Table):
        kept, stored.rejected = reject_unreadable(items, names, columns=columns)
        check_items(suite, kept)
        write_partition(root, asset, kept)
        stored.add(kept, preview)
        return stored
    check_item_schema(suite, items.schema)

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in items:
            kept, rejected = reject_unreadable(pa.Table.from_batches([batch]), names, columns=columns)
            check_answer_formats(suite, kept)
            stored.rejected += rejected
            stored.add(kept, preview)
            yield from kept.to_batches()

    def unique(path: Path) -> None:
        with duckdb.connect() as con:
            repeated = con.execute("SELECT count(*) - count(DISTINCT item_id) FROM read_parquet(?)",
                                   [str(path)]).fetchone()[0]
        if repeated:
            raise ValueError(f"suite {suite}: item ids are not unique ({repeated} repeated)")

    write_partition_batches(root, asset, batches(), items.schema, check=unique)
    return stored
