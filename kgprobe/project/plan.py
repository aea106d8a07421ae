"""What a partition asks, and the plan of a whole run before it is paid for (``kgprobe plan``).

:func:`partition_prompts` is the one place that turns a suite's stored items into the prompts of one partition
(closed book for a model, or grounded at a perturbation level): the suite's selection and limit, then its prompts
with the KG context of that level. The generation assets ask it, and so does :func:`plan_run`, so the plan counts
exactly what a run would send.

:func:`plan_run` gives one :class:`~kgprobe.generation.cost.PlanRow` per model x suite (x perturbation for grounded
suites), counting only what the response store does not hold yet.

    >>> rows = plan_run(load_config("examples/sample.yaml"))
    >>> print(format_plan(rows))
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgprobe import warehouse as wh
from kgprobe.report.safe_text import console_text
from kgprobe.generation.records import ModelSpec, Prompt

__all__ = ["PartitionPrompts", "format_plan", "partition_limit", "partition_prompts", "perturbed_subgraphs", "plan_run",
           "shared_triples"]


def partition_limit(cfg: Any, suite: Any, spec: ModelSpec, *, grounded: bool) -> int | None:
    """Question groups ``spec`` answers per partition: the model entry's limit, else the suite's, else the
    generation section's (None: all)."""
    from kgprobe.config import generation_settings

    if spec.limit is not None:
        return spec.limit
    own = suite.limit(suite.load_settings(cfg), grounded=grounded)
    return own if own is not None else generation_settings(cfg)["grounded_limit" if grounded else "limit"]


@dataclass(frozen=True)
class PartitionPrompts:
    """One partition's items and prompts; grounded ones also the context each item saw and its query id."""

    items: list[Mapping[str, Any]]
    prompts: list[Prompt]
    context: dict[str, str] = field(default_factory=dict)
    context_query: dict[str, str] = field(default_factory=dict)


def partition_prompts(cfg: Any, suite: Any, spec: ModelSpec, items: Sequence[Mapping[str, Any]], *,
                      subgraphs: Mapping[str, Sequence[tuple]] | None = None,
                      labels: tuple[Mapping[int, str], Mapping[int, str]] | None = None,
                      embedder: Any = None) -> PartitionPrompts:  # fmt: skip
    """The prompts ``spec`` is asked in one partition of ``suite``: closed book when ``subgraphs`` is None, else
    grounded in the (perturbed) ``subgraphs`` of that level (query id -> ``(head, relation, tail)`` ids), verbalised
    with ``labels`` (entity and relation labels by id)."""
    from kgprobe.config import generation_settings

    grounded = subgraphs is not None
    limit = partition_limit(cfg, suite, spec, grounded=grounded)
    # a limited slice asks first the KG facts other suites ask too, so the consistency view has shared facts
    prefer = shared_triples(cfg) if limit is not None else frozenset()
    chosen = suite.select(list(items), limit=limit, formats=generation_settings(cfg)["formats"],
                          setting="grounded" if grounded else "closed", prefer=prefer)
    if not grounded:
        return PartitionPrompts(chosen, suite.prompts(chosen))
    ent, rel = labels or ({}, {})
    context = suite.grounded_context(chosen, subgraphs, entity_labels=ent, relation_labels=rel, embedder=embedder)
    return PartitionPrompts(chosen, suite.prompts(chosen, context=context), context,
                            {str(it["item_id"]): suite.context_query(it) for it in chosen})


def shared_triples(cfg: Any) -> frozenset[str]:
    """The KG triples (``head|relation|tail``) that items of two or more enabled suites assert, from the items
    written to the warehouse (a suite whose items are not written yet counts for none)."""
    from kgprobe.suites import SUITES

    root = Path(cfg.warehouse).parent
    stamp = []
    for suite in SUITES.values():
        if suite.configured(cfg):
            folder = wh.partition_dir(root, f"{suite.name}_items")
            files = sorted(folder.glob("*.parquet")) if folder.exists() else []
            stamp.append((suite.name, tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files)))
    return _shared_triples(str(root), tuple(stamp))


@functools.lru_cache(maxsize=4)
def _shared_triples(root: str, stamp: tuple) -> frozenset[str]:
    from kgprobe.suites.base import asserted_triple

    seen: dict[str, set[str]] = {}
    for name, files in stamp:
        if not files:
            continue
        evidence = wh.read_partition(root, f"{name}_items").column("evidence").to_pylist()
        for triple in {asserted_triple({"evidence": e}) for e in evidence} - {None}:
            seen.setdefault(triple, set()).add(name)
    return frozenset(t for t, names in seen.items() if len(names) >= 2)


def perturbed_subgraphs(root: str | Path, perturbation: str) -> dict[str, list[tuple]]:
    """The subgraphs of one perturbation level as the perturbation stage wrote them: query id -> triples."""
    rows = wh.read_partition(root, "perturbed_subgraphs", {"perturbation": perturbation}) \
        .select(["query_id", "triples"]).to_pylist()
    return {r["query_id"]: [(t["head"], t["relation"], t["tail"]) for t in r["triples"]] for r in rows}


