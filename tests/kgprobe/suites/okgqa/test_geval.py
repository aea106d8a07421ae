"""G-Eval as its paper runs it: evaluation steps written once per criterion by the judge and reused by every rating,
the score read from a "Score:" field or the last number in range, weighted by the score token's probabilities where
the backend returns them (the parsed score otherwise, and which one is recorded)."""

from __future__ import annotations

import json
import math

import pytest

from kgprobe.suites.base import ScoringOptions
from kgprobe.suites.okgqa import OKGQASuite
from kgprobe.suites.okgqa.prompts import CRITERIA, parse_steps
from kgprobe.suites.okgqa.suite import _weighted_score

from .conftest import answer, oracle_judge_spec

SUITE = OKGQASuite()


def _lp(*pairs):
    return [[tok, math.log(p)] for tok, p in pairs]


@pytest.mark.parametrize("text,tokens,want", [
    # the probability-weighted mean over 1-5 at the score token: 4 * .6 + 5 * .3 + 3 * .1
    ("4", [["4", _lp(("4", .6), ("5", .3), ("3", .1))]], 4.2),
    ("Score: 4", [["Score", _lp(("Score", 1.0))], [":", _lp((":", 1.0))], [" 4", _lp((" 4", .5), (" 2", .5))]], 3.0),
    # the score token is the last in-range number, not the "1" of "1 to 5"
    ("On a scale of 1 to 5, I give 4.",
     [["On a scale of ", _lp(("On", 1.0))], ["1", _lp(("1", 1.0))], [" to ", _lp(("to", 1.0))], ["5", _lp(("5", 1.0))],
      [", I give ", _lp(("x", 1.0))], ["4", _lp(("4", .75), ("5", .25))], [".", _lp((".", 1.0))]], 4.25),
    # alternatives that are not scores are left out of the mean
    ("2", [["2", _lp(("2", .4), ("two", .5), ("3", .1))]], 2.2),
    # decoded tokens that do not spell the text: the last token that is the score
    ("Score: 3", [["Score:", _lp(("x", 1.0))], ["Ġ3", _lp(("3", 1.0))], ["3", _lp(("3", .5), ("4", .5))]], 3.5),
])  # fmt: skip
def test_score_weighted_by_the_score_tokens_probabilities(text, tokens, want):
    assert math.isclose(_weighted_score(json.dumps(tokens), text), want)


@pytest.mark.parametrize("logprobs,text", [(None, "4"), ("[]", "4"), ('[["4", [["four", -0.1]]]]', "4"),
                                           ('[["x", [["x", 0.0]]]]', "no score")])
def test_no_weighting_without_usable_logprobs(logprobs, text):
    assert _weighted_score(logprobs, text) is None


def test_steps_parse_from_json_or_numbered_lines():
    assert parse_steps('Sure: {"steps": ["Read it.", " Rate  it. "]}') == ["Read it.", "Rate it."]
    assert parse_steps("1. Read it.\n2) Rate it.\n- Check it.") == ["Read it.", "Rate it.", "Check it."]
    assert parse_steps("I cannot.") is None and parse_steps('{"steps": []}') is None


class _Judge:
    """A judge runner that writes steps (or fails to), rates 4 with or without log-probabilities, and records the
    prompts."""

    def __init__(self, *, steps=True, logprobs=True):
        self.steps, self.logprobs, self.prompts = steps, logprobs, []

    def __call__(self, spec, prompts):
        self.prompts += prompts
        out = {}
        for p in prompts:
            if p.template_id.startswith("okgqa-geval-steps-"):
                text = json.dumps({"steps": [f"Check {p.template_id}.", "Score it."]}) if self.steps else "No."
                out[p.item_id] = {"text": text, "error": None, "response_id": p.item_id, "logprobs": None}
            elif "|geval|" in p.item_id:
                lp = json.dumps([["4", _lp(("4", .5), ("5", .5))]]) if self.logprobs else None
                out[p.item_id] = {"text": "4", "error": None, "response_id": p.item_id, "logprobs": lp}
            else:
                out[p.item_id] = {"text": None, "error": "not asked", "response_id": p.item_id, "logprobs": None}
        return out


def _score(sample_build, judge):
    items = [it for it in SUITE.select(sample_build["items"], setting="closed", limit=2) if it["retrieval"] == "none"]
    responses = answer("random", SUITE.prompts(items))
    return SUITE.score(items, responses, model="random",
                       scoring=ScoringOptions(judges=(oracle_judge_spec(),), judge=judge, resamples=50))


def test_ratings_follow_the_judges_stored_steps_and_weight_the_score(sample_build):
    judge = _Judge()
    scored = _score(sample_build, judge)
    steps = [p for p in judge.prompts if p.template_id.startswith("okgqa-geval-steps-")]
    ratings = [p for p in judge.prompts if "|geval|" in p.item_id]
    # one steps prompt per criterion, the same conversation on every run (so the store answers it once)
    assert len(steps) == len(CRITERIA) and {p.item_id for p in steps} == {f"geval-steps|{c}" for c in CRITERIA}
    again = _Judge()
    _score(sample_build, again)
    assert sorted(p.sha256() for p in steps) == sorted(
        p.sha256() for p in again.prompts if p.template_id.startswith("okgqa-geval-steps-"))
    assert ratings and all(p.top_logprobs > 0 and p.template_id.endswith("-v4") for p in ratings)
    for p in ratings:
        c = p.item_id.rsplit("|", 1)[1]
        assert f"Evaluation Steps:\n1. Check okgqa-geval-steps-{c.replace('_', '-')}-v1.\n2. Score it." in p.system
    judged = [s for s in scored.samples if s["judge"] == "oracle"]
    assert judged and all(s["geval_correctness"] == (4.5 - 1) / 4 for s in judged)
    assert all(sorted(s["geval_sources"]) == sorted(f"{c}:logprobs" for c in CRITERIA) for s in judged)


def test_without_logprobs_or_steps_the_parsed_score_is_used_and_recorded(sample_build):
    judge = _Judge(steps=False, logprobs=False)
    scored = _score(sample_build, judge)
    ratings = [p for p in judge.prompts if "|geval|" in p.item_id]
    assert ratings and all(p.template_id.endswith("-v3") and "Evaluation Steps" not in p.system for p in ratings)
    judged = [s for s in scored.samples if s["judge"] == "oracle"]
    assert all(s["geval_correctness"] == (4 - 1) / 4 for s in judged)
    assert all(sorted(s["geval_sources"]) == sorted(f"{c}:parsed" for c in CRITERIA) for s in judged)
