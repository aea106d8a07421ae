"""Votes, Wilson and bootstrap intervals, Cohen's kappa, item rows and metric rows of kgprobe.suites.fpq.metrics."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

import kgprobe.scoring.stats as metrics_module
from kgprobe.suites.fpq.edits import ALL_METHODS
from kgprobe.suites.fpq.metrics import METRICS, fpq_metrics, score_items
from kgprobe.scoring.stats import INTERVALS, Accuracy, accuracy, bootstrap_ci, cohen_kappa, judge_agreement, vote, wilson_ci
from kgprobe.grounding.perturb import PerturbError

# ---- vote ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["yes", "yes", "unknown"], "yes"),  # plurality wins
        (["yes", "unknown", "unknown"], "unknown"),  # unknown is a label and can be the plurality
        (["yes", "no", "unknown"], "unknown"),  # three-way tie
        (["yes", "no"], "unknown"),  # two-way tie
        (["yes", "yes", "no", "no", "unknown"], "unknown"),  # tie for the top, not for last
        (["no", "no", "yes"], "no"),
        (["unknown", "unknown", "unknown"], "unknown"),
        ([], "unknown"),  # no samples
        (["no"], "no"),
        (["idk", "idk", "true", "false"], "idk"),  # any label set
        (["true", "true", "idk", "false"], "true"),
        (["false", "idk", "idk", "false", "true"], "unknown"),
    ],
)
def test_vote(labels: list[str], expected: str) -> None:
    assert vote(labels) == expected


# ---- bootstrap_ci and accuracy -------------------------------------------------------------------------------


def test_bootstrap_is_deterministic_per_seed() -> None:
    values = [1] * 13 + [0] * 7
    first = bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3) == first
    assert bootstrap_ci(list(reversed(values)), seed=3) == first  # the order of the values does not matter
    # means of 20 flags are multiples of 0.05, so 1000 resamples pin the 2.5% and 97.5% points whatever the seed;
    # more flags, or floats, show the seed
    flags = [1] * 137 + [0] * 74
    assert bootstrap_ci(flags, seed=0) != bootstrap_ci(flags, seed=1)
    floats = np.random.default_rng(0).normal(size=30)
    assert bootstrap_ci(floats, seed=3) == bootstrap_ci(floats, seed=3) != bootstrap_ci(floats, seed=4)
    low, high = first
    assert 0.0 <= low < 0.65 < high <= 1.0


def test_bootstrap_coverage_matches_the_normal_approximation() -> None:
    p, n = 0.7, 200
    values = [1] * int(p * n) + [0] * (n - int(p * n))
    low, high = bootstrap_ci(values, resamples=2000, seed=11)
    assert low < p < high
    expected = 2 * 1.96 * math.sqrt(p * (1 - p) / n)
    assert abs((high - low) - expected) / expected < 0.25
    assert abs((low + high) / 2 - p) < 0.02  # roughly centred


def test_bootstrap_of_floats_lies_within_the_values() -> None:
    values = [0.2, 0.5, 0.9, 0.4, 0.7]
    low, high = bootstrap_ci(values, resamples=500, seed=0)
    assert 0.2 <= low < float(np.mean(values)) < high <= 0.9
    assert bootstrap_ci(np.asarray(values), resamples=500, seed=0) == (low, high)


@pytest.mark.parametrize("values", [[1, 0, 1, 1, 0, 1, 1], [0.25, 0.5, 1.5, 2.0, 0.0]])
def test_bootstrap_chunking_draws_the_same_resamples(values: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    whole = bootstrap_ci(values, resamples=300, seed=5)
    monkeypatch.setattr(metrics_module, "_BOOTSTRAP_CHUNK", 20)  # 2 resamples per chunk
    assert bootstrap_ci(values, resamples=300, seed=5) == whole


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1, 1, 1], (1.0, 1.0)),
        ([0, 0], (0.0, 0.0)),
        ([0.1] * 7, (0.1, 0.1)),  # exactly v, no rounding from a mean
        ([True], (1.0, 1.0)),
    ],
)
def test_bootstrap_of_equal_values_is_a_point(values: list[float], expected: tuple[float, float]) -> None:
    assert bootstrap_ci(values) == expected


def test_bootstrap_of_nothing_is_nan() -> None:
    low, high = bootstrap_ci([])
    assert math.isnan(low) and math.isnan(high)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"resamples": 0}, "resamples"),
        ({"resamples": 2.5}, "resamples"),
        ({"confidence": 0.0}, "confidence"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 95}, "confidence"),
    ],
)
def test_bootstrap_validates_its_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_ci([0, 1], **kwargs)


def test_wider_confidence_gives_a_wider_interval() -> None:
    values = [1] * 30 + [0] * 20
    low90, high90 = bootstrap_ci(values, confidence=0.9, seed=2)
    low99, high99 = bootstrap_ci(values, confidence=0.99, seed=2)
    assert low99 <= low90 and high90 <= high99 and (high99 - low99) > (high90 - low90)


# ---- wilson_ci -----------------------------------------------------------------------------------------------


def _wilson_roots(k: int, n: int, confidence: float) -> tuple[float, float]:
    """The Wilson bounds as the roots in p of (k/n - p)^2 = z^2 p (1 - p) / n, z from scipy's normal quantile.

    Rearranged: (1 + z^2/n) p^2 - (2 k/n + z^2/n) p + (k/n)^2 = 0; solved by numpy, independently of wilson_ci.
    """
    z = float(norm.ppf(1 - (1 - confidence) / 2))
    phat, z2n = k / n, z * z / n
    roots = np.sort(np.roots([1 + z2n, -(2 * phat + z2n), phat * phat]).real)
    return float(roots[0]), float(roots[1])


@pytest.mark.parametrize(
    ("k", "n", "expected"),
    [
        # published 95% values (e.g. statsmodels proportion_confint(method="wilson")), to 4 decimals
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),
        (5, 10, (0.2366, 0.7634)),
        (3, 3, (0.4385, 1.0)),
        (81, 263, (0.2553, 0.3662)),  # Wilson's example in Newcombe (1998), method 3
    ],
)
def test_wilson_matches_known_values(k: int, n: int, expected: tuple[float, float]) -> None:
    low, high = wilson_ci(k, n)
    assert (low, high) == pytest.approx(expected, abs=5e-5)


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 7), (1, 7), (3, 7), (7, 7), (12, 40), (997, 1000)])
def test_wilson_solves_the_score_equation(k: int, n: int, confidence: float) -> None:
    low, high = wilson_ci(k, n, confidence=confidence)
    assert (low, high) == pytest.approx(_wilson_roots(k, n, confidence), abs=1e-9)
    # never a point when there are items: 0 of n is certainly not "0 exactly", n of n not "1 exactly"
    assert 0.0 <= low <= k / n <= high <= 1.0 and low < high
    if k == 0:
        assert low == 0.0 and high > 0.0
    if k == n:
        assert high == 1.0 and low < 1.0


def test_wilson_of_nothing_is_nan_and_wider_confidence_is_wider() -> None:
    low, high = wilson_ci(0, 0)
    assert math.isnan(low) and math.isnan(high)
    (l90, h90), (l99, h99) = wilson_ci(12, 40, confidence=0.9), wilson_ci(12, 40, confidence=0.99)
    assert l99 < l90 < 0.3 < h90 < h99
    assert wilson_ci(np.int64(3), np.int64(7)) == wilson_ci(3, 7)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((4, 3), {}, "successes <= n"),
        ((-1, 3), {}, "successes <= n"),
        ((1.5, 3), {}, "integer"),
        ((True, 3), {}, "integer"),
        ((1, 3), {"confidence": 1.0}, "confidence"),
        ((1, 3), {"confidence": 95}, "confidence"),
    ],
)
def test_wilson_validates_its_arguments(args: tuple[Any, Any], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wilson_ci(*args, **kwargs)


# ---- accuracy ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        # a small all-correct cell is not certain: the old bootstrap said (1.0, 1.0)
        ([True] * 3, (1.0, 3, 3, _wilson_roots(3, 3, 0.95))),
        ([False] * 2, (0.0, 2, 0, _wilson_roots(0, 2, 0.95))),
        ([True, False, True, True], (0.75, 4, 3, _wilson_roots(3, 4, 0.95))),
    ],
)
def test_accuracy_has_a_wilson_interval(flags: list[bool], expected: tuple[Any, ...]) -> None:
    value, n, correct, (low, high) = expected
    acc = accuracy(flags, resamples=200, seed=1)  # the bootstrap's arguments are accepted and unused
    assert (acc.value, acc.n, acc.correct, acc.interval) == (value, n, correct, "wilson")
    assert (acc.ci_low, acc.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert acc.ci_low < acc.ci_high
    assert accuracy(flags, resamples=200, seed=2) == acc


def test_accuracy_keeps_the_bootstrap_on_request() -> None:
    acc = accuracy([True, False, True, True], resamples=200, seed=1, interval="bootstrap")
    assert (acc.value, acc.n, acc.correct, acc.interval) == (0.75, 4, 3, "bootstrap")
    assert (acc.ci_low, acc.ci_high) == bootstrap_ci([1, 0, 1, 1], resamples=200, seed=1)
    assert accuracy([True, True], interval="bootstrap") == Accuracy(value=1.0, n=2, correct=2, ci_low=1.0,
                                                                     ci_high=1.0, interval="bootstrap")
    with pytest.raises(ValueError, match="interval"):
        accuracy([True], interval="percentile")  # type: ignore[arg-type]


@pytest.mark.parametrize("interval", INTERVALS)
def test_accuracy_of_nothing_is_nan(interval: str) -> None:
    empty = accuracy([], interval=interval)  # type: ignore[arg-type]
    assert (empty.n, empty.correct, empty.interval) == (0, 0, interval)
    assert math.isnan(empty.value) and math.isnan(empty.ci_low) and math.isnan(empty.ci_high)


# ---- cohen_kappa ---------------------------------------------------------------------------------------------


def _wikipedia_raters() -> tuple[list[str], list[str]]:
    """The 50-item example of the Wikipedia article: 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no."""
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    return [a for a, _ in pairs], [b for _, b in pairs]


def test_kappa_of_the_wikipedia_example() -> None:
    a, b = _wikipedia_raters()
    # p_o = 35/50 = 0.7; p_e = 25/50 * 30/50 + 25/50 * 20/50 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5)
    p_o = sum(x == y for x, y in zip(a, b)) / 50
    p_e = (a.count("yes") / 50) * (b.count("yes") / 50) + (a.count("no") / 50) * (b.count("no") / 50)
    assert (p_o, p_e) == (0.7, 0.5)
    assert cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert cohen_kappa(a, b) == 0.4
    assert cohen_kappa(b, a) == 0.4


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # p_o = 4/6, p_e = (2*2 + 1*2 + 3*2) / 36 = 1/3, kappa = (2/3 - 1/3) / (2/3) = 0.5
        (["a", "a", "b", "c", "c", "c"], ["a", "b", "b", "c", "c", "a"], 0.5),
        # p_o = 2/3, p_e = (2*1 + 1*2) / 9 = 4/9, kappa = (2/3 - 4/9) / (5/9) = 0.4
        (["yes", "no", "yes"], ["yes", "no", "no"], 0.4),
        (["yes", "no"], ["no", "yes"], -1.0),  # p_o = 0, p_e = 1/2
        (["yes", "no", "yes"], ["yes", "no", "yes"], 1.0),
        (["yes", "yes"], ["yes", "no"], 0.0),  # a constant rater agrees only by chance
        (["yes", "yes"], ["no", "no"], 0.0),  # p_o = p_e = 0
        (["yes", "yes", "yes"], ["yes", "yes", "yes"], 1.0),  # p_e = 1: degenerate, defined as perfect
    ],
)
def test_kappa_by_hand(a: list[str], b: list[str], expected: float) -> None:
    assert cohen_kappa(a, b) == pytest.approx(expected, abs=1e-12)


def test_kappa_edge_cases() -> None:
    assert math.isnan(cohen_kappa([], []))
    with pytest.raises(ValueError, match="different numbers of items"):
        cohen_kappa(["yes"], ["yes", "no"])


# ---- a hand-built set: 3 triples, yn + wh, two judges ---------------------------------------------------------

Where = tuple[str, tuple[int, int, int]]  # (domain, true triple)
_TRIPLES: dict[int, Where] = {1: ("people", (1, 10, 100)), 2: ("places", (2, 20, 200)), 3: ("people", (3, 30, 300))}


def _item(item_id: str, triple: int | Where, fmt: str, premise: str, method: str | None = None,
          hop: int | None = None) -> dict[str, Any]:
    domain, (s, r, o) = _TRIPLES[triple] if isinstance(triple, int) else triple
    return {
        "id": item_id, "domain": domain, "format": fmt, "premise": premise, "method": method, "hop": hop,
        "question": f"question {item_id}?", "answer": "", "subject": s, "relation": r, "true_object": o,
        "false_object": None if premise == "tpq" else o + 1, "relation_key": f"rel{r}",
    }


ITEMS = [
    _item("t1yn", 1, "yn", "tpq"),
    _item("f1nsc_yn", 1, "yn", "fpq", "NSC", 2),
    _item("f1nnsr_yn", 1, "yn", "fpq", "NNSR"),
    _item("t2yn", 2, "yn", "tpq"),
    _item("f2ndc_yn", 2, "yn", "fpq", "NDC", 1),
    _item("f2nnsr_yn", 2, "yn", "fpq", "NNSR"),
    _item("t3yn", 3, "yn", "tpq"),  # never asked: no row, and the gate of f3nsc_wh is None
    _item("t1wh", 1, "wh", "tpq"),
    _item("f1nsc_wh", 1, "wh", "fpq", "NSC", 2),
    _item("f1nnsr_wh", 1, "wh", "fpq", "NNSR"),
    _item("t2wh", 2, "wh", "tpq"),
    _item("f2ndc_wh", 2, "wh", "fpq", "NDC", 1),
    _item("f3nsc_wh", 3, "wh", "fpq", "NSC", 3),
]

# (item, judge) -> labels in sample order. Votes and correctness in the comments.
LABELS: dict[tuple[str, str], list[str]] = {
    ("t1yn", ""): ["yes", "yes", "no"],  # yes, correct; gate True for triple 1
    ("f1nsc_yn", ""): ["no", "no", "yes"],  # no, correct
    ("f1nnsr_yn", ""): ["yes", "yes", "yes"],  # yes, wrong
    ("t2yn", ""): ["no", "no", "unknown"],  # no, wrong; gate False for triple 2
    ("f2ndc_yn", ""): ["no", "no", "no"],  # no, correct, but gated out
    ("f2nnsr_yn", ""): ["yes", "unknown", "unknown"],  # unknown: wrong in the discriminative task
    ("t1wh", "j1"): ["yes", "yes", "yes"],  # yes, correct
    ("f1nsc_wh", "j1"): ["no", "no", "yes"],  # no, wrong
    ("f1nnsr_wh", "j1"): ["unknown", "unknown", "yes"],  # undecided: left out
    ("t2wh", "j1"): ["yes", "no", "no"],  # no, wrong
    ("f2ndc_wh", "j1"): ["yes", "yes", "no"],  # yes, correct, gated out
    ("f3nsc_wh", "j1"): ["yes", "yes", "yes"],  # yes, correct, gate None
    ("t1wh", "j2"): ["yes", "yes", "no"],  # yes, correct
    ("f1nsc_wh", "j2"): ["no", "no", "no"],  # no, wrong
    ("f1nnsr_wh", "j2"): ["no", "no", "yes"],  # no, wrong
    ("t2wh", "j2"): ["unknown", "unknown", "unknown"],  # undecided
    ("f2ndc_wh", "j2"): ["no", "no", "yes"],  # no, wrong
}


def _samples(labels: dict[tuple[str, str], list[str]], *, seed: int = 0, model: str = "m1",
             perturbation: str = "none") -> list[dict[str, Any]]:
    rows = [
        {"response_id": f"{model}:{item_id}:{judge}:{k}", "item_id": item_id, "model": model,
         "perturbation": perturbation,
         "sample_index": k, "format": "yn" if item_id.endswith("yn") else "wh", "judge": judge, "label": label}
        for (item_id, judge), item_labels in labels.items()
        for k, label in enumerate(item_labels)
    ]
    random.Random(seed).shuffle(rows)  # sample order must come from sample_index, not from row order
    return rows


@pytest.fixture(scope="module")
def item_rows() -> list[dict[str, Any]]:
    return score_items(ITEMS, _samples(LABELS), model="m1", perturbation="none")


@pytest.fixture(scope="module")
def metric_rows(item_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return fpq_metrics(item_rows, resamples=200)


def _by_key(rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    out = {(r["task"], r["judge"], r["metric"], r["domain"], r["method"], r["hop"]): r for r in rows}
    assert len(out) == len(rows), "metric rows are not unique"
    return out


def test_score_items_rows(item_rows: list[dict[str, Any]]) -> None:
    assert [(r["task"], r["judge"], r["item_id"]) for r in item_rows] == sorted(
        ("discriminative" if i.endswith("yn") else "generative", j, i) for i, j in LABELS
    )
    rows = {(r["item_id"], r["judge"]): r for r in item_rows}
    assert ("t3yn", "") not in rows

    r = rows[("t2yn", "")]
    assert r["labels"] == ["no", "no", "unknown"]
    assert r["response_ids"] == ["m1:t2yn::0", "m1:t2yn::1", "m1:t2yn::2"]
    assert (r["n_samples"], r["n_yes"], r["n_no"], r["n_unknown"]) == (3, 0, 2, 1)
    assert (r["vote"], r["target"], r["correct"], r["decided"], r["gate"]) == ("no", "yes", False, True, None)
    assert (r["model"], r["perturbation"], r["task"], r["format"], r["premise"]) == (
        "m1", "none", "discriminative", "yn", "tpq")
    assert (r["domain"], r["method"], r["hop"], r["relation_key"], r["tpq_item_id"]) == (
        "places", None, None, "rel20", "t2yn")

    r = rows[("f2ndc_yn", "")]
    assert (r["vote"], r["target"], r["correct"], r["gate"], r["tpq_item_id"]) == ("no", "no", True, False, "t2yn")
    assert (r["method"], r["hop"]) == ("NDC", 1)
    r = rows[("f2nnsr_yn", "")]
    assert (r["vote"], r["correct"], r["decided"], r["n_unknown"]) == ("unknown", False, False, 2)
    r = rows[("f1nnsr_yn", "")]
    assert (r["vote"], r["correct"], r["gate"], r["hop"]) == ("yes", False, True, None)

    r = rows[("f1nnsr_wh", "j1")]
    assert (r["task"], r["judge"], r["target"], r["vote"], r["decided"], r["gate"], r["tpq_item_id"]) == (
        "generative", "j1", "yes", "unknown", False, True, "t1yn")
    r = rows[("f2ndc_wh", "j2")]
    assert (r["vote"], r["correct"], r["gate"]) == ("no", False, False)
    r = rows[("f3nsc_wh", "j1")]
    assert (r["tpq_item_id"], r["gate"], r["correct"]) == ("t3yn", None, True)  # the TPQ exists but was not asked
    for r in item_rows:
        assert r["n_yes"] + r["n_no"] + r["n_unknown"] == r["n_samples"] == len(r["labels"]) == len(r["response_ids"])
        assert r["correct"] == (r["vote"] == r["target"]) and r["decided"] == (r["vote"] != "unknown")


def test_tpq_item_id_is_none_without_a_yn_tpq() -> None:
    items = [_item("f1nsc_wh", 1, "wh", "fpq", "NSC", 2), _item("t1wh", 1, "wh", "tpq")]
    rows = score_items(items, _samples({("f1nsc_wh", "j"): ["yes"], ("t1wh", "j"): ["no"]}),
                       model="m1", perturbation="none")
    assert [(r["item_id"], r["tpq_item_id"], r["gate"]) for r in rows] == [
        ("f1nsc_wh", None, None), ("t1wh", None, None)]


def test_discriminative_metrics(metric_rows: list[dict[str, Any]]) -> None:
    rows = {k[2:]: (v["n"], v["correct"], v["value"], v["item_ids"])
            for k, v in _by_key(metric_rows).items() if k[0] == "discriminative"}
    assert rows == {
        # unknown vote (f2nnsr_yn) counts as wrong
        ("accuracy", None, None, None): (6, 3, 0.5, sorted(i for i, j in LABELS if not j)),
        ("tpq_accuracy", None, None, None): (2, 1, 0.5, ["t1yn", "t2yn"]),
        ("tpq_accuracy", "people", None, None): (1, 1, 1.0, ["t1yn"]),
        ("tpq_accuracy", "places", None, None): (1, 0, 0.0, ["t2yn"]),
        ("fpq_accuracy", None, None, None): (4, 2, 0.5, ["f1nnsr_yn", "f1nsc_yn", "f2ndc_yn", "f2nnsr_yn"]),
        ("fpq_accuracy", None, "NSC", None): (1, 1, 1.0, ["f1nsc_yn"]),
        ("fpq_accuracy", None, "NDC", None): (1, 1, 1.0, ["f2ndc_yn"]),
        ("fpq_accuracy", None, "NNSR", None): (2, 0, 0.0, ["f1nnsr_yn", "f2nnsr_yn"]),
        ("fpq_accuracy", "people", "NSC", None): (1, 1, 1.0, ["f1nsc_yn"]),
        ("fpq_accuracy", "people", "NNSR", None): (1, 0, 0.0, ["f1nnsr_yn"]),
        ("fpq_accuracy", "places", "NDC", None): (1, 1, 1.0, ["f2ndc_yn"]),
        ("fpq_accuracy", "places", "NNSR", None): (1, 0, 0.0, ["f2nnsr_yn"]),
        ("fpq_accuracy", None, "NSC", 2): (1, 1, 1.0, ["f1nsc_yn"]),
        ("fpq_accuracy", None, "NDC", 1): (1, 1, 1.0, ["f2ndc_yn"]),
        # the gate (t2yn voted no) removes triple 2's FPQs: f2ndc_yn is no longer counted, nor any NDC row
        ("fpq_accuracy_gated", None, None, None): (2, 1, 0.5, ["f1nnsr_yn", "f1nsc_yn"]),
        ("fpq_accuracy_gated", None, "NSC", None): (1, 1, 1.0, ["f1nsc_yn"]),
        ("fpq_accuracy_gated", None, "NNSR", None): (1, 0, 0.0, ["f1nnsr_yn"]),
        ("fpq_accuracy_gated", "people", "NSC", None): (1, 1, 1.0, ["f1nsc_yn"]),
        ("fpq_accuracy_gated", "people", "NNSR", None): (1, 0, 0.0, ["f1nnsr_yn"]),
        ("fpq_accuracy_gated", None, "NSC", 2): (1, 1, 1.0, ["f1nsc_yn"]),
        ("unknown_share", None, None, None): (6, 1, 1 / 6, sorted(i for i, j in LABELS if not j)),
    }


def test_generative_metrics_leave_out_undecided_items(metric_rows: list[dict[str, Any]]) -> None:
    rows = {k[1:]: (v["n"], v["correct"], v["value"], v["item_ids"])
            for k, v in _by_key(metric_rows).items() if k[0] == "generative"}
    j1_all = ["f1nnsr_wh", "f1nsc_wh", "f2ndc_wh", "f3nsc_wh", "t1wh", "t2wh"]
    assert {k[1:]: v for k, v in rows.items() if k[0] == "j1"} == {
        # f1nnsr_wh is undecided by j1: out of every accuracy, counted by unknown_share. Generative accuracy is
        # over the FPQs only (KG-FPQ asks no WH TPQs), so it is fpq_accuracy: the TPQs t1wh and t2wh are not in it
        ("accuracy", None, None, None): (3, 2, 2 / 3, ["f1nsc_wh", "f2ndc_wh", "f3nsc_wh"]),
        ("tpq_accuracy", None, None, None): (2, 1, 0.5, ["t1wh", "t2wh"]),
        ("tpq_accuracy", "people", None, None): (1, 1, 1.0, ["t1wh"]),
        ("tpq_accuracy", "places", None, None): (1, 0, 0.0, ["t2wh"]),
        ("fpq_accuracy", None, None, None): (3, 2, 2 / 3, ["f1nsc_wh", "f2ndc_wh", "f3nsc_wh"]),
        ("fpq_accuracy", None, "NSC", None): (2, 1, 0.5, ["f1nsc_wh", "f3nsc_wh"]),
        ("fpq_accuracy", None, "NDC", None): (1, 1, 1.0, ["f2ndc_wh"]),
        ("fpq_accuracy", "people", "NSC", None): (2, 1, 0.5, ["f1nsc_wh", "f3nsc_wh"]),
        ("fpq_accuracy", "places", "NDC", None): (1, 1, 1.0, ["f2ndc_wh"]),
        ("fpq_accuracy", None, "NSC", 2): (1, 0, 0.0, ["f1nsc_wh"]),
        ("fpq_accuracy", None, "NSC", 3): (1, 1, 1.0, ["f3nsc_wh"]),
        ("fpq_accuracy", None, "NDC", 1): (1, 1, 1.0, ["f2ndc_wh"]),
        # gate True: triple 1 only (f1nnsr_wh undecided); gate None (t3yn not asked) is not True
        ("fpq_accuracy_gated", None, None, None): (1, 0, 0.0, ["f1nsc_wh"]),
        ("fpq_accuracy_gated", None, "NSC", None): (1, 0, 0.0, ["f1nsc_wh"]),
        ("fpq_accuracy_gated", "people", "NSC", None): (1, 0, 0.0, ["f1nsc_wh"]),
        ("fpq_accuracy_gated", None, "NSC", 2): (1, 0, 0.0, ["f1nsc_wh"]),
        ("unknown_share", None, None, None): (6, 1, 1 / 6, j1_all),
    }
    j2 = {k[1:]: v[:3] for k, v in rows.items() if k[0] == "j2"}
    assert j2[("accuracy", None, None, None)] == (3, 0, 0.0)  # FPQs only: t1wh (correct) is a TPQ
    assert j2[("tpq_accuracy", None, None, None)] == (1, 1, 1.0)
    assert j2[("fpq_accuracy", None, None, None)] == (3, 0, 0.0)
    assert j2[("fpq_accuracy_gated", None, None, None)] == (2, 0, 0.0)
    assert j2[("unknown_share", None, None, None)] == (5, 1, 0.2)
    assert ("tpq_accuracy", "places", None, None) not in j2  # its only TPQ was undecided


def test_metric_rows_schema_and_order(metric_rows: list[dict[str, Any]]) -> None:
    assert all(list(r) == ["model", "perturbation", "suite", "task", "judge", "metric", "domain", "method", "hop",
                           "n", "correct", "value", "ci_low", "ci_high", "interval", "item_ids"] for r in metric_rows)
    assert {(r["model"], r["perturbation"], r["suite"]) for r in metric_rows} == {("m1", "none", "fpq")}
    assert [(r["task"], r["judge"]) for r in metric_rows if r["metric"] == "accuracy" and r["domain"] is None] == [
        ("discriminative", ""), ("generative", "j1"), ("generative", "j2")]
    assert {r["metric"] for r in metric_rows} == set(METRICS)
    # by-hop rows only for NSC and NDC, and never with a domain
    assert {r["method"] for r in metric_rows if r["hop"] is not None} == {"NSC", "NDC"}
    assert all(r["domain"] is None for r in metric_rows if r["hop"] is not None)
    for r in metric_rows:
        assert r["n"] == len(r["item_ids"]) and r["item_ids"] == sorted(r["item_ids"])
        assert r["ci_low"] <= r["value"] <= r["ci_high"]
    # neither the order of the samples nor that of the item rows changes a metric row
    reshuffled = score_items(ITEMS, _samples(LABELS, seed=9), model="m1", perturbation="none")
    assert fpq_metrics(list(reversed(reshuffled)), resamples=200) == metric_rows


def test_every_metric_row_has_a_wilson_interval_that_never_collapses(item_rows: list[dict[str, Any]],
                                                                     metric_rows: list[dict[str, Any]]) -> None:
    assert {r["interval"] for r in metric_rows} == {"wilson"}
    for r in metric_rows:  # every metric, unknown_share included, is a proportion of its n items
        assert (r["ci_low"], r["ci_high"]) == pytest.approx(_wilson_roots(r["correct"], r["n"], 0.95), abs=1e-9)
        assert r["ci_low"] < r["ci_high"], r  # 1 of 1 is not certainty, nor 0 of 2
        if r["correct"] == 0:
            assert r["ci_low"] == 0.0 == r["value"] < r["ci_high"]
        if r["correct"] == r["n"]:
            assert r["ci_low"] < r["ci_high"] == 1.0 == r["value"]
    # the level follows confidence; the bootstrap's resamples and seed do not move a Wilson interval
    wide = next(r for r in fpq_metrics(item_rows, confidence=0.99)
                if r["task"] == "discriminative" and r["metric"] == "accuracy")
    assert (wide["ci_low"], wide["ci_high"]) == pytest.approx(_wilson_roots(3, 6, 0.99), abs=1e-9)
    assert fpq_metrics(item_rows, resamples=7, seed=99) == metric_rows


def test_bootstrap_rows_on_request_do_not_depend_on_other_models(item_rows: list[dict[str, Any]]) -> None:
    boot = fpq_metrics(item_rows, resamples=200, interval="bootstrap")
    assert {r["interval"] for r in boot} == {"bootstrap"}
    wilson = fpq_metrics(item_rows)
    assert [{k: v for k, v in r.items() if k not in ("ci_low", "ci_high", "interval")} for r in boot] == [
        {k: v for k, v in r.items() if k not in ("ci_low", "ci_high", "interval")} for r in wilson]
    other = score_items(ITEMS, _samples({k: list(reversed(v)) for k, v in LABELS.items()}, model="m0",
                                           perturbation="RS-0.2"), model="m0", perturbation="RS-0.2")
    both = fpq_metrics(other + item_rows, resamples=200, interval="bootstrap")
    assert [r for r in both if r["model"] == "m1"] == boot
    assert [r["model"] for r in both] == sorted(r["model"] for r in both)
    wide = next(r for r in boot if r["task"] == "discriminative" and r["metric"] == "accuracy")
    assert 0.0 <= wide["ci_low"] < 0.5 < wide["ci_high"] <= 1.0
    reseeded = next(r for r in fpq_metrics(item_rows, resamples=200, seed=1, interval="bootstrap")
                    if r["task"] == "discriminative" and r["metric"] == "accuracy")
    assert (reseeded["ci_low"], reseeded["ci_high"]) != (wide["ci_low"], wide["ci_high"])
    # the bootstrap is the one that collapses on an all-correct cell, which is why it is no longer the default
    nsc = next(r for r in boot if r["task"] == "discriminative" and r["metric"] == "fpq_accuracy"
               and r["method"] == "NSC" and r["domain"] is None and r["hop"] is None)
    assert nsc["ci_low"] == nsc["ci_high"] == 1.0
    with pytest.raises(ValueError, match="interval"):
        fpq_metrics(item_rows, interval="exact")  # type: ignore[arg-type]


@pytest.mark.parametrize(("judge", "n"), [("j1", 3), ("j2", 3)])
def test_generative_accuracy_is_fpq_accuracy_and_discriminative_counts_tpqs_too(
        metric_rows: list[dict[str, Any]], judge: str, n: int) -> None:
    rows = _by_key(metric_rows)
    acc = rows[("generative", judge, "accuracy", None, None, None)]
    fpq = rows[("generative", judge, "fpq_accuracy", None, None, None)]
    assert {k: v for k, v in acc.items() if k != "metric"} == {k: v for k, v in fpq.items() if k != "metric"}
    assert acc["n"] == n and not any(i.startswith("t") for i in acc["item_ids"])
    # WH TPQs keep a row of their own
    assert rows[("generative", judge, "tpq_accuracy", None, None, None)]["item_ids"][0] == "t1wh"
    disc = rows[("discriminative", "", "accuracy", None, None, None)]
    assert {"t1yn", "t2yn"} <= set(disc["item_ids"]) and disc["n"] == 6


def test_empty_groups_keep_their_overall_rows() -> None:
    rows = score_items(ITEMS, _samples({("t1wh", "j1"): ["unknown"] * 3}), model="m1", perturbation="none")
    out = _by_key(fpq_metrics(rows))
    assert sorted(k[2] for k in out) == sorted(METRICS)
    for metric in METRICS[:-1]:
        r = out[("generative", "j1", metric, None, None, None)]
        assert (r["n"], r["correct"], r["item_ids"], r["interval"]) == (0, 0, [], "wilson")
        assert math.isnan(r["value"]) and math.isnan(r["ci_low"]) and math.isnan(r["ci_high"])
    r = out[("generative", "j1", "unknown_share", None, None, None)]
    assert (r["n"], r["correct"], r["value"], r["ci_high"]) == (1, 1, 1.0, 1.0)
    assert r["ci_low"] == pytest.approx(_wilson_roots(1, 1, 0.95)[0]) and r["ci_low"] < 0.25  # one item, wide
    assert fpq_metrics([]) == []


def test_judge_agreement(item_rows: list[dict[str, Any]]) -> None:
    # both decided: t1wh (yes, yes), f1nsc_wh (no, no), f2ndc_wh (yes, no); kappa = (3*2 - 4) / (9 - 4)
    assert judge_agreement(item_rows) == [
        {"model": "m1", "perturbation": "none", "judge_a": "j1", "judge_b": "j2", "n": 3, "agreement": 2 / 3,
         "kappa": pytest.approx(0.4)},
    ]
    third = [dict(r, judge="j0", vote="unknown") for r in item_rows if r["judge"] == "j1"]
    pairs = judge_agreement(item_rows + third)
    assert [(r["judge_a"], r["judge_b"], r["n"]) for r in pairs] == [("j0", "j1", 0), ("j0", "j2", 0),
                                                                     ("j1", "j2", 3)]
    assert math.isnan(pairs[0]["agreement"]) and math.isnan(pairs[0]["kappa"])
    assert judge_agreement([r for r in item_rows if r["judge"] != "j2"]) == []


# ---- oracle and always-yes -----------------------------------------------------------------------------------


def _full_set(label_of: Any) -> list[dict[str, Any]]:
    """Items for 4 triples in 2 domains, every method at several hops, yn + wh, labels from ``label_of(item)``."""
    items, labels = [], {}
    for t in range(4):
        where = (f"dom{t % 2}", (100 + t, 7, 500 + t))
        for fmt in ("yn", "wh"):
            items.append(_item(f"t{t}{fmt}", where, fmt, "tpq"))
            for k, method in enumerate(ALL_METHODS):
                hop = 1 + (t + k) % 3 if method in ("NSC", "NDC") else None
                items.append(_item(f"f{t}{method}{fmt}", where, fmt, "fpq", method, hop))
    for item in items:
        for judge in ([""] if item["format"] == "yn" else ["a", "b"]):
            labels[(item["id"], judge)] = [label_of(item)] * 3
    return score_items(items, _samples(labels, model="m"), model="m", perturbation="none")


def test_an_oracle_scores_one_everywhere() -> None:
    rows = _full_set(lambda item: "no" if (item["format"], item["premise"]) == ("yn", "fpq") else "yes")
    out = fpq_metrics(rows, resamples=50)
    assert {(r["metric"], r["value"]) for r in out} == {(m, 1.0) for m in METRICS[:-1]} | {("unknown_share", 0.0)}
    gated = [(r["domain"], r["method"], r["hop"], r["n"]) for r in out if r["metric"] == "fpq_accuracy_gated"]
    assert gated == [(r["domain"], r["method"], r["hop"], r["n"]) for r in out if r["metric"] == "fpq_accuracy"]
    assert {(r["task"], r["judge"]) for r in out} == {("discriminative", ""), ("generative", "a"),
                                                     ("generative", "b")}
    assert [r["kappa"] for r in judge_agreement(rows)] == [1.0]


def test_always_yes_accepts_every_premise() -> None:
    # the model says yes to every yn question and takes every wh premise for granted, so the judge calls an answer
    # to an FPQ not factual
    rows = _full_set(lambda item: "no" if (item["format"], item["premise"]) == ("wh", "fpq") else "yes")
    out = fpq_metrics(rows, resamples=50)
    values = {(r["task"], r["metric"], r["value"]) for r in out}
    # yes/no accuracy: the 4 TPQs of 28 items; open-question accuracy is over the 24 FPQs only
    assert values == {(task, metric, value) for task in ("discriminative", "generative")
                      for metric, value in (("tpq_accuracy", 1.0), ("fpq_accuracy", 0.0),
                                            ("fpq_accuracy_gated", 0.0), ("unknown_share", 0.0))} | {
        ("discriminative", "accuracy", 4 / 28), ("generative", "accuracy", 0.0)}
    overall = {(r["task"], r["judge"], r["metric"]): r["n"] for r in out if r["domain"] is r["method"] is None}
    assert overall[("discriminative", "", "fpq_accuracy_gated")] == 24  # every TPQ got yes, so no FPQ is gated out


# ---- errors --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "message"),
    [
        ({"item_id": "nope"}, "'nope'"),
        ({"label": "maybe"}, "label 'maybe'"),
        ({"judge": "j1"}, "judge 'j1'"),
        ({"model": "other"}, "model 'other'"),
        ({"perturbation": "ER-0.1"}, "perturbation 'ER-0.1'"),
    ],
)
def test_score_items_rejects_bad_samples(sample: dict[str, Any], message: str) -> None:
    base = {"response_id": "r0", "item_id": "t1yn", "model": "m1", "perturbation": "none", "sample_index": 0,
            "judge": "", "label": "yes"}
    with pytest.raises(ValueError, match=message):
        score_items(ITEMS, [dict(base, **sample)], model="m1", perturbation="none")


def test_score_items_rejects_duplicates_and_bad_keys() -> None:
    sample = {"response_id": "r0", "item_id": "t1yn", "sample_index": 0, "judge": "", "label": "yes"}
    with pytest.raises(ValueError, match="sample_index 0 twice"):
        score_items(ITEMS, [sample, dict(sample, response_id="r1")], model="m1", perturbation="none")
    with pytest.raises(ValueError, match="occurs twice in items"):
        score_items(ITEMS + ITEMS[:1], [sample], model="m1", perturbation="none")
    with pytest.raises(PerturbError):
        score_items(ITEMS, [sample], model="m1", perturbation="XX-0.1")
    assert score_items(ITEMS, [sample], model="m1", perturbation="RS-0.2")[0]["perturbation"] == "RS-0.2"


def test_fpq_metrics_rejects_duplicate_item_rows(item_rows: list[dict[str, Any]]) -> None:
    with pytest.raises(ValueError, match="'t1yn'.*twice"):
        fpq_metrics(item_rows + [r for r in item_rows if r["item_id"] == "t1yn"])


# ---- scale ---------------------------------------------------------------------------------------------------


def test_twenty_thousand_items() -> None:
    rnd = random.Random(0)
    items, labels = [], {}
    for t in range(1430):  # 1430 triples x (1 TPQ + 6 FPQs) x 2 formats = 20020 items
        where = (f"d{t % 5}", (1000 + t, t % 40, 5000 + t))
        for fmt in ("yn", "wh"):
            items.append(_item(f"t{t}{fmt}", where, fmt, "tpq"))
            items += [_item(f"f{t}{m}{fmt}", where, fmt, "fpq", m, rnd.randint(1, 3) if m in ("NSC", "NDC")
                            else None) for m in ALL_METHODS]
    for item in items:
        judge = "" if item["format"] == "yn" else "j"
        labels[(item["id"], judge)] = [rnd.choice(("yes", "yes", "no", "unknown")) for _ in range(3)]
    rows = score_items(items, _samples(labels, model="m"), model="m", perturbation="none")
    assert len(rows) == 20020
    out = fpq_metrics(rows)
    acc = {(r["task"], r["metric"]): r for r in out if r["domain"] is r["method"] is None}
    # 5 domains x 6 methods, 6 methods, 2 x 3 hops, overall: 43 rows per fpq metric; 6 tpq; accuracy; unknown_share
    assert len(out) == 2 * (1 + 6 + 43 + 43 + 1)
    for task in ("discriminative", "generative"):
        r = acc[(task, "accuracy")]
        assert r["ci_low"] < r["value"] < r["ci_high"] and r["ci_high"] - r["ci_low"] < 0.04
    assert acc[("discriminative", "accuracy")]["n"] == 10010
    assert acc[("generative", "unknown_share")]["n"] == 10010
    # generative accuracy: the decided FPQs only
    assert acc[("generative", "accuracy")]["item_ids"] == acc[("generative", "fpq_accuracy")]["item_ids"]
    decided = [r for r in rows if r["task"] == "generative" and r["vote"] != "unknown"]
    assert acc[("generative", "accuracy")]["n"] == sum(r["premise"] == "fpq" for r in decided) < len(decided)
