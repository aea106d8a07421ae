"""What a generation will cost before it runs: prompts, samples the store already holds, tokens in and out, dollars.

:func:`plan_generation` answers for one model and one list of prompts (a suite's partition): how many distinct
prompts and samples it asks, how many the response store already holds (only new work counts), the estimated input
tokens of the rest (counted with the model's tokenizer where kgprobe can load one offline, else the stated
approximation of 4 characters a token), the estimated output tokens (the sampling ``max_tokens``, or once the store
holds answers of this model to this prompt template, their measured mean) and the cost from the model's price:
the model entry's own ``input_cost_per_token`` / ``output_cost_per_token`` when set, else litellm's bundled price map
(offline), else unknown; local backends (reference, transformers, vLLM) cost nothing.

    >>> row = plan_generation(spec, prompts, store=store)
    >>> row.to_generate, row.input_tokens, row.output_tokens, row.cost_usd
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from kgprobe.generation.litellm_import import import_litellm
from kgprobe.generation.records import Completion, ModelSpec, Prompt

__all__ = ["CHARS_PER_TOKEN", "MAX_REQUEST_COST_USD", "MAX_USAGE_TOKENS", "Budget", "PlanRow", "Price", "Reservation",
           "billed_usage", "clamp_cost", "clamp_tokens", "clamp_usage", "count_tokens", "plan_generation", "price_of",
           "price_of_config"]

#: The approximation used when no tokenizer is available offline (English text with a BPE tokenizer).
CHARS_PER_TOKEN = 4.0
#: The most tokens one request is recorded with, in or out: no model reads or writes that many, so a reported usage
#: above it is a provider's error and counts as this many.
MAX_USAGE_TOKENS = 10_000_000
#: The most dollars one stored sample is recorded as costing (a reported cost above it is a provider's error).
MAX_REQUEST_COST_USD = 1000.0
_FREE_BACKENDS = frozenset({"reference", "transformers", "vllm", "imported"})
# providers whose batch API costs half the synchronous price for every model (Anthropic's Message Batches)
_HALF_PRICE_BATCHES = frozenset({"anthropic"})


@dataclass(frozen=True)
class Price:
    """Dollars per input and output token; ``batch_*`` for a provider's batch API (None: no batch price known)."""

    input_per_token: float
    output_per_token: float
    source: str
    batch_input_per_token: float | None = None
    batch_output_per_token: float | None = None

    def cost(self, tokens_in: float, tokens_out: float, *, batch: bool = False) -> float | None:
        if batch:
            if self.batch_input_per_token is None or self.batch_output_per_token is None:
                return None
            return tokens_in * self.batch_input_per_token + tokens_out * self.batch_output_per_token
        return tokens_in * self.input_per_token + tokens_out * self.output_per_token


def price_of(spec: ModelSpec) -> Price | None:
    """The price of ``spec``'s tokens: free for local backends; the entry's own prices; litellm's price map; None."""
    return price_of_config(spec.backend, spec.config)


def price_of_config(backend: str, config: Any) -> Price | None:
    """:func:`price_of` for a backend kind and its config (what a backend knows of itself). An entry's own prices
    get half of them as the batch price, as OpenAI's and Anthropic's batch APIs charge."""
    if backend in _FREE_BACKENDS:
        return Price(0.0, 0.0, source=f"{backend} (local)", batch_input_per_token=0.0, batch_output_per_token=0.0)
    own_in, own_out = getattr(config, "input_cost_per_token", None), getattr(config, "output_cost_per_token", None)
    if own_in is not None and own_out is not None:
        return Price(float(own_in), float(own_out), source="model entry",
                     batch_input_per_token=float(own_in) / 2, batch_output_per_token=float(own_out) / 2)
    model_id = getattr(config, "model_id", None)
    entry = _litellm_prices(model_id) if model_id else None
    if not entry:
        return None
    pin, pout = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if pin is None or pout is None:
        return None
    bin_, bout = entry.get("input_cost_per_token_batches"), entry.get("output_cost_per_token_batches")
    if (bin_ is None or bout is None) and entry.get("litellm_provider") in _HALF_PRICE_BATCHES:
        # the map lists no batch price for older models of a provider whose batch API charges half for every model
        bin_, bout = float(pin) / 2, float(pout) / 2
    return Price(float(pin), float(pout), source="litellm price map", batch_input_per_token=bin_,
                 batch_output_per_token=bout)


