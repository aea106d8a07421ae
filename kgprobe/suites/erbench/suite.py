"""ERBench as a :class:`~kgprobe.suites.base.Suite`: questions from a relational database's FDs and foreign keys,
answers and rationales verified automatically.

Upstream: the ``erdb`` asset (``assets/erbench.py``) loads the database the spec names into the warehouse schema
``erdb`` (:func:`~kgprobe.suites.erbench.erdb.load_erdb`); :meth:`ERBenchSuite.items` reads it through the
read-only connection as ``erdb.<relation>``.

Items (:mod:`kgprobe.suites.erbench.questions`): tasks ``binary`` (BN(Y), BN(N)), ``multiple_choice`` (MC,
MC-NOTA; three phrasings each), ``multihop`` and ``known_entity``; ``group_id`` is the FD's (or path's) record, so
a record's questions and its known-entity prompts stay together in a limited run. ``breakdown`` holds ``dataset``
and ``qtype`` (and ``hops``); ``evidence`` the record, the FD and the snapshot id. ERBench's columns follow
(:data:`~kgprobe.suites.erbench.questions.ITEM_COLUMNS_ERBENCH`): the inferred values, each hop's value, the
options, the system prompt and ``gold``, the answer a perfect model writes (the oracle's text).

Prompts: the paper's system prompts (binary: "Answer the following question in yes or no, and then explain why.
Say 'unsure' ..."; known entities: "... Be concise"; multiple choice as the released code), greedy decoding with
one sample (:attr:`ERBenchSuite.sampling`), optional few-shot demonstrations and chain-of-thought demonstrations
per dataset (Q:/A: files such as the released ``demo_prompt/*.txt``).

Scores: :mod:`kgprobe.suites.erbench.scoring` (A, R, AR, M, H per dataset x question type under the known and all
settings; :meth:`ERBenchSuite.cross_model_metrics` computes the common setting over all models' votes).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from kgprobe.errors import ConfigError
from kgprobe.generation.backends.reference import OPEN_KIND, open_gold
from kgprobe.generation.records import Prompt
from kgprobe.suites.base import (
    Headline,
    ItemSource,
    ItemsResult,
    Sampling,
    ScoringOptions,
    Suite,
    SuiteScores,
    metric_row,
)
from kgprobe.suites.erbench.clashes import check_shared_prompts
from kgprobe.suites.erbench.questions import NONE_OF_THE_ABOVE, QuestionOptions, build_items, item_schema
from kgprobe.suites.erbench.scoring import (
    ERBENCH_SAMPLE_SCHEMA,
    ERBENCH_VOTE_SCHEMA,
    common_metrics,
    known_counts,
    known_groups,
    known_kind,
    known_setting_keep,
    known_share_rows,
    metrics_for,
    read_sample,
    votes_from_samples,
)
from kgprobe.suites.settings import InputFile, confined, existing_file

__all__ = ["ERBenchSettings", "ERBenchSuite", "ERBenchWarning", "common_share_rows", "dropped_in_sample", "load_demos",
           "with_readings"]


class ERBenchWarning(UserWarning):
    """A setting makes the questions differ from the paper's (e.g. fd_violations: drop inside a first-N sample)."""

TEMPLATES = Path(__file__).resolve().parent / "templates"


