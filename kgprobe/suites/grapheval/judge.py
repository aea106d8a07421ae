"""GraphEval's hidden-state judge (the paper's §3.2): instead of generating an answer for every statement, one
forward pass per statement prompt gives the last token's last-layer hidden state, and a small network trained on
the statements the model did answer predicts the *correctness class* of the model's answer, as the paper does:
right, wrong or IDK given the statement's gold polarity (a positive answered true, or a negative answered false, is
right). The predicted class and the polarity give back a label (true / false / idk) for formula (2).

* :func:`hidden_states`: the hidden states of prompts from a loaded transformers backend
  (:class:`~kgprobe.generation.backends.hf.HFBackend`: the same loading, prompt form and devices as generation;
  the base model is run without the LM head);
* :func:`judge_mlp`: the released code's judge network (``TFLinear``): ``Linear(d, d)``, GELU, ``LayerNorm(d)``,
  then one of two output heads ``d -> 3`` selected by the statement's gold polarity (``network: relu256``: the
  earlier ``d -> 256`` ReLU network);
* :func:`train_judge` / :func:`predict`: Adam (lr 1e-4), 100 epochs, batch 8 by default, cross-entropy weighted by
  inverse class frequency (a judge on a skewed set otherwise learns the majority class), seeded;
* :func:`precision_recall_f1`: macro F1 (over the classes of the held-out reference and predictions, and over the
  same classes in every bootstrap resample, so the interval does not change meaning with the classes a resample
  happens to hold) and weighted F1 (by support, as the released code prints);
* :func:`run_hidden_judge`: the whole procedure for one model partition, **once per profile** (a judge trained on
  both prompt formats learns which format it reads: the paper's raw prompts mostly end in IDK): classes from the
  generated answers (vote per statement; an unreadable vote is IDK in the paper profile and no training label in
  the kgprobe profile), a seeded split of the answered groups into training and held-out groups, the judge's
  agreement and F1 on the held-out statements beside the majority-class baseline's (always the commonest training
  class; ``beats_baseline``: the judge's agreement above the baseline's, which a constant predictor can reach),
  GraphEval's metrics from the judge's labels on statements of groups it never trained on, and the measured cost
  of both.

Not built: the paper's p-tuning prompt encoder (trainable virtual tokens before the statement, trained through the
frozen model). It needs gradients through the evaluated model for every judge, which the offline CPU default cannot
afford, and the paper reports no ablation that isolates its gain; the judge here reads the frozen model's states.

A "substitute model" (a smaller model of the same family, as the paper does with LLaMA 2 7B for 13B and 70B) gives
the hidden states when one is passed as ``backend``; the classes still come from the evaluated model's answers.

    >>> result = run_hidden_judge(items, responses, backend, model="smollm2-135m", params=params, seed=0)
    >>> paper = result.summary["profiles"]["paper"]
    >>> paper["agreement"], paper["baseline_agreement"], paper["beats_baseline"]
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from kgprobe.generation.records import Prompt, SamplingParams
from kgprobe.scoring.answers import parse_true_false
from kgprobe.scoring.stats import row_seed, vote
from kgprobe.suites.grapheval.profiles import profile_of_task
from kgprobe.suites.grapheval.prompts import statement_prompt
from kgprobe.suites.grapheval.scoring import metric_rows

__all__ = ["BASELINE", "CLASSES", "JUDGE", "NETWORKS", "JudgeResult", "correctness_class", "generated_labels",
           "hidden_states", "judge_against_baseline", "judge_mlp", "judge_quality_rows", "label_of_class", "precision_recall_f1", "predict", "run_hidden_judge",
           "select_statements", "train_judge"]

#: The judge's three classes (the correctness of the model's answer), in output order.
CLASSES: tuple[str, ...] = ("right", "wrong", "idk")
#: The judge name of metric rows from the judge's labels.
JUDGE = "hidden_state"
#: The judge name of the majority-class baseline's rows.
BASELINE = "majority_class"

LABEL_SCHEMA = pa.schema([("item_id", pa.string()), ("task", pa.string()), ("group_id", pa.string()),
                          ("split", pa.string()),
                          ("polarity", pa.string()), ("generated", pa.string()), ("judge", pa.string()),
                          ("generated_class", pa.string()), ("judge_class", pa.string()),
                          ("baseline_class", pa.string())])


def correctness_class(label: str, expected: str) -> str | None:
    """The correctness class of an answer ``label`` (true / false / idk) to a statement whose gold label is
    ``expected`` (true / false): right, wrong or idk; None for an unreadable label."""
    if label == "idk":
        return "idk"
    if label in ("true", "false"):
        return "right" if label == expected else "wrong"
    return None


def label_of_class(cls: str, expected: str) -> str:
    """The answer label a correctness class stands for on a statement whose gold label is ``expected``."""
    if cls == "idk":
        return "idk"
    if cls == "right":
        return expected
    return "false" if expected == "true" else "true"


def hidden_states(backend: Any, prompts: Sequence[Prompt], *, batch_size: int = 16) -> np.ndarray:
    """The last token's last-layer hidden state of each prompt (in its chat template, ready for a reply), as a
    float32 array (n, hidden size). ``backend`` is a transformers backend (``start()``, ``model``, ``tokenizer``,
    ``device``, ``chat_text``); prompts are left-padded, so the last position is every prompt's last token."""
    import torch

    backend.start()
    base = backend.model.base_model
    out = []
    for start in range(0, len(prompts), batch_size):
        texts = [backend.chat_text(p) for p in prompts[start:start + batch_size]]
        enc = backend.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(backend.device)
        with torch.inference_mode():
            last = base(**enc).last_hidden_state[:, -1, :]
        out.append(last.float().cpu().numpy())
    width = int(backend.model.config.hidden_size)
    return np.concatenate(out) if out else np.zeros((0, width), dtype=np.float32)


