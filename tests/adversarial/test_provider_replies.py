"""Provider replies are not trusted to be tidy: a batch result file whose answers hold raw line-separator characters
(valid JSON: only control characters below U+0020 must be escaped) is read one JSON line per ``\\n``."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from kgprobe.generation.backends.batch import AnthropicBatchClient, OpenAIBatchClient

ANSWERS = {"a:0": "Yes.\u2028Paris is the capital.", "b:0": "No\x85really\u2029not\x0cat all", "c:0": "plain"}


def _openai_line(custom_id: str, text: str) -> str:
    body = {"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4}}
    return json.dumps({"custom_id": custom_id, "response": {"status_code": 200, "body": body}}, ensure_ascii=False)


def _anthropic_line(custom_id: str, text: str) -> str:
    message = {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
               "usage": {"input_tokens": 3, "output_tokens": 4}}
    return json.dumps({"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}, ensure_ascii=False)


@pytest.mark.parametrize("kind,line", [(OpenAIBatchClient, _openai_line), (AnthropicBatchClient, _anthropic_line)])
def test_batch_results_split_on_newline_only(tmp_path: Path, kind: type, line) -> None:
    body = "\n".join(line(k, v) for k, v in ANSWERS.items()) + "\n"
    assert "\u2028" in body and "\x85" in body  # raw, as a provider may send them

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=body)

    client = kind(model_id="m", api_base="http://provider.invalid/v1", api_key=None, state_dir=tmp_path)
    client._http = httpx.Client(base_url="http://provider.invalid/v1", transport=httpx.MockTransport(reply))
    try:
        got = client._results({"id": "b1", "output_file_id": "f1", "results_url": "http://provider.invalid/v1/r"})
    finally:
        client.close()
    assert {k: c.text for k, c in got.items()} == ANSWERS
