"""The response store: atomic shards, one logical row per key, latest success wins, failures stay retryable."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import pyarrow.parquet as pq
import pytest

from kgprobe.generation import Prompt, SamplingParams
from kgprobe.generation.store import MISSING_ERROR, ROW_SCHEMA, STORE_SCHEMA, ResponseStore, response_id

PARAMS = SamplingParams(n=2)
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def row(prompt: str, index: int, *, text: str | None = "answer", error: str | None = None, model: str = "m",
        at: int = 0, params: SamplingParams = PARAMS, run_id: str = "r") -> dict:
    p = Prompt("x", prompt, "t")
    return {"model": model, "backend": "reference", "prompt_sha256": p.sha256(), "prompt": prompt,
            "sampling_params": params.to_json(), "params_sha256": params.sha256(), "sample_index": index,
            "text": None if error else text, "finish_reason": None if error else "stop", "tokens_in": 3,
            "tokens_out": None if error else 2, "latency_s": 0.1, "cost": None, "error": error, "retries": 0,
            "run_id": run_id, "created_at": T0 + timedelta(seconds=at)}


def sha(text: str) -> str:
    return Prompt("x", text, "t").sha256()


def test_shard_layout_and_schema(tmp_path):
    store = ResponseStore(tmp_path)
    path = store.write_shard("org/Model 7B", [row("q1", 0, model="org/Model 7B")])
    assert path.parent == tmp_path / "model=org%2FModel%207B"  # escaped: "org_Model 7B" gets another folder
    assert path.name.startswith("shard-") and path.suffix == ".parquet"
    table = pq.read_table(path)
    assert table.schema.equals(STORE_SCHEMA)  # all-null columns (cost) keep their types
    assert table.column("model").to_pylist() == ["org/Model 7B"]
    assert store.models() == ["org/Model 7B"]
    assert store.write_shard("m", []) is None
    with pytest.raises(ValueError, match="belong to model"):
        store.write_shard("m", [row("q1", 0, model="other")])


def test_a_failed_write_leaves_no_shard_and_no_temporary_file(tmp_path, monkeypatch):
    store = ResponseStore(tmp_path)
    store.write_shard("m", [row("q1", 0)])

    def killed(src, dst):
        raise KeyboardInterrupt  # the process dies between writing the file and renaming it

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        store.write_shard("m", [row("q2", 0)])
    monkeypatch.undo()
    assert len(store.shards("m")) == 1
    assert sorted(p.name for p in store.model_dir("m").iterdir()) == [store.shards("m")[0].name]
    assert store.done_keys("m", PARAMS.sha256()) == {(sha("q1"), 0)}


def test_readers_ignore_unfinished_temporary_files(tmp_path):
    store = ResponseStore(tmp_path)
    store.write_shard("m", [row("q1", 0)])
    # what a SIGKILL during pq.write_table leaves behind: a truncated hidden file
    (store.model_dir("m") / ".shard-20260101T000000000000-dead.parquet.tmp").write_bytes(b"PAR1\x00\x01")
    assert store.done_keys("m", PARAMS.sha256()) == {(sha("q1"), 0)}
    assert store.latest("m").num_rows == 1


@pytest.mark.parametrize("history, expected_text, expected_error", [
    # (text, error, seconds) in write order, each in its own shard
    ([(None, "HTTP 500", 0), ("late success", None, 5)], "late success", None),
    ([("early success", None, 0), (None, "HTTP 429", 5)], "early success", None),  # a later failure never wins
    ([("first", None, 0), ("second", None, 5)], "second", None),
    ([(None, "first error", 0), (None, "second error", 5)], None, "second error"),
])
def test_latest_success_wins(tmp_path, history, expected_text, expected_error):
    store = ResponseStore(tmp_path)
    for text, error, at in history:
        store.write_shard("m", [row("q1", 0, text=text, error=error, at=at)])
    latest = store.latest("m").to_pylist()
    assert len(latest) == 1
    assert (latest[0]["text"], latest[0]["error"]) == (expected_text, expected_error)
    done = store.done_keys("m", PARAMS.sha256())
    assert done == ({(sha("q1"), 0)} if expected_error is None else set())


def test_keys_are_unique_per_model_prompt_params_and_sample(tmp_path):
    store = ResponseStore(tmp_path)
    other = SamplingParams(n=2, temperature=1.0)
    store.write_shard("m", [row("q1", 0), row("q1", 1), row("q2", 0)])
    store.write_shard("m", [row("q1", 0, text="again", at=1), row("q1", 0, params=other)])
    store.write_shard("n", [row("q1", 0, model="n")])
    latest = store.latest("m")
    keys = list(zip(*(latest.column(c).to_pylist() for c in ("prompt_sha256", "params_sha256", "sample_index"))))
    assert len(keys) == len(set(keys)) == 4
    assert store.latest("m", PARAMS.sha256()).num_rows == 3
    assert store.done_keys("m", other.sha256()) == {(sha("q1"), 0)}
    assert store.done_keys("n", PARAMS.sha256()) == {(sha("q1"), 0)}
    assert store.done_keys("absent", PARAMS.sha256()) == set()



def test_done_keys_of_the_shards_that_appeared_since_and_of_a_shard_gone_meanwhile(tmp_path):
    store = ResponseStore(tmp_path)
    first = store.write_shard("m", [row("q1", 0)])
    second = store.write_shard("m", [row("q2", 0), row("q2", 1, error="HTTP 503")])
    assert store.done_keys("m", PARAMS.sha256(), only=[second]) == {(sha("q2"), 0)}
    first.unlink()  # folded away by a compaction after it was listed: its rows are in a shard not asked for
    with pytest.raises(FileNotFoundError):
        store.done_keys("m", PARAMS.sha256(), only=[first, second])

def test_rows_for_gives_one_row_per_item_and_sample_in_order(tmp_path):
    store = ResponseStore(tmp_path)
    store.write_shard("m", [row("q1", 0, text="a0"), row("q1", 1, text="a1"), row("q2", 0, error="boom")])
    prompts = [Prompt("i2", "q2", "tpl-b"), Prompt("i1", "q1", "tpl-a"), Prompt("i1bis", "q1", "tpl-c")]
    table = store.rows_for("m", prompts, PARAMS)
    assert table.schema.equals(ROW_SCHEMA)
    got = [(r["item_id"], r["prompt_template_id"], r["sample_index"], r["text"], r["error"]) for r in table.to_pylist()]
    assert got == [
        ("i2", "tpl-b", 0, None, "boom"),
        ("i2", "tpl-b", 1, None, MISSING_ERROR),
        ("i1", "tpl-a", 0, "a0", None),
        ("i1", "tpl-a", 1, "a1", None),
        ("i1bis", "tpl-c", 0, "a0", None),
        ("i1bis", "tpl-c", 1, "a1", None),
    ]
    missing = table.to_pylist()[1]
    assert (missing["prompt"], missing["prompt_sha256"], missing["params_sha256"]) == ("q2", sha("q2"), PARAMS.sha256())
    # the SQL-made ids equal the Python function's; items sharing a prompt share their responses' ids
    ids = table.column("response_id").to_pylist()
    assert ids == [response_id("m", r["prompt_sha256"], r["params_sha256"], r["sample_index"]) for r in table.to_pylist()]
    assert ids[2:4] == ids[4:6] and len(set(ids[:4])) == 4


def test_response_id_changes_with_every_part_of_the_key():
    base = response_id("m", sha("q1"), PARAMS.sha256(), 0)
    assert len(base) == 16 and int(base, 16) >= 0
    assert len({base, response_id("n", sha("q1"), PARAMS.sha256(), 0), response_id("m", sha("q2"), PARAMS.sha256(), 0),
                response_id("m", sha("q1"), SamplingParams(n=3).sha256(), 0), response_id("m", sha("q1"), PARAMS.sha256(), 1)}) == 5


def test_compact_keeps_the_logical_view_in_one_shard(tmp_path):
    store = ResponseStore(tmp_path)
    store.write_shard("m", [row("q1", 0, error="boom"), row("q2", 0)])
    store.write_shard("m", [row("q1", 0, text="fixed", at=3)])
    store.write_shard("m", [row("q3", 1, error="still failing", at=4)])
    before = sorted(store.latest("m").to_pylist(), key=lambda r: r["prompt_sha256"])
    assert store.compact("m") == 3
    assert len(store.shards("m")) == 1
    after = sorted(store.latest("m").to_pylist(), key=lambda r: r["prompt_sha256"])
    assert after == before
    assert pq.read_table(store.shards("m")[0]).num_rows == 3  # the superseded failure is gone
    assert store.compact("m") == 0


def test_rows_for_on_an_empty_store_marks_every_sample_missing(tmp_path):
    table = ResponseStore(tmp_path).rows_for("m", [Prompt("i1", "q1", "t"), Prompt("i2", "q2", "t")], PARAMS)
    assert table.schema.equals(ROW_SCHEMA)
    assert [(r["item_id"], r["sample_index"], r["error"], r["text"]) for r in table.to_pylist()] == [
        ("i1", 0, MISSING_ERROR, None), ("i1", 1, MISSING_ERROR, None),
        ("i2", 0, MISSING_ERROR, None), ("i2", 1, MISSING_ERROR, None)]
    assert ResponseStore(tmp_path).rows_for("m", [], PARAMS).num_rows == 0


def test_a_damaged_shard_is_set_aside_with_a_warning_and_only_its_answers_are_made_again(tmp_path):
    from kgprobe.generation import make_backend, model_specs, run_generation

    spec = model_specs([{"name": "oracle", "backend": "reference", "kind": "oracle", "n": 1}])[0]
    prompts = [Prompt(f"i{k}", f"question {k}", "t", gold="yes", answer_kind="yn") for k in range(10)]
    store = ResponseStore(tmp_path)
    with make_backend(spec) as backend:
        run_generation(backend, model="oracle", prompts=prompts, params=spec.params, store=store, shard_size=3)
    shards = store.shards("oracle")
    assert len(shards) == 4
    lost = pq.read_table(shards[1]).num_rows
    data = shards[1].read_bytes()
    shards[1].write_bytes(data[: len(data) // 2])  # cut short, as a crash of the disk or a copy would leave it
    with pytest.warns(RuntimeWarning, match=f"shard {shards[1]} is damaged.*generated again"):
        assert len(store.done_keys("oracle", spec.params.sha256())) == 10 - lost
    assert not shards[1].exists() and shards[1].with_name(f"damaged-{shards[1].name}").exists()
    with make_backend(spec) as backend:
        summary = run_generation(backend, model="oracle", prompts=prompts, params=spec.params, store=store)
    assert (summary.generated, summary.reused) == (lost, 10 - lost)
    # a run that meets a damaged shard first says so in its log
    shards = store.shards("oracle")
    shards[0].write_bytes(b"not parquet")
    said = []
    with make_backend(spec) as backend:
        run_generation(backend, model="oracle", prompts=prompts, params=spec.params, store=store, log=said.append)
    assert any(f"damaged response shard {shards[0].name} set aside" in line for line in said)
    assert [r["text"] for r in store.rows_for("oracle", prompts, spec.params).to_pylist()] == ["Yes."] * 10


def test_a_raw_prompt_keys_apart_from_the_same_text_in_a_chat_template() -> None:
    from kgprobe.generation.records import sha256_text

    chat, raw = Prompt("x", "Hello", "t"), Prompt("x", "Hello", "t", raw=True)
    assert chat.sha256() == sha256_text("Hello")  # keys stored before raw prompts existed stay valid
    assert raw.sha256() != chat.sha256() and raw.sha256() == Prompt("y", "Hello", "u", raw=True).sha256()
    assert raw.messages() == chat.messages()


def test_logprobs_are_stored_and_shards_written_before_them_still_read(tmp_path):
    import pyarrow as pa

    store = ResponseStore(tmp_path)
    old_schema = pa.schema([f for f in STORE_SCHEMA if f.name != "logprobs"])
    folder = store.model_dir("m")
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([row("q1", 0)], schema=old_schema), folder / "shard-old.parquet")
    prompts = [Prompt("a", "q1", "t"), Prompt("b", "q2", "t")]
    # only shards without the column: it reads as null rather than failing the query
    old = store.rows_for("m", prompts, PARAMS).to_pylist()
    assert [(r["text"], r["logprobs"]) for r in old if r["sample_index"] == 0] == [("answer", None), (None, None)]
    store.write_shard("m", [{**row("q2", 0), "logprobs": '[["4", [["4", -0.1], ["5", -2.3]]]]'}])
    got = store.rows_for("m", prompts, PARAMS).to_pylist()
    assert [(r["item_id"], r["text"], r["logprobs"]) for r in got if r["sample_index"] == 0] == [
        ("a", "answer", None), ("b", "answer", '[["4", [["4", -0.1], ["5", -2.3]]]]')]
    assert store.latest("m").schema.equals(STORE_SCHEMA)


def test_a_process_reads_each_shard_once_and_reads_a_replaced_file_again(tmp_path, monkeypatch):
    from kgprobe.generation import store as store_module

    reads = []
    real = store_module._read_shard
    monkeypatch.setattr(store_module, "_read_shard", lambda path: reads.append(path.name) or real(path))
    store = ResponseStore(tmp_path)
    first = store.write_shard("m", [row("q1", 0), row("q1", 1)])
    assert len(store.done_keys("m", PARAMS.sha256())) == 2
    second = store.write_shard("m", [row("q2", 0, at=5)])
    assert len(store.done_keys("m", PARAMS.sha256())) == 3
    assert store.rows_for("m", [Prompt("a", "q1", "t"), Prompt("b", "q2", "t")], PARAMS).num_rows == 4
    assert reads == [first.name, second.name]  # the first shard was not read again for the second query
    # the same path with other content (a copy from a backup, say): read again, and its rows are the new ones
    import pyarrow as pa

    table = pq.read_table(second)
    pq.write_table(table.set_column(table.schema.get_field_index("text"), "text", pa.array(["replaced"])), second)
    got = {r["prompt"]: r["text"] for r in store.latest("m").to_pylist()}
    assert got == {"q1": "answer", "q2": "replaced"} and reads[-1] == second.name


def test_the_shard_cache_stays_within_its_byte_limit(tmp_path, monkeypatch):
    from kgprobe.generation import store as store_module

    store = ResponseStore(tmp_path)
    for k in range(6):
        store.write_shard("m", [row(f"q{k}-{i}", 0, text="x" * 2000) for i in range(20)])
    monkeypatch.setattr(store_module, "CACHE_BYTES", 100_000)
    monkeypatch.setattr(store_module, "_CACHE", store_module.OrderedDict())
    monkeypatch.setattr(store_module, "_CACHE_BYTES", [0])
    monkeypatch.setattr(store_module, "_COMBINED", store_module.OrderedDict())
    assert len(store.done_keys("m", PARAMS.sha256())) == 120  # every row, whatever the cache keeps
    assert 0 < store_module._CACHE_BYTES[0] <= 100_000 and len(store_module._CACHE) < 6
    assert store_module._CACHE_BYTES[0] == sum(t.nbytes for t in store_module._CACHE.values())
