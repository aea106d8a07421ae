"""ERBench's scoring: every answer read (yes / no / unsure, or the option chosen), its rationale checked for the
FD-inferred values, the known-entity prompts read, and the paper's measures per dataset x question type.

Measures (§4, "Performance Measures"), each a proportion with its Wilson interval and n: ``answer_accuracy`` A,
``rationale_accuracy`` R (every inferred value is mentioned), ``answer_rationale_accuracy`` AR, ``missing_rate`` M
(unsure, or no binary answer could be read; in multiple choice only unsure) and ``hallucination_rate`` H = 1 - A - M
(lower is better). Multiple choice averages its three phrasings by counting each as an item, its Wilson intervals
corrected for their clustering by entity (:func:`clustered_wilson`); a None-of-the-above question has no false
option whose value to look for: by default (``nota_rationale="zero"``, the released code) its R and AR count 0,
with ``"skip"`` it gets A, M and H only. Multi-hop cells: ``rationale_accuracy`` there is every hop's value
mentioned (not Table 4's R-ext), ``rationale_ext`` is R-ext (§4.3; default the released per-question mean, Table
4's numbers, :func:`rationale_ext`) with the Wilson interval of a bounded mean; per hop i, ``hop_rationale_accuracy``
(hop i's value mentioned), ``hop_answer_rationale_accuracy`` (AR-ext), ``rationale_given_previous`` Pr(r_i |
r_{i-1}) and ``rationale_given_previous_wrong`` Pr(r_i | not r_{i-1}) (§B.8), by default over the questions whose
path has a value at every hop, as the released code computes Table 4 (:data:`HOP_QUESTION_READINGS`).
``known_share`` is the share of entities the
model knows (§B.2-B.3).

Breakdown keys: ``dataset``, ``qtype`` (BN(Y), BN(N), MC, MC-NOTA; known / known_mc for the known-entity share),
``hops`` (multi-hop) and ``hop`` (per-hop measures), and ``entities``: the paper's three evaluation settings —
``known`` (questions on entities this model knows, setting 1), ``common`` (entities every evaluated model knows,
setting 2: :func:`common_metrics`, over all models' votes) and ``all`` (setting 3). Known entities are counted per
dataset and question type (:func:`known_kind`); below ``min_known`` a cell is n/a in settings 1 and 2. Overall rows (no breakdown,
every question) carry each task's A, R, AR, M and H for the leaderboard.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from statistics import NormalDist
from typing import Any

import pyarrow as pa

from kgprobe.scoring.stats import vote as plurality
from kgprobe.scoring.stats import wilson_mean_ci
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
    "HOP_QUESTION_READINGS",
    "QUESTION_TASKS",
    "RATIONALE_EXT_READINGS",
    "clustered_wilson",
    "common_metrics",
    "known_counts",
    "known_groups",
    "known_kind",
    "known_setting_keep",
    "rationale_ext",
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


def _item_aliases(item: Mapping[str, Any], rationale_match: str = "released") -> dict[str, list[str]]:
    """The item's value -> other spellings under the ``rationale_match`` reading (``aliases``: the released
    reading's; ``kgprobe_aliases``: kgprobe's; an item built before that column reads ``aliases``)."""
    raw = item.get("kgprobe_aliases") if rationale_match == "kgprobe" and "kgprobe_aliases" in item else \
        item.get("aliases")
    return json.loads(raw) if raw else {}


def read_sample(item: Mapping[str, Any], text: str | None, error: str | None, *,
                known_rule: str = "released", nota_rationale: str = "zero", answer_reading: str = "released",
                rationale_match: str = "released") -> dict[str, Any]:
    """One answer's reading: ``label``, ``rationale`` (every inferred value mentioned), ``hop_rationale`` (per hop,
    None where the hop has no value) and ``knows`` (known-entity prompts, read by ``known_rule``), with the readings
    ``answer_reading`` and ``rationale_match`` (defaults: the released scripts'). Binary and multiple-choice answers are
    read by the contract functions :func:`~kgprobe.suites.erbench.verify.read_binary_answer` and
    :func:`~kgprobe.suites.erbench.verify.read_choice`, the ones ``binary_metrics`` and ``choice_metrics`` use."""
    text = None if error is not None else text
    task = item["task"]
    if task == "known_entity":
        label = read_binary(text, item.get("question"))
        return {"label": label, "rationale": None, "hop_rationale": [],
                "knows": knows_entity(text, names=list(item.get("names") or ()), rule=known_rule)}
    inferred = tuple(str(v) for v in item.get("inferred") or ())
    kinds = [m.split(",") if m else [] for m in item.get("match") or ()]
    aliases = _item_aliases(item, rationale_match)
    if task == "multiple_choice":
        reading = read_choice(ChoiceAnswer(text=text, n_options=len(item.get("options") or ()),
                                           expected=str(item["expected"]), inferred=inferred, aliases=aliases),
                              match=kinds, nota_rationale=nota_rationale, rationale_match=rationale_match)
    else:
        reading = read_binary_answer(BinaryAnswer(text=text, expected=str(item["expected"]), inferred=inferred,
                                                  question=item.get("question"), aliases=aliases), match=kinds,
                                     answer_reading=answer_reading, rationale_match=rationale_match)
    rationale = reading.rationale if inferred else None
    hops = []
    if task == "multihop":
        for value, how in zip(item.get("hop_values") or (), item.get("match") or ()):
            k = how.split(",") if how else []
            hops.append(None if not value else text is not None and value_mentioned(
                value, text, last_name="last_name" in k, club="club" in k, as_list="list" in k,
                first_name="first_name" in k, first_word="first_word" in k, aliases=tuple(aliases.get(value, ())),
                rationale_match=rationale_match))
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


def clustered_wilson(flags: Sequence[bool], clusters: Sequence[str], *,
                     confidence: float = 0.95) -> tuple[float, float, float]:  # fmt: skip
    """The Wilson interval of a share whose items come in clusters (the three phrasings of one entity's multiple-
    choice question), with n divided by the design effect: ``(deff, low, high)``. deff is the ratio of the
    clustered variance of the share (ratio estimator over the k clusters, k / (k - 1) * sum (y_c - p m_c)^2 / n^2)
    to the binomial one, at least 1; where the binomial variance is 0 (all flags equal) deff is the mean cluster
    size (the phrasings are taken as one answer)."""
    n = len(flags)
    if n == 0:
        return 1.0, math.nan, math.nan
    sizes: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for f, c in zip(flags, clusters):
        sizes[c][0] += 1
        sizes[c][1] += bool(f)
    k = len(sizes)
    p = sum(bool(f) for f in flags) / n
    mean_size = n / k
    if p in (0.0, 1.0):
        deff = mean_size
    elif k < 2:
        deff = float(n)
    else:
        var_c = k / (k - 1) * sum((y - p * m) ** 2 for m, y in sizes.values()) / n ** 2
        deff = var_c / (p * (1 - p) / n)
    deff = min(max(deff, 1.0), float(max(m for m, _ in sizes.values())))
    n_eff = n / deff
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    z2n = z * z / n_eff
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / n_eff + z2n / (4 * n_eff)) / (1 + z2n)
    low = 0.0 if p == 0 else min(p, max(0.0, centre - half))
    high = 1.0 if p == 1 else max(p, min(1.0, centre + half))
    return deff, low, high


def _share(rows: Sequence[Mapping[str, Any]], metric: str, flags: Sequence[bool], breakdown: Mapping[str, str],
           common: Mapping[str, Any], higher_is_better: bool = True) -> dict[str, Any]:  # fmt: skip
    """A metric row of a share; over multiple-choice phrasings, its Wilson interval is corrected for the
    clustering of the phrasings by entity (:func:`clustered_wilson`)."""
    row = metric_row(metric=metric, breakdown=breakdown, flags=flags, item_ids=[r["item_id"] for r in rows],
                     higher_is_better=higher_is_better, **common)
    if common.get("task") == "multiple_choice" and rows:
        _deff, row["ci_low"], row["ci_high"] = clustered_wilson(
            flags, [r["known_group"] for r in rows], confidence=common.get("confidence", 0.95))
    return row


def _cell_rows(rows: Sequence[Mapping[str, Any]], breakdown: Mapping[str, str], common: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = sorted(rows, key=lambda r: r["item_id"])
    out = [
        _share(rows, "answer_accuracy", [r["correct"] for r in rows], breakdown, common),
        _share(rows, "missing_rate", [r["missing"] for r in rows], breakdown, common, higher_is_better=False),
        _share(rows, "hallucination_rate", [not r["correct"] and not r["missing"] for r in rows], breakdown, common,
               higher_is_better=False),
    ]
    with_r = [r for r in rows if r["rationale"] is not None]
    if with_r:
        out.append(_share(with_r, "rationale_accuracy", [r["rationale"] for r in with_r], breakdown, common))
        out.append(_share(with_r, "answer_rationale_accuracy", [r["correct"] and r["rationale"] for r in with_r],
                          breakdown, common))
    return out


#: R-ext readings (§4.3): ``per_question`` (the released ``error_analysis.py``, which produced Table 4: each
#: question's share of its hops whose value the rationale mentions, averaged over the questions) and ``per_hop``
#: (the paper's text: per hop, the share of right rationales; the mean of those shares)
RATIONALE_EXT_READINGS = ("per_question", "per_hop")
#: which multi-hop questions the per-hop measures count: ``complete`` (the released ``error_analysis.py``, which
#: produced Table 4's AR-ext: every hop over the questions whose path has a value at every hop, on Soccer & Olympic
#: the questions on Olympic-host cities) or ``each`` (hop i over every question where hop i has a value)
HOP_QUESTION_READINGS = ("complete", "each")


def _per_question_scores(hop_flags: Sequence[Sequence[bool | None]]) -> list[float]:
    out = []
    for h in hop_flags:
        at = [f for f in h if f is not None]
        if at:
            out.append(sum(bool(f) for f in at) / len(at))
    return out


def rationale_ext(hop_flags: Sequence[Sequence[bool | None]], *, reading: str = "per_question") -> float:
    """R-ext of the paper (§4.3) over answers' per-hop flags (None where the hop has no value). ``per_question``
    (default; the released code, Table 4's numbers): each answer's share of its valued hops that are right,
    averaged over the answers. ``per_hop`` (the paper's text): per hop i, the share of rationales whose hop-i value
    is right, averaged over the hops. NaN when no hop has a value."""
    if reading not in RATIONALE_EXT_READINGS:
        raise ValueError(f"rationale_ext: reading must be one of {', '.join(RATIONALE_EXT_READINGS)}, got {reading!r}")
    if reading == "per_question":
        scores = _per_question_scores(hop_flags)
        return sum(scores) / len(scores) if scores else math.nan
    n = max((len(h) for h in hop_flags), default=0)
    shares = []
    for i in range(n):
        at = [h[i] for h in hop_flags if len(h) > i and h[i] is not None]
        if at:
            shares.append(sum(bool(f) for f in at) / len(at))
    return sum(shares) / len(shares) if shares else math.nan


def _rationale_ext_row(rows: Sequence[Mapping[str, Any]], breakdown: Mapping[str, str], common: Mapping[str, Any],
                       *, reading: str = "per_question") -> dict[str, Any] | None:  # fmt: skip
    """The ``rationale_ext`` row: R-ext (``reading``) with the Wilson interval of a mean of scores in [0, 1]
    (:func:`~kgprobe.scoring.stats.wilson_mean_ci`), which never collapses to a point at 0 or 1. ``per_question``:
    over the answers' per-question scores, n = the answers with a valued hop. ``per_hop`` (a mean of per-hop
    shares): the same formula at the mean with n = the smallest hop's count (each share's variance is at most
    p(1 - p) / n of its hop)."""
    flags = [list(r["hop_rationale"] or ()) for r in rows]
    value = rationale_ext(flags, reading=reading)
    if math.isnan(value):
        return None
    confidence = common.get("confidence", 0.95)
    scored = [r for r, f in zip(rows, flags) if any(x is not None for x in f)]
    if reading == "per_question":
        low, high = wilson_mean_ci(_per_question_scores(flags), confidence=confidence)
        n = len(scored)
    else:
        n_hops = max(len(f) for f in flags)
        counts = [sum(1 for f in flags if len(f) > i and f[i] is not None) for i in range(n_hops)]
        n = min(c for c in counts if c)
        low, high = wilson_mean_ci([value] * n, confidence=confidence)
    return {"model": common["model"], "perturbation": common["perturbation"], "suite": "erbench",
            "task": common["task"], "judge": "", "metric": "rationale_ext", "breakdown": dict(breakdown),
            "higher_is_better": True, "n": n, "value": value, "ci_low": min(low, value),
            "ci_high": max(high, value), "interval": "wilson_mean",
            "item_ids": sorted(r["item_id"] for r in scored)}


def _complete(r: Mapping[str, Any]) -> bool:
    h = r["hop_rationale"] or ()
    return bool(h) and all(f is not None for f in h)


def _hop_rows(rows: Sequence[Mapping[str, Any]], breakdown: Mapping[str, str], common: Mapping[str, Any], *,
              questions: str = "complete") -> list[dict[str, Any]]:  # fmt: skip
    """Per hop i: R at hop i, AR-ext (answer right and hop i right) and Pr(r_i | r_i-1), Pr(r_i | not r_i-1), over
    the questions ``questions`` selects (see :data:`HOP_QUESTION_READINGS`)."""
    if questions not in HOP_QUESTION_READINGS:
        raise ValueError(f"hop questions must be one of {', '.join(HOP_QUESTION_READINGS)}, got {questions!r}")
    if questions == "complete":
        rows = [r for r in rows if _complete(r)]
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
                confidence: float = 0.95, rationale_ext_reading: str = "per_question",
                hop_questions: str = "complete") -> list[dict[str, Any]]:  # fmt: skip
    """The measure rows of one model's question votes that ``keep`` selects, per task x dataset x qtype (and
    hop), with ``entities`` in the breakdown; ``overall`` adds each task's rows without breakdown. Multi-hop
    cells add R-ext read by ``rationale_ext_reading`` and per-hop rows over the questions ``hop_questions``
    selects (the defaults: Table 4's released readings)."""
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
                out += _hop_rows(members, b, common, questions=hop_questions)
                ext = _rationale_ext_row(members, b, common, reading=rationale_ext_reading)
                if ext is not None:
                    out.append(ext)
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


def known_kind(v: Mapping[str, Any]) -> str:
    """Which known-entity count a vote belongs to (the paper counts them per question type, Table 13): ``MC``
    (multiple choice and its per-attribute prompts), ``hop`` (multi-hop) or ``BN`` (binary)."""
    if v["task"] == "multiple_choice" or v.get("qtype") == "known_mc":
        return "MC"
    if int(v.get("hops") or 1) > 1:
        return "hop"
    return "BN"


def known_counts(votes: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], int]:
    """(dataset, kind) -> how many entities the model knows (see :func:`known_kind`)."""
    known = known_groups(votes)
    where: dict[str, tuple[str, str]] = {}
    for v in votes:
        if v["task"] == "known_entity":
            where[v["known_group"]] = (v["dataset"], known_kind(v))
    out: dict[tuple[str, str], int] = defaultdict(int)
    for g, ok in known.items():
        out[where[g]] += bool(ok)
    return dict(out)


