"""OKGQA's open-ended questions: its taxonomy (5 types, 10 sub-types), and three sources, each row keeping its
provenance.

* **templates** (:func:`template_questions`): the shapes of the paper's Table 1 filled with KG entities of fitting
  types (a pair for the two-entity shapes: joined by a triple for relationship / cause / evaluation, of one type
  for comparisons);
* **generated** (:func:`generation_prompt`, :func:`parse_generated`): a generator model asked with the paper's D.2
  prompt; each JSON object is validated (question, type, placeholders, naturalness, difficulty, entities) and its
  entities linked to the KG, or it is rejected with the reason;
* **files** (:func:`questions_from_csv`): question CSVs such as OKGQA's own ``questions_v3.csv`` (``question, type,
  placeholders, naturalness, difficulty, dbpedia_entities``), loaded as-is, DBpedia IRIs linked by key, local
  name or label (:class:`kgprobe.kg.queries.EntityLinker`). OKGQA's released CSVs give a type only; such a
  question's sub-type is read from Table 1's phrasings of that type's sub-types and marked ``(inferred)``
  (:func:`infer_subtype`), or left ``unknown`` when none fits.

A question's seed entities become a retrieval query (``okgqa-<question_id>``), whose 2-hop PPR subgraph, clean and
perturbed, is its KG context.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgprobe.errors import ConfigError
from kgprobe.kg.queries import okgqa_query_id
from kgprobe.suites.base import content_id

__all__ = [
    "QUESTION_SCHEMA_COLUMNS",
    "SUBTYPES",
    "TEMPLATES",
    "TYPES",
    "Question",
    "QuestionTemplate",
    "UNKNOWN_SUBTYPE",
    "generation_prompt",
    "infer_subtype",
    "okgqa_query_id",
    "parse_generated",
    "questions_from_csv",
    "subtype_of",
    "template_questions",
]

#: Sub-type -> type, the paper's taxonomy in its order.
SUBTYPES: dict[str, str] = {
    "character description": "descriptive", "event description": "descriptive",
    "cause explanation": "explanatory", "relationship explanation": "explanatory",
    "trend prediction": "predictive", "outcome prediction": "predictive",
    "contrast analysis": "comparative", "historical comparison": "comparative",
    "evaluation and reflection": "critical", "application and practice": "critical",
}  # fmt: skip
TYPES: tuple[str, ...] = ("descriptive", "explanatory", "predictive", "comparative", "critical")
#: The sub-type of a question given a type only, when no Table 1 phrasing of its sub-types fits.
UNKNOWN_SUBTYPE = "unknown"
#: Table 1's phrasings per sub-type (its templates and examples, as OKGQA's released questions word them), tried in
#: this order among the sub-types of a question's type.
_PHRASINGS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(p, re.IGNORECASE)) for k, p in (
    ("event description",
     r"background and course|detailed description of|\bdescribe the (background|course|events?)\b"),
    ("character description", r"\bdescribe\b.*\b(contribution|career|achievement|life|role|work)"),
    ("relationship explanation", r"\brelationship between\b"),
    ("cause explanation", r"^\s*why\b"),
    ("trend prediction", r"historical behaviou?r|\bin the future\b|\bmight (do|innovate)\b"),
    ("outcome prediction", r"\bpredict\b.*\b(develop|evolve|unfold)|\bcurrent (international )?situation\b"),
    ("contrast analysis", r"compare and contrast|similarities and differences"),
    ("historical comparison", r"^\s*compare the\b.*\bimpacts?\b"),
    ("evaluation and reflection", r"\bhow do you evaluate\b|\bevaluate\b.*\bimpact\b"),
    ("application and practice", r"\bbe applied\b|\bapply\b|\bapplication\b"),
))  # fmt: skip

_PERSON = ["person", "painter", "composer", "writer", "scientist", "politician", "monarch", "poet", "architect",
           "sculptor", "philosopher", "film director", "playwright", "mathematician", "activist", "engineer", "actor",
           "musician", "pope", "human"]
_EVENT = ["event", "battle", "war", "revolution", "military conflict", "election", "treaty"]
_WORK = ["painting", "novel", "opera", "film", "book", "sculpture", "play", "ballet", "poem", "musical work"]
_PLACE_ORG = ["country", "city", "university", "museum", "international organization", "organization", "company"]
_FIELD = ["art movement", "movement", "field of work", "discipline", "genre"]


@dataclass(frozen=True)
class QuestionTemplate:
    """One Table 1 shape: ``text`` with ``{a}`` (and ``{b}``), the types each placeholder takes, and how a pair is
    chosen: ``linked`` (a triple joins a to b) or ``same_type`` (two entities of one type)."""

    id: str
    subtype: str
    text: str
    a_types: tuple[str, ...]
    b_types: tuple[str, ...] = ()
    pair: str = ""
    placeholders: tuple[str, ...] = ("entity",)

    @property
    def qtype(self) -> str:
        return SUBTYPES[self.subtype]


#: The default templates, one or two per sub-type (Table 1's shapes over KG entities).
TEMPLATES: tuple[QuestionTemplate, ...] = (
    QuestionTemplate("char-desc-v1", "character description",
                     "Describe {a}'s significant contributions during their career.", tuple(_PERSON),
                     placeholders=("person",)),
    QuestionTemplate("event-desc-v1", "event description",
                     "Provide a detailed description of the background and course of {a}.", tuple(_EVENT),
                     placeholders=("event",)),
    QuestionTemplate("work-desc-v1", "event description",
                     "Provide a detailed description of the background and creation of {a}.", tuple(_WORK),
                     placeholders=("event",)),
    QuestionTemplate("cause-v1", "cause explanation", "Why did {a} become associated with {b}, and when?",
                     tuple(_PERSON), tuple(_PLACE_ORG + _FIELD), "linked", ("person", "entity")),
    QuestionTemplate("relationship-v1", "relationship explanation",
                     "Explain the relationship between {a} and {b} and its significance.",
                     tuple(_PERSON + _WORK), tuple(_PERSON + _WORK + _PLACE_ORG), "linked", ("entity A", "entity B")),
    QuestionTemplate("trend-v1", "trend prediction",
                     "Based on the historical behavior of {a}, what do you think it might do in the future?",
                     tuple(_PLACE_ORG), placeholders=("entity",)),
    QuestionTemplate("outcome-v1", "outcome prediction",
                     "Based on the current situation, how do you predict {a} will develop?",
                     tuple(_FIELD + _PLACE_ORG), placeholders=("event",)),
    QuestionTemplate("contrast-v1", "contrast analysis",
                     "Compare and contrast the similarities and differences between {a} and {b}.",
                     tuple(_PERSON + _WORK), pair="same_type", placeholders=("entity A", "entity B")),
    QuestionTemplate("history-v1", "historical comparison", "Compare the impact of {a} and {b}.",
                     tuple(_EVENT + _FIELD + _WORK), pair="same_type",
                     placeholders=("historical event A", "historical event B")),
    QuestionTemplate("evaluation-v1", "evaluation and reflection",
                     "How do you evaluate the impact of {a} on {b}? Please explain your viewpoint.",
                     tuple(_PERSON), tuple(_FIELD + _PLACE_ORG), "linked", ("person", "field")),
    QuestionTemplate("application-v1", "application and practice",
                     "How do you think the ideas of {a} can be applied to {b} today?",
                     tuple(_FIELD), tuple(_PLACE_ORG + _FIELD), "linked", ("theory", "practical issue")),
)

#: The columns of the ``okgqa_question_bank`` table, in order.
QUESTION_SCHEMA_COLUMNS: tuple[str, ...] = (
    "question_id", "question", "type", "subtype", "placeholders", "mentions", "seeds", "unmatched", "naturalness",
    "difficulty", "source", "provenance", "rejected", "snapshot_id",
)


@dataclass(frozen=True)
class Question:
    """One open question with its provenance. ``placeholders`` maps a placeholder to the text filled in;
    ``mentions`` are the entity mentions as given (labels or IRIs), ``seeds`` the linked entity ids,
    ``unmatched`` the mentions that linked to nothing; ``rejected`` is the reason a question is not asked (None:
    asked)."""

    question_id: str
    question: str
    type: str
    subtype: str
    placeholders: Mapping[str, str]
    mentions: tuple[str, ...]
    seeds: tuple[int, ...]
    unmatched: tuple[str, ...] = ()
    naturalness: str | None = None
    difficulty: str | None = None
    source: str = "templates"
    provenance: str = ""
    rejected: str | None = None
    snapshot_id: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def as_row(self) -> dict[str, Any]:
        """A flat row of the ``okgqa_question_bank`` table (placeholders as JSON)."""
        row = asdict(self)
        row.pop("extra")
        row["placeholders"] = json.dumps(dict(self.placeholders), ensure_ascii=False, sort_keys=True)
        row["mentions"], row["seeds"], row["unmatched"] = list(self.mentions), list(self.seeds), list(self.unmatched)
        return {k: row[k] for k in QUESTION_SCHEMA_COLUMNS}


def subtype_of(text: str | None) -> tuple[str, str] | None:
    """(type, sub-type) of a type or sub-type name as files and generators write it ("Contrast Analysis",
    "contrast_analysis", "comparative"); a bare type has sub-type :data:`UNKNOWN_SUBTYPE` (see
    :func:`infer_subtype`). None when the name is neither."""
    norm = re.sub(r"[\s_-]+", " ", (text or "").strip().lower())
    if norm in SUBTYPES:
        return SUBTYPES[norm], norm
    if norm == "evaluation reflection" or norm == "evaluation & reflection":
        return "critical", "evaluation and reflection"
    if norm in TYPES:
        return norm, UNKNOWN_SUBTYPE
    return None


def infer_subtype(question: str, qtype: str) -> str | None:
    """The sub-type of ``qtype`` whose Table 1 phrasing ``question`` uses, for a question given a type only; None
    when none fits (the sub-type stays unknown).

        >>> infer_subtype("Why did Nixon choose to resign from the presidency in 1974?", "explanatory")
        'cause explanation'
    """
    for subtype, pattern in _PHRASINGS:
        if SUBTYPES[subtype] == qtype and pattern.search(question or ""):
            return subtype
    return None


def _kind(type_text: str | None, question: str) -> tuple[str, str] | None:
    """(type, sub-type) of a question's given type: a bare type's sub-type inferred from the question's phrasing
    and marked ``(inferred)``, else :data:`UNKNOWN_SUBTYPE`."""
    kind = subtype_of(type_text)
    if kind is None or kind[1] != UNKNOWN_SUBTYPE:
        return kind
    inferred = infer_subtype(question, kind[0])
    return kind[0], f"{inferred} (inferred)" if inferred else UNKNOWN_SUBTYPE


def template_questions(con: Any, templates: Sequence[QuestionTemplate] = TEMPLATES, *, per_template: int,
                       seed: int = 0, snapshot_id: str = "") -> tuple[list[Question], list[dict[str, Any]]]:  # fmt: skip
    """Questions from ``templates`` over KG entities of fitting types, ``per_template`` each (fewer when the KG has
    fewer fitting entities), in a seeded order; and one reject row per template the KG cannot fill (with the
    reason). ``con``: a DuckDB connection with the KG's schema selected."""
    from kgprobe.sql import load_sql

    out: list[Question] = []
    rejects: list[dict[str, Any]] = []
    for tpl in templates:
        if tpl.subtype not in SUBTYPES:
            raise ConfigError(f"okgqa template {tpl.id}: unknown sub-type {tpl.subtype!r}; use one of {sorted(SUBTYPES)}")
        # the database orders and cuts: the cost is a scan of the KG, not a Python pass over every fitting entity
        if tpl.pair == "linked":
            rows = con.execute(load_sql("okgqa/linked_first_pairs"), {
                "head_types": list(tpl.a_types), "tail_types": list(tpl.b_types), "seed": seed,
                "limit": per_template}).fetchall()
            fills: list[tuple[tuple[int, str], ...]] = [((int(h), hl), (int(t), tl)) for h, hl, t, tl in rows]
        else:
            pairs = tpl.pair == "same_type"
            rows = con.execute(load_sql("okgqa/typed_fills"), {"types": list(tpl.a_types), "seed": seed,
                                                               "pairs": pairs, "limit": per_template}).fetchall()
            fills = [((int(a), al), (int(b), bl)) if pairs else ((int(a), al),) for a, al, b, bl in rows]
        if not fills:
            rejects.append({"template": tpl.id, "subtype": tpl.subtype,
                            "reason": f"no entity of type(s) {list(tpl.a_types)}"
                                      + (f" / {list(tpl.b_types)}" if tpl.b_types else "") + " fits this KG"})
            continue
        for fill in fills:
            values = {"a": fill[0][1], "b": fill[1][1] if len(fill) > 1 else ""}
            text = tpl.text.format(**values)
            qid = content_id(snapshot_id, "okgqa-template", tpl.id, [e for e, _ in fill])
            out.append(Question(
                question_id=qid, question=text, type=tpl.qtype, subtype=tpl.subtype,
                placeholders={name: label for name, (_, label) in zip(tpl.placeholders, fill)},
                mentions=tuple(label for _, label in fill), seeds=tuple(dict.fromkeys(e for e, _ in fill)),
                naturalness=None, difficulty=None, source="templates", provenance=f"template:{tpl.id}",
                snapshot_id=snapshot_id,
            ))  # fmt: skip
    return out, rejects


