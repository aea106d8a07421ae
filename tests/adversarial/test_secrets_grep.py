"""A provider that echoes the request's ``Authorization`` header in its error bodies, on the synchronous API and on
the batch API: the planted key is found nowhere afterwards (warehouse, response store, Dagster's storage, the
report, the run's events), whole or in part. And one that echoes the key in its normal answers, in clear and
escaped (JSON, percent-encoded, ``\\u``-escaped, mixed): the key is found in none of those forms in any file the
run wrote, in the report's decoded drill-down, or in any request the judge received."""

from __future__ import annotations

import base64
import gzip
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from kgprobe.generation.backends.api import LiteLLMBackend
from kgprobe.generation.backends.batch import OpenAIBatchClient
from kgprobe.generation.records import BackendError, Completion, Prompt, SamplingParams
from kgprobe.generation.runner import model_specs, run_generation
from kgprobe.generation.store import ResponseStore
from kgprobe.secrets import mask_secrets, register_secret_env

SAMPLE = Path(__file__).resolve().parents[2] / "examples"
KEY_ENV = "KGPROBE_ADVERSARIAL_PROVIDER_CRED"  # a name that does not look like a secret: only the config marks it
KEY = "sk-proj-plantedKey0123456789abcdefXYZ"
# pieces of the key that a cut error text could keep
PIECES = [KEY, KEY[8:24], KEY[-16:]]
# a key that is not shaped like one, with characters that escaping changes: only its value can find it
ODD_KEY = "pl4nted/Key+with=odd&chars~0123456789"


