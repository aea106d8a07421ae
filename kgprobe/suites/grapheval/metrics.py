"""GraphEval's metrics: Correctness, Truthfulness and Informativeness of one positive statement and its negatives
(the paper's formula 2), and their averages over positives with a seeded bootstrap interval.

For a positive statement τ with negatives N(τ) and a metric's pair of functions F (on τ) and F' (on each τ'):

    Metric(τ) = max(0, F(τ) − mean over τ' ∈ N(τ) of F'(τ'))

=================  ==============================================  ==============================================
metric             F(τ) = 1 when τ is answered                     F'(τ') = 1 when τ' is answered
=================  ==============================================  ==============================================
correctness        true                                            anything but false
truthfulness       true or idk                                     true
informativeness    anything but idk                                idk
=================  ==============================================  ==============================================

F(τ) = 0 gives 0 whatever the negatives (a positive answered false scores 0 for Correctness and Truthfulness, but
Informativeness credits any verdict, so false earns it); the negatives then take away their mean. A positive
without negatives scores F(τ) (an empty mean is 0).

Unreadable answers (label ``"unknown"``: the reader found no true, false or IDK) are read one of two ways,
``unknown_as``:

* ``"idk"`` (the paper, the default): scored exactly as "I don't know", as GraphEval's released reader does with
  anything that is not a verdict (and with a tied vote);
* ``"penalty"`` (kgprobe's stricter reading): never credited: an unreadable answer to τ gives F(τ) = 0 for every
  metric, and one to τ' gives F'(τ') = 1 (the full penalty), so a model cannot gain by answering in a form nobody
  can read.

The share of unreadable answers is reported beside the metrics (``unknown_share``) either way.

    >>> s = statement_scores("true", ["false", "idk", "true"])
    >>> round(s.correctness, 4), round(s.truthfulness, 4), round(s.informativeness, 4)
    (0.3333, 0.6667, 0.6667)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["LABELS", "METRICS", "UNKNOWN_AS", "StatementScores", "statement_scores"]

#: The labels a statement's answer is read as: true, false, I don't know, or unreadable.
LABELS: tuple[str, ...] = ("true", "false", "idk", "unknown")
#: GraphEval's three metrics, in the paper's order of Table 2.
METRICS: tuple[str, ...] = ("truthfulness", "informativeness", "correctness")
#: How an unreadable label is scored: as "idk" (the paper) or with the full penalty (kgprobe's reading).
UNKNOWN_AS: tuple[str, ...] = ("idk", "penalty")


@dataclass(frozen=True)
class StatementScores:
    """Formula (2) for one positive statement and its negatives: each metric in [0, 1]."""

    correctness: float
    truthfulness: float
    informativeness: float

    def as_dict(self) -> dict[str, float]:
        """The three metrics by name."""
        return {"correctness": self.correctness, "truthfulness": self.truthfulness,
                "informativeness": self.informativeness}


def _check(label: str, where: str) -> str:
    if label not in LABELS:
        raise ValueError(f"statement_scores: {where} label must be one of {', '.join(LABELS)}, got {label!r}")
    return label


def _f(metric: str, label: str) -> float:
    if label == "unknown":
        return 0.0
    if metric == "correctness":
        return float(label == "true")
    if metric == "truthfulness":
        return float(label in ("true", "idk"))
    return float(label != "idk")


def _f_neg(metric: str, label: str) -> float:
    if label == "unknown":
        return 1.0
    if metric == "correctness":
        return float(label != "false")
    if metric == "truthfulness":
        return float(label == "true")
    return float(label == "idk")


def statement_scores(positive_label: str, negative_labels: Sequence[str], *,
                     unknown_as: str = "idk") -> StatementScores:
    """Return Correctness, Truthfulness and Informativeness (formula 2) of one positive statement answered
    ``positive_label`` whose negatives were answered ``negative_labels`` (labels: ``"true"``, ``"false"``,
    ``"idk"``, or ``"unknown"`` for an unreadable answer, scored as ``"idk"`` when ``unknown_as="idk"`` (the
paper) and with the full penalty when ``unknown_as="penalty"``; see the module docstring).

    Call it per positive and average over positives; that average is what GraphEval reports.

        >>> statement_scores("true", ["false", "false"]).correctness
        1.0
        >>> statement_scores("false", ["false"]).truthfulness
        0.0
        >>> statement_scores("unknown", []).truthfulness, statement_scores("unknown", [], unknown_as="penalty").truthfulness
        (1.0, 0.0)
    """
    if unknown_as not in UNKNOWN_AS:
        raise ValueError(f"statement_scores: unknown_as must be one of {', '.join(UNKNOWN_AS)}, got {unknown_as!r}")
    pos = _check(positive_label, "positive")
    negs = [_check(label, "negative") for label in negative_labels]
    if unknown_as == "idk":
        pos = "idk" if pos == "unknown" else pos
        negs = ["idk" if label == "unknown" else label for label in negs]
    out = {}
    for metric in METRICS:
        penalty = sum(_f_neg(metric, label) for label in negs) / len(negs) if negs else 0.0
        out[metric] = max(0.0, _f(metric, pos) - penalty)
    return StatementScores(**out)
