"""Ctrl-C on ``kgprobe run`` stops it within seconds, and the next ``kgprobe run`` resumes: answers stored before the
interrupt are not asked again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from kgprobe.generation.store import ResponseStore

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples"
KEY_ENV = "KGPROBE_TEST_INTERRUPT_KEY"


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_the_next_run_resumes(tmp_path: Path, fake_server) -> None:
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    env = {**os.environ, KEY_ENV: "sk-test", "DAGSTER_HOME": str(tmp_path / "home")}
    with fake_server(delay_s=0.25, lifetime_s=600) as server:
        project = {"name": "interrupt", "seed": 0, "warehouse": str(tmp_path / "warehouse" / "kgprobe.duckdb"),
                   "kgs": cfg["kgs"], "suites": {"fpq": {**cfg["suites"]["fpq"], "n_per_domain": 4, "limit": 6}},
                   "scoring": {"judges": []}, "generation": {"shard_size": 2},
                   "models": [{"name": "slow", "backend": "litellm", "model_id": "openai/fake-model",
                               "api_base": server.url, "api_key_env": KEY_ENV, "max_concurrency": 1,
                               "batch_size": 2}]}
        path = tmp_path / "project.yaml"
        # relative data paths of the sample resolve against the config's folder: point them at the sample's
        project["kgs"] = {k: {**v, **{f: [str(SAMPLE / p) for p in v[f]] if isinstance(v[f], list) else str(SAMPLE / v[f])
                                      for f in v if f != "format"}} for k, v in cfg["kgs"].items()}
        for f in ("domains", "templates"):
            project["suites"]["fpq"][f] = str(SAMPLE / cfg["suites"]["fpq"][f])
        path.write_text(yaml.safe_dump(project), encoding="utf-8")
        command = [str(Path(sys.executable).parent / "kgprobe"), "run", "--config", str(path), "--job", "closed_book",
                   "--partition", "slow"]
        for job in ("ingest", "fpq_questions"):
            prepare = subprocess.run([*command[:4], "--job", job], env=env, cwd=tmp_path, capture_output=True,
                                     text=True, timeout=300)
            assert prepare.returncode == 0, prepare.stdout[-2000:] + prepare.stderr[-2000:]
        proc = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        deadline = time.monotonic() + 240
        while len(server.requests) < 6 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert len(server.requests) >= 6, "generation never started"
        proc.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        output, _ = proc.communicate(timeout=60)
        stopped_after = time.monotonic() - interrupted
        store = ResponseStore(tmp_path / "warehouse" / "response_store")
        kept = store.latest("slow").num_rows
        asked_before = len(server.requests)
        again = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and stopped_after < 15, output[-3000:]
    assert kept > 0
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    prompts = [r.prompt for r in server.requests]
    assert len(prompts) == len(set(prompts)), "a prompt stored before Ctrl-C was asked again"
    assert len(prompts) > asked_before and store.latest("slow").num_rows == 3 * len(prompts)  # n=3 per request
