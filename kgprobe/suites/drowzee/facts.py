"""Dated facts as MTL events: from a KG's ``temporal_facts`` table, from YAGO11k / Wikidata12k style TSV files and
from Drowzee's begin/end event lists (``events.json``).

An event is a name with year intervals. A dated KG fact ``(head, relation, tail, start, end)`` is the event "head
relation tail" (labels). How its years are read:

* **End conventions, per source.** YAGO11k and Wikidata12k write end year ``3000`` for an end they do not know (most
  such facts are single events: 3,204 of YAGO11k's 3,307 ``hasWonPrize`` facts) and ``####`` / ``0`` for an unknown
  year: both are an *unknown end* (``open_end="unknown"``, the default). A source that writes ``3000`` for "still
  true" (the bundled sample) sets ``open_end="ongoing"``: such a fact holds to the horizon. An event list's begin
  and end records are read as they are; a begin without an end has an unknown end.
* **Event relations.** A relation whose facts are events (awards, creations, graduations, births) is detected from
  the data: at least ``event_share`` of its dated facts have no end or end in their start year. Its facts are
  points at their start year, whatever end they carry. ``event_relations`` in the suite config overrides the
  detection per relation (``{hasWonPrize: true, isAffiliatedTo: false}``).
* **Unknown start.** A fact without a start year is left out (counted), since it is not known when it held.

A :class:`DatedEvent` keeps the data's own intervals (an end ``None`` when the data gives none) and answers the years
it surely holds (:meth:`DatedEvent.known`) and the years it may hold (:meth:`DatedEvent.possible`) up to a horizon;
questions are asked only where the two agree (:func:`.temporal.satisfying_bounds`).

    >>> events_from_records([{"type": "begin", "relation": "ev_x", "year": 1900},
    ...                      {"type": "end", "relation": "ev_x", "year": 1910}])
    {'ev_x': [(1900, 1910)]}
"""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kgprobe.errors import IngestError
from kgprobe.sql import load_sql
from kgprobe.suites.drowzee.templates import relation_phrase
from kgprobe.suites.drowzee.temporal import DOMAIN, normalize

__all__ = ["EVENT_KINDS", "OPEN_ENDS", "DatedEvent", "detect_event_relations", "event_label", "events_from_kg",
           "events_from_list", "events_from_records", "events_from_tsv"]

_ONGOING = 3000

#: What an end year the source does not give means: ``unknown`` (YAGO11k, Wikidata12k) or ``ongoing`` (to the horizon).
OPEN_ENDS: tuple[str, ...] = ("unknown", "ongoing")

#: ``event``: a named event of an event list; ``point``: a fact of an event relation, at its start year; ``state``: a
#: fact that holds from its start to its end.
EVENT_KINDS: tuple[str, ...] = ("event", "point", "state")

Span = tuple[int, int | None]


@dataclass(frozen=True)
class DatedEvent:
    """One MTL event: its name (the atom), its readable label, its intervals as the data gives them (inclusive
    ``(start, end)``, ``end`` None when the data gives no end), its ``kind`` (:data:`EVENT_KINDS`), what a missing
    end means (``open_end``), the KG fact behind it (entity and relation ids; ``tail`` None for an event of an event
    list) and the labels of the entities it names."""

    name: str
    label: str
    intervals: tuple[Span, ...]
    head: int | None = None
    relation: int | None = None
    tail: int | None = None
    relation_key: str = "occurs"
    kind: str = "event"
    open_end: str = "unknown"
    entities: tuple[str, ...] = ()

    def known(self, horizon: int = DOMAIN[1]) -> list[tuple[int, int]]:
        """The years (up to ``horizon``) the event surely holds: its given intervals, the start year of one whose
        end is unknown, and start to ``horizon`` for an ongoing one."""
        out = []
        for s, e in self.intervals:
            if s > horizon:
                continue
            if e is None:
                e = horizon if self.open_end == "ongoing" else s
            out.append((s, min(e, horizon)))
        return normalize(out)

    def possible(self, horizon: int = DOMAIN[1]) -> list[tuple[int, int]]:
        """The years (up to ``horizon``) the event may hold: :meth:`known` plus, for an interval whose end is
        unknown, every year from its start to ``horizon``."""
        opened = [(s, horizon) for s, e in self.intervals if e is None and s <= horizon]
        return normalize([*self.known(horizon), *opened])

    @property
    def open(self) -> bool:
        """Whether some interval's end is unknown (not given, and not read as ongoing)."""
        return self.open_end == "unknown" and any(e is None for _, e in self.intervals)


