"""ERBench's report section: A / R / AR / H per dataset x question type for each evaluation setting, the multi-hop
per-hop measures and the known-entity counts, as plain data for ``templates/erbench/section.html``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kgprobe.suites.base import breakdown_of

__all__ = ["TEMPLATES", "section"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
_MEASURES = (("answer_accuracy", "A"), ("rationale_accuracy", "R"), ("answer_rationale_accuracy", "AR"),
             ("hallucination_rate", "H"))
#: multi-hop cells, labelled as Table 4 (A, R-ext, AR-ext per hop, H); the suite's R and AR over every hop are
#: shown apart and named so, as they are not Table 4's R
_MULTIHOP = (("answer_accuracy", "A"), ("rationale_ext", "R-ext"), ("hallucination_rate", "H"),
             ("rationale_accuracy", "R (every hop)"), ("answer_rationale_accuracy", "AR (every hop)"))
_SETTINGS = (("known", "(1) entities the model knows"), ("common", "(2) entities every evaluated model knows"),
             ("all", "(3) all questions"))
_HOP = (("hop_rationale_accuracy", "R at hop i"), ("hop_answer_rationale_accuracy", "AR-ext (hop i)"),
        ("rationale_given_previous", "Pr(r_i | r_i-1)"), ("rationale_given_previous_wrong", "Pr(r_i | not r_i-1)"))


def _cell(row: Mapping[str, Any] | None) -> str:
    if row is None or not row.get("n"):
        return "–"
    return f"{row['value']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}] n={row['n']}"


def _order(found: Sequence[str], preferred: Sequence[str]) -> list[str]:
    return [m for m in preferred if m in found] + sorted(set(found) - set(preferred))


def section(ctx: Any, metrics: Sequence[Mapping[str, Any]]) -> Any:
    """The :class:`~kgprobe.report.render.ReportSection` of ERBench from its closed-book metric rows: per setting,
    the single-hop cells (A, R, AR, H), the multi-hop cells as Table 4 labels them (A, R-ext, AR-ext per hop, H,
    and the suite's R / AR over every hop, named so) and the per-hop rows, wherever the metric rows have them."""
    from kgprobe.report.render import ReportSection, differing_cells

    flag = differing_cells(metrics)

    def fair(row: Mapping[str, Any] | None) -> str:
        return flag.text(row, _cell(row))

    index: dict[tuple, Mapping[str, Any]] = {}
    for m in metrics:
        b = breakdown_of(m)
        index[(m["model"], m["task"], m["metric"], b.get("dataset"), b.get("qtype"), b.get("entities"),
               b.get("hop"))] = m
    models = _order(sorted({m["model"] for m in metrics}), list(getattr(ctx, "models", ()) or ()))
    n_hops = max((int(k[6]) for k in index if k[6] is not None and str(k[6]).isdigit()), default=0)
    settings = []
    for key, label in _SETTINGS:
        rows, multihop, hops = [], [], []
        cells = sorted({(k[1], k[3], k[4]) for k in index if k[5] == key and k[6] is None and k[3] is not None})
        for model in models:
            for task, dataset, qtype in cells:
                if not any(index.get((model, task, metric, dataset, qtype, key, None))
                           for metric, _ in (*_MEASURES, *_MULTIHOP)):
                    continue
                if task == "multihop":
                    multihop.append({
                        "model": model, "dataset": dataset, "qtype": qtype,
                        **{short: fair(index.get((model, task, metric, dataset, qtype, key, None)))
                           for metric, short in _MULTIHOP},
                        "ar_ext": [fair(index.get((model, task, "hop_answer_rationale_accuracy", dataset, qtype, key,
                                                   str(i)))) for i in range(1, n_hops + 1)]})
                    continue
                rows.append({"model": model, "task": task, "dataset": dataset, "qtype": qtype,
                             **{short: fair(index.get((model, task, metric, dataset, qtype, key, None)))
                                for metric, short in _MEASURES}})
        for k, _m in sorted(index.items(), key=lambda kv: (models.index(kv[0][0]) if kv[0][0] in models else 0,
                                                          kv[0][3] or "", kv[0][4] or "", kv[0][6] or "")):
            if k[1] == "multihop" and k[5] == key and k[6] is not None and k[2] == "hop_rationale_accuracy":
                hops.append({"model": k[0], "dataset": k[3], "qtype": k[4], "hop": k[6],
                             **{short: fair(index.get((k[0], "multihop", metric, k[3], k[4], key, k[6])))
                                for metric, short in _HOP}})
        if rows or multihop or hops:
            settings.append({"key": key, "label": label, "rows": rows, "multihop": multihop, "hops": hops})
    known = defaultdict(dict)
    kinds = sorted({(k[3], k[4]) for k in index if k[2] == "known_share"})
    for (model, task, metric, dataset, qtype, _e, _h), m in index.items():
        if metric == "known_share":
            known[model][(dataset, qtype)] = f"{round(m['value'] * m['n'])} of {m['n']}"
    known_rows = [{"model": model, "counts": [known[model].get(k, "–") for k in kinds]} for model in models
                  if model in known]
    # setting 2's entity counts: one common set per dataset and kind, the same for every model evaluated there
    common: dict[tuple[str, str], dict[str, Any]] = {}
    for m in metrics:
        if m["metric"] == "common_share":
            b = breakdown_of(m)
            cell = common.setdefault((b.get("dataset"), b.get("qtype")), {"models": []})
            cell["count"] = f"{round(m['value'] * m['n'])} of {m['n']}"
            cell["models"].append(m["model"])
    common_rows = [{"dataset": d, "kind": q, "count": c["count"], "models": ", ".join(sorted(c["models"]))}
                   for (d, q), c in sorted(common.items())]
    readings = sorted({str(breakdown_of(m).get("reading")) for m in metrics if breakdown_of(m).get("reading")})
    data = {"settings": settings, "readings": readings, "known_columns": [f"{d} ({q})" for d, q in kinds],
            "known_rows": known_rows, "common_rows": common_rows, "measures": [short for _, short in _MEASURES],
            "multihop_columns": [short for _, short in _MULTIHOP[:2]],
            "multihop_after": [short for _, short in _MULTIHOP[2:]],
            "ar_ext_columns": [f"AR-ext hop {i}" for i in range(1, n_hops + 1)],
            "hop_columns": [short for _, short in _HOP]}
    shown_metrics = {x for x, _ in _MEASURES} | {x for x, _ in _MULTIHOP} | {x for x, _ in _HOP} | \
        {"known_share", "common_share"}
    shown = [m for m in metrics if m["metric"] in shown_metrics]
    return ReportSection(template="erbench/section.html", template_dir=TEMPLATES, data=data, metrics=shown)
