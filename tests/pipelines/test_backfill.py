"""A backfill over model x perturbation through the daemon, several runs at once: every partition succeeds, no DuckDB
lock error reaches the event log, the ``gpu`` pool lets one generating run (so one gpu-pool step) go at a time, and
the leaderboard equals the one a serial ``kgprobe run`` of the same config writes. Once on the SQLite instance of
the repository's ``dagster.yaml``, once on the PostgreSQL instance of ``deploy/postgres/dagster.yaml`` against a
real server.

The machinery (daemon, ``dagster job backfill``, reading runs and steps back) is ``benchmarks/backfill.py``, which
also times the same backfill at 1 and at 4 concurrent runs.
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


def _backfill_and_publish(config: Path, prepared: Path, root: Path, home: Path, env: dict[str, str] | None = None):
    """The serial run's prepared warehouse without its answers and scores, a backfill of ``closed_book`` and
    ``grounded`` through the daemon on the instance at ``home``, then ``publish`` in process."""
    warehouse = root / "warehouse"
    bf.without_responses(prepared, warehouse)
    env = {**(env or {}), "KGPROBE_WAREHOUSE": str(warehouse / "kgprobe.duckdb")}
    done = bf.daemon_backfill(config, home, env=env, timeout_s=420, log=root / "daemon.log")
    bf.run_in_process(config, home, ["publish"], env=env)
    return done, warehouse


def _check(done, serial_board: dict, warehouse: Path) -> None:
    runs = {(r.job, r.partition): r.status for r in done.runs}
    assert len(runs) == 6 and set(runs.values()) == {"SUCCESS"}, runs
    assert done.lock_errors == []
    # the model jobs keep the in-process executor: one process (one model load) per run
    assert done.in_process_runs == {r.run_id for r in done.runs}
    # every closed_book / grounded run has gpu-pool steps (answers and scores of each suite): never two at once
    assert len(done.gpu_steps) == 2 * 4 + 4 * 2
    assert done.overlapping_gpu_steps() == []
    # the pool is held per run (granularity: run): with every run in the pool, runs follow one another
    assert done.max_parallel_runs == 1
    board = bf.leaderboard(warehouse / "kgprobe.duckdb")
    assert set(board) == set(serial_board) and "metrics" in board
    for table, rows in serial_board.items():
        assert board[table] == rows, f"leaderboard.{table} differs from the serial run's"


@pytest.mark.slow
def test_backfill_with_four_concurrent_runs_matches_the_serial_run(serial, tmp_path: Path) -> None:
    config, prepared, serial_board = serial
    home = bf.dagster_home(tmp_path / "home")  # the repository's dagster.yaml: max_concurrent_runs 4
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
