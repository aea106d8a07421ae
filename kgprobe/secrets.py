"""One masking function for every error text kgprobe stores or logs: API keys never reach the response store, the
warehouse, the report or Dagster's event log, even when a provider echoes them back.

    >>> register_secret_env("OPENAI_API_KEY")          # the config's api_key_env names are registered on load
    >>> mask_secrets('HTTP 401: {"authorization": "Bearer sk-abc123def456ghi789"}')
    'HTTP 401: {"authorization": "Bearer ***"}'

What is masked, longest first: the values of the environment variables the config names (``api_key_env``,
``uri_env``) and of every environment variable whose name marks a secret (``*_KEY``, ``*_TOKEN``, ``*_SECRET``,
``*_PASSWORD``, ...), keys registered by a backend when it reads them; then whatever follows an ``Authorization``,
``Proxy-Authorization``, ``x-api-key`` or ``api-key`` header name or a ``Bearer`` / ``Basic`` scheme, and strings
shaped like provider keys (``sk-...``). Mask before truncating: a cut key no longer matches.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

__all__ = ["MASK", "mask_secrets", "register_secret", "register_secret_env"]

#: What a secret is replaced with.
MASK = "***"
# shorter values are too likely to occur in ordinary text to be masked by value
_MIN_LEN = 8
_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|URI|DSN)$", re.I)
_HEADER = re.compile(
    r"""((?:proxy-)?authorization|x-api-key|api[-_]key|x-goog-api-key|anthropic-api-key)"""  # a header or field name
    r"""(["']?\s*[:=]\s*["']?)"""                                                            # its separator
    r"""(?:(bearer|basic|token)\s+)?"""                                                       # an optional scheme
    r"""([^\s"',;(){}\[\]\\]+)""",                                                          # the credential
    re.I,
)
_SCHEME = re.compile(r"\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{8,})", re.I)
_KEY_SHAPE = re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_-]{16,}|\bsk-ant-[A-Za-z0-9_-]{16,}|\bAIza[0-9A-Za-z_-]{30,}")

_registered: set[str] = set()
_registered_env: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask ``value`` in every later :func:`mask_secrets` call of this process (a key a backend has read)."""
    if isinstance(value, str) and len(value) >= _MIN_LEN:
        _registered.add(value)


def register_secret_env(name: str | None) -> None:
    """Mask the value of environment variable ``name`` (read at each call, so a key exported later is covered)."""
    if isinstance(name, str) and name:
        _registered_env.add(name)


def _known(extra: Iterable[str | None]) -> list[str]:
    values = set(_registered)
    values.update(v for v in extra if isinstance(v, str) and len(v) >= _MIN_LEN)
    for name, value in os.environ.items():
        if (name in _registered_env or _SECRET_NAME.search(name)) and len(value) >= _MIN_LEN:
            values.add(value)
    return sorted(values, key=len, reverse=True)


def mask_secrets(text: str | None, *, secrets: Iterable[str | None] = ()) -> str | None:
    """``text`` with every secret it holds replaced by ``***`` (see the module docstring); ``secrets`` adds values
    to mask. Call it on every error text before it is stored, logged or truncated. None stays None."""
    if not text:
        return text
    for value in _known(secrets):
        if value in text:
            text = text.replace(value, MASK)
    text = _HEADER.sub(lambda m: f"{m[1]}{m[2]}{m[3] + ' ' if m[3] else ''}{MASK}", text)
    text = _SCHEME.sub(lambda m: f"{m[1]}{m[2]}{MASK}", text)
    return _KEY_SHAPE.sub(MASK, text)