def plan_run(cfg: Any, *, embedder: Any = None, log: Any = None) -> list[dict[str, Any]]:
    """The plan of every partition the config's main job would generate: a row per model x suite (closed book) and
    per grounded model x suite x perturbation level, each with the :class:`~kgprobe.generation.cost.PlanRow` fields
    and ``suite``, ``setting``, ``perturbation``, ``note``. A suite whose items are not written yet, or a level not
    perturbed yet, gets a row that says which job to run first (nothing is generated to make a plan)."""
    from kgprobe.config import generation_models, perturbation_settings, subgraph_settings
    from kgprobe.generation.cost import plan_generation
    from kgprobe.stages import needed_stages
    from kgprobe.generation.store import ResponseStore
    from kgprobe.suites import SUITES

    root = Path(cfg.warehouse).parent
    store = ResponseStore(root / "response_store")
    suites = [s for s in SUITES.values() if s.configured(cfg)]
    stages = needed_stages(cfg)
    levels = list(perturbation_settings(cfg).keys) if stages.grounded else []
    rows: list[dict[str, Any]] = []
    labels = None
    for suite in suites:
        items_dir = wh.partition_dir(root, f"{suite.name}_items")
        specs = suite.model_specs(cfg, generation_models(cfg))
        if not items_dir.exists():
            rows += [_missing(spec, suite.name, "closed", "none", f"no items yet: run `kgprobe run{config_flag(cfg)} --job "
                                                                  f"{suite.name}_questions` (no model is called)")
                     for spec in specs]
            continue
        items = wh.read_partition(root, f"{suite.name}_items").to_pylist()
        for spec in specs:
            part = partition_prompts(cfg, suite, spec, items)
            rows.append({"suite": suite.name, "setting": "closed", "perturbation": "none", "note": "",
                         **plan_generation(spec, part.prompts, store=store).as_dict()})
        if suite.name not in stages.grounded_suites:
            continue
        for spec in specs:
            if spec.name not in stages.grounded_models:
                continue
            for level in levels:
                if not wh.partition_dir(root, "perturbed_subgraphs", {"perturbation": level}).exists():
                    rows.append(_missing(spec, suite.name, "grounded", level,
                                         f"level not perturbed yet: run `kgprobe run{config_flag(cfg)} --job perturb "
                                         f"--partition {level}`"))
                    continue
                if labels is None:
                    labels = _labels(cfg, subgraph_settings(cfg).kg)
                part = partition_prompts(cfg, suite, spec, items, subgraphs=perturbed_subgraphs(root, level),
                                         labels=labels, embedder=embedder)
                rows.append({"suite": suite.name, "setting": "grounded", "perturbation": level, "note": "",
                             **plan_generation(spec, part.prompts, store=store).as_dict()})
        if log:
            log(f"planned {suite.name}")
    return rows


def weights_problem(spec: ModelSpec) -> str | None:
    """Why a local model (``transformers`` or ``vllm``) could not load its weights on this machine, in one sentence
    saying what to do; None when they are there (or the model is not local). Checked without loading anything: the
    built-in SmolLM2's package, a path the model names, a hub id in the local Hugging Face cache."""
    if spec.backend not in ("transformers", "vllm"):
        return None
    from kgprobe.generation.backends.hf import SMOLLM2_ID, local_weights, smollm2_gguf
    from kgprobe.generation.records import BackendError

    model_id = str(getattr(spec.config, "model_id", "") or "")
    if model_id == SMOLLM2_ID:
        try:
            smollm2_gguf()
        except BackendError as exc:
            return f"{spec.name}: {exc}"
        return None
    path = local_weights(model_id)
    if path is not None:
        return None if path.exists() else f"{spec.name}: no weights at {path}; fix model_id or copy them there"
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # no hub client: nothing to check against
        return None
    cache_dir = getattr(spec.config, "cache_dir", None) if spec.backend == "transformers" else None
    found = try_to_load_from_cache(model_id, "config.json", cache_dir=cache_dir)
    if isinstance(found, str):
        return None
    return (f"{spec.name}: {model_id} is not in the local Hugging Face cache (models load with local_files_only); "
            f"download it first (huggingface-cli download {model_id}) or name a folder of weights")


def measured_rate(store: Any, model: str) -> tuple[float, int] | None:
    """(samples per second, samples timed) of ``model``'s stored answers: a backend call's samples share its
    latency, so each (run, latency) is one call; None when no answer is stored with a latency."""
    table = store.latest(model)
    if table.num_rows == 0:
        return None
    calls: dict[tuple[str, float], int] = {}
    for run, latency, error in zip(table.column("run_id").to_pylist(), table.column("latency_s").to_pylist(),
                                   table.column("error").to_pylist()):
        if error is None and latency:
            calls[(run, latency)] = calls.get((run, latency), 0) + 1
    seconds = sum(latency for _, latency in calls)
    samples = sum(calls.values())
    return (samples / seconds, samples) if seconds > 0 else None