#: The judge networks :func:`judge_mlp` builds: the released code's (the default) and the earlier d -> 256 ReLU one.
NETWORKS: tuple[str, ...] = ("paper", "relu256")


def judge_mlp(width: int, *, network: str = "paper", hidden: int = 256) -> Any:
    """The judge network; call it as ``net(x, polarity)`` (0 positive, 1 negative) for logits over :data:`CLASSES`.

    ``paper`` (default): the released code's ``TFLinear``: ``Linear(width, width)``, GELU, ``LayerNorm(width)``, then
    a linear head ``width -> 3`` chosen by the statement's gold polarity (two weight matrices, one bias shared by
    both, as released; weights Xavier-normal, bias zero). The paper's text says "a two-layer feed-forward neural
    network, with a layer normalization and a ReLU"; the code has GELU, and the code is followed.
    ``relu256``: ``width -> hidden`` and a ReLU, then two heads ``hidden -> 3`` (kgprobe's earlier judge)."""
    import torch
    from torch import nn

    if network not in NETWORKS:
        raise ValueError(f"unknown judge network {network!r}; use one of {', '.join(NETWORKS)}")
    k = len(CLASSES)

    class _Paper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.dense = nn.Linear(width, width)
            self.norm = nn.LayerNorm(width)
            self.head_weight = nn.Parameter(torch.empty(2, width, k))
            self.head_bias = nn.Parameter(torch.zeros(k))
            for w in self.head_weight:
                nn.init.xavier_normal_(w)

        def forward(self, x: Any, polarity: Any) -> Any:
            h = self.norm(nn.functional.gelu(self.dense(x)))
            return torch.bmm(h.unsqueeze(1), self.head_weight[polarity]).squeeze(1) + self.head_bias

    class _Relu(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.hidden = nn.Sequential(nn.Linear(width, hidden), nn.ReLU())
            self.heads = nn.Linear(hidden, 2 * k)

        def forward(self, x: Any, polarity: Any) -> Any:
            out = self.heads(self.hidden(x)).view(-1, 2, k)
            return out[torch.arange(out.shape[0]), polarity]

    return _Paper() if network == "paper" else _Relu()


def train_judge(x: np.ndarray, y: Sequence[str], polarity: Sequence[int] | np.ndarray | None = None, *,
                epochs: int = 100, batch_size: int = 8, lr: float = 1e-4, seed: int = 0,
                network: str = "paper") -> Any:  # fmt: skip
    """A :func:`judge_mlp` (``network``) trained on hidden states ``x``, classes ``y`` (right / wrong / idk) and gold
    ``polarity`` (0 positive, 1 negative; default all 0) with Adam and class-weighted cross-entropy; seeded (weights
    and batch order). Returns the model in eval mode."""
    import torch

    threads = torch.get_num_threads()
    # a 256-wide network on batches of 8 gains nothing from threads, and on a shared CPU loses much to waiting
    torch.set_num_threads(1)
    try:
        pol = np.zeros(len(y), np.int64) if polarity is None else np.asarray(polarity, np.int64)
        return _train(x, y, pol, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed, network=network)
    finally:
        torch.set_num_threads(threads)


def class_weights(y: Sequence[str]) -> np.ndarray:
    """Inverse-frequency weights of the classes in ``y`` (``n / (k * count)`` over the k classes present; 0 for an
    absent class, which no target holds)."""
    counts = Counter(y)
    present = [c for c in CLASSES if counts[c]]
    return np.array([len(y) / (len(present) * counts[c]) if counts[c] else 0.0 for c in CLASSES], np.float32)


def _train(x: np.ndarray, y: Sequence[str], polarity: np.ndarray, *, epochs: int, batch_size: int, lr: float,
           seed: int, network: str) -> Any:  # fmt: skip
    import torch

    torch.manual_seed(seed & 0x7FFFFFFF)
    model = judge_mlp(x.shape[1], network=network)
    target = torch.tensor([CLASSES.index(label) for label in y], dtype=torch.long)
    pol = torch.from_numpy(polarity)
    data = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = torch.nn.CrossEntropyLoss(weight=torch.from_numpy(class_weights(y)))
    generator = torch.Generator().manual_seed(seed & 0x7FFFFFFF)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(target), generator=generator)
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            optimiser.zero_grad()
            loss = loss_fn(model(data[idx], pol[idx]), target[idx])
            loss.backward()
            optimiser.step()
    return model.eval()


