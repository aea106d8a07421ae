"""GraphEval as a :class:`~kgprobe.suites.base.Suite`: statements from KG triples and verified negatives, the
Table 6 prompt, the paper's three metrics (formula 2) with bootstrap intervals over positives.

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

from kgprobe.errors import ConfigError
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
from kgprobe.suites.grapheval.prompts import statement_prompt
from kgprobe.suites.grapheval.scoring import score_statements
from kgprobe.suites.grapheval.statements import (
    StatementOptions,
    StatementSet,
    build_statements,
)
from kgprobe.suites.grapheval.templates import load_template_file
from kgprobe.suites.settings import InputFile

__all__ = ["GraphEvalSettings", "GraphEvalSuite", "HiddenJudgeSettings", "statement_options"]


class HiddenJudgeSettings(BaseModel):
    """The hidden-state judge (the paper's §3.2): which model's hidden states, how the labelled statements are
    split, the MLP's training (the paper: 100 epochs, batch 8, Adam 1e-4), how many statements it labels and on
    how many generation is timed for the speed-up."""

    model_config = ConfigDict(extra="forbid")

    substitute_model: str | None = None
    """A smaller model of the same family whose hidden states stand in (a transformers model id, a folder or
    gguf:<file>); None: the evaluated model's own."""
    train_share: float = Field(0.7, gt=0, lt=1)
    """Share of the labelled statements (answered by the model) the judge trains on; the rest is held back."""
    epochs: int = Field(100, ge=1)
    batch_size: int = Field(8, ge=1)
    lr: float = Field(1e-4, gt=0)
    max_statements: int | None = Field(2000, ge=1)
    """Statements the judge labels (whole groups, spread as the lane's limit is); None: every item."""
    timing_statements: int = Field(16, ge=1)
    """Answered prompts re-generated to time generation against the judge's forward pass."""
    forward_batch_size: int = Field(16, ge=1)
    num_threads: int | None = Field(None, ge=1)


class GraphEvalSettings(BaseModel):
    """The ``suites.grapheval`` section. Paths are relative to the config file."""

    model_config = ConfigDict(extra="forbid")

    kg: str | None = None
    """The KG to read (default: the first of ``kgs``)."""
    per_relation: int | None = Field(50, ge=1)
    """Positives per relation (a seeded sample); null: every triple of the KG."""
    negatives: int = Field(3, ge=1)
    """k: negatives per positive."""
    corrupt: list[Literal["head", "relation", "tail"]] = Field(default_factory=lambda: ["head", "relation", "tail"])
    """The parts a negative may replace, drawn uniformly per negative."""
    corruption: Literal["typed", "uniform"] = "typed"
    """typed: a replacement of the same type (harder negatives); uniform: any entity or relation."""
    max_attempts: int = Field(10, ge=1)
    """Draws per negative slot before it is given up (rejected draws are counted with their reason)."""
    templates: InputFile | None = None
    """A YAML / JSON mapping relation key -> statement template ``{head} ... {tail}.``; wins over the others."""
    dbpedia_templates: InputFile | None = None
    """GraphEval's DBpedia templates (its answers.json: relation name -> template)."""
    dbpedia_match: Literal["iri", "local_name"] = "iri"
    """iri: DBpedia relation keys only; local_name: also the last segment of simple keys (review the result)."""
    judge: Literal["none", "hidden_state"] = "none"
    """hidden_state: also label the statements with the hidden-state judge (an asset after the responses)."""
    hidden_judge: HiddenJudgeSettings = Field(default_factory=HiddenJudgeSettings)

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


def statement_options(settings: GraphEvalSettings, config_dir: Path = Path(".")) -> StatementOptions:
    """The :class:`StatementOptions` of validated settings, template files read (relative to ``config_dir``)."""
    def read(value: str | None, role: str) -> dict[str, str]:
        if value is None:
            return {}
        path = Path(value)
        return load_template_file(path if path.is_absolute() else config_dir / path, role=role)

    return StatementOptions(per_relation=settings.per_relation, negatives=settings.negatives,
                            parts=tuple(settings.corrupt), corruption=settings.corruption,
                            max_attempts=settings.max_attempts, templates=read(settings.templates, "templates"),
                            dbpedia=read(settings.dbpedia_templates, "dbpedia_templates"),
                            dbpedia_match=settings.dbpedia_match)


def items_metadata(result: StatementSet) -> dict[str, Any]:
    """What the items asset shows: counts, rejected negatives by reason and part, template sources and the
    relations on the fallback template (to write better ones for)."""
    m = result.metadata
    return {
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


class GraphEvalSuite(Suite):
    """GraphEval (Liu et al.): is a statement from the KG (or a verified-false corruption of one) true, false, or
    does the model not know?"""

    name = "grapheval"
    title = "GraphEval: true / false / I-don't-know statements"
    paper = "Liu et al., Evaluating the Factuality of Large Language Models using Large-Scale Knowledge Graphs"
    Settings = GraphEvalSettings
    # the paper asks 3 times and takes the majority; Hugging Face's pipeline defaults of the chat models it used
    sampling = Sampling(n=3, temperature=0.6, top_p=0.9)
    headline = Headline("statement", "correctness", "Correctness (formula 2)")
    # the hidden-state judge (assets/grapheval.py): empty partitions unless judge is hidden_state
    closed_extras = ("grapheval_hidden_judge",)

    def items(self, source: ItemSource) -> ItemsResult:
        """Statements and verified negatives of the KG (see the module docstring), with every rejected candidate."""
        settings = source.settings if source.settings is not None else GraphEvalSettings()
        result = build_statements(source.con, statement_options(settings, source.config_dir),
                                  snapshot_id=source.snapshot_id, seed=source.seed)
        return ItemsResult(items=result.items, rejects=result.rejects, metadata=items_metadata(result))

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
