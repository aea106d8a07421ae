"""The resumable generation runner, and the validation of the config's model entries.

A question stage turns its items into :class:`~kgprobe.generation.records.Prompt` records; :func:`run_generation` asks a backend (reference,
transformers, litellm, vLLM) for ``params.n`` samples of every distinct prompt text that the
:class:`~kgprobe.generation.store.ResponseStore` does not hold yet, appending to the store as it goes; the store then gives
one row per (item, sample) with :meth:`~kgprobe.generation.store.ResponseStore.rows_for`.

    >>> store = ResponseStore("warehouse/responses")
    >>> spec = model_specs([{"name": "oracle", "backend": "reference", "kind": "oracle"}])[0]
    >>> with make_backend(spec) as backend:
    ...     summary = run_generation(backend, model=spec.name, prompts=prompts, params=spec.params, store=store)
    >>> table = store.rows_for(spec.name, prompts, spec.params)

A response is keyed by ``(model, prompt_sha256, params_sha256, sample_index)``: the model's config name, the
SHA-256 of the prompt text, the SHA-256 of the sampling parameters (canonical JSON) and the sample number. A killed
run therefore resumes where its last flushed shard ended, identical prompt texts are generated once, and a failed
request is stored with its error and asked again by the next run. The model name is the identity of the weights:
give a model a new name when its weights, chat template or backend options change.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, fields, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from kgprobe.errors import ConfigError
from kgprobe.generation.cost import clamp_usage
from kgprobe.secrets import mask_secrets
from kgprobe.generation.records import (
    BACKEND_KINDS,
    DEFAULT_BATCH_SIZE,
    SAMPLING_KEYS,
    Backend,
    BudgetExceeded,
    Completion,
    GenerationError,
    GenerationSummary,
    ModelSpec,
    Prompt,
    SamplingParams,
)

if TYPE_CHECKING:
    from kgprobe.generation.cost import Budget
    from kgprobe.generation.store import ResponseStore

__all__ = ["BackendPool", "error_kind", "make_backend", "model_specs", "run_generation"]


# ---------------------------------------------------------------------------------------------------------------------
# model config


def _check_value(model: str, key: str, value: Any, hint: Any) -> Any:
    """Check one config value against a (simple) type hint; ints are accepted for floats."""
    import types
    import typing

    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _check_value(model, key, value, option)
            except ConfigError as exc:
                errors.append(exc)
        raise errors[0]
    if origin is not None:
        hint = origin
    if hint is Any:
        return value
    ok = {
        bool: lambda v: isinstance(v, bool),
        int: lambda v: isinstance(v, int) and not isinstance(v, bool),
        float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        str: lambda v: isinstance(v, str),
    }.get(hint)
    if ok is None:  # a mapping or another container
        ok = (lambda v: isinstance(v, Mapping)) if hint in (dict, Mapping) else (lambda v: isinstance(v, hint))
    if not ok(value):
        name = getattr(hint, "__name__", str(hint))
        raise ConfigError(f"model {model!r}: key {key!r} must be {name}, got {value!r}")
    return float(value) if hint is float else value


def _config_classes() -> dict[str, type]:
    from kgprobe.generation.backends import CONFIG_CLASSES

    return CONFIG_CLASSES


def model_specs(config_models: Sequence[Mapping[str, Any]], *, defaults: Mapping[str, Any] | None = None) -> list[ModelSpec]:
    """Validate the ``models`` list of a project config and return one :class:`ModelSpec` per entry.

    Each entry needs ``name`` and ``backend`` (one of :data:`BACKEND_KINDS`); it may set the sampling parameters
    ``n``, ``temperature``, ``top_p``, ``max_tokens``, ``seed`` (over ``defaults``, e.g. the config's
    ``generation`` section, over KG-FPQ's defaults) and ``batch_size``; every other key must be a field of the
    backend's config class (``model_id``, ``kind``, ``api_key_env`` ...). Raises :class:`ConfigError` naming the
    model and the key.

        >>> model_specs([{"name": "oracle", "backend": "reference", "kind": "oracle", "n": 1}])[0].params.n
        1
    """
    from typing import get_type_hints

    if isinstance(config_models, Mapping) or not isinstance(config_models, Sequence):
        raise ConfigError(f"models: expected a list of model entries, got {type(config_models).__name__}")
    base = dict(defaults or {})
    unknown = set(base) - set(SAMPLING_KEYS)
    if unknown:
        raise ConfigError(f"generation defaults: unknown sampling key(s) {sorted(unknown)}; allowed: {list(SAMPLING_KEYS)}")
    classes = _config_classes()
    specs: list[ModelSpec] = []
    seen: set[str] = set()
    for position, entry in enumerate(config_models):
        if not isinstance(entry, Mapping):
            raise ConfigError(f"models[{position}]: expected a mapping with name and backend, got {entry!r}")
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"models[{position}]: every model needs a non-empty string 'name'")
        if name in seen:
            raise ConfigError(f"model {name!r}: the name is used twice; model names must be unique (they key the response store)")
        seen.add(name)
        kind = entry.get("backend")
        if kind not in classes:
            raise ConfigError(f"model {name!r}: key 'backend' must be one of {list(BACKEND_KINDS)}, got {kind!r}")
        cls = classes[kind]
        hints = get_type_hints(cls)
        allowed = {f.name for f in fields(cls)}
        sampling = {**base}
        options: dict[str, Any] = {}
        batch_size = DEFAULT_BATCH_SIZE[kind]
        limit = None
        max_cost = None
        for key, value in entry.items():
            if key in ("name", "backend"):
                continue
            if key in SAMPLING_KEYS:
                sampling[key] = value
            elif key == "batch_size":
                batch_size = _check_value(name, key, value, int)
                if batch_size < 1:
                    raise ConfigError(f"model {name!r}: key 'batch_size' must be at least 1, got {batch_size}")
            elif key == "limit":
                limit = _check_value(name, key, value, int)
                if limit < 1:
                    raise ConfigError(f"model {name!r}: key 'limit' must be at least 1, got {limit}")
            elif key == "max_cost_usd":
                max_cost = _check_value(name, key, value, float)
                if max_cost < 0:
                    raise ConfigError(f"model {name!r}: key 'max_cost_usd' must be >= 0, got {max_cost}")
            elif key in allowed:
                options[key] = _check_value(name, key, value, hints[key])
            else:
                raise ConfigError(f"model {name!r}: unknown key {key!r} for backend {kind!r}; allowed: "
                                  f"{sorted(allowed | set(SAMPLING_KEYS) | {'batch_size', 'limit', 'max_cost_usd'})}")
        required = [f.name for f in fields(cls)
                    if f.default is MISSING and f.default_factory is MISSING and f.name not in options]
        if required:
            raise ConfigError(f"model {name!r}: backend {kind!r} needs key(s) {required}")
        try:
            config = cls(**options)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"model {name!r}: {exc}") from exc
        try:
            params = SamplingParams(**sampling)
        except ValueError as exc:
            raise ConfigError(f"model {name!r}: {exc}") from exc
        specs.append(ModelSpec(name=name, backend=kind, config=config, params=params, batch_size=batch_size,
                               limit=limit, max_cost_usd=max_cost))
    return specs


def make_backend(spec: ModelSpec) -> Backend:
    """The backend object for a validated :class:`ModelSpec` (not started: weights load on ``start()`` or on the
    first ``generate``)."""
    from kgprobe.generation.backends import BACKEND_CLASSES

    return BACKEND_CLASSES[spec.backend](spec.config)


class BackendPool:
    """The backends of one run, one per model name: a model's backend is made the first time it is asked for (its
    weights load on its first ``generate``) and kept until :meth:`close`, so a run that answers several suites with
    one model, and judges with it too, loads its weights (or starts its vLLM engine) at most once. ``loads`` counts
    the backends made.

        >>> with BackendPool() as pool:
        ...     backend = pool.get(spec)          # the same object on every later get(spec)
    """

    def __init__(self) -> None:
        self._backends: dict[str, tuple[ModelSpec, Backend]] = {}
        self.loads = 0

    def get(self, spec: ModelSpec) -> Backend:
        """The backend of ``spec``; a different spec under a name already in the pool is an error (the model name is
        the identity of the weights)."""
        held = self._backends.get(spec.name)
        if held is not None:
            if (held[0].backend, held[0].config) != (spec.backend, spec.config):
                raise ConfigError(f"model {spec.name!r} is configured twice with different backends or options; "
                                  "give each configuration its own name")
            return held[1]
        # not started here: a backend loads its weights on its first generate, so a run whose answers are all in
        # the store (a re-scored partition, say) never loads the model at all
        backend = make_backend(spec)
        self.loads += 1
        self._backends[spec.name] = (spec, backend)
        return backend

    def close(self) -> None:
        """Close every backend (weights and engines released)."""
        while self._backends:
            _, (_, backend) = self._backends.popitem()
            backend.close()

    def release(self, keep: Callable[[ModelSpec, Backend], bool]) -> list[str]:
        """Close the backends for which ``keep(spec, backend)`` is false (a GPU model, say) and keep the others
        loaded for later runs; returns the names closed."""
        closed = [name for name, (spec, backend) in self._backends.items() if not keep(spec, backend)]
        for name in closed:
            _, backend = self._backends.pop(name)
            backend.close()
        return closed

    def __enter__(self) -> BackendPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------------------------------
# the runner


def _clock(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class _Progress:
    """Logs a progress line each time another 10% of the samples is done, and at least once a minute."""

    def __init__(self, model: str, total: int, log: Callable[[str], None], *, every_s: float = 60.0) -> None:
        self.model, self.total, self.log, self.every_s = model, total, log, every_s
        self.start = self.last = time.perf_counter()
        self.samples = self.prompts = self.tokens = 0
        self.next_tenth = 1

    def update(self, samples: int, prompts: int, tokens: int) -> None:
        self.samples += samples
        self.prompts += prompts
        self.tokens += tokens
        now = time.perf_counter()
        tenth = self.samples * 10 // max(self.total, 1)
        if tenth < self.next_tenth and now - self.last < self.every_s and self.samples < self.total:
            return
        self.next_tenth = max(self.next_tenth, tenth + 1)
        self.last = now
        elapsed = max(now - self.start, 1e-9)
        rate = self.samples / elapsed
        eta = (self.total - self.samples) / rate if rate > 0 else math.inf
        self.log(f"{self.model}: {self.samples}/{self.total} samples ({100 * self.samples / max(self.total, 1):.0f}%), "
                 f"{self.prompts / elapsed:.2f} prompts/s, {self.tokens / elapsed:.1f} tokens/s, "
                 f"elapsed {_clock(elapsed)}, ETA {_clock(eta)}")


#: A run that wrote more shards than this folds them into one at its end.
_FOLD_SHARDS = 16


class _ShardBuffer:
    """Writes rows to the store as soon as they are added (one shard per ``shard_size`` rows at most), so a killed
    run loses only what it had not received yet. A key added twice in one run (an answer stored as it arrived, then
    again with its batch) is written once. Thread-safe: an API backend adds each prompt's answers from its event
    loop's thread."""

    def __init__(self, store: ResponseStore, model: str, shard_size: int) -> None:
        self.store, self.model, self.shard_size = store, model, shard_size
        self.rows: list[dict[str, Any]] = []
        self.shards = 0
        self.paths: list[Any] = []
        self._seen: set[tuple[str, int]] = set()
        self._lock = threading.Lock()

    def add(self, rows: list[dict[str, Any]]) -> None:
        with self._lock:
            for r in rows:
                key = (r["prompt_sha256"], r["sample_index"])
                if key not in self._seen:
                    self._seen.add(key)
                    self.rows.append(r)
            while self.rows:
                self._write(self.rows[: self.shard_size])
                self.rows = self.rows[self.shard_size:]

    def flush(self) -> None:
        with self._lock:
            if self.rows:
                self._write(self.rows)
                self.rows = []

    def _write(self, rows: list[dict[str, Any]]) -> None:
        path = self.store.write_shard(self.model, rows)
        if path is not None:
            self.paths.append(path)
            self.shards += 1