def predict(model: Any, x: np.ndarray, polarity: Sequence[int] | np.ndarray | None = None) -> list[str]:
    """The judge's class (right / wrong / idk) for each row of hidden states ``x`` with gold ``polarity``."""
    import torch

    if len(x) == 0:
        return []
    pol = torch.from_numpy(np.zeros(len(x), np.int64) if polarity is None else np.asarray(polarity, np.int64))
    with torch.inference_mode():
        out = model(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)), pol).argmax(dim=1).tolist()
    return [CLASSES[i] for i in out]


def precision_recall_f1(reference: Sequence[str], predicted: Sequence[str],
                        classes: Sequence[str] | None = None) -> dict[str, float]:  # fmt: skip
    """Macro precision, recall and F1 of ``predicted`` against ``reference`` averaged over every class of
    ``classes`` (default: those in either, as scikit-learn's macro average; a class never predicted has precision
    0, one absent from the reference recall 0), the F1 weighted by reference support (``weighted_f1``), and the
    accuracy. A bootstrap passes the full set's classes to every resample, so each averages the same classes.
    NaN for no labels."""
    if classes is None:
        found = set(reference) | set(predicted)
        classes = [c for c in CLASSES if c in found] + sorted(found - set(CLASSES))
    if len(reference) == 0:
        return {"precision": float("nan"), "recall": float("nan"), "f1": float("nan"),
                "weighted_f1": float("nan"), "accuracy": float("nan")}
    ref, pred = np.asarray(list(reference)), np.asarray(list(predicted))
    ps, rs, fs, support = [], [], [], []
    for c in classes:
        tp = int(((ref == c) & (pred == c)).sum())
        n_pred, n_true = int((pred == c).sum()), int((ref == c).sum())
        p = tp / n_pred if n_pred else 0.0
        r = tp / n_true if n_true else 0.0
        ps.append(p)
        rs.append(r)
        fs.append(2 * p * r / (p + r) if p + r else 0.0)
        support.append(n_true)
    weights = np.asarray(support, np.float64) / len(ref)
    return {"precision": float(np.mean(ps)), "recall": float(np.mean(rs)), "f1": float(np.mean(fs)),
            "weighted_f1": float(np.dot(weights, fs)), "accuracy": float((ref == pred).mean())}