def _litellm_prices(model_id: str) -> dict[str, Any] | None:
    litellm = import_litellm()
    table = litellm.model_cost
    for key in (model_id, model_id.split("/", 1)[-1]):
        if key in table:
            return dict(table[key])
    return None


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return None if math.isnan(number) else number


def clamp_tokens(value: Any) -> int | None:
    """A token count as a provider reported it, made safe to record: never negative (0), at most
    :data:`MAX_USAGE_TOKENS` (infinity too), and None for what is not a number (NaN, text, a missing field).

        >>> clamp_tokens(-5), clamp_tokens(float("inf")), clamp_tokens("x")
        (0, 10000000, None)
    """
    number = _number(value)
    return None if number is None else int(min(max(number, 0.0), MAX_USAGE_TOKENS))


def clamp_cost(value: Any) -> float | None:
    """A cost made safe to record and to sum: never negative (0.0), at most :data:`MAX_REQUEST_COST_USD` (infinity
    too), None for NaN or what is not a number."""
    number = _number(value)
    return None if number is None else min(max(number, 0.0), MAX_REQUEST_COST_USD)


def clamp_usage(completion: Completion) -> Completion:
    """``completion`` with its tokens and cost clamped (:func:`clamp_tokens`, :func:`clamp_cost`): what the runner
    records and counts against budgets, whatever a backend reported."""
    tokens_in, tokens_out = clamp_tokens(completion.tokens_in), clamp_tokens(completion.tokens_out)
    cost = clamp_cost(completion.cost)
    if (tokens_in, tokens_out, cost) == (completion.tokens_in, completion.tokens_out, completion.cost):
        return completion
    return replace(completion, tokens_in=tokens_in, tokens_out=tokens_out, cost=cost)


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def billed_usage(response: Any, config: Any, litellm: Any = None) -> tuple[int | None, int | None, float | None]:
    """``(prompt tokens, completion tokens, cost)`` of one chat reply, for the whole reply: every choice it holds
    is billed, whether or not the caller keeps it. The usage is not trusted: counts are clamped
    (:func:`clamp_tokens`); the cost is at the model entry's own prices when set, else litellm's
    ``completion_cost`` when the usage was sound, else the clamped counts at litellm's price map; None when no price
    is known. Never negative, NaN or infinite."""
    usage = _field(response, "usage")
    raw_in, raw_out = _field(usage, "prompt_tokens"), _field(usage, "completion_tokens")
    tokens_in, tokens_out = clamp_tokens(raw_in), clamp_tokens(raw_out)
    sound = all(raw is None or (isinstance(raw, int) and not isinstance(raw, bool) and raw == clean)
                for raw, clean in ((raw_in, tokens_in), (raw_out, tokens_out)))
    own_in, own_out = getattr(config, "input_cost_per_token", None), getattr(config, "output_cost_per_token", None)
    cost: float | None = None
    if own_in is not None and own_out is not None:
        if tokens_in is not None and tokens_out is not None:
            cost = tokens_in * own_in + tokens_out * own_out
    elif sound and litellm is not None:
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # no price known for this model (a local server, a new model)
            cost = None
    elif tokens_in is not None and tokens_out is not None:
        price = price_of_config("litellm", config)
        cost = None if price is None else price.cost(tokens_in, tokens_out)
    return tokens_in, tokens_out, clamp_cost(cost)


@functools.lru_cache(maxsize=8)
def _hf_tokenizer(model_id: str) -> Any:
    from transformers import AutoTokenizer

    from kgprobe.generation.backends.hf import resolve_weights

    return AutoTokenizer.from_pretrained(resolve_weights(model_id), local_files_only=True)


def count_tokens(spec: ModelSpec, prompts: Sequence[Prompt]) -> tuple[list[int], str]:
    """Input tokens of each prompt as ``spec``'s model would read it (its chat template included where the tokenizer
    has one), and how they were counted: ``tokenizer``, ``litellm tokenizer`` or the approximation."""
    if not prompts:
        return [], "none"
    if spec.backend == "reference":
        return [0] * len(prompts), "reference (no tokens)"
    model_id = getattr(spec.config, "model_id", None)
    try:
        if spec.backend in ("transformers", "vllm") and model_id:
            tok = _hf_tokenizer(model_id)
            if getattr(tok, "chat_template", None):
                counts = [_length(tok.apply_chat_template(p.messages(), add_generation_prompt=True, tokenize=True))
                          for p in prompts]
            else:
                counts = [len(tok(("" if p.system is None else p.system + "\n") + p.text)["input_ids"]) for p in prompts]
            return counts, "tokenizer"
        if spec.backend == "litellm" and model_id:
            litellm = import_litellm()
            return [int(litellm.token_counter(model=model_id, messages=p.messages())) for p in prompts], \
                "litellm tokenizer"
    except Exception:  # an unavailable tokenizer falls back to the stated approximation
        pass
    return [math.ceil(len((p.system or "") + p.text) / CHARS_PER_TOKEN) for p in prompts], \
        f"approximation ({CHARS_PER_TOKEN:g} characters a token)"