def event_label(name: str) -> str:
    """A readable label of an event-list name: ``ev_18th_century`` -> ``18th century``."""
    text = name.removeprefix("ev_")
    return " ".join(text.replace("_", " ").split())


def _record_spans(records: Sequence[Mapping[str, Any]], source: str) -> dict[str, list[list[int | None]]]:
    """Spans ``[begin, end]`` per relation name of a begin/end list: each begin opens a span, each end closes the
    latest open one (an end never opened is dropped; a begin never closed keeps ``None`` as its end)."""
    spans: dict[str, list[list[int | None]]] = {}
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping) or rec.get("type") not in ("begin", "end") or not rec.get("relation"):
            raise IngestError(f"{source}[{i}]: an event record needs type 'begin' or 'end' and a 'relation' name")
        try:
            year = int(rec["year"])
        except (KeyError, TypeError, ValueError) as exc:
            raise IngestError(f"{source}[{i}]: event record without an integer 'year'") from exc
        own = spans.setdefault(str(rec["relation"]), [])
        if rec["type"] == "begin":
            own.append([year, None])
        else:
            open_spans = [x for x in own if x[1] is None and x[0] is not None and x[0] <= year]
            if open_spans:
                open_spans[-1][1] = year
    return spans


def events_from_records(records: Sequence[Mapping[str, Any]], *, source: str = "events") -> dict[str, list[tuple[int, int]]]:
    """Event intervals from begin/end records (``{"type": "begin"|"end", "relation": name, "year": y}``): each begin
    opens a span, each end closes the latest open one; a span without both ends is left out."""
    out = {}
    for name, own in _record_spans(records, source).items():
        done = normalize((s, e) for s, e in own if s is not None and e is not None)
        if done:
            out[name] = done
    return out


def events_from_list(records: Sequence[Mapping[str, Any]], *, source: str = "events") -> list[DatedEvent]:
    """The events of a begin/end list as :class:`DatedEvent` (kind ``event``): each begin opens a span, each end
    closes the latest open one; a begin never closed has an unknown end, an end never opened is left out."""
    spans = _record_spans(records, source)
    out = []
    for name in sorted(spans):
        closed = normalize((a, b) for a, b in spans[name] if a is not None and b is not None)
        opened = sorted({a for a, b in spans[name] if a is not None and b is None})
        ivs = tuple([*closed, *((a, None) for a in opened)])
        if ivs:
            label = event_label(name)
            out.append(DatedEvent(name=name, label=label, intervals=ivs, kind="event", entities=(label,)))
    return out


def _year(text: str) -> int | None:
    t = text.strip()
    if not t or set(t) <= {"#"}:
        return None
    try:
        return int(t.split("-")[0]) if not t.startswith("-") else int(t)
    except ValueError:
        return None


def events_from_tsv(path: str | Path, *, open_end: str = "unknown",
                    horizon: int = DOMAIN[1]) -> dict[str, list[tuple[int, int]]]:  # fmt: skip
    """The years each fact of a YAGO11k / Wikidata12k style TSV (``head, relation, tail, start, end``) surely holds,
    by event ``"head relation tail"``: year 0 or ``####`` is unknown (a fact without a start is left out); an end of
    3000 or an unknown end gives the start year only (``open_end="unknown"``, these sources' convention) or lasts to
    ``horizon`` (``open_end="ongoing"``)."""
    if open_end not in OPEN_ENDS:
        raise ValueError(f"open_end must be one of {OPEN_ENDS}, got {open_end!r}")
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
            if not start:
                continue
            if not end or end == _ONGOING:
                end = horizon if open_end == "ongoing" else start
            if end < start:
                continue
            spans.setdefault(f"{h} {r} {t}", []).append((start, end))
    return {k: normalize(v) for k, v in spans.items()}


