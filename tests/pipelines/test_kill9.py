"""``kill -9`` of a daemon-launched ``closed_book`` run in the middle of generation, then a re-launch: the new run
completes, and no prompt whose answer was stored before the kill is sent again.

The code server that started the run sees its process die (signal 9) and marks the run failed, which takes it out
of the run queue (and gives a GPU run's ``kgprobe/gpu`` tag back), so the re-launched run starts at once. (Were the daemon and its code server killed too, the run
would stay "started" until a person marks it canceled: deploy/README.md.)
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

from kgprobe.generation.store import ResponseStore

REPO = Path(__file__).resolve().parents[2]
KEY_ENV = "KGPROBE_TEST_KILL9_KEY"
_PID = re.compile(r"Executing steps in process \(pid: (\d+)\)")


sys.path.insert(0, str(REPO / "benchmarks"))  # the daemon and backfill machinery the benchmark times
import backfill as bf


def _run(home: Path, run_id: str):
    import dagster as dg

    with bf._environ({"DAGSTER_HOME": str(home)}), dg.DagsterInstance.get() as instance:
        return instance.get_run_by_id(run_id)


def _logs(home: Path, run_id: str) -> list:
    import dagster as dg

    with bf._environ({"DAGSTER_HOME": str(home)}), dg.DagsterInstance.get() as instance:
        return list(instance.all_logs(run_id))


def _worker_pid(home: Path, run_id: str) -> int | None:
    import dagster as dg

    with bf._environ({"DAGSTER_HOME": str(home)}), dg.DagsterInstance.get() as instance:
        for entry in instance.all_logs(run_id):
            found = _PID.search(entry.user_message or "")
            if found:
                return int(found.group(1))
    return None


def _wait(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


@pytest.mark.slow
def test_kill_9_mid_generation_then_relaunch_resumes_without_asking_stored_prompts(tmp_path: Path, fake_server
                                                                                    ) -> None:  # fmt: skip
    def project(cfg: dict) -> None:
        cfg["suites"] = {"fpq": {**cfg["suites"]["fpq"], "n_per_domain": 4, "limit": 3}}
        cfg["scoring"]["judges"] = []
        cfg["generation"] = {"shard_size": 1}  # every answer is stored as soon as it arrives
        cfg["models"] = [{"name": "slow", "backend": "litellm", "model_id": "openai/fake-model", "api_base": "",
                          "api_key_env": KEY_ENV, "max_concurrency": 1, "batch_size": 1}]
        cfg.pop("perturbation", None)

    with fake_server(delay_s=0.3, lifetime_s=600) as server:
        def with_server(cfg: dict) -> None:
            project(cfg)
            cfg["models"][0]["api_base"] = server.url

        with bf.sample_config(tmp_path / "warehouse", with_server) as config:
            env = {KEY_ENV: "sk-test"}
            home = bf.dagster_home(tmp_path / "home")
            bf.run_in_process(config, home, ["ingest", "fpq_questions"], env=env)
            store = ResponseStore(tmp_path / "warehouse" / "response_store")
            with bf.daemon(config, home, env, log=tmp_path / "daemon.log") as full_env:
                bf.submit_backfill("closed_book", full_env, partitions=["slow"])
                [first] = _wait(lambda: bf.runs_of(home, ["closed_book"]), 120, "the run to be created")
                pid = _wait(lambda: _worker_pid(home, first.run_id), 240, "the run's process to start")
                _wait(lambda: len(server.requests) >= 4, 240, "generation to start")
                os.kill(pid, signal.SIGKILL)
                killed_at = len(server.requests)
                time.sleep(1.0)  # an answer the server was sending when the process died is not stored
                stored_at_kill = {p for p in store.latest("slow").column("prompt_sha256").to_pylist()}
                assert killed_at >= 4 and stored_at_kill, "nothing was stored before the kill"

                # the code server that started the run sees its process die and marks the run failed, which takes
                # it out of the run queue; the killed run asks nothing more
                _wait(lambda: _run(home, first.run_id).status.value == "FAILURE", 60, "the killed run to be failed")
                asked_before_relaunch = len(server.requests)
                assert asked_before_relaunch - killed_at <= 1, "the killed run kept asking"
                bf.submit_backfill("closed_book", full_env, partitions=["slow"])
                runs = bf.wait_for_runs(home, ["closed_book"], 2, timeout_s=300)
            statuses = {r.run_id == first.run_id: r.status for r in runs}
            assert statuses == {True: "FAILURE", False: "SUCCESS"}
            failure = [e.message for e in _logs(home, first.run_id) if "signal 9" in (e.message or "")]
            assert failure, "the run's event log does not say it was killed"

    after = server.requests[asked_before_relaunch:]
    prompts = [r.prompt for r in server.requests]
    final = store.latest("slow")
    distinct = set(final.column("prompt_sha256").to_pylist())
    # every answer is stored once; the re-launch asked exactly the prompts that had no stored answer
    assert final.num_rows == 3 * len(distinct) and final.column("error").null_count == final.num_rows
    assert len(after) == len(distinct) - len(stored_at_kill)
    assert len(set(prompts)) == len(distinct)
    # at most the one request in flight at the kill (max_concurrency 1, each answer stored on arrival) went twice
    assert len(prompts) - len(set(prompts)) <= 1
