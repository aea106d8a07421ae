"""A local HTTP server that speaks the OpenAI chat-completions API and misbehaves on a schedule.

Tests load it by path (pytest runs with --import-mode=importlib). The server listens on 127.0.0.1 on a free port in
a daemon thread, answers ``POST /v1/chat/completions`` (and ``/chat/completions``), and for each request looks up
an action with ``plan(prompt_text, attempt)`` (attempt counts from 0 per prompt text):

* ``"ok"``: a completion with ``n`` choices (one when ``supports_n`` is False), text ``"<prompt> #<choice> s<seed>"``
  (or ``answer(prompt, model)`` when given; ``model`` as the request names it, without litellm's ``openai/``),
  usage ``prompt_tokens`` = words in the prompt, ``completion_tokens`` = 3 per choice;
* ``"429"``: rate limited, with ``Retry-After: <retry_after>``;
* ``"500"`` / ``"503"``: server errors;
* ``"timeout"``: sleeps ``hang_s`` before answering (the client has given up by then);
* ``"401"``: authentication error (not retryable).

It also implements OpenAI's batch endpoints: ``POST /v1/files`` (multipart upload of a JSONL file), ``POST
/v1/batches``, ``GET /v1/batches/<id>`` (a job reads ``validating``, then ``in_progress`` for ``batch_polls`` polls,
then ``completed``, its requests answered as above at completion) and ``GET /v1/files/<id>/content``. Jobs created
are counted in ``batches_created``; their requests are recorded like any other.

And Anthropic's Message Batches API: ``POST /v1/messages/batches`` (requests inline), ``GET
/v1/messages/batches/<id>`` (``processing_status`` ``in_progress`` for ``batch_polls`` polls, then ``ended``) and
``GET /v1/messages/batches/<id>/results`` (JSONL). At the end each request's action comes from ``plan``: ``"ok"``
succeeds (text ``"<prompt> #0 t<temperature>"``, usage ``input_tokens`` = words in the prompt, ``output_tokens``
= 3), ``"expired"`` and ``"canceled"`` give those result types, anything else ``errored``. The headers of each call
are kept in ``anthropic_headers`` and the created batches' requests in ``anthropic_batches``.

Every request is recorded (``requests``: prompt, attempt, action, n, seed, auth header, time) and the peak number of
answered requests in flight is kept (``max_in_flight``; hanging requests are not counted, their clients are gone).
The server shuts itself down after ``lifetime_s`` in any case, so a broken test never leaves it running.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAIServer", "Request"]


@dataclass
class Request:
    prompt: str
    attempt: int
    action: str
    n: int
    seed: int | None
    authorization: str | None
    at: float
    system: str | None = None  # the system message, when the request had one


class FakeOpenAIServer:
    """``with FakeOpenAIServer(plan) as server: ... server.url`` (the ``api_base`` for litellm)."""

    def __init__(self, plan: Callable[[str, int], str] | None = None, *, supports_n: bool = True,
                 retry_after: str = "1", hang_s: float = 3.0, delay_s: float = 0.02, lifetime_s: float = 120.0,
                 batch_polls: int = 2, answer: Callable[[str, str], str] | None = None) -> None:
        self.plan = plan or (lambda prompt, attempt: "ok")
        self.answer = answer
        self.supports_n = supports_n
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.delay_s = delay_s
        self.lifetime_s = lifetime_s
        self.requests: list[Request] = []
        self.attempts: dict[str, int] = defaultdict(int)
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self.batch_polls = batch_polls
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batches_created = 0
        self.anthropic_batches: dict[str, dict[str, Any]] = {}
        self.anthropic_headers: list[dict[str, str]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def by_prompt(self) -> dict[str, list[Request]]:
        """The recorded requests grouped by prompt text, in arrival order."""
        out: dict[str, list[Request]] = defaultdict(list)
        with self._lock:
            for r in self.requests:
                out[r.prompt].append(r)
        return out

    def __enter__(self) -> FakeOpenAIServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/").endswith("/messages/batches"):
                    owner._create_message_batch(self, json.loads(raw or b"{}"))
                elif self.path.rstrip("/").endswith("/files"):
                    owner._upload(self, raw)
                elif self.path.rstrip("/").endswith("/batches"):
                    owner._create_batch(self, json.loads(raw or b"{}"))
                else:
                    owner._handle(self, json.loads(raw or b"{}"))

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                owner._get(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        if server is not None:
            server.shutdown()
            server.server_close()

    def _handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        prompt = body["messages"][-1]["content"]
        with self._lock:
            attempt = self.attempts[prompt]
            self.attempts[prompt] += 1
            action = self.plan(prompt, attempt)
            n = int(body.get("n") or 1)
            system = next((m["content"] for m in body["messages"] if m.get("role") == "system"), None)
            self.requests.append(Request(prompt, attempt, action, n, body.get("seed"),
                                         handler.headers.get("Authorization"), time.monotonic(), system))
            counted = action != "timeout"
            if counted:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if action == "timeout":
                time.sleep(self.hang_s)
                self._send(handler, 200, self._completion(body, prompt, n))
            elif action == "429":
                self._send(handler, 429, {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}},
                           {"Retry-After": self.retry_after})
            elif action in ("500", "503"):
                self._send(handler, int(action), {"error": {"message": "The server had an error", "type": "server_error"}})
            elif action == "401":
                self._send(handler, 401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                                    "code": "invalid_api_key"}})
            else:
                time.sleep(self.delay_s)
                self._send(handler, 200, self._completion(body, prompt, n))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and went away
        finally:
            if counted:
                with self._lock:
                    self.in_flight -= 1

    # -- the batch endpoints --------------------------------------------------------------------------------------
    def _upload(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        from email.parser import BytesParser
        from email.policy import HTTP

        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + handler.headers["Content-Type"].encode() + b"\r\n\r\n" + raw)
        content = next(part.get_payload(decode=True) for part in message.iter_parts() if part.get_filename())
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = content
        self._send(handler, 200, {"id": file_id, "object": "file", "bytes": len(content), "purpose": "batch",
                                  "filename": "input.jsonl", "created_at": int(time.time()), "status": "processed"})

    def _create_batch(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            self.batches_created += 1
            batch_id = f"batch_{self.batches_created}"
            lines = self.files[body["input_file_id"]].decode().splitlines()
            self.batches[batch_id] = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                                      "input_file_id": body["input_file_id"], "status": "validating", "polls": 0,
                                      "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        self._send(handler, 200, self._public(self.batches[batch_id]))

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?")[0].rstrip("/")
        parts = path.split("/")
        if "/messages/batches/" in path:
            return self._get_message_batch(handler, path)
        if "/batches/" in path:
            batch = self.batches.get(parts[-1])
            if batch is None:
                return self._send(handler, 404, {"error": {"message": "no such batch"}})
            with self._lock:
                batch["polls"] += 1
                if batch["status"] == "validating":
                    batch["status"] = "in_progress"
                elif batch["status"] == "in_progress" and batch["polls"] > self.batch_polls:
                    self._complete(batch)
            return self._send(handler, 200, self._public(batch))
        if path.endswith("/content") and parts[-2] in self.files:
            return self._send_bytes(handler, 200, self.files[parts[-2]], "application/octet-stream")
        return self._send(handler, 404, {"error": {"message": f"unknown path {path}"}})

    def _complete(self, batch: dict[str, Any]) -> None:
        out = []
        for line in self.files[batch["input_file_id"]].decode().splitlines():
            request = json.loads(line)
            body = request["body"]
            prompt = body["messages"][-1]["content"]
            self.requests.append(Request(prompt, self.attempts[prompt], "batch", 1, body.get("seed"), None,
                                         time.monotonic()))
            self.attempts[prompt] += 1
            out.append({"id": f"req-{len(out)}", "custom_id": request["custom_id"],
                        "response": {"status_code": 200, "body": self._completion(body, prompt, 1)}, "error": None})
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = "".join(json.dumps(r) + "\n" for r in out).encode()
        batch.update(status="completed", output_file_id=file_id,
                     request_counts={"total": len(out), "completed": len(out), "failed": 0})

    # -- Anthropic's Message Batches -------------------------------------------------------------------------------
    def _create_message_batch(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            self.anthropic_headers.append({k.lower(): v for k, v in handler.headers.items()})
            self.batches_created += 1
            batch_id = f"msgbatch_{self.batches_created:04d}"
            requests = body["requests"]
            self.anthropic_batches[batch_id] = {"requests": requests, "polls": 0, "results": None, "public": {
                "id": batch_id, "type": "message_batch", "processing_status": "in_progress", "results_url": None,
                "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0, "canceled": 0,
                                   "expired": 0}}}
        self._send(handler, 200, self.anthropic_batches[batch_id]["public"])

    def _get_message_batch(self, handler: BaseHTTPRequestHandler, path: str) -> None:
        parts = path.split("/")
        results = parts[-1] == "results"
        batch = self.anthropic_batches.get(parts[-2] if results else parts[-1])
        if batch is None:
            return self._send(handler, 404, {"type": "error", "error": {"type": "not_found_error",
                                                                        "message": "no such batch"}})
        with self._lock:
            self.anthropic_headers.append({k.lower(): v for k, v in handler.headers.items()})
            if results:
                if batch["results"] is None:
                    return self._send(handler, 400, {"type": "error", "error": {
                        "type": "invalid_request_error", "message": "batch is still processing"}})
                data = batch["results"]
            else:
                batch["polls"] += 1
                if batch["results"] is None and batch["polls"] > self.batch_polls:
                    self._end_message_batch(batch, f"http://{handler.headers.get('Host')}{path}/results")
                return self._send(handler, 200, batch["public"])
        return self._send_bytes(handler, 200, data, "application/binary")

    def _end_message_batch(self, batch: dict[str, Any], results_url: str) -> None:
        out = []
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for request in batch["requests"]:
            params = request["params"]
            prompt = params["messages"][-1]["content"]
            action = self.plan(prompt, self.attempts[prompt])
            self.requests.append(Request(prompt, self.attempts[prompt], "batch", 1, None, None, time.monotonic(),
                                         params.get("system")))
            self.attempts[prompt] += 1
            if action == "ok":
                kind = "succeeded"
                result: dict[str, Any] = {"type": kind, "message": {
                    "id": f"msg_{len(out)}", "type": "message", "role": "assistant", "model": params["model"],
                    "content": [{"type": "text", "text": f"{prompt} #0 t{params.get('temperature')}"}],
                    "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": len(prompt.split()), "output_tokens": 3}}}
            elif action in ("expired", "canceled"):
                kind = action
                result = {"type": kind}
            else:
                kind = "errored"
                result = {"type": kind, "error": {"type": "error", "error": {
                    "type": "invalid_request_error", "message": f"fake failure ({action})"}}}
            counts[kind] += 1
            out.append({"custom_id": request["custom_id"], "result": result})
        batch["results"] = "".join(json.dumps(r) + "\n" for r in out).encode()
        batch["public"].update(processing_status="ended", results_url=results_url, request_counts=counts)

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if k != "polls"}

    def _completion(self, body: dict[str, Any], prompt: str, n: int) -> dict[str, Any]:
        k = n if self.supports_n else 1
        seed = body.get("seed")
        return {
            "id": f"chatcmpl-{abs(hash((prompt, seed))) % 10**12}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": i, "message": {"role": "assistant", "content": f"{prompt} #{i} s{seed}" if self.answer
                                                  is None else self.answer(prompt, str(body.get("model", "")))},
                         "finish_reason": "stop" if i % 2 == 0 else "length"} for i in range(k)],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 3 * k,
                      "total_tokens": len(prompt.split()) + 3 * k},
        }

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        FakeOpenAIServer._send_bytes(handler, status, json.dumps(payload).encode(), "application/json", headers)

    @staticmethod
    def _send_bytes(handler: BaseHTTPRequestHandler, status: int, data: bytes, content_type: str,
                    headers: dict[str, str] | None = None) -> None:  # fmt: skip
        """A reply of ``data`` as it is (a file's content, or a body that a misbehaving server sends)."""
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()