def _literal(cell: str) -> Any:
    cell = (cell or "").strip()
    if not cell:
        return None
    try:
        return ast.literal_eval(cell)
    except (ValueError, SyntaxError):
        try:
            return json.loads(cell)
        except json.JSONDecodeError:
            return cell


def _linked(linker: Any, mentions: Sequence[str]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    seeds: list[int] = []
    unmatched: list[str] = []
    for m in mentions:
        eid, _ = linker.link(m)
        if eid is None:
            unmatched.append(m)
        elif eid not in seeds:
            seeds.append(int(eid))
    return tuple(seeds), tuple(unmatched)


def questions_from_csv(linker: Any, path: str | Path, *, limit: int | None = None,
                       snapshot_id: str = "") -> list[Question]:  # fmt: skip
    """Questions of an OKGQA-style CSV (``question, type, placeholders, naturalness, difficulty,
    dbpedia_entities``; extra columns are ignored), linked with ``linker``. A row whose entities link to nothing
    is kept with ``rejected`` set, so the count of what the loaded KG covers is visible."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"okgqa question file {path} not found; fix suites.okgqa.files[].path")
    out: list[Question] = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        cols = reader.fieldnames or []
        for needed in ("question", "dbpedia_entities"):
            if needed not in cols:
                raise ConfigError(f"{path}: no column {needed!r} (columns: {cols}); an OKGQA question file needs "
                                  "question and dbpedia_entities")
        for number, row in enumerate(reader, start=2):
            if limit is not None and len(out) >= limit:
                break
            entities = _literal(row.get("dbpedia_entities") or "")
            placeholders = _literal(row.get("placeholders") or "")
            mentions = [str(v) for v in (entities.values() if isinstance(entities, dict) else entities or []) if v] \
                if not isinstance(entities, str) else [entities]
            seeds, unmatched = _linked(linker, mentions)
            kind = _kind(row.get("type"), row["question"])
            qtype, subtype = kind if kind else ("", str(row.get("type") or ""))
            reason = None
            if not seeds:
                reason = "no entity links to this KG" if mentions else "no entities"
            elif kind is None:
                reason = f"unknown question type {row.get('type')!r}"
            out.append(Question(
                question_id=content_id(snapshot_id, "okgqa-file", path.name, number, row["question"]),
                question=row["question"], type=qtype, subtype=subtype,
                placeholders={str(k): str(v) for k, v in placeholders.items()} if isinstance(placeholders, dict) else {},
                mentions=tuple(mentions), seeds=seeds, unmatched=unmatched,
                naturalness=row.get("naturalness") or None, difficulty=row.get("difficulty") or None,
                source="files", provenance=f"{path.name}:{number}", rejected=reason, snapshot_id=snapshot_id,
            ))  # fmt: skip
    return out


#: The paper's D.2 system instruction, verbatim.
GENERATION_SYSTEM = (
    "Generate open-ended questions about different types: character description, event description, cause "
    "explanation, relationship explanation, trend prediction, outcome prediction, contrast analysis, historical "
    "comparison, evaluation and reflection, and application and practice. Please provide specific suggestions. "
    "Generate the questions, the type of the questions, the placeholders, the naturalness of your generated "
    "questions (choose from high, medium, and unnatural), the difficulty of the generated questions (choose from "
    "hard, medium and easy) and DBpedia_entities (link the placeholders to DBpedia entities) in JSON format.")
_EXAMPLE = json.dumps({
    "question": "Compare and contrast the similarities and differences between the Apple iPhone and Samsung Galaxy "
                "in terms of user interface design.",
    "type": "contrast analysis",
    "placeholders": {"entity A": "Apple iPhone", "entity B": "Samsung Galaxy", "aspect": "user interface design"},
    "naturalness": "high", "difficulty": "medium",
    "dbpedia_entities": {"entity A": "http://dbpedia.org/resource/IPhone",
                         "entity B": "http://dbpedia.org/resource/Samsung_Galaxy"},
}, indent=2)  # fmt: skip


def generation_prompt(subtype: str, entities: Sequence[str] = ()) -> tuple[str, str]:
    """(system, user) of the D.2 prompt asking for one question of ``subtype``; ``entities`` (KG labels) are
    offered as the placeholders' fillers, so the answer links to the loaded KG."""
    hint = f" Use these entities as placeholders: {', '.join(entities)}." if entities else ""
    user = (f"Example 1:\n{_EXAMPLE}\n\nGenerate one question of type \"{subtype}\".{hint} Answer with one JSON "
            "object only.\n\nGeneration:")
    return GENERATION_SYSTEM, user


_NATURALNESS = {"high", "medium", "unnatural"}
_DIFFICULTY = {"hard", "medium", "easy"}


def parse_generated(text: str | None, *, linker: Any, generator: str, index: int,
                    snapshot_id: str = "") -> Question:  # fmt: skip
    """A generator's answer as a :class:`Question`: the first JSON object in ``text``, validated (``question``,
    ``type``, ``placeholders``, ``naturalness``, ``difficulty``, ``dbpedia_entities`` or ``entities``), its
    entities linked with ``linker``. Anything that fails is returned with ``rejected`` set to the reason."""
    qid = content_id(snapshot_id, "okgqa-generated", generator, index, text)
    base = dict(question_id=qid, question="", type="", subtype="", placeholders={}, mentions=(), seeds=(),
                source="generated", provenance=f"generator:{generator}#{index}", snapshot_id=snapshot_id)
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        return Question(**base, rejected="no JSON object in the answer")
    try:
        obj = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        return Question(**base, rejected=f"invalid JSON: {exc.msg}")
    if not isinstance(obj, dict):
        return Question(**base, rejected="the JSON is not an object")
    missing = [k for k in ("question", "type", "placeholders", "naturalness", "difficulty") if k not in obj]
    entities = obj.get("dbpedia_entities", obj.get("entities"))
    if entities is None:
        missing.append("dbpedia_entities")
    if missing:
        return Question(**base, rejected=f"missing field(s) {missing}")
    question = str(obj["question"]).strip()
    kind = _kind(str(obj["type"]), question)
    placeholders = obj["placeholders"] if isinstance(obj["placeholders"], dict) else None
    mentions = [str(v) for v in (entities.values() if isinstance(entities, dict) else entities
                                 if isinstance(entities, list) else []) if v]  # fmt: skip
    seeds, unmatched = _linked(linker, mentions)
    reason = None
    if not question:
        reason = "empty question"
    elif kind is None:
        reason = f"unknown type {obj['type']!r}"
    elif placeholders is None:
        reason = "placeholders is not an object"
    elif str(obj["naturalness"]).lower() not in _NATURALNESS:
        reason = f"naturalness {obj['naturalness']!r} not in {sorted(_NATURALNESS)}"
    elif str(obj["difficulty"]).lower() not in _DIFFICULTY:
        reason = f"difficulty {obj['difficulty']!r} not in {sorted(_DIFFICULTY)}"
    elif not mentions:
        reason = "no entities"
    elif not seeds:
        reason = f"no entity links to the KG ({mentions})"
    qtype, subtype = kind if kind else ("", str(obj["type"]))
    return Question(**{**base, "question": question, "type": qtype, "subtype": subtype,
                       "placeholders": {str(k): str(v) for k, v in (placeholders or {}).items()},
                       "mentions": tuple(mentions), "seeds": seeds},
                    unmatched=unmatched, naturalness=str(obj["naturalness"]).lower(),
                    difficulty=str(obj["difficulty"]).lower(), rejected=reason)


def accepted(questions: Iterable[Question]) -> list[Question]:
    """The questions that are asked (not rejected, with at least one seed)."""
    return [q for q in questions if q.rejected is None and q.seeds]