def generated_labels(responses: Sequence[Mapping[str, Any]],
                     statements: Mapping[str, str] | None = None) -> dict[str, str]:  # fmt: skip
    """item_id -> the vote of its answers read as true / false / idk / unknown (a failed request is unknown);
    ``statements`` (item_id -> statement) lets the reader take restatements."""
    per_item: dict[str, list[tuple[int, str]]] = {}
    for r in responses:
        item_id = str(r["item_id"])
        label = (parse_true_false(r["text"], statement=(statements or {}).get(item_id))
                 if r.get("error") is None else "unknown")
        per_item.setdefault(item_id, []).append((int(r["sample_index"]), label))
    return {i: vote([label for _, label in sorted(rows)]) for i, rows in per_item.items()}


def judge_quality_rows(reference: Sequence[str], predicted: Sequence[str], item_ids: Sequence[str], *, model: str,
                       seed: int = 0, confidence: float = 0.95, resamples: int = 1000, judge: str = JUDGE,
                       costs: Mapping[str, tuple[float, int]] | None = None,
                       task: str = "statement") -> list[dict[str, Any]]:  # fmt: skip
    """Metric rows (judge ``judge``) of predicted correctness classes against the generated ones on held-out
    statements: ``judge_agreement`` (a proportion, Wilson interval), ``judge_f1`` (macro over the classes of the
    reference or the prediction, the same classes in every resample),
    ``judge_weighted_f1``, ``judge_precision`` / ``judge_recall`` (macro), each with a seeded bootstrap over the
    statements (the same resamples for every judge of a model, so a judge and its baseline are compared on the same
    draws), and each of ``costs`` (name -> (value, n): measured seconds and the speed-up; no interval)."""
    from kgprobe.suites.base import metric_row

    kw = {"model": model, "perturbation": "none", "suite": "grapheval", "task": task, "judge": judge}
    rows: list[dict[str, Any]] = []
    if reference:
        rows.append(metric_row(metric="judge_agreement", breakdown={}, confidence=confidence, item_ids=list(item_ids),
                               flags=[a == b for a, b in zip(reference, predicted, strict=True)], **kw))
        found = set(reference) | set(predicted)
        classes = [c for c in CLASSES if c in found] + sorted(found - set(CLASSES))
        point = precision_recall_f1(reference, predicted, classes)
        rng = np.random.default_rng(row_seed(seed, "grapheval", "judge-f1", model, task))
        draws = rng.integers(0, len(reference), size=(resamples, len(reference)))
        ref, pred = np.asarray(list(reference)), np.asarray(list(predicted))
        boot = [precision_recall_f1(ref[d], pred[d], classes) for d in draws]
        alpha = (1 - confidence) / 2
        for name in ("f1", "weighted_f1", "precision", "recall"):
            values = np.array([b[name] for b in boot])
            low, high = (float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha)))
            rows.append({**kw, "metric": f"judge_{name}", "breakdown": {}, "higher_is_better": True,
                         "n": len(reference), "value": point[name], "ci_low": min(low, point[name]),
                         "ci_high": max(high, point[name]), "interval": "bootstrap", "item_ids": list(item_ids)})
    for name, (value, n) in (costs or {}).items():
        rows.append({**kw, "metric": name, "breakdown": {}, "higher_is_better": name == "judge_speedup", "n": int(n),
                     "value": float(value), "ci_low": float("nan"), "ci_high": float("nan"), "interval": "measured",
                     "item_ids": []})
    return rows


