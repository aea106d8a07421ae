"""kgprobe: hallucination benchmarks for LLMs, written from knowledge graphs and relational databases.

The core library. Every algorithm lives here and none of it imports Dagster; the Dagster code location
(``pipelines/``, ``assets/``, ``resources/``) only calls into it.
"""

from __future__ import annotations

from kgprobe.errors import KGProbeError

__all__ = ["KGProbeError", "__version__"]
__version__ = "0.1.0"
