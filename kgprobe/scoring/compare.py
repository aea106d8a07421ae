"""Paired comparison of two models on the items both answered: the difference in the share of correct items, a
seeded paired bootstrap interval of that difference (a paired score interval where a bootstrap would be a point or
rest on a handful of pairs), and McNemar's exact test.

Two models' cells are only comparable on the same items: a model run with its own ``limit`` answers fewer items
than another, and its accuracy on those is not the other's on more. :func:`compare_models` pairs the per-item rows
of a suite's scores table (one row per item, model, perturbation, task and judge, with ``correct``) on
``item_id``, overall and per breakdown cell of the suite's metric rows (the cell's items are the union of the
``item_ids`` of every model's rows of that breakdown: which items a cell holds is a property of the items), and reports each pair with :func:`paired_difference`.

    >>> paired_difference({"q1": 1, "q2": 1, "q3": 0}, {"q1": 0, "q2": 1, "q4": 1})["n"]     # 2 items in common
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest

from kgprobe.report.safe_text import console_text
from kgprobe.scoring.stats import row_seed, wilson_mean_ci

__all__ = ["compare_models", "format_comparison", "mcnemar_exact", "paired_bootstrap_ci", "paired_difference",
           "paired_score_ci", "pairwise", "read_scores"]

#: Below this many pairs the percentile bootstrap is replaced by :func:`paired_score_ci`: resampling three pairs
#: gives a handful of distinct means, and one pair gives a point.
MIN_BOOTSTRAP_PAIRS = 10


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided p-value of McNemar's exact test: ``b`` items only the first model got right, ``c`` only the
    second. Under the null each discordant item is a fair coin, so p = P(Binomial(b + c, 1/2) as extreme as b);
    1.0 when there are no discordant items.

        >>> mcnemar_exact(0, 6), mcnemar_exact(3, 3)     # (0.03125, 1.0)
    """
    for name, v in (("b", b), ("c", c)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"mcnemar_exact: {name} must be a count >= 0, got {v!r}")
    if b + c == 0:
        return 1.0
    return float(min(1.0, binomtest(int(b), int(b + c), 0.5, alternative="two-sided").pvalue))


def paired_bootstrap_ci(a: Sequence[float], b: Sequence[float], *, resamples: int = 1000, confidence: float = 0.95,
                        seed: int = 0) -> tuple[float, float]:  # fmt: skip
    """Percentile interval of mean(a) − mean(b) over ``resamples`` resamples of the item pairs (one seeded draw of
    indices per resample, the same index picks both models' scores). ``(nan, nan)`` without pairs. When every pair
    has the same difference the interval is that point; the p-value of :func:`mcnemar_exact` says how much a
    handful of such items shows."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired_bootstrap_ci: a and b must be paired one-dimensional scores, got shapes "
                         f"{x.shape} and {y.shape}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"paired_bootstrap_ci: confidence must be strictly between 0 and 1, got {confidence!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"paired_bootstrap_ci: resamples must be an integer >= 1, got {resamples!r}")
    n = x.size
    if n == 0:
        return math.nan, math.nan
    d = x - y
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    rows = max(1, 5_000_000 // n)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        means[start:stop] = d[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    alpha = (1.0 - float(confidence)) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    diff = float(d.mean())
    return float(min(low, diff)), float(max(high, diff))


def paired_score_ci(a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95) -> tuple[float, float]:
    """Interval of mean(a) − mean(b) for paired scores in [0, 1] that never collapses to a point.

    Newcombe's hybrid score interval for a paired difference (Newcombe 1998, method 10; the MOVER construction of
    Zou and Donner): each mean's Wilson interval (:func:`~kgprobe.scoring.stats.wilson_mean_ci`, Wilson's on 0/1
    scores), combined with the correlation r of the pairs,
    ``low = d − sqrt((p1 − l1)² − 2r(p1 − l1)(u2 − p2) + (u2 − p2)²)`` and symmetrically for ``high``. For 0/1
    scores r is the phi coefficient with Newcombe's continuity correction (ad − bc shrunk by n/2 towards 0 when
    positive); for other scores Pearson's r (0 when a side is constant). One pair where A is wrong and B right gives
    about [−1, +0.12], not [−1, −1]. ``(nan, nan)`` without pairs.

        >>> paired_score_ci([0], [1])     # (-1.0, 0.1208...)
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired_score_ci: a and b must be paired one-dimensional scores, got shapes "
                         f"{x.shape} and {y.shape}")
    n = x.size
    if n == 0:
        return math.nan, math.nan
    l1, u1 = wilson_mean_ci(x, confidence=confidence)
    l2, u2 = wilson_mean_ci(y, confidence=confidence)
    p1, p2 = float(x.mean()), float(y.mean())
    if np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all():
        both = float(np.sum((x == 1) & (y == 1)))
        a_only = float(np.sum((x == 1) & (y == 0)))
        b_only = float(np.sum((x == 0) & (y == 1)))
        neither = float(np.sum((x == 0) & (y == 0)))
        cross = both * neither - a_only * b_only
        if cross > 0:
            cross = max(cross - n / 2.0, 0.0)
        denom = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
        r = cross / math.sqrt(denom) if denom > 0 else 0.0
    else:
        r = float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 and y.std() > 0 else 0.0
    return _mover(p1, (l1, u1), p2, (l2, u2), r)


