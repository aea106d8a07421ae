"""ERBench's scoring: every answer read (yes / no / unsure, or the option chosen), its rationale checked for the
FD-inferred values, the known-entity prompts read, and the paper's measures per dataset x question type.

Measures (§4, "Performance Measures"), each a proportion with its Wilson interval and n: ``answer_accuracy`` A,
``rationale_accuracy`` R (every inferred value is mentioned), ``answer_rationale_accuracy`` AR, ``missing_rate`` M
(unsure, or no answer could be read) and ``hallucination_rate`` H = 1 - A - M (lower is better). Multiple choice
averages its three phrasings by counting each as an item; a None-of-the-above question has nothing to infer and
gets A, M and H only. Multi-hop questions add, per hop i, ``hop_rationale_accuracy`` (hop i's value mentioned) and
``hop_answer_rationale_accuracy`` (AR-ext), and ``rationale_given_previous`` Pr(r_i | r_{i-1}) and
``rationale_given_previous_wrong`` Pr(r_i | not r_{i-1}) (§B.8). ``known_share`` is the share of entities the
model knows (§B.2-B.3).

Breakdown keys: ``dataset``, ``qtype`` (BN(Y), BN(N), MC, MC-NOTA; known / known_mc for the known-entity share),
``hops`` (multi-hop) and ``hop`` (per-hop measures), and ``entities``: the paper's three evaluation settings —
``known`` (questions on entities this model knows, setting 1), ``common`` (entities every evaluated model knows,
setting 2: :func:`common_metrics`, over all models' votes) and ``all`` (setting 3). Overall rows (no breakdown,
every question) carry each task's A, R, AR, M and H for the leaderboard.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from kgprobe.scoring.stats import vote as plurality
from kgprobe.suites.base import SAMPLE_SCHEMA, VOTE_SCHEMA, metric_row
from kgprobe.suites.erbench.verify import (
    BinaryAnswer,
    ChoiceAnswer,
    knows_entity,
    read_binary,
    read_binary_answer,
    read_choice,
    value_mentioned,
)

__all__ = [
    "ERBENCH_SAMPLE_SCHEMA",
    "ERBENCH_VOTE_SCHEMA",
    "QUESTION_TASKS",
    "common_metrics",
    "known_groups",
    "metrics_for",
    "read_sample",
    "votes_from_samples",
]

QUESTION_TASKS = ("binary", "multiple_choice", "multihop")
_B = pa.bool_()
ERBENCH_SAMPLE_SCHEMA = pa.schema(list(SAMPLE_SCHEMA) + [("rationale", _B), ("hop_rationale", pa.list_(_B)),
                                                         ("knows", _B)])
ERBENCH_VOTE_SCHEMA = pa.schema(list(VOTE_SCHEMA) + [
    ("dataset", pa.string()), ("qtype", pa.string()), ("fd", pa.string()), ("hops", pa.int64()),
    ("known_group", pa.string()), ("rationale", _B), ("hop_rationale", pa.list_(_B)), ("missing", _B), ("knows", _B),
])


def _item_aliases(item: Mapping[str, Any]) -> dict[str, list[str]]:
    raw = item.get("aliases")
    return json.loads(raw) if raw else {}


def read_sample(item: Mapping[str, Any], text: str | None, error: str | None) -> dict[str, Any]:
    """One answer's reading: ``label``, ``rationale`` (every inferred value mentioned), ``hop_rationale`` (per hop,
    None where the hop has no value) and ``knows`` (known-entity prompts). Binary and multiple-choice answers are
    read by the contract functions :func:`~kgprobe.suites.erbench.verify.read_binary_answer` and
    :func:`~kgprobe.suites.erbench.verify.read_choice`, the ones ``binary_metrics`` and ``choice_metrics`` use."""
    text = None if error is not None else text
    task = item["task"]
    if task == "known_entity":
        label = read_binary(text, item.get("question"))
        return {"label": label, "rationale": None, "hop_rationale": [],
                "knows": knows_entity(text, names=list(item.get("names") or ()))}
    inferred = tuple(str(v) for v in item.get("inferred") or ())
    kinds = [m.split(",") if m else [] for m in item.get("match") or ()]
    aliases = _item_aliases(item)
    if task == "multiple_choice":
        reading = read_choice(ChoiceAnswer(text=text, n_options=len(item.get("options") or ()),
                                           expected=str(item["expected"]), inferred=inferred, aliases=aliases),
                              match=kinds)
    else:
        reading = read_binary_answer(BinaryAnswer(text=text, expected=str(item["expected"]), inferred=inferred,
                                                  question=item.get("question"), aliases=aliases), match=kinds)
    rationale = reading.rationale if inferred else None
    hops = []
    if task == "multihop":
        for value, how in zip(item.get("hop_values") or (), item.get("match") or ()):
            k = how.split(",") if how else []
            hops.append(None if not value else text is not None and value_mentioned(
                value, text, last_name="last_name" in k, club="club" in k, as_list="list" in k,
                first_name="first_name" in k, aliases=tuple(aliases.get(value, ()))))
    return {"label": reading.label, "rationale": rationale, "hop_rationale": hops, "knows": None}


def votes_from_samples(items: Mapping[str, Mapping[str, Any]], samples: Sequence[Mapping[str, Any]], *,
                       model: str, perturbation: str) -> list[dict[str, Any]]:  # fmt: skip
    """One vote row per item: the plurality label of its samples (one at temperature 0), a rationale / hop /
    knows flag held by most samples, and correctness against ``expected``."""
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for s in samples:
        grouped[s["item_id"]].append(s)
    out = []
    for item_id, rows in sorted(grouped.items()):
        rows = sorted(rows, key=lambda s: s["sample_index"])
        item = items[item_id]
        labels = [s["label"] for s in rows]
        v = plurality(labels)
        if v == "unknown" and any(lbl == "unsure" for lbl in labels):
            v = "unsure"
        # multiple choice: only "unsure" is missing; an unreadable or multiple pick is wrong (see read_choice)
        missing = v == "unsure" if item["task"] == "multiple_choice" else v in ("unsure", "unknown")

        def most(key: str, rows: Sequence[Mapping[str, Any]] = rows) -> bool | None:
            flags = [s[key] for s in rows if s[key] is not None]
            return None if not flags else sum(bool(f) for f in flags) * 2 > len(flags)

        n_hops = max((len(s["hop_rationale"] or ()) for s in rows), default=0)
        hop_flags = []
        for i in range(n_hops):
            flags = [s["hop_rationale"][i] for s in rows if len(s["hop_rationale"] or ()) > i]
            flags = [f for f in flags if f is not None]
            hop_flags.append(None if not flags else sum(bool(f) for f in flags) * 2 > len(flags))
        out.append({
            "item_id": item_id, "model": model, "perturbation": perturbation, "suite": "erbench", "task": item["task"],
            "judge": "", "labels": labels, "response_ids": [s["response_id"] for s in rows], "vote": v,
            "expected": str(item["expected"]), "correct": v == str(item["expected"]),
            "decided": v not in ("unsure", "unknown"), "dataset": item["dataset"], "qtype": item["qtype"],
            "fd": item["fd"], "hops": int(item["hops"]), "known_group": item["known_group"],
            "rationale": most("rationale"), "hop_rationale": hop_flags,
            "missing": missing, "knows": most("knows"),
        })  # fmt: skip
    return out


def known_groups(votes: Iterable[Mapping[str, Any]]) -> dict[str, bool]:
    """known_group -> whether the model knows that entity: every known-entity prompt of the group answered with
    only yes (binary: the one concatenated prompt; multiple choice: the prompt per attribute)."""
    out: dict[str, bool] = {}
    for v in votes:
        if v["task"] == "known_entity":
            out[v["known_group"]] = out.get(v["known_group"], True) and bool(v["knows"])
    return out


def _cell_rows(rows: Sequence[Mapping[str, Any]], breakdown: Mapping[str, str], common: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = sorted(rows, key=lambda r: r["item_id"])
    ids = [r["item_id"] for r in rows]
    out = [
        metric_row(metric="answer_accuracy", breakdown=breakdown, flags=[r["correct"] for r in rows], item_ids=ids, **common),
        metric_row(metric="missing_rate", breakdown=breakdown, flags=[r["missing"] for r in rows], item_ids=ids,
                   higher_is_better=False, **common),
        metric_row(metric="hallucination_rate", breakdown=breakdown,
                   flags=[not r["correct"] and not r["missing"] for r in rows], item_ids=ids, higher_is_better=False,
                   **common),
    ]
    with_r = [r for r in rows if r["rationale"] is not None]
    if with_r:
        rid = [r["item_id"] for r in with_r]
        out.append(metric_row(metric="rationale_accuracy", breakdown=breakdown, flags=[r["rationale"] for r in with_r],
                              item_ids=rid, **common))
        out.append(metric_row(metric="answer_rationale_accuracy", breakdown=breakdown,
                              flags=[r["correct"] and r["rationale"] for r in with_r], item_ids=rid, **common))
    return out


def _hop_rows(rows: Sequence[Mapping[str, Any]], breakdown: Mapping[str, str], common: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    n = max((len(r["hop_rationale"] or ()) for r in rows), default=0)
    for i in range(n):
        at = [r for r in rows if len(r["hop_rationale"]) > i and r["hop_rationale"][i] is not None]
        if not at:
            continue
        b = {**breakdown, "hop": str(i + 1)}
        ids = [r["item_id"] for r in at]
        out.append(metric_row(metric="hop_rationale_accuracy", breakdown=b, flags=[r["hop_rationale"][i] for r in at],
                              item_ids=ids, **common))
        out.append(metric_row(metric="hop_answer_rationale_accuracy", breakdown=b,
                              flags=[r["correct"] and r["hop_rationale"][i] for r in at], item_ids=ids, **common))
        if i == 0:
            continue
        pairs = [r for r in at if r["hop_rationale"][i - 1] is not None]
        for metric, prev in (("rationale_given_previous", True), ("rationale_given_previous_wrong", False)):
            sel = [r for r in pairs if bool(r["hop_rationale"][i - 1]) is prev]
            if sel:
                out.append(metric_row(metric=metric, breakdown=b, flags=[r["hop_rationale"][i] for r in sel],
                                      item_ids=[r["item_id"] for r in sel], **common))
    return out


def metrics_for(votes: Sequence[Mapping[str, Any]], *, model: str, perturbation: str, entities: str,
                keep: Callable[[Mapping[str, Any]], bool] = lambda v: True, overall: bool = False,
                confidence: float = 0.95) -> list[dict[str, Any]]:  # fmt: skip
    """The measure rows of one model's question votes that ``keep`` selects, per task x dataset x qtype (and
    hop), with ``entities`` in the breakdown; ``overall`` adds each task's rows without breakdown."""
    out: list[dict[str, Any]] = []
    by_task: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for v in votes:
        if v["task"] in QUESTION_TASKS and keep(v):
            by_task[v["task"]].append(v)
    for task, rows in sorted(by_task.items()):
        common = {"model": model, "perturbation": perturbation, "suite": "erbench", "task": task, "judge": "",
                  "confidence": confidence}
        if overall:
            out += _cell_rows(rows, {}, common)
        cells: dict[tuple[str, str, int], list[Mapping[str, Any]]] = defaultdict(list)
        for r in rows:
            cells[(r["dataset"], r["qtype"], int(r["hops"]))].append(r)
        for (dataset, qtype, hops), members in sorted(cells.items()):
            b = {"dataset": dataset, "qtype": qtype, "entities": entities, **({"hops": str(hops)} if hops > 1 else {})}
            out += _cell_rows(members, b, common)
            if task == "multihop":
                out += _hop_rows(members, b, common)
    return out


