"""Paired comparison of two models (kgprobe.scoring.compare) and the ``kgprobe compare`` command."""

from __future__ import annotations

import json
import math
from math import comb
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from kgprobe import warehouse as wh
from kgprobe.scoring.compare import compare_models, mcnemar_exact, paired_bootstrap_ci, paired_difference


def test_mcnemar_exact_is_the_two_sided_binomial_of_discordant_items() -> None:
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 2**6)
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0
    # b=2, c=8: 2 * P(X <= 2), X ~ Bin(10, 1/2)
    assert mcnemar_exact(2, 8) == pytest.approx(2 * sum(comb(10, k) for k in range(3)) / 2**10)
    assert mcnemar_exact(8, 2) == mcnemar_exact(2, 8)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_paired_bootstrap_pairs_the_items() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(200)
    a, b = base + 0.1, base  # a beats b by exactly 0.1 on every item: pairing removes the item spread
    low, high = paired_bootstrap_ci(a, b, seed=1)
    assert low == pytest.approx(0.1) and high == pytest.approx(0.1)
    x = (rng.random(300) < 0.7).astype(float)
    y = (rng.random(300) < 0.5).astype(float)
    low, high = paired_bootstrap_ci(x, y, seed=2)
    assert low < x.mean() - y.mean() < high and 0.0 < low
    assert paired_bootstrap_ci(x, y, seed=2) == (low, high)
    assert all(math.isnan(v) for v in paired_bootstrap_ci([], []))


def test_paired_difference_uses_only_common_items() -> None:
    a = {"q1": True, "q2": True, "q3": False, "q9": True}
    b = {"q1": False, "q2": True, "q3": False, "q4": True, "q5": False}
    r = paired_difference(a, b, seed=0)
    assert (r["n"], r["only_a"], r["only_b"]) == (3, 1, 2)
    assert (r["a"], r["b"], r["diff"]) == pytest.approx((2 / 3, 1 / 3, 1 / 3))
    assert (r["a_only"], r["b_only"], r["p_value"]) == (1, 0, 1.0)
    assert r["ci_low"] <= r["diff"] <= r["ci_high"]


def _items(model: str, correct: dict[str, bool]) -> list[dict]:
    return [{"suite": "s", "task": "t", "item_id": i, "model": model, "perturbation": "none", "judge": "",
             "correct": c} for i, c in correct.items()]


def test_compare_models_overall_and_per_breakdown() -> None:
    big = {f"q{i}": i % 2 == 0 for i in range(22)}              # 22 items, half right
    small = {f"q{i}": True for i in range(6)}                    # its own limit: 6 items, all right
    items = _items("oracle", big) + _items("smol", small)
    metrics = [{"suite": "s", "task": "t", "model": m, "perturbation": "none", "judge": "", "metric": "acc",
                "breakdown": {"kind": k}, "item_ids": [f"q{i}" for i in range(22) if (i < 3) == (k == "x")]}
               for m in ("oracle", "smol") for k in ("x", "y")]
    rows = compare_models(items, metrics, "smol", "oracle", seed=3)
    overall, x, y = rows
    assert overall["breakdown"] == {} and overall["n"] == 6 and overall["only_b"] == 16
    assert (overall["a"], overall["b"], overall["a_only"], overall["b_only"]) == (1.0, 0.5, 3, 0)
    assert overall["p_value"] == pytest.approx(0.25)
    assert x["breakdown"] == {"kind": "x"} and x["n"] == 3 and y["n"] == 3
    assert compare_models(items, metrics, "smol", "nobody") == []


def test_cli_compare_reads_the_warehouse(tmp_path: Path, capsys) -> None:
    from pipelines.cli import main

    for model, correct in (("a", [True, True, True, False]), ("b", [False, False, True, False])):
        rows = [{"item_id": f"q{i}", "model": model, "perturbation": "none", "task": "statement", "judge": "",
                 "correct": c, "labels": ["x"]} for i, c in enumerate(correct)]
        wh.write_partition(tmp_path, "grapheval_scores", pa.Table.from_pylist(rows), {"model": model})
        metrics = [{"model": model, "perturbation": "none", "suite": "grapheval", "task": "statement", "judge": "",
                    "metric": "accuracy", "breakdown": [("polarity", "positive")], "item_ids": ["q0", "q1"]}]
        wh.write_partition(tmp_path, "grapheval_scores_metrics", pa.Table.from_pylist(metrics), {"model": model})
    assert main(["compare", "a", "b", "--warehouse", str(tmp_path), "--suite", "grapheval", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["breakdown"], r["n"], r["diff"], r["a_only"]) for r in rows] == [({}, 4, 0.5, 2),
                                                                             ({"polarity": "positive"}, 2, 1.0, 2)]
    assert main(["compare", "a", "zzz", "--warehouse", str(tmp_path)]) == 2
    assert "score both models" in capsys.readouterr().err


