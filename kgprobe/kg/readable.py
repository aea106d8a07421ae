"""Readable names: which entity and relation names a question may show, and the items that would show a raw id.

A KG loaded without labels names its entities by their keys. Some keys are names (YAGO's ``Stan_Collymore`` reads
as "Stan Collymore"); others are ids that mean nothing to a model or a reader: a Wikidata QID or PID (``Q408``),
a Freebase mid (``/m/0d05w3``), a number, a hash. :func:`is_id_like` tells them apart; :func:`label_report` counts
a KG's entities and relations by kind of name; :func:`reject_unreadable` drops every group of items whose text
shows a name that is an id, with the reason, so a benchmark never asks "Does Q408 have diplomatic relations with
Q685?".

    >>> is_id_like("Q408"), is_id_like("/m/0d05w3"), is_id_like("Stan Collymore")
    (True, True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["ID_PATTERN", "LABEL_CLEANUPS", "SQL_ID_PATTERN", "UNICODE_ESCAPE", "clean_label", "clean_labels",
           "is_id_like", "label_advice", "label_report", "reject_unreadable", "unescape_unicode", "unreadable_names"]

#: An id-like name: a Wikidata entity, property or lexeme id, a Freebase mid or guid, a number, a hex hash or UUID.
ID_PATTERN = (r"[QPL][0-9]+|/[mg]/[0-9a-z_]+|[+-]?[0-9]+(?:\.[0-9]+)?"
              r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
              r"|(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{12,}")
_ID = re.compile(rf"(?:{ID_PATTERN})")
#: :data:`ID_PATTERN` without lookaheads (DuckDB's RE2 has none), for SQL: a superset, narrowed by _ID in Python.
SQL_ID_PATTERN = ID_PATTERN.replace("(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])", "")
_SQL_PATTERN = SQL_ID_PATTERN
# an id inside running text: not glued to a word character or a path separator on either side
_IN_TEXT = re.compile(rf"(?<![\w/])(?:{ID_PATTERN})(?![\w/])")
#: Rejection reason of an item whose text shows an unreadable name.
REASON = "names an entity or relation that has no readable name (only an id-like key)"


#: Label clean-ups, each named by a setting (``label_cleanup``): a trailing English locale suffix that Freebase
#: label dumps carry ("Actor-GB", "Avril Lavigne-US"), a stray "s" token left by a lost apostrophe ("Children s
#: Hospital" -> "Children's Hospital"), and escaped unicode (``\u0144`` and Freebase's ``$0144``).
LABEL_CLEANUPS: tuple[str, ...] = ("locale_suffix", "stray_tokens", "unicode_escapes")
#: The English locales' regions a label suffix names (en-GB, en-US, ...).
_LOCALE = re.compile(r"(?<=[\w)\]])-(?:GB|US|UK|AU|CA|IE|NZ|IN|ZA)$")
_STRAY_S = re.compile(r"(?<=[A-Za-z]) s(?=\s|$)")
#: A ``\\uXXXX`` escape left in text (a JSON or Java dump written out as text: "Selma Lagerl\\u00F6f"); the same
#: pattern in Python and in DuckDB's RE2.
UNICODE_ESCAPE = r"\\u([0-9a-fA-F]{4})"
_UNICODE = re.compile(UNICODE_ESCAPE)
_FREEBASE_ESCAPE = re.compile(r"(?<=[A-Za-z_])\$([0-9A-F]{4})")


def unescape_unicode(text: str) -> str:
    """``text`` with its ``\\uXXXX`` escapes decoded."""
    return _UNICODE.sub(lambda m: chr(int(m.group(1), 16)), text)


def clean_label(text: str, steps: Iterable[str] = LABEL_CLEANUPS) -> str:
    r"""``text`` with the clean-ups ``steps`` (names of :data:`LABEL_CLEANUPS`) applied, in that order.

    >>> clean_label("Singer-songwriter-GB"), clean_label(r"Pozna\u0144"), clean_label("Children s Hospital")
    ('Singer-songwriter', 'Poznań', "Children's Hospital")
    """
    steps = set(steps)
    unknown = steps - set(LABEL_CLEANUPS)
    if unknown:
        raise ValueError(f"unknown label clean-up(s) {sorted(unknown)}; known: {list(LABEL_CLEANUPS)}")
    if text is None:
        return text
    if "unicode_escapes" in steps and ("\\u" in text or "$" in text):
        text = _FREEBASE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), unescape_unicode(text))
    if "locale_suffix" in steps:
        text = _LOCALE.sub("", text)
    if "stray_tokens" in steps:
        text = _STRAY_S.sub("'s", text)
    return text


def clean_labels(values: pa.Array | pa.ChunkedArray, steps: Iterable[str] = LABEL_CLEANUPS) -> pa.Array:
    """:func:`clean_label` over an Arrow string array (one Python call per distinct value that needs it)."""
    steps = tuple(steps)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not steps or len(values) == 0:
        return values
    return pa.array([clean_label(v, steps) for v in values.to_pylist()], pa.string())


def is_id_like(name: str) -> bool:
    """Whether ``name`` (a key, or the label that fell back to it) is an id rather than a name."""
    return bool(_ID.fullmatch(name.strip()))


def unreadable_names(con: duckdb.DuckDBPyConnection, kg: str) -> tuple[frozenset[str], frozenset[str]]:
    """The labels of ``kg``'s entities and of its relations that are ids (a key with no label from any source)."""
    out = []
    for table in ("entities", "relations"):
        rows = con.execute(f'SELECT label FROM "{kg}".{table} WHERE regexp_full_match(trim(label), $p)',
                           {"p": _SQL_PATTERN}).fetchall()
        out.append(frozenset(r[0].strip() for r in rows if is_id_like(r[0])))
    return out[0], out[1]


