"""The Wilson interval of a mean of [0, 1] scores (kgprobe.scoring.stats.wilson_mean_ci)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kgprobe.scoring.stats import accuracy, bootstrap_ci, wilson_ci, wilson_mean_ci


@pytest.mark.parametrize("value", [0.0, 0.25, 0.5, 0.9, 1.0])
def test_all_equal_scores_never_collapse_to_a_point(value: float) -> None:
    for n in range(1, 31):
        low, high = wilson_mean_ci([value] * n)
        assert 0.0 <= low <= value <= high <= 1.0
        assert high - low > 1e-3, (value, n, low, high)
        # while the percentile bootstrap of the same cell is a point
        assert bootstrap_ci([value] * n) == (value, value)


def test_interval_narrows_with_n_and_is_wilson_on_flags() -> None:
    widths = [np.subtract(*wilson_mean_ci([1.0] * n)[::-1]) for n in (1, 5, 30, 300)]
    assert widths == sorted(widths, reverse=True) and widths[-1] < 0.02
    rng = np.random.default_rng(4)
    for _ in range(20):
        flags = rng.integers(0, 2, size=int(rng.integers(1, 40)))
        assert wilson_mean_ci(flags.astype(float)) == pytest.approx(wilson_ci(int(flags.sum()), flags.size))
    assert accuracy([True, False, True], interval="wilson_mean").ci_low == pytest.approx(wilson_ci(2, 3)[0])


def test_known_values() -> None:
    # p = 0.5, n = 2, z = 1.959964: centre 0.5, half = z*sqrt(0.125 + z^2/16)/(1 + z^2/2)
    z = 1.959963984540054
    half = z * math.sqrt(0.25 / 2 + z * z / 16) / (1 + z * z / 2)
    assert wilson_mean_ci([0.2, 0.8]) == pytest.approx((0.5 - half, 0.5 + half))
    assert wilson_mean_ci([1.0, 1.0, 1.0])[0] == pytest.approx(0.43850, abs=1e-5)
    assert wilson_mean_ci([1.0, 1.0, 1.0])[1] == 1.0
    assert wilson_mean_ci([0.0] * 4)[0] == 0.0


def test_coverage_of_bounded_scores_is_at_least_nominal() -> None:
    rng = np.random.default_rng(11)
    hits = 0
    trials = 2000
    for _ in range(trials):
        x = rng.beta(0.5, 2.0, size=12)  # true mean 0.2, skewed scores in [0, 1]
        low, high = wilson_mean_ci(x)
        hits += low <= 0.2 <= high
    assert hits / trials >= 0.95


def test_empty_and_bad_input() -> None:
    assert all(math.isnan(v) for v in wilson_mean_ci([]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        wilson_mean_ci([0.5, 1.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        wilson_mean_ci([float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        wilson_mean_ci([0.5], confidence=1.0)
