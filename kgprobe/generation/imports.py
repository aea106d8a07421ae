"""Answers generated elsewhere (an internal endpoint, a cluster job) brought into the response store, so the model
is scored like any other, through the same jobs.

The input is JSONL, one sample per line::

    {"item_id": "grapheval-00012", "sample_index": 0, "text": "True.", "tokens_in": 41, "tokens_out": 2}
    {"prompt_sha256": "9f2c...", "sample_index": 1, "text": "False."}

A row names its prompt by ``item_id`` or by ``prompt_sha256`` (the SHA-256 of the prompt,
:meth:`kgprobe.generation.records.Prompt.sha256`; ``prompt_hash`` is read as the same); ``sample_index`` defaults
to 0; ``tokens_in`` / ``tokens_out`` are optional; ``error`` marks a failed request (``text`` may then be null).
Each row is stored under the model's sampling parameters of every suite whose prompt it matches, keyed exactly
as a generated sample, so the responses job of that model finds every sample stored and sends nothing. A model
entry with ``backend: imported`` is never called: its partitions hold the prompts it has answers for
(:func:`imported_prompts`), so answers for part of a suite score that part.

    >>> summary = import_responses(read_jsonl("answers.jsonl"), model="internal-7b", targets=targets, store=store)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kgprobe.errors import KGProbeError
from kgprobe.generation.records import ModelSpec, Prompt, SamplingParams
from kgprobe.generation.store import ResponseStore

__all__ = ["BACKEND", "ResponseImportError", "import_responses", "imported_prompts", "read_jsonl"]

#: The ``backend`` column of imported rows.
BACKEND = "import"

_KEYS = {"item_id", "prompt_sha256", "prompt_hash", "sample_index", "text", "tokens_in", "tokens_out", "error",
         "finish_reason", "latency_s", "cost"}


class ResponseImportError(KGProbeError):
    """A JSONL file of answers that cannot be imported as given (nothing is written)."""


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a JSONL file of answers, each with its 1-based ``line``; blank lines are skipped.
    Raises ResponseImportError naming the file and line of a row that is not a JSON object."""
    path = Path(path)
    if not path.is_file():
        raise ResponseImportError(f"{path}: no such file; pass the JSONL file of answers to import")
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ResponseImportError(f"{path}:{number}: not valid JSON ({exc.msg}); write one JSON object per "
                                          "line") from exc
            if not isinstance(row, dict):
                raise ResponseImportError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
            rows.append({**row, "line": number})
    return rows


def _check(row: Mapping[str, Any], where: str) -> tuple[str | None, str | None, int]:
    unknown = sorted(set(row) - _KEYS - {"line"})
    if unknown:
        raise ResponseImportError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(_KEYS)}")
    item_id = row.get("item_id")
    sha = row.get("prompt_sha256", row.get("prompt_hash"))
    if item_id is None and sha is None:
        raise ResponseImportError(f"{where}: the row names no prompt; give 'item_id' or 'prompt_sha256'")
    index = row.get("sample_index", 0)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ResponseImportError(f"{where}: 'sample_index' must be an integer >= 0, got {index!r}")
    text, error = row.get("text"), row.get("error")
    if (text is None and error is None) or (text is not None and not isinstance(text, str)):
        raise ResponseImportError(f"{where}: 'text' must be the answer as a string (or give 'error' for a failed "
                                  f"request), got {text!r}")
    for key in ("tokens_in", "tokens_out"):
        v = row.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ResponseImportError(f"{where}: {key!r} must be a token count >= 0, got {v!r}")
    return (None if item_id is None else str(item_id)), (None if sha is None else str(sha)), index