def label_report(con: duckdb.DuckDBPyConnection, kg: str, *, examples: int = 5) -> dict[str, Any]:
    """How ``kg``'s entities and relations are named: ``entities``, ``readable_entities`` (a label, or a key that is
    itself a name), ``readable_share``, ``unreadable_examples``; ``relations``, ``path_relations`` (keys that are
    paths, shown by their last segment: ``[key, label]`` pairs), ``unreadable_relations`` (keys that are ids with no
    label), ``escaped_labels`` / ``escaped_examples`` (entity labels holding an escaped ``\\uXXXX``)."""
    ents, rels = unreadable_names(con, kg)
    n_ent = con.execute(f'SELECT count(*) FROM "{kg}".entities').fetchone()[0]
    relations = con.execute(f'SELECT key, label FROM "{kg}".relations ORDER BY key').fetchall()
    paths = [[k, lab] for k, lab in relations if k.startswith("/") and k.count("/") >= 3 and lab != k]
    # labels written with escaped unicode ("Selma Lagerl\u00F6f"): questions would show the escape as written
    escaped_n, escaped = con.execute(
        f'SELECT count(*), list(label ORDER BY label)[:{int(examples)}] FROM "{kg}".entities '
        "WHERE regexp_matches(label, $p)", {"p": UNICODE_ESCAPE}).fetchone()
    return {
        "kg": kg,
        "entities": n_ent,
        "readable_entities": n_ent - len(ents),
        "readable_share": (n_ent - len(ents)) / n_ent if n_ent else 1.0,
        "unreadable_examples": sorted(ents)[:examples],
        "relations": len(relations),
        "path_relations": paths,
        "unreadable_relations": sorted(rels),
        "escaped_labels": int(escaped_n or 0),
        "escaped_examples": list(escaped or []),
    }


def _shown_ids(text: str | None, unreadable: frozenset[str]) -> list[str]:
    return [] if not text else sorted({m for m in _IN_TEXT.findall(text) if m in unreadable})


def reject_unreadable(items: pa.Table, unreadable: Iterable[str], *, columns: tuple[str, ...] = ("question",)
                      ) -> tuple[pa.Table, list[dict[str, Any]]]:  # fmt: skip
    """``items`` without every group (``group_id``: a question with its false-premise variants, a statement with
    its negatives) in which an item's ``columns`` show one of the ``unreadable`` names, and one reject row per
    dropped item (``item_id``, ``group_id``, ``question``, ``ids``, ``reason``)."""
    unreadable = frozenset(unreadable)
    if not unreadable or items.num_rows == 0:
        return items, []
    texts = {c: items.column(c).to_pylist() for c in columns if c in items.column_names}
    groups = items.column("group_id").to_pylist()
    shown: dict[int, list[str]] = {}
    for i in range(items.num_rows):
        found = sorted({x for c in texts for x in _shown_ids(texts[c][i], unreadable)})
        if found:
            shown[i] = found
    bad_groups = {groups[i] for i in shown}
    if not bad_groups:
        return items, []
    drop = pa.array([g in bad_groups for g in groups])
    ids, questions = items.column("item_id").to_pylist(), items.column("question").to_pylist()
    rejects = [{"item_id": ids[i], "group_id": groups[i], "question": questions[i], "ids": shown.get(i, []),
                "reason": REASON if i in shown else f"in a group with an item that {REASON}"}
               for i in range(items.num_rows) if groups[i] in bad_groups]
    return items.filter(pc.invert(drop)), rejects


def label_advice(suite: str, coverage: dict[str, Any], rejected: int, kept: int) -> str | None:
    """What to do when ``suite`` dropped ``rejected`` items (and kept ``kept``) for naming ``coverage``'s KG (a
    :func:`label_report`) by ids: where its labels go in the config, in which format. None when nothing was dropped.

        >>> label_advice("drowzee", label_report(con, "wikidata12k"), rejected=2466, kept=0)
        'drowzee: every one of its 2,466 items names an entity or relation of KG wikidata12k by an id ...'
    """
    if rejected <= 0:
        return None
    kg = coverage["kg"]
    total = rejected + kept
    share = (f"every one of its {total:,} items" if kept == 0
             else f"{rejected:,} of its {total:,} items ({rejected / total:.0%})")
    unnamed = coverage["entities"] - coverage["readable_entities"]
    examples = ", ".join([*coverage["unreadable_examples"][:3], *coverage["unreadable_relations"][:2]])
    return (
        f"{suite}: {share} {'names' if kept == 0 else 'name'} an entity or relation of KG {kg} by an id, so they were rejected "
        f"({unnamed:,} of its {coverage['entities']:,} entities have no readable name"
        + (f", and {len(coverage['unreadable_relations'])} relations" if coverage["unreadable_relations"] else "")
        + (f"; e.g. {examples}" if examples else "") + "). The KG's files do not ship labels for them: give "
        f"kgs.{kg}.entity_labels (and relation_labels for relation ids) a file of key<TAB>label lines, one per "
        "key as the triples write it (e.g. 'Q408<TAB>Australia'; a JSON object {key: label} also works; for "
        "Wikidata ids, export the English labels of the KG's QIDs from "
        "Wikidata), then re-run ingestion; or set kgs." + kg + ".require_labels: false to ask with the ids as names."
    )