def _u(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def _forms(key: str) -> dict[str, str]:
    """The key as a careless provider may echo it: in clear, in a JSON string (``\\/``), JSON in JSON,
    percent-encoded once and twice, ``\\u``-escaped, HTML character references, and a mix of them."""
    quoted, escaped = urllib.parse.quote(key, safe=""), json.dumps(key).replace("/", "\\/")[1:-1]
    third = len(key) // 3
    return {"clear": key, "json": escaped, "json-in-json": json.dumps(escaped)[1:-1],
            "percent": quoted, "percent-twice": urllib.parse.quote(quoted, safe=""),
            "percent-lower-hex": re.sub("%[0-9A-F]{2}", lambda m: m[0].lower(), quoted),
            "unicode": _u(key), "html": "".join(f"&#{ord(c)};" for c in key),
            "mixed": key[:third] + _u(key[third:2 * third]) + urllib.parse.quote(key[2 * third:], safe="")}


def _echoing(base: type) -> type:
    class Echoing(base):
        """Every error body repeats the request's credentials, as a careless provider or proxy does; batch uploads
        are refused that way too."""

        def _send(self, handler: Any, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            if status >= 400:
                auth = handler.headers.get("Authorization") or ""
                error = dict(payload.get("error") or {})
                error["message"] = (f"{error.get('message', 'error')}: {auth.removeprefix('Bearer ')} (request "
                                    f"headers: Authorization: {auth})")
                payload = {**payload, "error": error, "request_headers": {"Authorization": auth,
                                                                          "x-api-key": handler.headers.get("x-api-key")}}
            base._send(handler, status, payload, headers)

        def _upload(self, handler: Any, raw: bytes) -> None:
            self._send(handler, 401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})

    return Echoing


@pytest.mark.parametrize("text,gone", [
    ('{"Authorization": "Bearer tok-abcdefgh12345678"}', "tok-abcdefgh12345678"),
    ("x-api-key: abcdefgh12345678zz", "abcdefgh12345678zz"),
    ("headers: {'authorization': 'Basic dXNlcjpwYXNzd29yZA=='}", "dXNlcjpwYXNzd29yZA=="),
    ("used sk-ant-api03-abcdefghijklmnop0123 here", "sk-ant-api03-abcdefghijklmnop0123"),
    ("curl -H 'Authorization: Bearer eyJhbGciOi.payload.sig'", "eyJhbGciOi.payload.sig"),
])
def test_mask_covers_headers_and_key_shapes(text: str, gone: str) -> None:
    masked = mask_secrets(text)
    assert gone not in masked and "***" in masked


def test_mask_covers_keys_named_by_the_config_and_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("SOME_VENDOR_TOKEN", "plain-value-without-shape")
    monkeypatch.setenv(KEY_ENV, "another-plain-value-1")
    text = "failed: plain-value-without-shape / another-plain-value-1"
    assert "plain-value-without-shape" not in mask_secrets(text)
    assert "another-plain-value-1" in mask_secrets(text)  # an ordinary variable name: not a secret by itself
    register_secret_env(KEY_ENV)  # what loading a config with api_key_env does
    assert mask_secrets(text) == "failed: *** / ***"
    assert mask_secrets("no secret here: HTTP 500") == "no secret here: HTTP 500"


@pytest.mark.parametrize("form", list(_forms(ODD_KEY)))
def test_mask_covers_escaped_forms_of_known_values(monkeypatch, form: str) -> None:
    monkeypatch.setenv(KEY_ENV, ODD_KEY)
    register_secret_env(KEY_ENV)
    echoed = _forms(ODD_KEY)[form]
    masked = mask_secrets(f'{{"echo": "{echoed}", "n": 1}}')
    assert masked == '{"echo": "***", "n": 1}'
    assert mask_secrets("100% sure & \\/ nothing") == "100% sure & \\/ nothing"


def test_answers_finish_reasons_and_logprobs_are_masked(monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, ODD_KEY)
    register_secret_env(KEY_ENV)
    tokens = [[ODD_KEY[:10], [[ODD_KEY[:10], -0.1]]], [ODD_KEY[10:], [[ODD_KEY[10:], -0.2]]], ["!", [["!", -0.3]]]]
    c = Completion(text=f"Paris; key {_forms(ODD_KEY)['json']}", finish_reason=ODD_KEY, tokens_in=1, tokens_out=3,
                   latency_s=0.0, logprobs=json.dumps(tokens))
    assert c.text == "Paris; key ***" and c.finish_reason == "***"
    assert c.logprobs is None  # the key was spread over two tokens: no token of it is kept
    kept = json.dumps([["Paris", [["Paris", -0.1]]]])
    assert Completion(text="Paris", finish_reason="stop", tokens_in=1, tokens_out=1, latency_s=0.0,
                      logprobs=kept).logprobs == kept


def test_completions_and_batch_errors_are_masked(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert Completion.failure(f"HTTP 401: {KEY}").error == "HTTP 401: ***"

    class Response:
        status_code = 401
        text = "x" * 280 + f"Authorization: Bearer {KEY}"

        class request:  # noqa: N801 - httpx's attribute name
            method = "POST"

            class url:  # noqa: N801
                path = "/v1/files"

    with pytest.raises(BackendError) as err:
        OpenAIBatchClient._check(Response())
    assert not any(p in str(err.value) for p in PIECES)


def _spec(url: str, name: str, **extra: Any):
    (spec,) = model_specs([{"name": name, "backend": "litellm", "model_id": "openai/fake-model", "api_base": url,
                            "api_key_env": KEY_ENV, "max_retries": 0, "timeout_s": 5.0, "n": 1, "max_tokens": 8,
                            "temperature": 0.0, **extra}])
    return spec


@pytest.mark.parametrize("batch", [False, True])
def test_the_response_store_keeps_no_echoed_key(tmp_path: Path, monkeypatch, fake_server, batch: bool) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    store = ResponseStore(tmp_path / "store")
    prompts = [Prompt(f"i{i}", f"Is {i} odd?", "t") for i in range(4)]
    with _echoing(fake_server)(lambda prompt, attempt: "401") as server:
        spec = _spec(server.url, "m", **({"batch": True, "batch_poll_s": 0.01} if batch else {}))
        with LiteLLMBackend(spec.config) as backend:
            summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
    assert summary.failed == 4
    errors = [r["error"] for r in store.rows_for(spec.name, prompts, spec.params).to_pylist()]
    assert len(errors) == 4 and all(errors)
    assert not [e for e in errors if any(p in e for p in PIECES)]
    assert all("***" in e for e in errors)  # the echo reached the error text, masked
    leaked = [str(p) for p in tmp_path.rglob("*") if p.is_file() and any(x.encode() in p.read_bytes() for x in PIECES)]
    assert leaked == []


def _run_jobs(tmp_path: Path, models: list[dict[str, Any]], *, judges: list[str], partitions: list[str]) -> list[str]:
    """Ingest the sample KG, make a few FPQ questions, answer them with each partition's model (judged by
    ``judges``) and publish the report, with a Dagster instance under ``tmp_path / "dagster_home"``; the warehouse is
    ``tmp_path / "warehouse"``. Returns every event and log line of the runs."""
    from pipelines.definitions import build_definitions

    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    project = {"name": "leak", "seed": 0, "warehouse": str(tmp_path / "warehouse" / "kgprobe.duckdb"),
               "kgs": cfg["kgs"], "suites": {"fpq": {**cfg["suites"]["fpq"], "n_per_domain": 3, "limit": 2}},
               "scoring": {"judges": [{"model": j, "max_tokens": 8} for j in judges]}, "models": models}
    path = SAMPLE / f".test-leak-{tmp_path.name}.yaml"
    path.write_text(yaml.safe_dump(project), encoding="utf-8")
    logs: list[str] = []
    try:
        defs = build_definitions(str(path))
        home = tmp_path / "dagster_home"
        home.mkdir()
        with dg.instance_for_test(temp_dir=str(home)) as instance:
            for job, key in [("ingest", None), ("fpq_questions", None), *(("closed_book", k) for k in partitions),
                             ("publish", None)]:
                result = defs.resolve_job_def(job).execute_in_process(instance=instance, partition_key=key,
                                                                      raise_on_error=False)
                logs += [str(e) for e in result.all_events]
                logs += [str(r.dagster_event) + (r.user_message or "") for r in instance.all_logs(result.run_id)]
    finally:
        path.unlink()
    return logs


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (*_strings(k), *_strings(v))]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _strings(v)]
    return [str(value)] if value is not None else []


