"""Standard splits of a benchmark KG: which split files beside a loaded one were left out."""

from __future__ import annotations

from pathlib import Path

import duckdb

from kgprobe.kg.splits import missing_splits, snapshot_sources


def _touch(folder: Path, *names: str) -> list[Path]:
    out = []
    for n in names:
        (folder / n).write_text("a\tr\tb\n", encoding="utf-8")
        out.append(folder / n)
    return out


def test_missing_splits(tmp_path: Path) -> None:
    train, valid, test = _touch(tmp_path, "train.txt", "valid.txt", "test.txt")
    assert missing_splits([train]) == sorted([str(valid.resolve()), str(test.resolve())])
    assert missing_splits([train, valid, test]) == []
    # a prefixed, gzipped train beside plain valid / test (FB15k-237's layout in this form)
    other = tmp_path / "codex"
    other.mkdir()
    m_train, m_valid = _touch(other, "codex-m-train.tsv.gz", "codex-m-valid.tsv")
    assert missing_splits([m_valid]) == [str(m_train.resolve())]
    # a file that is not a split, or a split without siblings, warns about nothing
    assert missing_splits(_touch(tmp_path, "triples.tsv")) == []
    lone = tmp_path / "lone"
    lone.mkdir()
    assert missing_splits(_touch(lone, "train.tsv")) == []


def test_snapshot_sources() -> None:
    con = duckdb.connect()
    assert snapshot_sources(con) == []
    con.execute("CREATE TABLE snapshots (snapshot_id VARCHAR, source VARCHAR)")
    con.execute("""INSERT INTO snapshots VALUES ('s1', '["/a/train.txt", "/a/valid.txt"]'), ('s2', '/b/x.nt')""")
    assert snapshot_sources(con, "s1") == ["/a/train.txt", "/a/valid.txt"]
    assert snapshot_sources(con) == ["/a/train.txt", "/a/valid.txt", "/b/x.nt"]
