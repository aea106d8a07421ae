"""``kgprobe``: run the pipeline on a project config without opening the UI.

    kgprobe run                          # the main job on examples/sample.yaml
    kgprobe run --config my.yaml --job ingest

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


def _run(args: argparse.Namespace) -> int:
    os.environ["KGPROBE_CONFIG"] = str(Path(args.config).resolve())
    home = _dagster_home()
    import dagster as dg

    from kgprobe.config import load_config
    from pipelines.definitions import build_definitions

    cfg = load_config(args.config)
    defs = build_definitions(str(Path(args.config).resolve()))
    job = defs.resolve_job_def(args.job)
    started = time.perf_counter()
    with dg.DagsterInstance.get() as instance:
        result = job.execute_in_process(
            instance=instance,
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": args.log_level}}}},
        )
    took = time.perf_counter() - started
    status = "succeeded" if result.success else "FAILED"
    print(f"\nkgprobe: job {args.job!r} {status} in {took:.0f}s (run {result.run_id}, DAGSTER_HOME={home})")
    print(f"kgprobe: warehouse {cfg.warehouse.resolve()}")
    report = cfg.warehouse.resolve().parent / "report" / "report.html"
    if report.exists():
        print(f"kgprobe: report {report}")
    return 0 if result.success else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kgprobe`` command."""
    parser = argparse.ArgumentParser(prog="kgprobe", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="materialize a job's assets in this process")
    run.add_argument("--config", default="examples/sample.yaml", help="project YAML config (default: %(default)s)")
    run.add_argument("--job", default="kgprobe_sample", help="job name (default: %(default)s)")
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                     help="console log level (default: %(default)s)")
    run.set_defaults(func=_run)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
