"""Helpers for the long and wide metric tables, below the suites and the report that both build them: a row's
breakdown as a dict or as columns, whether a row is a suite's overall number, SQL-safe column names and a suite's
wide table.

    >>> wide = suite_table(metrics, "grapheval", setting="closed")
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["breakdown_of", "expand_breakdown", "overall", "sql_name", "suite_table"]

_NOT_SQL = re.compile(r"[^A-Za-z0-9_]")


def breakdown_of(row: Mapping[str, Any]) -> dict[str, str]:
    """An item's or metric row's breakdown as a dict, whether it came as a dict, as the ``(key, value)`` pairs a MAP
    reads back as from Arrow or DuckDB, or as null."""
    b = row.get("breakdown") or {}
    pairs = b.items() if isinstance(b, Mapping) else b
    return {str(k): str(v) for k, v in pairs if v is not None}


def sql_name(name: str) -> str:
    """Return ``name`` as a SQL identifier: every character outside [A-Za-z0-9_] becomes ``_``.

    ``sql_name("gen_fpq_accuracy__gpt-4o")`` -> ``"gen_fpq_accuracy__gpt_4o"``; the leaderboard's column names.
    """
    out = _NOT_SQL.sub("_", str(name))
    return "_" + out if not out or out[0].isdigit() else out


def overall(row: Mapping[str, Any]) -> bool:
    """Whether a metric row is a suite's overall number (no breakdown)."""
    return not breakdown_of(row)


def expand_breakdown(rows: Iterable[Mapping[str, Any]], keys: Sequence[str] = ("domain", "method", "hop"),
                     ) -> list[dict[str, Any]]:  # fmt: skip
    """Rows with each breakdown key of ``keys`` as its own column (None where absent; ``hop`` as an int) and
    ``correct`` (round(value × n)): the shape the KG-FPQ report section and wide tables read."""
    out = []
    for row in rows:
        b = breakdown_of(row)
        r = dict(row)
        for k in keys:
            value = b.get(k)
            r[k] = int(value) if (k == "hop" and value is not None) else value
        n, value = row.get("n") or 0, row.get("value")
        r["correct"] = 0 if not n or value is None or math.isnan(value) else int(round(value * n))
        out.append(r)
    return out


def suite_table(metrics: Iterable[Mapping[str, Any]], suite: str, *, setting: str = "closed",
                models: Sequence[str] = ()) -> list[dict[str, Any]]:  # fmt: skip
    """A suite's wide leaderboard table: one row per model (and perturbation, when grounded), and for each
    overall metric of a (task, judge) a column ``<task>__<metric>`` (``__<judge>`` appended for judged rows) with
    ``_lo``, ``_hi``, ``_n`` and ``_interval`` beside it. Column names are SQL identifiers."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for m in metrics:
        if m["suite"] != suite or m.get("setting", "closed") != setting or not overall(m):
            continue
        key = (str(m["model"]), str(m.get("perturbation") or "none"))
        stem = sql_name(f"{m['task']}__{m['metric']}" + (f"__{m['judge']}" if m.get("judge") else ""))
        row = rows.setdefault(key, {"model": key[0], **({"perturbation": key[1]} if setting != "closed" else {})})
        row[stem], row[f"{stem}_lo"], row[f"{stem}_hi"] = m["value"], m["ci_low"], m["ci_high"]
        row[f"{stem}_n"], row[f"{stem}_interval"] = m["n"], m["interval"]
    columns = sorted({c for r in rows.values() for c in r} - {"model", "perturbation"})
    rank = {m: i for i, m in enumerate(models)}
    ordered = sorted(rows, key=lambda k: (rank.get(k[0], len(rank)), k[0], k[1]))
    return [{**{"model": rows[k]["model"]}, **({"perturbation": k[1]} if setting != "closed" else {}),
             **{c: rows[k].get(c) for c in columns}} for k in ordered]