def judge_against_baseline(label_rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per profile, the judge against its majority-class baseline on the held-out statements of its label rows
    (:data:`LABEL_SCHEMA`, e.g. several model partitions together): held-out count, agreement and macro F1 of each,
    and ``beats_baseline`` (the judge's agreement above the baseline's). Profiles without held-out statements with a
    class are left out."""
    by_profile: dict[str, list[Mapping[str, Any]]] = {}
    for r in label_rows:
        if r["split"] == "heldout" and r["generated_class"] in CLASSES:
            by_profile.setdefault(profile_of_task(r.get("task")).name, []).append(r)
    out = []
    for name, members in sorted(by_profile.items()):
        reference = [str(r["generated_class"]) for r in members]
        judge = precision_recall_f1(reference, [str(r["judge_class"]) for r in members])
        base = precision_recall_f1(reference, [str(r["baseline_class"]) for r in members])
        out.append({"profile": name, "heldout": len(members), "agreement": judge["accuracy"],
                    "baseline_agreement": base["accuracy"], "macro_f1": judge["f1"], "baseline_macro_f1": base["f1"],
                    "beats_baseline": judge["accuracy"] > base["accuracy"]})
    return out


def select_statements(items: Sequence[Mapping[str, Any]], limit: int | None) -> list[Mapping[str, Any]]:
    """Whole groups (a positive with its negatives) in the order of their smallest item id, as many as fit in
    ``limit`` statements (every item when None; at least one group)."""
    if limit is None:
        return list(items)
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for it in items:
        groups.setdefault(str(it["group_id"]), []).append(it)
    out: list[Mapping[str, Any]] = []
    for members in sorted(groups.values(), key=lambda g: min(str(it["item_id"]) for it in g)):
        if out and len(out) + len(members) > limit:
            break
        out.extend(members)
    return out


@dataclass(frozen=True)
class JudgeResult:
    """One model's judge run, one judge per profile (task): per-statement labels (``task``; ``split``: train,
    heldout, unlabelled; ``generated``: the vote of its answers or None; ``judge``: the judge's label; the classes of
    both and of the majority-class baseline), metric rows (each with its profile's task; judges ``hidden_state`` and
    ``majority_class``: quality on held-out statements; ``hidden_state``: formula (2) from the judge's labels on
    statements of groups it never trained on; ``hidden_state:heldout`` and ``generated:heldout``: the held-out
    statements by each) and a summary: ``profiles`` (profile name -> that judge's summary, with ``beats_baseline``:
    its agreement above the baseline's) and ``skipped`` (profile name -> why no judge was trained)."""

    labels: pa.Table
    metrics: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)


def run_hidden_judge(items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], backend: Any, *,
                     model: str, params: SamplingParams, seed: int = 0, generator: Any = None,
                     train_share: float = 0.7, epochs: int = 100, batch_size: int = 8, lr: float = 1e-4,
                     max_statements: int | None = 2000, timing_statements: int = 16, forward_batch_size: int = 16,
                     confidence: float = 0.95, resamples: int = 1000,
                     hidden_model: str | None = None, network: str = "paper",
                     encoder: Callable[[Sequence[Prompt]], np.ndarray] | None = None) -> JudgeResult:  # fmt: skip
    """The hidden-state judge for one model (see the module docstring), trained, tested and reported **per
    profile**: the statements of each task (the paper's raw prompt, kgprobe's chat prompt) get their own judge, split
    and baseline, since a judge trained across both could learn the prompt format rather than the answer.
    ``backend`` gives the hidden states (the evaluated model's, or a substitute's); ``generator`` (default:
    ``backend``) is the evaluated model, timed on ``timing_statements`` answered prompts of each profile with
    ``params`` to compare costs. ``max_statements`` counts statements (whole groups) per profile. ``network``: see
    :func:`judge_mlp`. ``encoder`` replaces :func:`hidden_states` (prompts -> array), e.g. to test the procedure
    without weights. A profile with fewer than two answered groups with a correctness class is skipped (listed in
    ``summary["skipped"]``); raises ValueError when every profile is."""
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for it in items:
        by_task.setdefault(str(it.get("task") or "statement"), []).append(it)
    labels: list[pa.Table] = []
    metrics: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    for task in sorted(by_task, key=lambda t: (t != "statement", t)):
        name = profile_of_task(task).name
        try:
            table, rows, summary = _judge_profile(
                by_task[task], responses, backend, task=task, model=model, params=params, seed=seed,
                generator=generator, train_share=train_share, epochs=epochs, batch_size=batch_size, lr=lr,
                max_statements=max_statements, timing_statements=timing_statements,
                forward_batch_size=forward_batch_size, confidence=confidence, resamples=resamples,
                hidden_model=hidden_model, network=network, encoder=encoder)
        except _TooFewGroups as exc:
            skipped[name] = str(exc)
            continue
        labels.append(table)
        metrics += rows
        profiles[name] = summary
    if not profiles:
        raise ValueError(f"hidden-state judge of {model!r}: no profile has two answered groups with readable labels "
                         f"({'; '.join(skipped.values())}); answer more statements (generation.limit) before training "
                         "a judge")
    return JudgeResult(labels=pa.concat_tables(labels), metrics=metrics,
                       summary={"model": model, "profiles": profiles, "skipped": skipped})