def time_estimates(cfg: Any, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """A line per local model (``transformers``, ``vllm``) with samples to generate: how long they should take at
    the rate its stored answers were made (on this machine, as far as the store knows), or that no earlier answer
    times it."""
    from kgprobe.generation.store import ResponseStore

    store = ResponseStore(Path(cfg.warehouse).parent / "response_store")
    todo: dict[str, int] = {}
    for r in rows:
        if not r.get("note") and r.get("backend") in ("transformers", "vllm") and r.get("to_generate"):
            todo[r["model"]] = todo.get(r["model"], 0) + int(r["to_generate"])
    out = []
    for model, samples in todo.items():
        rate = measured_rate(store, model)
        if rate is None:
            out.append(f"{model}: {samples:,} samples to generate; no earlier answer of it is stored to time them "
                       "(run a small --limit first)")
            continue
        per_second, timed = rate
        minutes = samples / per_second / 60
        out.append(f"{model}: {samples:,} samples to generate, about {minutes:,.0f} min at {per_second:.2f} "
                   f"samples/s (the rate of its {timed:,} stored answers)")
    return out


def unscored(cfg: Any) -> list[str]:
    """What the config makes some enabled suite generate and answer but never score (a sentence each, saying what
    to change; :meth:`kgprobe.suites.base.Suite.unscored`)."""
    from kgprobe.suites import SUITES

    return [note for s in SUITES.values() if s.configured(cfg) for note in s.unscored(cfg)]


def config_flag(cfg: Any) -> str:
    """`` --config <file>`` for the commands a plan suggests, so that they run on the config the plan read."""
    path = getattr(cfg, "path", None)
    return f" --config {shlex.quote(str(path))}" if path is not None and str(path) != "<config>" else ""


def _labels(cfg: Any, kg: str) -> tuple[dict[int, str], dict[int, str]]:
    from kgprobe.kg.stats import labels
    from kgprobe.warehouse import connect

    with connect(cfg.warehouse, read_only=True) as con:  # waits while a run writes the warehouse
        return labels(con, kg)


def _missing(spec: ModelSpec, suite: str, setting: str, perturbation: str, note: str) -> dict[str, Any]:
    return {"suite": suite, "setting": setting, "perturbation": perturbation, "note": note, "model": spec.name,
            "backend": spec.backend, "items": None, "prompts": None, "samples": None, "stored": None,
            "to_generate": None, "input_tokens": None, "output_tokens": None, "input_basis": None,
            "output_basis": None, "cost_usd": None, "batch_cost_usd": None, "price_source": None}


def _money(x: float | None) -> str:
    return "-" if x is None else f"${x:,.4f}"


def format_plan(rows: Sequence[Mapping[str, Any]]) -> str:
    """The plan as a fixed-width table with totals per model, and the counting bases as footnotes."""
    head = ("model", "suite", "setting", "level", "items", "prompts", "samples", "stored", "to do", "tokens in",
            "tokens out", "cost", "batch cost")
    body = []
    for r in rows:
        names = tuple(console_text(r[k]) for k in ("model", "suite", "setting", "perturbation"))
        if r.get("note"):
            body.append((*names, console_text(r["note"])))
            continue
        body.append((*names, *(f"{r[k]:,}" for k in (
            "items", "prompts", "samples", "stored", "to_generate", "input_tokens", "output_tokens")),
            _money(r["cost_usd"]), _money(r["batch_cost_usd"])))
    totals: dict[str, list[float | None]] = {}
    for r in rows:
        if r.get("note"):
            continue
        t = totals.setdefault(r["model"], [0, 0, 0, 0.0, 0.0])
        t[0] += r["to_generate"]
        t[1] += r["input_tokens"]
        t[2] += r["output_tokens"]
        t[3] = None if t[3] is None or r["cost_usd"] is None else t[3] + r["cost_usd"]
        t[4] = None if t[4] is None or r["batch_cost_usd"] is None else t[4] + r["batch_cost_usd"]
    for model, (todo, tin, tout, cost, batch) in totals.items():
        body.append((console_text(model), "TOTAL", "", "", "", "", "", "", f"{int(todo):,}", f"{int(tin):,}", f"{int(tout):,}",
                     _money(cost), _money(batch)))
    widths = [max(len(str(x[i])) for x in [head, *[b for b in body if len(b) == len(head)]]) for i in range(len(head))]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(head, widths))]
    lines.append("  ".join("-" * w for w in widths))
    for b in body:
        if len(b) < len(head):
            lines.append("  ".join(str(x).ljust(w) for x, w in zip(b[:4], widths)) + "  " + b[4])
        else:
            lines.append("  ".join(str(x).rjust(w) if i >= 4 else str(x).ljust(w)
                                   for i, (x, w) in enumerate(zip(b, widths))))
    bases = sorted({(r["model"], r["input_basis"], r["output_basis"], r["price_source"]) for r in rows
                    if not r.get("note")})
    lines.append("")
    for model, ib, ob, ps in bases:
        lines.append(console_text(f"{model}: input tokens by {ib}; output tokens from {ob}; price from "
                                  f"{ps or 'nowhere (unknown)'}"))
    return "\n".join(lines)