def _mover(p1: float, ci1: tuple[float, float], p2: float, ci2: tuple[float, float], r: float) -> tuple[float, float]:
    """p1 − p2 with the interval recovered from each estimate's own interval and their correlation r (MOVER);
    with r = 0 it is Newcombe's hybrid score interval for independent proportions."""
    (l1, u1), (l2, u2) = ci1, ci2
    d = p1 - p2
    below = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * r * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    above = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * r * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return max(-1.0, d - below), min(1.0, d + above)


def paired_difference(a: Mapping[str, float | bool], b: Mapping[str, float | bool], *, resamples: int = 1000,
                      confidence: float = 0.95, seed: int = 0) -> dict[str, Any]:  # fmt: skip
    """Compare two models' per-item scores (item_id -> 0/1 correct, or a score in [0, 1]) on the items both have.

    Returns ``n`` (items in common), ``only_a`` / ``only_b`` (items one model has and the other lacks: left out),
    ``a`` / ``b`` (their means on the common items), ``diff`` (a − b) with ``ci_low`` / ``ci_high``
    (:func:`paired_bootstrap_ci`, ``interval = "paired_bootstrap"``; :func:`paired_score_ci`,
    ``interval = "paired_score"``, when fewer than :data:`MIN_BOOTSTRAP_PAIRS` pairs or every pair differs by the
    same amount, where a bootstrap would claim certainty), and for 0/1 scores ``a_only`` / ``b_only``
    (discordant items) and ``p_value`` (:func:`mcnemar_exact`; None for other scores)."""
    common = sorted(a.keys() & b.keys())
    x = [float(a[i]) for i in common]
    y = [float(b[i]) for i in common]
    interval = "paired_bootstrap"
    if len(common) < MIN_BOOTSTRAP_PAIRS or len({u - v for u, v in zip(x, y)}) <= 1:
        interval = "paired_score"
        low, high = paired_score_ci(x, y, confidence=confidence)
    else:
        low, high = paired_bootstrap_ci(x, y, resamples=resamples, confidence=confidence, seed=seed)
    binary = all(v in (0.0, 1.0) for v in (*x, *y))
    a_only = sum(1 for u, v in zip(x, y) if u > v) if binary else None
    b_only = sum(1 for u, v in zip(x, y) if v > u) if binary else None
    n = len(common)
    return {"n": n, "only_a": len(a.keys() - b.keys()), "only_b": len(b.keys() - a.keys()),
            "a": sum(x) / n if n else math.nan, "b": sum(y) / n if n else math.nan,
            "diff": (sum(x) - sum(y)) / n if n else math.nan, "ci_low": low, "ci_high": high,
            "interval": interval, "a_only": a_only, "b_only": b_only,
            "p_value": mcnemar_exact(a_only, b_only) if binary and n else None}


#: The judges of the offline reading: no judge model (a suite's own reader, or the heuristic claim extractor).
_OFFLINE = ("", "heuristic")


