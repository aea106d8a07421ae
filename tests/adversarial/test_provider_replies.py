"""Provider replies are not trusted to be tidy: a batch result file whose answers hold raw line-separator characters
(valid JSON: only control characters below U+0020 must be escaped) is read one JSON line per ``\\n``; a reply
without an answer (``content: null``, blanks, a content filter's stop, a refusal, ``choices: []``) is a failure that
keeps what it was billed and is asked again; a 200 that is not JSON says so; a reply is bounded by ``max_tokens`` and
by ``MAX_REPLY_BYTES``."""

from __future__ import annotations

import functools
import json
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgprobe.generation.backends.api import LiteLLMBackend, LiteLLMConfig
from kgprobe.generation.backends.batch import AnthropicBatchClient, OpenAIBatchClient
from kgprobe.generation.records import BackendError, Prompt, SamplingParams
from kgprobe.generation.replies import BYTES_PER_TOKEN, CUT, MAX_REPLY_BYTES
from kgprobe.generation.runner import run_generation
from kgprobe.generation.store import ResponseStore

KEY_ENV = "KGPROBE_TEST_REPLIES_KEY"
PRICE = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}
# what the fake server bills a two-word prompt with one choice: 2 tokens in, 3 out
BILLED = 2 * 1e-6 + 3 * 2e-6
HOLLOW = ["null", "blank", "filter", "refuse", "none"]

ANSWERS = {"a:0": "Yes.\u2028Paris is the capital.", "b:0": "No\x85really\u2029not\x0cat all", "c:0": "plain"}


