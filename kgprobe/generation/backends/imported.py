"""A model whose answers are only imported (``kgprobe import-responses``): it is never called.

A partition of such a model holds the prompts it has imported answers for; the others are left out of it (not
failed, not asked), so answers for part of a suite score that part. Asked anyway (by a caller that does not leave
them out), it fails every sample with what to do."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from kgprobe.generation.records import BaseBackend, Completion, Prompt, SamplingParams

__all__ = ["NOT_IMPORTED", "ImportedBackend", "ImportedConfig"]

#: The error of a sample an imported model was asked for.
NOT_IMPORTED = "not imported: this model's answers come only from `kgprobe import-responses`"


@dataclass(frozen=True)
class ImportedConfig:
    """A model answered elsewhere: its answers come only from ``kgprobe import-responses``, and its partitions hold
    the prompts it has answers for (the others are left out, not asked)."""


class ImportedBackend(BaseBackend):
    """Never generates: every sample asked of it fails with :data:`NOT_IMPORTED`."""

    name = "imported"

    def __init__(self, config: ImportedConfig | None = None) -> None:
        self.config = config or ImportedConfig()

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        t0 = time.perf_counter()
        return [[Completion.failure(NOT_IMPORTED, latency_s=time.perf_counter() - t0) for _ in range(params.n)]
                for _ in prompts]
