"""kgprobe.report.leaderboard: every suite's metric rows in one leaderboard, a headline per model and suite."""

from __future__ import annotations

import pyarrow as pa

from kgprobe.report.leaderboard import breakdown_of, expand_breakdown, headline_rows, suite_table
from kgprobe.suites.base import METRIC_SCHEMA, Headline, Suite, metric_row, table


class _Toy(Suite):
    name = "toy"
    title = "Toy: capitals"
    headline = Headline("discriminative", "accuracy", "accuracy (yes/no)")


class _Fpq(Suite):
    name = "fpq"
    title = "KG-FPQ"
    headline = Headline("discriminative", "fpq_accuracy_gated", "FPQ accuracy, gated")


def _row(model: str, suite: str, metric: str, flags: list[bool], *, breakdown=None, judge="", task="discriminative",
         perturbation="none", setting="closed") -> dict:
    row = metric_row(model=model, perturbation=perturbation, suite=suite, task=task, judge=judge, metric=metric,
                     breakdown=breakdown, flags=flags, item_ids=[f"i{k}" for k in range(len(flags))])
    return {**row, "setting": setting}


ROWS = [
    _row("oracle", "toy", "accuracy", [True] * 4),
    _row("oracle", "toy", "accuracy", [True] * 2, breakdown={"relation": "capital of"}),
    _row("random", "toy", "accuracy", [True, False, False, False]),
    _row("random", "fpq", "fpq_accuracy_gated", [True, False]),
    _row("random", "fpq", "fpq_accuracy_gated", [True], breakdown={"method": "NSC", "hop": "2"}),
    _row("random", "fpq", "fpq_accuracy_gated", [False], perturbation="ED-1.0", setting="grounded"),
    _row("random", "toy", "accuracy", [True], judge="judge-a", task="generative"),
]


def test_a_headline_per_model_and_suite_from_the_overall_closed_book_rows() -> None:
    heads = headline_rows(ROWS, [_Fpq(), _Toy()], models=["random", "oracle"])
    assert [(h["model"], h["suite"], h["value"], h["n"]) for h in heads] == [
        ("random", "fpq", 0.5, 2), ("random", "toy", 0.25, 4), ("oracle", "toy", 1.0, 4)]
    oracle = heads[2]
    # a Wilson interval, never a point even at 4 of 4
    assert oracle["interval"] == "wilson" and oracle["ci_high"] == 1.0 and 0.4 < oracle["ci_low"] < 0.6


def test_a_suite_table_has_one_row_per_model_and_a_column_block_per_metric() -> None:
    wide = suite_table(ROWS, "toy", models=["oracle", "random"])
    assert [r["model"] for r in wide] == ["oracle", "random"]
    assert wide[0]["discriminative__accuracy"] == 1.0 and wide[0]["discriminative__accuracy_n"] == 4
    assert wide[1]["generative__accuracy__judge_a"] == 1.0  # judged rows get the judge in their column name
    assert wide[0]["generative__accuracy__judge_a"] is None  # the oracle has no judged row: no value, not 0
    grounded = suite_table(ROWS, "fpq", setting="grounded")
    assert [(r["model"], r["perturbation"]) for r in grounded] == [("random", "ED-1.0")]


def test_breakdowns_read_back_from_arrow_expand_into_columns() -> None:
    stored = table([r for r in ROWS if r["suite"] == "fpq"], METRIC_SCHEMA).to_pylist()  # MAP -> [(k, v), ...]
    assert breakdown_of(stored[1]) == {"hop": "2", "method": "NSC"}
    expanded = expand_breakdown(stored)
    assert [(r["method"], r["hop"], r["domain"], r["correct"]) for r in expanded] == [
        (None, None, None, 1), ("NSC", 2, None, 1), (None, None, None, 0)]
    assert isinstance(table(ROWS, METRIC_SCHEMA), pa.Table)


def test_a_headline_read_from_its_own_extractor() -> None:
    class _Open(Suite):
        name = "open"
        title = "Open answers"
        headline = Headline("open_qa", "factscore", "FActScore", judge="heuristic")

    rows = [_row("m", "open", "factscore", [True, False], judge="heuristic", task="open_qa"),
            _row("m", "open", "factscore", [True, True, True], judge="smol", task="open_qa")]
    (head,) = headline_rows(rows, [_Open()])
    assert (head["value"], head["n"], head["judge"]) == (0.5, 2, "heuristic")