class ERBenchSettings(BaseModel):
    """The ``suites.erbench`` section."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)

    db: str | dict[str, Any]
    """The database spec: a YAML file relative to the config file (see kgprobe.suites.erbench.spec), or inline."""
    schema_name: str = Field("erdb", alias="schema")
    """The warehouse schema the erdb asset loads the tables into."""
    limit_per_fd: int | None = Field(None, ge=1)
    """Records sampled per FD and per multi-hop path (see ``sample``); null: every record."""
    sample: Literal["first", "seeded"] = "first"
    """With limit_per_fd: ``first`` takes the first records in table order (the paper: the first N rows, its famous
    entities); ``seeded`` a seeded hash order (a sample that does not depend on row order)."""
    distractors: Literal["by_row", "by_value"] = "by_row"
    """The false option's value: ``by_row`` another row's value drawn over the relation's rows (the paper's code:
    frequent values are frequent distractors); ``by_value`` drawn uniformly over the column's distinct values."""
    fd_violations: Literal["keep", "drop"] = "keep"
    """Rows that violate a declared FD: ``keep`` them (the paper asks about its tables as they are; a left-hand side
    is asked once, with its first row) or ``drop`` them at load (a warning names the dropped rows that fall inside
    a ``first`` sample)."""
    none_of_the_above: float = Field(0.0, ge=0.0, le=1.0)
    """Share of multiple-choice records whose options are all true ("None of the above" is the answer)."""
    question_types: tuple[Literal["binary", "multiple_choice", "multihop"], ...] = ("binary", "multiple_choice",
                                                                                     "multihop")
    """Which questions to ask: binary, multiple_choice, multihop."""
    known_entity: bool = True
    """Ask the known-entity prompts (the known and common settings need them)."""
    few_shot: dict[str, InputFile] = Field(default_factory=dict)
    """Dataset (or dataset.task: movie.binary, movie.multiple_choice) -> a Q:/A: demonstration file put before
    each question, relative to the config file."""
    cot: dict[str, InputFile] = Field(default_factory=dict)
    """Like few_shot, with chain-of-thought demonstrations (each answer reasons, then says "The answer is ...")."""
    known_reading: Literal["released", "only_yes"] = "released"
    """How a known-entity answer is read: ``released`` (default: the released scripts, which produced the paper's
    Tables 2, 4 and 13: known unless the answer says "no") or ``only_yes`` (the paper's §B.2 text: the answer says
    only yes; stricter, it keeps far fewer entities than the tables were computed on)."""
    answer_reading: Literal["released", "kgprobe"] = "released"
    """How a binary (and multi-hop) answer is read: ``released`` (default: the released scripts, which produced the
    paper's Tables 2 and 4: the answer's first line starts with yes or no, anything else is unsure) or ``kgprobe``
    (an answer that starts with neither is read by its content: "As an AI ... Munich hosted the Summer Olympics"
    reads yes)."""
    rationale_match: Literal["released", "kgprobe"] = "released"
    """How a rationale is matched with the inferred values: ``released`` (default: the released scripts, which
    produced Tables 2 and 4: a spelling of the value found as a case-insensitive substring, with the spec's
    ``first_word`` heuristic) or ``kgprobe`` (whole words, never right after a negator, numbers by value, no
    ``first_word``: "19" is not found in "2019", "US" not in "because", "Harlequin" does not name "Harlequin
    Books")."""
    rationale_ext: Literal["per_question", "per_hop"] = "per_question"
    """Multi-hop R-ext: ``per_question`` (default, the released code and Table 4: each question's share of right
    hops, averaged over the questions) or ``per_hop`` (the paper's §4.3 text: the mean of the per-hop shares)."""
    hop_questions: Literal["complete", "each"] = "complete"
    """The questions the per-hop measures (R at hop i, AR-ext, Pr(r_i | r_i-1)) count: ``complete`` (default, the
    released code and Table 4: questions whose path has a value at every hop, on Soccer & Olympic the Olympic-host
    cities) or ``each`` (hop i over every question where hop i has a value)."""
    nota_rationale: Literal["zero", "skip"] = "zero"
    """A None-of-the-above question's R and AR: ``zero`` (default, the released code: counted 0, there is no false
    option's value to name) or ``skip`` (left out of R and AR)."""
    min_known: int = Field(20, ge=0)
    """A model that knows fewer entities of a dataset and question type is "n/a" there: no known-setting rows, and
    left out of the common set (the paper: 20)."""
    kg: str | None = None
    """The KG that FDs with a ``kg`` link are checked against (default: the first of ``kgs``): a BN(Y) question on
    a record whose triple is in it asserts that triple, for the cross-suite consistency view."""
    prefer_kg: bool = False
    """With limit_per_fd, an FD with a ``kg`` link samples the records whose triple is in the KG first (so a small
    sample asks facts the KG suites ask too)."""

    @field_validator("db")
    @classmethod
    def _readable_spec(cls, value: str | dict[str, Any], info: ValidationInfo) -> str | dict[str, Any]:
        # loaded from a config file, the spec is read now, so a missing file or a malformed spec is reported at
        # suites.erbench.db when the config loads, not when the erdb asset runs
        base = info.context.get("base") if isinstance(info.context, dict) else None
        if base is None:
            return value
        if isinstance(value, str):
            path = Path(value).expanduser()
            existing_file(confined(path if path.is_absolute() else Path(base) / path, info))
        from kgprobe.suites.erbench.spec import load_spec

        try:
            spec = load_spec(value, config_dir=base)
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc
        if spec.source.path is not None:  # the tables' folder or database file, and each table's file
            confined(Path(spec.source.path), info)
            if spec.source.kind in ("csv", "parquet"):
                for rel in spec.relations.values():
                    confined(Path(spec.source.path) / rel.source, info)
        return value



