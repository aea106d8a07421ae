"""Drowzee (Li et al.) as a :class:`~kgprobe.suites.base.Suite`: questions from facts derived by logic rules and by
metric temporal logic, answered with their reasoning, and scored by the reasoning oracle of §3.6.

Items: ``rule`` items (two phrasings of every derived fact, :func:`.questions.rule_items`) and ``temporal`` items
(two query years of every formula, :func:`.questions.temporal_items`); ``breakdown`` holds rule, relation, phrasing
and in_kg, or operator, depth and source; ``evidence`` the proof. ``gold_answer`` is the exact perfect answer (the
oracle reference model answers it verbatim); ``original_question`` the template question (``question`` differs from
it only where the optional rewording model's text passed the checks). The metadata reports the relations read as
events, the formulas dropped per rule (``temporal.dropped``), the operator x depth counts and the share of each
rule's derivations already stored in the KG, and per rule how many derived facts a temporal KG dates, leaves
undated or drops because their premises never hold in one year (``rule_periods``; a dated fact is asked in the past
tense over its period).

Scores per extractor (the rows' ``judge``): ``heuristic`` is the shared offline claim extractor
(:func:`.oracle.response_edges`); each configured judge extracts the claims as validated JSON when ``llm_extractor``
is on. Per task, overall and per rule / operator (and per relation, phrasing, depth): ``hallucination_rate``, the
paper's (§4: a wrong Yes/No answer, over every answer given; a refusal or an answer beginning with neither Yes nor
No is not one, a generation error is counted nowhere), ``oracle_hallucination_rate`` (the former rate: EK + EI + OL
among the answers the oracle can judge, whatever the Yes/No; an answer with no triple extracted has its own
``no_triples_share``) and ``answer_accuracy`` (refusals apart); overall and per rule / operator also the category
shares, ``refusal_share``, the oracle's split of the wrong answers it can judge (``knowledge_error_share`` EK,
``inference_error_share`` EI, ``both_errors_share`` OL, ``wrong_answer_co_share`` CO),
``right_answer_wrong_reasoning`` (right answers whose reasoning is EK, EI or OL, over the right answers it can
judge) and the mean node / edge similarities (Wilson of the mean). Every verdict
depends on its item alone: the relation properties come from the settings and the item's own evidence.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from kgprobe.generation.records import Prompt
from kgprobe.scoring.stats import row_seed, wilson_mean_ci
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
    metric_row,
    table,
)
from kgprobe.scoring.claims import (
    CLAIMS_JSON_SCHEMA,
    CLAIMS_TEMPLATE_ID,
    HEURISTIC,
    KGFacts,
    claims_prompt,
    parse_claims,
)
from kgprobe.suites.drowzee.oracle import (
    MISSING,
    NO_TRIPLES,
    STARTED,
    Edge,
    Extractor,
    Node,
    category,
    claim_edges,
    graph_similarity,
    read_answer,
    response_edges,
)
from kgprobe.suites.drowzee.rules import RULES
from kgprobe.suites.drowzee.templates import PHRASE_TYPES, PROMPT_TEMPLATES, prompt_text
from kgprobe.suites.settings import InputFile, confined_model_entry

__all__ = ["DrowzeeSettings", "DrowzeeSuite", "extraction_prompt"]

_S, _F, _B = pa.string(), pa.float64(), pa.bool_()
_ITEMS = pa.schema(list(ITEM_SCHEMA) + [("gold_answer", _S), ("original_question", _S)])
_SAMPLES = pa.schema(list(SAMPLE_SCHEMA) + [("answer", _S), ("category", _S), ("node_similarity", _F),
                                            ("edge_similarity", _F), ("triples", _S)])
_VOTES = pa.schema(list(VOTE_SCHEMA) + [("category", _S), ("refusal", _B), ("node_similarity", _F),
                                        ("edge_similarity", _F), ("answered", _B)])

_HALLUCINATED = ("EK", "EI", "OL")
#: The fewest new tokens a judge's claim extraction gets.
EXTRACT_TOKENS = 256


class DrowzeeSettings(BaseModel):
    """The ``suites: {drowzee: {...}}`` section."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    kg: str | None = None
    """The KG to derive facts from (default: the first of ``kgs``)."""
    rules: list[Literal[RULES]] = Field(default_factory=lambda: list(RULES))
    """The logic rules to derive questions with (default: all six)."""
    negation: list[str] | None = None
    """Relation keys the negation rule asks another object of ("Was Chopin born in Vienna?", expected no); None: the
    relations the data shows to be functional (one object for at least 95% of their subjects)."""
    inverse: dict[str, str] = Field(default_factory=dict)
    """Relation key -> its inverse's key (``{hasChild: hasParent}``); the inverse need not be a KG relation
    (``inverse_labels`` names it)."""
    inverse_labels: dict[str, str] = Field(default_factory=dict)
    """Relation key -> label, for inverses the KG has no label for (``{hasParent: has parent}``)."""
    symmetric: list[str] = Field(default_factory=list)
    """Symmetric relation keys: r(x, y) gives r(y, x)."""
    transitive: list[str] = Field(default_factory=list)
    """Transitive relation keys: r(x, y) and r(y, z) give r(x, z)."""
    compositions: list[Annotated[list[str], Field(min_length=3, max_length=3)]] = Field(default_factory=list)
    """[first, second, target] relation keys: first(x, y) and second(y, z) give target(x, z)."""
    same: list[str] = Field(default_factory=list)
    """Relation keys P of the same rule: P(a, c) and P(b, c) give same_P(a, b) ("share the same director")."""
    phrase_types: dict[str, Literal[PHRASE_TYPES]] = Field(default_factory=dict)
    """Relation key -> noun, passive or active: how its label is phrased in questions, overriding the guess from
    the label's words."""
    aliases: dict[str, list[str]] = Field(default_factory=dict)
    """Relation key -> phrases the offline claim extractor reads as that relation besides its label (a key given
    here replaces kgprobe's own phrases for it)."""
    per_subject: int = Field(4, ge=1)
    """Most derived facts per subject entity."""
    per_rule: int = Field(300, ge=1)
    """Most derived facts per rule (a seeded sample)."""
    propose_threshold: float = Field(0.95, gt=0, le=1)
    """Share of the evidence at which the items' metadata (``proposed_properties``) proposes a relation as
    symmetric, inverse, transitive or functional, for a person to accept into the settings."""
    relation_phrases: dict[str, str] = Field(default_factory=dict)
    """Words for a relation key in questions and events (``{diedIn: died in}``); else its label, else the key split."""
    derived_only: bool = True
    """Leave out the symmetric, inverse, transitive and composition facts the KG already states; false: ask them
    too, marked ``in_kg``."""
    periods: bool = True
    """On a KG with dated facts, ask a derived fact whose premises are dated in the past tense over the years they
    hold together ("Is it true that X was married to Y from 1965 to 1972?"), and drop one whose premises never
    hold in one year; counts per rule in the items' metadata (``rule_periods``). False: ask every fact undated."""
    temporal: bool = True
    """Ask temporal-logic questions over the KG's dated facts (and ``events``)."""
    events: InputFile | None = None
    """An event list (JSON begin / end records, as Drowzee's events.json) besides the KG's dated facts, relative to
    the config file."""
    n_formulas: int = Field(60, ge=0)
    """Random temporal formulas, each asked at one year where it holds and one where it does not (0: none)."""
    max_depth: int = Field(1, ge=1)
    """Layers of temporal operators (not, next, finally, globally, until); And / Or add one over them (§4.5)."""
    domain: tuple[int, int] = (1, 2024)
    """[first year, horizon]: negation's domain; every event (KG fact or event list) stops at the horizon."""
    open_end: Literal["unknown", "ongoing"] = "unknown"
    """What the KG's end year 3000 means: unknown (YAGO11k, Wikidata12k) or still true to the horizon."""
    event_share: float = Field(0.7, gt=0, le=1)
    """A relation whose dated facts have no end or end in their start year at least this often is an event relation:
    its facts are points at their start year."""
    event_relations: dict[str, bool] = Field(default_factory=dict)
    """Relation key -> true (its dated facts are events, points at their start year) or false (spans), overriding
    ``event_share``."""
    reword: dict[str, Any] | None = None
    """A model entry (as in ``models``: name, backend, ...) that rewords every question (§3.5); None: templates."""
    threshold: float = Field(0.8, gt=0, le=1)
    """Cosine at which two labels match (an answer's entity phrase and a KG entity; a node or relation of the
    answer's reasoning graph and the gold proof's), and θ_n = θ_e: a node or edge similarity (Jaccard) below it
    makes the answer a hallucination (EK, EI, OL)."""
    llm_extractor: bool = False
    """Each configured scoring judge extracts the reasoning's claims too, as validated JSON (its own rows, which the
    report then shows); the heuristic rows stay. Off by default: a CPU judge reads every answer."""

    @field_validator("reword")
    @classmethod
    def _reword_paths(cls, value: dict[str, Any] | None, info: ValidationInfo) -> dict[str, Any] | None:
        outside = confined_model_entry(value, info) if isinstance(value, dict) else None
        if outside is not None:
            raise ValueError(f"{outside[0]}: {outside[1]}")
        return value

    @field_validator("domain")
    @classmethod
    def _years_in_order(cls, value: tuple[int, int]) -> tuple[int, int]:
        if value[0] > value[1]:
            raise ValueError(f"the first year ({value[0]}) must not come after the last ({value[1]})")
        return value