def test_report_shows_each_pair_overall_and_by_breakdown() -> None:
    from kgprobe.report.render import ReportContext, render_page
    from kgprobe.scoring.compare import pairwise

    items = (_items("oracle", {f"q{i}": True for i in range(8)}) + _items("random", {f"q{i}": i < 2 for i in range(8)})
             + _items("smol", {f"q{i}": i % 2 == 0 for i in range(4)}))
    metrics = [{"suite": "s", "task": "t", "model": "oracle", "perturbation": "none", "judge": "", "metric": "acc",
                "breakdown": {"kind": "x"}, "item_ids": ["q0", "q1", "q2"]}]
    rows = pairwise(items, metrics, ["oracle", "smol", "random", "absent"], resamples=200)
    assert [(r["model_a"], r["model_b"], r["breakdown"], r["n"]) for r in rows] == [
        ("oracle", "smol", {}, 4), ("oracle", "smol", {"kind": "x"}, 3), ("oracle", "random", {}, 8),
        ("oracle", "random", {"kind": "x"}, 3), ("smol", "random", {}, 4), ("smol", "random", {"kind": "x"}, 3)]
    ctx = ReportContext(project="t", config_path="x.yaml", snapshot_ids=("s",), created_at="2026-01-01")
    html = render_page(ctx, comparisons=rows)
    assert "Paired comparisons" in html and "oracle (A) against random (B)" in html
    # oracle vs random: 8 items, 1.00 vs 0.25, six discordant items all for A: p = 2 / 2**6
    assert "<td class=\"num\">8</td><td class=\"num\">1.00</td><td class=\"num\">0.25</td>" in html
    assert "<td class=\"num\">6 / 0</td><td class=\"num\">0.0312</td><td class=\"num\">0 / 0</td>" in html
    assert "By breakdown (2 cells)" not in html and "By breakdown (1 cells)" in html
    assert "<td class=\"num\">4 / 0</td>" in html  # left out: oracle has 4 items smol lacks


def test_heuristic_extractor_rows_are_compared_and_empty_cells_are_counted_not_printed() -> None:
    """OKGQA and Drowzee read answers with the heuristic claim extractor (judge "heuristic") when no judge model is
    set: those rows are the offline reading and are compared by default; a judge model's rows only when asked."""
    from kgprobe.scoring.compare import format_comparison

    a = {f"q{i}": i < 4 for i in range(8)}
    b = {f"q{i}": i < 2 for i in range(8)}
    items = [{**r, "judge": "heuristic"} for r in _items("smol", a) + _items("random", {**b, "r1": True})]
    items += [{**r, "judge": "gpt-judge"} for r in _items("smol", b) + _items("random", a)]
    metrics = [{"suite": "s", "task": "t", "model": m, "perturbation": "none", "judge": "heuristic", "metric": "acc",
                "breakdown": {"kind": k}, "item_ids": ids} for m in ("smol", "random")
               for k, ids in (("x", ["q0", "q1"]), ("none-shared", ["r1"]))]  # r1: random's alone
    overall, empty, x = compare_models(items, metrics, "smol", "random")  # breakdowns by name
    assert (overall["n"], overall["a"], overall["b"], overall["a_only"]) == (8, 0.5, 0.25, 2)
    assert x["n"] == 2 and (empty["n"], empty["only_b"]) == (0, 1)
    judged = compare_models(items, metrics, "smol", "random", judge="gpt-judge")[0]
    assert (judged["a"], judged["b"]) == (0.25, 0.5)
    text = format_comparison([overall, x, empty])
    assert "kind=x" in text and "none-shared" not in text
    assert "(1 breakdown cells with no item both models answered are not shown)" in text


def test_mover_without_correlation_is_newcombes_hybrid_interval() -> None:
    # Newcombe (1998, Stat Med 17:873) worked example: 56/70 against 48/80, method 10 gives 0.0524 to 0.3339
    from kgprobe.scoring.compare import _mover
    from kgprobe.scoring.stats import wilson_ci

    low, high = _mover(56 / 70, wilson_ci(56, 70), 48 / 80, wilson_ci(48, 80), 0.0)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)


def test_paired_score_interval_is_never_a_point() -> None:
    from kgprobe.scoring.compare import paired_score_ci

    low, high = paired_score_ci([0], [1])
    assert low == -1.0 and 0.0 < high < 0.2          # one pair where B alone is right: not certainty that B is better
    low, high = paired_score_ci([1, 1, 1], [1, 1, 1])
    assert low < 0.0 < high                           # three agreeing pairs: no difference, but not a point at 0
    # positively correlated pairs give a narrower interval than the same margins uncorrelated
    x = [1] * 20 + [0] * 20
    y = [1] * 18 + [0] * 2 + [0] * 20
    y_shuffled = ([1, 0] * 9 + [0, 0]) * 2           # the same 18 right, spread over both halves of x
    assert sum(y) == sum(y_shuffled)
    assert (lambda c: c[1] - c[0])(paired_score_ci(x, y)) < (lambda c: c[1] - c[0])(paired_score_ci(x, y_shuffled))


def test_paired_difference_switches_to_the_score_interval_on_few_or_constant_pairs() -> None:
    r = paired_difference({"q1": 0, "q2": 0}, {"q1": 1, "q2": 1})
    assert r["interval"] == "paired_score" and r["ci_low"] == -1.0 and r["ci_high"] > -0.5
    a = {f"q{i}": i % 2 for i in range(30)}
    b = {f"q{i}": (i // 2) % 2 for i in range(30)}
    assert paired_difference(a, b)["interval"] == "paired_bootstrap"
    same = {f"q{i}": 1 for i in range(30)}
    r = paired_difference(same, same)
    assert r["interval"] == "paired_score" and r["ci_low"] < 0.0 < r["ci_high"]
