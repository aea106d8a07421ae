"""Two runs of one partition at once share its prompts (a file lock per prompt bucket in the response store): each
generates the prompts the other is not generating and reuses what the other stored, so each request is sent, and
paid for, once. Runs of other partitions of the same model are not held up."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from kgprobe.generation import Completion, Prompt, SamplingParams, run_generation
from kgprobe.generation.store import ResponseStore


class Slow:
    name = "slow"

    def __init__(self, sent: list[str], busy: list[tuple[float, float]]) -> None:
        self.sent, self.busy = sent, busy

    def generate(self, prompts, params):
        start = time.monotonic()
        time.sleep(0.4)
        self.sent.extend(p.text for p in prompts)
        self.busy.append((start, time.monotonic()))
        return [[Completion(text="Yes.", finish_reason="stop", tokens_in=1, tokens_out=1, latency_s=0.4)] * params.n
                for p in prompts]

    def close(self) -> None:
        pass


def _runs(store: ResponseStore, prompt_sets: list[list[Prompt]]) -> tuple[list[str], list[tuple[float, float]], list]:
    sent: list[str] = []
    busy: list[tuple[float, float]] = []
    summaries: list = []
    threads = [threading.Thread(target=lambda ps=ps: summaries.append(run_generation(
        Slow(sent, busy), model="org/m:1", prompts=ps, params=SamplingParams(n=2), store=store, batch_size=2)))
        for ps in prompt_sets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return sent, busy, summaries


def test_two_runs_of_one_partition_at_once_send_each_request_once(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path)
    prompts = [Prompt(f"i{i}", f"question {i}", "t") for i in range(6)]
    sent, _, summaries = _runs(store, [prompts, list(reversed(prompts))])
    assert sorted(sent) == sorted(p.text for p in prompts)  # once each, not twice
    # the work is split between the runs, not done twice: each ends with all 12 samples, generated or reused
    assert sum(s.generated for s in summaries) == 12 and all(s.generated + s.reused == 12 for s in summaries)
    assert all(r["error"] is None for r in store.rows_for("org/m:1", prompts, SamplingParams(n=2)).to_pylist())


def test_runs_of_different_partitions_of_one_model_go_side_by_side(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path)
    a = [Prompt(f"a{i}", f"question a{i}", "t") for i in range(4)]
    b = [Prompt(f"b{i}", f"question b{i}", "t") for i in range(4)]
    sent, busy, _ = _runs(store, [a, b])
    assert sorted(sent) == sorted(p.text for p in a + b)
    # one run's calls follow each other, so two calls that overlap in time are the two runs working at once
    assert any(s1 < e2 and s2 < e1 for k, (s1, e1) in enumerate(busy) for s2, e2 in busy[k + 1:])


def test_three_runs_whose_prompt_sets_overlap_send_each_request_once(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path)
    prompts = [Prompt(f"i{i}", f"question {i}", "t") for i in range(12)]
    sets = [prompts[0:8], prompts[4:12], list(reversed(prompts[2:10]))]
    sent, _, summaries = _runs(store, sets)
    assert sorted(sent) == sorted(p.text for p in prompts)  # 12 prompts, each once, though 20 were asked twice
    assert sum(s.generated for s in summaries) == 24 and all(s.generated + s.reused == 16 for s in summaries)
