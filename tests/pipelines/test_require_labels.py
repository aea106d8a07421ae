"""``kgs.<kg>.require_labels``: on CoDEx-S (labels for 267 of 2,034 entities) no question shows a raw QID."""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import pytest

from kgprobe import warehouse as wh
from pipelines.definitions import build_definitions


def _project(tmp_path: Path, shared_data: Path, require: bool, stream: bool = False) -> Path:
    d = shared_data / "kg" / "codex"
    name = f"{require}{'-stream' if stream else ''}"
    cfg = tmp_path / f"codex-{name}.yaml"
    cfg.write_text(
        f"warehouse: {tmp_path / f'wh-{name}' / 'kg.duckdb'}\n"
        f"kgs:\n  codex_s:\n    triples: [{d}/codex-s/train.txt]\n"
        f"    entity_labels: {d}/partial_entity_labels_en.tsv\n    relation_labels: {d}/relations/en/relations.json\n"
        f"    entity_types: {d}/types/entity2types.json\n    type_labels: {d}/types/en/types.json\n"
        f"    require_labels: {str(require).lower()}\n"
        "models:\n  - {name: oracle, backend: reference, kind: oracle}\n"
        "suites:\n  grapheval: {kg: codex_s, per_relation: 20, negatives: 1"
        + (", stream_items_above: 0" if stream else "") + "}\n", encoding="utf-8")
    return cfg


@pytest.mark.slow
def test_codex_s_questions_show_no_qids(tmp_path: Path, shared_data: Path) -> None:
    counts = {}
    for require in (False, True):
        cfg = _project(tmp_path, shared_data, require)
        d = build_definitions(str(cfg))
        with dg.DagsterInstance.ephemeral() as instance:
            result = d.resolve_job_def("prepare").execute_in_process(instance=instance)
        assert result.success
        root = tmp_path / f"wh-{require}"
        questions = wh.read_partition(root, "grapheval_items").column("question").to_pylist()
        rejects = wh.read_partition(root, "grapheval_label_rejects").to_pylist()
        raw = [q for q in questions if re.search(r"\bQ[0-9]+\b", q)]
        counts[require] = (len(questions), len(raw), len(rejects))
        meta = {e.asset_key.to_user_string(): e.step_materialization_data.materialization.metadata
                for e in result.get_asset_materialization_events()}["grapheval_items"]
        if require:
            assert raw == [] and questions and rejects
            assert meta["rejected_no_readable_name"].value == len(rejects)
            assert 0.1 < meta["readable_entity_share"].value < 0.2  # 267 of 2,034
            assert all(r["reason"] for r in rejects) and any(r["ids"] for r in rejects)
        else:
            assert raw and rejects == []
    # what require_labels dropped is what showed an id
    assert counts[True][0] + counts[True][2] == counts[False][0]
    # the items as a stream (written a batch at a time, ids dropped batch by batch): the same partitions
    d = build_definitions(str(_project(tmp_path, shared_data, True, stream=True)))
    with dg.DagsterInstance.ephemeral() as instance:
        assert d.resolve_job_def("prepare").execute_in_process(instance=instance).success
    for asset in ("grapheval_items", "grapheval_label_rejects", "grapheval_rejects"):
        assert wh.read_partition(tmp_path / "wh-True-stream", asset).equals(
            wh.read_partition(tmp_path / "wh-True", asset)), asset
