"""``kgprobe``: run the pipeline on a project config without opening the UI.

    kgprobe run                          # the whole chain on examples/sample.yaml, every partition
    kgprobe run --config my.yaml --job ingest
    kgprobe run --job generate_closed --partition oracle

It uses ``DAGSTER_HOME`` when set, else ``.dagster_home`` in the working directory (created with the repository's
``dagster.yaml``), so runs show up in ``dagster dev`` afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _dagster_home() -> Path:
    home = Path(os.environ.get("DAGSTER_HOME") or Path.cwd() / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists() and (REPO / "dagster.yaml").exists():
        shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def _execute(defs, job_name: str, instance, log_level: str, partition: str | None = None) -> tuple[bool, str]:
    job = defs.resolve_job_def(job_name)
    result = job.execute_in_process(
        instance=instance,
        partition_key=partition,
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": log_level}}}},
    )
    return result.success, result.run_id


def _run(args: argparse.Namespace) -> int:
    os.environ["KGPROBE_CONFIG"] = str(Path(args.config).resolve())
    home = _dagster_home()
    import dagster as dg

    from kgprobe.config import load_config
    from pipelines.definitions import build_definitions
    from pipelines.jobs import MAIN_JOB, MAIN_SEQUENCE

    cfg = load_config(args.config)
    defs = build_definitions(str(Path(args.config).resolve()))
    started = time.perf_counter()
    steps: list[tuple[str, str | None]] = []
    for job_name in (MAIN_SEQUENCE if args.job == MAIN_JOB else (args.job,)):
        job = defs.resolve_job_def(job_name)
        if job.partitions_def is None:
            steps.append((job_name, None))
        elif args.partition:
            steps.append((job_name, args.partition))
        else:
            steps += [(job_name, key) for key in job.partitions_def.get_partition_keys()]
    ok = True
    with dg.DagsterInstance.get() as instance:
        for job_name, partition in steps:
            label = job_name + (f" [{partition}]" if partition else "")
            print(f"kgprobe: running {label}", flush=True)
            success, run_id = _execute(defs, job_name, instance, args.log_level, partition)
            if not success:
                print(f"kgprobe: {label} FAILED (run {run_id}); see `dagster dev` or the log above", flush=True)
                ok = False
                break
    took = time.perf_counter() - started
    print(f"\nkgprobe: {args.job} {'succeeded' if ok else 'FAILED'} in {took:.0f}s ({len(steps)} runs, DAGSTER_HOME={home})")
    print(f"kgprobe: warehouse {cfg.warehouse.resolve()}")
    report = cfg.warehouse.resolve().parent / "report" / "report.html"
    if report.exists():
        print(f"kgprobe: report {report}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kgprobe`` command."""
    parser = argparse.ArgumentParser(prog="kgprobe", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="materialize a job's assets in this process")
    run.add_argument("--config", default="examples/sample.yaml", help="project YAML config (default: %(default)s)")
    run.add_argument("--job", default="kgprobe_sample",
                     help="kgprobe_sample (the whole chain, every partition) or one job name (default: %(default)s)")
    run.add_argument("--partition", default=None, help="only this partition of a partitioned job")
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                     help="console log level (default: %(default)s)")
    run.set_defaults(func=_run)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
