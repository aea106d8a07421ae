"""Dated facts as MTL events: from a KG's ``temporal_facts`` table, from YAGO11k / Wikidata12k style TSV files and
from Drowzee's begin/end event lists (``events.json``).

An event is a name with inclusive year intervals, the ``events`` mapping of :mod:`.temporal`. A dated KG fact
``(head, relation, tail, start, end)`` is the event "head relation tail" (labels), true from its start to its end
year; an ongoing fact (source end year 3000) lasts to ``ongoing_end`` (the domain's last year); a fact with an
unknown start or end is left out, since no question about it has a known answer.

    >>> events_from_records([{"type": "begin", "relation": "ev_x", "year": 1900},
    ...                      {"type": "end", "relation": "ev_x", "year": 1910}])
    {'ev_x': [(1900, 1910)]}
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgprobe.errors import IngestError
from kgprobe.sql import load_sql
from kgprobe.suites.drowzee.temporal import DOMAIN, normalize

__all__ = ["DatedEvent", "event_label", "events_from_kg", "events_from_records", "events_from_tsv"]

_ONGOING = 3000


@dataclass(frozen=True)
class DatedEvent:
    """One MTL event: its name (the atom), its readable label, its intervals, and the KG fact behind it (entity and
    relation ids; ``tail`` None for an event of an event list)."""

    name: str
    label: str
    intervals: tuple[tuple[int, int], ...]
    head: int | None = None
    relation: int | None = None
    tail: int | None = None
    relation_key: str = "occurs"


def event_label(name: str) -> str:
    """A readable label of an event-list name: ``ev_18th_century`` -> ``18th century``."""
    text = name.removeprefix("ev_")
    return " ".join(text.replace("_", " ").split())


def events_from_records(records: Sequence[Mapping[str, Any]], *, source: str = "events") -> dict[str, list[tuple[int, int]]]:
    """Event intervals from begin/end records (``{"type": "begin"|"end", "relation": name, "year": y}``): each begin
    opens a span, each end closes the latest open one; a span without both ends is left out."""
    spans: dict[str, list[list[int | None]]] = {}
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping) or rec.get("type") not in ("begin", "end") or not rec.get("relation"):
            raise IngestError(f"{source}[{i}]: an event record needs type 'begin' or 'end' and a 'relation' name")
        try:
            year = int(rec["year"])
        except (KeyError, TypeError, ValueError) as exc:
            raise IngestError(f"{source}[{i}]: event record without an integer 'year'") from exc
        name = str(rec["relation"])
        own = spans.setdefault(name, [])
        if rec["type"] == "begin":
            own.append([year, None])
        else:
            open_spans = [s for s in own if s[1] is None and s[0] is not None and s[0] <= year]
            if open_spans:
                open_spans[-1][1] = year
    out = {}
    for name, own in spans.items():
        done = normalize((s, e) for s, e in own if s is not None and e is not None)
        if done:
            out[name] = done
    return out


def _year(text: str) -> int | None:
    t = text.strip()
    if not t or set(t) <= {"#"}:
        return None
    try:
        return int(t.split("-")[0]) if not t.startswith("-") else int(t)
    except ValueError:
        return None


def events_from_tsv(path: str | Path, *, ongoing_end: int = DOMAIN[1]) -> dict[str, list[tuple[int, int]]]:
    """Event intervals from a YAGO11k / Wikidata12k style TSV (``head, relation, tail, start, end``): the event of
    a fact is ``"head relation tail"``; year 0 or ``####`` is unknown (the fact is left out), 3000 is ongoing."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    spans: dict[str, list[tuple[int, int]]] = {}
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                continue
            h, r, t, s, e = parts
            start, end = _year(s), _year(e)
            if end == _ONGOING:
                end = ongoing_end
            if not start or not end or end < start:
                continue
            spans.setdefault(f"{h} {r} {t}", []).append((start, end))
    return {k: normalize(v) for k, v in spans.items()}


def events_from_kg(con: Any, *, ongoing_end: int = DOMAIN[1], limit: int | None = None) -> list[DatedEvent]:
    """The KG's dated facts (``temporal_facts``) as events, one per (head, relation, tail) with all its intervals,
    labelled "head relation-label tail" (an event-list row, without a tail, by its head's label)."""
    rows = con.execute(load_sql("drowzee/temporal_events"), {"ongoing_end": ongoing_end}).fetchall()
    grouped: dict[tuple[int, int, int | None], dict[str, Any]] = {}
    for head, rel, tail, start, end, hl, rl, tl, rkey in rows:
        key = (int(head), int(rel), None if tail is None else int(tail))
        g = grouped.setdefault(key, {"label": hl if tail is None else f"{hl} {rl} {tl}", "spans": [], "rkey": rkey})
        g["spans"].append((int(start), int(end)))
    out = []
    for (head, rel, tail), g in sorted(grouped.items(), key=lambda kv: (kv[1]["label"], kv[0][0], kv[0][1], kv[0][2] or -1)):
        out.append(DatedEvent(name=g["label"], label=g["label"], intervals=tuple(normalize(g["spans"])), head=head,
                              relation=rel, tail=tail, relation_key=g["rkey"]))
        if limit is not None and len(out) >= limit:
            break
    return _unique_names(out)


def _unique_names(events: Iterable[DatedEvent]) -> list[DatedEvent]:
    """Events whose labels collide get their ids appended, so that every atom name is one event."""
    events = list(events)
    seen: dict[str, int] = {}
    for e in events:
        seen[e.name] = seen.get(e.name, 0) + 1
    out = []
    for e in events:
        if seen[e.name] > 1:
            name = f"{e.name} ({e.head}-{e.relation}-{e.tail})"
            e = DatedEvent(name=name, label=e.label, intervals=e.intervals, head=e.head, relation=e.relation,
                           tail=e.tail, relation_key=e.relation_key)
        out.append(e)
    return out