class _TooFewGroups(ValueError):
    pass


def _judge_profile(items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], backend: Any, *,
                   task: str, model: str, params: SamplingParams, seed: int, generator: Any, train_share: float,
                   epochs: int, batch_size: int, lr: float, max_statements: int | None, timing_statements: int,
                   forward_batch_size: int, confidence: float, resamples: int, hidden_model: str | None,
                   network: str, encoder: Callable[[Sequence[Prompt]], np.ndarray] | None,
                   ) -> tuple[pa.Table, list[dict[str, Any]], dict[str, Any]]:  # fmt: skip
    """The judge of one profile's statements (all of one task): labels, metric rows and summary."""
    profile = profile_of_task(task)
    by_id = {str(it["item_id"]): it for it in items}
    generated = {i: v for i, v in generated_labels(
        [r for r in responses if str(r["item_id"]) in by_id], {i: str(it["question"]) for i, it in by_id.items()}
    ).items()}

    def gen_class(i: str) -> str | None:
        label = generated[i]
        if label == "unknown" and profile.unknown_as == "idk":
            label = "idk"  # the paper reads an unreadable answer (and a tie) as IDK
        return correctness_class(label, str(by_id[i]["expected"]))

    classes = {i: c for i in generated if (c := gen_class(i)) is not None}
    groups = sorted({str(by_id[i]["group_id"]) for i in classes})
    if len(groups) < 2:
        raise _TooFewGroups(f"{profile.label}: {len(groups)} answered group(s) with readable labels")
    # the split is seeded per profile, so one profile's groups never change the other's split
    rng = np.random.default_rng(row_seed(seed, "grapheval", "judge-split", model, task))
    shuffled = [groups[i] for i in rng.permutation(len(groups))]
    n_train = min(len(groups) - 1, max(1, round(train_share * len(groups))))
    train_groups = set(shuffled[:n_train])
    chosen = select_statements(items, max_statements)
    wanted = {str(it["item_id"]) for it in chosen} | set(generated)
    statements = [it for it in items if str(it["item_id"]) in wanted]
    prompts = [statement_prompt(it) for it in statements]
    t0 = time.perf_counter()
    x = (encoder(prompts) if encoder is not None
         else hidden_states(backend, prompts, batch_size=forward_batch_size))
    forward_s = time.perf_counter() - t0
    index = {str(it["item_id"]): k for k, it in enumerate(statements)}
    polarity = np.array([0 if it["expected"] == "true" else 1 for it in statements], np.int64)
    train_ids = sorted(i for i in classes if str(by_id[i]["group_id"]) in train_groups)
    held_ids = sorted(i for i in generated if str(by_id[i]["group_id"]) not in train_groups)
    rows = [index[i] for i in train_ids]
    t0 = time.perf_counter()
    net = train_judge(x[rows], [classes[i] for i in train_ids], polarity[rows], epochs=epochs,
                      batch_size=batch_size, lr=lr, seed=row_seed(seed, "grapheval", "judge-train", model, task),
                      network=network)
    train_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    judged = predict(net, x, polarity)
    predict_s = time.perf_counter() - t0
    judge_class = {str(it["item_id"]): judged[k] for k, it in enumerate(statements)}
    judge_label = {i: label_of_class(c, str(by_id[i]["expected"])) for i, c in judge_class.items()}
    majority = Counter(classes[i] for i in train_ids).most_common(1)[0][0]
    held_classed = [i for i in held_ids if i in classes]
    reference = [classes[i] for i in held_classed]
    prf = precision_recall_f1(reference, [judge_class[i] for i in held_classed])
    base = precision_recall_f1(reference, [majority] * len(reference))
    timed = [p for p in prompts if p.item_id in generated][:timing_statements] or prompts[:timing_statements]
    generator = generator or backend
    t0 = time.perf_counter()
    generator.generate(timed, params)
    generate_s = time.perf_counter() - t0
    judge_per_1000 = 1000 * (forward_s + predict_s) / max(1, len(statements))
    generate_per_1000 = 1000 * generate_s / max(1, len(timed))
    kw = {"model": model, "confidence": confidence, "resamples": resamples, "seed": seed}
    # formula (2) from the judge only where it never trained: every statement outside the training groups
    unseen = {i: judge_label[i] for i in judge_label if str(by_id[i]["group_id"]) not in train_groups}
    metrics = [
        *judge_quality_rows(reference, [judge_class[i] for i in held_classed], held_classed, model=model, seed=seed,
                            confidence=confidence, resamples=resamples, task=task,
                            costs={"judge_seconds_per_1000": (judge_per_1000, len(statements)),
                                   "generation_seconds_per_1000": (generate_per_1000, len(timed)),
                                   "judge_speedup": (generate_per_1000 / judge_per_1000 if judge_per_1000
                                                     else float("nan"), len(timed))}),
        *judge_quality_rows(reference, [majority] * len(reference), held_classed, model=model, seed=seed,
                            confidence=confidence, resamples=resamples, judge=BASELINE, task=task),
        *metric_rows(by_id, unseen, judge=JUDGE, **kw),
        *metric_rows(by_id, {i: judge_label[i] for i in held_ids}, judge=f"{JUDGE}:heldout", **kw),
        *metric_rows(by_id, {i: generated[i] for i in held_ids}, judge="generated:heldout", **kw),
    ]
    split = {i: "train" for i in train_ids} | {i: "heldout" for i in held_ids}
    labels = pa.Table.from_pylist([
        {"item_id": i, "task": task, "group_id": str(it["group_id"]), "split": split.get(i, "unlabelled"),
         "polarity": "positive" if it["expected"] == "true" else "negative", "generated": generated.get(i),
         "judge": judge_label[i], "generated_class": classes.get(i), "judge_class": judge_class[i],
         "baseline_class": majority}
        for it in statements for i in (str(it["item_id"]),)], schema=LABEL_SCHEMA)
    summary = {
        "model": model, "profile": profile.name, "task": task, "network": network,
        "hidden_states_from": hidden_model or model, "hidden_size": int(x.shape[1]),
        "statements": len(statements), "train": len(train_ids), "heldout": len(held_ids),
        "heldout_classed": len(held_classed), "unlabelled": len(statements) - len(train_ids) - len(held_ids),
        **prf, "agreement": prf["accuracy"], "agreed": sum(1 for i in held_classed if judge_class[i] == classes[i]),
        "baseline_class": majority, "baseline_f1": base["f1"], "baseline_weighted_f1": base["weighted_f1"],
        "baseline_accuracy": base["accuracy"], "baseline_agreement": base["accuracy"],
        "baseline_agreed": sum(1 for i in held_classed if majority == classes[i]),
        "beats_baseline": bool(held_classed) and prf["accuracy"] > base["accuracy"],
        "train_seconds": train_s,
        "judge_seconds_per_1000": judge_per_1000, "generation_seconds_per_1000": generate_per_1000,
        "generation_timed_statements": len(timed), "generation_samples": params.n,
        "speedup": generate_per_1000 / judge_per_1000 if judge_per_1000 else float("nan"),
        "train_class_counts": {c: sum(1 for i in train_ids if classes[i] == c) for c in CLASSES},
        "heldout_class_counts": {c: sum(1 for i in held_classed if classes[i] == c) for c in CLASSES},
    }
    return labels, metrics, summary