def _choice_gold(item: Mapping[str, Any]) -> str:
    """A multiple-choice item's gold for the reference backends: the oracle answers the item's gold; ``random``
    picks one of the answers the question allows, uniformly (each option, and "None of the above" where the system
    prompt offers it), so its accuracy is chance (1/3 with three options), not 0."""
    options = [f"Option {k}: {o}" for k, o in enumerate(item.get("options") or [], 1)]
    if "none of above" in str(item.get("system") or "").lower():
        options.append(NONE_OF_THE_ABOVE)
    return open_gold(str(item["gold"]), options)

def dropped_in_sample(con: Any, spec: Any, settings: ERBenchSettings) -> list[dict[str, Any]]:
    """The rows a ``drop`` load rejected for violating an FD that lie inside the first ``limit_per_fd`` rows of
    their relation (every such row when there is no limit): the rows a first-N sample of the paper would ask about
    and this one does not. Each: relation, row (1-based, in the source), record (JSON) and reason."""
    import duckdb

    schema = '"' + settings.schema_name.replace('"', '""') + '"'
    try:
        rows = con.execute(f"SELECT relation, row, reason, record FROM {schema}._rejects ORDER BY relation, row"
                           ).fetchall()
    except duckdb.Error:
        return []
    limit = settings.limit_per_fd if settings.sample == "first" else None
    out = []
    for relation in {r[0] for r in rows}:
        for r in [r for r in rows if r[0] == relation]:
            if not str(r[2]).startswith("violates FD"):
                continue
            if limit is None or r[1] <= limit:
                out.append({"relation": r[0], "row": int(r[1]), "reason": r[2], "record": r[3]})
    return sorted(out, key=lambda d: (d["relation"], d["row"]))


def load_demos(path: Path) -> list[tuple[str, str]]:
    """The (question, answer) pairs of a demonstration file: blocks that start with "Q:" and "A:" lines (the format
    of ERBench's released demo prompts; a question may span several lines, e.g. its options)."""
    if not path.is_file():
        raise ConfigError(f"demonstration file {path} not found; fix suites.erbench.few_shot / cot")
    text = path.read_text(encoding="utf-8")
    pairs = []
    for block in re.split(r"(?m)^(?=Q:)", text):
        if not block.strip():
            continue
        m = re.match(r"Q:\s*(.*?)\n\s*A:\s*(.*)", block.strip(), re.DOTALL)
        if not m:
            raise ConfigError(f"{path}: a block does not read 'Q: ...' then 'A: ...': {block.strip()[:80]!r}")
        pairs.append((m.group(1).strip(), m.group(2).strip()))
    return pairs


