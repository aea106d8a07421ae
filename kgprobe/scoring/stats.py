"""Statistics every suite shares: the hard vote of an item's samples, Wilson score intervals for proportions, the
Wilson interval of a mean of scores bounded in [0, 1], the seeded percentile bootstrap for other measures, Cohen's
kappa and the agreement of judges.

Every reported number has its n and a 95% interval: a proportion (an accuracy, an unknown share) gets
:func:`wilson_ci`, which never collapses to a point at 0/n or n/n; a mean of per-item scores in [0, 1] (a
GraphEval measure, a G-Eval score, a graph similarity) gets :func:`wilson_mean_ci`, which never collapses either;
any other measure gets :func:`bootstrap_ci`, seeded per row by :func:`row_seed` from the project seed and the row's
identity, so adding a model never moves another row's interval.

    >>> vote(["yes", "yes", "unknown"]), wilson_ci(3, 3)        # ('yes', (0.4385..., 1.0))
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

__all__ = [
    "ALL_MODELS",
    "INTERVALS",
    "Accuracy",
    "Interval",
    "accuracy",
    "bootstrap_ci",
    "cohen_kappa",
    "judge_agreement",
    "pooled_agreement",
    "row_seed",
    "vote",
    "wilson_ci",
    "wilson_mean_ci",
]

#: The kinds of interval a metric row may carry in its ``interval`` column: :func:`wilson_ci` for proportions,
#: :func:`bootstrap_ci` for other measures, :func:`wilson_mean_ci` for means of per-item scores in [0, 1].
INTERVALS: tuple[str, ...] = ("wilson", "bootstrap", "wilson_mean")


#: The ``interval`` argument of :func:`accuracy` and :func:`fpq_metrics` (``"wilson_mean"`` of 0/1 flags is
#: ``"wilson"``).
Interval = Literal["wilson", "bootstrap", "wilson_mean"]


_BOOTSTRAP_CHUNK = 5_000_000


def vote(labels: Sequence[str]) -> str:
    """Return the hard vote of an item's sample labels: the plurality label, or ``"unknown"`` on a tie or no samples.

    "unknown" is a label like any other, so it wins when it is the plurality and blocks a label it ties with:

        >>> vote(["yes", "yes", "unknown"]), vote(["yes", "unknown", "unknown"]), vote(["yes", "no", "unknown"])
        ('yes', 'unknown', 'unknown')
    """
    counts = Counter(labels).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return "unknown"
    return counts[0][0]


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Return the percentile bootstrap interval ``(low, high)`` of the mean of ``values`` (0/1 flags or floats).

    Call it for a measure that is not a proportion (a mean score, a mean similarity); a share of items takes
    :func:`wilson_ci`, because a bootstrap of a cell whose values are all equal is a point, claiming a certainty
    that a handful of items cannot give.

    ``resamples`` samples of size n are drawn with replacement by one seeded ``integers`` draw (in chunks of at most
    5M indices, which gives the same indices as one draw), so the interval is a function of the multiset of values
    and ``seed`` only. ``(nan, nan)`` when there are no values; ``(v, v)`` when all values equal v.

        >>> bootstrap_ci([1, 0, 1, 1], resamples=2000, seed=1)     # (0.25, 1.0)
    """
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"bootstrap_ci: resamples must be an integer >= 1, got {resamples!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"bootstrap_ci: confidence must be strictly between 0 and 1 (e.g. 0.95), got {confidence!r}")
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"bootstrap_ci: values must be one-dimensional, got shape {arr.shape}")
    n = arr.size
    if n == 0:
        return math.nan, math.nan
    if np.all(arr == arr[0]):
        return float(arr[0]), float(arr[0])
    # Sorted descending, a 0/1 sample is ones at indices < k, so the resampled sum is a count of small indices
    # (no gather); floats take the gather path over the same sorted array, so both paths draw the same resamples.
    arr = np.sort(arr)[::-1]
    binary = bool(np.all((arr == 0.0) | (arr == 1.0)))
    ones = int(np.count_nonzero(arr))
    rng = np.random.default_rng(seed)
    rows = max(1, _BOOTSTRAP_CHUNK // n)
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        if binary:
            means[start:stop] = np.count_nonzero(idx < ones, axis=1) / n
        else:
            means[start:stop] = arr[idx].mean(axis=1)
    alpha = (1.0 - float(confidence)) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def wilson_ci(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Return the Wilson score interval ``(low, high)`` of a proportion: ``successes`` out of ``n``.

    Call it for any share of items (an accuracy, an unknown share). With p = successes / n and z the normal
    quantile of ``(1 + confidence) / 2`` (1.96 at 95%), the bounds are
    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``. Unlike a percentile bootstrap, which resamples a
    cell of all-correct items into all-correct resamples and claims certainty, the interval never has zero width
    when 0 < n: at 0/n the low bound is 0 and the high bound above 0, at n/n the high bound is 1 and the low bound
    below 1. It always contains p. ``(nan, nan)`` when n == 0 (no items, no proportion).

        >>> wilson_ci(0, 10), wilson_ci(10, 10), wilson_ci(5, 10)    # (0, 0.2775), (0.7225, 1), (0.2366, 0.7634)

    Raises ValueError unless 0 <= successes <= n are integers and 0 < confidence < 1.
    """
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"wilson_ci: {name} must be an integer count, got {value!r}")
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_ci: expected 0 <= successes <= n, got successes={successes}, n={n}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"wilson_ci: confidence must be strictly between 0 and 1 (e.g. 0.95), got {confidence!r}")
    if n == 0:
        return math.nan, math.nan
    k, n = int(successes), int(n)
    return _wilson(k / n, n, confidence, at_zero=k == 0, at_one=k == n)


def _wilson(p: float, n: int, confidence: float, *, at_zero: bool, at_one: bool) -> tuple[float, float]:
    z = NormalDist().inv_cdf(0.5 + float(confidence) / 2.0)
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    # At 0/n and n/n the formula gives 0 and 1 up to rounding; pin them so a bound is never -1e-17 or 1 + 1e-16,
    # and keep p inside against rounding too (the quality suite checks ci_low <= value <= ci_high).
    low = 0.0 if at_zero else min(p, max(0.0, centre - half))
    high = 1.0 if at_one else max(p, min(1.0, centre + half))
    return low, high


def wilson_mean_ci(values: Sequence[float] | np.ndarray, *, confidence: float = 0.95) -> tuple[float, float]:
    """Return the Wilson interval ``(low, high)`` of the mean of per-item scores bounded in [0, 1].

    Call it for a mean of scores in [0, 1] (GraphEval's correctness / truthfulness / informativeness, OKGQA's
    fact precision and G-Eval scores, Drowzee's graph similarities), with n the number of items. A score X in
    [0, 1] with mean μ has variance at most μ(1 − μ) (X² <= X), the variance of a 0/1 flag of the same mean, so
    :func:`wilson_ci`'s formula with p = the mean is a valid (conservative) interval for the mean. Unlike a
    percentile bootstrap, which gives a point whenever every item scores the same (seven items all at 1.0 are
    not certainty), it has non-zero width for every n > 0: it is :func:`wilson_ci` on 0/1 scores.

        >>> wilson_mean_ci([1.0] * 3), wilson_mean_ci([0.5, 0.5])    # (0.4385, 1.0), (0.0945..., 0.9054...)

    ``(nan, nan)`` when there are no values. Raises ValueError for a value outside [0, 1] (or NaN) and for a
    confidence outside (0, 1).
    """
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"wilson_mean_ci: confidence must be strictly between 0 and 1 (e.g. 0.95), got {confidence!r}")
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"wilson_mean_ci: values must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        return math.nan, math.nan
    bad = ~((arr >= 0.0) & (arr <= 1.0))
    if bad.any():
        raise ValueError(f"wilson_mean_ci: every value must be a score in [0, 1], got {arr[bad][0]!r}; use "
                         "bootstrap_ci for a measure on another scale")
    mean = float(min(1.0, max(0.0, arr.mean())))
    return _wilson(mean, int(arr.size), confidence, at_zero=bool(np.all(arr == 0.0)),
                   at_one=bool(np.all(arr == 1.0)))


@dataclass(frozen=True)
class Accuracy:
    """A share of correct items with its interval; ``value`` and the bounds are NaN when n == 0.

    ``interval`` names how the bounds were computed: ``"wilson"`` (:func:`wilson_ci`), ``"bootstrap"``
    (:func:`bootstrap_ci`) or ``"wilson_mean"`` (:func:`wilson_mean_ci`, equal to Wilson's on flags).
    """

    value: float
    n: int
    correct: int
    ci_low: float
    ci_high: float
    interval: str = "wilson"


def accuracy(
    correct: Sequence[bool],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    interval: Interval = "wilson",
) -> Accuracy:
    """Return the share of True flags in ``correct`` with its interval: what a metric row reports for its items.

    ``interval="wilson"`` (the default) gives the Wilson score interval (:func:`wilson_ci`), the right interval for
    a proportion: it does not collapse to a point on small all-correct or all-wrong cells. ``resamples`` and
    ``seed`` are then unused; they are kept so that existing calls still work, and they drive the percentile
    bootstrap of ``interval="bootstrap"`` (:func:`bootstrap_ci`), which reproduces the intervals of earlier
    releases.

        >>> accuracy([True, True, False])   # Accuracy(value=0.666..., n=3, correct=2, ci_low=0.208, ci_high=0.939, ...)
        >>> accuracy([True] * 3)            # ci_low=0.438..., ci_high=1.0: three of three is not certainty

    Raises ValueError for an unknown ``interval`` and for the arguments its interval function rejects.
    """
    if interval not in INTERVALS:
        raise ValueError(f"accuracy: interval must be one of {', '.join(INTERVALS)}, got {interval!r}")
    flags = np.asarray([bool(c) for c in correct], dtype=np.float64)
    n = int(flags.size)
    hits = int(flags.sum())
    if interval in ("wilson", "wilson_mean"):  # the Wilson interval of the mean of 0/1 flags is Wilson's
        low, high = wilson_ci(hits, n, confidence=confidence)
    else:
        low, high = bootstrap_ci(flags, resamples=resamples, confidence=confidence, seed=seed)
    return Accuracy(value=hits / n if n else math.nan, n=n, correct=hits, ci_low=low, ci_high=high, interval=interval)


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Return Cohen's kappa of two raters' labels on the same items: agreement beyond what chance would give.

    kappa = (p_o - p_e) / (1 - p_e), with p_o the observed share of agreement and p_e the agreement expected from
    each rater's label frequencies; computed on integer counts, so textbook examples come out exact. NaN when
    there are no items. When p_e == 1 (both raters gave every item one and the same label) the formula is 0/0;
    that is perfect agreement, so 1.0 is returned.

        >>> cohen_kappa(["yes"] * 25 + ["no"] * 25, ["yes"] * 20 + ["no"] * 15 + ["yes"] * 10 + ["no"] * 5)  # 0.4
    """
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa: the raters labelled different numbers of items ({len(a)} vs {len(b)}); "
                         "pass the two raters' labels of the same items in the same order")
    n = len(a)
    if n == 0:
        return math.nan
    agree = sum(x == y for x, y in zip(a, b))
    count_a, count_b = Counter(a), Counter(b)
    chance = sum(count_a[label] * count_b[label] for label in count_a)  # n^2 * p_e
    if chance == n * n:
        return 1.0
    return (n * agree - chance) / (n * n - chance)


def row_seed(seed: int, *identity: Any) -> int:
    # Python's hash() is salted per process; a digest keeps intervals identical across runs and machines.
    digest = hashlib.sha256(json.dumps([seed, *identity], separators=(",", ":")).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def judge_agreement(item_rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return one row per (model, perturbation, judge pair) of the judged item rows (those with a ``judge``): how far
    two judges agree.

    Over the items both judges decided (vote not "unknown"): ``n``, ``agreement`` (share of equal votes) and
    ``kappa`` (:func:`cohen_kappa` of the votes); both NaN when n == 0. ``judge_a`` < ``judge_b``; rows sorted by
    (model, perturbation, judge_a, judge_b). A (model, perturbation) with one judge gets no row.
    """
    votes: dict[tuple[str, str], dict[str, dict[str, str]]] = {}
    for row in item_rows:
        if not row.get("judge"):  # read answers have no judge; only judged ones can agree or not
            continue
        per_judge = votes.setdefault((row["model"], row["perturbation"]), {})
        per_judge.setdefault(row.get("judge") or "", {})[row["item_id"]] = row["vote"]
    out: list[dict[str, Any]] = []
    for (model, perturbation), per_judge in sorted(votes.items()):
        for judge_a, judge_b in itertools.combinations(sorted(per_judge), 2):
            va, vb = per_judge[judge_a], per_judge[judge_b]
            both = sorted(i for i in va.keys() & vb.keys() if va[i] != "unknown" and vb[i] != "unknown")
            a, b = [va[i] for i in both], [vb[i] for i in both]
            out.append({
                "model": model,
                "perturbation": perturbation,
                "judge_a": judge_a,
                "judge_b": judge_b,
                "n": len(both),
                "agreement": sum(x == y for x, y in zip(a, b)) / len(both) if both else math.nan,
                "kappa": cohen_kappa(a, b),
            })
    return out


#: The model name of agreement rows pooled over every model (and level) of a setting.
ALL_MODELS = "all models"


def pooled_agreement(item_rows: Sequence[Mapping[str, Any]], *, perturbation: str | None = None) -> list[dict[str, Any]]:
    """Cohen's kappa of every pair of judges over the judged items of every model together (``model`` = "all
    models"; ``perturbation`` given: all levels together under that name). Within one model a judge often gives one
    verdict to every answer (a model that always accepts the premise), which makes a per-model kappa degenerate;
    pooled, the judges see answers of every kind."""
    # an answer is (model, level, item): the same item answered by two models is two answers to judge
    rows = [{**r, "item_id": f"{r['model']}|{r['perturbation']}|{r['item_id']}", "model": ALL_MODELS,
             **({"perturbation": perturbation} if perturbation else {})}
            for r in item_rows if r.get("judge")]
    return judge_agreement(rows)
