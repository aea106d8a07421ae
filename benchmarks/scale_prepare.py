"""The ``init`` and ``prepare`` stages of ``benchmarks/scale.py``: a new user's project over the synthetic KG, as a
user would run it, timed from outside.

``init`` writes a project config naming the KG (triples, entity and relation labels, types, dated facts) and one
reference model, and runs ``kgprobe init`` on it (KG-FPQ domains and templates, GraphEval templates, Drowzee's
rules, the claim checker's relation file). ``prepare`` then adds what init does not write (the subgraph queries,
OKGQA, the perturbation section, ERBench over a table of ``--erbench-rows`` rows with three FDs, as
``benchmarks/erbench.py`` builds it) and runs ``kgprobe run --job prepare``: ingest and its checks, k-hop + PPR,
every suite's questions at the suites' default sizes, the triple scorer. Each is one ``kgprobe`` process; its wall
time and peak RSS (``RUSAGE_CHILDREN``: the stage runs in a child of its own, so the largest child is the command)
are the stage's, and the seconds of each Dagster step come from the run's event log.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
KG = "big"


def _kgprobe(args: list[str], folder: Path, log: Path) -> tuple[float, int]:
    env = {**os.environ, "DAGSTER_HOME": str(folder / "dagster"), "PYTHONPATH": str(REPO)}
    (folder / "dagster").mkdir(exist_ok=True)
    start = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        done = subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=folder, env=env, stdout=fh,
                              stderr=subprocess.STDOUT, check=False)
    return time.perf_counter() - start, done.returncode


def _peak_children_mib() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _triples(out: Path, files: dict[str, str]) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(out / files["triples"]).metadata.num_rows


def _tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def init_stage(out: Path, files: dict[str, str]) -> dict[str, Any]:
    """Write ``project/project.yaml`` naming the KG in ``files`` (keys: triples, format, entity_labels,
    relation_labels, entity_types, temporal) and run ``kgprobe init`` on it."""
    folder = out / "project"
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    folder.mkdir()
    kg: dict[str, Any] = {"format": files.get("format", "parquet"), "triples": [str(out / files["triples"])]}
    for key in ("entity_labels", "relation_labels", "entity_types"):
        if files.get(key):
            kg[key] = str(out / files[key])
    if files.get("temporal"):
        kg["temporal"] = [str(out / files["temporal"])]
    config = {"name": "scale", "seed": 0, "warehouse": "warehouse/kgprobe.duckdb", "kgs": {KG: kg},
              "models": [{"name": "oracle", "backend": "reference", "kind": "oracle"}]}
    (folder / "project.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    seconds, code = _kgprobe(["init", "--config", "project.yaml"], folder, out / "init.log")
    if code != 0:
        raise RuntimeError(f"kgprobe init failed (exit {code}):\n{_tail(out / 'init.log')}")
    written = yaml.safe_load((folder / "project.yaml").read_text(encoding="utf-8"))
    suites = sorted(written.get("suites") or {})
    return {"seconds": seconds, "cpu": _cpu_children(), "rate": _triples(out, files) / seconds, "unit": "triples/s",
            "peak_mib": _peak_children_mib(), "note": f"kgprobe init: suites {', '.join(suites)} written"}


def _erbench_spec(folder: Path, rows: int) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from erbench import _synthetic  # the 1M-row table of benchmarks/erbench.py: six columns, three FDs

    table = folder / "erdb"
    table.mkdir(exist_ok=True)
    path = folder / "erdb.yaml"
    path.write_text(yaml.safe_dump(_synthetic(table, rows), sort_keys=False), encoding="utf-8")
    return path


def prepare_stage(out: Path, files: dict[str, str], erbench_rows: int) -> dict[str, Any]:
    """Complete the config ``init_stage`` wrote (run first, untimed, when it did not run) and run its ``prepare``
    job; the seconds of each step."""
    folder = out / "project"
    if not (folder / "project.init-review.md").exists():
        init_stage(out, files)
    path = folder / "project.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    config["queries"] = {"kg": KG, "fpq_subjects": True, "okgqa_questions": True}
    suites = config.setdefault("suites", {})
    suites["okgqa"] = {"kg": KG, "relations": "project.relations.yaml"}
    suites["erbench"] = {"db": str(_erbench_spec(folder, erbench_rows))}
    config["perturbation"] = {"kg": KG}
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    before, cpu = time.time(), _cpu_children()
    seconds, code = _kgprobe(["run", "--config", "project.yaml", "--job", "prepare"], folder, out / "prepare.log")
    steps = _step_seconds(folder / "dagster", before)
    if code != 0:
        raise RuntimeError(f"kgprobe run --job prepare failed (exit {code}):\n{_tail(out / 'prepare.log')}")
    slowest = sorted(steps.items(), key=lambda kv: -kv[1])[:6]
    return {"seconds": seconds, "cpu": _cpu_children() - cpu, "rate": _triples(out, files) / seconds, "unit": "triples/s",
            "peak_mib": _peak_children_mib(), "steps": steps,
            "note": f"suites {', '.join(sorted(suites))}, ERBench {erbench_rows:,} rows; slowest steps: "
                    + ", ".join(f"{k} {v:.0f} s" for k, v in slowest)}


def _step_seconds(home: Path, since: float) -> dict[str, float]:
    """Seconds per step of the newest run in the Dagster instance at ``home`` that started after ``since``."""
    os.environ["DAGSTER_HOME"] = str(home)
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        runs = [r for r in instance.get_run_records(limit=5) if (r.start_time or 0) >= since - 1]
        if not runs:
            return {}
        stats = instance.get_run_step_stats(runs[0].dagster_run.run_id)
    return {s.step_key: (s.end_time or s.start_time or 0) - (s.start_time or 0) for s in stats if s.start_time}
