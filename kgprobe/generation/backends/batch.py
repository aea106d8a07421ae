"""Batch APIs: a partition's prompts as one provider batch job, at the provider's batch price.

For an OpenAI-compatible provider (OpenAI itself, and servers that implement its ``/v1/files`` + ``/v1/batches``
endpoints) :class:`OpenAIBatchClient` uploads one JSONL file with a request per (prompt, sample), creates the batch,
polls it until it ends and reads the output file back as :class:`~kgprobe.generation.Completion` objects, which the
runner stores like any other answer. The job's id is written to a state file (``state_dir``) as soon as it is
created, keyed by the requests it holds: a run that is killed while the job is pending re-attaches to it on the
next run instead of paying for it twice, and the state file is removed once its results are read. A job that
failed, expired or was cancelled is submitted again.

Greedy requests (temperature 0) ask once per prompt and repeat the answer, as the synchronous path does; sampled
ones ask once per sample with seed ``seed + i``. Requests the output file lacks, or that the provider answered
with an error, come back as failed completions (stored with the error and asked again by the next run).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kgprobe.generation.records import BackendError, Completion, Prompt, SamplingParams

__all__ = ["OpenAIBatchClient", "batch_key"]

_ENDED_BADLY = frozenset({"failed", "expired", "cancelled", "cancelling"})


def batch_key(model_id: str, requests: Sequence[dict[str, Any]]) -> str:
    """The identity of a batch job: the model and its exact request lines (so the same missing work re-attaches)."""
    digest = hashlib.sha256(model_id.encode())
    for r in requests:
        digest.update(json.dumps(r, sort_keys=True, separators=(",", ":")).encode())
    return digest.hexdigest()[:24]


class OpenAIBatchClient:
    """One provider's batch endpoints (``api_base`` like ``https://api.openai.com/v1``)."""

    def __init__(self, *, model_id: str, api_base: str, api_key: str | None, state_dir: Path,
                 poll_s: float = 30.0, timeout_s: float = 86400.0, log: Callable[[str], None] | None = None,
                 http_timeout_s: float = 60.0) -> None:  # fmt: skip
        import httpx

        self.model_id = model_id.split("/", 1)[1] if model_id.startswith("openai/") else model_id
        self.state_dir = Path(state_dir)
        self.poll_s, self.timeout_s = poll_s, timeout_s
        self.log = log or (lambda _m: None)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=api_base.rstrip("/"), headers=headers, timeout=http_timeout_s)
        self.submitted = 0  # jobs created by this client (re-attached ones are not counted)

    def close(self) -> None:
        self._http.close()

    # ---------------------------------------------------------------------------------------------------------------
    def requests(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[dict[str, Any]]:
        """The JSONL lines of the job: one per prompt when greedy, else one per sample."""
        out = []
        for p in prompts:
            for i in range(1 if params.temperature == 0 else params.n):
                out.append({"custom_id": f"{p.sha256()}:{i}", "method": "POST", "url": "/v1/chat/completions",
                            "body": {"model": self.model_id, "messages": p.messages(), "max_tokens": params.max_tokens,
                                     "temperature": params.temperature, "top_p": params.top_p,
                                     "seed": params.seed + i}})
        return out

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        """``params.n`` completions per prompt through one batch job (submitted, or re-attached when pending)."""
        if not prompts:
            return []
        lines = self.requests(prompts, params)
        key = batch_key(self.model_id, lines)
        state = self.state_dir / f"batch-{key}.json"
        batch_id = self._attach(state)
        if batch_id is None:
            batch_id = self._submit(lines, state)
        t0 = time.perf_counter()
        batch = self._wait(batch_id)
        results = self._results(batch)
        latency = time.perf_counter() - t0
        state.unlink(missing_ok=True)
        out = []
        for p in prompts:
            if params.temperature == 0:
                c = results.get(f"{p.sha256()}:0") or Completion.failure("batch: no result for this request",
                                                                         latency_s=latency)
                out.append([c] * params.n)
            else:
                out.append([results.get(f"{p.sha256()}:{i}") or Completion.failure(
                    "batch: no result for this request", latency_s=latency) for i in range(params.n)])
        return out

    # ---------------------------------------------------------------------------------------------------------------
    def _attach(self, state: Path) -> str | None:
        if not state.exists():
            return None
        batch_id = json.loads(state.read_text(encoding="utf-8"))["batch_id"]
        status = self._get(f"/batches/{batch_id}").get("status")
        if status in _ENDED_BADLY:
            self.log(f"batch {batch_id} ended {status}; submitting the requests again")
            state.unlink(missing_ok=True)
            return None
        self.log(f"re-attached to pending batch {batch_id} ({status})")
        return batch_id

    def _submit(self, lines: list[dict[str, Any]], state: Path) -> str:
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
        upload = self._check(self._http.post("/files", data={"purpose": "batch"},
                                             files={"file": ("kgprobe-batch.jsonl", data, "application/jsonl")}))
        batch = self._check(self._http.post("/batches", json={
            "input_file_id": upload["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h",
            "metadata": {"source": "kgprobe"}}))
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = state.with_suffix(".tmp")
        tmp.write_text(json.dumps({"batch_id": batch["id"], "input_file_id": upload["id"], "requests": len(lines),
                                   "submitted_at": time.time()}), encoding="utf-8")
        tmp.replace(state)
        self.submitted += 1
        self.log(f"submitted batch {batch['id']} with {len(lines)} requests")
        return str(batch["id"])

    def _wait(self, batch_id: str) -> dict[str, Any]:
        start = time.monotonic()
        while True:
            batch = self._get(f"/batches/{batch_id}")
            status = batch.get("status")
            if status == "completed":
                return batch
            if status in _ENDED_BADLY:
                raise BackendError(f"batch {batch_id} ended {status}: {batch.get('errors')}; the next run submits "
                                   "its requests again")
            if time.monotonic() - start > self.timeout_s:
                raise BackendError(f"batch {batch_id} is still {status} after {self.timeout_s:.0f}s; run again later to "
                                   "re-attach to it")
            counts = batch.get("request_counts") or {}
            self.log(f"batch {batch_id}: {status}, {counts.get('completed', 0)}/{counts.get('total', '?')} done")
            time.sleep(self.poll_s)

    def _results(self, batch: dict[str, Any]) -> dict[str, Completion]:
        out: dict[str, Completion] = {}
        for file_id in (batch.get("output_file_id"), batch.get("error_file_id")):
            if not file_id:
                continue
            response = self._http.get(f"/files/{file_id}/content")
            self._check(response, json_body=False)
            for line in response.text.splitlines():
                if not line.strip():
                    continue
                row = json.loads(line)
                out[row["custom_id"]] = _completion(row)
        return out

    def _get(self, path: str) -> dict[str, Any]:
        return self._check(self._http.get(path))

    @staticmethod
    def _check(response: Any, *, json_body: bool = True) -> Any:
        if response.status_code >= 400:
            raise BackendError(f"batch API {response.request.method} {response.request.url.path}: HTTP "
                               f"{response.status_code}: {response.text[:300]}")
        return response.json() if json_body else response


def _completion(row: dict[str, Any]) -> Completion:
    response = row.get("response") or {}
    body = response.get("body") or {}
    if row.get("error") or response.get("status_code", 200) >= 400:
        return Completion.failure(f"batch request failed: {row.get('error') or body.get('error')}", latency_s=0.0)
    choice = (body.get("choices") or [{}])[0]
    usage = body.get("usage") or {}
    return Completion(text=(choice.get("message") or {}).get("content") or "", finish_reason=choice.get("finish_reason"),
                      tokens_in=usage.get("prompt_tokens"), tokens_out=usage.get("completion_tokens"), latency_s=0.0)
