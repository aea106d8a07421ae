"""A response shard whose footer reads fine but whose data pages are damaged ("Snappy decompression failure") is
set aside like a truncated one: the run goes on, and only the answers that shard held are generated again."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kgprobe.generation import Completion, Prompt, SamplingParams, run_generation
from kgprobe.generation.store import ResponseStore


class Counting:
    name = "counting"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def generate(self, prompts, params):
        self.asked += [p.text for p in prompts]
        return [[Completion(text=f"answer to {p.text} " * 8, finish_reason="stop", tokens_in=1, tokens_out=1,
                            latency_s=0.0)] * params.n for p in prompts]

    def close(self) -> None:
        pass


def _damage_a_page(path: Path, column: str) -> None:
    meta = pq.ParquetFile(path).metadata.row_group(0)
    chunk = next(meta.column(i) for i in range(meta.num_columns) if meta.column(i).path_in_schema == column)
    data = bytearray(path.read_bytes())
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    middle = start + chunk.total_compressed_size // 2
    for i in range(middle, middle + 48):  # inside the compressed page data: header and footer stay valid
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    pq.ParquetFile(path).metadata  # noqa: B018 - the footer still reads


@pytest.mark.parametrize("column", ["text", "prompt", "created_at"])
def test_a_shard_with_damaged_pages_is_set_aside_and_only_its_answers_are_made_again(tmp_path: Path,
                                                                                      column: str) -> None:
    store, params = ResponseStore(tmp_path), SamplingParams(n=1)
    first = [Prompt(f"a{i}", f"first question {i} " * 6, "t") for i in range(40)]
    second = [Prompt(f"b{i}", f"second question {i} " * 6, "t") for i in range(40)]
    run_generation(Counting(), model="m", prompts=first, params=params, store=store, shard_size=1000,
                   batch_size=1000)
    run_generation(Counting(), model="m", prompts=second, params=params, store=store, shard_size=1000,
                   batch_size=1000)
    shards = store.shards("m")
    assert len(shards) == 2
    _damage_a_page(shards[0], column)

    backend, said = Counting(), []
    summary = run_generation(backend, model="m", prompts=first + second, params=params, store=store, log=said.append)
    assert any("damaged" in line and shards[0].name in line for line in said)  # the run's log names it
    assert sorted(backend.asked) == sorted(p.text for p in first)  # only the damaged shard's answers
    assert (summary.reused, summary.generated, summary.failed) == (40, 40, 0)
    assert (shards[0].parent / f"damaged-{shards[0].name}").exists() and not shards[0].exists()
    rows = store.rows_for("m", first + second, params).to_pylist()
    assert all(r["error"] is None and r["text"].startswith("answer to") for r in rows)
