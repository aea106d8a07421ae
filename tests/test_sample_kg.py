"""Checks on the bundled sample knowledge graph (examples/sample/): file shape, coverage, labels, types,
domains, templates, temporal facts and connectivity. Plain csv/yaml parsing, no kgprobe imports."""

from __future__ import annotations

import csv
import re
import statistics
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

SAMPLE = Path(__file__).parents[1] / "examples" / "sample"
DOMAINS = ("art", "people", "place")
KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
UNKNOWN_YEAR, ONGOING_YEAR = 0, 3000


def _rows(name: str, width: int) -> list[tuple[str, ...]]:
    path = SAMPLE / name
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n"), f"{name}: the last line must end with a newline"
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        assert line == line.strip(), f"{name}:{n}: leading or trailing whitespace"
        assert line, f"{name}:{n}: empty line"
        fields = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
        assert len(fields) == width, f"{name}:{n}: expected {width} tab-separated fields, got {fields}"
        assert all(f.strip() == f and f for f in fields), f"{name}:{n}: empty or padded field in {fields}"
        rows.append(tuple(fields))
    return rows


@lru_cache(maxsize=None)
def triples() -> list[tuple[str, ...]]:
    return _rows("triples.tsv", 3)


@lru_cache(maxsize=None)
def temporal() -> list[tuple[str, ...]]:
    return _rows("temporal.tsv", 5)


@lru_cache(maxsize=None)
def entity_labels() -> dict[str, str]:
    rows = _rows("entity_labels.tsv", 2)
    keys = [k for k, _ in rows]
    assert len(keys) == len(set(keys)), "entity_labels.tsv: a key is labelled twice"
    return dict(rows)


@lru_cache(maxsize=None)
def relation_labels() -> dict[str, str]:
    rows = _rows("relation_labels.tsv", 2)
    keys = [k for k, _ in rows]
    assert len(keys) == len(set(keys)), "relation_labels.tsv: a key is labelled twice"
    return dict(rows)


@lru_cache(maxsize=None)
def entity_types() -> dict[str, set[str]]:
    rows = _rows("entity_types.tsv", 2)
    assert len(rows) == len(set(rows)), "entity_types.tsv: duplicate rows"
    out: dict[str, set[str]] = defaultdict(set)
    for key, ty in rows:
        out[key].add(ty)
    return dict(out)


