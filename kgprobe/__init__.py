"""kgprobe: hallucination benchmarks for LLMs, written from knowledge graphs and relational databases.

The core library. Every algorithm lives here and none of it imports Dagster; the Dagster code location
(``pipelines/``, ``assets/``, ``resources/``) only calls into it. Packages, by what they hold:

* :mod:`kgprobe.kg`: ingestion, KG statistics, k-hop subgraphs and PPR pruning, queries;
* :mod:`kgprobe.grounding`: what a grounded prompt puts before the question (perturbations, the triple scorer,
  KG similarity);
* :mod:`kgprobe.generation`: prompts, backends, the resumable runner and the response store;
* :mod:`kgprobe.scoring`: reading answers, votes and statistics, data-quality suites;
* :mod:`kgprobe.suites`: one package per benchmark (``fpq``: KG-FPQ);
* :mod:`kgprobe.report`: leaderboard tables, plots and the HTML report.

The most used names are importable from here (loaded on first use, so ``import kgprobe`` stays cheap):

    >>> from kgprobe import KGSource, load_kg, khop, personalized_pagerank, ppr_prune, parse_yes_no
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from kgprobe.errors import KGProbeError

__all__ = [
    "KGProbeError",
    "KGSource",
    "__version__",
    "khop",
    "load_kg",
    "parse_yes_no",
    "personalized_pagerank",
    "ppr_prune",
]
__version__ = "0.1.0"

_LAZY = {
    "KGSource": "kgprobe.kg.ingest",
    "load_kg": "kgprobe.kg.ingest",
    "khop": "kgprobe.kg.graph",
    "personalized_pagerank": "kgprobe.kg.graph",
    "ppr_prune": "kgprobe.kg.graph",
    "parse_yes_no": "kgprobe.scoring.answers",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kgprobe' has no attribute {name!r}")
