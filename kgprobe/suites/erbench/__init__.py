"""ERBench (Oh et al., NeurIPS 2024): hallucination questions from any relational database, with answers and
rationales verified through functional dependencies and foreign keys.

    >>> from kgprobe.suites.erbench import BinaryAnswer, binary_metrics, knows_entity
    >>> knows_entity("Yes.")
    True
    >>> binary_metrics([BinaryAnswer(text='Yes. The movie is "Avatar".', expected="yes", inferred=("Avatar",))]).AR
    1.0
    >>> choice_metrics([ChoiceAnswer("Option 2: it was produced in the USA.", 3, "2", ("USA",))]).AR
    1.0

Modules: :mod:`.spec` (the declarative database spec), :mod:`.erdb` (loading it with FD / FK checks),
:mod:`.questions` (the questions, in DuckDB), :mod:`.verify` (reading answers, rationale matching, the measures),
:mod:`.scoring` (per-item votes and metric rows), :mod:`.suite` (:class:`ERBenchSuite`), :mod:`.report`.
"""

from __future__ import annotations

from kgprobe.suites.erbench.verify import (
    BinaryAnswer,
    ChoiceAnswer,
    ERMetrics,
    binary_metrics,
    choice_metrics,
    knows_entity,
)

__all__ = ["BinaryAnswer", "ChoiceAnswer", "ERBenchSuite", "ERMetrics", "binary_metrics", "choice_metrics",
           "knows_entity", "load_erdb", "load_spec"]


def __getattr__(name: str):
    # the suite, loader and spec import DuckDB and the generation records; the answer readers above do not
    if name == "ERBenchSuite":
        from kgprobe.suites.erbench.suite import ERBenchSuite

        return ERBenchSuite
    if name == "load_erdb":
        from kgprobe.suites.erbench.erdb import load_erdb

        return load_erdb
    if name == "load_spec":
        from kgprobe.suites.erbench.spec import load_spec

        return load_spec
    raise AttributeError(name)
