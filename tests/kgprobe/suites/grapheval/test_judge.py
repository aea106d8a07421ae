"""The hidden-state judge: the MLP, the whole procedure on stand-in hidden states (no weights), and on SmolLM2's
real hidden states for a small slice (slow)."""

from __future__ import annotations

import zlib
from collections import Counter

import numpy as np
import pytest

from kgprobe.generation.records import Completion, SamplingParams
from kgprobe.suites.base import ItemSource
from kgprobe.suites.grapheval.judge import (
    CLASSES,
    correctness_class,
    judge_mlp,
    label_of_class,
    precision_recall_f1,
    predict,
    run_hidden_judge,
    train_judge,
)
from kgprobe.suites.grapheval.suite import GraphEvalSettings, GraphEvalSuite

from .conftest import SAMPLE

SUITE = GraphEvalSuite()


@pytest.fixture(scope="module")
def items(sample_con) -> list[dict]:
    settings = GraphEvalSettings(per_relation=3, profile="kgprobe", templates="grapheval/templates.yaml")
    return SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="j", settings=settings, seed=0,
                                  config_dir=SAMPLE)).items.to_pylist()


def test_the_released_network_linear_gelu_layernorm_and_a_head_per_polarity() -> None:
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = judge_mlp(576)  # the default is the released code's TFLinear
    assert [(m.in_features, m.out_features) for m in net.modules() if isinstance(m, nn.Linear)] == [(576, 576)]
    norms = [m for m in net.modules() if isinstance(m, nn.LayerNorm)]
    assert [m.normalized_shape for m in norms] == [(576,)]
    assert tuple(net.head_weight.shape) == (2, 576, 3) and tuple(net.head_bias.shape) == (3,)
    x = torch.randn(4, 576)
    pos, neg = net(x, torch.zeros(4, dtype=torch.long)), net(x, torch.ones(4, dtype=torch.long))
    assert pos.shape == neg.shape == (4, 3) and not torch.allclose(pos, neg)
    # the spec written out: LayerNorm(GELU(W x + b)), then the polarity's head and the shared bias
    h = torch.nn.functional.layer_norm(torch.nn.functional.gelu(x @ net.dense.weight.T + net.dense.bias), (576,),
                                       net.norm.weight, net.norm.bias)
    assert torch.allclose(pos, h @ net.head_weight[0] + net.head_bias, atol=1e-5)
    assert torch.allclose(neg, h @ net.head_weight[1] + net.head_bias, atol=1e-5)
    mixed = net(x, torch.tensor([0, 1, 0, 1]))
    assert torch.allclose(mixed[1], neg[1]) and torch.allclose(mixed[2], pos[2])


def test_the_earlier_relu_network_is_a_named_setting() -> None:
    import torch
    from torch import nn

    net = judge_mlp(576, network="relu256")
    linear = [m for m in net.modules() if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linear] == [(576, 256), (256, 6)]
    assert not any(isinstance(m, nn.LayerNorm) for m in net.modules())
    x = torch.randn(4, 576)
    full = net.heads(net.hidden(x)).view(4, 2, 3)
    assert torch.allclose(net(x, torch.ones(4, dtype=torch.long)), full[:, 1])
    with pytest.raises(ValueError, match="unknown judge network"):
        judge_mlp(8, network="cnn")
    assert GraphEvalSettings().hidden_judge.network == "paper"


@pytest.mark.parametrize("label, expected, cls", [("true", "true", "right"), ("false", "false", "right"),
                                                  ("false", "true", "wrong"), ("true", "false", "wrong"),
                                                  ("idk", "true", "idk"), ("idk", "false", "idk"),
                                                  ("unknown", "true", None)])
def test_correctness_classes_given_gold_polarity(label, expected, cls) -> None:
    assert correctness_class(label, expected) == cls
    if cls is not None:
        assert label_of_class(cls, expected) == label


def test_training_separates_clusters_and_is_seeded() -> None:
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 32)) * 3
    y = [CLASSES[i % 3] for i in range(90)]
    x = np.stack([centres[CLASSES.index(c)] + rng.normal(size=32) for c in y]).astype(np.float32)
    pol = np.arange(90) % 2
    a = train_judge(x[:60], y[:60], pol[:60], epochs=30, seed=1)
    b = train_judge(x[:60], y[:60], pol[:60], epochs=30, seed=1)
    assert predict(a, x[60:], pol[60:]) == predict(b, x[60:], pol[60:])
    assert precision_recall_f1(y[60:], predict(a, x[60:], pol[60:]))["f1"] == 1.0