def known_setting_keep(votes: Sequence[Mapping[str, Any]], *, min_known: int = 20) -> Callable[[Mapping[str, Any]], bool]:
    """Setting 1's filter: a question counts when the model knows its entity and knows at least ``min_known``
    entities of its dataset and question type (fewer is "n/a" in the paper's Table 2: no rows)."""
    known = known_groups(votes)
    counts = known_counts(votes)
    return lambda v: known.get(v["known_group"], False) and counts.get((v["dataset"], known_kind(v)), 0) >= min_known


def common_metrics(votes: Sequence[Mapping[str, Any]], *, min_known: int = 20, confidence: float = 0.95,
                   rationale_ext_reading: str = "per_question",
                   hop_questions: str = "complete") -> list[dict[str, Any]]:  # fmt: skip
    """Setting 2 of the paper: every model's measures on the questions whose entity every evaluated model knows.
    ``votes`` are the vote rows of all models (each with ``model``). Per dataset and question type (binary,
    multiple choice, multi-hop: Table 13 counts them apart), a model that knows fewer than ``min_known`` entities
    is not evaluated there and does not shrink the common set; ``entities`` = "common" in the breakdown."""
    by_model: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for v in votes:
        by_model[(str(v["model"]), str(v.get("perturbation") or "none"))].append(v)
    known = {key: known_groups(rows) for key, rows in by_model.items()}
    counts = {key: known_counts(rows) for key, rows in by_model.items()}
    cell_of: dict[str, tuple[str, str]] = {}
    for v in votes:
        if v["task"] == "known_entity":
            cell_of[v["known_group"]] = (v["dataset"], known_kind(v))
    cells = sorted(set(cell_of.values()))
    out = []
    for perturbation in sorted({k[1] for k in by_model}):
        keys = [k for k in by_model if k[1] == perturbation]
        evaluated = {c: [k for k in keys if counts[k].get(c, 0) >= min_known] for c in cells}
        common: set[str] = set()
        for c in cells:
            if not evaluated[c]:
                continue
            groups = {g for g, cc in cell_of.items() if cc == c}
            for k in evaluated[c]:
                groups &= {g for g, ok in known[k].items() if ok}
            common |= groups
        for key in sorted(keys):
            ok_cells = frozenset(c for c in cells if key in evaluated[c])
            out += metrics_for(by_model[key], model=key[0], perturbation=key[1], entities="common",
                               keep=lambda v, ok=ok_cells, cg=frozenset(common): (v["dataset"], known_kind(v)) in ok
                               and v["known_group"] in cg, confidence=confidence,
                               rationale_ext_reading=rationale_ext_reading, hop_questions=hop_questions)
    return out