class ERBenchSuite(Suite):
    """ERBench (Oh et al.): binary, multiple-choice and multi-hop questions from FDs and foreign keys."""

    name = "erbench"
    title = "ERBench: questions from a relational database, answers and rationales verified by FDs"
    paper = ("Oh et al., ERBench: An Entity-Relationship based Automatically Verifiable Hallucination Benchmark for "
             "Large Language Models (NeurIPS 2024 Datasets and Benchmarks)")
    Settings = ERBenchSettings
    sampling = Sampling(n=1, temperature=0.0)
    headline = Headline("binary", "answer_rationale_accuracy", "AR: answer and rationale correct (binary)")
    upstream = ("erdb",)
    #: The questions come from a relational database: a project of ERBench alone needs no KG.
    needs_kg = False
    names_kg_entities = False  # the text comes from the database's values

    # ---------------------------------------------------------------------------------------------------- items
    def spec(self, settings: ERBenchSettings, config_dir: Path | str):
        """The database spec the settings name."""
        from kgprobe.suites.erbench.spec import load_spec

        return load_spec(settings.db, config_dir=config_dir)

    def items(self, source: ItemSource) -> ItemsResult:
        """Every question of the spec's FDs and paths from the loaded ``erdb`` tables (see the module docstring)."""
        from kgprobe.suites.erbench.erdb import current_erdb_snapshot

        s: ERBenchSettings = source.settings
        spec = self.spec(s, source.config_dir)
        snapshot = current_erdb_snapshot(source.con, s.schema_name)
        if snapshot is None:
            raise ConfigError(f"schema {s.schema_name} holds no loaded database; materialize the erdb asset first")
        opts = QuestionOptions(limit=s.limit_per_fd, none_of_the_above=s.none_of_the_above, seed=source.seed,
                               binary="binary" in s.question_types,
                               multiple_choice="multiple_choice" in s.question_types,
                               multihop="multihop" in s.question_types, known=s.known_entity, snapshot_id=snapshot,
                               kg=source.kg, prefer_kg=s.prefer_kg, sample=s.sample, distractors=s.distractors)
        items = with_demos(build_items(source.con, spec, opts, schema=s.schema_name), s, Path(source.config_dir))
        items, clashes = check_shared_prompts(items)  # one stored answer per prompt: one expected answer
        for message in clashes:
            warnings.warn(message, ERBenchWarning, stacklevel=2)
        dropped = dropped_in_sample(source.con, spec, s) if s.fd_violations == "drop" else []
        if dropped:
            names = "; ".join(f"{d['relation']} row {d['row']} {d['record']}" for d in dropped[:10])
            warnings.warn(f"fd_violations: drop removed {len(dropped)} row(s) that fall inside the first "
                          f"{s.limit_per_fd} rows of their relation, so the sample differs from the paper's: {names}"
                          f"{' ...' if len(dropped) > 10 else ''}. Set fd_violations: keep to ask about them",
                          ERBenchWarning, stacklevel=2)
        rows = items.select(["dataset", "qtype"]).to_pylist()
        counts: dict[tuple[str, str], int] = {}
        for r in rows:
            counts[(r["dataset"], r["qtype"])] = counts.get((r["dataset"], r["qtype"]), 0) + 1
        metadata = {"snapshot_id": snapshot, "sample": s.sample, "distractors": s.distractors,
                    "fd_violations": s.fd_violations, "dropped_in_sample": dropped,
                    "items_per_dataset_and_type": [{"dataset": d, "qtype": q, "items": n}
                                                   for (d, q), n in sorted(counts.items())]}
        return ItemsResult(items=items, rejects=None, metadata=metadata)

    # ---------------------------------------------------------------------------------------------------- prompts
    def prompts(self, items: Sequence[Mapping[str, Any]], context: Mapping[str, str] | None = None) -> list[Prompt]:
        """One prompt per item: the item's system prompt, its question (after the dataset's demonstrations, when
        configured) and ``gold``, the answer a perfect model writes, for the oracle."""
        out = []
        for it in items:
            demos, kind = it.get("demos") or "", it.get("demo_kind") or ""
            if it.get("task") == "multiple_choice":
                # Table 8 and the released code: "Q: <question>\nOption 1: ...\nOption n: ...\n\nA: "
                text = f"{demos}Q: {it['question']}\n\nA: "
            elif it.get("qtype") == "known_mc":
                # the released multiple-choice validation asks its known-entity prompts as "Q: ...\nA:"
                text = f"Q: {it['question']}\nA:"
            else:
                text = f"{demos}Q: {it['question']}\nA:" if demos else str(it["question"])
            gold, answer_kind = it.get("gold"), None
            if it.get("task") == "multiple_choice" and gold is not None:
                gold, answer_kind = _choice_gold(it), OPEN_KIND
            out.append(Prompt(item_id=str(it["item_id"]), text=text,
                              template_id=str(it["template_id"]) + (f"+{kind}" if kind else ""),
                              gold=gold, answer_kind=answer_kind, system=it.get("system")))
        return out

    # ---------------------------------------------------------------------------------------------------- score
    def score(self, items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], *, model: str,
              perturbation: str = "none", scoring: ScoringOptions = ScoringOptions()) -> SuiteScores:  # fmt: skip
        """Read every answer (yes / no / unsure, the option chosen, the known-entity reading), check its rationale,
        vote per item, and measure A, R, AR, M, H per dataset x question type on known entities and on all
        questions, the multi-hop per-hop measures and the known-entity shares."""
        by_id = {str(it["item_id"]): it for it in items}
        missing = sorted({str(r["item_id"]) for r in responses} - set(by_id))
        if missing:
            raise ValueError(f"{len(missing)} response(s) of model {model!r} answer items that are not among the "
                             f"erbench items (first: {missing[:3]}); re-materialize the responses")
        samples = []
        for r in responses:
            item = by_id[str(r["item_id"])]
            reading = read_sample(item, r.get("text"), r.get("error"),
                                  known_rule=getattr(scoring.settings, "known_reading", "released"),
                                  nota_rationale=getattr(scoring.settings, "nota_rationale", "zero"),
                                  answer_reading=getattr(scoring.settings, "answer_reading", "released"),
                                  rationale_match=getattr(scoring.settings, "rationale_match", "released"))
            samples.append({
                "response_id": r["response_id"], "item_id": str(r["item_id"]), "model": r["model"],
                "perturbation": perturbation, "sample_index": int(r["sample_index"]), "judge": "",
                "text": r.get("text"), "error": r.get("error"), "label": reading["label"], "judge_text": None,
                "judge_error": None, "judge_response_id": None, "rationale": reading["rationale"],
                "hop_rationale": reading["hop_rationale"], "knows": reading["knows"],
            })  # fmt: skip
        votes = votes_from_samples(by_id, samples, model=model, perturbation=perturbation)
        return SuiteScores(samples=samples, votes=votes,
                           metrics=self.metrics(votes, by_id, model=model, perturbation=perturbation,
                                                confidence=scoring.confidence,
                                                min_known=getattr(scoring.settings, "min_known", 20),
                                                settings=scoring.settings),
                           sample_schema=ERBENCH_SAMPLE_SCHEMA, vote_schema=ERBENCH_VOTE_SCHEMA)

    def metrics(self, votes: Sequence[Mapping[str, Any]], items: Mapping[str, Mapping[str, Any]], *, model: str,
                perturbation: str, confidence: float = 0.95, min_known: int = 20,
                settings: Any = None) -> list[dict[str, Any]]:  # fmt: skip
        """Settings 3 (all questions, with the overall rows) and 1 (entities this model knows; a dataset and
        question type where it knows fewer than ``min_known`` entities is "n/a": no rows), and the known shares.
        ``settings`` (the suite's section) gives the multi-hop readings (``rationale_ext``, ``hop_questions``)."""
        readings = _multihop_readings(settings)
        out = metrics_for(votes, model=model, perturbation=perturbation, entities="all", overall=True,
                          confidence=confidence, **readings)
        out += metrics_for(votes, model=model, perturbation=perturbation, entities="known",
                           keep=known_setting_keep(votes, min_known=min_known), confidence=confidence, **readings)
        out += known_share_rows(votes, model=model, perturbation=perturbation, confidence=confidence)
        return with_readings(out, settings)

    def cross_model_metrics(self, votes: Sequence[Mapping[str, Any]], items: Mapping[str, Mapping[str, Any]], *,
                            settings: Any = None, min_known: int = 20,
                            models: Collection[str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """Setting 2: each model's measures on the questions whose entity every evaluated model knows, from the
        vote rows of the models ``models`` names (the project passes the models the user named: never a
        ``backend: reference`` one, whose coin flips would make the common set; None: every model of ``votes``);
        ``items`` maps item id -> item. Metric rows in the common schema with ``entities`` = "common" (see
        :func:`~kgprobe.suites.erbench.scoring.common_metrics`); a model knowing fewer than ``min_known`` entities
        of a dataset (``settings.min_known`` when given) is left out there. ``common_share`` rows give the size of
        each common set: per evaluated model, dataset and known-entity kind (BN, MC, hop), the share of the
        entities asked that are in it (n: the entities asked)."""
        rows = []
        for v in votes:
            if models is not None and str(v["model"]) not in models:
                continue
            item = items.get(str(v["item_id"])) or {}
            row = dict(v)
            for key in ("dataset", "qtype", "fd", "hops", "known_group", "task"):
                if row.get(key) is None and key in item:
                    row[key] = item[key]
            rows.append(row)
        floor = getattr(settings, "min_known", min_known)
        return with_readings(common_metrics(rows, min_known=floor, **_multihop_readings(settings)), settings) + \
            common_share_rows(rows, min_known=floor)

    def validate(self, tables: Mapping[str, pa.Table], *, name: str) -> list[Any]:
        from kgprobe.scoring.quality import validate_metrics, validate_votes

        return [*validate_votes(tables["votes"], name=f"{name} votes"),
                *validate_metrics(tables["metrics"], name=f"{name} metrics")]

    # ---------------------------------------------------------------------------------------------------- report
    def report(self, ctx: Any, metrics: Sequence[Mapping[str, Any]], *, agreement: Sequence[Mapping[str, Any]] = (),
               similarity: Sequence[Mapping[str, Any]] = ()) -> tuple[Any, dict[str, bytes]]:  # fmt: skip
        """ERBench's section: A / R / AR / H per dataset x question type for each evaluation setting, the
        multi-hop per-hop measures and the known-entity counts (:func:`kgprobe.suites.erbench.report.section`)."""
        from kgprobe.suites.erbench.report import section

        mine = [m for m in metrics if m.get("suite") == self.name and m.get("setting", "closed") == "closed"]
        if not mine:
            return None, {}
        return section(ctx, mine), {}


def with_readings(rows: list[dict[str, Any]], settings: Any) -> list[dict[str, Any]]:
    """``rows`` with the readings that produced each answer-scored row in its breakdown (``reading``, e.g.
    "answer_reading=released, rationale_match=released, known_reading=released"): the suite's defaults are the
    readings of the paper's tables, any other a named setting, and a row says which one it comes from. Multiple
    choice has no yes/no answer to read (no ``answer_reading``); the known-entity shares name ``known_reading``.
    A suite's overall rows (empty breakdown, the headline among them) stay as they are: an empty breakdown is what
    makes a row overall; the report's ERBench section lists the readings of its cells."""
    answer = getattr(settings, "answer_reading", "released")
    rationale = getattr(settings, "rationale_match", "released")
    known = getattr(settings, "known_reading", "released")
    for row in rows:
        task = row.get("task")
        if not row.get("breakdown"):
            continue
        if task == "known_entity":
            parts = [f"known_reading={known}"]
        elif task == "multiple_choice":
            parts = [f"rationale_match={rationale}", f"known_reading={known}"]
        elif task in ("binary", "multihop"):
            parts = [f"answer_reading={answer}", f"rationale_match={rationale}", f"known_reading={known}"]
        else:
            continue
        row["breakdown"] = {**row.get("breakdown", {}), "reading": ", ".join(parts)}
    return rows


def _multihop_readings(settings: Any) -> dict[str, str]:
    return {"rationale_ext_reading": getattr(settings, "rationale_ext", "per_question"),
            "hop_questions": getattr(settings, "hop_questions", "complete")}


def common_share_rows(votes: Sequence[Mapping[str, Any]], *, min_known: int = 20,
                      confidence: float = 0.95) -> list[dict[str, Any]]:  # fmt: skip
    """Setting 2's entity counts: per perturbation, dataset and known-entity kind (:func:`known_kind`), for each model
    evaluated there (it knows at least ``min_known`` entities), a ``common_share`` row: the share of the entities
    asked that every evaluated model knows (the common set :func:`common_metrics` scores), n = the entities asked.
    ``votes`` are the vote rows of every model, as for :func:`common_metrics`."""
    by_model: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for v in votes:
        by_model.setdefault((str(v["model"]), str(v.get("perturbation") or "none")), []).append(v)
    cell_of: dict[str, tuple[str, str]] = {}
    items_of: dict[tuple[tuple[str, str], str], list[str]] = {}
    for key, rows in by_model.items():
        for v in rows:
            if v["task"] == "known_entity":
                cell_of[v["known_group"]] = (v["dataset"], known_kind(v))
                items_of.setdefault((key, v["known_group"]), []).append(str(v["item_id"]))
    out = []
    for perturbation in sorted({k[1] for k in by_model}):
        keys = sorted(k for k in by_model if k[1] == perturbation)
        known = {k: known_groups(by_model[k]) for k in keys}
        counts = {k: known_counts(by_model[k]) for k in keys}
        for cell in sorted(set(cell_of.values())):
            evaluated = [k for k in keys if counts[k].get(cell, 0) >= min_known]
            groups = sorted(g for g, c in cell_of.items() if c == cell)
            common = {g for g in groups if all(known[k].get(g, False) for k in evaluated)}
            for k in evaluated:
                asked = [g for g in groups if g in known[k]]
                out.append(metric_row(model=k[0], perturbation=perturbation, suite="erbench", task="known_entity",
                                      judge="", metric="common_share",
                                      breakdown={"dataset": cell[0], "qtype": cell[1], "entities": "common"},
                                      flags=[g in common for g in asked],
                                      item_ids=sorted(i for g in asked for i in items_of.get((k, g), ())),
                                      confidence=confidence))
    return out


def with_demos(items: pa.Table, settings: ERBenchSettings, config_dir: Path) -> pa.Table:
    """``items`` with ``demos`` (the few-shot or chain-of-thought demonstrations put before the question, "" for
    none) and ``demo_kind`` (fewshot, cot or ""), looked up per dataset and task (known-entity prompts get none)."""
    cache: dict[tuple[str, str], tuple[str, str]] = {}

    def lookup(dataset: str, task: str) -> tuple[str, str]:
        if (dataset, task) not in cache:
            found = ("", "")
            if task != "known_entity":
                for kind, table in (("cot", settings.cot), ("fewshot", settings.few_shot)):
                    key = next((k for k in (f"{dataset}.{task}", dataset) if k in table), None)
                    if key is not None:
                        path = Path(table[key])
                        pairs = load_demos(path if path.is_absolute() else config_dir / path)
                        found = ("".join(f"Q: {q}\nA: {a}\n\n" for q, a in pairs), kind)
                        break
            cache[(dataset, task)] = found
        return cache[(dataset, task)]

    # looked up once per distinct (dataset, task), then taken per item (a table of every record has 9M items)
    codes, values = [], []
    for name in ("dataset", "task"):
        encoded = items.column(name).combine_chunks().dictionary_encode(null_encoding="encode")
        codes.append(encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64))
        values.append(encoded.dictionary.to_pylist())
    pair, row = np.unique(codes[0] * max(len(values[1]), 1) + codes[1], return_inverse=True)
    found = [lookup(values[0][c // len(values[1])], values[1][c % len(values[1])]) for c in pair.tolist()]
    rows = pa.array(row.astype(np.int64))
    items = items.append_column("demos", pa.array([f[0] for f in found], pa.string()).take(rows))
    return items.append_column("demo_kind", pa.array([f[1] for f in found], pa.string()).take(rows))


def empty_items() -> pa.Table:
    """An empty item table of ERBench's schema."""
    return item_schema().empty_table()
