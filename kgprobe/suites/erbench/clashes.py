"""Items that share a prompt must expect one answer: the response store keeps one answer per prompt (system prompt
and text), so two items asked with one text and expecting different answers (another yes / no, another FD-inferred
value) would both be scored against the same answer, and the oracle's rationale for one would name the other's
value. :func:`check_shared_prompts` refuses such items before anything is asked when the spec makes them (two FDs
with one question), naming both items, their FDs and the prompt, and what to change in the spec; records of one FD
or path that read alike are left out with a warning that names them (refused with ``strict``).

    >>> check_shared_prompts(items)   # ConfigError: 'Is there an airport whose name is X?' is asked by ...
"""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

from kgprobe.errors import ConfigError

__all__ = ["check_shared_prompts", "shared_prompts"]

_T = """
SELECT item_id, fd, qtype, expected, coalesce(system, '') AS system, {demos} AS demos, question,
       array_to_string(coalesce(inferred, CAST([] AS VARCHAR[])), chr(31)) AS inferred
FROM items
"""
# A first pass over every item keeps only 64-bit hashes: the prompts (system, demonstrations, question) whose items'
# answers (expected and inferred values) hash differently. Distinct prompts that share a hash only add candidates,
# which the exact pass below drops; items with one answer never hash differently. The exact pass then groups the
# candidates' strings, so that its hash table holds a handful of prompts rather than every item's (5 GB at 9M items).
_CANDIDATES = """
WITH t AS ({t})
SELECT hash(system, demos, question) AS prompt FROM t GROUP BY prompt
HAVING min(hash(expected || chr(30) || inferred)) <> max(hash(expected || chr(30) || inferred))
"""
_SQL = """
WITH t AS (SELECT * FROM ({t}) WHERE hash(system, demos, question) IN (SELECT prompt FROM candidates)),
clashing AS (
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
        t = _T.format(demos=demos)
        candidates = con.execute(_CANDIDATES.format(t=t)).to_arrow_table()
        if candidates.num_rows == 0:
            return []
        con.register("candidates", candidates)
        rows = con.execute(_SQL.format(t=t)).fetchall()
    finally:
        con.close()
    return [{"question": q, "items": list(found)} for q, found in rows]


def _describe(item: dict[str, Any]) -> str:
    values = [v for v in str(item["inferred"] or "").split("\x1f") if v]
    names = f", names {', '.join(values)}" if values else ""
    return f"item {item['item_id']} of FD {item['fd']} ({item['qtype']}, expects {item['expected']}{names})"


def _spec_clash(found: dict[str, Any]) -> bool:
    """A clash the spec's templates make: items of two FDs or paths share the prompt (one left side, one
    template), rather than records of one FD or path whose questions read alike."""
    return len({i["fd"] for i in found["items"]}) > 1


def _message(found: list[dict[str, Any]], what: str, then: str) -> str:
    first = found[0]
    return (f"ERBench: {len(found)} prompt(s) are asked by {what}, and the response store keeps one answer per "
            f"prompt, so at most one of them could be scored right. The first: {first['question']!r}, asked by "
            + " and by ".join(_describe(i) for i in first["items"][:3])
            + (f" (and {len(first['items']) - 3} more)" if len(first["items"]) > 3 else "")
            + f". {then}")


def check_shared_prompts(items: pa.Table, *, strict: bool = False) -> tuple[pa.Table, list[str]]:
    """``items`` without those that share a prompt while expecting different answers, and the warnings to give.

    Items of two FDs or paths that share a prompt (one left side, one template) are the spec's doing: a
    :class:`ConfigError` names the first prompt, the items and their FDs, how many prompts clash, and what to
    change in the spec. Records of one FD or path whose questions read alike (two footballers both called
    "Fernando", one at Sevilla, one at Beijing Guoan: the data's own ambiguity) are left out, both of them, with a
    warning that names them; with ``strict`` (how ``kgprobe init`` checks the spec it writes) they are an error
    too."""
    found = shared_prompts(items)
    spec = [f for f in found if _spec_clash(f)]
    if spec:
        raise ConfigError(_message(
            spec, "items of different FDs that expect different answers",
            "In the spec, give the FDs different question templates (name what each asks for, e.g. 'If so, what "
            "is its city?'), or merge FDs with one left side into one FD with both columns on its right side "
            "(rhs: [city, iata])."))
    if not found:
        return items, []
    fix = ("put a column that tells the records apart into the question (a show column, a left-hand side column), "
           "or show more digits in formats")
    if strict:
        raise ConfigError(_message(found, "records of one FD that read alike", f"In the spec, {fix}."))
    dropped = {i["item_id"] for f in found for i in f["items"]}
    keep = pa.array([i not in dropped for i in items.column("item_id").to_pylist()], pa.bool_())
    message = _message(found, "records of one FD or path whose questions read alike",
                       f"Their {len(dropped)} items are left out; to ask them, {fix}.")
    return items.filter(keep), [message]