def _length(encoded: Any) -> int:
    # transformers 5 returns a BatchEncoding (input_ids, attention_mask) where 4 returned the id list
    ids = encoded["input_ids"] if hasattr(encoded, "keys") else encoded
    if ids and isinstance(ids[0], (list, tuple)):
        ids = ids[0]
    return len(ids)


@dataclass(frozen=True)
class PlanRow:
    """One partition's plan (see the module docstring). ``cost_usd`` is None when the model has no known price."""

    model: str
    backend: str
    items: int
    prompts: int
    samples: int
    stored: int
    to_generate: int
    input_tokens: int
    output_tokens: int
    input_basis: str
    output_basis: str
    cost_usd: float | None
    batch_cost_usd: float | None
    price_source: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_generation(spec: ModelSpec, prompts: Sequence[Prompt], *, store: Any = None) -> PlanRow:
    """The plan of asking ``prompts`` of ``spec`` (``store``: a :class:`~kgprobe.generation.store.ResponseStore`,
    whose successes are not asked again and whose answers of this model give the measured output length)."""
    params = spec.params
    unique: dict[str, Prompt] = {}
    for p in prompts:
        unique.setdefault(p.sha256(), p)
    done: set[tuple[str, int]] = set()
    measured: dict[str, float] = {}
    if store is not None:
        done = store.done_keys(spec.name, params.sha256())
        if spec.backend != "reference":  # a reference model writes no tokens: nothing to measure
            measured = _mean_output_tokens(store, spec.name, params.sha256(), list(unique.values()))
    missing = {sha: [i for i in range(params.n) if (sha, i) not in done] for sha in unique}
    todo = [unique[sha] for sha, m in missing.items() if m]
    counts, basis = count_tokens(spec, todo)
    tokens_in = sum(c * len(missing[p.sha256()]) for c, p in zip(counts, todo))
    tokens_out = 0.0
    used_measured = 0
    for p in todo:
        per = measured.get(p.template_id)
        used_measured += per is not None
        tokens_out += (per if per is not None else params.max_tokens) * len(missing[p.sha256()])
    if spec.backend == "reference":
        tokens_out, out_basis = 0.0, "reference (no tokens)"
    elif not todo:
        out_basis = "nothing to generate"
    elif used_measured == len(todo):
        out_basis = "measured mean of stored answers"
    elif used_measured:
        out_basis = "measured mean where stored, else max_tokens"
    else:
        out_basis = f"max_tokens ({params.max_tokens})"
    price = price_of(spec)
    samples = len(unique) * params.n
    to_generate = sum(len(m) for m in missing.values())
    return PlanRow(
        model=spec.name, backend=spec.backend, items=len(prompts), prompts=len(unique), samples=samples,
        stored=samples - to_generate, to_generate=to_generate, input_tokens=int(tokens_in),
        output_tokens=int(round(tokens_out)), input_basis=basis, output_basis=out_basis,
        cost_usd=None if price is None else price.cost(tokens_in, tokens_out),
        batch_cost_usd=None if price is None else price.cost(tokens_in, tokens_out, batch=True),
        price_source=None if price is None else price.source,
    )


def _mean_output_tokens(store: Any, model: str, params_sha: str, prompts: Sequence[Prompt]) -> dict[str, float]:
    """Mean completion tokens per prompt template of ``model``'s stored successes among ``prompts`` (a template with
    no counted answer is absent)."""
    table = store.latest(model, params_sha)
    if table.num_rows == 0:
        return {}
    template = {p.sha256(): p.template_id for p in prompts}
    sums: dict[str, list[float]] = {}
    for sha, tokens, error in zip(table.column("prompt_sha256").to_pylist(), table.column("tokens_out").to_pylist(),
                                  table.column("error").to_pylist()):
        if error is None and tokens is not None and sha in template:
            acc = sums.setdefault(template[sha], [0.0, 0.0])
            acc[0] += tokens
            acc[1] += 1
    return {t: total / n for t, (total, n) in sums.items()}


