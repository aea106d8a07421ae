"""OKGQA as a :class:`~kgprobe.suites.base.Suite`: open-ended questions answered zero-shot and with KG knowledge
retrieved from the question's (perturbed) subgraph, their atomic facts checked against the KG itself.

Items: one ``closed`` item per question (zero-shot, ``retrieval`` = none), with ``cot`` on a second closed item
(``retrieval`` = cot: zero-shot chain-of-thought, the paper's baseline in Figure 6), and one ``grounded`` item per
question and retrieval method (triplets, paths, subgraph). The method is part of the item, not a partition
dimension: the three contexts come from the same perturbed subgraph in one pass, a model answers all three in one
run, and the grid stays model x perturbation like every other suite's. Every item's ``evidence`` carries the
question's provenance, its clean subgraph and the KG's triples about its entities (labels, functional relations):
what the facts are checked against, so scoring needs no connection; and the oracle's and the random baseline's
answers.

Scores per extractor (the metric rows' ``judge``): ``heuristic`` splits answers into facts offline
(:func:`kgprobe.scoring.claims.split_facts`); each configured judge breaks them into atomic (subject, relation,
object, negated) claims as validated JSON, and rates them (G-Eval: its own evaluation steps per criterion, written
once, and a score weighted by the score token's probabilities where the backend returns them). Every fact is checked
against the unperturbed KG by :mod:`kgprobe.scoring.claims`. Metric rows: ``factscore`` (the headline, the paper's
§4.1: per answer, supported / all atomic facts; mean over answers, Wilson interval of the mean), ``fact_precision``
(supported / decidable facts per answer; Wilson interval of the mean), ``not_in_kg_share`` and ``ambiguous_share`` (facts the KG
cannot decide, and facts with a mention naming two KG entities; Wilson) and, per judge, ``geval_<criterion>`` (1-5
rescaled to 0-1 as (s - 1) / 4; Wilson of the mean), overall and by type, sub-type, source and retrieval; the
chain-of-thought answers only in their own ``retrieval`` = cot cell, so the overall zero-shot numbers stay the plain
prompt's. Agreement rows: the KG verdict vs the judge's check of each fact against the retrieved context (Cohen's
kappa).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from kgprobe.generation.backends.reference import OPEN_KIND, open_gold
from kgprobe.generation.records import ModelSpec, Prompt
from kgprobe.grounding.retrieval import RETRIEVAL_METHODS, GraphRetriever, RetrievalConfig
from kgprobe.scoring.answers import parse_true_false
from kgprobe.scoring.relations import MIN_SUBJECTS, SINGLE_VALUED_SHARE
from kgprobe.scoring.stats import cohen_kappa, row_seed, wilson_mean_ci
from kgprobe.suites.base import (
    ITEM_SCHEMA,
    SAMPLE_SCHEMA,
    VOTE_SCHEMA,
    Headline,
    ItemSource,
    ItemsResult,
    Sampling,
    ScoringOptions,
    Suite,
    SuiteScores,
    breakdown_of,
    content_id,
    limit_groups,
    metric_row,
    table,
)
from kgprobe.scoring.claims import (
    CLAIMS_JSON_SCHEMA,
    CLAIMS_TEMPLATE_ID,
    HEURISTIC,
    check_claim,
    claims_prompt,
    heuristic_claims,
    parse_claims,
)
from kgprobe.suites.okgqa.facts import (
    CONTRADICTED,
    NOT_IN_KG,
    SUPPORTED,
    KGFacts,
    check_fact,
    factscore,
    precision,
    split_facts,
    statement,
)
from kgprobe.suites.okgqa.prompts import (
    CRITERIA,
    GEVAL_STEPS_SCHEMA,
    SUPPORT_TEMPLATE_ID,
    SYSTEM,
    answer_text,
    default_steps,
    geval_steps_template_id,
    geval_steps_text,
    geval_template_id,
    geval_text,
    parse_steps,
    support_text,
)
from kgprobe.suites.okgqa.questions import okgqa_query_id
from kgprobe.suites.settings import InputFile, JudgeName, ModelName, OutputFolder

__all__ = ["OKGQA_SAMPLE_SCHEMA", "OKGQA_VOTE_SCHEMA", "OKGQASettings", "OKGQASuite", "build_items"]

TASK = "open_qa"
#: The ``retrieval`` of the closed-book chain-of-thought items.
COT = "cot"
#: The fewest new tokens a judge's decomposition gets (a judge configured for one-word verdicts gets more here).
DECOMPOSE_TOKENS = 256
#: Alternatives per generated token a G-Eval rating asks for: the score is weighted by the probabilities of 1-5.
GEVAL_TOP_LOGPROBS = 20
#: How a G-Eval score was read (``geval_sources``): weighted by the score token's probabilities, or parsed.
LOGPROBS, PARSED = "logprobs", "parsed"
BREAKDOWN_KEYS = ("type", "subtype", "source", "retrieval")

OKGQA_SAMPLE_SCHEMA = pa.schema(list(SAMPLE_SCHEMA) + [
    ("facts", pa.list_(pa.string())), ("fact_labels", pa.list_(pa.string())), ("context_labels", pa.list_(pa.string())),
    ("precision", pa.float64()), *[(f"geval_{c}", pa.float64()) for c in CRITERIA],
    ("fact_triples", pa.list_(pa.string())), ("factscore", pa.float64()), ("fact_reasons", pa.list_(pa.string())),
    ("geval_sources", pa.list_(pa.string())),
])  # fmt: skip
OKGQA_VOTE_SCHEMA = pa.schema(list(VOTE_SCHEMA) + [
    ("precision", pa.float64()), ("facts", pa.int64()), ("supported", pa.int64()), ("contradicted", pa.int64()),
    ("not_in_kg", pa.int64()), *[(f"geval_{c}", pa.float64()) for c in CRITERIA],
    ("affirms", pa.list_(pa.string())), ("denies", pa.list_(pa.string())), ("factscore", pa.float64()),
    ("ambiguous", pa.int64()),
])  # fmt: skip


class QuestionFile(BaseModel):
    """An OKGQA-style question CSV (``question, type, placeholders, naturalness, difficulty, dbpedia_entities``)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    path: InputFile
    """The CSV file, relative to the config file."""
    limit: int | None = Field(None, ge=1)
    """Read at most this many questions, the file's first (None: all)."""