def extraction_prompt(answer: str, response_id: str, gold: str | None) -> Prompt:
    """The judge's claim-extraction prompt for one answer (the shared one, :func:`kgprobe.scoring.claims.
    claims_prompt`; its item id is the answer's response id, its reply JSON); ``gold`` is the offline extraction as
    that JSON, what the oracle judge answers."""
    return Prompt(item_id=response_id, text=claims_prompt(answer), template_id=CLAIMS_TEMPLATE_ID, gold=gold,
                  answer_kind=None, response_format=CLAIMS_JSON_SCHEMA)


class DrowzeeSuite(Suite):
    """Drowzee (Li et al.): rule- and MTL-derived questions, answered with reasoning, checked by the graph oracle."""

    name = "drowzee"
    title = "Drowzee: logic-derived questions with reasoning oracles"
    paper = ("Li, Song, Wang et al., Detecting LLM Fact-conflicting Hallucinations Enhanced by "
             "Temporal-logic-based Reasoning")
    Settings = DrowzeeSettings
    sampling = Sampling(n=1, temperature=0.0)
    headline = Headline("rule", "hallucination_rate", "hallucination rate: wrong Yes/No answers (rules; lower is better)",
                        judge=HEURISTIC)
    # the gold proof ("The cause of death of X is Y.") is the oracle's answer and the reasoning oracle's ground truth
    named_text_columns = ("question", "gold_answer", "original_question")

    # ---------------------------------------------------------------------------------------------- items
    def items(self, source: ItemSource) -> ItemsResult:
        """Rule items from the KG's triples and temporal items from its dated facts (and an event list)."""
        from kgprobe.sql import load_sql
        from kgprobe.suites.drowzee.facts import events_from_kg, events_from_list
        from kgprobe.suites.drowzee.questions import reword_items, rule_items, temporal_items
        from kgprobe.suites.drowzee.rules import PERIOD_STATUS, RuleConfig, derive, fact_period, propose_properties

        s: DrowzeeSettings = source.settings
        con = source.con
        want = set(s.rules)
        config = RuleConfig(
            negation=(() if "negation" not in want else (None if s.negation is None else tuple(s.negation))),
            inverse=s.inverse if "inverse" in want else {}, inverse_labels=s.inverse_labels,
            symmetric=tuple(s.symmetric) if "symmetric" in want else (),
            transitive=tuple(s.transitive) if "transitive" in want else (),
            compositions=tuple(tuple(c) for c in s.compositions) if "composition" in want else (),  # type: ignore[misc]
            same=tuple(s.same) if "same" in want else (), per_subject=s.per_subject, per_rule=s.per_rule,
            derived_only=s.derived_only, named_only=source.named_only)
        stored: dict[str, Any] = {}
        facts = derive(con, config, seed=source.seed, report=stored)
        temporal: dict[str, Any] = {}
        kg_events = (events_from_kg(con, open_end=s.open_end, event_share=s.event_share,
                                    event_relations=s.event_relations, relation_phrases=s.relation_phrases,
                                    report=temporal) if s.temporal or s.periods else [])
        periods: dict[str, dict[str, int]] = {}
        if s.periods and kg_events:
            # a temporal KG dates the premises: ask each derived fact over the years they hold together (past
            # tense), and drop one whose premises never hold in one year (or only in years an unknown end leaves open)
            dated = {(e.head, e.relation, e.tail): e for e in kg_events if e.tail is not None}
            kept = []
            for f in facts:
                status, period = fact_period(f, dated, horizon=s.domain[1])
                periods.setdefault(f.rule, dict.fromkeys(PERIOD_STATUS, 0))[status] += 1
                if status in ("undated", "dated"):
                    kept.append(replace(f, period=period))
            facts = kept
        rel_rows = con.execute(load_sql("drowzee/relations")).fetchall()
        relation_labels = {k: lab for _, k, lab in rel_rows} | dict(s.inverse_labels)
        relation_ids = {int(i): k for i, k, _ in rel_rows}
        ids = sorted({x for f in facts for x in (f.subject, f.object, *(v for p in f.premises for v in (p[0], p[2])))})
        labels = {int(i): lab for i, _, lab in con.execute(load_sql("drowzee/entity_labels"), {"ids": ids}).fetchall()}
        rows = rule_items(facts, entity_labels=labels, relation_labels=relation_labels, relation_ids=relation_ids,
                          phrase_types=s.phrase_types, snapshot_id=source.snapshot_id,
                          relation_phrases=s.relation_phrases)
        if s.temporal:
            events = list(kg_events)
            if s.events:
                path = Path(s.events)
                path = path if path.is_absolute() else source.config_dir / path
                events += events_from_list(json.loads(path.read_text(encoding="utf-8")), source=str(path))
            rows += temporal_items(events, n_formulas=s.n_formulas, max_depth=s.max_depth, seed=source.seed,
                                   domain=tuple(s.domain), snapshot_id=source.snapshot_id,  # type: ignore[arg-type]
                                   report=temporal)
        for r in rows:
            r["original_question"] = r["question"]
        reworded: dict[str, Any] = {}
        if s.reword is not None:
            rows = _reword(rows, s.reword, reworded)
        items = table(rows, _ITEMS)
        proposals = propose_properties(con, threshold=s.propose_threshold)
        counts = Counter((r["task"], breakdown_of(r).get("rule") or breakdown_of(r).get("operator")) for r in rows)
        by_depth = Counter((breakdown_of(r)["operator"], breakdown_of(r)["depth"])
                           for r in rows if r["task"] == "temporal")
        metadata = {
            "proposed_properties": proposals,
            "items_by_rule_or_operator": {f"{t}:{k}": n for (t, k), n in sorted(counts.items())},
            "temporal_items_by_operator_and_depth": {f"{o}:{d}": n for (o, d), n in sorted(by_depth.items())},
            "derived_already_in_kg": sum(1 for f in facts if f.in_kg),
            "derived_facts": len(facts),
            "derivations_already_stored": stored,
            "temporal": temporal,
            "rule_periods": periods,
            **({"reword": reworded} if reworded else {}),
        }
        return ItemsResult(items=items, metadata=metadata)

    # ---------------------------------------------------------------------------------------------- prompts
    def prompts(self, items: Sequence[Mapping[str, Any]], context: Mapping[str, str] | None = None) -> list[Prompt]:
        """Table 4's prompt per item (relation or temporal query, the instruction as system message); the gold is
        the perfect answer text."""
        return [Prompt(item_id=str(it["item_id"]), text=prompt_text(str(it["task"]), str(it["question"])),
                       template_id=f"drowzee-{'temporal' if it['task'] == 'temporal' else 'relation'}-v1",
                       gold=str(it["gold_answer"]), answer_kind=None, system=PROMPT_TEMPLATES["instruction"])
                for it in items]

    # ---------------------------------------------------------------------------------------------- scoring
    def _extractor(self, items: Sequence[Mapping[str, Any]], settings: DrowzeeSettings | None, embedder: Any) -> Extractor:
        entities: dict[int, str] = {}
        relations: dict[str, str] = {}
        kinds: dict[str, str] = {}
        for it in items:
            ev = json.loads(it["evidence"])
            entities.update({int(k): v for k, v in ev.get("entities", {}).items()})
            relations.update(ev.get("relations", {}))
            kinds.update(ev.get("phrase_types", {}))
        s = settings or DrowzeeSettings()
        aliases = {k: v for k, v in s.aliases.items() if k in relations}
        return Extractor(entities, relations, aliases=aliases, phrase_types={**kinds, **s.phrase_types},
                         embedder=embedder, threshold=s.threshold)

    @staticmethod
    def ground_truth(item: Mapping[str, Any], extractor: Extractor) -> tuple[list[Edge], dict[str, str], list[int]]:
        """The ground-truth graph of an item (its proof's facts as edges), its events (name -> label) and the entity
        ids a mention should prefer."""
        ev = json.loads(item["evidence"])
        if item["task"] == "temporal":
            events = {n: e["label"] for n, e in ev["events"].items()}
            edges = []
            for n, e in ev["events"].items():
                node = Node("event", n, e["label"])
                for a, b in e["intervals"]:
                    edges.append(Edge(node, STARTED, "started in", Node("year", str(a), str(a))))
                    if b is not None:  # no end the data does not give
                        edges.append(Edge(node, "ended_in", "ended in", Node("year", str(b), str(b))))
            return edges, events, []
        ents = {int(k): v for k, v in ev["entities"].items()}
        edges = [Edge(Node("entity", str(p["head"]), ents[p["head"]]), p["relation"],
                      ev["relations"].get(p["relation"], p["relation"]), Node("entity", str(p["tail"]), ents[p["tail"]]))
                 for p in ev["premises"]]
        return edges, {}, sorted(ents)

    @staticmethod
    def optional_truth(item: Mapping[str, Any]) -> list[Edge]:
        """The edges an answer may state besides the proof: the derived fact itself (denied for a negation: its
        truth is False). Stating it is not an error, leaving it out is not a miss; its inverse and symmetric forms
        match it through the relation properties."""
        ev = json.loads(item["evidence"])
        d = ev.get("derived")
        if item["task"] == "temporal" or not d or ev.get("rule") == "same":
            return []
        ents = {int(k): v for k, v in ev["entities"].items()}
        rel = str(d["relation"])
        label = ev["relations"].get(rel, rel.replace("_", " "))
        head = Node("entity", str(d["subject"]), ents.get(int(d["subject"]), str(d["subject"])))
        tail = Node("entity", str(d["object"]), ents.get(int(d["object"]), str(d["object"])))
        if d.get("truth", True):
            return [Edge(head, rel, label, tail)]
        return [Edge(head, f"not:{rel}", f"not {label}", tail)]

    @staticmethod
    def item_params(item: Mapping[str, Any], s: DrowzeeSettings) -> dict[str, Any]:
        """The relation properties an item's verdict reads: the settings' symmetric relations and inverse pairs
        (sets, both ways), and the item's own rule (its derived relation); never the other items scored."""
        symmetric = set(s.symmetric)
        inverse: dict[str, set[str]] = {}
        for a, b in s.inverse.items():
            inverse.setdefault(a, set()).add(b)
        b = breakdown_of(item)
        if b.get("rule") == "symmetric" and b.get("relation"):
            symmetric.add(b["relation"])
        if b.get("rule") == "inverse":
            ev = json.loads(item["evidence"])
            if ev.get("source_relation"):
                inverse.setdefault(ev["source_relation"], set()).add(b["relation"])
        return {"symmetric": symmetric, "inverse": inverse}

    def item_kg(self, item: Mapping[str, Any], s: DrowzeeSettings) -> KGFacts:
        """The item's entities and relations as the claim checker reads them (ids as strings, relation keys): a
        rule item's proof, a temporal item's events that are KG facts (:meth:`event_facts`). Relation phrases are
        read by the phrase sets of the relation labels (:mod:`kgprobe.scoring.relations`), with the settings'
        ``aliases`` as extra phrasings; the settings' relation properties."""
        ev = json.loads(item["evidence"])
        params = self.item_params(item, s)
        if item["task"] == "temporal":
            triples, labels, rels = self._event_triples(ev, s)
        else:
            rels = {**dict(ev.get("relations") or {}), **{k: v for k, v in s.inverse_labels.items()}}
            triples = [(str(p["head"]), p["relation"], str(p["tail"])) for p in ev.get("premises", [])]
            labels = {str(k): v for k, v in (ev.get("entities") or {}).items()}
        aliases = {k: {a: False for a in v} for k, v in s.aliases.items() if k in rels}
        return KGFacts.from_triples(triples, entity_labels=labels, relation_labels=rels, inverses={},
                                    symmetric=params["symmetric"], phrasings=aliases)

    @staticmethod
    def _event_triples(ev: Mapping[str, Any], s: DrowzeeSettings) -> tuple[list[tuple[str, str, str]],
                                                                              dict[str, str], dict[str, str]]:
        """A temporal item's events that are KG facts (two entities and a relation) as triples over entity ids
        ``e0``, ``e1``, ... (one per label), with the entity labels and the relation words (the key's words, or
        the settings' ``relation_phrases``: what the event labels say)."""
        from kgprobe.suites.drowzee.templates import relation_phrase

        ids: dict[str, str] = {}
        triples = []
        rels: dict[str, str] = {}
        for e in ev.get("events", {}).values():
            names = e.get("entities") or []
            if len(names) != 2 or not e.get("relation") or e["relation"] == "occurs":
                continue
            h, t = (ids.setdefault(n, f"e{len(ids)}") for n in names)
            triples.append((h, e["relation"], t))
            rels[e["relation"]] = relation_phrase(e["relation"], None, s.relation_phrases)
        return triples, {v: k for k, v in ids.items()}, rels

    def event_facts(self, item: Mapping[str, Any], s: DrowzeeSettings) -> dict[tuple[str, str, str],
                                                                                tuple[str, str, str]]:
        """A temporal item's events that are KG facts: (head, relation, tail) as :meth:`item_kg` keys them ->
        (event name, label, kind)."""
        if item["task"] != "temporal":
            return {}
        ev = json.loads(item["evidence"])
        triples, _, _ = self._event_triples(ev, s)
        named = [(n, e) for n, e in ev.get("events", {}).items()
                 if len(e.get("entities") or []) == 2 and e.get("relation") and e["relation"] != "occurs"]
        return {t: (n, e["label"], e.get("kind", "event")) for t, (n, e) in zip(triples, named)}

    def _item_extractor(self, item: Mapping[str, Any], s: DrowzeeSettings, embedder: Any) -> Extractor:
        return self._extractor([item], s, embedder)

    def score(self, items: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]], *, model: str,
              perturbation: str = "none", scoring: ScoringOptions = ScoringOptions(),
              settings: DrowzeeSettings | None = None) -> SuiteScores:  # fmt: skip
        """Algorithm 3 on every answer: refusal -> CO; error -> missing; else extract the reasoning's triples
        (heuristic, and each configured judge's claims), compare graphs, categorise (no triple: NT)."""
        by_id = {str(it["item_id"]): it for it in items}
        missing = sorted({str(r["item_id"]) for r in responses} - set(by_id))
        if missing:
            raise ValueError(f"{len(missing)} response(s) of model {model!r} answer items that are not among the "
                             f"drowzee items (first: {missing[:3]}); re-materialize the responses")
        s = settings or getattr(scoring, "settings", None) or DrowzeeSettings()
        embedder = getattr(scoring, "embedder", None)
        if embedder is None:
            from kgprobe.embedding import Embedder

            embedder = Embedder()
        kgs: dict[str, KGFacts] = {}
        extractors: dict[str, Extractor] = {}
        # a dry pass records every text the oracle would embed, so the model encodes them in one batch, not one
        # small batch per mention (the second pass then reads the embedder's cache)
        recorder = _Recorder(384)  # the dry pass discards its vectors; any width will do
        for r in responses:
            if r.get("error") is None and read_answer(r["text"]) != "refusal":
                item = by_id[str(r["item_id"])]
                kg = self.item_kg(item, s)
                dry = self._item_extractor(item, s, recorder)
                ground, events, prefer = self.ground_truth(item, dry)
                edges = response_edges(r["text"] or "", kg, dry, events=events, prefer=prefer, embedder=recorder,
                                       threshold=s.threshold, event_facts=self.event_facts(item, s))
                params = self.item_params(item, s)
                graph_similarity(edges, ground, embedder=recorder, threshold=s.threshold,
                                 symmetric=params["symmetric"], inverse=params["inverse"],
                                 optional=self.optional_truth(item))
        if recorder.texts:
            embedder.embed(sorted(recorder.texts))
        samples: list[dict[str, Any]] = []
        offline: dict[str, list[Edge]] = {}
        for r in responses:
            item = by_id[str(r["item_id"])]
            key = str(r["item_id"])
            if key not in kgs:
                kgs[key] = self.item_kg(item, s)
                extractors[key] = self._item_extractor(item, s, embedder)
            ground, events, prefer = self.ground_truth(item, extractors[key])
            text = r["text"] if r.get("error") is None else None
            edges = response_edges(text or "", kgs[key], extractors[key], events=events, prefer=prefer,
                                   embedder=embedder, threshold=s.threshold,
                                   event_facts=self.event_facts(item, s))
            offline[r["response_id"]] = edges
            samples.append(self._sample(r, item, perturbation, HEURISTIC, text, edges, ground, embedder, s))
        judges = list(scoring.judges) if s.llm_extractor else []
        for spec in judges:
            if scoring.judge is None:
                raise ValueError("suite drowzee: llm_extractor needs a judge runner in ScoringOptions")
            asked = [r for r in responses if r.get("error") is None and read_answer(r["text"]) != "refusal"]
            prompts = [extraction_prompt(r["text"], r["response_id"], _claims_gold(offline[r["response_id"]]))
                       for r in asked]
            # a list of claims needs room that a yes/no verdict does not; the judge's other settings stay
            spec = replace(spec, params=replace(spec.params, max_tokens=max(spec.params.max_tokens, EXTRACT_TOKENS)))
            verdicts = scoring.judge(spec, prompts) if prompts else {}
            for r in responses:
                item = by_id[str(r["item_id"])]
                key = str(r["item_id"])
                ground, events, prefer = self.ground_truth(item, extractors[key])
                v = verdicts.get(r["response_id"])
                claims = parse_claims(v["text"], r["text"]) if v and v.get("error") is None else None
                edges = claim_edges(claims or [], kgs[key], embedder=embedder, threshold=s.threshold, events=events)
                text = r["text"] if r.get("error") is None else None
                row = self._sample(r, item, perturbation, spec.name, text, edges, ground, embedder, s,
                                   failed=v is not None and claims is None and r.get("error") is None)
                row.update(judge_text=v.get("text") if v else None, judge_error=v.get("error") if v else None,
                           judge_response_id=v.get("response_id") if v else None)
                samples.append(row)
        votes = self._votes(samples, by_id, model, perturbation)
        metrics = self.metrics(votes, by_id, model=model, perturbation=perturbation, confidence=scoring.confidence,
                               resamples=scoring.resamples, seed=scoring.seed)
        return SuiteScores(samples=samples, votes=votes, metrics=metrics, sample_schema=_SAMPLES, vote_schema=_VOTES)

    def _sample(self, r: Mapping[str, Any], item: Mapping[str, Any], perturbation: str, judge: str, text: str | None,
                edges: list[Edge], ground: list[Edge], embedder: Any, s: DrowzeeSettings, *,
                failed: bool = False) -> dict[str, Any]:  # fmt: skip
        answer = read_answer(text)
        sn = se = None
        if r.get("error") is not None or text is None:
            cat = MISSING  # a generation error: no answer to judge
        elif answer == "refusal":
            cat = "CO"
        elif failed:
            cat = MISSING  # the judge's reply did not validate: no extraction to judge
        elif not edges:
            cat = NO_TRIPLES
        else:
            params = self.item_params(item, s)
            sn, se = graph_similarity(edges, ground, embedder=embedder, threshold=s.threshold,
                                      symmetric=params["symmetric"], inverse=params["inverse"],
                                      optional=self.optional_truth(item))
            cat = category(sn, se, theta_n=s.threshold, theta_e=s.threshold)
        return {
            "response_id": r["response_id"], "item_id": str(r["item_id"]), "model": r["model"],
            "perturbation": perturbation, "sample_index": int(r["sample_index"]), "judge": judge, "text": r["text"],
            "error": r.get("error"), "label": answer if answer in ("yes", "no") else "unknown", "judge_text": None,
            "judge_error": None, "judge_response_id": None, "answer": answer, "category": cat,
            "node_similarity": sn, "edge_similarity": se, "triples": _triples_text(edges),
        }  # fmt: skip

    @staticmethod
    def _votes(samples: Sequence[Mapping[str, Any]], items: Mapping[str, Mapping[str, Any]], model: str,
               perturbation: str) -> list[dict[str, Any]]:  # fmt: skip
        grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for sm in samples:
            grouped.setdefault((sm["item_id"], sm["judge"]), []).append(sm)
        out = []
        order = {"OL": 0, "EI": 1, "EK": 2, NO_TRIPLES: 3, "CO": 4}
        for (item_id, judge), rows in sorted(grouped.items()):
            rows = sorted(rows, key=lambda x: x["sample_index"])
            item = items[item_id]
            answers = Counter(x["answer"] for x in rows).most_common()
            answer = answers[0][0] if len(answers) == 1 or answers[0][1] > answers[1][1] else "unknown"
            cats = Counter(x["category"] for x in rows if x["category"] != MISSING)
            if cats:
                top = max(cats.values())
                cat = min((c for c, n in cats.items() if n == top), key=order.__getitem__)  # a tie counts the worse
            else:
                cat = MISSING
            sims = [x for x in rows if x["node_similarity"] is not None]
            out.append({
                "item_id": item_id, "model": model, "perturbation": perturbation, "suite": "drowzee",
                "task": item["task"], "judge": judge, "labels": [x["label"] for x in rows],
                "response_ids": [x["response_id"] for x in rows], "vote": answer if answer in ("yes", "no") else "unknown",
                "expected": str(item["expected"]), "correct": answer == str(item["expected"]),
                "decided": answer in ("yes", "no"), "category": cat, "refusal": answer == "refusal",
                "node_similarity": sum(x["node_similarity"] for x in sims) / len(sims) if sims else None,
                "edge_similarity": sum(x["edge_similarity"] for x in sims) / len(sims) if sims else None,
                # some sample has an answer (not a generation error): what the paper's rate counts
                "answered": any(x.get("error") is None and x.get("text") is not None for x in rows),
            })  # fmt: skip
        return out

    def metrics(self, votes: Sequence[Mapping[str, Any]], items: Mapping[str, Mapping[str, Any]], *, model: str,
                perturbation: str, confidence: float = 0.95, resamples: int = 1000,
                seed: int = 0) -> list[dict[str, Any]]:  # fmt: skip
        """The metric rows (see the module docstring): per (task, judge), overall and per rule / operator for every
        metric, per relation and phrasing for the hallucination rate and the answer accuracy."""
        groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for v in votes:
            groups.setdefault((v["task"], v["judge"]), []).append(v)
        out: list[dict[str, Any]] = []
        for (task, judge), rows in sorted(groups.items()):
            rows = sorted(rows, key=lambda r: r["item_id"])
            common = dict(model=model, perturbation=perturbation, suite=self.name, task=task, judge=judge,
                          confidence=confidence)
            main_key = "operator" if task == "temporal" else "rule"
            cells: dict[tuple[tuple[str, str], ...], list[Mapping[str, Any]]] = {(): rows}
            minor: dict[tuple[tuple[str, str], ...], list[Mapping[str, Any]]] = {}
            for r in rows:
                b = breakdown_of(items[r["item_id"]])
                if main_key in b:
                    cells.setdefault(((main_key, b[main_key]),), []).append(r)
                for key in ("relation", "phrasing", "depth"):
                    if key in b:
                        minor.setdefault(((key, b[key]),), []).append(r)
            for cell, everything in list(cells.items()) + list(minor.items()):
                full = cell in cells
                # the paper's rate: a wrong Yes/No answer is a hallucination (a refusal or an unreadable answer is
                # not), over every answer given; only a generation error is left out
                given = [m for m in everything if m.get("answered", m["category"] != MISSING)]
                out.append(metric_row(metric="hallucination_rate", breakdown=dict(cell),
                                      flags=[m["decided"] and not m["correct"] for m in given],
                                      item_ids=[m["item_id"] for m in given], higher_is_better=False, **common))
                members = [m for m in everything if m["category"] != MISSING]  # generation errors count nowhere
                ids = [m["item_id"] for m in members]
                answered = [m for m in members if not m["refusal"]]
                judged = [m for m in members if m["category"] != NO_TRIPLES]
                hall = [m["category"] in _HALLUCINATED for m in judged]
                # the former rate: the reasoning oracle over the answers it can judge, whatever the Yes/No
                out.append(metric_row(metric="oracle_hallucination_rate", breakdown=dict(cell), flags=hall,
                                      item_ids=[m["item_id"] for m in judged], higher_is_better=False, **common))
                out.append(metric_row(metric="answer_accuracy", breakdown=dict(cell),
                                      flags=[m["correct"] for m in answered],
                                      item_ids=[m["item_id"] for m in answered], **common))
                if not full:
                    continue
                for cat in ("CO", "EK", "EI", "OL"):
                    out.append(metric_row(metric=f"{cat.lower()}_share", breakdown=dict(cell),
                                          flags=[m["category"] == cat for m in judged],
                                          item_ids=[m["item_id"] for m in judged], higher_is_better=cat == "CO",
                                          **common))
                out.append(metric_row(metric="no_triples_share", breakdown=dict(cell),
                                      flags=[m["category"] == NO_TRIPLES for m in members], item_ids=ids,
                                      higher_is_better=False, **common))
                # why the hallucinated (wrong) answers are wrong, by the oracle: erroneous knowledge (EK),
                # erroneous inference (EI), both (OL), or reasoning it finds correct (CO); over those it can judge
                wrong = [m for m in members if m["decided"] and not m["correct"] and m["category"] != NO_TRIPLES]
                for metric, cat in (("knowledge_error_share", "EK"), ("inference_error_share", "EI"),
                                    ("both_errors_share", "OL"), ("wrong_answer_co_share", "CO")):
                    out.append(metric_row(metric=metric, breakdown=dict(cell),
                                          flags=[m["category"] == cat for m in wrong],
                                          item_ids=[m["item_id"] for m in wrong], higher_is_better=False,
                                          **common))
                out.append(metric_row(metric="refusal_share", breakdown=dict(cell),
                                      flags=[m["refusal"] for m in members], item_ids=ids, higher_is_better=False,
                                      **common))
                # right answers whose reasoning the oracle finds wrong, over the right answers it can judge
                right = [m for m in members if m["decided"] and m["correct"] and m["category"] != NO_TRIPLES]
                out.append(metric_row(metric="right_answer_wrong_reasoning", breakdown=dict(cell),
                                      flags=[m["category"] in _HALLUCINATED for m in right],
                                      item_ids=[m["item_id"] for m in right], higher_is_better=False, **common))
                for name in ("node_similarity", "edge_similarity"):
                    vals = [m[name] for m in answered if m[name] is not None]
                    lo, hi = wilson_mean_ci(vals, confidence=confidence)  # Jaccard similarities lie in [0, 1]
                    out.append({
                        "model": model, "perturbation": perturbation, "suite": self.name, "task": task,
                        "judge": judge, "metric": name, "breakdown": dict(cell), "higher_is_better": True,
                        "n": len(vals), "value": sum(vals) / len(vals) if vals else float("nan"), "ci_low": lo,
                        "ci_high": hi, "interval": "wilson_mean",
                        "item_ids": [m["item_id"] for m in answered if m[name] is not None],
                    })  # fmt: skip
        return out

    # ---------------------------------------------------------------------------------------------- report
    def report(self, ctx: Any, metrics: Sequence[Mapping[str, Any]], *, agreement: Sequence[Mapping[str, Any]] = (),
               similarity: Sequence[Mapping[str, Any]] = ()) -> tuple[Any, dict[str, bytes]]:  # fmt: skip
        """Drowzee's section: hallucination rate per rule and per temporal operator, and the category mix."""
        from kgprobe.suites.drowzee.report import section

        mine = [m for m in metrics if m["suite"] == self.name]
        if not mine:
            return None, {}
        return section(ctx, mine), {}


