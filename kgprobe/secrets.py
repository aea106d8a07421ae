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

A known value is also found written in the escaped forms a reply may carry it in, character by character and in
any mix: JSON and other backslash escapes (``sk-a\\/b``, ``\\u0073k-...``, ``\\x73``, doubled backslashes of
JSON inside JSON), percent-encoding (``%2F``, and ``%252F`` encoded twice) and HTML character references
(``&#47;``, ``&#x2f;``), letters in either case. Not recognised: a value transformed as a whole (base64, a hash,
reversed or split into pieces that are not adjacent).

Model answers and every other reply text pass here too (:class:`kgprobe.generation.Completion` masks its text,
finish reason and log-probabilities), so a key a provider echoes in a normal answer is masked before that answer is
stored, scored, shown or sent to a judge.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import lru_cache

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


# the characters that start an escaped form: a text without any of them holds a known value only in clear
_ESCAPE_START = re.compile(r"[\\%&]")


def _char_forms(ch: str) -> str:
    """A regex for one character written in clear or in any of its escaped forms (see the module docstring)."""
    code = ord(ch)
    forms = [r"\\*" + re.escape(ch)]  # as is, or after backslashes (JSON's \/, a regex or shell escape)
    if code < 0x10000:
        forms.append(rf"\\+u{code:04x}")
    if code < 0x100:
        forms.append(rf"\\+x{code:02x}")
    forms.append("".join(rf"%(?:25)*{b:02x}" for b in ch.encode("utf-8")))
    forms.append(rf"&#0*{code};|&#x0*{code:x};")
    return "(?:" + "|".join(forms) + ")"


@lru_cache(maxsize=256)
def _escaped(value: str) -> re.Pattern[str]:
    return re.compile("".join(_char_forms(ch) for ch in value), re.IGNORECASE)


# (the environment's variable names, the registered names) -> the names whose values are secrets
_env_names: list[tuple[tuple[object, ...], frozenset[str], tuple[str, ...]]] = []


def _secret_env_names() -> tuple[str, ...]:
    """The names of the environment variables that hold secrets, found again only when a variable was added or
    removed (every answer is masked: reading and matching the whole environment each time would cost more than the
    masking itself)."""
    data = getattr(os.environ, "_data", None)  # CPython's undecoded names: comparing them decodes nothing
    names = tuple(data) if isinstance(data, dict) else tuple(os.environ)
    registered = frozenset(_registered_env)
    if _env_names and _env_names[0][:2] == (names, registered):
        return _env_names[0][2]
    found = tuple(n for n in os.environ if n in registered or _SECRET_NAME.search(n))
    _env_names[:] = [(names, registered, found)]
    return found


def _known(extra: Iterable[str | None]) -> list[str]:
    values = set(_registered)
    values.update(v for v in extra if isinstance(v, str) and len(v) >= _MIN_LEN)
    for name in _secret_env_names():
        value = os.environ.get(name)
        if value is not None and len(value) >= _MIN_LEN:
            values.add(value)
    return sorted(values, key=len, reverse=True)


def mask_secrets(text: str | None, *, secrets: Iterable[str | None] = ()) -> str | None:
    """``text`` with every secret it holds replaced by ``***`` (see the module docstring); ``secrets`` adds values
    to mask. Call it on every error text before it is stored, logged or truncated. None stays None."""
    if not text or len(text) < _MIN_LEN:  # too short to hold anything masked
        return text
    for value in _known(secrets):
        if value in text:
            text = text.replace(value, MASK)
        if _ESCAPE_START.search(text):
            text = _escaped(value).sub(MASK, text)
    lowered = text.lower()  # the patterns below are searched only where their words occur
    if "authorization" in lowered or "api-key" in lowered or "api_key" in lowered:
        text = _HEADER.sub(lambda m: f"{m[1]}{m[2]}{m[3] + ' ' if m[3] else ''}{MASK}", text)
    if "bearer" in lowered or "basic" in lowered:
        text = _SCHEME.sub(lambda m: f"{m[1]}{m[2]}{MASK}", text)
    if "k-" in lowered or "aiza" in lowered:
        text = _KEY_SHAPE.sub(MASK, text)
    return text
