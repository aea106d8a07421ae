"""The bundled sample KG with OKGQA template questions, their PPR subgraphs and items, built once per session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest

from kgprobe.generation.backends.reference import ReferenceBackend
from kgprobe.generation.records import ModelSpec, Prompt, SamplingParams
from kgprobe.kg.graph import iter_khop_batch, ppr_prune_batch
from kgprobe.kg.ingest import KGSource, load_kg
from kgprobe.kg.queries import okgqa_question_queries
from kgprobe.suites.okgqa.questions import template_questions
from kgprobe.suites.okgqa.suite import OKGQASettings, build_items

SAMPLE = Path(__file__).resolve().parents[4] / "examples" / "sample"


class HashEmbedder:
    """A deterministic stand-in for the sentence embedder: bag of hashed words, unit vectors (fast, no weights)."""

    dim = 64

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in str(t).lower().split():
                out[i, sum(map(ord, w)) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def similarity(self, a, b):
        return self.embed(a) @ self.embed(b).T

    def load_cache(self, path):
        return 0

    def save(self, path):
        return Path(path)


def load_sample() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the sample KG loaded and selected."""
    con = duckdb.connect()
    load_kg(con, KGSource(triples=[SAMPLE / "triples.tsv"], entity_labels=SAMPLE / "entity_labels.tsv",
                          relation_labels=SAMPLE / "relation_labels.tsv", entity_types=SAMPLE / "entity_types.tsv",
                          name="sample"))
    con.execute("USE sample")
    return con


def build_sample(sample_con: duckdb.DuckDBPyConnection, per_template: int = 2) -> dict[str, Any]:
    """Template questions, their PPR subgraphs (threshold 0.005, as examples/sample.yaml) and items."""
    questions, template_rejects = template_questions(sample_con, per_template=per_template, seed=0,
                                                         snapshot_id="snap")
    rows = [q.as_row() for q in questions]
    queries = {q.query_id: list(q.seeds) for q in okgqa_question_queries(rows)}
    subgraphs = {}
    for part in iter_khop_batch(sample_con, queries, 2):
        for qid, sub in ppr_prune_batch(part, queries, 0.005).items():
            subgraphs[qid] = list(sub.triples)
    items, rejects = build_items(rows, subgraphs, sample_con, OKGQASettings(), snapshot_id="snap", seed=0)
    ent = dict(sample_con.execute("SELECT id, label FROM entities").fetchall())
    rel = dict(sample_con.execute("SELECT id, label FROM relations").fetchall())
    return {"questions": rows, "template_rejects": template_rejects, "subgraphs": subgraphs, "items": items,
            "rejects": rejects, "entity_labels": ent, "relation_labels": rel}


@pytest.fixture(scope="session")
def sample_con() -> duckdb.DuckDBPyConnection:
    return load_sample()


@pytest.fixture(scope="session")
def sample_build(sample_con) -> dict[str, Any]:
    return build_sample(sample_con)


def answer(kind: str, prompts: list[Prompt], *, model: str | None = None, context: dict | None = None) -> list[dict]:
    """Response rows of a reference model, as the factory stores them."""
    comps = ReferenceBackend(kind).generate(prompts, SamplingParams(n=1, temperature=0.0))
    return [{"response_id": f"{model or kind}-{p.item_id}", "item_id": p.item_id, "model": model or kind,
             "sample_index": 0, "text": c[0].text, "error": c[0].error,
             **({"context": context[p.item_id]} if context else {})} for p, c in zip(prompts, comps)]


def reference_judge(spec: ModelSpec, prompts: list[Prompt]) -> dict[str, dict]:
    """A judge runner over the reference backends (what ScoringOptions.judge does with the response store)."""
    comps = ReferenceBackend(spec.config).generate(prompts, spec.params)
    return {p.item_id: {"text": c[0].text, "error": c[0].error, "response_id": f"{spec.name}|{p.item_id}"}
            for p, c in zip(prompts, comps)}


def oracle_judge_spec() -> ModelSpec:
    from kgprobe.generation.backends.reference import ReferenceConfig

    return ModelSpec(name="oracle", backend="reference", config=ReferenceConfig("oracle"),
                     params=SamplingParams(n=1, temperature=0.0, max_tokens=8))
