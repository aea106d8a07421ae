"""Two real processes on one response store, against one fake OpenAI-compatible server that counts what it is asked:

* runs whose prompt sets overlap (8 of 10 shared, as two ``limit`` values or two models sharing a judge give) send
  each prompt once between them: a prompt's lock is its own (a bucket of prompts), not the whole prompt set's;
* two runs of one model with ``max_cost_usd: 1.0`` spend at most $1.00 between them: each batch reserves its
  estimated cost in the store's spend ledger before it is sent;
* and the reservation of a run killed with ``kill -9`` does not hold the budget for ever.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import kgprobe
from kgprobe.generation.store import ResponseStore

REPO = Path(kgprobe.__file__).resolve().parents[1]  # the children run the code this test imports
KEY_ENV = "KGPROBE_TEST_CONCURRENT_KEY"
# dollars per token: a request of the fake server (5 prompt words, 3 completion tokens) costs $0.11, and a batch of
# two is estimated at $0.56 (8 prompt tokens by the 4-characters rule and max_tokens=10 out, per prompt)
PRICE_IN, PRICE_OUT = 0.01, 0.02
SCRIPT = """
import json, sys, time
from pathlib import Path
from kgprobe.generation import BudgetExceeded, Prompt, model_specs, run_generation
from kgprobe.generation.backends import LiteLLMBackend
from kgprobe.generation.cost import Budget
from kgprobe.generation.store import ResponseStore

url, root, go, first, last, cap = sys.argv[1:7]
entry = {"name": "judge", "backend": "litellm", "model_id": "openai/judge", "api_base": url, "api_key_env": %(key)r,
         "max_retries": 0, "max_concurrency": 2, "n": 1, "max_tokens": 10,
         "input_cost_per_token": %(price_in)r, "output_cost_per_token": %(price_out)r}
if cap != "none":
    entry["max_cost_usd"] = float(cap)
spec = model_specs([entry])[0]
store = ResponseStore(root)
prompts = [Prompt(f"i{i}", f"question number {i} about things", "t") for i in range(int(first), int(last))]
Path(go + "." + first).touch()  # ready: litellm imported
deadline = time.monotonic() + 120
while not Path(go).exists() and time.monotonic() < deadline:
    time.sleep(0.005)
backend = LiteLLMBackend(spec.config)
try:
    summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params,
                             store=store, batch_size=2, budget=Budget.for_model(spec, store))
    result = {"generated": summary.generated, "reused": summary.reused}
except BudgetExceeded as exc:
    result = {"stopped": str(exc)}
finally:
    backend.close()  # the backend's HTTP client, as a run's resource teardown closes it
print(json.dumps(result))
""" % {"key": KEY_ENV, "price_in": PRICE_IN, "price_out": PRICE_OUT}


def _two_runs(tmp_path: Path, server, ranges: list[tuple[int, int]], cap: str) -> list[dict]:
    """Run one child per prompt range at the same moment (each waits, litellm imported, for a go file); returns
    what each printed."""
    script, root, go = tmp_path / "run.py", tmp_path / "store", tmp_path / "go"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(REPO), KEY_ENV: "sk-test"}
    children = [subprocess.Popen([sys.executable, str(script), server.url, str(root), str(go), str(a), str(b), cap],
                                 cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                for a, b in ranges]
    try:
        deadline = time.monotonic() + 120
        while not all(Path(f"{go}.{a}").exists() for a, _ in ranges):
            assert all(c.poll() is None for c in children), [c.stdout.read().decode() for c in children]
            assert time.monotonic() < deadline, "the children did not start"
            time.sleep(0.02)
        go.touch()
        outputs = [c.communicate(timeout=180)[0].decode() for c in children]
    finally:
        for c in children:
            if c.poll() is None:
                c.kill()
                c.wait()
    assert all(c.returncode == 0 for c in children), outputs
    return [json.loads(next(line for line in reversed(out.strip().splitlines()) if line.startswith("{")))
            for out in outputs]


@pytest.mark.slow
def test_runs_whose_prompt_sets_overlap_send_each_prompt_once(tmp_path: Path, fake_server) -> None:
    with fake_server(delay_s=0.2, lifetime_s=300) as server:
        results = _two_runs(tmp_path, server, [(0, 10), (2, 12)], "none")
        asked = Counter(r.prompt for r in server.requests)
    assert len(asked) == 12 and set(asked.values()) == {1}, asked  # 8 shared prompts, none sent twice
    assert sum(r["generated"] for r in results) == 12
    assert all(r["generated"] + r["reused"] == 10 for r in results)
    stored = ResponseStore(tmp_path / "store").latest("judge").to_pylist()
    assert len(stored) == 12 and all(r["error"] is None for r in stored)


@pytest.mark.slow
def test_two_runs_with_one_budget_spend_at_most_the_budget_between_them(tmp_path: Path, fake_server) -> None:
    with fake_server(delay_s=0.2, lifetime_s=300) as server:
        results = _two_runs(tmp_path, server, [(0, 20), (100, 120)], "1.0")  # disjoint: $2.20 if unbounded
        billed = [len(r.prompt.split()) * PRICE_IN + 3 * PRICE_OUT for r in server.requests if r.action == "ok"]
    assert all("stopped before passing max_cost_usd of model 'judge' ($1.0000)" in r["stopped"] for r in results)
    spent = ResponseStore(tmp_path / "store").spent("judge")
    assert spent == pytest.approx(sum(billed))  # what was recorded is what the server billed
    # within the cap (each batch costs less than its $0.56 estimate here), and not stopped far before it: a run
    # stops when what is recorded plus one more batch's estimate would pass $1.00
    assert 1.0 - 0.56 < sum(billed) <= 1.0 + 1e-9, billed


HOLDER = """
import sys, time
from kgprobe.generation.ledger import SpendLedger

SpendLedger(sys.argv[1]).reserve([("cap", "model:m", 1.0)], 0.9, spent=lambda scope: 0.0)
print("held", flush=True)
time.sleep(120)
"""


def test_a_killed_run_s_reservation_is_dropped(tmp_path: Path) -> None:
    from kgprobe.generation.ledger import SpendLedger

    ledger = SpendLedger(tmp_path / "ledger")
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(ledger.folder)], cwd=REPO,
                             env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline().strip() == b"held"
        marks = {p.name for p in (ledger.folder / "owners").iterdir()}
        assert ledger.reserved() == pytest.approx(0.9)  # a live run's reservation counts
        child.kill()  # kill -9: no chance to release it
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert ledger.reserved() == 0.0  # its owner mark is no longer held: dropped
    ticket = ledger.reserve([("cap", "model:m", 1.0)], 0.9, spent=lambda scope: 0.0)
    assert ticket.id is not None and ticket.over is None
    assert len(marks) == 1 and not marks & {p.name for p in (ledger.folder / "owners").iterdir()}  # swept too
