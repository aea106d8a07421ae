"""The litellm backend: any hosted API or OpenAI-compatible server (vLLM serve, Ollama, llama.cpp server, ...).

Requests are ``litellm.acompletion`` calls, at most ``max_concurrency`` in flight, each with a ``timeout_s`` limit.
Rate limits (429), timeouts, connection errors, 408/409 and 5xx are retried up to ``max_retries`` times with
exponential backoff and jitter (``backoff_base_s * 2**attempt``, capped at ``backoff_max_s``, half of it random); a
``Retry-After`` (or ``retry-after-ms``) header is honoured as the least wait. Other errors (400, 401, 404 ...) fail
at once. A request that still fails is returned as a failed :class:`~kgprobe.generation.Completion` (stored, and
retried by the next run); ``retries`` on every completion says how many extra attempts it took.

``n`` samples: with ``n_mode: auto`` one request asks for ``n`` choices when litellm says the provider accepts
``n`` (and tops up with single requests if a server returns fewer); otherwise, and with ``n_mode: calls``, it makes
``n`` requests whose seeds differ (``seed + i``). Usage: ``tokens_in`` is the request's prompt tokens; when one
request returns several choices its completion tokens and cost are split evenly between them, so sums stay exact
(a server that returns more choices than asked bills them all: the choices kept carry the whole bill). ``cost``
comes from ``litellm.completion_cost`` and is None for models litellm has no price for; reported usage is clamped
(:func:`~kgprobe.generation.cost.billed_usage`).

Replies (:mod:`kgprobe.generation.replies`): a choice without text (``content: null``, blank), stopped by a content
filter or refused is a failed completion, with the tokens and cost billed for it; an answer longer than
``max_tokens`` allows is cut and marked ``finish_reason: cut``. For OpenAI-compatible endpoints (``openai/...``)
the requests go through a client of this backend's own that reads at most ``MAX_REPLY_BYTES`` of a reply and
reports an HTTP 200 whose body is not JSON as such (a proxy's login page, a wrong ``api_base``); neither is retried.

The API key is read from the environment variable that ``api_key_env`` names (never from config files); it is not
logged, and it is masked in answers and stored error messages (:mod:`kgprobe.secrets`). kgprobe sets
``LITELLM_LOCAL_MODEL_COST_MAP=True`` (unless set) so that importing litellm does not fetch its price list from the
network.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kgprobe.generation.cost import billed_usage, price_of_config
from kgprobe.generation.litellm_import import import_litellm
from kgprobe.generation.records import BackendError, BaseBackend, Completion, Prompt, SamplingParams
from kgprobe.generation.replies import CUT, MAX_REPLY_BYTES, bound_answer, no_answer
from kgprobe.secrets import mask_secrets, register_secret

__all__ = ["LiteLLMBackend", "LiteLLMConfig", "openai_logprobs", "retry_after_seconds"]

_RETRY_STATUS = frozenset({408, 409, 429})
_RETRY_AFTER_CAP_S = 600.0
_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


@dataclass(frozen=True)
class LiteLLMConfig:
    """A model behind litellm (``litellm.acompletion``): a hosted API or an OpenAI-compatible server such as vLLM
    serve or Ollama.

    Retries, ``n`` samples, costs and batch jobs: the module docstring."""

    model_id: str
    """The model in litellm's form, e.g. ``openai/gpt-4o-mini`` or ``anthropic/<name>`` (``openai/<name>`` with
    ``api_base`` for an OpenAI-compatible server such as vLLM serve or Ollama)."""
    api_base: str | None = None
    """The server's base URL, for a self-hosted or OpenAI-compatible endpoint (default: the provider's)."""
    api_key_env: str | None = None
    """The name of the environment variable holding the API key, never the key itself; the model fails to start
    when it is not set (default: none, and the provider's usual variable such as OPENAI_API_KEY is read)."""
    max_concurrency: int = 8
    """Most requests in flight at once."""
    timeout_s: float = 60.0
    """Seconds one request may take before it fails (and is retried)."""
    max_retries: int = 6
    """Retries of a request after a rate limit, timeout, connection error, 408/409 or 5xx; other errors fail at
    once."""
    backoff_base_s: float = 1.0
    """Seconds of the first retry's backoff; retry ``k`` waits about ``backoff_base_s * 2**k`` (half of it random),
    or longer when the server's Retry-After says so."""
    backoff_max_s: float = 60.0
    """Seconds at which the backoff stops growing."""
    n_mode: str = "auto"
    """How ``n`` samples per prompt are asked for: ``choices`` (one request for ``n`` choices), ``calls`` (``n``
    requests with seeds ``seed + i``) or ``auto`` (choices when litellm says the provider accepts ``n``)."""
    extra: Mapping[str, Any] | None = None
    """Further keyword arguments passed to ``litellm.acompletion`` as they are; no keys or secrets here."""
    input_cost_per_token: float | None = None
    """US dollars per prompt token, for a model litellm has no price for (or to override its price); set it with
    ``output_cost_per_token``. It is what ``cost`` and ``max_cost_usd`` count (default: litellm's price list)."""
    output_cost_per_token: float | None = None
    """US dollars per completion token; set it with ``input_cost_per_token``."""
    batch: bool = False
    """Send a partition's prompts as one batch job of an OpenAI-compatible provider, or of Anthropic's Message
    Batches API for ``anthropic/...`` models (:mod:`kgprobe.generation.backends.batch`)."""
    batch_poll_s: float = 30.0
    """Seconds between two polls of a batch job's status."""
    batch_timeout_s: float = 86400.0
    """Seconds to wait for a batch job before the run fails; a later run re-attaches to the same job."""

    def __post_init__(self) -> None:
        if not self.model_id:
            raise ValueError("model_id must name a litellm model, e.g. openai/gpt-4o-mini")
        if self.max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {self.max_concurrency}")
        if self.timeout_s <= 0 or self.backoff_base_s < 0 or self.backoff_max_s < 0 or self.max_retries < 0:
            raise ValueError("timeout_s must be positive; max_retries, backoff_base_s and backoff_max_s non-negative")
        if self.n_mode not in ("auto", "choices", "calls"):
            raise ValueError(f"n_mode must be auto, choices or calls, got {self.n_mode!r}")
        for name in ("input_cost_per_token", "output_cost_per_token"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
        if (self.input_cost_per_token is None) != (self.output_cost_per_token is None):
            raise ValueError("set both input_cost_per_token and output_cost_per_token, or neither")
        secret = {"api_key", "key", "token", "password"} & {k.lower() for k in (self.extra or {})}
        if secret:
            raise ValueError(f"extra must not hold secrets ({sorted(secret)}): set api_key_env to the name of an "
                             "environment variable that holds the key")


def _shared_loop() -> asyncio.AbstractEventLoop:
    """One event loop in a daemon thread for all litellm backends of the process.

    litellm caches its HTTP clients across calls, and an async client is tied to the loop that created it; a new
    loop per call (``asyncio.run``) would hand later calls clients of a closed loop. One long-lived loop also lets
    ``generate`` be called from code that already runs an event loop (a notebook).
    """
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="kgprobe-litellm", daemon=True).start()
            _loop = loop
        return _loop


def retry_after_seconds(exc: BaseException) -> float | None:
    """The wait a failed response asks for (``retry-after-ms``, ``Retry-After`` in seconds or as an HTTP date)."""
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(float(ms) / 1000.0, 0.0)
        value = headers.get("retry-after")
    except AttributeError:
        return None
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else max(email.utils.mktime_tz(parsed) - time.time(), 0.0)


class _ReplyRejected(Exception):
    """A reply refused before the client parsed it: a body over ``MAX_REPLY_BYTES``, or an HTTP 200 whose body is
    not JSON. Raised by the transport of :func:`_bounded_client`; the client reports it as a connection error whose
    cause is this one."""


def _bounded_client(api_key: str | None, api_base: str | None) -> Any:
    """An ``openai.AsyncOpenAI`` client (for litellm's ``client=``) that reads at most ``MAX_REPLY_BYTES`` of a reply
    (decoded) and refuses a 200 that is not JSON; None when no client can be made (no key anywhere).

    Requests go through the HTTP client litellm would have used (its proxies from the environment, its TLS
    settings, a session set in ``litellm.aclient_session``); this one only reads their replies."""
    import httpx
    import openai

    try:  # litellm's own client factory: not a documented API, so any failure falls back to httpx's defaults
        from litellm.llms.openai.common_utils import BaseOpenAILLM

        inner = BaseOpenAILLM._get_async_http_client()
    except Exception:
        inner = None
    shared = inner is not None and inner is getattr(sys.modules.get("litellm"), "aclient_session", None)
    inner = inner or httpx.AsyncClient(follow_redirects=True)

    class Bounded(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            request.headers["Accept-Encoding"] = "identity"  # the limit counts the reply's own bytes
            response = await inner.send(request, stream=True)
            body = bytearray()
            try:
                async for chunk in response.aiter_bytes():  # decoded, should a server compress all the same
                    body += chunk
                    if len(body) > MAX_REPLY_BYTES:
                        raise _ReplyRejected(f"reply too large: over MAX_REPLY_BYTES ({MAX_REPLY_BYTES} bytes), not "
                                             f"read further (HTTP {response.status_code})")
            finally:
                await response.aclose()
            if response.status_code == 200:
                try:
                    json.loads(body)
                except ValueError:
                    kind = response.headers.get("content-type") or "of no content type"
                    raise _ReplyRejected(f"HTTP 200 not JSON: the body is {kind}, {len(body)} bytes (is api_base "
                                         f"the API's URL?): {bytes(body[:200]).decode('utf-8', 'replace')!r}") from None
            headers = [(k, v) for k, v in response.headers.multi_items()
                       if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
            return httpx.Response(response.status_code, headers=headers, content=bytes(body), request=request)

        async def aclose(self) -> None:
            if not shared:
                await inner.aclose()

    base = api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or None
    try:
        return openai.AsyncOpenAI(api_key=api_key, base_url=base, max_retries=0,
                                  http_client=httpx.AsyncClient(transport=Bounded()))
    except openai.OpenAIError:  # no key given nor in OPENAI_API_KEY: litellm reports that itself
        return None


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


class LiteLLMBackend(BaseBackend):
    """Async API calls through litellm with bounded concurrency and retries."""

    name = "litellm"

    def __init__(self, config: LiteLLMConfig | str) -> None:
        self.config = LiteLLMConfig(config) if isinstance(config, str) else config
        self._litellm: Any = None
        self._key: str | None = None
        self._supports_n: bool | None = None
        self._rng = random.Random()
        self._client: Any = None

    def __repr__(self) -> str:
        return f"LiteLLMBackend({self.config.model_id!r}, api_base={self.config.api_base!r})"

    def start(self) -> None:
        """Import litellm and read the API key from its environment variable."""
        if self._litellm is not None:
            return
        if self.config.api_key_env:
            key = os.environ.get(self.config.api_key_env)
            if not key:
                raise BackendError(f"litellm model {self.config.model_id}: environment variable "
                                   f"{self.config.api_key_env} is not set; export it with the API key")
            self._key = key
            register_secret(key)
        self._litellm = import_litellm()
        if self.config.n_mode == "choices":
            self._supports_n = True
        elif self.config.n_mode == "calls":
            self._supports_n = False
        else:
            try:
                supported = self._litellm.get_supported_openai_params(model=self.config.model_id) or []
            except Exception:  # an unknown provider: ask for one sample per request
                supported = []
            self._supports_n = "n" in supported
        try:
            provider = self._litellm.get_llm_provider(model=self.config.model_id, api_base=self.config.api_base)[1]
        except Exception:  # litellm cannot place the model: it says so on the first request
            provider = None
        if provider == "openai" and not self.config.batch:
            self._client = _bounded_client(self._key, self.config.api_base)

    def close(self) -> None:
        """Forget the key and close this backend's client (the shared event loop and litellm's client cache stay
        for other backends)."""
        client, self._client = self._client, None
        if client is not None:
            try:
                asyncio.run_coroutine_threadsafe(client.close(), _shared_loop()).result(timeout=10)
            except Exception:  # a client that never connected, or a loop already gone: nothing to release
                pass
        self._key = None
        self._litellm = None

    @property
    def batch_mode(self) -> bool:
        """Whether prompts go to the provider's batch API (the runner then sends a partition as one call and sets
        :attr:`state_dir`, where pending jobs are remembered)."""
        return self.config.batch

    state_dir: Any = None

    def _batch(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        from kgprobe.generation.backends.batch import AnthropicBatchClient, OpenAIBatchClient

        provider = self.config.model_id.split("/", 1)[0] if "/" in self.config.model_id else "openai"
        if provider not in ("openai", "anthropic") and not self.config.api_base:
            raise BackendError(f"litellm model {self.config.model_id}: batch: true supports OpenAI-compatible "
                               "providers (openai/..., or any api_base that implements /v1/files and /v1/batches) "
                               "and Anthropic (anthropic/...)")
        if self.state_dir is None:
            raise BackendError("batch mode needs a folder for pending jobs (run it through run_generation)")
        kind, default_base = ((AnthropicBatchClient, "https://api.anthropic.com/v1") if provider == "anthropic"
                              else (OpenAIBatchClient, "https://api.openai.com/v1"))
        client = kind(model_id=self.config.model_id, api_base=self.config.api_base or default_base,
                      api_key=self._key, state_dir=self.state_dir, poll_s=self.config.batch_poll_s,
                      timeout_s=self.config.batch_timeout_s)
        try:
            out = client.generate(prompts, params)
        finally:
            client.close()
        self.batches_submitted = getattr(self, "batches_submitted", 0) + client.submitted
        price = price_of_config("litellm", self.config)
        if price is None or price.batch_input_per_token is None or price.batch_output_per_token is None:
            return out
        # answers and replies without one alike: the provider billed both
        return [[c if c.tokens_in is None or c.tokens_out is None else
                 replace(c, cost=price.cost(c.tokens_in, c.tokens_out, batch=True)) for c in cs] for cs in out]

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        """``params.n`` completions per prompt; requests run concurrently (at most ``max_concurrency``), or as one
        batch job with ``batch: true``."""
        self.start()
        if not prompts:
            return []
        if self.config.batch:
            return self._batch(prompts, params)
        self._stop = threading.Event()
        future = asyncio.run_coroutine_threadsafe(self._generate(prompts, params), _shared_loop())
        try:
            return future.result()
        except BaseException:
            # Ctrl-C, or Dagster interrupting the step: send nothing more, let the requests already sent finish so
            # their answers can be stored (the runner reads them from ``partial``), then stop as asked
            self._stop.set()
            try:
                self.partial = future.result(timeout=self.config.timeout_s + 10)
            except BaseException:
                future.cancel()
            raise

    #: An interrupted :meth:`generate`'s answers (failures for the requests it did not send), for the runner.
    partial: list[list[Completion]] | None = None
    _stop: threading.Event | None = None
    #: Set by the runner: called with (prompt index, its completions) as soon as each prompt's requests are done,
    #: so its answers are stored at once (a killed run then loses only the requests in flight). Not called for
    #: requests an interruption kept from being sent.
    on_result: Any = None

    async def _generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        limit = asyncio.Semaphore(self.config.max_concurrency)
        emit = self.on_result

        async def one(index: int, prompt: Prompt) -> list[Completion]:
            out = await self._prompt(limit, prompt, params)
            stopped = self._stop is not None and self._stop.is_set()
            if emit is not None and (not stopped or all(c.ok for c in out)):
                emit(index, out)
            return out

        return list(await asyncio.gather(*(one(i, p) for i, p in enumerate(prompts))))

    async def _prompt(self, limit: asyncio.Semaphore, prompt: Prompt, params: SamplingParams) -> list[Completion]:
        n = params.n
        if params.temperature == 0:  # greedy: one request, the answer repeated
            got = await self._request(limit, prompt, params, n=1, seed=params.seed)
            return [got[0]] * n
        if not self._supports_n or n == 1:
            calls = [self._request(limit, prompt, params, n=1, seed=params.seed + i) for i in range(n)]
            return [c[0] for c in await asyncio.gather(*calls)]
        got = await self._request(limit, prompt, params, n=n, seed=params.seed)
        if len(got) == 1 and not got[0].ok:  # the request failed (a choice without an answer fails alone)
            return [got[0]] * n
        if len(got) < n:  # the server ignored n
            more = [self._request(limit, prompt, params, n=1, seed=params.seed + i) for i in range(len(got), n)]
            got = got + [c[0] for c in await asyncio.gather(*more)]
        return got[:n]

    def _kwargs(self, prompt: Prompt, params: SamplingParams, n: int, seed: int) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.config.model_id,
            "messages": prompt.messages(),
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "seed": seed,
            "timeout": self.config.timeout_s,
            # kgprobe retries itself (with Retry-After); the client must not retry underneath
            "max_retries": 0,
            "num_retries": 0,
            "drop_params": True,
        }
        if n > 1:
            kwargs["n"] = n
        if prompt.response_format is not None:
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                "name": prompt.template_id.replace("-", "_"), "schema": dict(prompt.response_format)}}
        if prompt.top_logprobs:
            # OpenAI's limit is 20 alternatives; providers without log-probabilities drop both (drop_params)
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = min(int(prompt.top_logprobs), 20)
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
        if self._key:
            kwargs["api_key"] = self._key
        if self._client is not None:
            kwargs["client"] = self._client
        kwargs.update(self.config.extra or {})
        return kwargs

    def _retryable(self, exc: BaseException) -> bool:
        litellm = self._litellm
        kinds = tuple(getattr(litellm, name) for name in (
            "RateLimitError", "Timeout", "APIConnectionError", "InternalServerError", "ServiceUnavailableError",
            "BadGatewayError") if hasattr(litellm, name))
        if isinstance(exc, (asyncio.TimeoutError, TimeoutError, ConnectionError)) or isinstance(exc, kinds):
            return True
        status = _status(exc)
        return status is not None and (status in _RETRY_STATUS or status >= 500)

    @staticmethod
    def _rejected(exc: BaseException) -> _ReplyRejected | None:
        """The :class:`_ReplyRejected` behind ``exc`` (the client wraps it in connection errors), if any."""
        chain, seen = exc, set()
        while chain is not None and id(chain) not in seen:
            if isinstance(chain, _ReplyRejected):
                return chain
            seen.add(id(chain))
            chain = chain.__cause__ or chain.__context__
        return None

    def _describe(self, exc: BaseException) -> str:
        rejected = self._rejected(exc)
        text = str(rejected) if rejected is not None else f"{type(exc).__name__} ({self._kind(exc)}): {exc}"
        return (mask_secrets(text, secrets=(self._key,)) or text)[:2000]

    def _kind(self, exc: BaseException) -> str:
        """What went wrong, honestly: ``timeout``, ``connection refused`` or ``connection error`` when no HTTP answer
        came (litellm wraps those in errors with a status code of its own, 408 or 500, that no server sent; the
        cause chain says what happened), else ``HTTP <status>``, else ``no HTTP status``."""
        litellm = self._litellm
        timeouts = tuple(getattr(litellm, n) for n in ("Timeout",) if litellm is not None and hasattr(litellm, n))
        connection = tuple(getattr(litellm, n) for n in ("APIConnectionError",)
                           if litellm is not None and hasattr(litellm, n))
        chain, seen, kinds = exc, set(), []
        while chain is not None and id(chain) not in seen:
            seen.add(id(chain))
            kinds.append(chain)
            chain = chain.__cause__ or chain.__context__
        if any(isinstance(c, ConnectionRefusedError) for c in kinds):
            return "connection refused"
        if any(isinstance(c, (asyncio.TimeoutError, TimeoutError, *timeouts)) for c in kinds):
            return "timeout"
        names = {type(c).__name__ for c in kinds}
        if any(isinstance(c, (ConnectionError, *connection)) for c in kinds) \
                or names & {"APIConnectionError", "ConnectError", "ClientConnectorError", "RemoteProtocolError"}:
            return "connection error"
        status = _status(exc)
        return f"HTTP {status}" if status else "no HTTP status"

    def _wait(self, attempt: int, exc: BaseException) -> float:
        backoff = min(self.config.backoff_max_s, self.config.backoff_base_s * 2**attempt)
        wait = backoff / 2 + self._rng.uniform(0, backoff / 2)
        asked = retry_after_seconds(exc)
        if asked is not None:
            wait = max(wait, min(asked, _RETRY_AFTER_CAP_S))
        return wait

    async def _request(self, limit: asyncio.Semaphore, prompt: Prompt, params: SamplingParams, *, n: int,
                       seed: int) -> list[Completion]:
        """One chat request (with its retries): its choices as completions, or one failed completion."""
        litellm = self._litellm
        kwargs = self._kwargs(prompt, params, n, seed)
        retries = 0
        while True:
            async with limit:
                if self._stop is not None and self._stop.is_set():
                    return [Completion.failure("interrupted before it was sent", latency_s=0.0, retries=retries)]
                t0 = time.perf_counter()
                try:
                    # a guard in case a provider path ignores ``timeout``
                    response = await asyncio.wait_for(litellm.acompletion(**kwargs), self.config.timeout_s + 10)
                    error: BaseException | None = None
                except Exception as exc:  # classified below: retried, or stored as a failure
                    error = exc
                latency = time.perf_counter() - t0
            if error is None:
                return self._completions(response, latency, retries, n, max_tokens=params.max_tokens)
            if retries >= self.config.max_retries or not self._retryable(error) or self._rejected(error):
                return [Completion.failure(self._describe(error), latency_s=latency, retries=retries)]
            await asyncio.sleep(self._wait(retries, error))
            retries += 1

    def _completions(self, response: Any, latency: float, retries: int, asked: int = 0, *,
                     max_tokens: int | None = None) -> list[Completion]:  # fmt: skip
        """One completion per choice of ``response`` (the first ``asked``): its answer (cut to the limit of
        ``max_tokens``), or a failure for a choice without one, with its share of the tokens and cost. Usage is
        clamped (:func:`~kgprobe.generation.cost.billed_usage`) and every choice returned is billed: the ones kept
        carry the whole bill."""
        choices = sorted(response.choices or [], key=lambda c: getattr(c, "index", 0) or 0)
        prompt_tokens, completion_tokens, cost = billed_usage(response, self.config, self._litellm)
        if not choices:  # billed all the same
            return [Completion.failure("empty reply: the API returned no choices", latency_s=latency, retries=retries,
                                       cost=cost, tokens_in=prompt_tokens, tokens_out=completion_tokens)]
        choices = choices[:asked] if asked else choices
        k = len(choices)
        out = []
        for i, choice in enumerate(choices):
            message = getattr(choice, "message", None)
            tokens_out = None
            if completion_tokens is not None:
                tokens_out = completion_tokens // k + (1 if i < completion_tokens % k else 0)
            text, finish = getattr(message, "content", None), getattr(choice, "finish_reason", None)
            share = None if cost is None else cost / k
            refusal = getattr(message, "refusal", None)
            empty = no_answer(text if isinstance(text, str) else None, finish,
                              refusal=refusal if isinstance(refusal, str) else None)
            if empty is not None:
                out.append(Completion.failure(empty, latency_s=latency, retries=retries, cost=share,
                                              tokens_in=prompt_tokens, tokens_out=tokens_out, finish_reason=finish))
                continue
            text, cut = bound_answer(text, max_tokens=max_tokens)
            out.append(Completion(
                text=text,
                finish_reason=CUT if cut else finish,
                tokens_in=prompt_tokens,
                tokens_out=tokens_out,
                latency_s=latency,
                cost=share,
                retries=retries,
                logprobs=openai_logprobs(choice, max_tokens=max_tokens),
            ))
        return out


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def openai_logprobs(choice: Any, *, max_tokens: int | None = None) -> str | None:
    """A chat choice's token log-probabilities (OpenAI's ``logprobs.content``: each token with its
    ``top_logprobs``) as :attr:`Completion.logprobs` JSON, the first ``max_tokens`` tokens at most (a provider may
    ignore it) with at most 20 alternatives each; None when the response has none."""
    content = _get(_get(choice, "logprobs"), "content")
    if not content:
        return None
    tokens = []
    for tok in content[:max_tokens] if max_tokens else content:
        top = [[str(_get(a, "token")), float(_get(a, "logprob"))] for a in (_get(tok, "top_logprobs") or [])[:20]]
        tokens.append([str(_get(tok, "token")), top or [[str(_get(tok, "token")), float(_get(tok, "logprob"))]]])
    return json.dumps(tokens, ensure_ascii=False)
