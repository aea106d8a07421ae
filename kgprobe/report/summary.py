"""What a finished run says on the console and in ``results.json``: the headline of every model × suite (value, 95%
interval, n), the warnings its checks raised, label coverage, and where the report is.

    >>> heads = closed_headlines(warehouse_root, cfg)
    >>> print(format_headlines(heads))
    >>> write_results(path, results_document(cfg, heads=heads, warnings=[], report=None, ok=True))
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from kgprobe import warehouse as wh
from kgprobe.report.leaderboard import headline_rows
from kgprobe.report.safe_text import console_text

__all__ = ["closed_headlines", "config_hash", "format_headlines", "format_job_seconds", "job_seconds", "results_document",
           "run_timing", "versions", "write_results"]

_PACKAGES = ("kgprobe", "dagster", "duckdb", "pyarrow", "pydantic")


def closed_headlines(root: str | Path, cfg: Any, *, suites: Sequence[Any] | None = None) -> list[dict[str, Any]]:
    """The closed-book headline of every model × enabled suite scored so far under the warehouse folder ``root``
    (read from the scores' metric partitions, so it needs no leaderboard run)."""
    from kgprobe.config import generation_models
    from kgprobe.suites import SUITES

    suites = list(suites) if suites is not None else [s for s in SUITES.values() if s.configured(cfg)]
    rows: list[dict[str, Any]] = []
    for suite in suites:
        asset = f"{suite.name}_scores_metrics"
        for dims in wh.partitions(root, asset):
            rows += wh.read_partition(root, asset, dims).to_pylist()
    return headline_rows(rows, suites, models=[m.name for m in generation_models(cfg)])


def _cell(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "-"
    value, lo, hi = row.get("value"), row.get("ci_low"), row.get("ci_high")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return f"n/a (n={row.get('n', 0)})"
    interval = "" if lo is None or hi is None or math.isnan(lo) or math.isnan(hi) else f" [{lo:.3f}, {hi:.3f}]"
    return f"{value:.3f}{interval} n={row.get('n', 0)}"


def format_headlines(heads: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text table, one row per model and one column per suite: ``value [ci_low, ci_high] n=N`` of the
    suite's headline metric (its label under the table); "(no scores)" when there is none. Names are shown by
    :func:`~kgprobe.report.safe_text.console_text` (no control or bidi character reaches the terminal)."""
    if not heads:
        return "(no scores)"
    models = list(dict.fromkeys(h["model"] for h in heads))
    suites = list(dict.fromkeys(h["suite"] for h in heads))
    cell = {(h["model"], h["suite"]): h for h in heads}
    table = [["model", *map(console_text, suites)]] + [[console_text(m), *(_cell(cell.get((m, s))) for s in suites)]
                                                       for m in models]
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    labels = {h["suite"]: (h["label"], h.get("interval", "")) for h in heads}
    lines += [console_text(f"  {s}: {label} (95% {kind or 'interval'})") for s, (label, kind) in labels.items()]
    return "\n".join(lines)


def config_hash(path: str | Path) -> str:
    """sha256 of the config file's bytes: which config produced a results file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def versions() -> dict[str, str]:
    """Python and the installed versions of kgprobe and the packages that shape its numbers."""
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name == "kgprobe":
                from kgprobe import __version__

                out[name] = __version__
    return out


def results_document(cfg: Any, *, heads: Iterable[Mapping[str, Any]], warnings: Iterable[Mapping[str, Any]],
                     report: str | Path | None, ok: bool, failed: str | None = None,
                     overrides: Mapping[str, Any] | None = None, labels: Iterable[Mapping[str, Any]] = (),
                     job: str = "", seconds: float | None = None,
                     runs: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:  # fmt: skip
    """The ``results.json`` of one run: the config (path and sha256), versions, the job and its overrides, whether
    it succeeded (and what failed), the headline metrics, the warnings, label coverage and the report's path (None
    after a failed run: an older report would not be this run's); with ``runs`` (:func:`run_timing` rows, one per
    Dagster run), where the time went: ``runs`` and ``job_seconds`` (wall seconds summed per job)."""
    keys = ("model", "suite", "task", "metric", "label", "value", "ci_low", "ci_high", "interval", "n")
    return {
        "project": cfg.name,
        "config": str(cfg.path),
        "config_sha256": config_hash(cfg.path),
        "versions": versions(),
        "job": job,
        "overrides": dict(overrides or {}),
        "succeeded": ok,
        "failed": failed,
        "seconds": None if seconds is None else round(seconds, 1),
        "job_seconds": job_seconds(runs),
        "runs": [dict(r) for r in runs],
        "headlines": [{k: h.get(k) for k in keys} for h in heads],
        "warnings": list(warnings),
        "labels": list(labels),
        "report": None if (report is None or not ok) else str(report),
    }


def run_timing(job: str, partitions: Sequence[str] | None, run_id: str, succeeded: bool, seconds: float,
               cpu_seconds: float | None = None) -> dict[str, Any]:
    """One Dagster run's row of ``results.json``'s ``runs``: the job, the partition keys it materialized (one, the
    keys of a range, or none), its run id, whether it succeeded, its wall seconds and the CPU seconds this process
    spent in it (all threads)."""
    return {"job": job, "partitions": list(partitions or []), "run_id": run_id, "succeeded": succeeded,
            "seconds": round(seconds, 2), "cpu_seconds": None if cpu_seconds is None else round(cpu_seconds, 2)}


def job_seconds(runs: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Wall seconds per job over ``runs`` (:func:`run_timing` rows), in the order the jobs first ran."""
    out: dict[str, float] = {}
    for r in runs:
        out[r["job"]] = round(out.get(r["job"], 0.0) + r["seconds"], 1)
    return out


def format_job_seconds(runs: Iterable[Mapping[str, Any]]) -> str:
    """``prepare 14s, perturb 2s (1 run), ...``: where a chain's time went, for the console."""
    runs = list(runs)
    counts: dict[str, int] = {}
    for r in runs:
        counts[r["job"]] = counts.get(r["job"], 0) + 1
    return ", ".join(f"{job} {secs:.0f}s" + (f" ({counts[job]} runs)" if counts[job] > 1 else "")
                     for job, secs in job_seconds(runs).items()) or "no runs"


def write_results(path: str | Path, document: Mapping[str, Any]) -> Path:
    """Write ``document`` as indented JSON (NaN as null) and return the path."""
    def clean(x: Any) -> Any:
        if isinstance(x, float) and math.isnan(x):
            return None
        if isinstance(x, Mapping):
            return {str(k): clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(clean(document), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