class Generator(BaseModel):
    """A generator model (a ``models`` entry's name) asked with the D.2 prompt, ``per_subtype`` questions each."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    model: ModelName
    """The name of an entry under ``models``."""
    per_subtype: int = Field(1, ge=1)
    """Prompts per question sub-type (ten sub-types); every sample the model returns is a candidate question."""


class RetrievalSettings(BaseModel):
    """G-retrieval parameters (see :class:`kgprobe.grounding.retrieval.RetrievalConfig`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    k_nodes: int = Field(5, ge=1)
    """The k of the node prizes: the k nodes most similar to the question get prizes k, k - 1, ..., 1."""
    k_edges: int = Field(5, ge=1)
    """The k of the edge prizes, as ``k_nodes`` for the verbalised edges."""
    edge_cost: float = Field(0.5, ge=0)
    """c_e, the cost of an edge in path scores and in the PCST (G-Retriever: 0.5)."""
    n_triplets: int = Field(10, ge=1)
    """Triples that triplet retrieval returns (the highest total prize of head, edge and tail)."""
    start_nodes: int = Field(3, ge=1)
    """Path retrieval: paths grow from this many highest-prize nodes."""
    beam: int = Field(8, ge=1)
    """Path retrieval: extensions kept at each length."""
    max_path_length: int = Field(3, ge=1)
    """Path retrieval: most edges of a path."""
    n_paths: int = Field(5, ge=1)
    """Path retrieval: the best paths of any length returned, one per edge set."""
    pruning: Literal["gw", "strong"] = "gw"
    """pcst_fast's pruning of the PCST subgraph: ``gw`` as G-Retriever (the default) or ``strong``."""


#: KG facts a question's claim checker holds, by default (``kg_facts``): the bundled sample's
#: questions hold at most about a hundred, a 2-hop subgraph over hubs of a 20M-triple KG 10^6.
KG_FACTS = 20_000


class OKGQASettings(BaseModel):
    """The ``suites: {okgqa: ...}`` section."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    kg: str | None = None
    """The KG (default: the queries' / first KG)."""
    templates: bool = True
    """Make questions from the Table 1 templates over KG entities of fitting types."""
    per_template: int = Field(3, ge=1)
    """Questions per template."""
    files: list[QuestionFile] = []
    """Imported question CSVs (OKGQA's own load as-is; relative paths against the config's folder)."""
    generator: Generator | None = None
    """Questions generated by a configured model with the D.2 prompt."""
    cot: bool = True
    """Also ask each question closed book with a chain-of-thought prompt (``retrieval`` = cot): the paper's
    baseline, drawn as a level line in Figure 6."""
    methods: list[Literal[RETRIEVAL_METHODS]] = list(RETRIEVAL_METHODS)
    """Retrieval methods of the grounded items."""
    retrieval: RetrievalSettings = RetrievalSettings()
    """G-retrieval parameters of the grounded items (triplets, paths, PCST subgraph)."""
    limit: int | None = Field(None, ge=1)
    """Questions per closed-book partition (None: the generation section's limit)."""
    grounded_limit: int | None = Field(None, ge=1)
    """Questions per grounded partition (each with every retrieval method)."""
    oracle_facts: int = Field(5, ge=1)
    """Facts the oracle states, verbalised from the question's clean subgraph."""
    random_facts: int = Field(3, ge=1)
    """KG-false facts the random baseline states."""
    reference_facts: int = Field(30, ge=1)
    """Clean-subgraph facts shown to G-Eval as its "Retrieval Context"."""
    kg_facts: int | None = Field(KG_FACTS, ge=1)
    """KG facts a question's claim checker holds: every triple among its subgraph's entities and their facts of
    single-valued relations, up to this many read (those touching a seed entity first, the rest in a seeded order;
    the subgraph's own triples are kept besides; None: all). A question over hub entities of a 20M-triple KG
    otherwise holds 10^6, and every one of its answers is checked against them."""
    functional_share: float = Field(SINGLE_VALUED_SHARE, gt=0, le=1)
    """A relation is single-valued in practice when this share of its heads has one tail (among ``min_subjects``
    heads at least): a claim giving such a relation another object than the KG's is contradicted."""
    min_subjects: int = Field(MIN_SUBJECTS, ge=1)
    """Heads a relation needs before its data say it is single-valued."""
    relations: InputFile | None = None
    """The KG's relation phrase file (``kgprobe init`` writes ``<config>.relations.yaml``): a user's extra phrases
    and single-valued / symmetric declarations for the claim checker (None: what the labels and data say)."""
    fact_threshold: float | None = Field(0.8, gt=0, le=1)
    """Cosine at which a claim's relation phrase (alone) reads as the closest KG relation label when no label, key
    or phrasing matches it (None: words only)."""
    judge_limit: int | None = Field(None, ge=1)
    """Answers per partition a model judge reads (those of the items with the smallest ids; None: all): a small
    CPU judge decomposes and rates a slice, the judge-free verdict still covers every answer."""
    judges: list[JudgeName] | None = None
    """Names of the scoring judges that judge zero-shot answers (None: every configured judge)."""
    grounded_judges: list[JudgeName] | None = None
    """Names of the scoring judges that judge grounded answers (None: as ``judges``); each costs a decomposition,
    four G-Eval ratings and a context check per fact for every answer at every level."""
    geval: bool = True
    """Rate answers with G-Eval's four criteria (per judge)."""
    context_check: bool = True
    """Check each fact against the retrieved context with the judge (grounded answers)."""
    embedding_cache: OutputFolder = None
    """Folder for the embedding cache per KG snapshot, relative to the config file (None: in memory only); read and
    written, so a confined config keeps it inside its folder."""


def _relations_info(con: Any) -> tuple[dict[int, str], dict[int, str]]:
    rows = con.execute("SELECT id, label, key FROM relations").fetchall()
    return {int(i): str(lab) for i, lab, _ in rows}, {int(i): str(k) for i, _, k in rows}


def build_items(questions: Sequence[Mapping[str, Any]], subgraphs: Mapping[str, Sequence[tuple[int, int, int]]],
                con: Any, settings: OKGQASettings, *, snapshot_id: str, seed: int = 0,
                config_dir: Any = None, report: dict[str, Any] | None = None,
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """Item rows and reject rows from the accepted ``questions`` (``okgqa_question_bank`` rows) and their clean
    subgraphs (query id -> triples). ``con``: the KG's DuckDB connection (labels, types, the KG's own triples).
    ``report`` (when given) receives ``kg_facts_capped``: the questions whose checker KG ``kg_facts`` cut."""
    from kgprobe.sql import load_sql

    ent_labels = {int(i): str(lab) for i, lab in con.execute("SELECT id, label FROM entities").fetchall()}
    rel_labels, rel_keys = _relations_info(con)
    functional = frozenset(int(r) for r, _ in con.execute(load_sql("okgqa/functional_relations"),
                                                          {"min_share": settings.functional_share,
                                                           "min_subjects": settings.min_subjects}).fetchall())
    declared: dict[str, dict[str, Any]] = {}
    if settings.relations:
        from pathlib import Path

        from kgprobe.scoring.relations import read_phrase_file

        declared = read_phrase_file(Path(config_dir or ".") / settings.relations)
        by_key = {k: r for r, k in rel_keys.items()}
        functional = frozenset({r for r in functional if declared.get(rel_keys[r], {}).get("single_valued", True)}
                               | {by_key[k] for k, d in declared.items() if d.get("single_valued") and k in by_key})
    retrieval = settings.retrieval.model_dump()
    cache = None
    if settings.embedding_cache:
        from pathlib import Path

        cache = str(Path(config_dir or ".") / settings.embedding_cache)
    rows: list[dict[str, Any]] = []
    rejects: list[dict[str, Any]] = []
    capped = 0
    pools: dict[str, list[int]] = {}  # type -> its seeded pool of false objects, the same for every question
    for q in questions:
        if q.get("rejected") or not q.get("seeds"):
            rejects.append({"question_id": q["question_id"], "question": q["question"],
                            "reason": q.get("rejected") or "no seed entity"})
            continue
        qid = okgqa_query_id(q["question_id"])
        sub = sorted({tuple(map(int, t)) for t in subgraphs.get(qid, ())})
        if not sub:
            rejects.append({"question_id": q["question_id"], "question": q["question"],
                            "reason": f"query {qid} has no (or an empty) PPR subgraph; materialize queries with "
                                      "okgqa_questions on and the subgraph stage"})
            continue
        nodes = sorted({h for h, _, _ in sub} | {t for _, _, t in sub})
        seeds = [int(s) for s in q["seeds"]]
        # the KG about the subgraph's entities: every triple among them, and their functional facts (bounded)
        about = con.execute(load_sql("okgqa/triples_of_heads"), {
            "ids": nodes, "functional": sorted(functional), "seeds": seeds, "seed": int(seed),
            "limit": settings.kg_facts + 1 if settings.kg_facts is not None else None}).fetchall()
        if settings.kg_facts is not None and len(about) > settings.kg_facts:
            about = about[: settings.kg_facts]
            capped += 1
        node_set = set(nodes)
        kg_triples = set(sub) | {(int(h), int(r), int(t)) for h, r, t in about}
        kg_ents = node_set | {t for _, _, t in kg_triples}
        oracle, random_text_facts, distractors = _reference_facts(con, sub, kg_triples, kg_ents, seeds, ent_labels,
                                                                  rel_labels, rel_keys, functional, settings, seed,
                                                                  pools)
        kg_ents |= set(distractors)
        kg = KGFacts(entities={e: ent_labels.get(e, str(e)) for e in kg_ents},
                     relations={r: rel_labels[r] for r in {t[1] for t in kg_triples}},
                     triples=frozenset(kg_triples), functional=frozenset(functional & {t[1] for t in kg_triples}),
                     relation_keys={r: rel_keys[r] for r in {t[1] for t in kg_triples}})
        if declared:
            kg = kg.with_relation_settings(declared)
        # a fact is stated only when it reads back as itself (one sentence) with the verdict it is meant to get
        oracle_facts = [f for f in (kg.verbalise(t) for t in oracle)
                        if _one_fact(f) and check_fact(f, kg).label == SUPPORTED][: settings.oracle_facts]
        random_facts = [f for f in random_text_facts if _one_fact(f) and check_fact(f, kg).label == CONTRADICTED]
        if not oracle_facts:
            rejects.append({"question_id": q["question_id"], "question": q["question"],
                            "reason": "no fact of its subgraph can be stated unambiguously (labels do not link)"})
            continue
        reference = [kg.verbalise(t) for t in _order(sub, seeds, seed)[: settings.reference_facts]]
        evidence = {
            "snapshot_id": snapshot_id, "question_id": q["question_id"], "query_id": qid, "seeds": seeds,
            "provenance": q.get("provenance"), "placeholders": q.get("placeholders"), "kg": kg.to_evidence(),
            "oracle_facts": oracle_facts, "random_facts": random_facts, "reference": reference,
            "retrieval": retrieval, "embedding_cache": cache, "fact_threshold": settings.fact_threshold,
            "geval": settings.geval, "context_check": settings.context_check, "judges": settings.judges,
            "judge_limit": settings.judge_limit,
            "grounded_judges": settings.grounded_judges if settings.grounded_judges is not None else settings.judges,
        }
        ev = json.dumps(evidence, separators=(",", ":"), ensure_ascii=False)
        oracle_text = "\n".join(oracle_facts)
        random_text = "\n".join(random_facts)
        closed = [("closed", "none")] + ([("closed", COT)] if settings.cot else [])
        for setting, method in closed + [("grounded", m) for m in settings.methods]:
            rows.append({
                "item_id": content_id(snapshot_id, "okgqa", q["question_id"], method),
                "suite": "okgqa", "task": TASK, "answer_format": "open", "question": q["question"],
                "expected": oracle_text, "group_id": q["question_id"],
                "breakdown": {"type": q.get("type") or "", "subtype": q.get("subtype") or "",
                              "source": q.get("source") or "", "retrieval": method},
                "evidence": ev, "question_id": q["question_id"], "query_id": qid, "setting": setting,
                "retrieval": method, "qtype": q.get("type") or "", "subtype": q.get("subtype") or "",
                "source": q.get("source") or "", "oracle_answer": oracle_text, "random_answer": random_text,
            })  # fmt: skip
    if report is not None:
        report["kg_facts_capped"] = capped
    return rows, rejects


def _order(triples: Sequence[tuple[int, int, int]], seeds: Sequence[int], seed: int) -> list[tuple[int, int, int]]:
    # facts about the seeds first, then the rest, each in a seeded order
    s = set(seeds)
    return sorted(triples, key=lambda t: (not (t[0] in s or t[2] in s), content_id(seed, t)))


#: Entities of one type the random baseline's false objects are drawn from (a seeded sample of a larger type).
_TYPE_POOL = 2_000


def _reference_facts(con: Any, sub: Sequence[tuple[int, int, int]], kg_triples: set[tuple[int, int, int]],
                     kg_ents: set[int], seeds: Sequence[int], ent_labels: Mapping[int, str],
                     rel_labels: Mapping[int, str], rel_keys: Mapping[int, str], functional: frozenset[int],
                     settings: OKGQASettings, seed: int, pools: dict[str, list[int]],
                     ) -> tuple[list[tuple[int, int, int]], list[str], list[int]]:  # fmt: skip
    """The oracle's triples (from the clean subgraph, seeds first) and the random baseline's KG-false statements:
    a functional fact of a subgraph entity with its object replaced by another entity of the object's type.
    ``pools`` (type -> its seeded pool of entities) holds the pools read so far and receives the missing ones: a
    pool depends on the type and the seed only, and reading one ranks every entity of its type (at 20M triples,
    about a second a question when each question read its own)."""
    from kgprobe.sql import load_sql

    oracle = _order(sub, seeds, seed)[: settings.oracle_facts * 2]
    # filtered before the seeded order (the same order: a sort by a key): a hub's KG holds 10^5 triples, few functional
    candidates = _order(sorted(t for t in kg_triples if t[1] in functional and t[0] != t[2]), seeds, seed)
    objects = sorted({t[2] for t in candidates})
    types: dict[int, list[str]] = {}
    if objects:
        for e, typ in con.execute(load_sql("okgqa/entity_types_of"), {"ids": objects}).fetchall():
            types.setdefault(int(e), []).append(str(typ))
    missing = sorted({typ for ts in types.values() for typ in ts} - pools.keys())
    if missing:
        for typ in missing:
            pools[typ] = []
        for e, typ in con.execute(load_sql("okgqa/entities_of_types"),
                                  {"types": missing, "seed": int(seed), "per_type": _TYPE_POOL}).fetchall():
            pools[str(typ)].append(int(e))
    # the objects each (head, relation) already has, read once: a scan of kg_triples per candidate made a question
    # on a hub's subgraph cost candidates x triples
    objects_of: dict[tuple[int, int], set[int]] = {}
    for hh, rr, t in kg_triples:
        objects_of.setdefault((hh, rr), set()).add(t)
    out: list[str] = []
    used: list[int] = []
    for h, r, x in candidates:
        if len(out) >= settings.random_facts:
            break
        options = sorted({y for typ in types.get(x, []) for y in pools.get(typ, [])} - {x, h}
                         - objects_of.get((h, r), set()))
        if not options:
            continue
        y = min(options, key=lambda y: content_id(seed, "random", h, r, x, y))
        out.append(statement(ent_labels.get(h, str(h)), rel_labels[r], ent_labels.get(y, str(y))))
        used.append(y)
    return oracle, out, used


def _evidence(item: Mapping[str, Any]) -> dict[str, Any]:
    ev = item.get("evidence")
    return json.loads(ev) if isinstance(ev, str) else dict(ev or {})


class OKGQASuite(Suite):
    """OKGQA (Sui et al.): open questions, zero-shot and with retrieved KG facts, checked fact by fact against the KG."""

    name = "okgqa"
    title = "OKGQA: open-ended questions, KG-grounded and perturbed"
    paper = ("Sui et al., Can Knowledge Graphs Make Large Language Models More Trustworthy? An Empirical Study Over "
             "Open-ended Question Answering")
    Settings = OKGQASettings
    sampling = Sampling(n=1, temperature=0.0, top_p=1.0)
    headline = Headline(TASK, "factscore", "FActScore (supported / all atomic facts)", judge=HEURISTIC)
    upstream = ("okgqa_question_bank", "ppr_subgraphs")
    groundable = True

    def __init__(self) -> None:
        self._kg_cache: dict[str, KGFacts] = {}

    # ------------------------------------------------------------------------------------------------- items
    def items(self, source: ItemSource) -> ItemsResult:
        """Items from the ``okgqa_question_bank`` upstream table and the clean ``ppr_subgraphs`` of their queries."""
        s = source.settings
        questions = source.upstream["okgqa_question_bank"].to_pylist() if "okgqa_question_bank" in source.upstream else []
        subgraphs: dict[str, list[tuple[int, int, int]]] = {}
        if "ppr_subgraphs" in source.upstream:
            for r in source.upstream["ppr_subgraphs"].select(["query_id", "triples"]).to_pylist():
                if str(r["query_id"]).startswith("okgqa-"):
                    subgraphs[r["query_id"]] = [(t["head"], t["relation"], t["tail"]) for t in r["triples"]]
        built: dict[str, Any] = {}
        rows, rejects = build_items(questions, subgraphs, source.con, s, snapshot_id=source.snapshot_id,
                                    seed=source.seed, config_dir=source.config_dir, report=built)
        items = table(rows, _schema()) if rows else table([], _schema())
        reject_table = pa.Table.from_pylist(rejects) if rejects else pa.table({"reason": pa.array([], pa.string())})
        counts: dict[str, int] = {}
        for r in rows:
            if r["setting"] == "closed":
                counts[r["subtype"]] = counts.get(r["subtype"], 0) + 1
        return ItemsResult(items=items, rejects=reject_table,
                           metadata={"questions_by_subtype": [{"subtype": k, "questions": v} for k, v in sorted(counts.items())],
                                     "rejected_questions": len(rejects),
                                     "kg_facts_capped_questions": built["kg_facts_capped"], "kg_facts": s.kg_facts})

    def select(self, items: Sequence[Mapping[str, Any]], *, limit: int | None = None, setting: str = "closed",
               **options: Any) -> list[Mapping[str, Any]]:  # fmt: skip
        """The closed-book items (``setting="closed"``: zero-shot and chain-of-thought) or the retrieval items
        (``"grounded"``: every method of a question), of the first ``limit`` questions (see :meth:`Suite.select`)."""
        chosen = [it for it in items if (it["retrieval"] in RETRIEVAL_METHODS) == (setting == "grounded")]
        return limit_groups(chosen, limit, group=lambda it: str(it["group_id"]), item_id=lambda it: str(it["item_id"]),
                            unit="questions", prefer=options.get("prefer") or ())

    def context_query(self, item: Mapping[str, Any]) -> str:
        """The question's query: its PPR subgraph, clean or perturbed, is what retrieval searches."""
        return str(item["query_id"])

    def grounded_context(self, items: Sequence[Mapping[str, Any]], subgraphs: Mapping[str, Sequence[tuple]], *,
                         entity_labels: Mapping[int, str], relation_labels: Mapping[int, str],
                         embedder: Any = None) -> dict[str, str]:  # fmt: skip
        """Each item's retrieved context: its method (triplets, paths, subgraph) run on its question's perturbed
        subgraph, verbalised; embeddings cached per KG snapshot when ``embedding_cache`` is set."""
        if not items:
            return {}
        if embedder is None:
            from kgprobe.embedding import Embedder

            embedder = Embedder()
        ev0 = _evidence(items[0])
        retriever = GraphRetriever(embedder, entity_labels, relation_labels,
                                   config=RetrievalConfig(**(ev0.get("retrieval") or {})))
        cache, snapshot = ev0.get("embedding_cache"), str(ev0.get("snapshot_id") or "")
        if cache:
            retriever.load_cache(cache, snapshot)
        out = {}
        for it in items:
            triples = subgraphs.get(self.context_query(it), ())
            out[str(it["item_id"])] = retriever.retrieve(str(it["question"]), list(triples), str(it["retrieval"])).text
        if cache:
            retriever.save_cache(cache, snapshot)
        return out

    def prompts(self, items: Sequence[Mapping[str, Any]], context: Mapping[str, str] | None = None) -> list[Prompt]:
        """D.1 per item: zero-shot for closed items (with the chain-of-thought trigger for ``cot`` ones), with
        ``context[item_id]`` for grounded ones. The reference models read ``gold``: the oracle states the clean
        subgraph's facts, random the KG-false ones."""
        out = []
        for it in items:
            grounded = it["retrieval"] in RETRIEVAL_METHODS and context is not None
            knowledge = context[str(it["item_id"])] if grounded else None
            template_id, text = answer_text(str(it["question"]), knowledge, cot=it["retrieval"] == COT)
            gold = open_gold(str(it["oracle_answer"]), [str(it["random_answer"])] if it.get("random_answer") else [])
            out.append(Prompt(item_id=str(it["item_id"]), text=text, template_id=template_id, gold=gold,
                              answer_kind=OPEN_KIND, system=SYSTEM))
        return out

    # ------------------------------------------------------------------------------------------------- score
    def _kg(self, item: Mapping[str, Any]) -> KGFacts:
        key = str(item["evidence"])
        if key not in self._kg_cache:
            if len(self._kg_cache) > 4096:
                self._kg_cache.clear()
            self._kg_cache[key] = KGFacts.from_evidence(_evidence(item)["kg"])
        return self._kg_cache[key]

    def _check(self, facts: Sequence[Any], item: Mapping[str, Any], embedder: Any) -> list[Any]:
        """Verdicts of heuristic facts (sentences) or of a judge's claims."""
        threshold = _evidence(item).get("fact_threshold")
        kg = self._kg(item)
        opts = {} if embedder is None or not threshold else {"embedder": embedder, "threshold": float(threshold)}
        return [check_fact(f, kg, **opts) if isinstance(f, str) else check_claim(f, kg, **opts) for f in facts]

    def validate(self, tables: Mapping[str, pa.Table], *, name: str) -> list[Any]:
        from kgprobe.scoring.quality import validate_metrics, validate_votes

        return [*validate_votes(tables["votes"], name=f"{name} votes"),
                *validate_metrics(tables["metrics"], name=f"{name} metrics")]

    def score(self, items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], *, model: str,
              perturbation: str = "none", scoring: ScoringOptions = ScoringOptions()) -> SuiteScores:  # fmt: skip
        """Fact verdicts against the KG per judge ("" = sentences, no model; each judge: its decomposition), the
        judge's G-Eval ratings and its check of each fact against the retrieved context; votes per item and the
        metric rows of the module docstring."""
        by_id = {str(it["item_id"]): it for it in items}
        missing = sorted({str(r["item_id"]) for r in responses} - set(by_id))
        if missing:
            raise ValueError(f"{len(missing)} response(s) of model {model!r} answer items that are not among the "
                             f"okgqa items (first: {missing[:3]}); re-materialize the responses")
        ok = [r for r in responses if r.get("error") is None and r.get("text") is not None]
        embedder = getattr(scoring, "embedder", None)
        samples: list[dict[str, Any]] = []
        agreement: list[dict[str, Any]] = []
        judged = self._judge_slice(ok, by_id)
        for judge_name, spec in [(HEURISTIC, None)] + [(j.name, j) for j in self._judges(items, responses, scoring)]:
            read = ok if spec is None else judged
            facts_of = self._decompose(read, by_id, spec, scoring)
            geval = self._geval(read, by_id, spec, scoring) if spec is not None else {}
            verdicts = {r["response_id"]: self._check(facts_of[r["response_id"]], by_id[str(r["item_id"])], embedder)
                        for r in ok if facts_of.get(r["response_id"]) is not None}
            context = self._context_check(read, by_id, spec, scoring, facts_of) if spec is not None else {}
            kg_lab, ctx_lab = [], []
            read_ids = {r["response_id"] for r in read}
            for r in responses:
                rid = r["response_id"]
                if spec is not None and rid not in read_ids and r.get("error") is None:
                    continue  # beyond the judge's slice: not judged, not counted
                v = verdicts.get(rid)
                c = context.get(rid)
                if v is not None and c is not None:
                    for fv, cl in zip(v, c):
                        if fv.decidable and cl != "unknown":
                            kg_lab.append("supported" if fv.label == SUPPORTED else "not supported")
                            ctx_lab.append("supported" if cl == "true" else "not supported")
                samples.append({
                    "response_id": rid, "item_id": str(r["item_id"]), "model": r["model"], "perturbation": perturbation,
                    "sample_index": int(r["sample_index"]), "judge": judge_name, "text": r.get("text"),
                    "error": r.get("error"), "label": _label(v), "judge_text": None, "judge_error": None,
                    "judge_response_id": None, "facts": [_fact_text(f) for f in v] if v is not None else None,
                    "fact_labels": [f.label for f in v] if v is not None else None, "context_labels": c,
                    "precision": precision(v) if v is not None else None,
                    **{f"geval_{k}": geval.get(rid, {}).get(k, (None,))[0] for k in CRITERIA},
                    "geval_sources": [f"{k}:{geval[rid][k][1]}" for k in CRITERIA if k in geval.get(rid, {})],
                    "fact_triples": ([_triple_text(self._kg(by_id[str(r["item_id"])]), f.ids) for f in v]
                                     if v is not None else None),
                    "factscore": factscore(v) if v is not None else None,
                    "fact_reasons": [f.reason for f in v] if v is not None else None,
                })  # fmt: skip
            if spec is not None and kg_lab:
                agreement.append({"model": model, "perturbation": perturbation, "judge_a": f"{judge_name}: KG",
                                  "judge_b": f"{judge_name}: retrieved context", "n": len(kg_lab),
                                  "agreement": sum(a == b for a, b in zip(kg_lab, ctx_lab)) / len(kg_lab),
                                  "kappa": cohen_kappa(kg_lab, ctx_lab)})
        votes = _votes(samples, by_id, model, perturbation)
        return SuiteScores(samples=samples, votes=votes,
                           metrics=self.metrics(votes, by_id, model=model, perturbation=perturbation,
                                                confidence=scoring.confidence, resamples=scoring.resamples,
                                                seed=scoring.seed, fact_rows=samples),
                           agreement=agreement, sample_schema=OKGQA_SAMPLE_SCHEMA, vote_schema=OKGQA_VOTE_SCHEMA)

    def _judges(self, items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]],
                scoring: ScoringOptions) -> list[ModelSpec]:  # fmt: skip
        """The scoring judges this partition's answers get: the settings' ``judges`` (zero-shot) or
        ``grounded_judges`` (retrieval items), all when unset."""
        answered = {str(r["item_id"]) for r in responses}
        mine = [it for it in items if str(it["item_id"]) in answered] or list(items)
        if not mine:
            return list(scoring.judges)
        grounded = any(it["retrieval"] in RETRIEVAL_METHODS for it in mine)
        names = _evidence(mine[0]).get("grounded_judges" if grounded else "judges")
        return list(scoring.judges) if names is None else [j for j in scoring.judges if j.name in set(names)]

    def _judge_slice(self, ok: Sequence[Mapping[str, Any]],
                     by_id: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:  # fmt: skip
        """The answers a model judge reads: those of the ``judge_limit`` items with the smallest ids (all without
        a limit)."""
        if not ok:
            return []
        limit = _evidence(by_id[str(ok[0]["item_id"])]).get("judge_limit")
        if not limit:
            return list(ok)
        keep = set(sorted({str(r["item_id"]) for r in ok})[: int(limit)])
        return [r for r in ok if str(r["item_id"]) in keep]

    def _decompose(self, ok: Sequence[Mapping[str, Any]], by_id: Mapping[str, Mapping[str, Any]],
                   spec: ModelSpec | None, scoring: ScoringOptions) -> dict[str, list[Any] | None]:  # fmt: skip
        """Each answer's atomic facts: without a judge, the heuristic split (fact sentences); with one, its claims
        (validated JSON; None for an answer whose reply does not validate: unknown, not zero facts)."""
        if spec is None:
            return {r["response_id"]: _heuristic_facts(r["text"]) for r in ok}
        if scoring.judge is None:
            raise ValueError("suite okgqa: judges need a judge runner in ScoringOptions")
        from dataclasses import replace

        # a list of claims needs room that a yes/no verdict does not; the judge's other settings stay
        spec = replace(spec, params=replace(spec.params, max_tokens=max(spec.params.max_tokens, DECOMPOSE_TOKENS)))
        prompts = []
        for r in ok:
            item = by_id[str(r["item_id"])]
            if not _heuristic_facts(r["text"]):
                continue  # no sentence of three words ("Yes."): no fact to split, no judge call
            gold = _claims_json(_evidence(item)["oracle_facts"], self._kg(item)) \
                if _is_oracle_answer(item, r["text"]) else None
            prompts.append(Prompt(item_id=r["response_id"], text=claims_prompt(r["text"]),
                                  template_id=CLAIMS_TEMPLATE_ID, gold=gold, response_format=CLAIMS_JSON_SCHEMA))
        verdicts = scoring.judge(spec, prompts) if prompts else {}
        out: dict[str, list[Any] | None] = {}
        for r in ok:
            v = verdicts.get(r["response_id"])
            if not _heuristic_facts(r["text"]):
                out[r["response_id"]] = []
            else:
                out[r["response_id"]] = parse_claims(v["text"], r["text"]) if v and v.get("error") is None else None
        return out

    def _geval_steps(self, spec: ModelSpec, scoring: ScoringOptions) -> dict[str, list[str] | None]:
        """The judge's evaluation steps per criterion (G-Eval's auto chain-of-thought): asked once per judge and
        criterion through the judge runner, so the response store keeps them and every later rating reuses them;
        None for a criterion whose reply holds no steps (its ratings go without)."""
        from dataclasses import replace

        spec = replace(spec, params=replace(spec.params, max_tokens=max(spec.params.max_tokens, DECOMPOSE_TOKENS)))
        prompts = []
        for c in CRITERIA:
            system, text = geval_steps_text(c)
            prompts.append(Prompt(item_id=f"geval-steps|{c}", text=text, template_id=geval_steps_template_id(c),
                                  gold=json.dumps({"steps": default_steps(c)}), system=system,
                                  response_format=GEVAL_STEPS_SCHEMA))
        replies = scoring.judge(spec, prompts)
        out = {}
        for c in CRITERIA:
            v = replies.get(f"geval-steps|{c}")
            out[c] = parse_steps(v.get("text")) if v and v.get("error") is None else None
        return out

    def _geval(self, ok: Sequence[Mapping[str, Any]], by_id: Mapping[str, Mapping[str, Any]], spec: ModelSpec,
               scoring: ScoringOptions) -> dict[str, dict[str, tuple[float, str]]]:  # fmt: skip
        """G-Eval as its paper runs it: per answer and criterion, the judge's stored evaluation steps, then a rating
        1-5 read as the probability-weighted mean of the score token's alternatives where the backend returns
        log-probabilities, else the parsed score. Per response id and criterion: (score rescaled to 0-1, source)."""
        prompts = []
        steps: dict[str, list[str] | None] | None = None
        for r in ok:
            item = by_id[str(r["item_id"])]
            ev = _evidence(item)
            if not ev.get("geval", True):
                continue
            if steps is None:
                steps = self._geval_steps(spec, scoring)
            own = _is_oracle_answer(item, r["text"])
            for c in CRITERIA:
                system, text = geval_text(c, str(item["question"]), "\n".join(ev.get("reference") or []), r["text"],
                                          steps[c])
                prompts.append(Prompt(item_id=f"{r['response_id']}|geval|{c}", text=text,
                                      template_id=geval_template_id(c, steps=bool(steps[c])), gold="5" if own else None,
                                      system=system, top_logprobs=GEVAL_TOP_LOGPROBS))
        verdicts = scoring.judge(spec, prompts) if prompts else {}
        out: dict[str, dict[str, tuple[float, str]]] = {}
        weighted = 0
        for key, v in verdicts.items():
            rid, _, c = key.split("|")
            if v.get("error") is not None:
                continue
            score = _weighted_score(v.get("logprobs"), v.get("text"))
            source = LOGPROBS
            if score is None:
                score, source = _read_score(v.get("text")), PARSED
            if score is not None:
                out.setdefault(rid, {})[c] = ((score - 1.0) / 4.0, source)
                weighted += source == LOGPROBS
        if any(out.values()):  # (a judge that rates nothing here says nothing)
            scoring.log(f"okgqa G-Eval by {spec.name}: {weighted} of {sum(len(v) for v in out.values())} ratings "
                        "weighted by token probabilities, the rest parsed")
        return out

    def _context_check(self, ok: Sequence[Mapping[str, Any]], by_id: Mapping[str, Mapping[str, Any]],
                       spec: ModelSpec, scoring: ScoringOptions,
                       facts_of: Mapping[str, list[str] | None]) -> dict[str, list[str]]:  # fmt: skip
        prompts, plan = [], {}
        for r in ok:
            item = by_id[str(r["item_id"])]
            context = r.get("context")
            facts = facts_of.get(r["response_id"])
            if not context or not facts or not _evidence(item).get("context_check", True):
                continue
            own = _is_oracle_answer(item, r["text"])
            lines = {_norm_fact(line) for line in str(context).splitlines() for line in line.split("; ")}
            plan[r["response_id"]] = len(facts)
            for i, claim in enumerate(facts):
                f = _fact_text(claim)
                gold = ("True" if _norm_fact(f) in lines else "False") if own else None
                prompts.append(Prompt(item_id=f"{r['response_id']}|support|{i}", text=support_text(str(context), f),
                                      template_id=SUPPORT_TEMPLATE_ID, gold=gold))
        verdicts = scoring.judge(spec, prompts) if prompts else {}
        out = {}
        for rid, n in plan.items():
            labels = []
            for i in range(n):
                v = verdicts.get(f"{rid}|support|{i}")
                label = parse_true_false(v["text"]) if v and v.get("error") is None else "unknown"
                labels.append(label if label in ("true", "false") else "unknown")
            out[rid] = labels
        return out

    def metrics(self, votes: Sequence[Mapping[str, Any]], items: Mapping[str, Mapping[str, Any]], *, model: str,
                perturbation: str, confidence: float = 0.95, resamples: int = 1000, seed: int = 0,
                fact_rows: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:  # fmt: skip
        """Per extractor (``judge``) and cell (overall, each breakdown value): FActScore (Wilson interval of the
        mean over answers), fact precision among decidable facts (Wilson of the mean over answers), the shares of facts not in
        the KG and with an ambiguous mention (Wilson) and the G-Eval criteria (Wilson of the mean)."""
        facts_by: dict[tuple[str, str], list[str]] = {}
        reasons_by: dict[tuple[str, str], list[str]] = {}
        for s in fact_rows:
            if s.get("fact_labels"):
                facts_by.setdefault((s["judge"], s["item_id"]), []).extend(s["fact_labels"])
                reasons_by.setdefault((s["judge"], s["item_id"]), []).extend(s.get("fact_reasons") or [])
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for v in votes:
            groups.setdefault(v["judge"], []).append(v)
        out = []
        for judge, rows in sorted(groups.items()):
            rows = sorted(rows, key=lambda r: r["item_id"])
            # chain-of-thought answers are a baseline of their own: only in their retrieval = cot cell
            plain = [r for r in rows if items[r["item_id"]].get("retrieval") != COT]
            cells: dict[tuple[tuple[str, str], ...], list[Mapping[str, Any]]] = {(): plain} if plain or not rows else {}
            for r in rows:
                if items[r["item_id"]].get("retrieval") == COT:
                    cells.setdefault((("retrieval", COT),), []).append(r)
                    continue
                for key, value in sorted(breakdown_of(items[r["item_id"]]).items()):
                    if key in BREAKDOWN_KEYS:
                        cells.setdefault(((key, value),), []).append(r)
            for cell, members in cells.items():
                common = dict(model=model, perturbation=perturbation, suite=self.name, task=TASK, judge=judge)
                bd = dict(cell)
                scored = [m for m in members if m.get("factscore") is not None and not math.isnan(m["factscore"])]
                out.append(_mean_row("factscore", [m["factscore"] for m in scored], [m["item_id"] for m in scored],
                                     bd, confidence, resamples, seed, **common))
                decided = [m for m in members if m["precision"] is not None and not math.isnan(m["precision"])]
                out.append(_mean_row("fact_precision", [m["precision"] for m in decided],
                                     [m["item_id"] for m in decided], bd, confidence, resamples,
                                     row_seed(seed, model, perturbation, judge, "fact_precision", sorted(bd.items())),
                                     **common))
                flags, ambiguous, ids = [], [], []
                for m in members:
                    labels = facts_by.get((judge, m["item_id"]), [])
                    flags += [lab == NOT_IN_KG for lab in labels]
                    ambiguous += [why == "ambiguous" for why in reasons_by.get((judge, m["item_id"]), [])]
                    if labels:
                        ids.append(m["item_id"])
                out.append(metric_row(metric="not_in_kg_share", breakdown=bd, flags=flags, item_ids=ids,
                                      higher_is_better=False, confidence=confidence, **common))
                out.append(metric_row(metric="ambiguous_share", breakdown=bd, flags=ambiguous, item_ids=ids,
                                      higher_is_better=False, confidence=confidence, **common))
                if judge != HEURISTIC:
                    for c in CRITERIA:
                        rated = [m for m in members if m.get(f"geval_{c}") is not None]
                        if rated or not cell:
                            out.append(_mean_row(f"geval_{c}", [m[f"geval_{c}"] for m in rated],
                                                 [m["item_id"] for m in rated], bd, confidence, resamples,
                                                 row_seed(seed, model, perturbation, judge, c, sorted(bd.items())),
                                                 **common))
        return out

    # ------------------------------------------------------------------------------------------------- report
    def report(self, ctx: Any, metrics: Sequence[Mapping[str, Any]], *, agreement: Sequence[Mapping[str, Any]] = (),
               similarity: Sequence[Mapping[str, Any]] = ()) -> tuple[Any, dict[str, bytes]]:  # fmt: skip
        """OKGQA's section: fact precision and G-Eval per model, retrieval method and perturbation level, the
        Figure 6 curves beside ATS / SC2D / SD2, and the KG-vs-context agreement."""
        from kgprobe.suites.okgqa.report import section

        return section(ctx, [m for m in metrics if m.get("suite") == self.name], agreement, similarity)


def _schema() -> pa.Schema:
    own = [("question_id", pa.string()), ("query_id", pa.string()), ("setting", pa.string()),
           ("retrieval", pa.string()), ("qtype", pa.string()), ("subtype", pa.string()), ("source", pa.string()),
           ("oracle_answer", pa.string()), ("random_answer", pa.string())]
    return pa.schema(list(ITEM_SCHEMA) + own)


def _is_oracle_answer(item: Mapping[str, Any], text: str | None) -> bool:
    return text is not None and " ".join(text.split()) == " ".join(str(item["oracle_answer"]).split())


def _norm_fact(text: str) -> str:
    return " ".join(text.strip().rstrip(".").split()).casefold()


#: A rating scale's bounds, never a rating: "out of 5", "/5", "3 of 5", "(of 5)", "on a scale of 1 to 5", "from 1 to 5",
#: "between 1 and 5", "1-5" (the rating stays: "4/5" and "4 out of 5" read 4).
_SCALE = re.compile(
    r"(?:\bout\s+of|\d\s+of|\(\s*of|/)\s*(\d+)(?![\d.]*\d)"
    r"|(?:\bscale\s+(?:of\s+|from\s+)?|\bfrom\s+|\bbetween\s+|\branging\s+from\s+|\()(\d+)\s*(?:to|and|-|–)\s*(\d+)",
    re.IGNORECASE)
_FIELD = re.compile(r"\b(?:score|rating|rated|grade)\s*[:=]?\s*\**\s*(\d+(?:\.\d+)?)(?![\d.]*\d)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.]*\d)")


def _score_match(text: str | None, low: int = 1, high: int = 5) -> tuple[float, int] | None:
    """(score, position in ``text``) of a G-Eval rating: the number after a "Score:" or "Rating:" field, else the
    last number in [low, high] that is not a bound of the rating scale ("I would rate this 3 out of 5." reads 3,
    "On a scale of 1 to 5, I would give it a 4." reads 4); None without one."""
    text = text or ""
    bounds = {m.start(g) for m in _SCALE.finditer(text) for g in (1, 2, 3) if m.group(g) is not None}
    field_ = _FIELD.search(text)
    if field_ and field_.start(1) not in bounds and low <= float(field_.group(1)) <= high:
        return float(field_.group(1)), field_.start(1)
    found = [(float(m.group(0)), m.start()) for m in _NUMBER.finditer(text) if m.start() not in bounds]
    found = [f for f in found if low <= f[0] <= high]
    return found[-1] if found else None


def _read_score(text: str | None, low: int = 1, high: int = 5) -> float | None:
    """A G-Eval rating: the number after a "Score:" field, else the last number in [low, high] ("On a scale of 1
    to 5, I would give it a 4." reads 4); None without one."""
    match = _score_match(text, low, high)
    return match[0] if match else None


def _weighted_score(logprobs: str | None, text: str | None, low: int = 1, high: int = 5) -> float | None:
    """G-Eval's score: the mean of the integers ``low``-``high`` weighted by their probabilities at the token that
    holds the reply's score (:func:`_score_match`), from the backend's top alternatives (``logprobs`` JSON, see
    :attr:`kgprobe.generation.records.Completion.logprobs`); None without log-probabilities, without a score, or
    when no alternative there is a score."""
    match = _score_match(text, low, high)
    if not logprobs or match is None:
        return None
    try:
        tokens = json.loads(logprobs)
    except (TypeError, json.JSONDecodeError):
        return None
    at = None
    if "".join(str(t[0]) for t in tokens) == text:
        offset = 0
        for k, (token, _) in enumerate(tokens):
            if offset <= match[1] < offset + len(token):
                at = k
                break
            offset += len(token)
    else:  # decoded tokens that do not spell the text: the last token that is the score itself
        wanted = f"{match[0]:g}"
        at = next((k for k in range(len(tokens) - 1, -1, -1) if str(tokens[k][0]).strip() == wanted), None)
    if at is None:
        return None
    weights: dict[int, float] = {}
    for alt, lp in tokens[at][1]:
        alt = str(alt).strip()
        if alt.isdigit() and low <= int(alt) <= high:
            weights[int(alt)] = weights.get(int(alt), 0.0) + math.exp(float(lp))
    total = sum(weights.values())
    return sum(v * p for v, p in weights.items()) / total if total > 0 else None


def _one_fact(fact: str) -> bool:
    """Whether a stated fact reads back as itself: one heuristic fact of at least three words."""
    return split_facts(fact) == [fact] and len(fact.split()) >= 3


def _heuristic_facts(text: str | None) -> list[str]:
    """The heuristic facts of an answer: :func:`split_facts` parts of at least three words (a bare "Yes." states
    none)."""
    return [f for f in split_facts(text) if len(f.split()) >= 3]


def _fact_text(fact: Any) -> str:
    """A verdict's, claim's or sentence's fact text."""
    if isinstance(fact, str):
        return fact
    text = getattr(fact, "fact", "") or ""
    claim = getattr(fact, "claim", fact)
    if not text and claim is not None and hasattr(claim, "subject"):
        text = " ".join(x for x in ("not" if claim.negated else "", claim.subject, claim.relation, claim.object) if x)
    return text


def _claims_json(facts: Sequence[str], kg: KGFacts) -> str:
    """The reply a perfect judge writes for ``facts`` (the oracle's fact sentences)."""
    out = []
    for f in facts:
        for c in heuristic_claims(f, kg)[:1]:
            out.append({"fact": f, "subject": c.subject, "relation": c.relation, "object": c.object,
                        "negated": c.negated})
    return json.dumps({"facts": out}, ensure_ascii=False)


def _label(verdicts: Sequence[Any] | None) -> str:
    if verdicts is None:
        return "unknown"
    p = precision(verdicts)
    return "unknown" if p is None else ("yes" if p == 1.0 else "no")


def _mean_row(metric: str, values: Sequence[float], item_ids: Sequence[str], breakdown: Mapping[str, str],
              confidence: float, resamples: int, seed: int, **common: Any) -> dict[str, Any]:  # fmt: skip
    if values:
        low, high = wilson_mean_ci(values, confidence=confidence)  # per-answer scores lie in [0, 1]
        value = float(sum(values) / len(values))
    else:
        low = high = value = math.nan
    return {**common, "metric": metric, "breakdown": dict(breakdown),
            "higher_is_better": True, "n": len(values), "value": value, "ci_low": low, "ci_high": high,
            "interval": "wilson_mean", "item_ids": list(item_ids)}


def _votes(samples: Sequence[Mapping[str, Any]], items: Mapping[str, Mapping[str, Any]], model: str,
           perturbation: str) -> list[dict[str, Any]]:  # fmt: skip
    grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for s in samples:
        grouped.setdefault((s["item_id"], s["judge"]), []).append(s)
    out = []
    for (item_id, judge), rows in sorted(grouped.items()):
        rows = sorted(rows, key=lambda s: s["sample_index"])
        precisions = [s["precision"] for s in rows if s["precision"] is not None]
        scores = [s["factscore"] for s in rows if s.get("factscore") is not None]
        labels = [lab for s in rows for lab in (s["fact_labels"] or [])]
        p = sum(precisions) / len(precisions) if precisions else None
        vote = "unknown" if p is None else ("yes" if p == 1.0 else "no")
        affirms, denies = _fact_stances(rows)
        out.append({
            "item_id": item_id, "model": model, "perturbation": perturbation, "suite": "okgqa", "task": TASK,
            "judge": judge, "labels": [s["label"] for s in rows], "response_ids": [s["response_id"] for s in rows],
            "vote": vote, "expected": "yes", "correct": vote == "yes", "decided": p is not None, "precision": p,
            "facts": len(labels), "supported": labels.count(SUPPORTED), "contradicted": labels.count(CONTRADICTED),
            "not_in_kg": labels.count(NOT_IN_KG),
            **{f"geval_{c}": _mean([s[f"geval_{c}"] for s in rows]) for c in CRITERIA},
            "affirms": affirms, "denies": denies,
            "factscore": sum(scores) / len(scores) if scores else None,
            "ambiguous": sum(why == "ambiguous" for s in rows for why in (s.get("fact_reasons") or [])),
        })  # fmt: skip
    return out


def _triple_text(kg: KGFacts, triple: tuple[int, int, int] | None) -> str | None:
    """A verdict's KG triple as the consistency view names triples: ``head label|relation key|tail label``."""
    if triple is None:
        return None
    h, r, t = triple
    return f"{kg.entities.get(h, h)}|{kg.relation_keys.get(r, kg.relations.get(r, r))}|{kg.entities.get(t, t)}"


def _fact_stances(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """The KG triples an item's answers affirm (a supported fact states the triple) and deny (a contradicted fact
    gives a functional relation another object than the KG's triple), over its samples: the side with more facts
    wins a triple, a tie decides nothing. What the cross-suite consistency view reads."""
    score: dict[str, int] = {}
    for s in rows:
        for label, triple in zip(s.get("fact_labels") or (), s.get("fact_triples") or (), strict=False):
            if triple is not None and label in (SUPPORTED, CONTRADICTED):
                score[triple] = score.get(triple, 0) + (1 if label == SUPPORTED else -1)
    return sorted(t for t, v in score.items() if v > 0), sorted(t for t, v in score.items() if v < 0)


def _mean(values: Sequence[float | None]) -> float | None:
    v = [x for x in values if x is not None]
    return sum(v) / len(v) if v else None
