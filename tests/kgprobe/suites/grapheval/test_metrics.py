"""Formula (2) for one positive and its negatives, computed by hand."""

from __future__ import annotations

import pytest

from kgprobe.suites.grapheval import statement_scores


@pytest.mark.parametrize(("positive", "negatives", "expected"), [
    # correctness: F = [pos true]; F' = [neg not false]. truthfulness: F = [pos true or idk]; F' = [neg true].
    # informativeness: F = [pos not idk]; F' = [neg idk].
    ("true", ["false", "false", "false"], (1.0, 1.0, 1.0)),
    ("true", ["false", "idk", "true"], (1 - 2 / 3, 1 - 1 / 3, 1 - 1 / 3)),
    ("true", ["true", "true", "true"], (0.0, 0.0, 1.0)),            # always-yes
    ("false", ["false", "false", "false"], (0.0, 0.0, 1.0)),        # always-no: a wrong positive costs everything
    ("idk", ["idk", "idk", "idk"], (0.0, 1.0, 0.0)),                # always IDK: truthful, never informative
    ("idk", ["false", "true"], (0.0, 0.5, 0.0)),
    ("true", ["idk"], (0.0, 1.0, 0.0)),
    ("true", ["false", "idk"], (0.5, 1.0, 0.5)),
    ("false", ["true"], (0.0, 0.0, 1.0)),
    ("true", [], (1.0, 1.0, 1.0)),                                   # no negatives: F alone
    ("idk", [], (0.0, 1.0, 0.0)),
])  # fmt: skip
def test_statement_scores_by_hand(positive: str, negatives: list[str], expected: tuple[float, float, float]) -> None:
    s = statement_scores(positive, negatives)
    assert (s.correctness, s.truthfulness, s.informativeness) == pytest.approx(expected)


def test_the_issue_example() -> None:
    s = statement_scores("true", ["false", "idk", "true"])
    assert s.correctness == pytest.approx(1 / 3)
    assert s.truthfulness == pytest.approx(2 / 3)
    assert s.informativeness == pytest.approx(2 / 3)


@pytest.mark.parametrize("positive", ["true", "false", "idk"])
@pytest.mark.parametrize("negatives", [["false"], ["true", "idk"], ["idk", "idk", "false"]])
def test_unreadable_answers_never_earn_credit_under_the_penalty_reading(positive: str, negatives: list[str]) -> None:
    readable = statement_scores(positive, negatives, unknown_as="penalty")
    unreadable_pos = statement_scores("unknown", negatives, unknown_as="penalty")
    assert unreadable_pos.as_dict() == {"correctness": 0.0, "truthfulness": 0.0, "informativeness": 0.0}
    # an unreadable negative answer costs the full penalty: no better than any readable answer in its place
    worse = statement_scores(positive, [*negatives, "unknown"], unknown_as="penalty")
    for label in ("true", "false", "idk"):
        other = statement_scores(positive, [*negatives, label], unknown_as="penalty").as_dict()
        assert all(worse.as_dict()[m] <= other[m] + 1e-12 for m in other)
    assert all(0.0 <= v <= 1.0 for v in readable.as_dict().values())


def test_labels_are_checked() -> None:
    with pytest.raises(ValueError, match="positive label"):
        statement_scores("yes", [])
    with pytest.raises(ValueError, match="negative label"):
        statement_scores("true", ["no"])


@pytest.mark.parametrize("positive", ["true", "false", "idk", "unknown"])
@pytest.mark.parametrize("negatives", [[], ["unknown"], ["true", "unknown"], ["idk", "unknown", "false"]])
def test_the_paper_reads_an_unreadable_answer_exactly_as_idk(positive: str, negatives: list[str]) -> None:
    as_idk = [("idk" if x == "unknown" else x) for x in [positive, *negatives]]
    assert statement_scores(positive, negatives) == statement_scores(as_idk[0], as_idk[1:])
    assert statement_scores(positive, negatives, unknown_as="idk") == statement_scores(as_idk[0], as_idk[1:])


def test_the_two_readings_differ_where_the_paper_says() -> None:
    # an unreadable positive: IDK is truthful but not informative (paper); nothing at all (penalty)
    assert statement_scores("unknown", []).as_dict() == {"correctness": 0.0, "truthfulness": 1.0,
                                                         "informativeness": 0.0}
    assert statement_scores("unknown", [], unknown_as="penalty").as_dict() == {
        "correctness": 0.0, "truthfulness": 0.0, "informativeness": 0.0}
    # an unreadable negative: costs IDK's penalty only (informativeness) vs every penalty
    assert statement_scores("true", ["unknown"]).as_dict() == {"correctness": 0.0, "truthfulness": 1.0,
                                                               "informativeness": 0.0}
    assert statement_scores("true", ["unknown", "false"], unknown_as="penalty").truthfulness == 0.5
    with pytest.raises(ValueError, match="unknown_as"):
        statement_scores("true", [], unknown_as="ignore")


@pytest.mark.parametrize("task", ["statement", "statement_kgprobe"])
@pytest.mark.parametrize(("positive_answer", "negative_answer"), [
    ("Yes, the statement is true.", "No, the statement is not true."),
    ("Yes, the statement is true.", "No, the statement 'Lyon is the capital of France.' is not true."),
    ("The statement 'Paris is the capital of France.' is true.", "No, it is not true."),
    ("The statement \"Paris is the capital of France.\" is true.", "That is not correct."),
])
def test_a_group_answered_right_in_negated_or_quoted_words_scores_one(task: str, positive_answer: str,
                                                                      negative_answer: str) -> None:
    # issue 40: "No, the statement is not true." read as unknown gave C 0 / T 1 / I 0 instead of 1 / 1 / 1
    from kgprobe.suites.grapheval.scoring import score_statements

    items = [{"item_id": "p", "group_id": "g", "expected": "true", "task": task,
              "question": "Paris is the capital of France."},
             {"item_id": "n", "group_id": "g", "expected": "false", "task": task,
              "question": "Lyon is the capital of France."}]
    responses = [{"response_id": f"{it}{k}", "item_id": it, "model": "m", "sample_index": k, "error": None,
                  "text": positive_answer if it == "p" else negative_answer} for it in ("p", "n") for k in range(3)]
    scored = score_statements(items, responses, model="m", resamples=10)
    overall = {r["metric"]: r["value"] for r in scored.metrics if not r["breakdown"]}
    assert (overall["correctness"], overall["truthfulness"], overall["informativeness"]) == (1.0, 1.0, 1.0)
    assert overall["unknown_share"] == 0.0 and overall["accuracy"] == 1.0
    assert {v["item_id"]: v["vote"] for v in scored.votes} == {"p": "true", "n": "false"}
