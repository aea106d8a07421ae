"""GraphEval as a :class:`~kgprobe.suites.base.Suite`: statements from KG triples and verified negatives, the
Table 6 prompt, the paper's three metrics (formula 2) with bootstrap intervals over positives, under the paper's
protocol (``profile: paper``, task ``statement``, the headline) or kgprobe's stricter one (task
``statement_kgprobe``), or both (``compare_profile``); see :mod:`.profiles`.

Items (:func:`~kgprobe.suites.grapheval.statements.build_statements`): one ``true_false_idk`` item per statement,
task ``statement``; a positive and its negatives share ``group_id``; ``breakdown`` holds the group's relation
(label), head type, tail type and degree bucket, and the item's polarity and corrupted part; ``evidence`` the KG
snapshot, the statement's triple (keys and labels), its positive, the template and its source, the seed and the
attempt. Own columns follow (polarity, corrupted, keys, labels, template source, attempt, negatives in the group,
mean degree).

Scores (:mod:`~kgprobe.suites.grapheval.scoring`): Correctness, Truthfulness and Informativeness per formula (2),
averaged over positives, overall and by relation, head type, tail type and degree bucket, each with a seeded
bootstrap interval; the unreadable share and the plain accuracy beside them.

The hidden-state judge (``judge: hidden_state``) runs as its own asset after the responses
(:mod:`kgprobe.suites.grapheval.judge`); it is off by default.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgprobe.errors import ConfigError
from kgprobe.kg.splits import missing_splits, snapshot_sources
from kgprobe.kg.readable import LABEL_CLEANUPS
from kgprobe.kg.verbalise import multi_valued, propose_templates, review_rows
from kgprobe.generation.records import Prompt
from kgprobe.suites.base import (
    Headline,
    ItemSource,
    ItemsResult,
    Sampling,
    ScoringOptions,
    Suite,
    SuiteScores,
)
from kgprobe.suites.grapheval.profiles import PROFILES
from kgprobe.suites.grapheval.prompts import statement_prompt
from kgprobe.suites.grapheval.readability import check_readability, take_rows
from kgprobe.suites.grapheval.scoring import score_statements
from kgprobe.suites.grapheval.statements import (
    ItemStream,
    StatementOptions,
    StatementSet,
    build_statements,
    item_schema,
)
from kgprobe.suites.grapheval.templates import load_template_file
from kgprobe.suites.settings import InputFile, confined_model_id

__all__ = ["GraphEvalSettings", "GraphEvalSuite", "HiddenJudgeSettings", "TemplateCoverageError", "statement_options",
           "template_review"]


class HiddenJudgeSettings(BaseModel):
    """The hidden-state judge (the paper's §3.2), one per profile: which model's hidden states, which network, how
    the labelled statements are split, the network's training (the paper: 100 epochs, batch 8, Adam 1e-4), how
    many statements it labels and on how many generation is timed for the speed-up."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    substitute_model: str | None = None
    """A smaller model of the same family whose hidden states stand in (a transformers model id, a folder or
    gguf:<file>); None: the evaluated model's own."""
    train_share: float = Field(0.7, gt=0, lt=1)
    """Share of the labelled statements (answered by the model) the judge trains on; the rest is held back."""
    network: Literal["paper", "relu256"] = "paper"
    """paper: the released code's network (Linear(d, d), GELU, LayerNorm, a 3-way head chosen by the statement's
    polarity); relu256: d -> 256 with a ReLU, then the head (kgprobe's earlier judge)."""
    epochs: int = Field(100, ge=1)
    """Passes of the judge's training over its training statements (the paper: 100)."""
    batch_size: int = Field(8, ge=1)
    """Statements per training step (the paper: 8)."""
    lr: float = Field(1e-4, gt=0)
    """Adam's learning rate (the paper: 1e-4)."""
    max_statements: int | None = Field(2000, ge=1)
    """Statements the judge labels (whole groups, spread as the lane's limit is); None: every item."""
    timing_statements: int = Field(16, ge=1)
    """Answered prompts re-generated to time generation against the judge's forward pass."""
    forward_batch_size: int = Field(16, ge=1)
    """Prompts per forward pass when the hidden states are read."""
    num_threads: int | None = Field(None, ge=1)
    """Not read at present: the hidden states are computed with the model entry's own settings (its
    ``num_threads`` included), and the judge trains on one thread."""

    @field_validator("substitute_model")
    @classmethod
    def _confined(cls, value: str | None, info: ValidationInfo) -> str | None:
        return confined_model_id(value, info)


class GraphEvalSettings(BaseModel):
    """The ``suites.grapheval`` section. Paths are relative to the config file."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    kg: str | None = None
    """The KG to read (default: the first of ``kgs``)."""
    profile: Literal["paper", "kgprobe"] = "paper"
    """The protocol of the statements (:mod:`kgprobe.suites.grapheval.profiles`): paper (the headline) or kgprobe's
    stricter variant."""
    compare_profile: Literal["paper", "kgprobe"] | None = None
    """Also build, ask and score the other profile's statements (its own task), to report both side by side."""
    per_relation: int | None = Field(50, ge=1)
    """kgprobe profile: positives per relation (a seeded sample); null: every triple of the KG."""
    positives: int | None = Field(None, ge=1)
    """A uniform seeded sample of this many positive triples (after per_relation in the kgprobe profile); null:
    every triple (the paper)."""
    negatives: int | None = Field(None, ge=1)
    """k: negatives per positive; null: the profile's (paper 1, kgprobe 3)."""
    corrupt: list[Literal["head", "relation", "tail"]] = Field(default_factory=lambda: ["head", "relation", "tail"])
    """The parts a negative may replace, drawn uniformly per negative."""
    corruption: Literal["typed", "uniform"] | None = None
    """typed: a replacement of the same type (harder negatives); uniform: any entity or relation (the paper); null:
    the profile's (paper uniform, kgprobe typed)."""
    symmetric_reversals: float | None = Field(None, gt=0, le=1)
    """Reject a negative that reverses a KG triple of a relation at least this share of whose triples have their
    reverse in the KG (mostly symmetric: "B is married to A"); null: no such check."""
    max_attempts: int = Field(10, ge=1)
    """Draws per negative slot before it is given up (rejected draws are counted with their reason)."""
    templates: InputFile | None = None
    """A YAML / JSON mapping relation key -> statement template ``{head} ... {tail}.``; wins over the others."""
    dbpedia_templates: InputFile | None = None
    """GraphEval's DBpedia templates (its answers.json: relation name -> template)."""
    dbpedia_match: Literal["iri", "local_name"] = "iri"
    """iri: DBpedia relation keys only; local_name: also the last segment of simple keys (every such match is
    listed in the items' metadata for review)."""
    propose_templates: bool = True
    """Relations without a config or DBpedia template get one proposed from their key and label
    (:func:`kgprobe.kg.verbalise.propose_template`), listed with example statements for review."""
    max_fallback_share: float = Field(0.05, ge=0, le=1)
    """The items asset fails when more than this share of statements use the fallback ``{head} <label> {tail}.``."""
    templated_only: bool = False
    """Ask about, and corrupt relations with, only the relations the `templates` file names: every statement then
    reads as a template someone reviewed. `kgprobe init` sets it (the relations its review leaves out stay out of
    the negatives too); false: every relation, with proposed or fallback templates where the file has none."""
    dedup: bool | None = None
    """Whether a positive statement whose text equals another's (two triples verbalised alike) is asked once (the
    other dropped with its reason); null: the profile's (paper: kept, as the paper keeps every triple; kgprobe:
    dropped)."""
    label_cleanup: list[Literal["locale_suffix", "stray_tokens", "unicode_escapes"]] = Field(
        default_factory=lambda: list(LABEL_CLEANUPS))
    """Clean-ups of the entity labels statements show (:func:`kgprobe.kg.readable.clean_label`): a trailing
    locale suffix ("Actor-GB"), a stray "s" of a lost apostrophe, escaped unicode; [] keeps labels as they are."""
    readability_sample: int = Field(200, ge=1)
    """Statements (a seeded sample) the readability gate checks (:mod:`kgprobe.suites.grapheval.readability`)."""
    max_unreadable_share: float = Field(0.05, ge=0, le=1)
    """The items asset fails when more than this share of the sampled statements (those with readable labels)
    fail a readability check (doubled words, a dangling "s", "is the <verb>", an unresolved id)."""
    stream_items_above: int | None = Field(1_000_000, ge=0)
    """More items than this (statements: two a triple in the paper profile, at about 790 bytes each) are handed to
    the warehouse a chunk at a time as they are built, never held whole (every triple of a 20M-triple KG would be
    ~30 GB); null: always one table in memory."""
    judge: Literal["none", "hidden_state"] = "none"
    """hidden_state: also label the statements with the hidden-state judge (an asset after the responses)."""
    hidden_judge: HiddenJudgeSettings = Field(default_factory=HiddenJudgeSettings)
    """Options of the hidden-state judge (read when ``judge`` is hidden_state)."""

    @field_validator("templates", "dbpedia_templates")
    @classmethod
    def _readable_templates(cls, value: str | None, info: ValidationInfo) -> str | None:
        # loaded from a config file (InputFile has checked that it exists), the file is read now, so a malformed one
        # is reported at its key when the config loads
        base = info.context.get("base") if isinstance(info.context, dict) else None
        if value is None or base is None:
            return value
        path = Path(value).expanduser()
        try:
            load_template_file(path if path.is_absolute() else Path(base) / path, role=info.field_name or "templates")
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc
        return value


def statement_options(settings: GraphEvalSettings, config_dir: Path = Path("."), *, profile: str | None = None,
                      proposed: Mapping[str, str] | None = None) -> StatementOptions:  # fmt: skip
    """The :class:`StatementOptions` of validated settings for ``profile`` (default: the settings' own), template
    files read (relative to ``config_dir``); ``proposed``: proposed templates by relation key."""
    prof = PROFILES[profile or settings.profile]
    def read(value: str | None, role: str) -> dict[str, str]:
        if value is None:
            return {}
        path = Path(value)
        return load_template_file(path if path.is_absolute() else config_dir / path, role=role)

    return StatementOptions(per_relation=settings.per_relation if prof.per_relation_cap else None,
                            positives=settings.positives, negatives=settings.negatives or prof.negatives,
                            parts=tuple(settings.corrupt), corruption=settings.corruption or prof.corruption,
                            max_attempts=settings.max_attempts, templates=read(settings.templates, "templates"),
                            dbpedia=read(settings.dbpedia_templates, "dbpedia_templates"),
                            dbpedia_match=settings.dbpedia_match, symmetric_reversals=settings.symmetric_reversals,
                            task=prof.task, proposed=dict(proposed or {}),
                            label_cleanup=tuple(settings.label_cleanup),
                            dedup=prof.dedup if settings.dedup is None else settings.dedup,
                            templated_only=settings.templated_only)


def items_metadata(result: StatementSet) -> dict[str, Any]:
    """What the items asset shows: counts, rejected negatives by reason and part, template sources, the relations
    on the fallback template (to write better ones for), the share of statements on it, and the DBpedia templates
    matched by a key's last segment (to review)."""
    m = result.metadata
    n = result.items.num_rows  # counted in Arrow: a Python string per statement is gigabytes on a large KG
    if isinstance(result.items, ItemStream):  # counted from the relation of each row, none built
        by_relation = result.items.rows_by_relation
        fallback = sum(int(by_relation[t.relation]) for t in result.templates
                       if t.source == "fallback" and t.relation < len(by_relation))
    else:
        fallback = (pc.sum(pc.equal(result.items.column("template_source"), "fallback")).as_py() or 0) if n else 0
    return {
        "fallback_statement_share": fallback / n if n else 0.0,
        "local_name_matches": list(m.get("local_name_matches", [])),
        "symmetric_relations": m.get("symmetric_relations", 0),
        "positives": m["positives_unique"] - m["positives_without_negatives"],
        "negatives": m["negatives"],
        "positives_with_fewer_negatives": m["positives_partial"],
        "positives_without_negatives": m["positives_without_negatives"],
        "duplicate_statements_dropped": m["rejected_by_reason"].get("duplicate_statement", 0),
        "negative_attempts": m["attempts"],
        "rejected_by_reason": [{"reason": r, "count": n} for r, n in sorted(m["rejected_by_reason"].items())],
        "rejected_by_reason_and_part": list(result.reject_counts),
        "template_sources": [{"source": s, "relations": n} for s, n in m["template_sources"].items()],
        "fallback_relations": list(m["fallback_relations"]),
        "dbpedia_templates_skipped": len(m["dbpedia_templates_skipped"]),
        "options": json.dumps(m["options"]),
    }


def template_review(result: StatementSet, *, per_relation: int = 2) -> list[dict[str, str]]:
    """Every relation's template with its source and up to ``per_relation`` statements rendered on real triples
    (positives of ``result``), proposed and fallback ones first: what a person reviews before trusting them."""
    examples: dict[str, list[tuple[str, str]]] = {}
    # the first per_relation positives of each relation, in table order, found with NumPy: only those rows are read
    # into Python (a Python string per statement is gigabytes on a large KG)
    # (batch by batch: Arrow's take on a chunked column would first join its chunks)
    # (an ItemStream knows its positives' rows and relations without building a row)
    items = result.items
    if isinstance(items, ItemStream):
        positive, codes = items.positive_rows()
    else:
        positive, keys, first = [np.zeros(0, np.int64)], [pa.array([], pa.string())], 0
        for batch in items.select(["polarity", "relation_key"]).to_batches():
            rows = np.flatnonzero(pc.equal(batch.column(0), "positive").to_numpy(zero_copy_only=False))
            positive.append(rows + first)
            keys.append(batch.column(1).take(pa.array(rows, pa.int64())))
            first += batch.num_rows
        positive = np.concatenate(positive)
        enc = pc.dictionary_encode(pa.chunked_array(keys, pa.string())).combine_chunks()
        codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    order = np.argsort(codes, kind="stable")
    rank = np.empty(len(codes), np.int64)
    rank[order] = np.arange(len(codes)) - np.searchsorted(codes[order], codes[order])
    chosen = np.flatnonzero(rank < max(per_relation, 1))  # the first of each relation names it even when 0 are asked
    cols = take_rows(items, positive[chosen]).select(["relation_key", "head_label", "tail_label"]).to_pydict()
    for i, key, h, t in zip(rank[chosen], cols["relation_key"], cols["head_label"], cols["tail_label"], strict=True):
        examples.setdefault(key, [])
        if i < per_relation:
            examples[key].append((h, t))
    templates = {t.key: t.template for t in result.templates}
    sources = {t.key: t.source for t in result.templates}
    rows = review_rows(templates, examples, sources=sources, per_relation=per_relation)
    order = {"fallback": 0, "proposed": 1, "dbpedia": 2, "config": 3}
    return sorted(rows, key=lambda r: (order.get(r["source"], 4), r["relation_key"]))


class TemplateCoverageError(ConfigError):
    """Too many statements use the fallback template: the relations need readable templates."""


class GraphEvalSuite(Suite):
    """GraphEval (Liu et al.): is a statement from the KG (or a verified-false corruption of one) true, false, or
    does the model not know?"""

    name = "grapheval"
    title = "GraphEval: true / false / I-don't-know statements"
    paper = "Liu et al., Evaluating the Factuality of Large Language Models using Large-Scale Knowledge Graphs"
    Settings = GraphEvalSettings
    # the paper asks 3 times and takes the majority; Hugging Face's pipeline defaults of the chat models it used
    sampling = Sampling(n=3, temperature=0.6, top_p=0.9)
    headline = Headline("statement", "correctness", "Correctness (formula 2, paper profile)")
    # the hidden-state judge (assets/grapheval.py): empty partitions unless judge is hidden_state
    closed_extras = ("grapheval_hidden_judge",)

    def items(self, source: ItemSource) -> ItemsResult:
        """Statements and verified negatives of the KG (see the module docstring), with every rejected candidate."""
        settings = source.settings if source.settings is not None else GraphEvalSettings()
        relations = source.con.execute("SELECT key, label FROM relations ORDER BY id").fetchall()
        many = multi_valued(source.con) if settings.propose_templates else frozenset()
        proposed = ({k: p.template for k, p in propose_templates(relations, many=many).items()
                     if p.template is not None} if settings.propose_templates else {})
        profiles = [settings.profile] + ([settings.compare_profile] if settings.compare_profile not in
                                         (None, settings.profile) else [])
        # built as streams: the counts, checks and review below build only the rows they read
        results = {p: build_statements(source.con, statement_options(settings, source.config_dir, profile=p,
                                                                     proposed=proposed),
                                       snapshot_id=source.snapshot_id, seed=source.seed, stream=True)
                   for p in profiles}
        main = results[settings.profile]
        metadata = items_metadata(main)
        share = metadata["fallback_statement_share"]
        if share > settings.max_fallback_share:
            names = ", ".join(r["relation_key"] for r in metadata["fallback_relations"][:5])
            raise TemplateCoverageError(
                f"grapheval: {share:.1%} of the statements use the fallback template \"{{head}} <relation label> "
                f"{{tail}}.\" (more than max_fallback_share {settings.max_fallback_share:.1%}); relations without a "
                f"readable template include {names}. Give them templates in suites.grapheval.templates, or raise "
                "max_fallback_share")
        readability = check_readability(main.items, sample=settings.readability_sample,
                                        max_share=settings.max_unreadable_share, seed=source.seed)
        metadata.update(readability.as_metadata())
        if readability.id_labels:
            warnings.warn(f"grapheval: {readability.id_label_share:.0%} of {readability.checked + readability.id_labels} "
                          "sampled statements name an entity only by its id (a KG with partial labels); they are "
                          f"dropped when kgs.{source.kg}.require_labels holds (the default): give entity_labels for "
                          "more statements", stacklevel=2)
        unloaded = missing_splits(snapshot_sources(source.con, source.snapshot_id))
        metadata["unloaded_splits"] = [{"file": f} for f in unloaded]  # rows: shown as a table
        if unloaded:
            metadata["warning"] = (f"the KG is a split benchmark loaded without {', '.join(unloaded)}: negatives are "
                                   "verified against the loaded splits only, so some may be facts of the others; "
                                   "load every split to verify against the whole KG")
            warnings.warn(f"grapheval: {metadata['warning']}", stacklevel=2)
        metadata["profiles"] = [{"profile": p, "task": PROFILES[p].task, "items": r.items.num_rows,
                                 "negatives_per_positive": r.metadata["options"]["negatives"],
                                 "corruption": r.metadata["options"]["corruption"]} for p, r in results.items()]
        metadata["template_review"] = template_review(main)
        streams = [r.items for r in results.values()]
        total = sum(x.num_rows for x in streams)
        limit = settings.stream_items_above
        # above the limit the warehouse writes the items a chunk at a time as the reader builds them
        items = (pa.RecordBatchReader.from_batches(item_schema(), (b for x in streams for b in x.batches()))
                 if limit is not None and total > limit else pa.concat_tables([x.read_all() for x in streams]))
        rejects = pa.concat_tables([r.rejects for r in results.values()])
        return ItemsResult(items=items, rejects=rejects, metadata=metadata)

    def select(self, items: Sequence[Mapping[str, Any]], *, limit: int | None = None,
               **options: Any) -> list[Mapping[str, Any]]:  # fmt: skip
        """As :meth:`Suite.select`, per task: with ``limit`` each profile's statements (its task) keep ``limit``
        groups, so a limited run asks both profiles when both were built."""
        tasks = sorted({str(it.get("task") or "statement") for it in items})
        if limit is None or len(tasks) < 2:
            return super().select(items, limit=limit, **options)
        out: list[Mapping[str, Any]] = []
        for task in tasks:
            out += super().select([x for x in items if str(x.get("task") or "statement") == task], limit=limit,
                                  **options)
        return out

    def prompts(self, items: Sequence[Mapping[str, Any]], context: Mapping[str, str] | None = None) -> list[Prompt]:
        """The Table 6 prompt per item (closed book; GraphEval has no grounded form)."""
        return [statement_prompt(it) for it in items]

    def score(self, items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], *, model: str,
              perturbation: str = "none", scoring: ScoringOptions = ScoringOptions()) -> SuiteScores:  # fmt: skip
        """The paper's metrics (formula 2) with bootstrap intervals over positives, the unreadable share and the
        accuracy (:func:`~kgprobe.suites.grapheval.scoring.score_statements`); not the default accuracy of votes."""
        return score_statements(items, responses, model=model, perturbation=perturbation,
                                confidence=scoring.confidence, resamples=scoring.resamples, seed=scoring.seed,
                                log=scoring.log)

    def report(self, ctx: Any, metrics: Sequence[Mapping[str, Any]], *, agreement: Sequence[Mapping[str, Any]] = (),
               similarity: Sequence[Mapping[str, Any]] = ()) -> tuple[Any, dict[str, bytes]]:  # fmt: skip
        """GraphEval's section: the three metrics per model with intervals, by relation, head / tail type and degree
        bucket, and the hidden-state judge's rows beside the generated ones when present."""
        from kgprobe.suites.grapheval.report import section

        return section(ctx, [r for r in metrics if r.get("suite") == self.name])
