"""A backfill over model x perturbation through the Dagster daemon: wall time at 1 and at 4 concurrent runs.

    python benchmarks/backfill.py [--runs 1 4] [--config examples/sample.yaml] [--levels 0.5] [--methods RS ER]
                                  [--models oracle random] [--suites fpq erbench] [--gpu-models random]

The project: the sample config reduced to its reference models (no weights), the oracle as the one judge and one
retrieval query per entity type, perturbed at ``--methods`` x ``--levels``. The unpartitioned stages (``prepare``,
``perturb``, ``similarity``) run first, in this process; then, for each ``--runs`` value, a fresh ``DAGSTER_HOME``
with kgprobe's ``pipelines/dagster.yaml`` (``max_concurrent_runs`` set to that value), ``dagster-daemon run``, and
``dagster job backfill --all`` of ``closed_book`` and ``grounded``: the time from the first submission until the
last run ends. Each measurement starts from the same prepared warehouse without stored responses, so every run
generates its answers. Runs of reference models hold no GPU, so up to ``max_concurrent_runs`` of them go at once;
``--gpu-models`` names models whose runs get the ``kgprobe/gpu`` tag anyway (``KGPROBE_GPU_MODELS``), to see the
queue keep those to one at a time beside the others.

The functions here are also what ``tests/pipelines/test_backfill.py`` drives.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: The partitioned jobs a backfill over model x perturbation runs (``closed_book``: model; ``grounded``: both).
BACKFILL_JOBS = ("closed_book", "grounded")
#: How a DuckDB lock conflict reads in an error message.
LOCK_ERROR = re.compile(r"Could not set lock on file|Conflicting lock is held|database is locked", re.IGNORECASE)
_DONE = ("SUCCESS", "FAILURE", "CANCELED")


@dataclass
class RunInfo:
    run_id: str
    job: str
    partition: str | None
    status: str
    start: float | None
    end: float | None
    gpu: bool = False  # the run carries the kgprobe/gpu tag


def _max_overlap(spans: Sequence[tuple[float, float]]) -> int:
    # an end at the same instant as a start counts first: back to back is not at once
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    now = best = 0
    for _, step in edges:
        now += step
        best = max(best, now)
    return best


@dataclass
class Backfill:
    """What a daemon backfill did: its runs (with their GPU tags and times), lock errors, wall time."""

    wall_s: float
    runs: list[RunInfo]
    lock_errors: list[str] = field(default_factory=list)
    in_process_runs: set[str] = field(default_factory=set)  # run ids whose steps ran in the run's own process

    @property
    def max_parallel_runs(self) -> int:
        """The most runs that were in progress at the same moment."""
        return _max_overlap([(r.start, r.end) for r in self.runs if r.start is not None and r.end is not None])

    @property
    def gpu_runs(self) -> list[RunInfo]:
        """The runs tagged ``kgprobe/gpu``, by start time."""
        return sorted((r for r in self.runs if r.gpu), key=lambda r: (r.start is None, r.start or 0.0))

    def overlapping_gpu_runs(self) -> list[tuple[RunInfo, RunInfo]]:
        """Pairs of ``kgprobe/gpu`` runs whose times overlap (the run queue allows one at a time: none expected)."""
        runs = [r for r in self.gpu_runs if r.start is not None and r.end is not None]
        return [(a, b) for a, b in itertools.combinations(runs, 2) if b.start < a.end and a.start < b.end]


def small_project(cfg: dict, *, methods: Sequence[str] = ("RS", "ER"), levels: Sequence[float] = (0.5,),
                  grounded_models: Sequence[str] = ("oracle", "random")) -> None:
    """Reduce a sample-like config in place: reference models, oracle judge, one query per type, a small scorer,
    ``methods`` x ``levels`` perturbations and ``grounded_models`` answering with KG context."""
    cfg["models"] = [m for m in cfg["models"] if m["backend"] == "reference"]
    cfg["scoring"]["judges"] = [{"model": "oracle"}]
    cfg["queries"]["sample"]["per_type"] = 1
    cfg["perturbation"]["methods"] = list(methods)
    cfg["perturbation"]["levels"] = list(levels)
    cfg["perturbation"]["scorer"]["epochs"] = 10
    cfg["generation"]["grounded_models"] = list(grounded_models)


@contextlib.contextmanager
def sample_config(warehouse: Path, edit: Callable[[dict], None], base: Path = REPO / "examples" / "sample.yaml"
                  ) -> Iterator[Path]:  # fmt: skip
    """``base`` with ``edit`` applied and its warehouse under ``warehouse``, written beside ``base`` (so its relative
    input paths resolve) under a hidden name that is removed on exit."""
    cfg = yaml.safe_load(base.read_text(encoding="utf-8"))
    cfg["warehouse"] = str(Path(warehouse) / "kgprobe.duckdb")
    edit(cfg)
    path = base.parent / f".bench-{uuid.uuid4().hex[:10]}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def dagster_home(home: Path, *, max_concurrent_runs: int | None = None,
                 instance_yaml: Path = REPO / "pipelines" / "dagster.yaml") -> Path:
    """A ``DAGSTER_HOME`` folder holding ``instance_yaml`` (optionally with another ``max_concurrent_runs``)."""
    home.mkdir(parents=True, exist_ok=True)
    instance = yaml.safe_load(instance_yaml.read_text(encoding="utf-8"))
    if max_concurrent_runs is not None:
        instance["concurrency"]["runs"]["max_concurrent_runs"] = max_concurrent_runs
    (home / "dagster.yaml").write_text(yaml.safe_dump(instance, sort_keys=False), encoding="utf-8")
    return home


@contextlib.contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_in_process(config: Path, home: Path, jobs: Sequence[str], env: Mapping[str, str] | None = None) -> None:
    """Run ``jobs`` (every partition of a partitioned one) in this process, recorded in the instance at ``home``."""
    import dagster as dg

    from pipelines.definitions import build_definitions

    env = {"DAGSTER_HOME": str(home), "KGPROBE_CONFIG": str(config), **(env or {})}
    with _environ(env), dg.DagsterInstance.get() as instance:
        defs = build_definitions(str(config))  # reads KGPROBE_WAREHOUSE
        for name in jobs:
            job = defs.resolve_job_def(name)
            for key in job.partitions_def.get_partition_keys() if job.partitions_def else [None]:
                result = job.execute_in_process(instance=instance, partition_key=key, raise_on_error=False)
                if not result.success:
                    raise RuntimeError(f"{name} [{key}] failed (run {result.run_id}, DAGSTER_HOME={home})")


@contextlib.contextmanager
def daemon(config: Path, home: Path, env: Mapping[str, str] | None = None, log: Path | None = None) -> Iterator[dict]:
    """``dagster-daemon run`` for the instance at ``home`` (stopped on exit); yields the environment it runs with."""
    full = {**os.environ, "DAGSTER_HOME": str(home), "KGPROBE_CONFIG": str(config), **(env or {})}
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    proc = subprocess.Popen([str(BIN / "dagster-daemon"), "run"], cwd=REPO, env=full, stdout=out,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield full
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        if log:
            out.close()


def init_instance(home: Path, env: Mapping[str, str] | None = None) -> None:
    """Create the storage of the instance at ``home`` (its SQLite files or PostgreSQL tables) in this process, before
    a daemon and a ``dagster`` command start on it together: both would create it at once, and their migrations can
    meet (alembic: "more than one head present")."""
    import dagster as dg

    with _environ({"DAGSTER_HOME": str(home), **(env or {})}), dg.DagsterInstance.get() as instance:
        instance.get_run_records(dg.RunsFilter(), limit=1)


def submit_backfill(job: str, env: Mapping[str, str], partitions: Sequence[str] | None = None) -> None:
    """``dagster job backfill -j job --all`` (or ``--partitions``) against the instance ``env`` names."""
    which = ["--partitions", ",".join(partitions)] if partitions else ["--all"]
    done = subprocess.run([str(BIN / "dagster"), "job", "backfill", "-j", job, *which, "--noprompt"], cwd=REPO,
                          env=dict(env), capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"dagster job backfill -j {job} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")


def runs_of(home: Path, jobs: Sequence[str], env: Mapping[str, str] | None = None) -> list[RunInfo]:
    """The runs of ``jobs`` recorded in the instance at ``home``, oldest first."""
    import dagster as dg

    from pipelines.jobs import GPU_TAG

    with _environ({"DAGSTER_HOME": str(home), **(env or {})}), dg.DagsterInstance.get() as instance:
        records = instance.get_run_records(dg.RunsFilter(job_name=None))
    return sorted((RunInfo(r.dagster_run.run_id, r.dagster_run.job_name, r.dagster_run.tags.get("dagster/partition"),
                           r.dagster_run.status.value, r.start_time, r.end_time,
                           r.dagster_run.tags.get(GPU_TAG) == "true")
                   for r in records if r.dagster_run.job_name in jobs), key=lambda r: (r.start or 1e18, r.run_id))


def wait_for_runs(home: Path, jobs: Sequence[str], expected: int, *, timeout_s: float,
                  env: Mapping[str, str] | None = None) -> list[RunInfo]:  # fmt: skip
    """Poll until ``expected`` runs of ``jobs`` have ended (or ``timeout_s`` passes); returns them."""
    deadline = time.monotonic() + timeout_s
    while True:
        runs = runs_of(home, jobs, env)
        if len(runs) >= expected and all(r.status in _DONE for r in runs):
            return runs
        if time.monotonic() > deadline:
            raise TimeoutError(f"after {timeout_s:.0f}s: " + ", ".join(f"{r.job}[{r.partition}]={r.status}" for r in runs))
        time.sleep(1.0)


def inspect_runs(home: Path, runs: Sequence[RunInfo], env: Mapping[str, str] | None = None
                 ) -> tuple[list[str], set[str]]:  # fmt: skip
    """Every event-log message of ``runs`` that reads as a DuckDB lock conflict, and the ids of the runs that
    executed their steps in process."""
    import dagster as dg

    locks, in_process = [], set()
    with _environ({"DAGSTER_HOME": str(home), **(env or {})}), dg.DagsterInstance.get() as instance:
        for run in runs:
            for entry in instance.all_logs(run.run_id):
                text = entry.user_message or ""
                if text.startswith("Executing steps in process"):
                    in_process.add(run.run_id)
                event = entry.dagster_event
                error = getattr(getattr(event, "event_specific_data", None), "error", None) if event else None
                if error is not None:
                    text += "\n" + error.to_string()
                if LOCK_ERROR.search(text):
                    locks.append(f"{run.job}[{run.partition}]: {text[:300]}")
    return locks, in_process


def daemon_backfill(config: Path, home: Path, *, jobs: Sequence[str] = BACKFILL_JOBS, timeout_s: float = 600,
                    env: Mapping[str, str] | None = None, log: Path | None = None) -> Backfill:  # fmt: skip
    """Backfill every partition of ``jobs`` through a daemon on the instance at ``home`` and wait for every run."""
    from pipelines.definitions import build_definitions

    defs = build_definitions(str(config))
    expected = sum(len(defs.resolve_job_def(j).partitions_def.get_partition_keys()) for j in jobs)
    init_instance(home, env)
    with daemon(config, home, env, log) as full_env:
        started = time.perf_counter()
        for job in jobs:
            submit_backfill(job, full_env)
        runs = wait_for_runs(home, jobs, expected, timeout_s=timeout_s, env=env)
        wall = time.perf_counter() - started
    locks, in_process = inspect_runs(home, runs, env)
    return Backfill(wall, runs, locks, in_process)


def leaderboard(warehouse_db: Path) -> dict[str, list[tuple]]:
    """Every table of the ``leaderboard`` schema, as sorted rows (for comparing two warehouses)."""
    import duckdb

    con = duckdb.connect(str(warehouse_db), read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                           "WHERE table_schema = 'leaderboard' ORDER BY table_name").fetchall()]
        out = {}
        for name in names:
            cols = [r[0] for r in con.execute(f'DESCRIBE leaderboard."{name}"').fetchall()]
            rows = con.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in sorted(cols))} '
                               f'FROM leaderboard."{name}"').fetchall()
            # NaN (a rate over no items) is no value: None, so two warehouses with the same empty rows compare equal
            rows = [tuple(None if isinstance(v, float) and v != v else v for v in row) for row in rows]
            out[name] = sorted(rows, key=repr)
        return out
    finally:
        con.close()


def without_responses(prepared: Path, target: Path) -> None:
    """Copy a prepared warehouse folder without anything generated or scored (``prepare``, ``perturb``,
    ``similarity`` outputs only), so a backfill starts from the same point every time."""
    keep = ("_responses", "_scores", "response_store", "leaderboard", "report", "_plan")
    shutil.copytree(prepared, target, ignore=lambda d, names: [
        n for n in names if Path(d) == prepared and any(k in n for k in keep)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[1, 4], help="max_concurrent_runs values to time")
    parser.add_argument("--config", type=Path, default=REPO / "examples" / "sample.yaml")
    parser.add_argument("--methods", nargs="+", default=["RS", "ER"])
    parser.add_argument("--levels", type=float, nargs="+", default=[0.5])
    parser.add_argument("--models", nargs="+", default=None, help="reference models to keep (default: all four)")
    parser.add_argument("--suites", nargs="+", default=None, help="suites to keep (default: the config's)")
    parser.add_argument("--gpu-models", nargs="+", default=[],
                        help="models whose runs carry the kgprobe/gpu tag (one at a time) though they need no GPU")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kgprobe-backfill-") as tmp:
        root = Path(tmp)
        def edit(cfg: dict) -> None:
            small_project(cfg, methods=args.methods, levels=args.levels)
            if args.models:
                cfg["models"] = [m for m in cfg["models"] if m["name"] in args.models]
                cfg["generation"]["grounded_models"] = [m for m in cfg["generation"]["grounded_models"]
                                                        if m in args.models]
            if args.suites:
                cfg["suites"] = {k: v for k, v in cfg["suites"].items() if k in args.suites}

        with sample_config(root / "prepared", edit, base=args.config.resolve()) as config:
            t0 = time.perf_counter()
            run_in_process(config, dagster_home(root / "home-prepare"), ["prepare", "perturb", "similarity"])
            print(f"prepare + perturb + similarity in process: {time.perf_counter() - t0:.1f}s")
            results = {}
            for n in args.runs:
                warehouse = root / f"warehouse-{n}"
                without_responses(root / "prepared", warehouse)
                env = {"KGPROBE_WAREHOUSE": str(warehouse / "kgprobe.duckdb"),
                       "KGPROBE_GPU_MODELS": ",".join(args.gpu_models)}
                load_before = os.getloadavg()[0]
                done = daemon_backfill(config, dagster_home(root / f"home-{n}", max_concurrent_runs=n), env=env,
                                       timeout_s=1800)
                load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
                bad = [f"{r.job}[{r.partition}]={r.status}" for r in done.runs if r.status != "SUCCESS"]
                results[n] = done.wall_s
                busy = sum(r.end - r.start for r in done.runs if r.start is not None and r.end is not None)
                print(f"max_concurrent_runs={n}: {len(done.runs)} runs in {done.wall_s:.1f}s wall ({busy:.1f}s of "
                      f"run time), at most {done.max_parallel_runs} at once, {len(done.gpu_runs)} kgprobe/gpu runs "
                      f"({len(done.overlapping_gpu_runs())} overlapping pairs), {len(done.lock_errors)} lock errors; {load}"
                      + (f", NOT successful: {bad}" if bad else ""), flush=True)
            if len(results) > 1:
                first, *rest = sorted(results)
                for n in rest:
                    print(f"speed-up {first} -> {n} concurrent runs: {results[first] / results[n]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
