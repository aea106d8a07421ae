"""A backfill over model x perturbation through the daemon, several runs at once: the runs really overlap, every
partition succeeds, no DuckDB lock error reaches the event log, the runs of a GPU model (tagged ``kgprobe/gpu``,
limit 1 in the run queue) never overlap one another, and the leaderboard equals the one a serial ``kgprobe run`` of
the same config writes. Once on the SQLite instance of kgprobe's ``pipelines/dagster.yaml``, once on the PostgreSQL
instance of ``deploy/postgres/dagster.yaml`` against a real server.

The machinery (daemon, ``dagster job backfill``, reading runs back) is ``benchmarks/backfill.py``, which also times
the same backfill at 1 and at 4 concurrent runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


sys.path.insert(0, str(REPO / "benchmarks"))  # the daemon and backfill machinery the benchmark times
import backfill as bf


def _small(cfg: dict) -> None:
    # two reference models closed book, and grounded at two levels (none, RS-0.5): 2 + 4 partitions
    bf.small_project(cfg, methods=("RS",), levels=(0.5,), grounded_models=("oracle", "random"))
    cfg["models"] = [m for m in cfg["models"] if m["name"] in ("oracle", "random")]
    # two suites (KG-FPQ closed book and grounded, ERBench closed book) keep the runs short
    cfg["suites"] = {k: v for k, v in cfg["suites"].items() if k in ("fpq", "erbench")}


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory):
    """The small project run serially by ``kgprobe run`` (its own DAGSTER_HOME): yields (config, warehouse folder,
    leaderboard tables)."""
    root = tmp_path_factory.mktemp("serial")
    with bf.sample_config(root / "warehouse", _small) as config:
        env = {**os.environ, "DAGSTER_HOME": str(root / "home")}
        env.pop("KGPROBE_WAREHOUSE", None)
        done = subprocess.run([str(BIN / "kgprobe"), "run", "--config", str(config), "--log-level", "WARNING"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        yield config, root / "warehouse", bf.leaderboard(root / "warehouse" / "kgprobe.duckdb")


#: The model whose runs are tagged as GPU runs for the test (``KGPROBE_GPU_MODELS``): the reference ``random`` needs
#: no GPU, but its three runs must still go one at a time while the ``oracle``'s run beside them.
GPU_MODEL = "random"


def _backfill_and_publish(config: Path, prepared: Path, root: Path, home: Path, env: dict[str, str] | None = None):
    """The serial run's prepared warehouse without its answers and scores, a backfill of ``closed_book`` and
    ``grounded`` through the daemon on the instance at ``home`` (``random`` tagged as a GPU model), then ``publish``
    in process."""
    warehouse = root / "warehouse"
    bf.without_responses(prepared, warehouse)
    env = {**(env or {}), "KGPROBE_WAREHOUSE": str(warehouse / "kgprobe.duckdb"), "KGPROBE_GPU_MODELS": GPU_MODEL}
    done = bf.daemon_backfill(config, home, env=env, timeout_s=420, log=root / "daemon.log")
    bf.run_in_process(config, home, ["publish"], env=env)
    return done, warehouse


def _check(done, serial_board: dict, warehouse: Path) -> None:
    runs = {(r.job, r.partition): r.status for r in done.runs}
    assert len(runs) == 6 and set(runs.values()) == {"SUCCESS"}, runs
    assert done.lock_errors == []
    # the model jobs keep the in-process executor: one process (one model load) per run
    assert done.in_process_runs == {r.run_id for r in done.runs}
    # only the GPU model's partitions carry the tag, and the run queue starts one of them at a time
    assert {(r.job, r.partition) for r in done.gpu_runs} == {
        ("closed_book", GPU_MODEL), ("grounded", f"{GPU_MODEL}|none"), ("grounded", f"{GPU_MODEL}|RS-0.5")}
    assert done.overlapping_gpu_runs() == []
    # no blanket limit: the other runs go beside them (max_concurrent_runs 4)
    assert done.max_parallel_runs > 1, [(r.job, r.partition, r.start, r.end) for r in done.runs]
    board = bf.leaderboard(warehouse / "kgprobe.duckdb")
    assert set(board) == set(serial_board) and "metrics" in board
    for table, rows in serial_board.items():
        assert board[table] == rows, f"leaderboard.{table} differs from the serial run's"


@pytest.mark.slow
def test_backfill_with_four_concurrent_runs_matches_the_serial_run(serial, tmp_path: Path) -> None:
    config, prepared, serial_board = serial
    home = bf.dagster_home(tmp_path / "home")  # kgprobe's pipelines/dagster.yaml: max_concurrent_runs 4
    done, warehouse = _backfill_and_publish(config, prepared, tmp_path, home)
    _check(done, serial_board, warehouse)


@pytest.mark.slow
def test_backfill_on_the_postgres_instance_matches_the_serial_run(serial, postgres_uri, tmp_path: Path) -> None:
    import psycopg2

    database = "kgprobe_backfill"
    conn = psycopg2.connect(postgres_uri)
    conn.autocommit = True  # CREATE DATABASE runs outside a transaction
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {database}")
        cur.execute(f"CREATE DATABASE {database}")
    conn.close()
    host_port = postgres_uri.split("@", 1)[1].split("/", 1)[0]
    env = {"DAGSTER_PG_USERNAME": "postgres", "DAGSTER_PG_PASSWORD": "unused-under-trust",
           "DAGSTER_PG_HOST": host_port.split(":")[0], "DAGSTER_PG_PORT": host_port.split(":")[1],
           "DAGSTER_PG_DB": database}
    config, prepared, serial_board = serial
    home = bf.dagster_home(tmp_path / "home", instance_yaml=REPO / "deploy" / "postgres" / "dagster.yaml")
    done, warehouse = _backfill_and_publish(config, prepared, tmp_path, home, env)
    _check(done, serial_board, warehouse)
    # the runs live in PostgreSQL, not in files under DAGSTER_HOME
    assert not list(home.glob("history/runs.db")) and not list(home.glob("storage/*.db"))
    with psycopg2.connect(postgres_uri.rsplit("/", 1)[0] + f"/{database}") as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM runs WHERE pipeline_name IN ('closed_book', 'grounded')")
        assert cur.fetchone()[0] == 6
    conn.close()


def _tags(defs, job: str, key: str) -> dict:
    return defs.resolve_job_def(job).partitioned_config.get_tags_for_partition_key(key) \
        if defs.resolve_job_def(job).partitioned_config else {}


def test_only_gpu_models_runs_carry_the_gpu_tag_and_no_step_holds_a_pool(project_config, monkeypatch) -> None:
    import dagster as dg

    from pipelines.definitions import build_definitions
    from pipelines.jobs import GPU_MODELS_ENV, GPU_TAG

    monkeypatch.setenv(GPU_MODELS_ENV, GPU_MODEL)
    defs = build_definitions(str(project_config(lambda cfg: cfg["scoring"].update(judges=[{"model": "oracle"}]))))
    for job in ("closed_book", "generate_closed", "score_closed"):
        assert _tags(defs, job, GPU_MODEL)[GPU_TAG] == "true"
        assert GPU_TAG not in _tags(defs, job, "oracle")
    assert _tags(defs, "grounded", f"{GPU_MODEL}|none")[GPU_TAG] == "true"
    assert GPU_TAG not in _tags(defs, "grounded", "oracle|none")
    # the GPU limit is the run tag alone: a pool on a step would hold every model's runs, GPU or not
    pools = {a.op.pool for a in defs.assets if isinstance(a, dg.AssetsDefinition) and a.is_executable}
    assert pools == {None}


def test_a_judge_on_the_gpu_tags_every_run_that_scores(project_config, monkeypatch) -> None:
    from pipelines.definitions import build_definitions
    from pipelines.jobs import GPU_MODELS_ENV, GPU_TAG

    monkeypatch.setenv(GPU_MODELS_ENV, GPU_MODEL)
    defs = build_definitions(str(project_config(
        lambda cfg: cfg["scoring"].update(judges=[{"model": "oracle"}, {"model": GPU_MODEL}]))))
    assert _tags(defs, "closed_book", "oracle")[GPU_TAG] == "true"  # oracle's answers are judged by random
    assert _tags(defs, "score_closed", "oracle")[GPU_TAG] == "true"
    assert GPU_TAG not in _tags(defs, "generate_closed", "oracle")  # answering alone needs no GPU


@pytest.mark.parametrize(("backend", "has_gpu", "expected"), [
    ({"backend": "vllm", "model_id": "Qwen/Qwen2.5-7B-Instruct"}, False, True),
    ({"backend": "transformers", "model_id": "smollm2-135m-instruct", "device": "cuda"}, False, True),
    ({"backend": "transformers", "model_id": "smollm2-135m-instruct", "device": "auto"}, True, True),
    ({"backend": "transformers", "model_id": "smollm2-135m-instruct", "device": "auto"}, False, False),
    ({"backend": "transformers", "model_id": "smollm2-135m-instruct", "device": "cpu"}, True, False),
    ({"backend": "reference", "kind": "oracle"}, True, False),
])
def test_which_models_count_as_gpu_models(project_config, backend: dict, has_gpu: bool, expected: bool) -> None:
    from kgprobe.config import load_config
    from pipelines.definitions import _gpu_models

    cfg = load_config(project_config(lambda c: c["models"].append({"name": "m", **backend})))
    assert ("m" in _gpu_models(cfg, {}, has_gpu=has_gpu)) is expected
    assert _gpu_models(cfg, {"KGPROBE_GPU_MODELS": "oracle, m"}, has_gpu=has_gpu) >= {"oracle", "m"}
    with pytest.raises(ValueError, match="KGPROBE_GPU_MODELS: nope not among the configured models"):
        _gpu_models(cfg, {"KGPROBE_GPU_MODELS": "nope"})


def test_overlap_of_runs_is_counted_from_their_times() -> None:
    runs = [bf.RunInfo("a", "closed_book", "random", "SUCCESS", 0.0, 10.0, gpu=True),
            bf.RunInfo("b", "grounded", "random|none", "SUCCESS", 10.0, 20.0, gpu=True),  # back to back: not at once
            bf.RunInfo("c", "closed_book", "oracle", "SUCCESS", 1.0, 15.0),
            bf.RunInfo("d", "grounded", "oracle|none", "SUCCESS", 2.0, 3.0)]
    done = bf.Backfill(30.0, runs)
    assert done.max_parallel_runs == 3 and done.overlapping_gpu_runs() == []
    done.runs.append(bf.RunInfo("e", "grounded", "random|RS-0.5", "SUCCESS", 19.0, 25.0, gpu=True))
    assert [(a.run_id, b.run_id) for a, b in done.overlapping_gpu_runs()] == [("b", "e")]
