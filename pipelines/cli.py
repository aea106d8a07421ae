"""``kgprobe``: run the pipeline on a project config without opening the UI.

    kgprobe run                          # the whole chain on the project config, every partition
    kgprobe run --config my.yaml --job ingest
    kgprobe run --job generate_closed --partition oracle
    kgprobe run --suites fpq,grapheval --models oracle,random --limit 20   # overrides, recorded in the run's tags
    kgprobe jobs                         # the jobs of the config, with their partition keys
    kgprobe init --config my.yaml        # a config with kgs and models only -> a starter project beside it
    kgprobe plan                         # per model x suite: prompts, stored, tokens and dollars still to spend
    kgprobe schema --output kgprobe.schema.json   # the config's JSON schema, for editors
    kgprobe ui                           # the Dagster UI and daemon (`dg dev`) on the same DAGSTER_HOME

The project config is ``--config``, else the ``KGPROBE_CONFIG`` environment variable, else
``examples/sample.yaml`` (:func:`kgprobe.config.config_path`, the rule ``kgprobe ui`` follows too). ``run`` and
``ui`` use ``DAGSTER_HOME`` when set, else ``.dagster_home`` in the working directory (given kgprobe's instance
config, ``pipelines/dagster.yaml``, when it has none), so runs show up in ``kgprobe ui`` afterwards. Each
in-process run is tagged with the process that runs it (:data:`PROCESS_TAG`); a run left "started" by a process
that was killed (``kill -9``, a lost machine session) is marked failed by the next ``kgprobe run`` on that machine
(:func:`fail_abandoned_runs`).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
import warnings
from pathlib import Path


def _dagster_home() -> Path:
    from pipelines.instance import dagster_home

    home, note = dagster_home()
    if note:
        print(f"kgprobe: {note}", file=sys.stderr, flush=True)
    return home


#: The run tag that names the process of an in-process run: ``<host>:<pid>:<process start time>``.
PROCESS_TAG = "kgprobe/process"


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux ``/proc``), so a reused pid is told apart; "" where
    there is no ``/proc``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]


def _process_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def _alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    if started and Path("/proc").is_dir():
        now = _start_time(pid)
        if not now or now != started:  # gone, or the pid now belongs to another process
            return False
        try:  # a killed child its parent has not reaped yet is a zombie: dead
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"
        except OSError:
            return False
    return True


def fail_abandoned_runs(instance) -> list[str]:
    """Mark failed every run of this machine that Dagster's run storage still shows as started or starting while
    the process that ran it in-process (:data:`PROCESS_TAG`) is gone: a ``kill -9`` leaves no process to report
    the failure, so the run would show "started" for ever. Returns the run ids marked."""
    import dagster as dg

    host = socket.gethostname()
    marked = []
    runs = instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED,
                                                             dg.DagsterRunStatus.STARTING]))
    for run in runs:
        owner = run.tags.get(PROCESS_TAG, "")
        parts = owner.split(":")
        if len(parts) != 3 or parts[0] != host or not parts[1].isdigit():
            continue
        if _alive(int(parts[1]), parts[2]):
            continue
        instance.report_run_failed(run, message=f"kgprobe: the process that ran this run in-process (pid {parts[1]} "
                                                "on this machine) is gone, killed before it could report; marked "
                                                "failed by the next kgprobe run. Its stored answers are kept and "
                                                "reused.")
        marked.append(run.run_id)
    return marked


def _execute(defs, job_name: str, instance, log_level: str, partition: str | list[str] | None = None,
             tags: dict[str, str] | None = None):
    """One in-process run of ``job_name``: unpartitioned, one partition, or (a list of more than one key, in the
    partitioning's order and contiguous) a run over that range of partitions."""
    job = defs.resolve_job_def(job_name)
    keys = [partition] if isinstance(partition, str) else list(partition or [])
    extra = {}
    if len(keys) > 1:
        extra = {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}
    return job.execute_in_process(
        instance=instance,
        partition_key=keys[0] if len(keys) == 1 else None,
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": log_level}}}},
        tags={**(tags or {}), **extra, PROCESS_TAG: _process_id()},
    )


#: Jobs whose partitions ``kgprobe run`` materializes in one run per range rather than one run per partition, and
#: which model a partition key names (None: no model). ``perturb``'s levels are one run (no model); ``grounded``'s
#: levels of one model are one run, and ``closed_book`` and ``grounded`` put the partitions of the reference models
#: (no weights, nothing sent anywhere) in one run together. A run still holds one model with weights (a GPU model's
#: run is that model's alone). Every run costs Dagster run storage, a plan, a step launch and a data-quality
#: validation per asset and check; the sample's 5 closed-book and 27 grounded partitions are 2 and 1 runs.
RANGED_JOBS = {"perturb": lambda key: None, "grounded": lambda key: key.split("|", 1)[0],
               "closed_book": lambda key: key}


def _ranges(job_name: str, keys: list[str], together: frozenset[str] | set[str] = frozenset()) -> list[list[str]]:
    """``keys`` (in partition order) as the runs ``kgprobe run`` makes of them: one key per run, or for
    :data:`RANGED_JOBS` the contiguous keys of one model per run, the models in ``together`` (the reference models)
    counting as one."""
    model = RANGED_JOBS.get(job_name)
    if model is None:
        return [[k] for k in keys]

    def group(key: str) -> str | None:
        name = model(key)
        return "" if name in together else name

    out: list[list[str]] = []
    for key in keys:
        if out and group(out[-1][-1]) == group(key):
            out[-1].append(key)
        else:
            out.append([key])
    return out


def _step_label(job_name: str, keys: list[str] | None) -> str:
    if not keys:
        return job_name
    if len(keys) == 1:
        return f"{job_name} [{keys[0]}]"
    return f"{job_name} [{keys[0]} ... {keys[-1]}] ({len(keys)} partitions)"


def _names(value: str | None) -> list[str]:
    # in NFC, as the config's model names are read: a name typed with a combining accent is the same name
    from kgprobe.suites.settings import nfc

    return [nfc(v.strip()) for v in (value or "").split(",") if v.strip()]


def _with_overrides(chosen: Path, cfg, args: argparse.Namespace) -> tuple[Path, dict]:
    """The config the run reads: ``chosen`` itself, or with ``--suites`` / ``--models`` / ``--limit`` applied, a copy
    written beside it (so its relative paths still resolve) as ``.<stem>.run.yaml``; and the overrides applied."""
    import yaml

    from kgprobe.config import load_config
    from kgprobe.errors import ConfigError
    from kgprobe.yaml_io import load_yaml

    suites, models = _names(args.suites), _names(args.models)
    if not (suites or models or args.limit):
        return chosen, {}
    raw = load_yaml(chosen.read_text(encoding="utf-8"), what=str(chosen))
    overrides: dict = {}
    if suites:
        enabled = list(cfg.suites_configured())
        unknown = [s for s in suites if s not in enabled]
        if unknown:
            raise ConfigError(f"--suites: {', '.join(unknown)} not enabled in {chosen}; enabled suites: "
                              f"{', '.join(enabled) or 'none'}")
        raw["suites"] = {k: v for k, v in (raw.get("suites") or {}).items() if k in suites}
        if "fpq" not in suites:
            raw.pop("fpq", None)  # the deprecated top-level place
        overrides["suites"] = suites
    if models:
        from kgprobe.suites.settings import nfc

        known = [nfc(m["name"]) for m in raw.get("models") or []]
        unknown = [m for m in models if m not in known]
        if unknown:
            raise ConfigError(f"--models: {', '.join(unknown)} not among the models of {chosen}; models: "
                              f"{', '.join(known) or 'none'}")
        raw["models"] = [m for m in raw["models"] if nfc(m["name"]) in models]
        generation = raw.get("generation") or {}
        if generation.get("grounded_models") is not None:
            generation["grounded_models"] = [m for m in generation["grounded_models"] if nfc(m) in models]
        scoring = raw.get("scoring") or {}
        if scoring.get("judges"):
            kept = [j for j in scoring["judges"] if nfc(j.get("model") if isinstance(j, dict) else j) in models]
            dropped = len(scoring["judges"]) - len(kept)
            scoring["judges"] = kept
            if dropped:
                overrides["judges_dropped"] = dropped
        for section in (raw.get("suites") or {}).values():  # a suite's own judge lists name models too
            for key in ("judges", "grounded_judges"):
                if isinstance(section, dict) and isinstance(section.get(key), list):
                    section[key] = [j for j in section[key] if nfc(j) in models]
        overrides["models"] = models
    if args.limit:
        for m in raw.get("models") or []:
            m["limit"] = args.limit
        raw.setdefault("generation", {})
        raw["generation"] = {**(raw["generation"] or {}), "limit": args.limit}
        overrides["limit"] = args.limit
    raw["name"] = cfg.name
    raw["narrowed_from"] = chosen.name  # the report still shows every model and suite of the whole config
    path = chosen.parent / f".{chosen.stem}.run.yaml"
    path.write_text(f"# written by `kgprobe run` from {chosen.name} with {overrides}; edit {chosen.name} instead\n"
                    + yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    load_config(path)  # a mistake the overrides made is reported now, at its key
    return path, overrides


def _steps(defs, job_arg: str, chain: str, partition: str | None, config: Path,
           together: frozenset[str] = frozenset()) -> list[tuple[str, list[str] | None]]:
    """(job, partition keys) runs of ``job_arg`` (None: unpartitioned; several keys: one run over their range, see
    :data:`RANGED_JOBS`); a job or partition the config does not have is one line naming the valid ones."""
    from kgprobe.errors import ConfigError
    from pipelines.jobs import MAIN_SEQUENCE

    # Dagster's implicit asset jobs (__ASSET_JOB...) are no job a person can name
    jobs = {j.name: j for j in defs.get_repository_def().get_all_jobs() if not j.name.startswith("__")}
    if job_arg != chain and job_arg not in jobs:
        raise ConfigError(f"--job {job_arg!r} is not a job of {config}; jobs: {chain} (the whole chain), "
                          f"{', '.join(sorted(jobs))}")
    names = [j for j in MAIN_SEQUENCE if j in jobs] if job_arg == chain else [job_arg]
    if partition is not None:
        keys = {k for n in names if jobs[n].partitions_def is not None
                for k in jobs[n].partitions_def.get_partition_keys()}
        if partition not in keys:
            shown = sorted(keys)
            raise ConfigError(f"--partition {partition!r} is not a partition of {job_arg}; partitions: "
                              + (", ".join(shown[:40]) + (f" (and {len(shown) - 40} more)" if len(shown) > 40 else "")
                                 if shown else "none (the job is not partitioned)"))
    steps: list[tuple[str, list[str] | None]] = []
    for name in names:
        pdef = jobs[name].partitions_def
        if pdef is None:
            steps.append((name, None))
        elif partition:
            if partition in pdef.get_partition_keys():
                steps.append((name, [partition]))
        else:
            steps += [(name, keys) for keys in _ranges(name, list(pdef.get_partition_keys()), together)]
    return steps


def _warnings(result, label: str) -> list[dict]:
    out = []
    for ev in result.get_asset_check_evaluations():
        if ev.passed:
            continue
        meta = {k: getattr(v, "value", v) for k, v in (ev.metadata or {}).items()}
        brief = {k: v for k, v in meta.items() if isinstance(v, (int, float, str)) and len(str(v)) < 60}
        for k, v in meta.items():  # a small mapping (per method, per model) reads as "a 0.31 b 0.42"
            if isinstance(v, dict) and v and all(isinstance(x, (int, float, str)) for x in v.values()):
                text = " ".join(f"{a} {round(x, 3) if isinstance(x, float) else x}" for a, x in v.items())
                if len(text) < 100:
                    brief[k] = text
        out.append({"check": ev.asset_check_key.name, "asset": ev.asset_key.to_user_string(), "run": label,
                    "severity": str(getattr(ev.severity, "value", ev.severity)), "details": brief})
    return out


def _failure(result) -> str:
    lines = []
    for ev in result.get_step_failure_events():
        error = getattr(ev.event_specific_data, "error", None)
        while getattr(error, "cause", None) is not None:  # Dagster wraps the user's exception; say the user's
            error = error.cause
        message = (getattr(error, "message", "") or "").strip().splitlines()
        lines.append(f"{ev.step_key}: {message[-1] if message else 'failed'}")
    return "; ".join(lines) or "the run failed before any step (see the log above)"


def _label_coverage(cfg, warehouse: str) -> list[dict]:
    from kgprobe.kg.readable import label_report
    from kgprobe.warehouse import connect

    if not Path(warehouse).exists():
        return []
    out = []
    try:
        with connect(warehouse, read_only=True) as con:
            for name in cfg.kgs:
                try:
                    out.append(label_report(con, name))
                except Exception:  # noqa: BLE001 - a KG not loaded yet has nothing to report
                    continue
    except Exception:  # noqa: BLE001 - a warehouse being written by another run: the summary goes without it
        return []
    return out


def _run(args: argparse.Namespace) -> int:
    from kgprobe.config import CONFIG_ENV, config_path, generation_models, load_config
    from kgprobe.report.safe_text import console_text
    from kgprobe.report.summary import (
        closed_headlines,
        config_hash,
        format_headlines,
        format_job_seconds,
        results_document,
        run_timing,
        write_results,
    )
    from resources.session import keep_models_loaded

    chosen = config_path(args.config)
    # Python hides DeprecationWarnings outside __main__; an old config layout is worth a line on the console
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = load_config(chosen)
    for warning in caught:
        print(f"kgprobe: warning: {warning.message}", file=sys.stderr, flush=True)
    run_path, overrides = _with_overrides(chosen, cfg, args)
    whole = cfg  # a narrowed run still shows every model and suite of the project that the warehouse holds
    if overrides:
        cfg = load_config(run_path)
        print(f"kgprobe: overrides {overrides} (the run reads {run_path})", flush=True)
    # the Definitions built below, and any run they launch in another process, read the same file
    os.environ[CONFIG_ENV] = str(run_path.resolve())
    home = _dagster_home()
    import dagster as dg

    from pipelines.definitions import _warehouse_path, build_definitions
    from pipelines.jobs import chain_name

    defs = build_definitions(str(run_path.resolve()))
    chain = chain_name(cfg)
    job_arg = args.job or chain
    reference = frozenset(m.name for m in generation_models(cfg) if m.backend == "reference")
    steps = _steps(defs, job_arg, chain, args.partition, chosen, reference)
    tags = {"kgprobe/config": str(chosen.resolve()), **{f"kgprobe/{k}": ",".join(map(str, v)) if isinstance(v, list)
                                                       else str(v) for k, v in overrides.items()}}
    started = time.perf_counter()
    ok, failed, fired, runs = True, None, [], []
    # CPU models (SmolLM2) and the embedder load once for the whole chain, not once per run that needs them
    with dg.DagsterInstance.get() as instance, keep_models_loaded():
        for run_id in fail_abandoned_runs(instance):
            print(f"kgprobe: run {run_id} was left started by a process that is gone (killed); marked failed",
                  flush=True)
        for job_name, keys in steps:
            label = _step_label(job_name, keys)
            print(f"kgprobe: running {label}", flush=True)
            t0, cpu0 = time.perf_counter(), time.process_time()
            result = _execute(defs, job_name, instance, args.log_level, keys, tags)
            runs.append(run_timing(job_name, keys, result.run_id, result.success, time.perf_counter() - t0,
                                   time.process_time() - cpu0))
            print(f"kgprobe: {label} took {runs[-1]['seconds']:.1f}s", flush=True)
            fired += _warnings(result, label)
            if not result.success:
                failed = f"{label} (run {result.run_id}): {_failure(result)}"
                print(f"kgprobe: {label} FAILED (run {result.run_id}); see `kgprobe ui` or the log above", flush=True)
                ok = False
                break
    took = time.perf_counter() - started
    warehouse = _warehouse_path(str(run_path))
    root = Path(warehouse).resolve().parent
    print(f"\nkgprobe: {job_arg} {'succeeded' if ok else 'FAILED'} in {took:.0f}s ({len(runs)} runs, "
          f"DAGSTER_HOME={home})")
    print("kgprobe: time per job: " + format_job_seconds(runs))
    if failed:
        print(f"kgprobe: what failed: {console_text(failed)}")
    heads = closed_headlines(root, whole) if ok else []  # after a failure, stored scores may not be this run's
    if heads:
        print("\nkgprobe: headline metrics (closed book; value [95% interval] n)\n" + format_headlines(heads))
    labels = _label_coverage(cfg, warehouse)
    for rep in labels:
        rels = len(rep["path_relations"])
        print(f"kgprobe: labels of {rep['kg']}: {rep['readable_entities']:,} of {rep['entities']:,} entities have a "
              f"readable name ({rep['readable_share']:.0%})"
              + (f"; {rels} relation paths named by their last segment" if rels else "")
              + (f"; relations without a name: {console_text(', '.join(rep['unreadable_relations']))}"
                 if rep["unreadable_relations"] else ""))
        if rep.get("escaped_labels"):
            print(f"kgprobe: warning: {rep['escaped_labels']:,} entity names of {rep['kg']} hold escaped unicode "
                  f"(e.g. {console_text(', '.join(rep['escaped_examples'][:3]))}): keys without a label, which "
                  "questions show as written (label files are decoded when read); give them entity_labels")
    from kgprobe.project.plan import unscored

    for note in unscored(whole):
        print(f"kgprobe: note: {note}")
    for w in fired:
        details = console_text(", ".join(f"{k}={v}" for k, v in w["details"].items()))
        print(f"kgprobe: {w['severity']} {w['check']} ({w['run']}){': ' + details if details else ''}")
    report = root / "report" / "report.html"
    ran_publish = any(r["job"] == "publish" for r in runs)
    shown_report = report if ok and report.exists() and ran_publish else None
    doc = results_document(cfg, heads=heads, warnings=fired, report=shown_report, ok=ok, failed=failed,
                           overrides=overrides, labels=labels, job=job_arg, seconds=took, runs=runs)
    doc["config"], doc["config_sha256"] = str(chosen.resolve()), config_hash(chosen)  # the file the user wrote
    results = write_results(root / "results.json", doc)
    print(f"kgprobe: warehouse {Path(warehouse).resolve()}")
    print(f"kgprobe: results {results}")
    if shown_report is not None:
        print(f"kgprobe: report {shown_report}")
    return 0 if ok else 1


def _ui(args: argparse.Namespace) -> int:
    from pipelines.instance import start_ui

    start_ui(config=Path(args.config) if args.config else None, host=args.host, port=args.port)
    return 0  # not reached: the process is now `dg dev`


def _init(args: argparse.Namespace) -> int:
    from kgprobe.project.init import format_written, init_project

    chosen = Path(args.config)
    started = time.perf_counter()
    written = init_project(chosen, model=args.model, log=lambda line: print(line, flush=True))
    print(f"kgprobe init: wrote in {time.perf_counter() - started:.0f}s (check each by hand):\n"
          + format_written(written))
    print(f"kgprobe init: next: kgprobe plan --config {chosen}; kgprobe run --config {chosen}")
    return 0


def _jobs(args: argparse.Namespace) -> int:
    from kgprobe.config import config_path, load_config
    from pipelines.definitions import build_definitions
    from pipelines.jobs import MAIN_SEQUENCE, chain_name

    chosen = config_path(args.config)
    cfg = load_config(chosen)
    defs = build_definitions(str(chosen.resolve()))
    jobs = {j.name: j for j in defs.get_repository_def().get_all_jobs() if not j.name.startswith("__")}
    print(f"{chain_name(cfg)}: the whole chain: {' -> '.join(j for j in MAIN_SEQUENCE if j in jobs)}")
    for name in sorted(jobs):
        job = jobs[name]
        keys = job.partitions_def.get_partition_keys() if job.partitions_def is not None else []
        print(f"{name}: {job.description or ''}")
        print(f"    partitions: {', '.join(keys) if keys else 'none (one run)'}")
    return 0


def _plan(args: argparse.Namespace) -> int:
    from kgprobe.config import config_path, load_config
    from kgprobe.config import generation_models
    from kgprobe.project.plan import format_plan, plan_run, time_estimates, unscored, weights_problem

    cfg = load_config(config_path(args.config))
    rows = plan_run(cfg)
    if args.json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        print(format_plan(rows))
        for note in unscored(cfg):
            print(f"note: {note}")
        for line in time_estimates(cfg, rows):
            print(f"time: {line}")
        for spec in generation_models(cfg):
            problem = weights_problem(spec)
            if problem:
                print(f"warning: {problem}")
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
              "(n), A - B with a paired bootstrap interval (* Newcombe's paired score interval) and McNemar's exact test")
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
    from kgprobe.project.plan import config_flag
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
                                          f"(kgprobe run{config_flag(cfg)} --job {name}_questions), or pass "
                                          "--suite for another")
            items = wh.read_partition(root, f"{name}_items").to_pylist()
            targets += [(p, specs[args.model].params) for p in suite.prompts(items)]
        summary = import_responses(rows, model=args.model, targets=targets, store=ResponseStore(root / "response_store"),
                                   source=str(args.file))
    except ResponseImportError as exc:
        print(f"kgprobe: {exc}", file=sys.stderr)
        return 2
    flag = config_flag(cfg)
    print(f"kgprobe: imported {summary['rows']} answer(s) of {args.model} for {summary['prompts']} prompt(s) "
          f"({summary['stored']} stored samples, run {summary['run_id']}); score them with "
          f"`kgprobe run{flag} --models {args.model}` (a prompt without an imported answer is left out for a "
          f"`backend: imported` model, asked of any other backend), or "
          f"`kgprobe run{flag} --job closed_book --partition {args.model}` then `--job publish`")
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
    from kgprobe.project.plan import config_flag
    from kgprobe.suites import SUITES

    chosen = config_path(args.config)
    cfg = load_config(chosen)
    root = cfg.warehouse.resolve().parent
    try:
        if args.suite not in SUITES:
            raise ExportError(f"unknown suite {args.suite!r}; choose one of {', '.join(SUITES)}")
        if not SUITES[args.suite].configured(cfg):
            enabled = [s.name for s in SUITES.values() if s.configured(cfg)]
            raise ExportError(f"suite {args.suite!r} is not enabled in {chosen} (enabled: {', '.join(enabled) or 'none'});"
                              f" add a suites.{args.suite} section to build its items, or export another")
        if not wh.partition_dir(root, f"{args.suite}_items").exists():
            raise ExportError(f"suite {args.suite!r} has no items under {root} yet; build them first "
                              f"(kgprobe run{config_flag(cfg)} --job {args.suite}_questions)")
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
                             temperature=sampling.temperature, top_p=sampling.top_p)
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
    run.add_argument("--job", default=None,
                     help="kgprobe_<project> (the default: the whole chain, every partition), or one job: prepare, "
                          "closed_book, grounded, publish, perturb, similarity, ingest, subgraphs, generate_closed, "
                          "score_closed, generate_grounded, score_grounded, <suite>_questions (`kgprobe jobs` lists "
                          "those of a config, with their partitions)")
    run.add_argument("--partition", default=None, help="only this partition of a partitioned job")
    run.add_argument("--suites", default=None, help="comma-separated: run only these of the config's suites")
    run.add_argument("--models", default=None, help="comma-separated: run only these of the config's models")
    run.add_argument("--limit", type=int, default=None,
                     help="question groups per model partition (every model's limit), for a quick look")
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                     help="console log level (default: %(default)s)")
    run.set_defaults(func=_run)
    init = sub.add_parser("init", help="fill a config that names only its KGs and models into a starter project "
                                       "(domains, question and statement templates, rule candidates)")
    init.add_argument("--config", required=True, help="the project YAML config to complete (rewritten in place; the "
                                                      "old text is kept beside it)")
    init.add_argument("--model", default=None, help="a configured model that proposes the statement templates "
                                                   "(GraphEval's Figure 9 prompt; default: rule-based only)")
    init.set_defaults(func=_init)
    jobs = sub.add_parser("jobs", help="list the config's jobs and their partition keys")
    jobs.add_argument("--config", default=None,
                      help="project YAML config (default: $KGPROBE_CONFIG, else examples/sample.yaml)")
    jobs.set_defaults(func=_jobs)
    plan = sub.add_parser("plan", help="what a run would generate and cost, before it runs (nothing is generated)")
    plan.add_argument("--config", default=None,
                      help="project YAML config (default: $KGPROBE_CONFIG, else examples/sample.yaml)")
    plan.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    plan.set_defaults(func=_plan)
    schema = sub.add_parser("schema", help="print the JSON schema of the project config (for editors)")
    schema.add_argument("--output", "-o", default=None, help="write it to this file instead of stdout")
    schema.set_defaults(func=_schema)
    ui = sub.add_parser("ui", help="the Dagster UI and daemon (`dg dev`) on the same DAGSTER_HOME as `kgprobe run`")
    ui.add_argument("--config", default=None,
                    help="project YAML config (default: $KGPROBE_CONFIG, else examples/sample.yaml)")
    ui.add_argument("--host", default=None, help="address the UI listens on (default: dg dev's, 127.0.0.1)")
    ui.add_argument("--port", "-p", type=int, default=None, help="port of the UI (default: dg dev's, 3000)")
    ui.set_defaults(func=_ui)
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
