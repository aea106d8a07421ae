"""Text from data (KG labels, model answers, provider errors) made safe to show: in the HTML report and in the
Markdown that the Dagster UI renders as asset metadata.

Two things escaping alone does not stop. Bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and its kin) make a
cell read differently from what it holds ("txt.exe" shown as "exe.txt"); :func:`neutralise_bidi` shows each as a
visible ``[U+202E]``. Markdown images and links load or lead to other hosts when a person opens the UI
(``![x](http://tracker/pixel.png)`` is fetched on view); :func:`md_cell` escapes every character that could start
one, and :func:`safe_markdown` removes any image or link to another host that a whole Markdown text still holds,
keeping embedded ``data:image/...`` plots.

    >>> print(md_cell("![x](http://evil/p.png) \\u202e"))
    !\\[x\\](http\\:\\/\\/evil/p.png) \\[U+202E\\]
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["BIDI_CONTROLS", "console_text", "md_cell", "neutralise_bidi", "neutralise_bidi_deep", "safe_markdown"]

#: The Unicode bidirectional formatting characters (embeddings, overrides, isolates, marks).
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI = {ord(c): f"[U+{ord(c):04X}]" for c in BIDI_CONTROLS}
# C0 and C1 controls (ESC starts a terminal escape sequence: colours, cursor moves, a cleared screen) and bidi
# controls, for text printed to a terminal; white space is folded into single spaces before
_CONSOLE = {**{c: f"[U+{c:04X}]" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}, **_BIDI}
# characters that start or end Markdown syntax inside a table cell (links, images, emphasis, code, HTML, pipes)
_MD_SPECIAL = re.compile(r"([\\`|\[\]])")
_IMAGE = re.compile(r"!\[((?:[^\]\\]|\\.)*)\]\(\s*<?([^)\s>]*)>?[^)]*\)")
_LINK = re.compile(r"(?<![!\\])\[((?:[^\]\\]|\\.)*)\]\(\s*<?([^)\s>]*)>?[^)]*\)")
_REFERENCE = re.compile(r"(?im)^\s{0,3}\[[^\]]+\]:\s*\S+.*$")
_HTML_TAG = re.compile(r"(?i)<(?=/?\s*(?:img|a|iframe|image|svg|video|audio|source|link|object|embed)\b)")
_BARE_URL = re.compile(r"(?i)\b((?:https?|ftp)://|www\.)")


def neutralise_bidi(text: Any) -> Any:
    """``text`` with every bidirectional control shown as ``[U+XXXX]``; anything that is not a string is returned
    as it is (Markup stays Markup)."""
    if isinstance(text, str) and any(c in text for c in BIDI_CONTROLS):
        out = str.translate(text, _BIDI)
        return type(text)(out) if type(text) is not str else out
    return text


def neutralise_bidi_deep(value: Any) -> Any:
    """``value`` with :func:`neutralise_bidi` applied to every string inside it (in lists, tuples and dict keys and
    values): for data a page's script shows, such as the report's drill-down payload."""
    if isinstance(value, str):
        return neutralise_bidi(value)
    if isinstance(value, dict):
        return {neutralise_bidi_deep(k): neutralise_bidi_deep(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(neutralise_bidi_deep(v) for v in value)
    return value


def console_text(value: Any) -> str:
    """``value`` as text a terminal shows as it is: on one line, with control characters (ESC and the other C0 and
    C1 controls) and bidirectional controls shown as ``[U+XXXX]``, so a label cannot reorder, recolour or erase
    a console table.

        >>> console_text("gpt\u202e4 \x1b[2J")
        'gpt[U+202E]4 [U+001B][2J'
    """
    return " ".join(str(value).split()).translate(_CONSOLE)


def md_cell(value: Any, *, limit: int = 120) -> str:
    """One Markdown table cell of ``value``: on one line, at most ``limit`` characters of it, HTML shown as text
    (``&lt;``, so no ``<https://...>`` autolink either), brackets, backslashes, backticks and pipes
    backslash-escaped (no link, image, code span or extra column forms), bare URLs broken so that they are not
    turned into links, and bidi controls made visible."""
    if isinstance(value, float):
        return f"{value:.4g}"
    text = neutralise_bidi(" ".join(str(value).split())[:limit])
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _unlink(_MD_SPECIAL.sub(r"\\\1", text))


def _unlink(text: str) -> str:
    # GFM turns a bare http://... or www.... into a link; an escaped character in it stops that
    return _BARE_URL.sub(lambda m: m[1].replace(":", "\\:").replace("/", "\\/").replace(".", "\\."), text)


def _local(url: str) -> bool:
    return url.lower().startswith("data:image/") or url.startswith("#")


def safe_markdown(text: str) -> str:
    """``text`` (Markdown) without images or links to other hosts: an image becomes its alt text unless it is an
    embedded ``data:image/...``, a link its text unless it points within the page, reference definitions and raw
    ``<img>`` / ``<a>`` tags are shown as text, bare URLs are kept from becoming links, and bidi controls are made
    visible. For Markdown that kgprobe built itself from data it has escaped (:func:`md_cell`): a second line of
    defence."""
    text = neutralise_bidi(text)
    text = _IMAGE.sub(lambda m: m[0] if _local(m[2]) else m[1], text)
    text = _LINK.sub(lambda m: m[0] if _local(m[2]) else m[1], text)
    text = _REFERENCE.sub(lambda m: "\\" + m[0].lstrip(), text)
    text = _HTML_TAG.sub("&lt;", text)
    return _unlink(text)
