"""A model that restates its retrieved context word for word, on the sample: from the clean subgraph it states
only KG facts (FActScore >= 0.9); from a relation-replaced one (RR-1.0) every line names a KG pair under a relation
the KG does not give it, so almost nothing is supported (FActScore <= 0.2), with any embedder."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from kgprobe.grounding.perturb import perturb
from kgprobe.suites.base import ScoringOptions
from kgprobe.suites.okgqa import OKGQASuite

from .conftest import HashEmbedder

SUITE = OKGQASuite()


class HashScorer:
    """A stand-in for s_G: a fixed pseudo-random plausibility per triple (RR gives every edge another relation)."""

    def __init__(self, num_relations: int) -> None:
        self.num_relations = num_relations

    @staticmethod
    def _s(h, r, t) -> float:
        return int(hashlib.sha256(f"{h}|{r}|{t}".encode()).hexdigest()[:8], 16) / 2**32

    def score(self, heads, relations, tails):
        return np.array([self._s(h, r, t) for h, r, t in zip(heads, relations, tails)])

    def score_all_relations(self, heads, tails):
        return np.array([[self._s(h, r, t) for r in range(self.num_relations)] for h, t in zip(heads, tails)])


def _verbatim_factscore(sample_con, sample_build, level: str, embedder) -> dict[str, float]:
    items = SUITE.select(sample_build["items"], setting="grounded")
    subgraphs = sample_build["subgraphs"]
    if level != "none":
        scorer = HashScorer(sample_con.execute("SELECT count(*) FROM relations").fetchone()[0])
        subgraphs = {q: perturb(t, "RR", 1.0, seed=0, scorer=scorer) for q, t in subgraphs.items()}
    context = SUITE.grounded_context(items, subgraphs, entity_labels=sample_build["entity_labels"],
                                     relation_labels=sample_build["relation_labels"], embedder=HashEmbedder())
    responses = [{"response_id": f"r{i}", "item_id": it["item_id"], "model": "verbatim", "sample_index": 0,
                  "text": context[it["item_id"]], "error": None, "context": context[it["item_id"]]}
                 for i, it in enumerate(items)]
    scored = SUITE.score(items, responses, model="verbatim", perturbation=level,
                         scoring=ScoringOptions(resamples=50, embedder=embedder))
    head = {m["metric"]: m for m in scored.metrics if not m["breakdown"] and m["judge"] == "heuristic"}
    assert head["factscore"]["n"] == len(items) >= 45
    return {k: head[k]["value"] for k in ("factscore", "fact_precision", "not_in_kg_share")}


def _check(sample_con, sample_build, embedder) -> None:
    clean = _verbatim_factscore(sample_con, sample_build, "none", embedder)
    replaced = _verbatim_factscore(sample_con, sample_build, "RR-1.0", embedder)
    assert clean["factscore"] >= 0.9, clean
    assert replaced["factscore"] <= 0.2, replaced
    assert replaced["not_in_kg_share"] > 0.5  # a pair under another relation is silent, not false


def test_verbatim_contexts_with_a_word_embedder(sample_con, sample_build):
    _check(sample_con, sample_build, HashEmbedder())


@pytest.mark.slow
def test_verbatim_contexts_with_the_sentence_embedder(sample_con, sample_build):
    from kgprobe.embedding import Embedder

    _check(sample_con, sample_build, Embedder())
