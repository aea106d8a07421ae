"""The report's per-item drill-down: every closed-book item of every suite and model, with its prompt, the raw
answers, their readings, the vote, the expected answer and the evidence, embedded in the page gzip-compressed and
paged in the browser (filters: model, suite, breakdown, correct / wrong / unknown, free text).

    >>> rows = drilldown_rows("grapheval", items, votes, samples)   # one row per (item, model), read answers only
    >>> payload = embed(rows)                                        # base64 of gzip of JSON, for the page
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgprobe.report.safe_text import neutralise_bidi_deep
from kgprobe.secrets import mask_secrets

__all__ = ["FIELDS", "drilldown_rows", "embed", "readable_evidence", "status"]

#: The keys of a drill-down row: suite, model, item id, task, breakdown text, prompt, answers, readings, vote,
#: expected, status (correct / wrong / unknown), evidence.
FIELDS: tuple[str, ...] = ("s", "m", "i", "t", "b", "p", "a", "r", "v", "e", "c", "ev")


def status(vote: Any, correct: Any) -> str:
    """``"unknown"`` for an unreadable or undecided vote, else ``"correct"`` or ``"wrong"``."""
    if vote is None or str(vote).lower() in ("unknown", ""):
        return "unknown"
    return "correct" if correct else "wrong"


def _breakdown(raw: Any) -> str:
    pairs = raw.items() if isinstance(raw, Mapping) else (raw or [])
    return "; ".join(f"{k}={v}" for k, v in sorted((str(k), str(v)) for k, v in pairs if v is not None))


#: The judges of the offline reading: none (a suite's own reader), or the heuristic claim extractor that OKGQA and
#: Drowzee read answers with when no judge model is set.
_OFFLINE = ("", "heuristic")


def drilldown_rows(suite: str, items: Iterable[Mapping[str, Any]], votes: Iterable[Mapping[str, Any]],
                   samples: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:  # fmt: skip
    """One row (:data:`FIELDS`) per closed-book vote of ``suite`` read without a judge model (judge "", or the
    heuristic extractor's "heuristic" where the suite has no judge-free reading): ``items`` (its items table:
    question, expected, breakdown, evidence), ``votes`` (its scores table), ``samples`` (its sample rows: text and
    label per sample, in sample order). Rows sorted by model, then item id."""
    by_id = {str(it["item_id"]): it for it in items}
    answers: dict[tuple[str, str, str], list[tuple[int, Any, Any]]] = {}
    for smp in samples:
        judge = str(smp.get("judge") or "")
        if judge not in _OFFLINE:
            continue
        answers.setdefault((str(smp["model"]), str(smp["item_id"]), judge), []).append(
            (int(smp.get("sample_index") or 0), smp.get("text"), smp.get("label")))
    chosen: dict[tuple[str, str], Mapping[str, Any]] = {}
    for v in votes:
        judge = str(v.get("judge") or "")
        if judge not in _OFFLINE or str(v.get("perturbation") or "none") != "none":
            continue
        key = (str(v["model"]), str(v["item_id"]))
        if key not in chosen or _OFFLINE.index(judge) < _OFFLINE.index(str(chosen[key].get("judge") or "")):
            chosen[key] = v  # the judge-free reading first, where a suite has both
    out = []
    for (model, item_id), v in chosen.items():
        item = by_id.get(item_id, {})
        judge = str(v.get("judge") or "")
        got = sorted(answers.get((model, item_id, judge)) or answers.get((model, item_id, "")) or [],
                     key=lambda x: x[0])
        out.append({"s": suite, "m": model, "i": item_id, "t": str(v.get("task") or ""),
                    "b": _breakdown(item.get("breakdown")), "p": str(item.get("question") or ""),
                    # answers are masked when they are generated; again here for those an older version stored
                    "a": [mask_secrets(t) if t is not None else "(no answer: generation failed)" for _, t, _ in got],
                    "r": [str(lab) for _, _, lab in got], "v": str(v.get("vote")),
                    "e": str(v.get("expected") if v.get("expected") is not None else item.get("expected")),
                    "c": status(v.get("vote"), v.get("correct")), "ev": readable_evidence(item.get("evidence"))})
    out.sort(key=lambda r: (r["m"], r["s"], r["i"]))
    return out


#: The ends of a triple as evidence stores it.
_TRIPLE_KEYS = (("head", "relation", "tail"), ("subject", "relation", "object"))


def readable_evidence(evidence: Any) -> str:
    """An item's evidence JSON as a person reads it in the drill-down: every triple stored by ids
    (``{"head": 192, "relation": "premiered_in", "tail": 644}``) written by the labels of the evidence's own
    ``entities`` / ``relations`` maps ("Fidelio — place of first performance → Vienna"), which are then left out.
    Evidence without such maps, or that is not a JSON object, is shown as stored."""
    text = str(evidence or "")
    try:
        ev = json.loads(text)
    except ValueError:
        return text
    if not isinstance(ev, dict):
        return text
    entities = {str(k): str(v) for k, v in ev["entities"].items()} if isinstance(ev.get("entities"), dict) else {}
    relations = {str(k): str(v) for k, v in ev["relations"].items()} if isinstance(ev.get("relations"), dict) else {}
    if not entities:
        return text

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            for h, r, t in _TRIPLE_KEYS:
                if {h, r, t} <= x.keys():
                    line = (f"{entities.get(str(x[h]), str(x[h]))} — {relations.get(str(x[r]), str(x[r]))} → "
                            f"{entities.get(str(x[t]), str(x[t]))}")
                    rest = {k: walk(v) for k, v in x.items() if k not in (h, r, t)}
                    return {"triple": line, **rest} if rest else line
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    shown = {k: walk(v) for k, v in ev.items() if k not in ("entities", "relations")}
    return json.dumps(shown, ensure_ascii=False)


def embed(rows: Sequence[Mapping[str, Any]]) -> str:
    """``rows`` as base64 of gzip of compact JSON: what the page's script inflates with the browser's
    DecompressionStream (100,000 items of a few hundred bytes each are a few MB). Bidirectional controls in any
    text are shown as ``[U+202E]`` (:func:`~kgprobe.report.safe_text.neutralise_bidi`)."""
    # bidi controls made visible here, the one place every field passes, as the page's other cells show them
    raw = json.dumps(neutralise_bidi_deep(list(rows)), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")
