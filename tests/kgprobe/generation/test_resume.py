"""A generation run killed with SIGKILL resumes: every item ends with its answer and nothing answered before the
kill is answered twice (each backend call's answers are stored when it returns, whatever ``shard_size``).

The run happens in a subprocess with a counting backend that appends each prompt it answers to a log file (before
returning it to the runner). On its ``block_at``-th call the backend writes a marker and blocks, and the test kills
the process then, so the count of what was lost is exact: only the call in flight, which had answered nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kgprobe.generation import Prompt, SamplingParams
from kgprobe.generation.store import ResponseStore

REPO = Path(__file__).resolve().parents[3]
N_UNIQUE, BATCH = 40, 4

SCRIPT = textwrap.dedent("""
    import os, sys, time
    from kgprobe.generation import BaseBackend, Completion, Prompt, SamplingParams, run_generation
    from kgprobe.generation.store import ResponseStore

    root, answered_log, marker, block_at, shard_size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])

    class Counting(BaseBackend):
        name = "counting"
        calls = 0

        def generate(self, prompts, params):
            self.calls += 1
            if self.calls == block_at:
                open(marker, "w").close()
                time.sleep(600)  # killed here
            with open(answered_log, "a") as fh:
                fh.writelines(p.text + "\\n" for p in prompts)
                fh.flush()
                os.fsync(fh.fileno())
            return [[Completion("answer:" + p.text, "stop", 1, 1, 0.0)] for p in prompts]

    items = [Prompt(f"item{i}", f"prompt {i %% %(unique)d}", "t") for i in range(%(items)d)]
    run_generation(Counting(), model="m", prompts=items, params=SamplingParams(n=1), store=ResponseStore(root),
                   batch_size=%(batch)d, shard_size=shard_size, run_id="run-" + str(block_at))
""") % {"unique": N_UNIQUE, "items": N_UNIQUE + 8, "batch": BATCH}


def items() -> list[Prompt]:
    return [Prompt(f"item{i}", f"prompt {i % N_UNIQUE}", "t") for i in range(N_UNIQUE + 8)]


def _start(script: Path, root: Path, log: Path, marker: Path, block_at: int, shard_size: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, str(script), str(root), str(log), str(marker), str(block_at), str(shard_size)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.mark.slow
@pytest.mark.parametrize("shard_size, block_at, shards_before_kill, lost", [
    (4, 6, 5, 0),   # a shard per batch: all 5 answered batches were flushed before the 6th call
    (2, 6, 10, 0),  # shard_size below the batch: two shards per batch, all stored
    (8, 6, 5, 0),   # shard_size above the batch: each batch is still stored when it returns, nothing answered is lost
])
def test_a_killed_run_resumes_without_answering_twice(tmp_path, shard_size, block_at, shards_before_kill, lost):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    root, log, marker = tmp_path / "store", tmp_path / "answered.txt", tmp_path / "blocked"
    store = ResponseStore(root)

    proc = _start(script, root, log, marker, block_at, shard_size)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            if proc.poll() is not None:
                pytest.fail(f"the run ended before blocking: {proc.stdout.read().decode()}")
            if time.monotonic() > deadline:
                pytest.fail("the run did not reach its blocking call within 120 s")
            time.sleep(0.05)
        assert len(store.shards("m")) == shards_before_kill >= 1
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    first = log.read_text().splitlines()
    assert len(first) == (block_at - 1) * BATCH
    assert len(store.done_keys("m", SamplingParams(n=1).sha256())) == len(first) - lost

    # the re-run finishes the job (block_at 0: never blocks)
    log_before = len(first)
    proc = _start(script, root, log, marker, 0, shard_size)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out.decode()
    second = log.read_text().splitlines()[log_before:]

    answered = first + second
    assert len(second) == len(set(second))  # the re-run answers each prompt once
    assert set(answered) == {f"prompt {i}" for i in range(N_UNIQUE)}
    assert len(answered) - N_UNIQUE == lost  # only the unflushed shard was answered twice
    assert len(set(first) & set(second)) == lost

    table = store.rows_for("m", items(), SamplingParams(n=1))
    rows = table.to_pylist()
    assert len(rows) == N_UNIQUE + 8
    assert all(r["error"] is None and r["text"] == "answer:" + r["prompt"] for r in rows)
    assert {r["run_id"] for r in rows} == {f"run-{block_at}", "run-0"}
