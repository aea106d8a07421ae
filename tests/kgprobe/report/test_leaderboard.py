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


def test_cells_on_different_items_are_flagged_with_the_shared_count() -> None:
    from kgprobe.report.render import ReportContext, render_page

    rows = [_row("oracle", "toy", "accuracy", [True] * 22),      # the model's own limit: 22 items
            _row("smol", "toy", "accuracy", [True, False] * 3),   # the suite's limit: 6 items, the first 6 of 22
            _row("oracle", "fpq", "fpq_accuracy_gated", [True] * 3),
            _row("smol", "fpq", "fpq_accuracy_gated", [False] * 3)]
    heads = headline_rows(rows, [_Fpq(), _Toy()], models=["oracle", "smol"])
    flags = {(h["model"], h["suite"]): (h["same_items"], h["n_shared"]) for h in heads}
    assert flags == {("oracle", "toy"): (False, 6), ("smol", "toy"): (False, 6),
                     ("oracle", "fpq"): (True, 3), ("smol", "fpq"): (True, 3)}
    ctx = ReportContext(project="t", config_path="x.yaml", snapshot_ids=("s",), created_at="2026-01-01",
                        models=("oracle", "smol"))
    html = render_page(ctx, metrics=rows, suites=heads,
                       sections=[{"name": "toy", "title": "Toy", "metrics": [r for r in rows if r["suite"] == "toy"]}])
    assert "toy: accuracy (yes/no) †" in html and "fpq: FPQ accuracy, gated †" not in html
    assert "toy: 6 items shared by all" in html
    assert "1.00 [0.85, 1.00] n=22 †" in html and "0.50 [0.19, 0.81] n=6 †" in html
    assert "accuracy (discriminative) †" in html and "accuracy (discriminative): 6 items shared by all" in html


def test_a_suites_own_section_notes_columns_whose_models_answered_different_items(tmp_path) -> None:
    from kgprobe.report.render import ReportContext, ReportSection, differing_items, render_page

    rows = [_row("oracle", "toy", "accuracy", [True] * 22), _row("smol", "toy", "accuracy", [True, False] * 3),
            _row("oracle", "toy", "unknown_share", [False] * 6), _row("smol", "toy", "unknown_share", [True] * 6),
            _row("smol", "toy", "accuracy", [True] * 2, breakdown={"relation": "capital of"})]
    differ = differing_items(rows)
    # accuracy: 22 items against the first 6 of them; unknown_share: the same 6 items; breakdown rows apart
    assert differ == [{"column": "accuracy (discriminative)", "n_shared": 6, "models": "oracle n=22, smol n=6"}]
    assert differing_items([r for r in rows if r["metric"] == "unknown_share"]) == []
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "section.html").write_text("<h2>{{ section.title }}</h2>\n")
    ctx = ReportContext(project="t", config_path="x.yaml", snapshot_ids=("s",), created_at="2026-01-01",
                        models=("oracle", "smol"))
    own = ReportSection(template="toy/section.html", template_dir=tmp_path, data={"title": "Toy"}, metrics=rows)
    html = render_page(ctx, metrics=rows, own=[own])
    assert "accuracy (discriminative): oracle n=22, smol n=6, 6 shared by all" in html
    same = ReportSection(template="toy/section.html", template_dir=tmp_path, data={"title": "Toy"}, metrics=rows[2:4])
    assert "shared by all" not in render_page(ctx, metrics=rows[2:4], own=[same])


def test_a_row_without_items_leaves_the_shared_count_alone() -> None:
    """A model with n = 0 in a column (no gated FPQ qualifies for a model that never says yes) stands on no item: it
    does not make the column's shared count 0, and two models on the same items stay comparable beside it."""
    from kgprobe.report.leaderboard import item_sets

    same = [{"n": 3, "item_ids": ["a", "b", "c"]}, {"n": 3, "item_ids": ["a", "b", "c"]}]
    assert item_sets([*same, {"n": 0, "item_ids": []}]) == {"same_items": True, "n_shared": 3}
    assert item_sets([same[0], {"n": 2, "item_ids": ["a", "b"]}, {"n": 0, "item_ids": []}]) == \
        {"same_items": False, "n_shared": 2}
