"""GraphEval (Liu et al.): true / false / I-don't-know statements over a whole KG, negatives verified false, the
paper's Correctness, Truthfulness and Informativeness, and an optional hidden-state judge.

* :mod:`.profiles`: the paper's protocol (the headline) and kgprobe's stricter variant;
* :mod:`.templates`: a statement template per relation (config, GraphEval's DBpedia templates, proposed from the
  relation's key and label by :mod:`kgprobe.kg.verbalise`, a flagged fallback);
* :mod:`.statements`: positives (every triple, a uniform sample, or per relation) and k verified negatives each;
* :mod:`.metrics`: formula (2) for one positive and its negatives (:func:`statement_scores`);
* :mod:`.scoring`: one model partition read, voted and measured, with bootstrap intervals over positives;
* :mod:`.judge`: the hidden-state judge (the paper's §3.2);
* :mod:`.suite`: :class:`GraphEvalSuite`.

    >>> from kgprobe.suites.grapheval import statement_scores
    >>> statement_scores("true", ["false", "idk", "true"]).correctness
    0.33333333333333337
"""

from __future__ import annotations

from kgprobe.suites.grapheval.metrics import METRICS, StatementScores, statement_scores

__all__ = ["METRICS", "GraphEvalSuite", "StatementScores", "statement_scores"]


def __getattr__(name: str):  # the suite imports the shared stages; the metrics stay importable without them
    if name == "GraphEvalSuite":
        from kgprobe.suites.grapheval.suite import GraphEvalSuite

        return GraphEvalSuite
    raise AttributeError(name)