def _breakdown(row: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    raw = row.get("breakdown") or {}
    pairs = raw.items() if isinstance(raw, Mapping) else raw
    return tuple(sorted((str(k), str(v)) for k, v in pairs if v is not None))


def compare_models(items: Iterable[Mapping[str, Any]], metrics: Iterable[Mapping[str, Any]], model_a: str,
                   model_b: str, *, perturbation: str = "none", judge: str | None = None, resamples: int = 1000,
                   confidence: float = 0.95, seed: int = 0) -> list[dict[str, Any]]:  # fmt: skip
    """Paired comparison rows of ``model_a`` against ``model_b``, per (suite, task) overall and per breakdown cell.

    ``items``: per-item score rows (``suite``, ``task``, ``item_id``, ``model``, ``perturbation``, ``judge``,
    ``correct``), a suite's scores table; ``metrics``: the suite's metric rows, whose ``breakdown`` and
    ``item_ids`` name each breakdown cell's items (the union over every model's rows). Rows of other models,
    perturbations and judges are ignored; ``judge`` None takes the offline reading, the rows without a judge model
    (judge "" or "heuristic", the claim extractor OKGQA and Drowzee read answers with when no judge is set).
    Each output row is :func:`paired_difference` of the cell plus ``suite``, ``task``, ``breakdown`` (dict),
    ``model_a`` and ``model_b``, seeded per cell by :func:`~kgprobe.scoring.stats.row_seed`; sorted by suite,
    task, then overall first and breakdowns by name."""
    judges = _OFFLINE if judge is None else (judge,)
    flags: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    for r in items:
        if r["model"] not in (model_a, model_b) or str(r.get("perturbation") or "none") != perturbation \
                or str(r.get("judge") or "") not in judges or r.get("correct") is None:
            continue
        flags.setdefault((str(r["suite"]), str(r["task"])), {}).setdefault(r["model"], {})[str(r["item_id"])] = \
            float(bool(r["correct"]))
    cells: dict[tuple[str, str], dict[tuple[tuple[str, str], ...], set[str]]] = {}
    for m in metrics:
        bd = _breakdown(m)
        if not bd or str(m.get("judge") or "") not in judges \
                or str(m.get("perturbation") or "none") != perturbation:
            continue
        cells.setdefault((str(m["suite"]), str(m["task"])), {}).setdefault(bd, set()).update(
            str(i) for i in (m.get("item_ids") or ()))
    out = []
    for (suite, task), per_model in sorted(flags.items()):
        a, b = per_model.get(model_a, {}), per_model.get(model_b, {})
        if not a or not b:
            continue
        for bd, members in [((), None), *sorted(cells.get((suite, task), {}).items())]:
            pa_ = a if members is None else {k: v for k, v in a.items() if k in members}
            pb_ = b if members is None else {k: v for k, v in b.items() if k in members}
            if not pa_ and not pb_:
                continue
            seed_ = row_seed(seed, "compare", suite, task, model_a, model_b, perturbation, judge or "", list(bd))
            out.append({"suite": suite, "task": task, "breakdown": dict(bd), "model_a": model_a,
                        "model_b": model_b, **paired_difference(pa_, pb_, resamples=resamples,
                                                                 confidence=confidence, seed=seed_)})
    return out


def read_scores(root: str | Path, suite: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A suite's closed-book per-item rows (``<suite>_scores``, with ``suite`` filled in) and metric rows
    (``<suite>_scores_metrics``) from every partition written under the warehouse folder ``root``; two empty lists
    when the suite has not been scored there."""
    from kgprobe import warehouse as wh

    out: list[list[dict[str, Any]]] = []
    for asset in (f"{suite}_scores", f"{suite}_scores_metrics"):
        rows: list[dict[str, Any]] = []
        for dims in wh.partitions(root, asset):
            table = wh.read_partition(root, asset, dims)
            keep = [c for c in table.column_names if c not in ("labels", "response_ids", "text")]
            rows += [{**dims, **r, "suite": suite} for r in table.select(keep).to_pylist()]
        out.append(rows)
    return out[0], out[1]


def _ci(r: Mapping[str, Any]) -> str:
    mark = "*" if r.get("interval") == "paired_score" else ""
    return f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]{mark}"


def format_comparison(rows: Sequence[Mapping[str, Any]], confidence: float = 0.95) -> str:
    """The rows of :func:`compare_models` as a plain-text table, one line per (suite, task, breakdown); breakdown
    cells where the two models share no item are counted on a last line instead of printed as empty rows."""
    level = f"{confidence:.0%}"
    head = (f"{'suite':<10} {'task':<15} {'breakdown':<28} {'n':>5} {'A':>6} {'B':>6} {'A-B':>7} "
            f"{level + ' paired interval':>26} {'A only':>6} {'B only':>6} {'McNemar p':>9}  left out (A, B)")
    lines = [head]
    empty = 0
    for r in rows:
        if not r["n"] and r["breakdown"]:
            empty += 1
            continue
        bd = console_text(", ".join(f"{k}={v}" for k, v in r["breakdown"].items()) or "(overall)")
        p = "–" if r["p_value"] is None else f"{r['p_value']:.3g}"
        lines.append(f"{console_text(r['suite']):<10} {console_text(r['task']):<15} {bd[:28]:<28} {r['n']:>5} {r['a']:>6.3f} {r['b']:>6.3f} "
                     f"{r['diff']:>+7.3f} {_ci(r):>26} "
                     f"{r['a_only'] if r['a_only'] is not None else '–':>6} "
                     f"{r['b_only'] if r['b_only'] is not None else '–':>6} {p:>9}  ({r['only_a']}, {r['only_b']})")
    if empty:
        lines.append(f"({empty} breakdown cells with no item both models answered are not shown)")
    if any(r.get("interval") == "paired_score" for r in rows if r["n"]):
        lines.append(f"(* Newcombe's paired score interval: fewer than {MIN_BOOTSTRAP_PAIRS} pairs, or every pair "
                     "differs by the same amount; otherwise a seeded paired bootstrap)")
    return "\n".join(lines)


def pairwise(items: Sequence[Mapping[str, Any]], metrics: Sequence[Mapping[str, Any]], models: Sequence[str], *,
             resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> list[dict[str, Any]]:  # fmt: skip
    """:func:`compare_models` of every pair of ``models`` (A before B in the order given) that both have rows."""
    present = {str(r["model"]) for r in items}
    shown = [m for m in models if m in present]
    out: list[dict[str, Any]] = []
    for i, a in enumerate(shown):
        for b in shown[i + 1:]:
            out += compare_models(items, metrics, a, b, resamples=resamples, confidence=confidence, seed=seed)
    return out