def _reword(rows: list[dict[str, Any]], entry: Mapping[str, Any], report: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows with questions reworded by the configured model (§3.5), checked by
    :func:`.questions.reword_items`; the model is loaded here and released after."""
    from kgprobe.errors import ConfigError
    from kgprobe.generation.runner import make_backend, model_specs
    from kgprobe.suites.drowzee.questions import reword_items

    try:
        spec = model_specs([entry])[0]
    except ConfigError as exc:
        raise ConfigError(f"suites.drowzee.reword: {exc}") from exc
    backend = make_backend(spec)

    def complete(texts: list[str]) -> list[str | None]:
        prompts = [Prompt(item_id=str(i), text=t, template_id="drowzee-reword-v1", gold=rows[i]["question"],
                          answer_kind=None) for i, t in enumerate(texts)]
        outs = backend.generate(prompts, spec.params)
        return [(o[0].text if o and o[0].error is None else None) for o in outs]

    try:
        return reword_items(rows, complete, model=spec.name, report=report)
    finally:
        backend.close()


class _Recorder:
    """An embedder stand-in that remembers what it was asked to embed and answers zero vectors."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.texts: set[str] = set()

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        self.texts.update(texts)
        return np.zeros((len(texts), self.dim), dtype=np.float32)

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> Any:
        import numpy as np

        self.texts.update(a)
        self.texts.update(b)
        return np.zeros((len(a), len(b)), dtype=np.float32)


def _triples_text(edges: Sequence[Edge]) -> str:
    return "\n".join(f"{e.head.label} | {e.relation_text} | {e.tail.label}" for e in edges)


def _claims_gold(edges: Sequence[Edge]) -> str:
    """Edges as the claims JSON a perfect judge writes (what the reference oracle judge answers)."""
    facts = []
    for e in edges:
        negated = e.relation.startswith("not:")
        relation = e.relation_text[4:] if negated and e.relation_text.startswith("not ") else e.relation_text
        facts.append({"fact": f"{e.head.label} {e.relation_text} {e.tail.label}.", "subject": e.head.label,
                      "relation": relation, "object": e.tail.label, "negated": negated})
    return json.dumps({"facts": facts}, ensure_ascii=False)
