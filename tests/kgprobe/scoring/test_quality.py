"""Tests for kgprobe.scoring.quality: each suite passes a sound table and flags each kind of damage exactly once."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from kgprobe.scoring import quality
from kgprobe.scoring.quality import (
    ExpectationOutcome,
    failed,
    outcomes_markdown,
    validate_metrics,
    validate_responses,
    validate_score_items,
    validate_score_samples,
)

Rows = list[dict[str, Any]]


def _responses() -> Rows:
    rows = []
    for item in ("i1", "i2"):
        for k in range(2):
            rows.append({"response_id": f"r-{item}-{k}", "item_id": item, "model": "m", "backend": "fake",
                         "prompt_template_id": "closed_yn", "prompt": "Is it?", "prompt_sha256": f"p-{item}",
                         "params_sha256": "q", "sample_index": k, "text": "Yes.", "error": None})
    rows[3]["text"], rows[3]["error"] = None, "timeout"  # a failed response: error set, no text
    return rows


def _samples() -> Rows:
    rows = []
    for item, fmt, judge in (("i1", "yn", ""), ("i2", "wh", "judge-a"), ("i2", "wh", "judge-b")):
        for k, label in enumerate(("yes", "no", "unknown")):
            rows.append({"response_id": f"r-{item}-{k}", "item_id": item, "model": "m", "perturbation": "none",
                         "sample_index": k, "format": fmt, "judge": judge, "text": "answer", "error": None,
                         "label": label, "judge_text": None, "judge_response_id": None})
    return rows


def _item(item_id: str, *, labels: list[str], target: str, judge: str = "", fmt: str = "yn",
          premise: str = "tpq") -> dict[str, Any]:
    counts = {v: labels.count(v) for v in ("yes", "no", "unknown")}
    vote = max(("yes", "no"), key=lambda v: counts[v]) if counts["yes"] != counts["no"] else "unknown"
    return {"item_id": item_id, "model": "m", "perturbation": "none",
            "task": "discriminative" if fmt == "yn" else "generative", "judge": judge, "format": fmt,
            "premise": premise, "domain": "film", "method": None if premise == "tpq" else "NSC", "hop": None,
            "relation_key": "r", "tpq_item_id": None, "target": target, "labels": labels,
            "response_ids": [f"r-{item_id}-{k}" for k in range(len(labels))], "n_samples": len(labels),
            "n_yes": counts["yes"], "n_no": counts["no"], "n_unknown": counts["unknown"], "vote": vote,
            "correct": vote == target, "decided": vote != "unknown", "gate": None}


def _items() -> Rows:
    return [
        _item("i1", labels=["yes", "yes", "no"], target="yes"),
        _item("i2", labels=["yes", "no", "no"], target="no", premise="fpq"),
        _item("i3", labels=["yes", "no", "unknown"], target="yes", fmt="wh", judge="judge-a"),
        _item("i3", labels=["no", "no", "no"], target="yes", fmt="wh", judge="judge-b"),
    ]


def _metric(metric: str, *, n: int, value: float, ci: tuple[float, float], domain: str | None = None,
            interval: str = "wilson", higher_is_better: bool = True) -> dict[str, Any]:
    return {"model": "m", "perturbation": "none", "suite": "fpq", "task": "discriminative", "judge": "",
            "metric": metric, "breakdown": [("domain", domain)] if domain else [],
            "higher_is_better": higher_is_better, "n": n, "value": value, "ci_low": ci[0], "ci_high": ci[1],
            "interval": interval, "item_ids": [f"i{k}" for k in range(n)]}


def _metrics() -> Rows:
    nan = math.nan
    return [
        _metric("accuracy", n=4, value=0.75, ci=(0.3006, 0.9544)),  # Wilson, 95%
        _metric("tpq_accuracy", n=2, value=1.0, ci=(0.3424, 1.0)),
        _metric("tpq_accuracy", n=0, value=nan, ci=(nan, nan), domain="music"),  # undefined: NaN
        _metric("unknown_share", n=4, value=0.0, ci=(0.0, 0.4899), higher_is_better=False),
        # a percentile bootstrap of an all-correct cell is a point: allowed, it is what a bootstrap gives
        _metric("fpq_accuracy", n=2, value=1.0, ci=(1.0, 1.0), interval="bootstrap"),
    ]


_SUITES: dict[str, tuple[Callable[..., list[ExpectationOutcome]], Callable[[], Rows]]] = {
    "responses": (validate_responses, _responses),
    "samples": (validate_score_samples, _samples),
    "items": (validate_score_items, _items),
    "metrics": (validate_metrics, _metrics),
}


def _set(row: int, **values: Any) -> Callable[[Rows], None]:
    def mutate(rows: Rows) -> None:
        rows[row].update(values)
    return mutate


def _copy_key(src: int, dst: int, *columns: str) -> Callable[[Rows], None]:
    def mutate(rows: Rows) -> None:
        rows[dst].update({c: rows[src][c] for c in columns})
    return mutate


def _drop(column: str) -> Callable[[Rows], None]:
    def mutate(rows: Rows) -> None:
        for row in rows:
            del row[column]
    return mutate


_R_KEY = {"item_id": "i1", "model": "m", "sample_index": 1}
_S_KEY = {"item_id": "i2", "model": "m", "perturbation": "none", "sample_index": 1, "judge": "judge-a"}
_I_KEY = {"item_id": "i2", "model": "m", "perturbation": "none", "judge": ""}
_M_KEY = {"model": "m", "perturbation": "none", "suite": "fpq", "task": "discriminative", "judge": "",
          "metric": "accuracy"}
_M_TPQ = {**_M_KEY, "metric": "tpq_accuracy"}

# (suite, damage, expectation that must fail, its column, unexpected_count, examples)
BAD_CASES = [
    ("responses", _set(1, response_id=None), "expect_column_values_to_not_be_null", "response_id", 1,
     [{**_R_KEY, "response_id": None}]),
    ("responses", _set(1, params_sha256=None), "expect_column_values_to_not_be_null", "params_sha256", 1,
     [{**_R_KEY, "params_sha256": None}]),
    ("responses", _set(1, sample_index=-1), "expect_column_values_to_be_between", "sample_index", 1,
     [{**_R_KEY, "sample_index": -1}]),
    ("responses", _copy_key(0, 1, "sample_index"), "expect_compound_columns_to_be_unique",
     "item_id, model, sample_index", 2, [{"item_id": "i1", "model": "m", "sample_index": 0}]),
    ("responses", _set(1, text=None), "expect_column_values_to_not_be_null", "text", 1,
     [{**_R_KEY, "text": None}]),
    ("responses", _drop("prompt_template_id"), "expect_column_to_exist", "prompt_template_id", None, []),
    ("responses", _drop("error"), "expect_column_to_exist", "error", None, []),
    ("samples", _set(4, label="maybe"), "expect_column_values_to_be_in_set", "label", 1,
     [{**_S_KEY, "label": "maybe"}]),
    ("samples", _set(4, format="mc"), "expect_column_values_to_be_in_set", "format", 1,
     [{**_S_KEY, "format": "mc"}]),
    ("samples", _set(4, response_id=None), "expect_column_values_to_not_be_null", "response_id", 1,
     [{**_S_KEY, "response_id": None}]),
    ("samples", _set(4, label=None), "expect_column_values_to_not_be_null", "label", 1,
     [{**_S_KEY, "label": None}]),
    ("samples", _copy_key(3, 6, "judge"), "expect_compound_columns_to_be_unique",
     "item_id, model, perturbation, sample_index, judge", 2,
     [{"item_id": "i2", "model": "m", "perturbation": "none", "sample_index": 0, "judge": "judge-a"}]),
    ("samples", _drop("judge"), "expect_column_to_exist", "judge", None, []),
    ("items", _set(1, domain=None), "expect_column_values_to_not_be_null", "domain", 1,
     [{**_I_KEY, "domain": None}]),
    ("items", _set(1, vote="maybe", correct=False), "expect_column_values_to_be_in_set", "vote", 1,
     [{**_I_KEY, "vote": "maybe"}]),
    ("items", _set(1, task="extractive"), "expect_column_values_to_be_in_set", "task", 1,
     [{**_I_KEY, "task": "extractive"}]),
    ("items", _set(1, premise="ppq"), "expect_column_values_to_be_in_set", "premise", 1,
     [{**_I_KEY, "premise": "ppq"}]),
    ("items", _copy_key(0, 1, "item_id"), "expect_compound_columns_to_be_unique",
     "item_id, model, perturbation, judge", 2, [{"item_id": "i1", "model": "m", "perturbation": "none", "judge": ""}]),
    ("items", _set(1, n_unknown=1), "expect_column_pair_values_to_be_equal", "n_yes+n_no+n_unknown, n_samples", 1,
     [{**_I_KEY, "n_yes+n_no+n_unknown": 4, "n_samples": 3}]),
    ("items", _set(1, labels=["yes", "no"]), "expect_column_pair_values_to_be_equal", "len(labels), n_samples", 1,
     [{**_I_KEY, "len(labels)": 2, "n_samples": 3}]),
    ("items", _set(1, correct=False), "expect_column_pair_values_to_be_equal", "vote==target, correct", 1,
     [{**_I_KEY, "vote==target": True, "correct": False}]),
    ("items", _drop("labels"), "expect_column_to_exist", "labels", None, []),
    ("metrics", _set(0, metric=None), "expect_column_values_to_not_be_null", "metric", 1,
     [{**_M_KEY, "metric": None}]),
    ("metrics", _set(0, value=1.2, ci_low=None, ci_high=None), "expect_column_values_to_be_between", "value", 1,
     [{**_M_KEY, "value": 1.2}]),
    ("metrics", _set(0, ci_low=0.8), "expect_column_pair_values_a_to_be_greater_than_b", "value, ci_low", 1,
     [{**_M_KEY, "value": 0.75, "ci_low": 0.8}]),
    ("metrics", _set(0, ci_high=0.7), "expect_column_pair_values_a_to_be_greater_than_b", "ci_high, value", 1,
     [{**_M_KEY, "ci_high": 0.7, "value": 0.75}]),
    ("metrics", _set(0, n=-1), "expect_column_values_to_be_between", "n", 1, [{**_M_KEY, "n": -1}]),
    ("metrics", _set(0, higher_is_better=None), "expect_column_values_to_not_be_null", "higher_is_better", 1,
     [{**_M_KEY, "higher_is_better": None}]),
    ("metrics", _drop("ci_high"), "expect_column_to_exist", "ci_high", None, []),
    ("metrics", _set(1, interval="percentile"), "expect_column_values_to_be_in_set", "interval", 1,
     [{**_M_TPQ, "interval": "percentile"}]),
    ("metrics", _set(1, interval=None), "expect_column_values_to_not_be_null", "interval", 1,
     [{**_M_TPQ, "interval": None}]),
    # 2 of 2 with a Wilson interval of (1.0, 1.0): a collapsed interval claims a certainty 2 items cannot give
    ("metrics", _set(1, ci_low=1.0), "expect_column_pair_values_a_to_be_greater_than_b", "ci_high, ci_low", 1,
     [{**_M_TPQ, "ci_high": 1.0, "ci_low": 1.0}]),
    ("metrics", _drop("interval"), "expect_column_to_exist", "interval", None, []),
]


@pytest.mark.parametrize("suite", sorted(_SUITES))
def test_sound_table_passes_every_expectation(suite: str) -> None:
    validate, rows = _SUITES[suite]
    outcomes = validate(pa.Table.from_pylist(rows()))
    assert failed(outcomes) == []
    kinds = {o.expectation for o in outcomes}
    assert "expect_column_to_exist" in kinds and len(kinds) >= 3
    assert all(o.unexpected_count in (None, 0) and o.examples == [] for o in outcomes)


@pytest.mark.parametrize(("suite", "damage", "expectation", "column", "count", "examples"), BAD_CASES,
                         ids=[f"{c[0]}:{c[2].removeprefix('expect_')}:{c[3]}" for c in BAD_CASES])
def test_each_damage_fails_exactly_its_expectation(suite: str, damage: Callable[[Rows], None], expectation: str,
                                                   column: str, count: int | None, examples: list[Any]) -> None:
    validate, make_rows = _SUITES[suite]
    rows = make_rows()
    damage(rows)
    bad = failed(validate(pa.Table.from_pylist(rows), name=f"{suite}_table"))
    assert [(o.expectation, o.column) for o in bad] == [(expectation, column)]
    assert bad[0].table == f"{suite}_table"
    assert bad[0].unexpected_count == count
    assert bad[0].examples == examples


def test_outcomes_follow_the_suite_order_and_existence_comes_first() -> None:
    outcomes = validate_score_samples(_samples())
    exist = [o.column for o in outcomes if o.expectation == "expect_column_to_exist"]
    assert [o.column for o in outcomes[: len(exist)]] == exist
    assert exist == ["response_id", "item_id", "model", "perturbation", "sample_index", "format", "judge", "label"]
    assert outcomes[-1].expectation == "expect_compound_columns_to_be_unique"


def test_grounded_responses_are_unique_per_perturbation() -> None:
    rows = [dict(r, perturbation=p) for p in ("none", "RS-0.2") for r in _responses()]
    outcomes = validate_responses(pa.Table.from_pylist(rows))
    unique = [o for o in outcomes if o.expectation == "expect_compound_columns_to_be_unique"]
    assert [(o.column, o.success) for o in unique] == [("item_id, model, sample_index, perturbation", True)]
    assert failed(outcomes) == []


def test_nan_metric_values_are_undefined_not_out_of_range() -> None:
    rows = _metrics()
    rows[0].update(value=math.nan, ci_low=math.nan, ci_high=math.nan)
    outcomes = validate_metrics(rows)
    value = next(o for o in outcomes if o.expectation == "expect_column_values_to_be_between" and o.column == "value")
    assert value.success and value.unexpected_count == 0
    assert failed(outcomes) == []


def test_the_suite_knows_the_interval_kinds_of_kgprobe_metrics() -> None:
    from kgprobe.scoring.stats import INTERVALS

    assert quality._INTERVALS == INTERVALS


@pytest.mark.parametrize("interval", ["wilson", "bootstrap"])
def test_metric_rows_of_fpq_metrics_pass(interval: str) -> None:
    from kgprobe.suites.base import METRIC_SCHEMA, table
    from kgprobe.suites.fpq.metrics import fpq_metrics
    from kgprobe.suites.fpq.suite import common_metric

    rows = [common_metric(r) for r in fpq_metrics(_items(), resamples=50, interval=interval)]  # type: ignore[arg-type]
    assert {r["interval"] for r in rows} == {interval}
    assert failed(validate_metrics(table(rows, METRIC_SCHEMA))) == []


def test_only_wilson_rows_of_some_items_must_have_width() -> None:
    rows = _metrics()
    rows[1].update(interval="bootstrap", ci_low=1.0)  # a bootstrap may collapse
    rows[2].update(ci_low=0.5, ci_high=0.5, value=0.5, n=0)  # no items: nothing to claim either way
    assert failed(validate_metrics(rows)) == []


def test_many_unexpected_rows_keep_five_distinct_examples() -> None:
    rows = _samples()
    for row in rows:
        row["label"] = "maybe"
    bad = failed(validate_score_samples(rows))
    assert [(o.column, o.unexpected_count, len(o.examples)) for o in bad] == [("label", 9, quality.MAX_EXAMPLES)]


def test_uncomputable_helper_column_is_a_failing_outcome_not_a_crash() -> None:
    rows = _items()
    for row in rows:
        row["n_yes"] = str(row["n_yes"])
    bad = failed(validate_score_items(rows))
    assert [(o.expectation, o.column, o.unexpected_count) for o in bad] == [
        ("expect_column_pair_values_to_be_equal", "n_yes+n_no+n_unknown, n_samples", None)]
    assert "n_yes: string" in bad[0].examples[0]["error"]


def test_empty_input_reports_every_column_missing() -> None:
    outcomes = validate_metrics([])
    assert {o.expectation for o in outcomes} == {"expect_column_to_exist"}
    assert not any(o.success for o in outcomes)


def test_rejects_a_non_table() -> None:
    with pytest.raises(ValueError, match="pyarrow.Table"):
        validate_metrics("metrics.parquet")  # type: ignore[arg-type]


def test_outcome_rows_and_markdown() -> None:
    rows = _items()
    rows[1]["vote"], rows[1]["correct"] = "a|b\nc", False
    outcomes = validate_score_items(rows)
    json.dumps([o.as_row() for o in outcomes])
    md = outcomes_markdown(outcomes).splitlines()
    assert md[0] == "| table | expectation | column | success | unexpected | examples |"
    assert len(md) == 2 + len(outcomes)
    bad = [line for line in md if "**FAIL**" in line]
    assert len(bad) == 1 and "a\\|b" in bad[0] and "| vote | **FAIL** | 1 |" in bad[0]
    assert outcomes[0].as_row() == {"table": "score_items", "expectation": "expect_column_to_exist",
                                    "column": "item_id", "success": True, "unexpected_count": None, "examples": []}


def test_fresh_context_stays_offline_and_writes_nothing(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(quality, "_CONTEXT", None)
    monkeypatch.setattr(quality, "_BATCH_DEFINITIONS", {})
    monkeypatch.setattr(quality, "_SUITES", {})
    monkeypatch.chdir(tmp_path)
    assert failed(validate_score_samples(_samples())) == []
    assert list(tmp_path.iterdir()) == []


def test_importing_the_module_does_not_import_great_expectations() -> None:
    code = "import sys, kgprobe.scoring.quality; print('great_expectations' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
