"""``kgprobe``: run the pipeline on a project config without opening the UI.

    kgprobe run                          # the whole chain on the project config, every partition
    kgprobe run --config my.yaml --job ingest
    kgprobe run --job generate_closed --partition oracle
    kgprobe plan                         # per model x suite: prompts, stored, tokens and dollars still to spend
    kgprobe schema --output kgprobe.schema.json   # the config's JSON schema, for editors

The project config is ``--config``, else the ``KGPROBE_CONFIG`` environment variable, else
``examples/sample.yaml`` (:func:`kgprobe.config.config_path`, the rule ``dagster dev`` follows too). ``run`` uses
``DAGSTER_HOME`` when set, else ``.dagster_home`` in the working directory (created with the repository's
``dagster.yaml``), so runs show up in ``dagster dev`` afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import warnings
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
    from kgprobe.config import CONFIG_ENV, config_path, load_config

    chosen = config_path(args.config)
    # Python hides DeprecationWarnings outside __main__; an old config layout is worth a line on the console
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = load_config(chosen)
    for warning in caught:
        print(f"kgprobe: warning: {warning.message}", file=sys.stderr, flush=True)
    # the Definitions built below, and any run they launch in another process, read the same file
    os.environ[CONFIG_ENV] = str(chosen.resolve())
    home = _dagster_home()
    import dagster as dg

    from pipelines.definitions import build_definitions
    from pipelines.jobs import MAIN_JOB, MAIN_SEQUENCE

    defs = build_definitions(str(chosen.resolve()))
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


def _plan(args: argparse.Namespace) -> int:
    from kgprobe.config import config_path, load_config
    from kgprobe.plan import format_plan, plan_run

    cfg = load_config(config_path(args.config))
    rows = plan_run(cfg)
    if args.json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        print(format_plan(rows))
    return 0


def _schema(args: argparse.Namespace) -> int:
    from kgprobe.config import project_schema

    text = json.dumps(project_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"kgprobe: wrote the project config schema to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _warehouse_root(args: argparse.Namespace) -> Path:
    if getattr(args, "warehouse", None):
        return Path(args.warehouse)
    from kgprobe.config import config_path, load_config

    return load_config(config_path(args.config)).warehouse.resolve().parent


def _compare(args: argparse.Namespace) -> int:
    from kgprobe.scoring.compare import compare_models, format_comparison, read_scores
    from kgprobe.suites import SUITES

    root = _warehouse_root(args)
    names = [args.suite] if args.suite else list(SUITES)
    if args.suite and args.suite not in SUITES:
        print(f"kgprobe: unknown suite {args.suite!r}; choose one of {', '.join(SUITES)}", file=sys.stderr)
        return 2
    rows = []
    for name in names:
        items, metrics = read_scores(root, name)
        rows += compare_models(items, metrics, args.model_a, args.model_b, resamples=args.resamples, seed=args.seed)
    if not rows:
        print(f"kgprobe: no suite under {root} has scores of both {args.model_a!r} and {args.model_b!r} "
              "(closed book, perturbation none); score both models first (kgprobe run)", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        print(f"A = {args.model_a}, B = {args.model_b}: share of correct items on the items both answered "
              "(n), A - B with a paired bootstrap interval and McNemar's exact test")
        print(format_comparison(rows))
    return 0


def _add_compare(sub) -> None:
    compare = sub.add_parser("compare", help="paired comparison of two models on the items both answered")
    compare.add_argument("model_a", help="model A (its name in the config)")
    compare.add_argument("model_b", help="model B")
    compare.add_argument("--suite", default=None, help="only this suite (default: every suite with scores)")
    compare.add_argument("--config", default=None,
                         help="project YAML config (default: $KGPROBE_CONFIG, else examples/sample.yaml)")
    compare.add_argument("--warehouse", default=None, help="the warehouse folder (default: the config's)")
    compare.add_argument("--resamples", type=int, default=1000, help="paired bootstrap resamples (default: %(default)s)")
    compare.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    compare.add_argument("--json", action="store_true", help="print the rows as JSON")
    compare.set_defaults(func=_compare)


def _import_responses(args: argparse.Namespace) -> int:
    from kgprobe import warehouse as wh
    from kgprobe.config import config_path, generation_models, load_config
    from kgprobe.generation.imports import ResponseImportError, import_responses, read_jsonl
    from kgprobe.generation.store import ResponseStore
    from kgprobe.suites import SUITES

    cfg = load_config(config_path(args.config))
    root = cfg.warehouse.resolve().parent
    names = [s.name for s in SUITES.values() if s.configured(cfg) and (args.suite is None or s.name == args.suite)]
    targets = []
    try:
        rows = read_jsonl(args.file)
        for name in names:
            suite = SUITES[name]
            specs = {m.name: m for m in suite.model_specs(cfg, generation_models(cfg))}
            if args.model not in specs:
                raise ResponseImportError(f"model {args.model!r} is not in the config's models {sorted(specs)}; add "
                                          "an entry for it (any backend: its stored answers are used, it is not "
                                          "called for them) with the sampling parameters the answers were made with")
            if not wh.partition_dir(root, f"{name}_items").exists():
                raise ResponseImportError(f"suite {name!r} has no items under {root} yet; build them first "
                                          f"(kgprobe run --job {name}_items) or pass --suite")
            items = wh.read_partition(root, f"{name}_items").to_pylist()
            targets += [(p, specs[args.model].params) for p in suite.prompts(items)]
        summary = import_responses(rows, model=args.model, targets=targets, store=ResponseStore(root / "response_store"),
                                   source=str(args.file))
    except ResponseImportError as exc:
        print(f"kgprobe: {exc}", file=sys.stderr)
        return 2
    print(f"kgprobe: imported {summary['rows']} answer(s) of {args.model} for {summary['prompts']} prompt(s) "
          f"({summary['stored']} stored samples, run {summary['run_id']}); score them with "
          f"kgprobe run --job <suite>_responses --partition {args.model} and the scoring jobs, as any model")
    return 0


def _add_import_responses(sub) -> None:
    imp = sub.add_parser("import-responses", help="store answers generated elsewhere (JSONL) as a model's samples")
    imp.add_argument("file", help="JSONL: item_id or prompt_sha256, sample_index, text, optional tokens_in/tokens_out")
    imp.add_argument("--model", required=True, help="the model's name (an entry of the config's models)")
    imp.add_argument("--suite", default=None, help="only match prompts of this suite (default: every enabled suite)")
    imp.add_argument("--config", default=None,
                     help="project YAML config (default: $KGPROBE_CONFIG, else examples/sample.yaml)")
    imp.set_defaults(func=_import_responses)


def _export(args: argparse.Namespace) -> int:
    import hashlib

    from kgprobe import warehouse as wh
    from kgprobe.config import config_path, load_config
    from kgprobe.export import ExportError, export_suite
    from kgprobe.suites import SUITES

    chosen = config_path(args.config)
    cfg = load_config(chosen)
    root = cfg.warehouse.resolve().parent
    try:
        if args.suite not in SUITES:
            raise ExportError(f"unknown suite {args.suite!r}; choose one of {', '.join(SUITES)}")
        if not wh.partition_dir(root, f"{args.suite}_items").exists():
            raise ExportError(f"suite {args.suite!r} has no items under {root} yet; build them first "
                              "(kgprobe run --job prepare)")
        items = wh.read_partition(root, f"{args.suite}_items").to_pylist()
        snapshots = []
        db = cfg.warehouse.resolve()
        if db.exists():
            import duckdb

            from kgprobe.kg.stats import current_snapshot

            with duckdb.connect(str(db), read_only=True) as con:
                for kg in cfg.kgs:
                    try:
                        snapshots.append(str(current_snapshot(con, kg)))
                    except Exception:  # noqa: BLE001 - a KG not ingested yet has no snapshot to name
                        continue
        provenance = {"snapshot": ", ".join(snapshots) or None, "paper": SUITES[args.suite].paper,
                      "config_hash": hashlib.sha256(Path(chosen).read_bytes()).hexdigest()[:16],
                      "licence": args.licence}
        out = Path(args.output or f"export/{args.suite}-{args.format}")
        sampling = SUITES[args.suite].sampling
        files = export_suite(items, args.suite, args.format, out, provenance=provenance, n=sampling.n,
                             temperature=sampling.temperature)
    except ExportError as exc:
        print(f"kgprobe: {exc}", file=sys.stderr)
        return 2
    for f in files:
        print(f"kgprobe: wrote {f} ({f.stat().st_size:,} bytes)")
    return 0


def _add_export(sub) -> None:
    from kgprobe.export import FORMATS

    exp = sub.add_parser("export", help="write a suite's built benchmark as JSONL, a HF dataset, an lm-eval or inspect task")
    exp.add_argument("--suite", required=True, help="the suite to export")
    exp.add_argument("--format", required=True, choices=FORMATS, help="what to write")
    exp.add_argument("--output", "-o", default=None, help="the folder to write (default: export/<suite>-<format>)")
    exp.add_argument("--licence", default="other", help="the licence of the source KG, for the dataset card")
    exp.add_argument("--config", default=None,
                     help="project YAML config (default: $KGPROBE_CONFIG, else examples/sample.yaml)")
    exp.set_defaults(func=_export)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kgprobe`` command; returns the exit status (2 for a config mistake, with its message)."""
    from kgprobe.errors import ConfigError

    parser = argparse.ArgumentParser(prog="kgprobe", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="materialize a job's assets in this process")
    run.add_argument("--config", default=None,
                     help="project YAML config (default: $KGPROBE_CONFIG, else examples/sample.yaml)")
    run.add_argument("--job", default="kgprobe_sample",
                     help="kgprobe_sample (the whole chain, every partition) or one job name (default: %(default)s)")
    run.add_argument("--partition", default=None, help="only this partition of a partitioned job")
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                     help="console log level (default: %(default)s)")
    run.set_defaults(func=_run)
    plan = sub.add_parser("plan", help="what a run would generate and cost, before it runs (nothing is generated)")
    plan.add_argument("--config", default=None,
                      help="project YAML config (default: $KGPROBE_CONFIG, else examples/sample.yaml)")
    plan.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    plan.set_defaults(func=_plan)
    schema = sub.add_parser("schema", help="print the JSON schema of the project config (for editors)")
    schema.add_argument("--output", "-o", default=None, help="write it to this file instead of stdout")
    schema.set_defaults(func=_schema)
    _add_compare(sub)
    _add_import_responses(sub)
    _add_export(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as exc:
        print(f"kgprobe: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