def _readable(path: Path) -> str:
    """What a file holds, as text to search: a Parquet file's values (its pages may be compressed), a report with
    its drill-down payload decoded (base64 of gzip of JSON) to its values, any other file's bytes (gzip undone)."""
    data = path.read_bytes()
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return "\n".join(_strings(pq.read_table(path).to_pylist()))
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    text = data.decode("utf-8", errors="replace")
    for payload in re.findall(r'<script type="application/octet-stream" id="kgp-items">([^<]*)</script>', text):
        text += "\n".join(_strings(json.loads(gzip.decompress(base64.b64decode(payload)))))
    return text


def _found(forms: dict[str, str], text: str) -> list[str]:
    """The forms found in ``text``, as they are or written inside a JSON string (Dagster's storage, event logs)."""
    return [name for name, value in forms.items() if value in text or json.dumps(value)[1:-1] in text]


@pytest.mark.slow
def test_no_trace_of_the_key_after_batch_and_direct_failures(tmp_path: Path, monkeypatch, fake_server) -> None:
    from pipelines.definitions import build_definitions

    monkeypatch.setenv(KEY_ENV, KEY)
    logs: list[str] = []
    # one prompt in three is refused on the synchronous API; every batch upload is refused
    with _echoing(fake_server)(lambda prompt, attempt: "401" if sum(map(ord, prompt)) % 3 == 0 else "ok") as server:
        common = {"backend": "litellm", "model_id": "openai/fake-model", "api_base": server.url,
                  "api_key_env": KEY_ENV, "max_retries": 0}
        models = [{"name": "direct", **common}, {"name": "batched", **common, "batch": True, "batch_poll_s": 0.01}]
        logs = _run_jobs(tmp_path, models, judges=["direct"], partitions=["direct", "batched"])
    assert any(r.action == "401" for r in server.requests)
    assert logs and not [line for line in logs if any(p in line for p in PIECES)]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files) and any(p.name == "report.html" for p in files)
    assert any(p.suffix == ".db" or "history" in str(p) or "storage" in str(p) for p in files)  # Dagster's storage
    leaked = [str(p) for p in files if any(x.encode() in p.read_bytes() or x in _readable(p) for x in PIECES)]
    assert leaked == []
    # the failures were stored, with the echo masked: the test would pass vacuously otherwise
    import duckdb

    con = duckdb.connect()
    errors = [e for (e,) in con.execute("SELECT error FROM read_parquet($p, union_by_name = true) WHERE error IS NOT NULL",
                                        {"p": str(tmp_path / "warehouse" / "response_store" / "**" / "*.parquet")}).fetchall()]
    assert any("batch API" in e and "***" in e for e in errors)
    assert any("401" in e and "***" in e and "batch API" not in e for e in errors)


@pytest.mark.slow
def test_a_key_echoed_in_normal_answers_is_nowhere_in_any_form(tmp_path: Path, monkeypatch, fake_server) -> None:
    forms = _forms(ODD_KEY)
    monkeypatch.setenv(KEY_ENV, ODD_KEY)

    def answer(prompt: str, model: str) -> str:  # every answer, the judge's too, carries every form of the key
        verdict = "Yes." if model == "fake-judge" else "No, that is not so."
        return verdict + " Debug: " + "; ".join(f"{name}={value}" for name, value in forms.items())

    with fake_server(answer=answer) as server:
        common = {"backend": "litellm", "api_base": server.url, "api_key_env": KEY_ENV, "max_retries": 0,
                  "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}
        models = [{"name": "echo", "model_id": "openai/fake-model", **common},
                  {"name": "judge", "model_id": "openai/fake-judge", **common}]
        logs = _run_jobs(tmp_path, models, judges=["judge"], partitions=["echo"])

    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    home = tmp_path / "dagster_home"
    assert any(p.is_relative_to(home) for p in files) and any(p.name == "report.html" for p in files)
    store = [p for p in files if "response_store" in p.parts and p.suffix == ".parquet"]
    warehouse = [p for p in files if p.suffix == ".parquet" and p not in store]
    assert store and warehouse
    sent = [text for r in server.requests for text in (r.system or "", r.prompt)]
    leaked = {"files": sorted({("/".join(p.relative_to(tmp_path).parts[:2]), name) for p in files
                               for name in _found(forms, _readable(p))}),
              "judge requests": sorted({name for text in sent for name in _found(forms, text)}),
              "logs": sorted({name for line in logs for name in _found(forms, line)})}
    assert leaked == {"files": [], "judge requests": [], "logs": []}

    # the judge was asked about answers that had echoed the key: it saw them masked
    assert [text for text in sent if "***" in text], "no judge request carried an echoed answer"
    # not vacuous: the answers were stored, read into the warehouse and shown in the report, masked
    import pyarrow.parquet as pq

    answers = [r["text"] for p in store for r in pq.read_table(p).to_pylist() if r["model"] == "echo"]
    assert answers and all(t.count("***") == len(forms) for t in answers), answers[:1]
    assert any("No, that is not so. Debug: clear=***" in _readable(p) for p in warehouse)
    report = next(p for p in files if p.name == "report.html")
    assert "Debug: clear=***; json=***" in _readable(report)