def _plan(work: list[tuple[Prompt, list[int]]], batch_size: int) -> list[tuple[int, list[tuple[Prompt, list[int]]]]]:
    """Batches of prompts that miss the same number of samples (one backend call asks for ``n=k``), ordered by
    template and then prompt length: answers to one template have similar lengths, so a padded batch pads little and
    its rows finish together."""
    groups: dict[int, list[tuple[Prompt, list[int]]]] = defaultdict(list)
    for prompt, missing in work:
        groups[len(missing)].append((prompt, missing))
    batches = []
    for k in sorted(groups, reverse=True):
        group = sorted(groups[k], key=lambda w: (w[0].template_id, len(w[0].text), w[0].text))
        batches.extend((k, group[i: i + batch_size]) for i in range(0, len(group), batch_size))
    return batches


def _row(model: str, backend: str, prompt: Prompt, params_json: str, params_sha: str, index: int, c: Completion,
         run_id: str, now: datetime) -> dict[str, Any]:  # fmt: skip
    c = clamp_usage(c)
    return {
        "model": model, "backend": backend, "prompt_sha256": prompt.sha256(), "prompt": prompt.text,
        "sampling_params": params_json, "params_sha256": params_sha, "sample_index": index,
        "text": c.text if c.ok else None, "finish_reason": c.finish_reason, "tokens_in": c.tokens_in,
        "tokens_out": c.tokens_out, "latency_s": float(c.latency_s), "cost": c.cost, "error": c.error,
        "retries": c.retries, "run_id": run_id, "created_at": now, "logprobs": c.logprobs,
    }