def detect_event_relations(facts: Iterable[tuple[str, int | None, int | None, bool]], *, open_end: str = "unknown",
                           threshold: float = 0.7,
                           overrides: Mapping[str, bool] | None = None) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Which relations' facts are events, from ``(relation_key, start, end, ongoing)`` rows: the share of a relation's
    facts with a start year whose end is missing (not given, or 3000 when ``open_end`` is ``unknown``) or equals
    the start; ``event`` is ``share >= threshold`` unless ``overrides`` says otherwise (``source`` tells which).

        >>> got = detect_event_relations([("won", 1990, None, True), ("won", 1995, 1995, False), ("in", 1990, 2000, False)])
        >>> got["won"], got["in"]["event"]
        ({'facts': 2, 'share': 1.0, 'event': True, 'source': 'data'}, False)
    """
    n: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for key, start, end, ongoing in facts:
        if start is None:
            continue
        n[key] += 1
        if end == start or (end is None and (not ongoing or open_end == "unknown")):
            hits[key] += 1
    out = {}
    for key in sorted(set(n) | set(overrides or {})):
        share = hits[key] / n[key] if n[key] else 0.0
        given = (overrides or {}).get(key)
        out[key] = {"facts": n[key], "share": round(share, 4),
                    "event": share >= threshold if given is None else bool(given),
                    "source": "data" if given is None else "config"}
    return out


def events_from_kg(con: Any, *, open_end: str = "unknown", event_share: float = 0.7,
                   event_relations: Mapping[str, bool] | None = None, relation_phrases: Mapping[str, str] | None = None,
                   limit: int | None = None, report: MutableMapping[str, Any] | None = None) -> list[DatedEvent]:  # fmt: skip
    """The KG's dated facts (``temporal_facts``) as events, one per (head, relation, tail) with all its intervals,
    labelled "head relation tail" with the relation in words (:func:`.templates.relation_phrase`; an event-list
    row, without a tail, by its head's label). End conventions
    and event relations as in the module docstring; ``report`` (when given) receives the relation detection
    (``event_relations``) and the counts of facts read as points, with an unknown end and without a start."""
    if open_end not in OPEN_ENDS:
        raise ValueError(f"open_end must be one of {OPEN_ENDS}, got {open_end!r}")
    rows = con.execute(load_sql("drowzee/temporal_events")).fetchall()
    detected = detect_event_relations(((r[9], r[3], r[4], bool(r[5])) for r in rows if r[2] is not None),
                                      open_end=open_end, threshold=event_share, overrides=event_relations)
    is_point = {k: v["event"] for k, v in detected.items()}
    counts: Counter[str] = Counter()
    grouped: dict[tuple[int, int, int | None], dict[str, Any]] = {}
    phrases: dict[str, str] = {}
    for head, rel, tail, start, end, ongoing, hl, rl, tl, rkey in rows:
        if start is None:
            counts["facts_without_start"] += 1
            continue
        point = tail is not None and is_point.get(rkey, False)
        if point:
            counts["facts_read_as_points"] += 1
            span: Span = (int(start), int(start))
        else:
            span = (int(start), None if end is None else int(end))
        key = (int(head), int(rel), None if tail is None else int(tail))
        if rkey not in phrases:
            phrases[rkey] = relation_phrase(rkey, rl, relation_phrases)
        label = hl if tail is None else f"{hl} {phrases[rkey]} {tl}"
        g = grouped.setdefault(key, {"label": label,
                                     "spans": [], "rkey": rkey, "point": point, "unknown": False,
                                     "entities": (hl,) if tail is None else (hl, tl)})
        g["spans"].append(span)
        if span[1] is None and (not ongoing or open_end == "unknown"):
            counts["facts_with_unknown_end"] += 1
            g["unknown"] = True  # one unknown end makes every missing end of the event unknown: the safe reading
    out = []
    for (head, rel, tail), g in sorted(grouped.items(), key=lambda kv: (kv[1]["label"], kv[0][0], kv[0][1], kv[0][2] or -1)):
        closed = normalize((a, b) for a, b in g["spans"] if b is not None)
        opened = sorted({a for a, b in g["spans"] if b is None})
        kind = "event" if tail is None else ("point" if g["point"] else "state")
        spans: tuple[Span, ...] = tuple([*closed, *((a, None) for a in opened)])
        out.append(DatedEvent(name=g["label"], label=g["label"], intervals=spans,
                              head=head, relation=rel, tail=tail, relation_key=g["rkey"], kind=kind,
                              open_end="unknown" if g["unknown"] else open_end,
                              entities=g["entities"]))
        if limit is not None and len(out) >= limit:
            break
    if report is not None:
        report["event_relations"] = detected
        report.update(counts)
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
            e = replace(e, name=name)
        out.append(e)
    return out
