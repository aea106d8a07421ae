"""The benchmarks kgprobe implements, one package per paper: ``fpq`` (KG-FPQ, false-premise questions)."""

from __future__ import annotations

__all__: list[str] = []
