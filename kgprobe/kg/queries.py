"""Queries: what the subgraph stage retrieves context for. A query is an id, an optional text, and seed entities.

Three sources, combinable in one project config:

* explicit lists of seed entity keys or labels (:func:`queries_from_lists`);
* a question file with entity mentions, like OKGQA's question CSVs whose ``dbpedia_entities`` column holds
  DBpedia IRIs (:func:`queries_from_file`);
* a seeded sample of entities per type (:func:`sample_queries`), so later stages can ask about random parts of
  the KG.

Mentions are linked to KG entities by IRI / key, then by exact label, then by normalised label (case, accents,
punctuation and underscores ignored). A mention that matches nothing is recorded on its query, never dropped
silently, and a query none of whose mentions matched keeps an empty seed list so that checks can report it.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from kgprobe.errors import ConfigError
from kgprobe.sql import load_sql

__all__ = [
    "EntityLinker",
    "fpq_subject_query_id",
    "fpq_subject_queries",
    "okgqa_query_id",
    "okgqa_question_queries",
    "Query",
    "normalise_label",
    "queries_from_file",
    "queries_from_lists",
    "sample_queries",
]


@dataclass(frozen=True)
class Query:
    """One retrieval query: ``seeds`` are entity ids; ``unmatched`` the mentions no entity matched."""

    query_id: str
    text: str | None
    seeds: tuple[int, ...]
    mentions: tuple[str, ...] = ()
    unmatched: tuple[str, ...] = ()
    source: str = ""
    link_methods: tuple[str, ...] = field(default=())

    def as_row(self) -> dict[str, Any]:
        """A flat row for Parquet."""
        return {
            "query_id": self.query_id,
            "text": self.text,
            "seeds": list(self.seeds),
            "mentions": list(self.mentions),
            "unmatched": list(self.unmatched),
            "link_methods": list(self.link_methods),
            "source": self.source,
        }


def normalise_label(text: str) -> str:
    """Lower case, accents removed, underscores and punctuation as single spaces: 'São_Paulo' -> 'sao paulo'."""
    text = urllib.parse.unquote(text).replace("_", " ")
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


class EntityLinker:
    """Links mentions (IRIs, keys or names) to entity ids of one KG schema, in that order of preference."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        rows = con.execute("SELECT id, key, label FROM entities ORDER BY id").fetchall()
        self.by_key: dict[str, int] = {}
        self.by_label: dict[str, int] = {}
        self.by_norm: dict[str, int] = {}
        for eid, key, label in rows:
            self.by_key[key] = eid
            # the lowest id wins when two entities share a label, so linking is deterministic
            self.by_label.setdefault(label, eid)
            self.by_norm.setdefault(normalise_label(label), eid)
        for eid, key, _ in rows:
            local = _local_name(key)
            if local:
                self.by_norm.setdefault(normalise_label(local), eid)

    def link(self, mention: str) -> tuple[int | None, str]:
        """(entity id or None, how it was linked: key / label / normalised label / '')."""
        m = mention.strip()
        if m in self.by_key:
            return self.by_key[m], "key"
        if m in self.by_label:
            return self.by_label[m], "label"
        local = _local_name(m)
        for candidate in (m, local) if local else (m,):
            norm = normalise_label(candidate)
            if norm and norm in self.by_norm:
                return self.by_norm[norm], "normalised label"
        return None, ""


def _local_name(key: str) -> str | None:
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", key) and "/" in key:
        return re.split(r"[/#]", key.rstrip("/#"))[-1] or None
    return None


def _link_all(linker: EntityLinker, mentions: Sequence[str]) -> tuple[tuple[int, ...], tuple[str, ...], tuple[str, ...]]:
    seeds: list[int] = []
    unmatched: list[str] = []
    methods: list[str] = []
    for mention in mentions:
        eid, how = linker.link(mention)
        if eid is None:
            unmatched.append(mention)
        elif eid not in seeds:
            seeds.append(eid)
            methods.append(how)
    return tuple(seeds), tuple(unmatched), tuple(methods)


def queries_from_lists(linker: EntityLinker, lists: Iterable[Mapping[str, Any]]) -> list[Query]:
    """Queries from config entries ``{id, seeds: [key or label, ...], text?}``."""
    out = []
    for i, entry in enumerate(lists):
        if not isinstance(entry, Mapping) or not entry.get("seeds"):
            raise ConfigError(f"queries.lists[{i}]: each entry needs 'seeds' (a list of entity keys or labels)")
        mentions = [str(s) for s in entry["seeds"]]
        seeds, unmatched, methods = _link_all(linker, mentions)
        qid = str(entry.get("id") or f"list-{i}")
        out.append(Query(qid, entry.get("text"), seeds, tuple(mentions), unmatched, "lists", methods))
    return out