def known_share_rows(votes: Sequence[Mapping[str, Any]], *, model: str, perturbation: str,
                     confidence: float = 0.95) -> list[dict[str, Any]]:  # fmt: skip
    """``known_share`` per dataset x known-entity kind: the share of entities the model knows, n = entities."""
    groups: dict[tuple[str, str], dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for v in votes:
        if v["task"] == "known_entity":
            groups[(v["dataset"], v["qtype"])][v["known_group"]].append(v)
    out = []
    for (dataset, qtype), by_group in sorted(groups.items()):
        keys = sorted(by_group)
        out.append(metric_row(model=model, perturbation=perturbation, suite="erbench", task="known_entity", judge="",
                              metric="known_share", breakdown={"dataset": dataset, "qtype": qtype},
                              flags=[all(bool(v["knows"]) for v in by_group[k]) for k in keys],
                              item_ids=sorted(v["item_id"] for k in keys for v in by_group[k]), confidence=confidence))
    return out


def common_metrics(votes: Sequence[Mapping[str, Any]], *, min_known: int = 20,
                   confidence: float = 0.95) -> list[dict[str, Any]]:  # fmt: skip
    """Setting 2 of the paper: every model's measures on the questions whose entity every evaluated model knows.
    ``votes`` are the vote rows of all models (each with ``model``). Per dataset, a model that knows fewer than
    ``min_known`` entities is not evaluated and does not shrink the common set (as in the paper's Table 13);
    ``entities`` = "common" in the breakdown."""
    by_model: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for v in votes:
        by_model[(str(v["model"]), str(v.get("perturbation") or "none"))].append(v)
    known = {key: known_groups(rows) for key, rows in by_model.items()}
    dataset_of: dict[str, str] = {}
    for v in votes:
        dataset_of[v["known_group"]] = v["dataset"]
    counts: dict[tuple[tuple[str, str], str], int] = defaultdict(int)
    for key, groups in known.items():
        for g, k in groups.items():
            counts[(key, dataset_of[g])] += bool(k)
    datasets = sorted(set(dataset_of.values()))
    out = []
    for perturbation in sorted({k[1] for k in by_model}):
        keys = [k for k in by_model if k[1] == perturbation]
        evaluated = {d: [k for k in keys if counts[(k, d)] >= min_known] for d in datasets}
        common: set[str] = set()
        for d in datasets:
            if not evaluated[d]:
                continue
            groups = {g for g, ds in dataset_of.items() if ds == d}
            for k in evaluated[d]:
                groups &= {g for g, ok in known[k].items() if ok}
            common |= groups
        for key in sorted(keys):
            ok_datasets = {d for d in datasets if key in evaluated[d]}
            out += metrics_for(by_model[key], model=key[0], perturbation=key[1], entities="common",
                               keep=lambda v, ok=ok_datasets, c=frozenset(common): v["dataset"] in ok and v["known_group"] in c,
                               confidence=confidence)
    return out