def run_generation(
    backend: Backend,
    *,
    model: str,
    prompts: Sequence[Prompt],
    params: SamplingParams,
    store: ResponseStore,
    run_id: str = "",
    shard_size: int = 4096,
    batch_size: int = 32,
    log: Callable[[str], None] | None = None,
    max_failed_batches: int = 3,
    budget: Budget | None = None,
    max_failed_share: float | None = None,
) -> GenerationSummary:
    """Generate every sample of ``prompts`` that ``store`` lacks for ``model`` and ``params``, and store it.

    Distinct prompt texts are generated once; samples the store holds as successes are reused; the rest go to
    ``backend.generate`` in batches of ``batch_size`` prompts, grouped by template and length (prompts missing only
    some samples ask for just those). Answers are stored as they arrive: an API backend (litellm) hands over each
    request's answers as it completes and they are written at once; a local backend's (transformers, vLLM,
    reference) when its call returns (shards of at most ``shard_size`` rows). So a killed run (even ``kill -9``)
    loses at most the requests in flight: for litellm at most ``max_concurrency`` requests, for a local backend
    the one call of ``batch_size`` prompts it was computing. A run that wrote many small shards folds them into one
    at its end.

    Each batch is sent under the lock of its prompts in the store
    (:meth:`~kgprobe.generation.store.ResponseStore.claim`, per prompt bucket): runs at once whose prompt sets
    overlap (two partitions sharing a judge, two ``limit`` values, two perturbation levels, or one partition twice) each
    generate what the other is not generating, reuse what it stored, and never send one prompt twice.

    A request that fails (an exception from the backend fails its whole batch) is stored with its error and asked
    again by the next run; when every request of ``max_failed_batches`` consecutive batches fails, the run stops
    with :class:`GenerationError` after storing those failures (0 never stops). With ``max_failed_share`` (0 to
    1), a run whose failed samples are more than that share of the samples asked for raises
    :class:`GenerationError` with the counts by kind of error and the first message of the commonest, after storing everything (0: any failure fails it;
    None: never). ``log`` receives a progress line at least every 10% (done/total, prompts/s, tokens/s, ETA). With
    a ``budget`` (:class:`~kgprobe.generation.cost.Budget`), each batch reserves its estimated cost first
    (:meth:`~kgprobe.generation.cost.Budget.reserve`, shared by every process on the store) and a batch that could
    pass one of its limits is not sent: what was generated is stored and :class:`BudgetExceeded` says what was spent
    and what is left; raising the limit resumes. Reported usage is clamped before it is recorded or counted
    (:func:`~kgprobe.generation.cost.clamp_usage`).

    Returns a :class:`GenerationSummary`; read the rows back with ``store.rows_for(model, prompts, params)``.
    """
    if max_failed_share is not None and not 0 <= max_failed_share <= 1:
        raise ValueError(f"max_failed_share must be between 0 and 1, got {max_failed_share}")
    say = log or (lambda _msg: None)
    summary, errors, first = _generate(backend, model=model, prompts=prompts, params=params, store=store, run_id=run_id,
                                shard_size=shard_size, batch_size=batch_size, log=log,
                                max_failed_batches=max_failed_batches, budget=budget)
    if max_failed_share is not None and summary.failed > max_failed_share * summary.requested:
        kinds = ", ".join(f"{n} x {kind}" for kind, n in errors.most_common())
        example = first.get(errors.most_common(1)[0][0], "") if errors else ""
        example = f' The first: "{example[:300]}{"..." if len(example) > 300 else ""}".' if example else ""
        raise GenerationError(
            f"{model}: {summary.failed} of {summary.requested} samples failed ({kinds}).{example} "
            f"{summary.generated} generated, {summary.reused} reused. The failures are stored (never scored) and are "
            f"asked again by the next run: fix the cause and run again, or allow a share of failures with "
            f"generation.max_failed_share (now {max_failed_share:g})")
    return summary


