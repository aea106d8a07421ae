"""Batch APIs: a partition's prompts as one provider batch job, at the provider's batch price.

For an OpenAI-compatible provider (OpenAI itself, and servers that implement its ``/v1/files`` + ``/v1/batches``
endpoints) :class:`OpenAIBatchClient` uploads one JSONL file with a request per (prompt, sample), creates the batch,
polls it until it ends and reads the output file back as :class:`~kgprobe.generation.Completion` objects, which the
runner stores like any other answer. For Anthropic (``anthropic/...`` models) :class:`AnthropicBatchClient` does the
same through the Message Batches API: ``POST /v1/messages/batches`` with the requests inline, ``GET
/v1/messages/batches/<id>`` until ``processing_status`` is ``ended``, then the JSONL at its ``results_url``.

The job's id is written to a state file (``state_dir``) as soon as it is created, keyed by the requests it holds: a
run that is killed while the job is pending re-attaches to it on the next run instead of paying for it twice, and
the state file is removed once its results are read. A job that failed, expired or was cancelled (or that the
provider no longer knows) is submitted again.

Greedy requests (temperature 0) ask once per prompt and repeat the answer, as the synchronous path does; sampled
ones ask once per sample (with seed ``seed + i`` where the provider takes a seed; Anthropic's API has none).
Requests the results lack, or that the provider answered with an error (Anthropic: ``errored``, ``canceled``,
``expired``), come back as failed completions (stored with the error and asked again by the next run); so do result
lines without an answer (``choices: []``, no text, a content filter's stop or a refusal: see
:mod:`kgprobe.generation.replies`), with the tokens they were billed. Answers longer than ``max_tokens`` allows are
cut and marked ``finish_reason: cut``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kgprobe.generation.records import BackendError, Completion, Prompt, SamplingParams
from kgprobe.generation.replies import CUT, bound_answer, no_answer
from kgprobe.secrets import mask_secrets

__all__ = ["AnthropicBatchClient", "OpenAIBatchClient", "batch_key"]

_ENDED_BADLY = frozenset({"failed", "expired", "cancelled", "cancelling"})
ANTHROPIC_VERSION = "2023-06-01"


def batch_key(model_id: str, requests: Sequence[dict[str, Any]]) -> str:
    """The identity of a batch job: the model and its exact request lines (so the same missing work re-attaches)."""
    digest = hashlib.sha256(model_id.encode())
    for r in requests:
        digest.update(json.dumps(r, sort_keys=True, separators=(",", ":")).encode())
    return digest.hexdigest()[:24]


class _BatchClient:
    """What every provider's batch client shares: the state file, re-attaching, polling, samples per prompt."""

    prefix = ""  # the litellm provider prefix stripped from model ids

    def __init__(self, *, model_id: str, api_base: str, api_key: str | None, state_dir: Path,
                 poll_s: float = 30.0, timeout_s: float = 86400.0, log: Callable[[str], None] | None = None,
                 http_timeout_s: float = 60.0) -> None:  # fmt: skip
        import httpx

        self.model_id = model_id.split("/", 1)[1] if model_id.startswith(self.prefix + "/") else model_id
        self.state_dir = Path(state_dir)
        self.poll_s, self.timeout_s = poll_s, timeout_s
        self.log = log or (lambda _m: None)
        self._http = httpx.Client(base_url=api_base.rstrip("/"), headers=self._headers(api_key),
                                  timeout=http_timeout_s)
        self.submitted = 0  # jobs created by this client (re-attached ones are not counted)

    def close(self) -> None:
        self._http.close()

    # -- what a provider defines ----------------------------------------------------------------------------------
    def _headers(self, api_key: str | None) -> dict[str, str]:
        raise NotImplementedError

    @staticmethod
    def custom_id(prompt: Prompt, sample: int) -> str:
        return f"{prompt.sha256()}:{sample}"

    def requests(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _pending(self, batch_id: str) -> str | None:
        """The job's status when it can still deliver results (None: submit again)."""
        raise NotImplementedError

    def _submit_job(self, lines: list[dict[str, Any]]) -> dict[str, Any]:
        """Create the job; the state to remember (``batch_id`` and whatever else identifies it)."""
        raise NotImplementedError

    def _poll(self, batch_id: str) -> dict[str, Any] | None:
        """The job once it has ended well (None while it runs); raises when it ended badly."""
        raise NotImplementedError

    def _results(self, batch: dict[str, Any], *, max_tokens: int | None = None) -> dict[str, Completion]:
        """The job's answers by custom id, each cut to the limit of ``max_tokens``."""
        raise NotImplementedError

    # -- shared -----------------------------------------------------------------------------------------------------
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
        results = self._results(batch, max_tokens=params.max_tokens)
        latency = time.perf_counter() - t0
        state.unlink(missing_ok=True)
        out = []
        for p in prompts:
            samples = range(1 if params.temperature == 0 else params.n)
            got = [results.get(self.custom_id(p, i)) or Completion.failure("batch: no result for this request",
                                                                           latency_s=latency) for i in samples]
            out.append(got * params.n if params.temperature == 0 else got)
        return out

    def _attach(self, state: Path) -> str | None:
        if not state.exists():
            return None
        batch_id = json.loads(state.read_text(encoding="utf-8"))["batch_id"]
        status = self._pending(batch_id)
        if status is None:
            state.unlink(missing_ok=True)
            return None
        self.log(f"re-attached to pending batch {batch_id} ({status})")
        return batch_id

    def _submit(self, lines: list[dict[str, Any]], state: Path) -> str:
        remembered = self._submit_job(lines)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = state.with_suffix(".tmp")
        tmp.write_text(json.dumps({**remembered, "requests": len(lines), "submitted_at": time.time()}),
                       encoding="utf-8")
        tmp.replace(state)
        self.submitted += 1
        self.log(f"submitted batch {remembered['batch_id']} with {len(lines)} requests")
        return str(remembered["batch_id"])

    def _wait(self, batch_id: str) -> dict[str, Any]:
        start = time.monotonic()
        while True:
            batch = self._poll(batch_id)
            if batch is not None:
                return batch
            if time.monotonic() - start > self.timeout_s:
                raise BackendError(f"batch {batch_id} is still {self._last_status} after {self.timeout_s:.0f}s; run "
                                   "again later to re-attach to it")
            time.sleep(self.poll_s)

    _last_status = "in_progress"

    def _get(self, path: str) -> dict[str, Any]:
        return self._check(self._http.get(path))

    @staticmethod
    def _check(response: Any, *, json_body: bool = True) -> Any:
        if response.status_code >= 400:
            # a provider may echo the request's headers (the API key) in its error: masked before it is cut
            raise BackendError(f"batch API {response.request.method} {response.request.url.path}: HTTP "
                               f"{response.status_code}: {mask_secrets(response.text)[:300]}")
        if not json_body:
            return response
        try:
            return response.json()
        except ValueError:
            kind = response.headers.get("content-type") or "of no content type"
            raise BackendError(f"batch API {response.request.method} {response.request.url.path}: HTTP "
                               f"{response.status_code} not JSON: the body is {kind}, {len(response.content)} bytes "
                               f"(is api_base the API's URL?): {mask_secrets(response.text[:2000])[:200]!r}") from None


class OpenAIBatchClient(_BatchClient):
    """One OpenAI-compatible provider's batch endpoints (``api_base`` like ``https://api.openai.com/v1``)."""

    prefix = "openai"

    def _headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def requests(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[dict[str, Any]]:
        """The JSONL lines of the job: one per prompt when greedy, else one per sample."""
        out = []
        for p in prompts:
            for i in range(1 if params.temperature == 0 else params.n):
                out.append({"custom_id": self.custom_id(p, i), "method": "POST", "url": "/v1/chat/completions",
                            "body": {"model": self.model_id, "messages": p.messages(), "max_tokens": params.max_tokens,
                                     "temperature": params.temperature, "top_p": params.top_p,
                                     "seed": params.seed + i}})
        return out

    def _pending(self, batch_id: str) -> str | None:
        response = self._http.get(f"/batches/{batch_id}")
        if response.status_code == 404:
            self.log(f"batch {batch_id} is no longer known to the provider; submitting the requests again")
            return None
        status = self._check(response).get("status")
        if status in _ENDED_BADLY:
            self.log(f"batch {batch_id} ended {status}; submitting the requests again")
            return None
        return str(status)

    def _submit_job(self, lines: list[dict[str, Any]]) -> dict[str, Any]:
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
        upload = self._check(self._http.post("/files", data={"purpose": "batch"},
                                             files={"file": ("kgprobe-batch.jsonl", data, "application/jsonl")}))
        batch = self._check(self._http.post("/batches", json={
            "input_file_id": upload["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h",
            "metadata": {"source": "kgprobe"}}))
        return {"batch_id": batch["id"], "input_file_id": upload["id"]}

    def _poll(self, batch_id: str) -> dict[str, Any] | None:
        batch = self._get(f"/batches/{batch_id}")
        status = self._last_status = batch.get("status")
        if status == "completed":
            return batch
        if status in _ENDED_BADLY:
            raise BackendError(f"batch {batch_id} ended {status}: {batch.get('errors')}; the next run submits "
                               "its requests again")
        counts = batch.get("request_counts") or {}
        self.log(f"batch {batch_id}: {status}, {counts.get('completed', 0)}/{counts.get('total', '?')} done")
        return None

    def _results(self, batch: dict[str, Any], *, max_tokens: int | None = None) -> dict[str, Completion]:
        out: dict[str, Completion] = {}
        for file_id in (batch.get("output_file_id"), batch.get("error_file_id")):
            if not file_id:
                continue
            response = self._http.get(f"/files/{file_id}/content")
            self._check(response, json_body=False)
            for line in response.text.split("\n"):  # a raw U+2028 in an answer is not a line end
                if line.strip():
                    row = json.loads(line)
                    out[row["custom_id"]] = _openai_completion(row, max_tokens=max_tokens)
        return out


class AnthropicBatchClient(_BatchClient):
    """Anthropic's Message Batches API (``api_base`` like ``https://api.anthropic.com/v1``).

    A request is a Messages API call: the system instruction goes in ``system``, not in the messages. Recent Claude
    models refuse ``temperature`` and ``top_p`` together, so a request sends the temperature alone, or ``top_p``
    alone when the temperature is 1 (the API's default) and ``top_p`` is not. Custom ids are ``[A-Za-z0-9_-]{1,64}``, so they are the prompt's hash cut to 56
    characters and the sample index."""

    prefix = "anthropic"

    def _headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    @staticmethod
    def custom_id(prompt: Prompt, sample: int) -> str:
        return f"{prompt.sha256()[:56]}-{sample}"

    def requests(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[dict[str, Any]]:
        """The job's requests: one per prompt when greedy, else one per sample."""
        out = []
        for p in prompts:
            body: dict[str, Any] = {"model": self.model_id, "max_tokens": params.max_tokens,
                                    "messages": [m for m in p.messages() if m["role"] != "system"]}
            if params.temperature == 1.0 and params.top_p != 1.0:
                body["top_p"] = params.top_p
            else:
                body["temperature"] = params.temperature
            if p.system is not None:
                body["system"] = p.system
            for i in range(1 if params.temperature == 0 else params.n):
                out.append({"custom_id": self.custom_id(p, i), "params": body})
        return out

    def _pending(self, batch_id: str) -> str | None:
        response = self._http.get(f"/messages/batches/{batch_id}")
        if response.status_code == 404:  # deleted, or its results are past retention
            self.log(f"batch {batch_id} is no longer known to the provider; submitting the requests again")
            return None
        return str(self._check(response).get("processing_status"))

    def _submit_job(self, lines: list[dict[str, Any]]) -> dict[str, Any]:
        batch = self._check(self._http.post("/messages/batches", json={"requests": lines}))
        return {"batch_id": batch["id"]}

    def _poll(self, batch_id: str) -> dict[str, Any] | None:
        batch = self._get(f"/messages/batches/{batch_id}")
        status = self._last_status = batch.get("processing_status")
        if status == "ended":
            return batch
        counts = batch.get("request_counts") or {}
        done = sum(int(counts.get(k) or 0) for k in ("succeeded", "errored", "canceled", "expired"))
        self.log(f"batch {batch_id}: {status}, {done}/{done + int(counts.get('processing') or 0)} done")
        return None

    def _results(self, batch: dict[str, Any], *, max_tokens: int | None = None) -> dict[str, Completion]:
        url = batch.get("results_url") or f"/messages/batches/{batch['id']}/results"
        response = self._http.get(url)
        self._check(response, json_body=False)
        out: dict[str, Completion] = {}
        for line in response.text.split("\n"):  # a raw U+2028 in an answer is not a line end
            if line.strip():
                row = json.loads(line)
                out[row["custom_id"]] = _anthropic_completion(row, max_tokens=max_tokens)
        return out


def _answer(text: Any, finish_reason: Any, tokens_in: Any, tokens_out: Any, *, refusal: Any = None,
            max_tokens: int | None) -> Completion:  # fmt: skip
    """A batch result's answer, or the failure of a result without one (with the tokens it was billed)."""
    finish = None if finish_reason is None else str(finish_reason)
    tokens = [t if isinstance(t, int) and not isinstance(t, bool) else None for t in (tokens_in, tokens_out)]
    empty = no_answer(text if isinstance(text, str) else None, finish,
                      refusal=refusal if isinstance(refusal, str) else None)
    if empty is not None:
        return Completion.failure(f"batch {empty}", tokens_in=tokens[0], tokens_out=tokens[1], finish_reason=finish)
    text, cut = bound_answer(text, max_tokens=max_tokens)
    return Completion(text=text, finish_reason=CUT if cut else finish, tokens_in=tokens[0], tokens_out=tokens[1],
                      latency_s=0.0)


def _openai_completion(row: dict[str, Any], *, max_tokens: int | None = None) -> Completion:
    response = row.get("response") or {}
    body = response.get("body") or {}
    if row.get("error") or response.get("status_code", 200) >= 400:
        return Completion.failure(f"batch request failed: {row.get('error') or body.get('error')}", latency_s=0.0)
    choice = (body.get("choices") or [{}])[0]
    usage = body.get("usage") or {}
    message = choice.get("message") or {}
    return _answer(message.get("content"), choice.get("finish_reason"), usage.get("prompt_tokens"),
                   usage.get("completion_tokens"), refusal=message.get("refusal"), max_tokens=max_tokens)


def _anthropic_completion(row: dict[str, Any], *, max_tokens: int | None = None) -> Completion:
    result = row.get("result") or {}
    kind = result.get("type")
    if kind != "succeeded":
        error = result.get("error") or {}
        detail = error.get("error", error) if isinstance(error, dict) else error
        return Completion.failure(f"batch request {kind or 'without result'}: {detail}" if detail
                                  else f"batch request {kind or 'without result'}", latency_s=0.0)
    message = result.get("message") or {}
    usage = message.get("usage") or {}
    text = "".join(block.get("text", "") for block in message.get("content") or [] if block.get("type") == "text")
    return _answer(text, message.get("stop_reason"), usage.get("input_tokens"), usage.get("output_tokens"),
                   max_tokens=max_tokens)
