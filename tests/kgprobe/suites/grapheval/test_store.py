"""Writing a suite's items (:func:`kgprobe.suites.store.store_items`): a stream of batches is written as the
table it makes would be, groups naming an unreadable id are left out the same way, and a bad stream leaves the
partition as it was."""

from __future__ import annotations

import pyarrow as pa
import pytest

from kgprobe import warehouse as wh
from kgprobe.suites.grapheval.statements import StatementOptions, build_statements
from kgprobe.suites.store import store_items


@pytest.fixture(scope="module")
def stream_and_table(sample_con, tmp_path_factory):
    import kgprobe.suites.grapheval.statements as statements

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(statements, "_ROWS_PER_CHUNK", 20)  # a few positives and their negatives a batch
        stream = build_statements(sample_con, StatementOptions(per_relation=4, negatives=3), snapshot_id="s",
                                  seed=1, stream=True).items
        table = stream.read_all()
        assert table.column("item_id").num_chunks > 3
        yield stream, table


def _with_ids(table: pa.Table, rows: list[int]) -> pa.Table:
    # statements that show an id-like key ("Q42"), as a KG without labels gives: the store leaves their groups out;
    # the new column keeps the table's chunks, so its batches are the stream's
    questions = table.column("question").to_pylist()
    for i in rows:
        questions[i] = f"Q42 {questions[i]}"
    chunks, first = [], 0
    for batch in table.to_batches():
        chunks.append(pa.array(questions[first:first + batch.num_rows]))
        first += batch.num_rows
    return table.set_column(table.schema.get_field_index("question"), "question", pa.chunked_array(chunks))


def test_a_stream_is_written_as_its_table_is(stream_and_table, tmp_path) -> None:
    stream, table = stream_and_table
    assert store_items(tmp_path / "s", "grapheval_items", "grapheval", stream.reader()).rows == table.num_rows
    assert wh.read_partition(tmp_path / "s", "grapheval_items").equals(table.combine_chunks())
    shown = _with_ids(table, [1, 2, table.num_rows - 1])  # a negative of the first group, and the last item
    a = store_items(tmp_path / "a", "grapheval_items", "grapheval", shown, unreadable={"Q42"}, preview=7)
    b = store_items(tmp_path / "b", "grapheval_items", "grapheval", shown.to_reader(), unreadable={"Q42"},
                    preview=7)
    written_a, written_b = (wh.read_partition(tmp_path / x, "grapheval_items") for x in ("a", "b"))
    assert written_b.equals(written_a)
    groups = table.column("group_id").to_pylist()
    dropped = {groups[1], groups[-1]}
    assert len(b.rejected) == sum(g in dropped for g in groups) == table.num_rows - written_b.num_rows > 3
    assert a.rejected == b.rejected and {r["group_id"] for r in b.rejected} == dropped
    assert [r["ids"] for r in b.rejected if r["ids"]] == [["Q42"]] * 3
    assert (b.rows, b.by_format, b.preview) == (a.rows, a.by_format, a.preview)
    assert b.rows == written_b.num_rows and len(b.preview) == 7
    assert b.by_format == {("statement", "true_false_idk"): written_b.num_rows}


def test_a_bad_stream_leaves_the_partition_as_it_was(stream_and_table, tmp_path) -> None:
    stream, table = stream_and_table
    store_items(tmp_path, "grapheval_items", "grapheval", table.slice(0, 8))
    batches = table.to_batches()
    repeated = pa.RecordBatchReader.from_batches(table.schema, [*batches, batches[1]])
    with pytest.raises(ValueError, match=rf"item ids are not unique \({batches[1].num_rows} repeated\)"):
        store_items(tmp_path, "grapheval_items", "grapheval", repeated)
    fmt = table.schema.get_field_index("answer_format")
    odd = batches[2].set_column(fmt, "answer_format", pa.array(["essay"] * batches[2].num_rows))
    with pytest.raises(ValueError, match=r"unknown answer format\(s\) \['essay'\]"):
        store_items(tmp_path, "grapheval_items", "grapheval",
                    pa.RecordBatchReader.from_batches(table.schema, [batches[0], odd]))
    with pytest.raises(ValueError, match="must start with the columns"):
        store_items(tmp_path, "grapheval_items", "grapheval", table.drop_columns(["suite"]).to_reader())
    assert wh.read_partition(tmp_path, "grapheval_items").equals(table.slice(0, 8).combine_chunks())
    assert [p.name for p in tmp_path.iterdir()] == ["grapheval_items"]  # no .tmp folder left behind
    assert [p.name for p in (tmp_path / "grapheval_items").iterdir() if p.name.startswith(".")] == []
