"""Drowzee (Li et al.): questions from facts derived by logic rules and by metric temporal logic, answered with their
reasoning and checked against the proof by a graph oracle.

* :mod:`.temporal`: MTL formulas (Atom, Not, And, Or, Next, Finally, Globally, Until), :func:`holds` (Definition 1)
  and :func:`satisfying_years` (closed form, interval arithmetic);
* :mod:`.facts`: dated facts as events (KG ``temporal_facts``, YAGO11k / Wikidata12k TSV, Drowzee's events.json);
* :mod:`.rules`: the derivation rules in SQL (``sql/drowzee/``) with proofs, and relation-property proposals;
* :mod:`.templates`: Table 2, 3 and 4 wording and the declarative sentences of facts;
* :mod:`.questions`: rule and temporal items with their gold answers;
* :mod:`.oracle`: answer reading, offline triple extraction, graph similarity and Algorithm 3's categories;
* :mod:`.evaluation`: the extractor's precision and recall on sentences written from KG triples;
* :mod:`.suite`: :class:`DrowzeeSuite`; :mod:`.report`: its report section.

    >>> from kgprobe.suites.drowzee.temporal import Atom, Finally, satisfying_years
    >>> satisfying_years(Finally(0, 40, Atom("v")), {"v": [(1837, 1901)]})
    [(1797, 1901)]
"""

from __future__ import annotations

from kgprobe.suites.drowzee.temporal import (
    And,
    Atom,
    Finally,
    Globally,
    Next,
    Not,
    Or,
    Until,
    holds,
    satisfying_years,
)

__all__ = ["And", "Atom", "Finally", "Globally", "Next", "Not", "Or", "Until", "holds", "satisfying_years"]
