"""``kgprobe run --job erbench_questions`` on a fresh warehouse: the job loads what the questions read (the KG when
the project has one, the relational database), and a purely relational project needs no ``kgs:`` entry."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest
import yaml

from kgprobe.config import load_config
from kgprobe.errors import ConfigError
from pipelines.definitions import build_definitions

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "sample.yaml"


def _config(tmp_path: Path, *, with_kg: bool) -> Path:
    sample = yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))
    erbench = {**sample["suites"]["erbench"], "db": str(REPO / "examples" / sample["suites"]["erbench"]["db"]),
               "limit_per_fd": 5, "prefer_kg": False}
    cfg = {"name": "relational", "warehouse": str(tmp_path / "warehouse" / "kgprobe.duckdb"),
           "models": [{"name": "oracle", "backend": "reference", "kind": "oracle"}],
           "suites": {"erbench": erbench}}
    if with_kg:
        cfg["kgs"] = {"sample": {k: (str(REPO / "examples" / v) if isinstance(v, str) else
                                     [str(REPO / "examples" / x) for x in v]) if k != "format" else v
                                 for k, v in sample["kgs"]["sample"].items()}}
    path = tmp_path / "relational.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("with_kg", [True, False])
def test_erbench_questions_runs_on_a_fresh_warehouse(tmp_path: Path, with_kg: bool) -> None:
    path = _config(tmp_path, with_kg=with_kg)
    cfg = load_config(path)
    assert bool(cfg.kgs) is with_kg
    defs = build_definitions(str(path))
    job = defs.resolve_job_def("erbench_questions")
    assert {"kg", "erdb", "erbench_items"} <= {k.to_user_string() for k in job.asset_layer.executable_asset_keys}
    assert job.execute_in_process(instance=dg.DagsterInstance.ephemeral()).success
    items = duckdb.sql(f"SELECT count(*) FROM read_parquet('{tmp_path}/warehouse/erbench_items/**/*.parquet')").fetchone()[0]
    assert items > 0


def test_only_a_relational_project_may_leave_kgs_out(tmp_path: Path) -> None:
    path = _config(tmp_path, with_kg=False)
    assert load_config(path).kgs == {}
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    cfg["suites"]["grapheval"] = {"templates": str(REPO / "examples" / "sample" / "grapheval" / "templates.yaml")}
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"kgs: map at least one KG.*grapheval read\(s\) a KG"):
        load_config(path)
