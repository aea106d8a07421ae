"""The Suite contract: what a benchmark provides so that generation, scoring, the leaderboard and the report can run
it without knowing it.

A suite is a package ``kgprobe/suites/<name>/`` whose :class:`Suite` object is registered in
:data:`kgprobe.suites.SUITES`. It provides:

* ``name``, ``title``, ``paper`` and ``Settings``, the pydantic model of its config section
  (``suites: {<name>: {...}}``);
* ``items(source)``: its questions as one Arrow table whose first columns are :data:`ITEM_SCHEMA`'s (``item_id``,
  ``suite``, ``task``, ``answer_format``, ``question``, ``expected``, ``group_id``, ``breakdown``, ``evidence``);
  its own columns follow. ``source`` (:class:`ItemSource`) gives it the KG, its settings, the seed and the tables
  of its own upstream assets (``upstream``: e.g. KG-FPQ's true triples and edits). Items that may outgrow memory
  (GraphEval's every triple of a large KG) may come as a :class:`pyarrow.RecordBatchReader` instead, whose batches
  never split a group: the factory writes it a batch at a time (:func:`kgprobe.suites.store.store_items`);
* ``prompts(items, context=None)``: one :class:`~kgprobe.generation.Prompt` per item, closed book, or with a per-item
  KG context (``context[item_id]``, the verbalised facts) when grounded;
* ``score(items, responses, model=, perturbation=, scoring=)``: per-sample labels (the raw text kept), per-item votes
  and metric rows in :data:`METRIC_SCHEMA`, as a :class:`SuiteScores`;
* ``headline``: the metric its leaderboard column and the report's first screen show;
* ``sampling``: its sampling defaults (KG-FPQ: 3 samples at temperature 0.6, top_p 0.9; ERBench and Drowzee:
  greedy, one sample), which a model entry or the config overrides;
* optionally ``plots(metrics)`` and ``report_section``, the name of its report template fragment.

A suite whose items are answered in one of the shared formats (:mod:`kgprobe.scoring.formats`) and scored as
"the vote equals ``expected``" needs no ``score`` of its own: :meth:`Suite.score` reads, votes and measures
accuracy overall and by every ``breakdown`` key, with Wilson intervals.

    >>> from kgprobe.suites import SUITES
    >>> SUITES["fpq"].headline
    Headline(task='discriminative', metric='fpq_accuracy_gated', label='FPQ accuracy, gated (yes/no)')
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict

from kgprobe.generation.records import ModelSpec, Prompt
from kgprobe.scoring.formats import ANSWER_FORMATS, answer_format
from kgprobe.scoring.stats import accuracy
from kgprobe.scoring.tables import breakdown_of, suite_table

__all__ = [
    "AGREEMENT_SCHEMA",
    "ITEM_COLUMNS",
    "ITEM_SCHEMA",
    "METRIC_COLUMNS",
    "METRIC_SCHEMA",
    "SAMPLE_SCHEMA",
    "VOTE_SCHEMA",
    "Headline",
    "ItemSource",
    "ItemsResult",
    "Sampling",
    "ScoringOptions",
    "Suite",
    "SuiteScores",
    "asserted_triple",
    "best_value",
    "breakdown_of",
    "check_answer_formats",
    "check_item_schema",
    "check_items",
    "content_id",
    "is_best",
    "limit_groups",
    "metric_row",
    "table",
]

_S, _I, _F, _B = pa.string(), pa.int64(), pa.float64(), pa.bool_()
_MAP = pa.map_(pa.string(), pa.string())

#: The columns every suite's items start with. ``breakdown`` holds what the suite reports by (method, hop, domain,
#: relation, rule, ...), ``evidence`` the JSON of the triples, rows, rule or formula behind the item.
ITEM_SCHEMA = pa.schema([
    ("item_id", _S), ("suite", _S), ("task", _S), ("answer_format", _S), ("question", _S), ("expected", _S),
    ("group_id", _S), ("breakdown", _MAP), ("evidence", _S),
])
ITEM_COLUMNS: tuple[str, ...] = tuple(ITEM_SCHEMA.names)

#: One row per metric and breakdown cell, the same for every suite.
METRIC_SCHEMA = pa.schema([
    ("model", _S), ("perturbation", _S), ("suite", _S), ("task", _S), ("judge", _S), ("metric", _S),
    ("breakdown", _MAP), ("higher_is_better", _B), ("n", _I), ("value", _F), ("ci_low", _F), ("ci_high", _F),
    ("interval", _S), ("item_ids", pa.list_(_S)),
])
METRIC_COLUMNS: tuple[str, ...] = tuple(METRIC_SCHEMA.names)

#: One row per (item, sample, judge) of :meth:`Suite.score`: the raw answer beside its label.
SAMPLE_SCHEMA = pa.schema([
    ("response_id", _S), ("item_id", _S), ("model", _S), ("perturbation", _S), ("sample_index", _I), ("judge", _S),
    ("text", _S), ("error", _S), ("label", _S), ("judge_text", _S), ("judge_error", _S), ("judge_response_id", _S),
])

#: One row per pair of judges: how often they agree on the items both decided, and Cohen's kappa.
AGREEMENT_SCHEMA = pa.schema([
    ("model", _S), ("perturbation", _S), ("judge_a", _S), ("judge_b", _S), ("n", _I), ("agreement", _F), ("kappa", _F),
])

#: One row per (item, judge) of :meth:`Suite.score`: the vote and whether it is what the item expects.
VOTE_SCHEMA = pa.schema([
    ("item_id", _S), ("model", _S), ("perturbation", _S), ("suite", _S), ("task", _S), ("judge", _S),
    ("labels", pa.list_(_S)), ("response_ids", pa.list_(_S)), ("vote", _S), ("expected", _S), ("correct", _B),
    ("decided", _B),
])


@dataclass(frozen=True)
class Sampling:
    """A suite's sampling defaults; a model entry's own ``n`` / ``temperature`` / ``top_p`` win over them."""

    n: int = 1
    temperature: float = 0.0
    top_p: float = 1.0

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "temperature": self.temperature, "top_p": self.top_p}


@dataclass(frozen=True)
class Headline:
    """The metric a suite is summed up by: on the leaderboard, and on the report's first screen."""

    task: str
    metric: str
    label: str
    #: The metric rows' ``judge`` the headline is read from ("" for answers read directly; "heuristic" for a
    #: suite whose free-text verdicts come from the offline claim extractor).
    judge: str = ""