def import_responses(rows: Iterable[Mapping[str, Any]], *, model: str,
                     targets: Sequence[tuple[Prompt, SamplingParams]], store: ResponseStore,
                     source: str = "") -> dict[str, Any]:  # fmt: skip
    """Write ``rows`` (see the module docstring) into ``store`` as ``model``'s samples of the prompts in
    ``targets`` ((prompt, sampling parameters) pairs: what the model is asked, per suite). All rows are checked
    before anything is written: a row that matches no prompt, a ``sample_index`` beyond the model's ``n`` for a
    prompt it matches, or two different answers for one sample of one prompt (items with the same prompt text share
    their answers, as generated ones do) raise ResponseImportError (naming the lines and what to do).
    Returns ``{"rows", "stored", "prompts", "run_id"}`` (stored: store rows written, one per row and matching
    (prompt, parameters))."""
    rows = list(rows)
    by_item: dict[str, list[tuple[Prompt, SamplingParams]]] = {}
    by_sha: dict[str, list[tuple[Prompt, SamplingParams]]] = {}
    for prompt, params in targets:
        by_item.setdefault(prompt.item_id, []).append((prompt, params))
        by_sha.setdefault(prompt.sha256(), []).append((prompt, params))
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()[:12]
    run_id = f"import-{digest}"
    created = datetime.now(timezone.utc)
    unmatched: list[str] = []
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    for k, row in enumerate(rows):
        where = f"{source or 'row'}:{row.get('line', k + 1)}"
        item_id, sha, index = _check(row, where)
        matches = by_sha.get(sha, []) if sha is not None else by_item.get(item_id or "", [])
        if item_id is not None and sha is not None:
            matches = [m for m in matches if m[0].item_id == item_id]
        if not matches:
            unmatched.append(f"{where} ({'item_id ' + item_id if item_id else 'prompt_sha256 ' + str(sha)})")
            continue
        for prompt, params in matches:
            if index >= params.n:
                raise ResponseImportError(f"{where}: sample_index {index}, but model {model!r} draws n={params.n} "
                                          f"sample(s) of this prompt; set 'n' of the model in the config to at "
                                          f"least {index + 1} or drop the row")
            key = (prompt.sha256(), params.sha256(), index)
            if key in out and out[key]["line"] != where:
                if (out[key]["text"], out[key]["error"]) == (row.get("text"), row.get("error")):
                    continue  # items that share a prompt share its answers: the same answer given twice
                raise ResponseImportError(f"{where}: sample {index} of this prompt is already given, with another "
                                          f"answer, at {out[key]['line']} (items with the same prompt share their "
                                          "answers); keep one answer per prompt and sample")
            out[key] = {"line": where, "model": model, "backend": BACKEND, "prompt_sha256": key[0],
                        "prompt": prompt.text, "sampling_params": params.to_json(), "params_sha256": key[1],
                        "sample_index": index, "text": row.get("text"), "finish_reason": row.get("finish_reason"),
                        "tokens_in": row.get("tokens_in"), "tokens_out": row.get("tokens_out"),
                        "latency_s": row.get("latency_s"), "cost": row.get("cost") or 0.0, "error": row.get("error"),
                        "retries": 0, "run_id": run_id, "created_at": created}
    if unmatched:
        raise ResponseImportError(f"{len(unmatched)} of {len(rows)} row(s) match no prompt model {model!r} is asked "
                                  f"(first: {', '.join(unmatched[:3])}); check the item ids or prompt hashes against "
                                  "the built items (the <suite>_items tables of the warehouse); nothing was imported")
    stored = [{k: v for k, v in r.items() if k != "line"} for r in out.values()]
    store.write_shard(model, stored)
    return {"rows": len(rows), "stored": len(stored), "prompts": len({k[0] for k in out}), "run_id": run_id}


def imported_prompts(store: ResponseStore, spec: ModelSpec, prompts: Sequence[Prompt]) -> list[Prompt]:
    """The ``prompts`` whose every sample (``spec.params.n`` of them) ``spec``'s model has a stored answer for, in
    order: what a partition of a ``backend: imported`` model holds (the others are left out, never asked)."""
    done = store.done_keys(spec.name, spec.params.sha256())
    return [p for p in prompts if all((p.sha256(), i) in done for i in range(spec.params.n))]
