"""GraphEval's hidden-state judge (the paper's §3.2): instead of generating an answer for every statement, one
forward pass per statement prompt gives the last token's last-layer hidden state, and a small MLP trained on the
statements the model did answer (its own parsed labels: true / false / IDK) labels the rest.

* :func:`hidden_states`: the hidden states of prompts from a loaded transformers backend
  (:class:`~kgprobe.generation.backends.hf.HFBackend`: the same loading, chat template and devices as generation;
  the base model is run without the LM head, so no logits over the vocabulary are computed);
* :func:`judge_mlp`: the paper's judge, d -> 256 -> 128 -> 64 -> 3 with layer norm and ReLU after each hidden layer;
* :func:`train_judge` / :func:`predict`: Adam (lr 1e-4), 100 epochs, batch 8 by default, seeded;
* :func:`precision_recall_f1`: macro-averaged over the classes the reference labels hold;
* :func:`run_hidden_judge`: the whole procedure for one model partition: labels from the generated answers (vote
  per statement; unreadable answers are not training labels), a seeded split of the answered groups into training
  and held-back groups, the judge's precision / recall / F1 on the held-back statements, GraphEval's metrics from
  the judge's labels beside those from the generated answers on the same held-back statements, the judge's labels
  for every statement, and the measured cost of both (seconds per 1,000 statements).

A "substitute model" (a smaller model of the same family, as the paper does with LLaMA 2 7B for 13B and 70B) gives
the hidden states when one is passed as ``backend``; the labels still come from the evaluated model's answers.

    >>> result = run_hidden_judge(items, responses, backend, model="smollm2-135m", params=params, seed=0)
    >>> result.summary["f1"], result.summary["speedup"]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from kgprobe.generation.records import Prompt, SamplingParams
from kgprobe.scoring.answers import parse_true_false
from kgprobe.scoring.stats import row_seed, vote
from kgprobe.suites.base import limit_groups
from kgprobe.suites.grapheval.prompts import statement_prompt
from kgprobe.suites.grapheval.scoring import metric_rows

__all__ = ["CLASSES", "JUDGE", "JudgeResult", "generated_labels", "hidden_states", "judge_mlp", "judge_quality_rows",
           "precision_recall_f1", "predict", "run_hidden_judge", "train_judge"]

#: The judge's three classes, in output order.
CLASSES: tuple[str, ...] = ("true", "false", "idk")
#: The judge name of metric rows from the judge's labels.
JUDGE = "hidden_state"

LABEL_SCHEMA = pa.schema([("item_id", pa.string()), ("group_id", pa.string()), ("split", pa.string()),
                          ("generated", pa.string()), ("judge", pa.string())])


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


def judge_mlp(width: int) -> Any:
    """The paper's judge: ``width`` -> 256 -> 128 -> 64 -> 3, a layer norm and a ReLU after each hidden layer."""
    from torch import nn

    layers: list[Any] = []
    for a, b in ((width, 256), (256, 128), (128, 64)):
        layers += [nn.Linear(a, b), nn.LayerNorm(b), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(64, len(CLASSES)))



def train_judge(x: np.ndarray, y: Sequence[str], *, epochs: int = 100, batch_size: int = 8, lr: float = 1e-4,
                seed: int = 0) -> Any:  # fmt: skip
    """A :func:`judge_mlp` trained on hidden states ``x`` and labels ``y`` (true / false / idk) with Adam and
    cross-entropy; seeded (weights and batch order). Returns the model in eval mode."""
    import torch

    threads = torch.get_num_threads()
    # a 256-wide MLP on batches of 8 gains nothing from threads, and on a shared CPU loses much to waiting on them
    torch.set_num_threads(1)
    try:
        return _train(x, y, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed)
    finally:
        torch.set_num_threads(threads)


def _train(x: np.ndarray, y: Sequence[str], *, epochs: int, batch_size: int, lr: float, seed: int) -> Any:
    import torch

    torch.manual_seed(seed & 0x7FFFFFFF)
    model = judge_mlp(x.shape[1])
    target = torch.tensor([CLASSES.index(label) for label in y], dtype=torch.long)
    data = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(seed & 0x7FFFFFFF)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(target), generator=generator)
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            optimiser.zero_grad()
            loss = loss_fn(model(data[idx]), target[idx])
            loss.backward()
            optimiser.step()
    return model.eval()


def predict(model: Any, x: np.ndarray) -> list[str]:
    """The judge's label (true / false / idk) for each row of hidden states ``x``."""
    import torch

    if len(x) == 0:
        return []
    with torch.inference_mode():
        out = model(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))).argmax(dim=1).tolist()
    return [CLASSES[i] for i in out]