@dataclass(frozen=True)
class ItemSource:
    """What :meth:`Suite.items` may read: a read-only DuckDB connection with the suite's KG schema selected (None
    for a suite without a KG), the KG's name and snapshot id, the suite's validated settings, the project seed,
    the config file's folder (for relative paths), the tables of the suite's own upstream assets, and whether to
    draw only among entities with readable names (``kgs.<kg>.require_labels``: their items are rejected anyway)."""

    con: Any
    kg: str | None
    snapshot_id: str
    settings: Any
    seed: int = 0
    config_dir: Path = Path(".")
    upstream: Mapping[str, pa.Table] = field(default_factory=dict)
    named_only: bool = False


@dataclass(frozen=True)
class ItemsResult:
    """The items, and optionally the candidates that were not written with the reason (``rejects``) and metadata
    for the UI. ``items`` may be a :class:`pyarrow.RecordBatchReader` for items that need not fit in memory (GraphEval
    on a large KG): the factory writes it batch by batch, so no batch may split a group (``group_id``)."""

    items: pa.Table | pa.RecordBatchReader
    rejects: pa.Table | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoringOptions:
    """How :meth:`Suite.score` scores one partition: the judges of open answers and how to run them, and the
    interval settings. ``judge(spec, prompts)`` runs one judge on prompts (through the response store) and returns
    ``{prompt.item_id: {"text", "error", "response_id", "logprobs"}}``; the factory passes one that reuses the run's
    loaded models."""

    judges: Sequence[ModelSpec] = ()
    judge: Callable[[ModelSpec, list[Prompt]], dict[str, dict[str, Any]]] | None = None
    confidence: float = 0.95
    resamples: int = 1000
    seed: int = 0
    log: Callable[[str], None] = lambda _msg: None
    #: The run's :class:`kgprobe.embedding.Embedder` (loaded once per run), for suites that match text by meaning;
    #: None outside a run (a suite then builds its own).
    embedder: Any = None
    #: The suite's validated settings (its config section), for suites whose scoring has options; None outside a
    #: run (a suite then uses its defaults).
    settings: Any = None


