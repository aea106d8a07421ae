"""The leaderboard across suites: every suite's metric rows in one long table, one row per model and suite with its
headline, and a wide table per suite (one row per model, or per model and perturbation when grounded).

Metric rows are in the common schema (:data:`kgprobe.suites.base.METRIC_SCHEMA`), with a ``setting`` column
(``closed`` or ``grounded``). A row's ``breakdown`` (a MAP, read back from Arrow or DuckDB as ``[(key, value),
...]`` or as a dict) is empty for a suite's overall numbers.

    >>> heads = headline_rows(metrics, SUITES.values(), models=["oracle", "random"])
    >>> wide = suite_table(metrics, "grapheval", setting="closed")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgprobe.scoring.tables import breakdown_of, expand_breakdown, overall, suite_table

__all__ = ["breakdown_of", "expand_breakdown", "headline_rows", "item_sets", "overall", "suite_table"]


def headline_rows(metrics: Iterable[Mapping[str, Any]], suites: Iterable[Any], *, models: Sequence[str] = (),
                  setting: str = "closed") -> list[dict[str, Any]]:  # fmt: skip
    """One row per (model, suite) that has the suite's headline metric (its ``headline`` task and metric, read
    directly, not judged, or by the headline's own ``judge``, at perturbation ``none`` in ``setting``): value,
    interval, its kind and n, and ``same_items`` / ``n_shared`` (:func:`item_sets` of the suite's headline rows
    across models). Models follow
    ``models`` (then name order), suites the order given."""
    suites = list(suites)
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    for row in metrics:
        if row.get("setting", "closed") != setting or (row.get("perturbation") or "none") != "none":
            continue
        for s in suites:
            h = s.headline
            if (row["suite"], row["task"], row["metric"], row.get("judge") or "") == \
                    (s.name, h.task, h.metric, getattr(h, "judge", "")) \
                    and overall(row):
                found[(str(row["model"]), s.name)] = row
    order = [m for m in models if any(k[0] == m for k in found)] + sorted({k[0] for k in found} - set(models))
    fair = {s.name: item_sets([r for (_m, name), r in found.items() if name == s.name]) for s in suites}
    out = []
    for model in order:
        for s in suites:
            row = found.get((model, s.name))
            if row is None:
                continue
            out.append({"model": model, "suite": s.name, "title": s.title, "task": s.headline.task,
                        "judge": getattr(s.headline, "judge", ""), "metric": s.headline.metric,
                        "label": s.headline.label, "higher_is_better": bool(row["higher_is_better"]),
                        "value": row["value"], "ci_low": row["ci_low"], "ci_high": row["ci_high"],
                        "interval": row["interval"], "n": row["n"], **fair[s.name]})
    return out


def item_sets(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Whether the metric rows of one table column (one per model) stand on the same items: ``same_items``
    (None when a row has no ``item_ids``) and ``n_shared``, the items every one of them has. Two models' values
    are comparable only on the same items; a model run with its own ``limit`` answers fewer. Rows with n = 0 are
    left out."""
    # a row without items (n = 0: nothing qualified, as no gated FPQ of a model that never says yes) compares nothing
    sets = [r.get("item_ids") for r in rows if r.get("n") != 0]
    if not sets or any(s is None for s in sets):
        return {"same_items": None, "n_shared": None}
    sets = [frozenset(map(str, s)) for s in sets]
    return {"same_items": len(set(sets)) == 1, "n_shared": len(frozenset.intersection(*sets))}
