"""``kill -9`` in the middle of a litellm batch loses at most the requests in flight: each request's answers are
stored when it completes, whatever ``batch_size`` and ``shard_size`` say. And a run that a killed ``kgprobe run``
process left "started" in Dagster's run storage is marked failed by the next ``kgprobe run``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kgprobe
from kgprobe.generation import SamplingParams
from kgprobe.generation.store import ResponseStore

REPO = Path(kgprobe.__file__).resolve().parents[1]  # the child runs the code this test imports
PROMPTS, CONCURRENCY = 42, 2
SCRIPT = """
import os, sys
from kgprobe.generation import Prompt, SamplingParams, run_generation
from kgprobe.generation.backends import LiteLLMBackend, LiteLLMConfig
from kgprobe.generation.store import ResponseStore

url, root = sys.argv[1], sys.argv[2]
backend = LiteLLMBackend(LiteLLMConfig(model_id="openai/m", api_base=url, api_key_env="KGPROBE_TEST_KILL_KEY",
                                       max_concurrency=%(concurrency)d, max_retries=0))
prompts = [Prompt(f"i{i}", f"question {i}", "t") for i in range(%(prompts)d)]
# the defaults of a litellm model: one batch of 64 prompts, shards of 64 rows
run_generation(backend, model="openai/m", prompts=prompts, params=SamplingParams(n=1, temperature=0),
               store=ResponseStore(root), batch_size=64, shard_size=64)
""" % {"concurrency": CONCURRENCY, "prompts": PROMPTS}


def _run(script: Path, url: str, root: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "KGPROBE_TEST_KILL_KEY": "sk-test"}
    return subprocess.Popen([sys.executable, str(script), url, str(root)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.mark.slow
def test_kill_9_mid_batch_loses_at_most_the_requests_in_flight(tmp_path: Path, fake_server) -> None:
    script, root = tmp_path / "run.py", tmp_path / "store"
    script.write_text(SCRIPT)
    store = ResponseStore(root)
    done = SamplingParams(n=1, temperature=0).sha256()
    with fake_server(delay_s=0.25, lifetime_s=300) as server:
        proc = _run(script, server.url, root)
        try:
            deadline = time.monotonic() + 120
            while len(server.requests) < 12:
                assert proc.poll() is None, proc.stdout.read().decode()
                assert time.monotonic() < deadline, "generation did not start"
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            sent_before_kill = len(server.requests)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        stored = len(store.done_keys("openai/m", done))
        # every request but those in flight (at most max_concurrency) had its answer stored
        assert stored >= sent_before_kill - CONCURRENCY and stored > 0

        again = _run(script, server.url, root)
        out, _ = again.communicate(timeout=120)
        assert again.returncode == 0, out.decode()
    asked = [r.prompt for r in server.requests]
    assert len(set(asked)) == PROMPTS and len(store.done_keys("openai/m", done)) == PROMPTS
    assert len(asked) - PROMPTS <= CONCURRENCY  # only the requests in flight at the kill were sent twice


@pytest.mark.slow
def test_a_run_left_started_by_a_killed_process_is_marked_failed_by_the_next_run(tmp_path: Path,
                                                                                monkeypatch) -> None:
    import dagster as dg
    from dagster._core.storage.dagster_run import DagsterRun

    from pipelines import cli

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = cli.socket.gethostname()
    with dg.DagsterInstance.get() as instance:
        def run(owner: str) -> str:
            record = DagsterRun(job_name="closed_book", status=dg.DagsterRunStatus.STARTED,
                                tags={cli.PROCESS_TAG: owner})
            instance.add_run(record)
            return record.run_id

        killed = run(f"{host}:{dead.pid}:{cli._start_time(dead.pid) or '1'}")
        alive = run(cli._process_id())            # this process: still running
        elsewhere = run(f"other-host:{dead.pid}:1")  # another machine's process: not ours to judge
        assert cli.fail_abandoned_runs(instance) == [killed]
        status = {r: instance.get_run_by_id(r).status for r in (killed, alive, elsewhere)}
        assert status == {killed: dg.DagsterRunStatus.FAILURE, alive: dg.DagsterRunStatus.STARTED,
                          elsewhere: dg.DagsterRunStatus.STARTED}
        messages = [e.message or "" for e in instance.all_logs(killed)]
        assert any("is gone" in m for m in messages)


@pytest.mark.slow
def test_kgprobe_run_tags_its_runs_with_their_process(tmp_path: Path, monkeypatch) -> None:
    import dagster as dg

    from pipelines import cli

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    defs = dg.Definitions(assets=[dg.asset(name="thing")(lambda: 1)],
                          jobs=[dg.define_asset_job("one", selection=["thing"])])
    with dg.DagsterInstance.get() as instance:
        result = cli._execute(defs, "one", instance, "ERROR", tags={"kgprobe/config": "x.yaml"})
        assert result.success
        tags = instance.get_run_by_id(result.run_id).tags
        owner = tags[cli.PROCESS_TAG]
        assert tags["kgprobe/config"] == "x.yaml"  # the run's own tags are kept beside the process tag
    assert owner == cli._process_id() and owner.split(":")[1] == str(os.getpid())