def _parse_mentions(cell: str) -> list[str]:
    """Mentions from a cell: a Python/JSON dict (values are mentions), a list, or a ';'-separated string."""
    cell = (cell or "").strip()
    if not cell:
        return []
    if cell[0] in "{[":
        try:
            value = ast.literal_eval(cell)
        except (ValueError, SyntaxError):
            try:
                value = json.loads(cell)
            except json.JSONDecodeError:
                value = None
        if isinstance(value, dict):
            return [str(v) for v in value.values() if v]
        if isinstance(value, list):
            return [str(v) for v in value if v]
    return [part.strip() for part in cell.split(";") if part.strip()]


def queries_from_file(
    linker: EntityLinker,
    path: str | Path,
    *,
    mention_column: str = "dbpedia_entities",
    text_column: str | None = "question",
    id_column: str | None = "id",
    limit: int | None = None,
) -> list[Query]:
    """Queries from a CSV question file; each row's ``mention_column`` holds its entity mentions.

    Raises :class:`ConfigError` naming the file when it or a column is missing.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"question file {path} not found")
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        columns = reader.fieldnames or []
        for needed in (mention_column, text_column, id_column):
            if needed and needed not in columns:
                raise ConfigError(f"{path}: no column {needed!r} (columns: {columns})")
        out = []
        for number, row in enumerate(reader, start=2):
            if limit is not None and len(out) >= limit:
                break
            mentions = _parse_mentions(row.get(mention_column) or "")
            seeds, unmatched, methods = _link_all(linker, mentions)
            qid = str(row.get(id_column) or "") if id_column else ""
            qid = qid or f"{path.stem}-{number}"
            text = row.get(text_column) if text_column else None
            out.append(Query(qid, text, seeds, tuple(mentions), unmatched, f"{path.name}:{number}", methods))
    return out


def sample_queries(
    con: duckdb.DuckDBPyConnection,
    *,
    per_type: int,
    types: Sequence[str] | None = None,
    seeds_per_query: int = 1,
    seed: int = 0,
) -> list[Query]:
    """A seeded sample of ``per_type`` queries per entity type, each with ``seeds_per_query`` entities of it.

    Only entities that occur in at least one triple are sampled (an isolated entity has no neighbourhood). The
    order is a hash of (seed, entity), so the same seed gives the same queries whatever the table order.
    """
    if per_type < 1 or seeds_per_query < 1:
        raise ConfigError("queries.sample: per_type and seeds_per_query must be at least 1")
    rows = con.execute(load_sql("kg/queries_sample"), {"types": list(types) if types else None, "seed": seed}).fetchall()
    by_type: dict[str, list[int]] = {}
    for typ, eid in rows:
        by_type.setdefault(typ, []).append(eid)
    if types:
        missing = [t for t in types if t not in by_type]
        if missing:
            raise ConfigError(f"queries.sample.types: no entity of type(s) {missing} occurs in a triple of this KG")
    out = []
    for typ in sorted(by_type):
        pool = by_type[typ]
        for i in range(min(per_type, len(pool) // seeds_per_query)):
            seeds = tuple(pool[i * seeds_per_query : (i + 1) * seeds_per_query])
            digest = hashlib.sha256(f"{typ}|{seeds}".encode()).hexdigest()[:10]
            out.append(Query(f"sample-{normalise_label(typ).replace(' ', '-')}-{digest}", None, seeds, (), (), f"sample:{typ}",
                             ("sample",) * len(seeds)))
    return out


def fpq_subject_query_id(subject: int) -> str:
    """The query id of a KG-FPQ subject's context: the grounded prompts look their subgraph up by it."""
    return f"fpq-subject-{subject}"


def fpq_subject_queries(true_triples: Iterable[Mapping[str, Any]]) -> list[Query]:
    """One query per distinct subject of the KG-FPQ true triples: its (perturbed) subgraph is the KG context of
    the grounded variant of its questions."""
    subjects = sorted({int(t["subject"]) for t in true_triples})
    labels = {int(t["subject"]): t.get("subject_label") for t in true_triples}
    return [Query(fpq_subject_query_id(s), labels.get(s), (s,), (), (), "fpq_subjects", ("id",)) for s in subjects]


def okgqa_query_id(question_id: str) -> str:
    """The query id of an OKGQA question's context: its grounded items look their (perturbed) subgraph up by it."""
    return f"okgqa-{question_id}"


def okgqa_question_queries(questions: Iterable[Mapping[str, Any]]) -> list[Query]:
    """One query per asked OKGQA question (``okgqa_question_bank`` rows not rejected and with seed entities): its seeds'
    pruned (and perturbed) subgraph is what the question's retrieval searches."""
    out = []
    for q in questions:
        if q.get("rejected") or not q.get("seeds"):
            continue
        seeds = tuple(dict.fromkeys(int(s) for s in q["seeds"]))
        out.append(Query(okgqa_query_id(str(q["question_id"])), q.get("question"), seeds, tuple(q.get("mentions") or ()),
                         tuple(q.get("unmatched") or ()), f"okgqa_questions:{q.get('provenance') or ''}",
                         ("id",) * len(seeds)))
    return out
