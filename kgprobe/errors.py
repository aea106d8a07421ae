"""Exceptions a user can cause: each message names the input and says what to do."""

from __future__ import annotations

__all__ = ["ConfigError", "IngestError", "KGProbeError"]


class KGProbeError(Exception):
    """Base class of every error kgprobe raises on purpose."""


class IngestError(KGProbeError):
    """A knowledge-graph input cannot be read: a missing file, an unknown format, a malformed row in strict mode."""


class ConfigError(KGProbeError):
    """The project configuration is invalid: a missing key, a wrong type, an unknown name."""
