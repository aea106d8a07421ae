"""An I/O error is not damage: a healthy shard whose reads fail for a moment with EIO, or with the ESTALE of an NFS
mount, is read again (bounded, with backoff) and kept, and none of its answers is paid for again; one that keeps
failing stops the run with an error that names it, still in place. Only a shard that fails to decode is set aside
(tests/adversarial/test_store_damaged_pages.py)."""

from __future__ import annotations

import errno
import os
from collections import OrderedDict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kgprobe.errors import KGProbeError
from kgprobe.generation import Prompt, SamplingParams, run_generation
from kgprobe.generation.backends import ReferenceBackend
from kgprobe.generation import store as store_module
from kgprobe.generation.store import ResponseStore

PROMPTS = [Prompt(f"i{i}", f"question {i}", "t") for i in range(8)]


def _stored_shard(tmp_path: Path, monkeypatch) -> tuple[ResponseStore, Path]:
    store = ResponseStore(tmp_path)
    run_generation(ReferenceBackend("always-yes"), model="m", prompts=PROMPTS, params=SamplingParams(n=1), store=store)
    (shard,) = store.shards("m")
    # a new process: nothing read before (the writer's cache would hide the reads)
    monkeypatch.setattr(store_module, "_CACHE", OrderedDict())
    monkeypatch.setattr(store_module, "_COMBINED", OrderedDict())
    monkeypatch.setattr(store_module, "_CACHE_BYTES", [0])
    monkeypatch.setattr(store_module, "IO_BACKOFF_S", 0.0, raising=False)  # no waits between the tries
    return store, shard


def _failing_reads(monkeypatch, shard: Path, code: int, times: int) -> list[int]:
    """The first ``times`` opens of ``shard`` by Arrow (footer or whole file) fail with ``code``, as a file system
    that loses its connection for a moment does; returns the count of failed opens."""
    failed = [0]

    def flaky(real):
        def read(source, *args, **kwargs):
            if str(source) == str(shard) and failed[0] < times:
                failed[0] += 1
                raise OSError(code, os.strerror(code), str(source))
            return real(source, *args, **kwargs)

        return read

    monkeypatch.setattr(pq, "ParquetFile", flaky(pq.ParquetFile))
    monkeypatch.setattr(pq, "read_table", flaky(pq.read_table))
    return failed


@pytest.mark.parametrize("code", [errno.EIO, errno.ESTALE])
def test_a_transient_io_error_is_retried_and_the_shard_kept(tmp_path: Path, monkeypatch, code: int) -> None:
    store, shard = _stored_shard(tmp_path, monkeypatch)
    failed = _failing_reads(monkeypatch, shard, code, times=3)
    summary = run_generation(ReferenceBackend("always-yes"), model="m", prompts=PROMPTS, params=SamplingParams(n=1),
                             store=store)
    assert (summary.reused, summary.generated) == (8, 0)  # nothing asked, nor paid for, again
    assert shard.exists() and not list(shard.parent.glob("damaged-*"))
    assert failed[0] == 3  # the reads did fail, and were tried again


def test_an_io_error_that_lasts_stops_the_run_and_keeps_the_shard(tmp_path: Path, monkeypatch) -> None:
    store, shard = _stored_shard(tmp_path, monkeypatch)
    failed = _failing_reads(monkeypatch, shard, errno.EIO, times=10**6)
    with pytest.raises(KGProbeError, match=r"reading .*shard-.* failed 6 times with an I/O error") as info:
        run_generation(ReferenceBackend("always-yes"), model="m", prompts=PROMPTS, params=SamplingParams(n=1),
                       store=store)
    assert str(shard) in str(info.value) and "check the file system" in str(info.value)
    assert failed[0] == 6  # bounded: tried 6 times (store.IO_ATTEMPTS), then given up
    assert shard.exists() and not list(shard.parent.glob("damaged-*")) and len(store.shards("m")) == 1