@dataclass(frozen=True)
class SuiteScores:
    """One scored partition: sample rows, vote rows, metric rows (:data:`METRIC_SCHEMA`) and judge agreement rows.
    A suite may keep extra columns in its sample and vote rows (KG-FPQ keeps premise, method, hop, gate)."""

    samples: list[dict[str, Any]]
    votes: list[dict[str, Any]]
    metrics: list[dict[str, Any]]
    agreement: list[dict[str, Any]] = field(default_factory=list)
    sample_schema: pa.Schema = SAMPLE_SCHEMA
    vote_schema: pa.Schema = VOTE_SCHEMA

    def tables(self) -> dict[str, pa.Table]:
        """The four tables as Arrow with fixed schemas (an empty table keeps its columns)."""
        return {
            "samples": table(self.samples, self.sample_schema),
            "votes": table(self.votes, self.vote_schema),
            "metrics": table(self.metrics, METRIC_SCHEMA),
            "agreement": table(self.agreement, AGREEMENT_SCHEMA),
        }


def table(rows: Iterable[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows as an Arrow table of ``schema`` (missing keys are null; a ``breakdown`` dict becomes a MAP)."""
    out = []
    for row in rows:
        r = {name: row.get(name) for name in schema.names}
        if "breakdown" in r and isinstance(r["breakdown"], Mapping):
            r["breakdown"] = sorted((str(k), str(v)) for k, v in r["breakdown"].items() if v is not None)
        out.append(r)
    return pa.Table.from_pylist(out, schema=schema)


def content_id(*parts: Any) -> str:
    """A 16-hex-digit SHA-256 of ``parts`` as JSON: an item id that is the same whenever the content is."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()[:16]


def metric_row(*, model: str, perturbation: str, suite: str, task: str, judge: str, metric: str,
               breakdown: Mapping[str, Any] | None, flags: Sequence[bool], item_ids: Sequence[str],
               higher_is_better: bool = True, confidence: float = 0.95) -> dict[str, Any]:
    """One metric row of a proportion: the share of True ``flags`` with its Wilson interval, n and items."""
    acc = accuracy(list(flags), confidence=confidence)
    return {
        "model": model, "perturbation": perturbation, "suite": suite, "task": task, "judge": judge, "metric": metric,
        "breakdown": {str(k): str(v) for k, v in (breakdown or {}).items() if v is not None},
        "higher_is_better": higher_is_better, "n": acc.n, "value": acc.value, "ci_low": acc.ci_low,
        "ci_high": acc.ci_high, "interval": acc.interval, "item_ids": list(item_ids),
    }  # fmt: skip


class _NoSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Suite:
    """Base class of a suite (see the module docstring). Subclasses set the class attributes and implement
    :meth:`items` and :meth:`prompts`; :meth:`score` has a default for shared answer formats."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    Settings: ClassVar[type[BaseModel]] = _NoSettings
    sampling: ClassVar[Sampling] = Sampling()
    headline: ClassVar[Headline] = Headline("discriminative", "accuracy", "accuracy")
    #: Asset keys of the suite's own upstream assets that :meth:`items` reads (built by its assets module).
    upstream: ClassVar[tuple[str, ...]] = ()
    #: Asset keys of the suite's own model-partitioned assets that run in the ``closed_book`` job after its answers
    #: (built by its assets module); an ``<asset>_metrics`` table of theirs, in the common metric schema, joins the
    #: leaderboard's closed-book metrics.
    closed_extras: ClassVar[tuple[str, ...]] = ()
    #: Whether the suite can be asked with KG context (a grounded lane on model x perturbation).
    groundable: ClassVar[bool] = False
    #: Whether the questions name the KG's entities and relations by their labels (``kgs.<kg>.require_labels``
    #: then rejects those that would show an id); False for a suite whose text comes from elsewhere (a database).
    names_kg_entities: ClassVar[bool] = True
    #: The item columns whose text a model or a scorer reads (the question, and a gold answer the oracle gives and a
    #: scorer compares with): ``require_labels`` rejects a group in which any of them shows an id.
    named_text_columns: ClassVar[tuple[str, ...]] = ("question",)

    def __repr__(self) -> str:
        return f"<Suite {self.name}>"

    # ---------------------------------------------------------------------------------------------------- config
    def configured(self, cfg: Any) -> bool:
        """Whether the project config enables the suite: a ``suites: {<name>: ...}`` section (or a top-level one)."""
        return cfg.has_suite(self.name)

    def load_settings(self, cfg: Any) -> Any:
        """The suite's settings (its :attr:`Settings`), as the project config validated them when it loaded."""
        return cfg.suite(self.name)

    def unscored(self, cfg: Any) -> list[str]:
        """What this config makes the suite generate and answer but never score (a sentence each, saying what to
        change): shown by ``kgprobe plan``, at the end of ``kgprobe run``, in the report's header and in
        ``kgprobe init``'s review. None by default."""
        return []

    def model_specs(self, cfg: Any, specs: Sequence[ModelSpec]) -> list[ModelSpec]:
        """``specs`` with the suite's sampling defaults (:attr:`sampling`) wherever neither the model's entry nor the
        ``generation`` section sets that parameter."""
        from dataclasses import replace

        entries = {str(m.get("name")): m for m in (cfg.sections.get("models") or []) if isinstance(m, Mapping)}
        generation = cfg.sections.get("generation") or {}
        out = []
        for spec in specs:
            explicit = set(generation) | set(entries.get(spec.name, {}))
            changes = {k: v for k, v in self.sampling.as_dict().items() if k not in explicit}
            out.append(replace(spec, params=replace(spec.params, **changes)) if changes else spec)
        return out

    def validate(self, tables: Mapping[str, pa.Table], *, name: str) -> list[Any]:
        """Data-quality outcomes of one scored partition (``samples``, ``votes``, ``metrics`` tables): the common
        metric suite, and votes and samples with their required columns."""
        from kgprobe.scoring.quality import validate_metrics, validate_votes

        return [*validate_votes(tables["votes"], name=f"{name} votes"),
                *validate_metrics(tables["metrics"], name=f"{name} metrics")]

    # ---------------------------------------------------------------------------------------------------- items
    def items(self, source: ItemSource) -> ItemsResult:
        raise NotImplementedError

    def prompts(self, items: Sequence[Mapping[str, Any]], context: Mapping[str, str] | None = None) -> list[Prompt]:
        raise NotImplementedError

    def select(self, items: Sequence[Mapping[str, Any]], *, limit: int | None = None,
               **options: Any) -> list[Mapping[str, Any]]:  # fmt: skip
        """The items a partition asks: all of them, or with ``limit`` every item of ``limit`` groups (a group is
        scored together, e.g. a TPQ and its FPQs, so a limited run keeps what its metrics need). The groups kept
        are those whose smallest item id is smallest: a spread over the whole set that does not change when the
        set grows elsewhere. ``options`` carry ``setting`` (``"closed"`` or ``"grounded"``: a suite whose items
        differ by setting, OKGQA's zero-shot vs retrieval items, filters on it), the generation section's
        ``formats`` and ``prefer``, the KG triples other suites also ask (groups asserting one come first, see
        :func:`limit_groups`)."""
        return limit_groups(items, limit, group=lambda it: str(it["group_id"]), item_id=lambda it: str(it["item_id"]),
                            prefer=options.get("prefer") or ())

    def limit(self, settings: Any, *, grounded: bool = False) -> int | None:
        """The suite's own limit on question groups per partition (``limit`` / ``grounded_limit`` in its section), or
        None to use the ``generation`` section's. A model entry's ``limit`` wins over both."""
        value = getattr(settings, "grounded_limit" if grounded else "limit", None)
        if grounded and value is None:
            value = getattr(settings, "limit", None)
        return value

    def grounded_context(self, items: Sequence[Mapping[str, Any]], subgraphs: Mapping[str, Sequence[tuple]], *,
                         entity_labels: Mapping[int, str], relation_labels: Mapping[int, str],
                         embedder: Any = None) -> dict[str, str]:  # fmt: skip
        """The KG context each item is asked with at one perturbation level: ``subgraphs`` maps a query id to its
        (perturbed) subgraph's ``(head, relation, tail)`` ids. By default the whole subgraph of the item's
        :meth:`context_query`, verbalised one fact per line; a suite that retrieves (OKGQA) overrides it."""
        from kgprobe.generation.prompts import verbalise

        return {str(it["item_id"]): verbalise(subgraphs.get(self.context_query(it), ()), entity_labels,
                                              relation_labels) for it in items}

    def cross_model_metrics(self, votes: Sequence[Mapping[str, Any]], items: Mapping[str, Mapping[str, Any]], *,
                            settings: Any = None, models: Collection[str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """Metric rows that need every model's closed-book votes at once (ERBench: questions on entities that every
        evaluated model knows), given the suite's ``settings``; ``models`` names the models whose votes count (the
        project passes the models a user named, not the ``reference`` baselines; None: all). The leaderboard adds
        them beside the per-partition rows. None by default."""
        return []

    def context_query(self, item: Mapping[str, Any]) -> str:
        """The query id whose (perturbed) subgraph is the item's KG context (groundable suites override it)."""
        raise NotImplementedError(f"suite {self.name!r} is not groundable")

    def judge_prompt(self, item: Mapping[str, Any], answer: str, response_id: str) -> Prompt:
        """The prompt a judge reads an ``open`` answer with (suites with open answers override it)."""
        raise NotImplementedError(f"suite {self.name!r} has open answers but no judge prompt")

    def wide_tables(self, metrics: Sequence[Mapping[str, Any]], *, models: Sequence[str] = (),
                    judges: Sequence[str] = ()) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
        """The suite's wide leaderboard tables by name (``leaderboard.<name>``): by default ``<suite>_closed`` and
        ``<suite>_grounded``, one row per model (and perturbation), a column block per overall metric."""
        out = {}
        for setting in ("closed", "grounded"):
            rows = suite_table(metrics, self.name, setting=setting, models=models)
            if rows:
                out[f"{self.name}_{setting}"] = rows
        return out

    def report(self, ctx: Any, metrics: Sequence[Mapping[str, Any]], *, agreement: Sequence[Mapping[str, Any]] = (),
               similarity: Sequence[Mapping[str, Any]] = ()) -> tuple[Any, dict[str, bytes]]:  # fmt: skip
        """The suite's own report section (a :class:`kgprobe.report.render.ReportSection`: a template fragment and
        its data) and its plots, from every suite's metric rows (``setting`` closed / grounded), judge agreement
        and KG similarity rows. ``(None, {})``, the default, gives the generic section: models x overall metrics."""
        return None, {}

    def plots(self, metrics: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
        """The suite's own plots (PNG bytes by key) for its report section; none by default."""
        return {}

    # ---------------------------------------------------------------------------------------------------- score
    def score(self, items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], *, model: str,
              perturbation: str = "none", scoring: ScoringOptions = ScoringOptions()) -> SuiteScores:  # fmt: skip
        """Read every answer in its item's format (open answers: each judge's verdict), vote per (item, judge), and
        measure ``accuracy`` (the vote equals ``expected``) overall and by every breakdown key, plus
        ``unknown_share``. Items without answers get no row."""
        by_id = {str(it["item_id"]): it for it in items}
        missing = sorted({str(r["item_id"]) for r in responses} - set(by_id))
        if missing:
            raise ValueError(f"{len(missing)} response(s) of model {model!r} answer items that are not among the "
                             f"{self.name} items (first: {missing[:3]}); re-materialize the responses")
        samples: list[dict[str, Any]] = []
        judged = [r for r in responses if answer_format(by_id[str(r["item_id"])]["answer_format"]).judged]
        for r in responses:
            item = by_id[str(r["item_id"])]
            fmt = answer_format(item["answer_format"])
            if fmt.judged:
                continue
            label = fmt.read(r["text"], item) if r.get("error") is None else "unknown"
            samples.append(_sample(r, perturbation, "", label))
        for spec in scoring.judges if judged else ():
            if scoring.judge is None:
                raise ValueError(f"suite {self.name}: open answers need a judge runner in ScoringOptions")
            prompts = [self.judge_prompt(by_id[str(r["item_id"])], r["text"], r["response_id"])
                       for r in judged if r.get("error") is None]
            verdicts = scoring.judge(spec, prompts)
            for r in judged:
                v = verdicts.get(r["response_id"]) if r.get("error") is None else None
                label = answer_format("open").read(v["text"], {}) if v and v.get("error") is None else "unknown"
                samples.append(_sample(r, perturbation, spec.name, label, v))
        votes = _votes(self.name, by_id, samples, model, perturbation)
        return SuiteScores(samples=samples, votes=votes,
                           metrics=self.metrics(votes, by_id, model=model, perturbation=perturbation,
                                                confidence=scoring.confidence))

    def metrics(self, votes: Sequence[Mapping[str, Any]], items: Mapping[str, Mapping[str, Any]], *, model: str,
                perturbation: str, confidence: float = 0.95) -> list[dict[str, Any]]:  # fmt: skip
        """``accuracy`` and ``unknown_share`` per (task, judge), overall and by each breakdown key's values."""
        groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for v in votes:
            groups.setdefault((v["task"], v["judge"]), []).append(v)
        out = []
        for (task, judge), rows in sorted(groups.items()):
            rows = sorted(rows, key=lambda r: r["item_id"])
            common = dict(model=model, perturbation=perturbation, suite=self.name, task=task, judge=judge,
                          confidence=confidence)
            cells: dict[tuple[tuple[str, str], ...], list[Mapping[str, Any]]] = {(): rows}
            for r in rows:
                for key, value in sorted(breakdown_of(items[r["item_id"]]).items()):
                    cells.setdefault(((key, value),), []).append(r)
            for cell, members in cells.items():
                out.append(metric_row(metric="accuracy", breakdown=dict(cell), flags=[m["correct"] for m in members],
                                      item_ids=[m["item_id"] for m in members], **common))
            out.append(metric_row(metric="unknown_share", breakdown={}, flags=[not r["decided"] for r in rows],
                                  item_ids=[r["item_id"] for r in rows], higher_is_better=False, **common))
        return out


def _sample(r: Mapping[str, Any], perturbation: str, judge: str, label: str,
            verdict: Mapping[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "response_id": r["response_id"], "item_id": str(r["item_id"]), "model": r["model"],
        "perturbation": perturbation, "sample_index": int(r["sample_index"]), "judge": judge, "text": r["text"],
        "error": r.get("error"), "label": label, "judge_text": verdict.get("text") if verdict else None,
        "judge_error": verdict.get("error") if verdict else None,
        "judge_response_id": verdict.get("response_id") if verdict else None,
    }  # fmt: skip


def _votes(suite: str, items: Mapping[str, Mapping[str, Any]], samples: Sequence[Mapping[str, Any]], model: str,
           perturbation: str) -> list[dict[str, Any]]:  # fmt: skip
    grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for s in samples:
        grouped.setdefault((s["item_id"], s["judge"]), []).append(s)
    out = []
    for (item_id, judge), rows in sorted(grouped.items()):
        rows = sorted(rows, key=lambda s: s["sample_index"])
        item = items[item_id]
        fmt = answer_format(item["answer_format"])
        labels = [s["label"] for s in rows]
        vote = fmt.vote(labels)
        # an open answer is correct when the judge finds it factual; any other when its vote is the expected label
        correct = vote == "yes" if fmt.judged else vote == str(item["expected"])
        out.append({
            "item_id": item_id, "model": model, "perturbation": perturbation, "suite": suite, "task": item["task"],
            "judge": judge, "labels": labels, "response_ids": [s["response_id"] for s in rows], "vote": vote,
            "expected": str(item["expected"]), "correct": correct, "decided": vote != "unknown",
        })
    return out


def check_items(suite: str, items: pa.Table) -> None:
    """Raise ValueError unless ``items`` starts with :data:`ITEM_COLUMNS` of the right types, every answer format
    is known and every item id is unique; the factory calls it on every suite's items."""
    check_item_schema(suite, items.schema)
    check_answer_formats(suite, items)
    # counted in Arrow: a Python string per item id is gigabytes for the millions of items of a large KG
    distinct = pc.count_distinct(items.column("item_id"), mode="all").as_py()
    if distinct != items.num_rows:
        raise ValueError(f"suite {suite}: item ids are not unique ({items.num_rows - distinct} repeated)")


def check_item_schema(suite: str, schema: pa.Schema) -> None:
    """The part of :func:`check_items` that reads only the schema (for items that come as a stream)."""
    names = schema.names[: len(ITEM_COLUMNS)]
    if tuple(names) != ITEM_COLUMNS:
        raise ValueError(f"suite {suite}: items must start with the columns {list(ITEM_COLUMNS)}, got {names}")
    for f in ITEM_SCHEMA:
        if schema.field(f.name).type != f.type:
            raise ValueError(f"suite {suite}: item column {f.name} must be {f.type}, got {schema.field(f.name).type}")


def check_answer_formats(suite: str, items: pa.Table | pa.RecordBatch) -> None:
    """The part of :func:`check_items` that any batch of items can check alone: every answer format is known."""
    formats = set(pc.unique(items.column("answer_format")).to_pylist())
    if not formats <= set(ANSWER_FORMATS):
        raise ValueError(f"suite {suite}: unknown answer format(s) {sorted(formats - set(ANSWER_FORMATS))}")


def asserts(item: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """The true KG triple an item tests, ``(head label, relation key, tail label)``, from ``"asserts"`` in its
    evidence JSON (None when it asserts none)."""
    try:
        evidence = json.loads(item.get("evidence") or "{}")
    except (TypeError, ValueError):
        return None
    triple = evidence.get("asserts") if isinstance(evidence, dict) else None
    if isinstance(triple, (list, tuple)) and len(triple) == 3 and all(isinstance(x, str) for x in triple):
        return (triple[0], triple[1], triple[2])
    return None


def asserted_triple(item: Mapping[str, Any]) -> str | None:
    """:func:`asserts` as one string, ``head label|relation key|tail label``."""
    triple = asserts(item)
    return "|".join(triple) if triple is not None else None


def limit_groups(items: Iterable[Mapping[str, Any]], limit: int | None, *, group: Callable[[Mapping[str, Any]], Any],
                 item_id: Callable[[Mapping[str, Any]], str], unit: str = "item groups",
                 prefer: Iterable[str] = ()) -> list[Mapping[str, Any]]:  # fmt: skip
    """All ``items``, or with ``limit`` every item of the ``limit`` groups (``group(item)``) whose smallest item id
    is smallest: whole groups, so what is scored together stays together, and a spread over the whole set that
    does not change when the set grows elsewhere. ``unit`` names the groups in the error for a bad limit.

    ``prefer`` (triples, ``head|relation|tail``) puts first the groups with an item that asserts one of them
    (:func:`asserted_triple`), ordered by a hash of the triple: every suite ranks the same triple alike, so limited
    slices of different suites pick the same shared facts and a model's answers on them can be compared."""
    items = list(items)
    if limit is None:
        return items
    if int(limit) < 1:
        raise ValueError(f"limit must be a positive number of {unit}, got {limit!r}")
    wanted = frozenset(prefer)
    first: dict[Any, str] = {}
    ranked: dict[Any, str] = {}
    for it in items:
        key, i = group(it), item_id(it)
        first[key] = min(first.get(key, i), i)
        triple = asserted_triple(it) if wanted else None
        if triple is not None and triple in wanted:
            rank = hashlib.sha256(triple.encode()).hexdigest()
            ranked[key] = min(ranked.get(key, rank), rank)
    order = sorted(first, key=lambda k: (k not in ranked, ranked.get(k, ""), first[k]))
    keep = set(order[: int(limit)])
    return [it for it in items if group(it) in keep]


def best_value(metric: Mapping[str, Any]) -> float:
    """The best value a metric row can take: 1.0 when higher is better, else 0.0 (the oracle's target)."""
    return 1.0 if metric["higher_is_better"] else 0.0


def is_best(metric: Mapping[str, Any]) -> bool:
    """Whether a metric row is at its best value (rows with n == 0 or an undefined value count as best)."""
    value = metric.get("value")
    if not metric.get("n") or value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    return math.isclose(float(value), best_value(metric), abs_tol=1e-12)
