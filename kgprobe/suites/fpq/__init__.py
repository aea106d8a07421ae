"""KG-FPQ (Zhu et al.): false-premise questions written from a knowledge graph.

* :mod:`.edits`: true triples per domain, the six edit methods (NSC, NDC, NNSC, NNDC, NNSR, NNDR) over directed
  hops, and the Yes-No / WH questions written from templates;
* :mod:`.quality`: the data-quality rules of edits and questions, and the hop histogram beside the paper's;
* :mod:`.prompts`: the items as closed-book or KG-grounded prompts;
* :mod:`.metrics`: per-item votes and the KG-FPQ accuracies (gated and ungated);
* :mod:`.scoring`: one model partition read, judged, voted and measured.

    >>> from kgprobe.suites.fpq import edit
    >>> edit(con, [(12, 3, 40)], seed=0)
"""

from __future__ import annotations

from kgprobe.suites.fpq.edits import (
    ALL_METHODS,
    HOP_SAMPLING,
    DomainSpec,
    Edit,
    FPQItem,
    TrueTriple,
    edit,
    select_true_triples,
    write_questions,
)

__all__ = ["ALL_METHODS", "HOP_SAMPLING", "DomainSpec", "Edit", "FPQItem", "TrueTriple", "edit",
           "select_true_triples", "write_questions"]
