"""The knowledge graph: ingestion of every supported format into DuckDB, KG statistics, k-hop subgraphs with
Personalized PageRank pruning, and the queries whose subgraphs are retrieved.

    >>> from kgprobe.kg import KGSource, load_kg, khop, ppr_prune
"""

from __future__ import annotations

from kgprobe.kg.graph import Subgraph, khop, personalized_pagerank, ppr_prune
from kgprobe.kg.ingest import IngestReport, KGSource, load_kg

__all__ = ["IngestReport", "KGSource", "Subgraph", "khop", "load_kg", "personalized_pagerank", "ppr_prune"]