@dataclass(frozen=True)
class Reservation:
    """Money held for one batch of requests (:meth:`Budget.reserve`): held when ``over`` is None, else refused, and
    ``over`` is the limit the batch would pass, ``(name, max_usd, spent_usd)``. :meth:`release` once the batch's
    answers are stored."""

    over: tuple[str, float, float] | None
    ledger: Any = None
    id: str | None = None

    def release(self) -> None:
        if self.ledger is not None:
            self.ledger.release(self.id)


@dataclass(frozen=True)
class Budget:
    """Spending limits of one generation: ``limits`` are ``(name, max_usd, spent_usd)`` (a model's total over all
    runs, a run's total over all models), ``price`` estimates a batch before it is sent (None: the mean cost per
    sample so far). With a ``store`` and a scope per limit (``model:<name>``, ``run:<id>``), :meth:`reserve` holds
    across every process using that store (:class:`~kgprobe.generation.ledger.SpendLedger`); without, within this
    process only."""

    limits: tuple[tuple[str, float, float], ...]
    price: Price | None = None
    scopes: tuple[str, ...] = ()
    store: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def for_model(cls, spec: ModelSpec, store: Any, *, run_id: str = "", max_run_cost_usd: float | None = None
                  ) -> Budget | None:  # fmt: skip
        """The budget of ``spec`` in run ``run_id`` from its ``max_cost_usd`` and the run limit, with what the store
        records as spent; None when neither limit is set."""
        limits, scopes = [], []
        if spec.max_cost_usd is not None:
            limits.append((f"max_cost_usd of model {spec.name!r}", spec.max_cost_usd, store.spent(spec.name)))
            scopes.append(f"model:{spec.name}")
        if max_run_cost_usd is not None and run_id:
            limits.append(("generation.max_run_cost_usd", max_run_cost_usd, store.spent(run_id=run_id)))
            scopes.append(f"run:{run_id}")
        if not limits:
            return None
        price = price_of(spec)
        if price is None:
            from kgprobe.errors import ConfigError

            raise ConfigError(f"model {spec.name!r}: a spending limit is set but kgprobe knows no price for "
                              f"{getattr(spec.config, 'model_id', spec.name)!r}; set input_cost_per_token and "
                              "output_cost_per_token on the model entry")
        return cls(tuple(limits), price, tuple(scopes), store)

    def estimate(self, prompts: Sequence[Prompt], samples_per_prompt: int, max_tokens: int,
                 mean_cost: float | None) -> float:  # fmt: skip
        """The dollars a batch may cost: at the price with the characters-a-token approximation and max_tokens out,
        else at the mean cost per sample so far (0 before any)."""
        if self.price is not None:
            tokens_in = sum(math.ceil(len((p.system or "") + p.text) / CHARS_PER_TOKEN) for p in prompts)
            return self.price.cost(tokens_in * samples_per_prompt, max_tokens * samples_per_prompt * len(prompts)) or 0.0
        return (mean_cost or 0.0) * samples_per_prompt * len(prompts)

    def exceeded_by(self, extra: float) -> tuple[str, float, float] | None:
        """The first limit that ``extra`` more dollars would pass, as ``(name, max, spent)``; None if none."""
        for name, most, spent in self.limits:
            if spent + extra > most + 1e-12:
                return name, most, spent
        return None

    def reserve(self, usd: float, *, spent_here: float = 0.0, log: Callable[[str], None] | None = None
                ) -> Reservation:  # fmt: skip
        """Hold ``usd`` (a batch's :meth:`estimate`) before sending the batch. With a store: through the store's
        spend ledger, against what the store records as spent now plus what other runs hold for requests in flight
        (waiting while their reservations are all that is in the way). Without: against the spent amounts the
        limits were made with plus ``spent_here``, this process's spending since. The reservation's ``over`` says
        which limit the batch would pass (then nothing is held)."""
        if self.store is None or len(self.scopes) != len(self.limits):
            over = self.exceeded_by(spent_here + usd)
            return Reservation(None if over is None else (over[0], over[1], over[2] + spent_here))
        from kgprobe.generation.ledger import SpendLedger

        ledger = SpendLedger(self.store.root / "ledger")
        ticket = ledger.reserve([(name, scope, most) for (name, most, _), scope in zip(self.limits, self.scopes)],
                                usd, spent=self._spent, log=log)
        return Reservation(ticket.over, ledger if ticket.id else None, ticket.id)

    def _spent(self, scope: str) -> float:
        kind, _, value = scope.partition(":")
        return float(self.store.spent(value) if kind == "model" else self.store.spent(run_id=value))