@lru_cache(maxsize=None)
def domains() -> dict:
    data = yaml.safe_load((SAMPLE / "domains.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict), "domains.yaml must be a mapping"
    return data


@lru_cache(maxsize=None)
def templates() -> dict:
    data = yaml.safe_load((SAMPLE / "templates.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict), "templates.yaml must be a mapping"
    return data


def entities() -> set[str]:
    out = {h for h, _, _ in triples()} | {t for _, _, t in triples()}
    out |= {h for h, _, _, _, _ in temporal()} | {t for _, _, t, _, _ in temporal()}
    return out


def relations() -> set[str]:
    return {r for _, r, _ in triples()} | {r for _, r, _, _, _ in temporal()}


def test_counts():
    assert len(triples()) >= 600
    assert len(entities()) >= 200
    assert len({r for _, r, _ in triples()}) >= 30
    assert len(temporal()) >= 60


def test_keys_are_ascii_identifiers():
    for key in entities() | relations() | set(entity_labels()) | set(entity_types()):
        assert KEY.match(key), f"not an ASCII identifier: {key!r}"


def test_no_duplicate_triples_and_no_self_loops():
    dup = [t for t, n in Counter(triples()).items() if n > 1]
    assert not dup, f"duplicate triples: {dup[:5]}"
    dup = [t for t, n in Counter(temporal()).items() if n > 1]
    assert not dup, f"duplicate temporal facts: {dup[:5]}"
    loops = [t for t in triples() if t[0] == t[2]] + [t for t in temporal() if t[0] == t[2]]
    assert not loops, f"self-loops: {loops[:5]}"


def test_no_literal_objects():
    for h, r, t in triples():
        assert not re.fullmatch(r"-?\d+", t), f"literal object in {(h, r, t)}"


def test_every_entity_has_a_label_and_a_type():
    labels, types = entity_labels(), entity_types()
    missing_label = sorted(k for k in entities() if not labels.get(k))
    missing_type = sorted(k for k in entities() if not types.get(k))
    assert not missing_label, f"entities without a label: {missing_label[:10]}"
    assert not missing_type, f"entities without a type: {missing_type[:10]}"
    stray = sorted((set(labels) | set(types)) - entities())
    assert not stray, f"labelled or typed keys that occur in no fact: {stray[:10]}"


def test_entity_labels_are_distinct():
    clash = [label for label, n in Counter(entity_labels().values()).items() if n > 1]
    assert not clash, f"labels shared by several entities: {clash}"


def test_every_relation_has_a_label_and_templates():
    labels, tpl = relation_labels(), templates()
    for r in sorted(relations()):
        assert labels.get(r), f"relation {r} has no label"
        assert isinstance(tpl.get(r), dict), f"relation {r} has no templates"
        for fmt in ("yn", "wh"):
            text = tpl[r].get(fmt)
            assert isinstance(text, str) and text.strip(), f"relation {r}: no {fmt} template"
            assert text.count("{object}") == 1, f"relation {r}, {fmt}: {{object}} must occur exactly once: {text!r}"
            assert text.count("{subject}") >= 1, f"relation {r}, {fmt}: {{subject}} is missing: {text!r}"
            assert set(re.findall(r"\{(\w*)\}", text)) <= {"subject", "object"}, f"{r}, {fmt}: {text!r}"
            assert text.endswith("?"), f"relation {r}, {fmt}: a question ends with '?': {text!r}"
    unused = sorted(set(labels) - relations())
    assert not unused, f"labelled relations that occur in no fact: {unused}"


def test_types_belong_to_exactly_one_domain():
    spec = domains()
    assert set(spec) == set(DOMAINS), f"domains.yaml must define exactly {DOMAINS}, got {sorted(spec)}"
    owner: dict[str, list[str]] = defaultdict(list)
    for name, body in spec.items():
        assert isinstance(body, dict) and isinstance(body.get("types"), list), f"domain {name}: needs a types list"
        for ty in body["types"]:
            owner[ty].append(name)
        for r in body.get("deny_relations") or []:
            assert r in relations(), f"domain {name}: deny_relations names an unknown relation {r}"
    shared = {ty: names for ty, names in owner.items() if len(names) > 1}
    assert not shared, f"types in several domains: {shared}"
    used = {ty for tys in entity_types().values() for ty in tys}
    orphan = sorted(used - set(owner))
    assert not orphan, f"types in no domain: {orphan}"
    for name in DOMAINS:
        members = [k for k, tys in entity_types().items() if tys & set(spec[name]["types"])]
        assert members, f"domain {name} has no entities"


def test_temporal_years():
    for h, r, t, start, end in temporal():
        assert start.isdigit() and end.isdigit(), f"years must be integers: {(h, r, t, start, end)}"
        s, e = int(start), int(end)
        assert s == UNKNOWN_YEAR or 0 < s < ONGOING_YEAR, f"bad start year: {(h, r, t, s, e)}"
        assert e in (UNKNOWN_YEAR, ONGOING_YEAR) or 0 < e < ONGOING_YEAR, f"bad end year: {(h, r, t, s, e)}"
        if s not in (UNKNOWN_YEAR, ONGOING_YEAR) and e not in (UNKNOWN_YEAR, ONGOING_YEAR):
            assert s <= e, f"start after end: {(h, r, t, s, e)}"
    spans = {(h, r, t) for h, r, t, _, _ in temporal()}
    missing = sorted(spans - set(triples()))
    assert not missing, f"dated facts missing from triples.tsv: {missing[:5]}"


def _two_hop_sizes(members: list[str]) -> list[int]:
    adj: dict[str, set[str]] = defaultdict(set)
    for h, _, t in triples():
        adj[h].add(t)
        adj[t].add(h)
    sizes = []
    for node in members:
        seen, frontier = {node}, {node}
        for _ in range(2):  # breadth-first, two steps, edges in both directions
            frontier = {m for n in frontier for m in adj[n]} - seen
            seen |= frontier
        sizes.append(len(seen) - 1)
    return sizes


@pytest.mark.parametrize("domain", ["people", "place"])
def test_two_hop_neighbourhoods_are_large(domain):
    types = set(domains()[domain]["types"])
    members = sorted(k for k, tys in entity_types().items() if tys & types)
    median = statistics.median(_two_hop_sizes(members))
    assert median >= 20, f"median 2-hop neighbourhood of {domain} entities is {median}, expected >= 20"
