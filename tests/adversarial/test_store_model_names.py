"""Model names with ``/``, ``:`` and spaces, and two names that a folder name used to spell alike (``a/b``, ``a_b``),
keep their own answers from the response store to the scores: the store never reads a column from a folder name,
each name has a folder of its own, each prompt is asked once per model across two runs, and judges named so work too.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb
import pytest
import yaml

from kgprobe import warehouse as wh
from kgprobe.generation import Prompt, SamplingParams
from kgprobe.generation.store import ResponseStore

SAMPLE = Path(__file__).resolve().parents[2] / "examples"
KEY_ENV = "KGPROBE_TEST_NAMES_KEY"
#: name -> what the fake server's model answers every question with
LITELLM = {"openai/x": "yes", "llama3:8b": "yes", "my model": "yes", "a/b": "no", "a_b": "yes"}
JUDGE = "judge/v:1 x"


def _row(model: str, text: str, prompt: str = "q", cost: float | None = None) -> dict:
    from datetime import datetime, timezone

    return {"model": model, "backend": "litellm", "prompt_sha256": Prompt("i", prompt, "t").sha256(), "prompt": prompt,
            "sampling_params": SamplingParams(n=1).to_json(), "params_sha256": SamplingParams(n=1).sha256(),
            "sample_index": 0, "text": text, "finish_reason": "stop", "tokens_in": 1, "tokens_out": 1,
            "latency_s": 0.1, "cost": cost, "error": None, "retries": 0, "run_id": "r",
            "created_at": datetime.now(timezone.utc)}


@pytest.mark.parametrize("names", [("openai/gpt-4o-mini", "openai_gpt-4o-mini"), ("a/b", "a_b"), ("a b", "a_b"),
                                   ("llama3:8b", "llama3_8b"), ("x%2Fy", "x/y"), ("é", "_")])
def test_names_that_used_to_share_a_folder_keep_their_own_rows(tmp_path: Path, names: tuple[str, str]) -> None:
    store = ResponseStore(tmp_path)
    for name in names:
        store.write_shard(name, [_row(name, f"answer of {name}")])
    assert len({store.model_dir(n) for n in names}) == 2
    params = SamplingParams(n=1)
    for name in names:
        assert store.done_keys(name, params.sha256()) == {(Prompt("i", "q", "t").sha256(), 0)}
        [row] = store.rows_for(name, [Prompt("i", "q", "t")], params).to_pylist()
        assert (row["model"], row["text"], row["error"]) == (name, f"answer of {name}", None)
        assert store.latest(name).column("model").to_pylist() == [name]
    assert store.models() == sorted(names)


def test_rows_an_older_version_wrote_under_a_shared_folder_are_read_by_their_own_name(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path)
    legacy = tmp_path / "model=a_b"  # the old layout: "a/b" and "a_b" both wrote here
    legacy.mkdir()
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kgprobe.generation.store import STORE_SCHEMA

    pq.write_table(pa.Table.from_pylist([_row("a/b", "old a/b", cost=1.0), _row("a_b", "old a_b", cost=2.0)],
                                        schema=STORE_SCHEMA),
                   legacy / "shard-20240101T000000000000-000000000000.parquet")
    params = SamplingParams(n=1)
    assert [r["text"] for r in store.rows_for("a/b", [Prompt("i", "q", "t")], params).to_pylist()] == ["old a/b"]
    assert [r["text"] for r in store.rows_for("a_b", [Prompt("i", "q", "t")], params).to_pylist()] == ["old a_b"]
    assert (store.spent("a/b"), store.spent("a_b"), store.spent(run_id="r")) == (1.0, 2.0, 3.0)


def test_partition_folders_are_escaped_and_read_back_with_their_real_names(tmp_path: Path) -> None:
    import pyarrow as pa

    for name in ("a/b", "a_b", "llama3:8b", "my model"):
        wh.write_partition(tmp_path, "scores", pa.table({"value": [len(name)]}), {"model": name})
    assert sorted(d["model"] for d in wh.partitions(tmp_path, "scores")) == ["a/b", "a_b", "llama3:8b", "my model"]
    assert wh.read_partition(tmp_path, "scores", {"model": "a/b"}).column("value").to_pylist() == [3]
    con = duckdb.connect()
    wh.register_views(con, tmp_path)  # rows without a model column get it from the (unescaped) folder name
    assert sorted(con.execute("SELECT model, value FROM scores").fetchall()) == [
        ("a/b", 3), ("a_b", 3), ("llama3:8b", 9), ("my model", 8)]


def _metrics(root: Path, model: str) -> dict:
    table = wh.read_partition(root, "fpq_scores_metrics", {"model": model})
    return {(m["task"], m["judge"], m["metric"], tuple(sorted(dict(m["breakdown"] or []).items()))):
            (m["n"], None if m["value"] != m["value"] else m["value"]) for m in table.to_pylist()}  # NaN: no items


@pytest.mark.slow
def test_model_and_judge_names_with_slash_colon_and_space_run_end_to_end(tmp_path: Path, monkeypatch, fake_server
                                                                         ) -> None:  # fmt: skip
    import dagster as dg

    from pipelines.definitions import build_definitions

    monkeypatch.setenv(KEY_ENV, "sk-test")
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    root = tmp_path / "warehouse"
    answer = {"yes": "Yes.", "no": "No."}
    with fake_server(answer=lambda prompt, model: answer[model]) as server:
        def entry(name: str, kind: str) -> dict:
            return {"name": name, "backend": "litellm", "model_id": f"openai/{kind}", "api_base": server.url,
                    "api_key_env": KEY_ENV, "max_retries": 0}

        project = {"name": "names", "seed": 0, "warehouse": str(root / "kgprobe.duckdb"), "kgs": cfg["kgs"],
                   "suites": {"fpq": {**cfg["suites"]["fpq"], "n_per_domain": 3, "limit": 2}},
                   "scoring": {"judges": [{"model": JUDGE}]},
                   "models": [*(entry(n, k) for n, k in LITELLM.items()), entry(JUDGE, "yes"),
                              {"name": "always-yes", "backend": "reference", "kind": "always-yes"},
                              {"name": "always-no", "backend": "reference", "kind": "always-no"}]}
        path = SAMPLE / f".test-{tmp_path.name}.yaml"
        path.write_text(yaml.safe_dump(project), encoding="utf-8")
        try:
            defs = build_definitions(str(path))
            with dg.DagsterInstance.ephemeral() as instance:
                for job in ("ingest", "fpq_questions"):
                    assert defs.resolve_job_def(job).execute_in_process(instance=instance).success
                job = defs.resolve_job_def("closed_book")
                sent = []
                for _ in range(2):
                    for name in (*LITELLM, "always-yes", "always-no"):
                        assert job.execute_in_process(instance=instance, partition_key=name).success, name
                    sent.append(len(server.requests))
                # the leaderboard and the report over partitions named so
                assert defs.resolve_job_def("publish").execute_in_process(instance=instance).success
        finally:
            path.unlink()

    # the second run asked nothing: every answer and every verdict was found under its own name
    assert sent[0] == sent[1] > 0
    asked = Counter(r.prompt for r in server.requests)
    # a question is asked once per litellm model (n=3 in one request); a verdict once, whoever gave the answer
    assert set(asked.values()) <= {1, len(LITELLM)} and len(LITELLM) in asked.values()
    store = ResponseStore(root / "response_store")
    assert set(store.models()) == {*LITELLM, JUDGE, "always-yes", "always-no"}
    for name, kind in LITELLM.items():
        rows = store.latest(name).to_pylist()
        assert rows and {r["text"] for r in rows} == {answer[kind]} and {r["model"] for r in rows} == {name}
        # scored exactly as the reference model that gives the same answers (same judge)
        reference = _metrics(root, f"always-{kind}")
        assert _metrics(root, name) == reference, name
    assert any(v[1] == 1.0 for v in _metrics(root, "a_b").values())  # not a run of missing answers
    report = (root / "report" / "report.html").read_text(encoding="utf-8")
    assert all(name in report for name in LITELLM)
    con = duckdb.connect()
    wh.register_views(con, root)
    shown = {m for (m,) in con.execute("SELECT DISTINCT model FROM fpq_responses").fetchall()}
    assert shown == {*LITELLM, "always-yes", "always-no"}
    verdicts = con.execute("SELECT count(*), count(DISTINCT model) FROM response_store WHERE model = ?",
                           [JUDGE]).fetchone()
    assert verdicts[0] > 0 and verdicts[1] == 1