def error_kind(error: str) -> str:
    """The kind of a stored error, for counts: its text up to the first ``": "`` (``"HTTP 503"``,
    ``"connection refused"``, an exception's class name)."""
    return error.split(": ", 1)[0].strip()[:80] or "error"


def _generate(
    backend: Backend,
    *,
    model: str,
    prompts: Sequence[Prompt],
    params: SamplingParams,
    store: ResponseStore,
    run_id: str = "",
    shard_size: int = 4096,
    batch_size: int = 32,
    log: Callable[[str], None] | None = None,
    max_failed_batches: int = 3,
    budget: Budget | None = None,
) -> tuple[GenerationSummary, Counter[str], dict[str, str]]:
    """:func:`run_generation` under its lock; also returns the failures counted by :func:`error_kind` and the first
    failure's message of each kind."""
    if shard_size < 1 or batch_size < 1:
        raise ValueError(f"shard_size and batch_size must be at least 1, got {shard_size} and {batch_size}")
    say = log or (lambda _msg: None)
    started = time.perf_counter()
    params_json, params_sha = params.to_json(), params.sha256()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # said in the run's log instead
        for path in store.quarantine_damaged(store.shards(model)):
            say(f"{model}: damaged response shard {path.name.removeprefix('damaged-')} set aside as {path}; its "
                "answers are generated again")
    unique: dict[str, Prompt] = {}
    for prompt in prompts:
        unique.setdefault(prompt.sha256(), prompt)
    seen = set(store.shards(model))  # listed before they are read: a shard written in between is read again later
    with warnings.catch_warnings(record=True) as caught:  # a shard with damaged pages, found by reading it all
        warnings.simplefilter("always", RuntimeWarning)
        done = store.done_keys(model, params_sha)
    for warning in caught:
        say(f"{model}: {warning.message}")
    work: list[tuple[Prompt, list[int]]] = []
    reused = 0
    for sha, prompt in unique.items():
        missing = [i for i in range(params.n) if (sha, i) not in done]
        reused += params.n - len(missing)
        if missing:
            work.append((prompt, missing))
    requested = len(unique) * params.n
    total = requested - reused
    backend_name = getattr(backend, "name", type(backend).__name__)
    say(f"{model}: {len(prompts)} items, {len(unique)} distinct prompts x n={params.n}: {reused} samples reused "
        f"from the store, {total} to generate ({backend_name}, batches of {batch_size} prompts)")

    if getattr(backend, "batch_mode", False):
        # a provider batch job: the whole partition in one call, pending jobs remembered beside the store
        backend.state_dir = store.root / "batches" / store.model_dir(model).name
        batch_size = max(len(work), 1)
    buffer = _ShardBuffer(store, model, shard_size)
    progress = _Progress(model, total, say)
    generated = failed = tokens_in = tokens_out = retries = late = 0
    cost: float | None = None
    failed_batches = 0
    errors: Counter[str] = Counter()
    first: dict[str, str] = {}  # kind -> the first error's message (masked, as every stored error)
    streams = hasattr(backend, "on_result")

    def still_missing(part: list[tuple[Prompt, list[int]]]) -> list[tuple[Prompt, list[int]]]:
        # looked up again under the prompts' claim: another run may have stored them since this one looked (only
        # in the shards that appeared since, that this run did not write: shards are never modified)
        nonlocal late, seen, done
        now = set(store.shards(model))
        new = sorted(now - seen - set(buffer.paths))
        if new:
            try:
                done, seen = done | store.done_keys(model, params_sha, only=new), now
            except FileNotFoundError:  # folded away by a compaction meanwhile: read the whole store again
                seen = set(store.shards(model))
                done = store.done_keys(model, params_sha)
        out = []
        for prompt, missing in part:
            left = [i for i in missing if (prompt.sha256(), i) not in done]
            late += len(missing) - len(left)
            progress.update(len(missing) - len(left), 0, 0)
            if left:
                out.append((prompt, left))
        return out

    def send(k: int, batch: list[tuple[Prompt, list[int]]]) -> None:
        asked = [p for p, _ in batch]
        reservation = None
        if budget is not None:
            run_cost = cost or 0.0
            mean = run_cost / generated if generated and cost is not None else None
            reservation = budget.reserve(budget.estimate(asked, k, params.max_tokens, mean), spent_here=run_cost,
                                         log=say)
            if reservation.over is not None:
                name, most, spent = reservation.over
                raise BudgetExceeded(
                    f"{model}: stopped before passing {name} (${most:.4f}): ${spent:.4f} spent "
                    f"(${run_cost:.4f} in this generation), {total - generated - failed - late} sample(s) of {total} "
                    "not generated. Everything generated is stored; raise the limit and run again to resume.")
        try:
            _send(k, batch, asked)
        finally:
            buffer.flush()  # the answers are in the store before the claim and the reservation go
            if reservation is not None:
                reservation.release()

    def _send(k: int, batch: list[tuple[Prompt, list[int]]], asked: list[Prompt]) -> None:
        nonlocal generated, failed, tokens_in, tokens_out, retries, cost, failed_batches
        if streams:  # each request's answers are stored as they arrive, not when the whole batch is back
            backend.on_result = _storer(buffer, batch, model, backend_name, params_json, params_sha, run_id)
        t0 = time.perf_counter()
        try:
            out = backend.generate(asked, params if k == params.n else replace(params, n=k))
        except Exception as exc:  # stored per request below, and retried by the next run
            message = mask_secrets(f"{type(exc).__name__}: {exc}")
            out = [[Completion.failure(message, latency_s=time.perf_counter() - t0)] * k for _ in asked]
        except BaseException:
            # interrupted (Ctrl-C, a cancelled run): keep the answers that arrived, so no prompt is paid twice
            partial = getattr(backend, "partial", None)
            if partial is not None and len(partial) == len(asked):
                now = datetime.now(timezone.utc)
                buffer.add([r for (prompt, missing), cs in zip(batch, partial) for index, c in zip(missing, cs)
                            if c.ok for r in [_row(model, backend_name, prompt, params_json, params_sha, index, c,
                                                   run_id, now)]])
                backend.partial = None
            raise
        if len(out) != len(asked) or any(len(c) != k for c in out):
            raise GenerationError(f"{model}: backend {backend_name} returned {[len(c) for c in out]} completions "
                                  f"for {len(asked)} prompts x n={k}; a backend must return n per prompt, in order")
        out = [[clamp_usage(c) for c in cs] for cs in out]
        now = datetime.now(timezone.utc)
        rows = []
        batch_ok = 0
        last_error = None
        for (prompt, missing), completions in zip(batch, out):
            for index, c in zip(missing, completions):
                rows.append(_row(model, backend_name, prompt, params_json, params_sha, index, c, run_id, now))
                retries += c.retries
                if c.cost is not None:  # a reply without an answer is a failure the provider may have billed
                    cost = (cost or 0.0) + c.cost
                if c.ok:
                    batch_ok += 1
                    tokens_in += c.tokens_in or 0
                    tokens_out += c.tokens_out or 0
                else:
                    last_error = c.error
                    errors[error_kind(c.error or "")] += 1
                    first.setdefault(error_kind(c.error or ""), " ".join(str(c.error or "").split()))
        buffer.add(rows)
        generated += batch_ok
        failed += len(rows) - batch_ok
        progress.update(len(rows), len(asked), sum(c.tokens_out or 0 for cs in out for c in cs if c.ok))
        failed_batches = failed_batches + 1 if batch_ok == 0 else 0
        if max_failed_batches and failed_batches >= max_failed_batches:
            buffer.flush()
            raise GenerationError(
                f"{model}: every request of the last {failed_batches} batches failed (last error: {last_error}); "
                f"{failed} failures are stored and will be retried: fix the backend and run again")

    try:
        # Each batch runs under the claim of its prompts (ResponseStore.claim): prompts another run is generating
        # now are put off, not waited for, and asked again once that run is done with them; only when nothing else
        # is left does this run wait (holding no claim). Under its claim a prompt is looked up in the store again,
        # so what another run stored meanwhile is reused, and no prompt is sent by two runs at once.
        pending, wait = work, False
        while pending:
            deferred: list[tuple[Prompt, list[int]]] = []
            progressed = False
            for _, batch in _plan(pending, batch_size):
                with store.claim(model, params_sha, [p.sha256() for p, _ in batch], wait=wait and not progressed,
                                 log=say) as mine:
                    if mine:
                        progressed = True
                        for k, part in _plan(still_missing([w for w in batch if w[0].sha256() in mine]), batch_size):
                            send(k, part)
                deferred += [w for w in batch if w[0].sha256() not in mine]
            pending, wait = deferred, not progressed
    finally:
        if streams:
            backend.on_result = None
        buffer.flush()
        if len(buffer.paths) > _FOLD_SHARDS:  # many small shards (one per request): fold them into one
            store.compact(model, files=buffer.paths)
    seconds = time.perf_counter() - started
    summary = GenerationSummary(
        model=model, backend=backend_name, items=len(prompts), unique_prompts=len(unique), requested=requested,
        reused=reused + late, generated=generated, failed=failed, seconds=seconds, tokens_in=tokens_in,
        tokens_out=tokens_out, retries=retries, cost=cost, shards=buffer.shards)
    if total == 0:  # the first line said it all: every sample was stored already
        return summary, errors, first
    say(f"{model}: done in {_clock(seconds)}: {generated} generated, {reused + late} reused, {failed} failed"
        + (" (failures are stored and retried by the next run)" if failed else "")
        + f", {tokens_out} completion tokens, {buffer.shards} shard(s) written")
    return summary, errors, first


def _storer(buffer: _ShardBuffer, batch: list[tuple[Prompt, list[int]]], model: str, backend_name: str,
            params_json: str, params_sha: str, run_id: str) -> Callable[[int, list[Completion]], None]:
    """The callback a streaming backend calls with one prompt's completions (by its index in the batch)."""

    def store(index: int, completions: list[Completion]) -> None:
        prompt, missing = batch[index]
        now = datetime.now(timezone.utc)
        buffer.add([_row(model, backend_name, prompt, params_json, params_sha, i, c, run_id, now)
                    for i, c in zip(missing, completions)])

    return store