def test_class_weights_lift_the_minority_class() -> None:
    from kgprobe.suites.grapheval.judge import class_weights

    w = class_weights(["right"] * 9 + ["wrong"])
    assert w[CLASSES.index("wrong")] == pytest.approx(9 * w[CLASSES.index("right")]) and w[CLASSES.index("idk")] == 0
    # a 90/10 split that only class weights make learnable in a few epochs: the minority class is predicted
    rng = np.random.default_rng(1)
    y = ["right"] * 90 + ["wrong"] * 10
    x = np.stack([(np.ones(8) if c == "wrong" else -np.ones(8)) * 0.5 + rng.normal(size=8) for c in y]).astype(
        np.float32)
    net = train_judge(x, y, epochs=10, seed=0)
    assert "wrong" in predict(net, x)


def test_precision_recall_f1_by_hand_over_all_classes() -> None:
    out = precision_recall_f1(["right", "right", "wrong", "idk"], ["right", "wrong", "wrong", "wrong"])
    # right: p 1/1, r 1/2; wrong: p 1/3, r 1/1; idk: p 0, r 0
    assert out["precision"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert out["recall"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert out["f1"] == pytest.approx((2 / 3 + 0.5 + 0) / 3)
    assert out["weighted_f1"] == pytest.approx(0.5 * 2 / 3 + 0.25 * 0.5 + 0.25 * 0)
    assert out["accuracy"] == 0.5
    # the classes averaged can be fixed: then a class absent from both still counts
    assert precision_recall_f1(["right"] * 5, ["right"] * 5)["f1"] == 1.0
    assert precision_recall_f1(["right"] * 5, ["right"] * 5, CLASSES)["f1"] == pytest.approx(1 / 3)


def test_the_f1_interval_does_not_jump_to_one_on_a_skewed_set() -> None:
    from kgprobe.suites.grapheval.judge import judge_quality_rows

    reference = ["right"] * 46 + ["wrong"] * 4
    rows = judge_quality_rows(reference, ["right"] * 50, [str(i) for i in range(50)], model="m", resamples=300)
    f1 = next(r for r in rows if r["metric"] == "judge_f1")
    # a majority guess averages a right-class F1 near 0.96 with the wrong class's 0, in every resample: never 1.0
    # (a resample without a "wrong" answer would otherwise average one class and score 1)
    assert f1["ci_high"] < 0.55 and f1["value"] == pytest.approx((2 * 46 / 96) / 2)


def test_select_statements_counts_statements_not_groups(items) -> None:
    from kgprobe.suites.grapheval.judge import select_statements

    chosen = select_statements(items, 10)
    assert 0 < len(chosen) <= 10
    groups = {it["group_id"] for it in chosen}
    assert all(it in chosen for it in items if it["group_id"] in groups)


class _Generator:
    """A stand-in model whose answers are timed: it answers 'I don't know.' after a short pause."""

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, prompts, params):
        self.calls += 1
        return [[Completion("I don't know.", "stop", None, None, 0.0)] * params.n for _ in prompts]


def test_the_procedure_on_stand_in_hidden_states(items) -> None:
    # the "model" knows the positives of some relations (answers true), denies their negatives, and says IDK
    # elsewhere; its stand-in hidden states carry that answer plus noise, so a judge can learn it
    rng = np.random.default_rng(5)
    def answer(it):
        if zlib.crc32(it["relation_key"].encode()) % 3 == 0:
            return "I don't know."
        return "Yes, the statement is true." if it["expected"] == "true" else "No, the statement is false."
    groups = sorted({it["group_id"] for it in items})[:60]
    asked = [it for it in items if it["group_id"] in set(groups)]
    responses = [{"response_id": it["item_id"], "item_id": it["item_id"], "model": "m", "sample_index": 0,
                  "text": answer(it), "error": None} for it in asked]
    by_id = {it["item_id"]: it for it in items}
    # three directions (a real hidden state is never the zero vector, which a LayerNorm would turn into noise)
    centres = dict(zip(("Yes", "No,", "I d"), np.random.default_rng(11).normal(size=(3, 16)), strict=True))

    def encoder(prompts):
        return np.stack([centres[answer(by_id[p.item_id])[:3]] * 2 + rng.normal(size=16) * 0.3
                         for p in prompts]).astype(np.float32)

    gen = _Generator()
    result = run_hidden_judge(items, responses, None, model="m", params=SamplingParams(n=1, temperature=0.0),
                              seed=0, generator=gen, encoder=encoder, epochs=40, max_statements=80,
                              timing_statements=4)
    assert set(result.summary["profiles"]) == {"kgprobe"} and result.summary["skipped"] == {}
    s = result.summary["profiles"]["kgprobe"]
    assert s["beats_baseline"] and s["agreement"] > s["baseline_agreement"] and s["network"] == "paper"
    assert s["f1"] > 0.95 and s["train"] + s["heldout"] == len(asked) and gen.calls == 1
    # the majority-class baseline sits beside the judge, on the same held-out statements
    assert s["baseline_f1"] < 0.5 < s["f1"]
    quality = {(m["judge"], m["metric"]): m for m in result.metrics if m["metric"].startswith("judge_")}
    assert quality[("majority_class", "judge_f1")]["n"] == quality[("hidden_state", "judge_f1")]["n"] > 0
    assert quality[("hidden_state", "judge_agreement")]["value"] == pytest.approx(s["agreement"])
    assert {m["task"] for m in result.metrics} == {"statement_kgprobe"}
    assert ("majority_class", "judge_weighted_f1") in quality
    # formula (2) from the judge only on groups it never trained on
    train_items = {r["item_id"] for r in result.labels.to_pylist() if r["split"] == "train"}
    judged_rows = [m for m in result.metrics if m["judge"] == "hidden_state" and m["metric"] == "correctness"]
    assert judged_rows and not any(set(m["item_ids"]) & train_items for m in judged_rows)
    labels = result.labels.to_pylist()
    split_of_group = {}
    for r in labels:
        if r["split"] != "unlabelled":
            assert split_of_group.setdefault(r["group_id"], r["split"]) == r["split"]  # groups are not split
    assert Counter(r["split"] for r in labels)["unlabelled"] == len(labels) - len(asked) > 0
    judges = {m["judge"] for m in result.metrics}
    assert judges == {"hidden_state", "majority_class", "hidden_state:heldout", "generated:heldout"}
    held = {(m["judge"], m["metric"]): m["value"] for m in result.metrics if not m["breakdown"]}
    for metric in ("correctness", "truthfulness", "informativeness"):
        assert held[("hidden_state:heldout", metric)] == pytest.approx(held[("generated:heldout", metric)], abs=0.05)
    assert s["judge_seconds_per_1000"] > 0 and s["generation_seconds_per_1000"] > 0


def test_one_judge_per_profile_and_the_report_says_when_it_does_not_beat_its_baseline(sample_con) -> None:
    # issue 40: trained across both prompt formats, a judge scores well by telling the formats apart. Here the
    # "model" says IDK to every paper-profile prompt and answers kgprobe-profile prompts by relation; its stand-in
    # hidden states carry the prompt format strongly. Per profile, the paper judge can only say IDK, exactly its
    # baseline, and says so; the kgprobe judge learns the answers.
    from kgprobe.suites.grapheval.judge import judge_against_baseline
    from kgprobe.suites.grapheval.report import section

    settings = GraphEvalSettings(per_relation=3, profile="paper", compare_profile="kgprobe",
                                 templates="grapheval/templates.yaml")
    both = SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="j2", settings=settings, seed=0,
                                  config_dir=SAMPLE)).items.to_pylist()
    by_id = {it["item_id"]: it for it in both}
    assert {it["task"] for it in both} == {"statement", "statement_kgprobe"}

    def answer(it):
        if it["task"] == "statement" or zlib.crc32(it["relation_key"].encode()) % 3 == 0:
            return "I don't know."
        return "Yes, the statement is true." if it["expected"] == "true" else "No, the statement is not true."

    asked = [it for task in ("statement", "statement_kgprobe")
             for it in SUITE.select([x for x in both if x["task"] == task], limit=30)]
    responses = [{"response_id": it["item_id"], "item_id": it["item_id"], "model": "m", "sample_index": 0,
                  "text": answer(it), "error": None} for it in asked]
    rng = np.random.default_rng(3)
    centres = dict(zip(("Yes", "No,", "I d"), np.random.default_rng(11).normal(size=(3, 16)), strict=True))

    fmt = np.array([10.0] + [0.0] * 15)

    def encoder(prompts):
        return np.stack([fmt * (1.0 if p.raw else -1.0) + centres[answer(by_id[p.item_id])[:3]] * 2
                         + rng.normal(size=16) * 0.3 for p in prompts]).astype(np.float32)

    result = run_hidden_judge(asked, responses, None, model="m", params=SamplingParams(n=1, temperature=0.0),
                              seed=0, generator=_Generator(), encoder=encoder, epochs=30, max_statements=None,
                              timing_statements=2)
    profiles = result.summary["profiles"]
    assert set(profiles) == {"paper", "kgprobe"}
    paper, ours = profiles["paper"], profiles["kgprobe"]
    # every paper-profile answer is IDK: the baseline agrees on all, and a judge can at best tie it
    assert paper["baseline_class"] == "idk" and paper["agreement"] <= paper["baseline_agreement"] == 1.0
    assert not paper["beats_baseline"] and paper["train_class_counts"] == {"right": 0, "wrong": 0,
                                                                            "idk": paper["train"]}
    assert ours["beats_baseline"] and ours["agreement"] > ours["baseline_agreement"]
    # each judge trained and was scored on its own profile's statements only
    labels = result.labels.to_pylist()
    assert {r["task"] for r in labels} == {"statement", "statement_kgprobe"}
    assert all(by_id[r["item_id"]]["task"] == r["task"] for r in labels)
    rows = [m for m in result.metrics if m["metric"] == "judge_agreement"]
    assert sorted((m["task"], m["judge"]) for m in rows) == [
        ("statement", "hidden_state"), ("statement", "majority_class"),
        ("statement_kgprobe", "hidden_state"), ("statement_kgprobe", "majority_class")]
    for m in rows:
        assert {by_id[i]["task"] for i in m["item_ids"]} == {m["task"]}
    # the asset check's reading of the label rows, and the report's note
    checked = {r["profile"]: r["beats_baseline"] for r in judge_against_baseline(labels)}
    assert checked == {"paper": False, "kgprobe": True}

    class _Ctx:
        models = ("m",)
        confidence = 0.95

    rendered, _ = section(_Ctx(), result.metrics)
    assert rendered is not None
    assert [line.split(":")[0] for line in rendered.data["hidden_losing"]] == ["m, paper profile"]
    whos = [r["who"] for r in rendered.data["hidden"]]
    assert whos == ["paper profile: judge", "paper profile: majority-class baseline",
                    "kgprobe profile (stricter, ours): judge",
                    "kgprobe profile (stricter, ours): majority-class baseline"]