def precision_recall_f1(reference: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
    """Macro precision, recall and F1 of ``predicted`` against ``reference`` over the classes ``reference`` holds
    (a class never predicted has precision 0), and the accuracy. NaN for no labels."""
    if not reference:
        return {"precision": float("nan"), "recall": float("nan"), "f1": float("nan"), "accuracy": float("nan")}
    classes = sorted(set(reference))
    ps, rs, fs = [], [], []
    for c in classes:
        tp = sum(1 for a, b in zip(reference, predicted, strict=True) if a == c and b == c)
        pred = sum(1 for b in predicted if b == c)
        true = sum(1 for a in reference if a == c)
        p = tp / pred if pred else 0.0
        r = tp / true if true else 0.0
        ps.append(p)
        rs.append(r)
        fs.append(2 * p * r / (p + r) if p + r else 0.0)
    accuracy = sum(1 for a, b in zip(reference, predicted, strict=True) if a == b) / len(reference)
    return {"precision": float(np.mean(ps)), "recall": float(np.mean(rs)), "f1": float(np.mean(fs)),
            "accuracy": accuracy}


def generated_labels(responses: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """item_id -> the vote of its answers read as true / false / idk / unknown (a failed request is unknown)."""
    per_item: dict[str, list[tuple[int, str]]] = {}
    for r in responses:
        label = parse_true_false(r["text"]) if r.get("error") is None else "unknown"
        per_item.setdefault(str(r["item_id"]), []).append((int(r["sample_index"]), label))
    return {i: vote([label for _, label in sorted(rows)]) for i, rows in per_item.items()}


def judge_quality_rows(reference: Sequence[str], predicted: Sequence[str], item_ids: Sequence[str], *, model: str,
                       seed: int = 0, confidence: float = 0.95, resamples: int = 1000,
                       costs: Mapping[str, tuple[float, int]] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Metric rows (judge ``hidden_state``) of the judge against the generated labels on held-back statements:
    ``judge_agreement`` (a proportion, Wilson interval), ``judge_f1`` / ``judge_precision`` / ``judge_recall``
    (macro, seeded bootstrap over the statements), and each of ``costs`` (name -> (value, n): measured seconds
    and the speed-up; no interval)."""
    from kgprobe.suites.base import metric_row

    kw = {"model": model, "perturbation": "none", "suite": "grapheval", "task": "statement", "judge": JUDGE}
    rows: list[dict[str, Any]] = []
    if reference:
        rows.append(metric_row(metric="judge_agreement", breakdown={}, confidence=confidence, item_ids=list(item_ids),
                               flags=[a == b for a, b in zip(reference, predicted, strict=True)], **kw))
        point = precision_recall_f1(reference, predicted)
        rng = np.random.default_rng(row_seed(seed, "grapheval", "judge-f1", model))
        draws = rng.integers(0, len(reference), size=(resamples, len(reference)))
        boot = [precision_recall_f1([reference[i] for i in d], [predicted[i] for i in d]) for d in draws]
        alpha = (1 - confidence) / 2
        for name in ("f1", "precision", "recall"):
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


@dataclass(frozen=True)
class JudgeResult:
    """One model's judge run: per-statement labels (``split``: train, heldout, unlabelled; ``generated``: the vote
    of its answers or None; ``judge``: the judge's label), metric rows (judge ``hidden_state``: every statement by
    the judge; ``hidden_state:heldout`` and ``generated:heldout``: the held-back statements by each) and a summary
    (precision, recall, F1, counts, seconds per 1,000 statements, speed-up)."""

    labels: pa.Table
    metrics: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)


def run_hidden_judge(items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], backend: Any, *,
                     model: str, params: SamplingParams, seed: int = 0, generator: Any = None,
                     train_share: float = 0.7, epochs: int = 100, batch_size: int = 8, lr: float = 1e-4,
                     max_statements: int | None = 2000, timing_statements: int = 16, forward_batch_size: int = 16,
                     confidence: float = 0.95, resamples: int = 1000,
                     hidden_model: str | None = None,
                     encoder: Callable[[Sequence[Prompt]], np.ndarray] | None = None) -> JudgeResult:  # fmt: skip
    """The hidden-state judge for one model (see the module docstring). ``backend`` gives the hidden states (the
    evaluated model's, or a substitute's); ``generator`` (default: ``backend``) is the evaluated model, timed on
    ``timing_statements`` answered prompts with ``params`` to compare costs. ``encoder`` replaces
    :func:`hidden_states` (prompts -> array), e.g. to test the procedure without weights. Raises ValueError when fewer than two
    answered groups have readable labels (nothing to train and hold back)."""
    by_id = {str(it["item_id"]): it for it in items}
    generated = {i: v for i, v in generated_labels(responses).items() if i in by_id}
    readable = {i: v for i, v in generated.items() if v in CLASSES}
    groups = sorted({str(by_id[i]["group_id"]) for i in readable})
    if len(groups) < 2:
        raise ValueError(f"hidden-state judge of {model!r}: {len(groups)} answered group(s) with readable labels; "
                         "answer more statements (generation.limit) before training a judge")
    rng = np.random.default_rng(row_seed(seed, "grapheval", "judge-split", model))
    shuffled = [groups[i] for i in rng.permutation(len(groups))]
    n_train = min(len(groups) - 1, max(1, round(train_share * len(groups))))
    train_groups = set(shuffled[:n_train])
    chosen = limit_groups(items, max_statements, group=lambda it: str(it["group_id"]),
                          item_id=lambda it: str(it["item_id"]))
    wanted = {str(it["item_id"]) for it in chosen} | set(generated)
    statements = [it for it in items if str(it["item_id"]) in wanted]
    prompts = [statement_prompt(it) for it in statements]
    t0 = time.perf_counter()
    x = (encoder(prompts) if encoder is not None
         else hidden_states(backend, prompts, batch_size=forward_batch_size))
    forward_s = time.perf_counter() - t0
    index = {str(it["item_id"]): k for k, it in enumerate(statements)}
    train_ids = sorted(i for i in readable if str(by_id[i]["group_id"]) in train_groups)
    held_ids = sorted(i for i in generated if str(by_id[i]["group_id"]) not in train_groups)
    t0 = time.perf_counter()
    mlp = train_judge(x[[index[i] for i in train_ids]], [readable[i] for i in train_ids], epochs=epochs,
                      batch_size=batch_size, lr=lr, seed=row_seed(seed, "grapheval", "judge-train", model))
    train_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    judged = predict(mlp, x)
    predict_s = time.perf_counter() - t0
    judge_label = {str(it["item_id"]): judged[k] for k, it in enumerate(statements)}
    held_readable = [i for i in held_ids if i in readable]
    prf = precision_recall_f1([readable[i] for i in held_readable], [judge_label[i] for i in held_readable])
    timed = [p for p in prompts if p.item_id in generated][:timing_statements] or prompts[:timing_statements]
    generator = generator or backend
    t0 = time.perf_counter()
    generator.generate(timed, params)
    generate_s = time.perf_counter() - t0
    judge_per_1000 = 1000 * (forward_s + predict_s) / max(1, len(statements))
    generate_per_1000 = 1000 * generate_s / max(1, len(timed))
    kw = {"model": model, "confidence": confidence, "resamples": resamples, "seed": seed}
    metrics = [
        *judge_quality_rows([readable[i] for i in held_readable], [judge_label[i] for i in held_readable],
                            held_readable, model=model, seed=seed, confidence=confidence, resamples=resamples,
                            costs={"judge_seconds_per_1000": (judge_per_1000, len(statements)),
                                   "generation_seconds_per_1000": (generate_per_1000, len(timed)),
                                   "judge_speedup": (generate_per_1000 / judge_per_1000 if judge_per_1000
                                                     else float("nan"), len(timed))}),
        *metric_rows(by_id, judge_label, judge=JUDGE, **kw),
        *metric_rows(by_id, {i: judge_label[i] for i in held_ids}, judge=f"{JUDGE}:heldout", **kw),
        *metric_rows(by_id, {i: generated[i] for i in held_ids}, judge="generated:heldout", **kw),
    ]
    split = {i: "train" for i in train_ids} | {i: "heldout" for i in held_ids}
    labels = pa.Table.from_pylist([
        {"item_id": str(it["item_id"]), "group_id": str(it["group_id"]),
         "split": split.get(str(it["item_id"]), "unlabelled"), "generated": generated.get(str(it["item_id"])),
         "judge": judge_label[str(it["item_id"])]} for it in statements], schema=LABEL_SCHEMA)
    summary = {
        "model": model, "hidden_states_from": hidden_model or model, "hidden_size": int(x.shape[1]),
        "statements": len(statements), "train": len(train_ids), "heldout": len(held_ids),
        "heldout_readable": len(held_readable), "unlabelled": len(statements) - len(train_ids) - len(held_ids),
        **prf, "train_seconds": train_s,
        "judge_seconds_per_1000": judge_per_1000, "generation_seconds_per_1000": generate_per_1000,
        "generation_timed_statements": len(timed), "generation_samples": params.n,
        "speedup": generate_per_1000 / judge_per_1000 if judge_per_1000 else float("nan"),
        "train_label_counts": {c: sum(1 for i in train_ids if readable[i] == c) for c in CLASSES},
    }
    return JudgeResult(labels=labels, metrics=metrics, summary=summary)
