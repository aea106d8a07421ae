"""Items that share a prompt must expect one answer: the response store keeps one answer per prompt (system prompt
and text), so two items asked with one text and expecting different answers (another yes / no, another FD-inferred
value) would both be scored against the same answer, and the oracle's rationale for one would name the other's
value. :func:`check_shared_prompts` refuses such items before anything is asked, naming both items, their FDs and
the prompt, and what to change in the spec.

    >>> check_shared_prompts(items)   # ConfigError: 'Is there an airport whose name is X?' is asked by ...
"""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

from kgprobe.errors import ConfigError

__all__ = ["check_shared_prompts", "shared_prompts"]

_SQL = """
WITH t AS (
    SELECT item_id, fd, qtype, expected, coalesce(system, '') AS system, {demos} AS demos, question,
           array_to_string(coalesce(inferred, CAST([] AS VARCHAR[])), chr(31)) AS inferred
    FROM items
), clashing AS (
    SELECT system, demos, question FROM t GROUP BY ALL
    HAVING count(DISTINCT expected || chr(30) || inferred) > 1
)
SELECT c.question, list({{'item_id': t.item_id, 'fd': t.fd, 'qtype': t.qtype, 'expected': t.expected,
                         'inferred': t.inferred}} ORDER BY t.fd, t.item_id) AS items
FROM clashing c JOIN t USING (system, demos, question) GROUP BY c.question ORDER BY c.question
"""


def shared_prompts(items: pa.Table) -> list[dict[str, Any]]:
    """Every prompt that items expecting different answers share: ``{"question", "items": [{item_id, fd, qtype,
    expected, inferred}, ...]}`` (``inferred``: the FD-inferred values joined by U+001F), in question order."""
    if items.num_rows == 0:
        return []
    names = set(items.column_names)
    demos = "coalesce(demos, '')" if "demos" in names else "''"
    con = duckdb.connect()
    try:
        con.register("items", items.select([c for c in ("item_id", "fd", "qtype", "expected", "system", "demos",
                                                        "question", "inferred") if c in names]))
        rows = con.execute(_SQL.format(demos=demos)).fetchall()
    finally:
        con.close()
    return [{"question": q, "items": list(found)} for q, found in rows]


def _describe(item: dict[str, Any]) -> str:
    values = [v for v in str(item["inferred"] or "").split("\x1f") if v]
    names = f", names {', '.join(values)}" if values else ""
    return f"item {item['item_id']} of FD {item['fd']} ({item['qtype']}, expects {item['expected']}{names})"


def check_shared_prompts(items: pa.Table) -> None:
    """Raise :class:`ConfigError` when items that expect different answers share a prompt (see the module
    docstring); the message names the first prompt, both items and their FDs, how many prompts clash, and what to
    change in the spec."""
    found = shared_prompts(items)
    if not found:
        return
    first = found[0]
    fds = sorted({i["fd"] for i in first["items"]})
    same_fd = len(fds) == 1
    fix = ("its left-hand side has rows with the same question text (a display format, such as rounding, makes two "
           "records read alike): show more digits in formats, or put another column on the left side"
           if same_fd else
           "give the FDs different question templates (name what each asks for, e.g. 'If so, what is its city?'), "
           "or merge FDs with one left side into one FD with both columns on its right side (rhs: [city, iata])")
    raise ConfigError(
        f"ERBench: {len(found)} prompt(s) are asked by items that expect different answers, and the response store "
        f"keeps one answer per prompt. The first: {first['question']!r} is asked by "
        + " and by ".join(_describe(i) for i in first["items"][:3])
        + (f" (and {len(first['items']) - 3} more)" if len(first["items"]) > 3 else "")
        + f". In the spec, {fix}.")