def test_a_profile_without_two_answered_groups_is_skipped_not_mixed(items) -> None:
    groups = sorted({it["group_id"] for it in items})[:1]
    asked = [it for it in items if it["group_id"] in set(groups)]
    responses = [{"response_id": it["item_id"], "item_id": it["item_id"], "model": "m", "sample_index": 0,
                  "text": "I don't know.", "error": None} for it in asked]
    with pytest.raises(ValueError, match="no profile has two answered groups"):
        run_hidden_judge(items, responses, None, model="m", params=SamplingParams(n=1, temperature=0.0),
                         generator=_Generator(), encoder=lambda ps: np.zeros((len(ps), 4), np.float32), epochs=1)


@pytest.mark.slow
def test_smollm2_hidden_states_small_slice(items) -> None:
    from kgprobe.generation.backends.hf import HFBackend, HFConfig
    from kgprobe.suites.grapheval.judge import hidden_states

    # float32: left padding changes nothing beyond float rounding (bfloat16's rounding is larger than the tolerance)
    backend = HFBackend(HFConfig("smollm2-135m-instruct", device="cpu", dtype="float32", num_threads=2))
    prompts = SUITE.prompts(items[:8])
    x = hidden_states(backend, prompts, batch_size=8)
    assert x.shape == (8, 576) and np.isfinite(x).all()
    one = hidden_states(backend, prompts[:2], batch_size=1)
    np.testing.assert_allclose(one, x[:2], atol=2e-3, rtol=1e-3)  # left padding: the last token is the prompt's
    assert not np.allclose(x[0], x[1])
    responses = [{"response_id": p.item_id, "item_id": p.item_id, "model": "smollm2", "sample_index": 0,
                  "text": "Yes, the statement is true." if k % 2 else "I don't know.", "error": None}
                 for k, p in enumerate(prompts)]
    result = run_hidden_judge(items, responses, backend, model="smollm2", seed=0, epochs=5, max_statements=3,
                              timing_statements=2, params=SamplingParams(n=1, temperature=0.0, max_tokens=4))
    s = result.summary["profiles"]["kgprobe"]
    assert s["hidden_size"] == 576 and s["statements"] >= 8 and s["speedup"] > 0