def _openai_line(custom_id: str, text: str) -> str:
    body = {"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4}}
    return json.dumps({"custom_id": custom_id, "response": {"status_code": 200, "body": body}}, ensure_ascii=False)


def _anthropic_line(custom_id: str, text: str) -> str:
    message = {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
               "usage": {"input_tokens": 3, "output_tokens": 4}}
    return json.dumps({"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}, ensure_ascii=False)


def _mock_client(kind: type, tmp_path: Path, body: str, content_type: str = "application/jsonl") -> Any:
    """A batch client whose provider answers every request with ``body``."""
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=body, headers={"content-type": content_type})

    client = kind(model_id="m", api_base="http://provider.invalid/v1", api_key=None, state_dir=tmp_path)
    client._http = httpx.Client(base_url="http://provider.invalid/v1", transport=httpx.MockTransport(reply))
    return client


def _read_results(kind: type, tmp_path: Path, body: str, **kwargs: Any) -> dict[str, Any]:
    client = _mock_client(kind, tmp_path, body)
    try:
        return client._results({"id": "b1", "output_file_id": "f1", "results_url": "http://provider.invalid/v1/r"},
                               **kwargs)
    finally:
        client.close()


@pytest.mark.parametrize("kind,line", [(OpenAIBatchClient, _openai_line), (AnthropicBatchClient, _anthropic_line)])
def test_batch_results_split_on_newline_only(tmp_path: Path, kind: type, line) -> None:
    body = "\n".join(line(k, v) for k, v in ANSWERS.items()) + "\n"
    assert "\u2028" in body and "\x85" in body  # raw, as a provider may send them
    got = _read_results(kind, tmp_path, body)
    assert {k: c.text for k, c in got.items()} == ANSWERS


def _openai_hollow(custom_id: str, kind: str) -> str:
    row = json.loads(_openai_line(custom_id, "Paris"))
    body = row["response"]["body"]
    if kind == "none":
        body["choices"] = []
    elif kind == "filter":
        body["choices"][0]["finish_reason"] = "content_filter"
    else:
        body["choices"][0]["message"] = {"content": None if kind != "blank" else "  ",
                                         **({"refusal": "I cannot."} if kind == "refuse" else {})}
    return json.dumps(row)


def _anthropic_hollow(custom_id: str, kind: str) -> str:
    row = json.loads(_anthropic_line(custom_id, "Paris"))
    message = row["result"]["message"]
    if kind in ("none", "null"):
        message["content"] = []
    elif kind == "blank":
        message["content"] = [{"type": "text", "text": " \n"}]
    else:
        message["stop_reason"] = "refusal"
    return json.dumps(row)


@pytest.mark.parametrize("kind,hollow,line", [(OpenAIBatchClient, _openai_hollow, _openai_line),
                                              (AnthropicBatchClient, _anthropic_hollow, _anthropic_line)])
def test_batch_results_without_an_answer_are_failures_with_their_tokens(tmp_path: Path, kind: type, hollow,
                                                                        line) -> None:  # fmt: skip
    body = "".join(hollow(f"{k}-0", k) + "\n" for k in HOLLOW) + line("ok-0", "Paris" * 100)
    got = _read_results(kind, tmp_path, body, max_tokens=4)
    hollow = [got[f"{k}-0"] for k in HOLLOW]
    assert [c.ok for c in hollow] == [False] * len(HOLLOW) and all(c.text is None for c in hollow)
    assert all((c.tokens_in, c.tokens_out) == (3, 4) for c in hollow)  # billed: kept for the cost
    assert any("refus" in c.error for c in hollow) and all(c.error.startswith("batch ") for c in hollow)
    ok = got["ok-0"]
    assert ok.ok and ok.text == ("Paris" * 100)[:4 * BYTES_PER_TOKEN] and ok.finish_reason == CUT


def test_a_batch_api_200_that_is_not_json_says_so(tmp_path: Path) -> None:
    client = _mock_client(OpenAIBatchClient, tmp_path, "<html><body>Sign in to the proxy</body></html>", "text/html")
    try:
        with pytest.raises(BackendError, match=r"HTTP 200 not JSON: the body is text/html"):
            client._get("/batches/b1")
    finally:
        client.close()


@functools.cache
def _huge_reply() -> bytes:
    """A well-formed chat completion of 30 MB (built once, before any measurement)."""
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris " * 5_000_000},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}}).encode()


def _odd(base: type) -> type:
    class Odd(base):
        """A provider whose reply depends on the prompt's first word: ``null`` (content null), ``blank`` (blanks),
        ``filter`` (a content filter's stop, its text kept), ``refuse`` (a refusal), ``none`` (no choices),
        ``long`` (100,000 characters), ``html`` (a 200 whose body is a web page), ``huge`` (30 MB); anything else
        answers normally. Every JSON reply is billed (its usage)."""

        def _completion(self, body: dict[str, Any], prompt: str, n: int) -> dict[str, Any]:
            reply = base._completion(self, body, prompt, n)
            kind, message = prompt.split()[0], reply["choices"][0]["message"]
            if kind in ("html", "huge"):
                return {"raw": b"<html>Sign in</html>" if kind == "html" else _huge_reply()}
            if kind == "none":
                reply["choices"] = []
            elif kind == "filter":
                reply["choices"][0]["finish_reason"] = "content_filter"
            elif kind in ("null", "refuse", "blank", "long"):
                message["content"] = {"blank": " \n ", "long": "Paris " * 16_667}.get(kind)
                if kind == "refuse":
                    message["refusal"] = "I can't help with that."
            return reply

        def _send(self, handler: Any, status: int, payload: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:  # fmt: skip
            raw = payload.get("raw")
            if raw is None:
                return base._send(handler, status, payload, headers)
            return base._send_bytes(handler, status, raw, "text/html" if raw.startswith(b"<") else "application/json")

    return Odd


def _backend(server: Any, **extra: Any) -> LiteLLMBackend:
    return LiteLLMBackend(LiteLLMConfig(model_id="openai/fake-model", api_base=server.url, api_key_env=KEY_ENV,
                                        timeout_s=20.0, **{"max_retries": 0, **PRICE, **extra}))


@pytest.mark.parametrize("batch", [False, True])
def test_replies_without_an_answer_are_billed_failures_asked_again(tmp_path: Path, monkeypatch, fake_server,
                                                                   batch: bool) -> None:  # fmt: skip
    monkeypatch.setenv(KEY_ENV, "sk-test-replies-0123456789")
    store = ResponseStore(tmp_path / "store")
    prompts = [Prompt(k, f"{k} capital?", "t") for k in [*HOLLOW, "fine"]]
    params = SamplingParams(n=1, temperature=0.0, max_tokens=8)
    extra = {"batch": True, "batch_poll_s": 0.01} if batch else {}
    with _odd(fake_server)() as server:
        with _backend(server, **extra) as backend:
            first = run_generation(backend, model="m", prompts=prompts, params=params, store=store)
        rows = {r["item_id"]: r for r in store.rows_for("m", prompts, params).to_pylist()}
        with _backend(server, **extra) as backend:
            second = run_generation(backend, model="m", prompts=prompts, params=params, store=store)
    billed = BILLED / 2 if batch else BILLED  # a batch costs half
    assert (first.generated, first.failed) == (1, len(HOLLOW))
    assert rows["fine"]["error"] is None and rows["fine"]["text"].startswith("fine capital?")
    for kind in HOLLOW:
        row = rows[kind]
        assert row["text"] is None and row["error"], row  # a failure, never an answer ("") to score
        assert row["cost"] == pytest.approx(billed)
    assert "refused by the provider: I can't help with that." in rows["refuse"]["error"]
    assert first.cost == pytest.approx(billed * len(prompts))  # the run counts what was billed
    assert store.spent("m") == pytest.approx(billed * (len(prompts) + len(HOLLOW)))  # budgets count it too
    # the next run asks again for exactly the replies without an answer
    assert (second.reused, second.failed) == (1, len(HOLLOW))
    asked = server.by_prompt()
    assert {p.text: len(asked[p.text]) for p in prompts} == {**{p.text: 2 for p in prompts[:-1]}, "fine capital?": 1}


def test_a_200_that_is_not_json_is_reported_as_such_not_as_http_500(monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-replies-0123456789")
    with _odd(fake_server)() as server, _backend(server, max_retries=2, backoff_base_s=0.0) as backend:
        [[c]] = backend.generate([Prompt("i", "html page?", "t")], SamplingParams(n=1, temperature=0.0))
    assert not c.ok and c.error.startswith("HTTP 200 not JSON: the body is text/html"), c.error
    assert "500" not in c.error and "Sign in" in c.error
    assert len(server.requests) == 1  # the same page again would not help


def test_answers_are_cut_to_max_tokens_and_marked(tmp_path: Path, monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-replies-0123456789")
    store = ResponseStore(tmp_path / "store")
    prompts = [Prompt("i", "long answer?", "t")]
    params = SamplingParams(n=1, temperature=0.0, max_tokens=8)
    with _odd(fake_server)() as server, _backend(server) as backend:
        run_generation(backend, model="m", prompts=prompts, params=params, store=store)
    [row] = store.rows_for("m", prompts, params).to_pylist()
    assert row["error"] is None and row["finish_reason"] == CUT
    assert row["text"] == ("Paris " * 100)[:8 * BYTES_PER_TOKEN]


def test_a_30_mb_reply_is_not_read_past_the_limit(monkeypatch, fake_server) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-replies-0123456789")
    assert len(_huge_reply()) > 30_000_000 > MAX_REPLY_BYTES
    with _odd(fake_server)() as server, _backend(server) as backend:
        backend.start()
        tracemalloc.start()
        try:
            [[c]] = backend.generate([Prompt("i", "huge answer?", "t")], SamplingParams(n=1, temperature=0.0))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert not c.ok and "MAX_REPLY_BYTES" in c.error and c.text is None, c.error
    assert peak < 2.5 * MAX_REPLY_BYTES, peak  # what was read, once or twice; never the whole reply a few times
