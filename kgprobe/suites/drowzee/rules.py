"""Drowzee's derivation rules (§3.3) over a KG's triples, in SQL, each derived fact with its proof.

=============  ======================================  ===============================================================
rule           Prolog                                   SQL file (``sql/drowzee/``)
=============  ======================================  ===============================================================
negation       ``nm_new(S,O') :- !nm(S,O')``           ``derive_negation``: another object of nm, absent for S
inverse        ``nm_new(S,O) :- nm(O,S)``               ``derive_inverse`` (declared pairs, e.g. father -> child)
symmetric      ``nm(S,O) :- nm(O,S)``                   ``derive_symmetric`` (spouse, sibling, shares border with)
transitive     ``nm(S,O') :- nm(S,O), nm(O,O')``        ``derive_composition`` with first = second = target
composition    ``t(S,O') :- f(S,O), g(O,O')``           ``derive_composition`` (e.g. located in city, then country)
same           ``same_P(A,B) :- P(A,C), P(B,C), A≠B``   ``derive_same`` (the released code's composite rule)
=============  ======================================  ===============================================================

Symmetric, inverse, transitive and composition facts that the KG already states are not asked by default
(``derived_only``): on YAGO11k, 295 of 300 symmetric ``isMarriedTo`` facts would otherwise be stored triples; the
share of each rule's derivations already stored is reported (``report`` of :func:`derive`).

Which relations each rule uses comes from the config (:class:`RuleConfig`); :func:`propose_properties` measures the
data's own evidence (symmetric: reverse edges >= 95%; inverse pairs: both directions >= 95%; transitive: two-step
paths the relation closes; functional: subjects with one object, where a closed-world negation is safe) for a person
to accept. Every :class:`DerivedFact` keeps its premises (the KG triples ``(head, relation, tail)`` by id: the
triple's key) and whether the KG already states it; a negation whose target fact is in the KG is never derived, nor
one whose negated object holds a true object through the KG's containment relations ("Is it true that X was born in
Spain?" where the KG has X born in Málaga, located in Spain;
:func:`kgprobe.scoring.relations.containment_relations`, up to :data:`~kgprobe.scoring.relations.CONTAINMENT_HOPS`
triples out, as KG-FPQ checks its false premises).
Caps (per subject, per rule) are applied in the seeded hash order of each SQL file, then across relations.

    >>> facts = derive(con, RuleConfig(symmetric=("spouse",)), seed=0)
    >>> facts[0].rule, facts[0].premises
    ('symmetric', ((12, 7, 40),))
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgprobe.errors import ConfigError
from kgprobe.scoring.relations import CONTAINMENT_HOPS, containment_relations
from kgprobe.sql import load_sql

__all__ = ["PERIOD_RULES", "RULES", "DerivedFact", "RuleConfig", "derive",
           "fact_period", "propose_properties"]

#: The rules, in the order items are made.
RULES: tuple[str, ...] = ("negation", "inverse", "symmetric", "transitive", "composition", "same")


@dataclass(frozen=True)
class RuleConfig:
    """Which relations each rule applies to (relation keys). ``negation`` None means the relations the data shows
    to be functional (share of single-object subjects >= ``functional_threshold``); ``inverse`` maps a relation to
    its inverse's key (the inverse need not be a KG relation: ``inverse_labels`` names it); ``compositions`` are
    ``(first, second, target)`` keys. Caps: ``per_subject`` derived facts per subject and ``per_rule`` per rule."""

    negation: tuple[str, ...] | None = None
    inverse: Mapping[str, str] = field(default_factory=dict)
    inverse_labels: Mapping[str, str] = field(default_factory=dict)
    symmetric: tuple[str, ...] = ()
    transitive: tuple[str, ...] = ()
    compositions: tuple[tuple[str, str, str], ...] = ()
    same: tuple[str, ...] = ()
    per_subject: int = 4
    per_rule: int = 300
    functional_threshold: float = 0.95
    max_fanin: int = 50
    #: Symmetric, inverse, transitive and composition facts the KG already states are not asked (the paper asks
    #: facts derived by the rules); False asks them too, marked ``in_kg``.
    derived_only: bool = True
    #: Derive only facts whose entities (subject, object, premises) have readable names (``kgs.<kg>.require_labels``):
    #: a KG with partial labels then gives facts about the entities it names, before the caps, rather than facts
    #: whose questions are rejected later. The KG's other facts still count (a negation is never true through them).
    named_only: bool = False


@dataclass(frozen=True)
class DerivedFact:
    """One derived fact: ``relation(subject, object)`` by ``rule`` from ``premises`` (KG triples by id). ``truth``
    says whether the statement ``relation(subject, object)`` is true (False for negation: the KG shows the object
    is another one); ``relation`` is the key of the predicate asked about (the inverse's key for R-Inverse, P for
    same_P) and ``source`` the relation the rule started from."""

    rule: str
    relation: str
    subject: int
    object: int
    premises: tuple[tuple[int, int, int], ...]
    in_kg: bool
    truth: bool
    source: str
    #: (first year, last year) a temporal KG dates the fact to: the longest stretch of years in which every dated
    #: premise surely holds (:func:`fact_period`); the question is then asked in the past tense over it. None: the
    #: premises are not dated (or the rule is negation).
    period: tuple[int, int] | None = None


#: The rules whose derived fact holds only while its premises hold together (negation's "no" rests on the KG's other
#: object, not on a period).
PERIOD_RULES: tuple[str, ...] = ("inverse", "symmetric", "transitive", "composition", "same")

#: What :func:`fact_period` finds: no dated premise; a period; dated premises that may meet only in years an
#: unknown end leaves open; dated premises that never hold in one year.
PERIOD_STATUS: tuple[str, ...] = ("undated", "dated", "overlap_unknown", "never_together")


def _meet(spans: Sequence[Sequence[tuple[int, int]]]) -> list[tuple[int, int]]:
    out = list(spans[0])
    for other in spans[1:]:
        out = [(max(a, c), min(b, d)) for a, b in out for c, d in other if max(a, c) <= min(b, d)]
    return sorted(out)


def fact_period(fact: DerivedFact, dated: Mapping[tuple[int, int, int], Any], *,
                horizon: int = 2024) -> tuple[str, tuple[int, int] | None]:  # fmt: skip
    """When a derived fact holds on a temporal KG: ``(status, period)`` with status in :data:`PERIOD_STATUS`.
    ``dated`` maps a premise triple ``(head, relation id, tail)`` to its dated event (an object with
    ``known(horizon)`` and ``possible(horizon)`` year lists, :class:`.facts.DatedEvent`); a premise it lacks is
    undated and constrains nothing. The period is the longest stretch of years in which every dated premise surely
    holds (the earliest of equal ones): "X married Y, 1957-1965" gives (1957, 1965) for "Y married X"; two players
    of one club give the years they both played there. Rules outside :data:`PERIOD_RULES` are ``undated``.

        >>> class E:  # a premise dated 1957-1965
        ...     known = possible = staticmethod(lambda horizon: [(1957, 1965)])
        >>> f = DerivedFact("symmetric", "spouse", 2, 1, ((1, 7, 2),), False, True, "spouse")
        >>> fact_period(f, {(1, 7, 2): E()})
        ('dated', (1957, 1965))
    """
    if fact.rule not in PERIOD_RULES:
        return "undated", None
    events = [dated[p] for p in fact.premises if p in dated]
    if not events:
        return "undated", None
    sure = _meet([e.known(horizon) for e in events])
    if sure:
        best = max(sure, key=lambda iv: (iv[1] - iv[0], -iv[0]))
        return "dated", best
    return ("overlap_unknown" if _meet([e.possible(horizon) for e in events]) else "never_together"), None


#: Negation relations per query: one query reads the entities, the containment steps and the closure of the
#: relations' objects once for all of them (one per relation: 271 queries, 340 s on the 1M-triple synthetic KG),
#: and its memory grows with the relations it holds (all 271 at once: over 15 GB at 5M triples).
_NEGATION_BATCH = 32

#: Two-step paths a transitive or composition rule (and ``propose_properties``' transitive evidence) enumerates at
#: most: above it (counted by aggregate, ``sql/drowzee/path_estimate.sql``), the rule reads the paths of a seeded
#: sample of about ``budget / paths`` of its subjects, and its ``candidates`` / ``stored`` totals are that sample's
#: scaled up (``estimated`` in the report). Through a hub entity the paths number in-degree x out-degree: 3 x 10^7 on the
#: largest relation of a 1M-triple power-law KG, so enumerating them all grows faster than the KG.
_PATH_BUDGET = 2_000_000
#: The same per relation for ``propose_properties``' transitive evidence, which reads every relation of the KG (on a
#: 5M-triple power-law KG the relations' paths capped at 2M each still summed to 76M: 34 CPU s, 3.6 GB; at 250k,
#: 29M). FB15k-237's largest relation has 206,400 paths: exact.
_PROPOSE_PATH_BUDGET = 250_000


def _relations(con: Any) -> dict[str, int]:
    return {key: int(i) for i, key, _ in con.execute(load_sql("drowzee/relations")).fetchall()}


def _need(known: Mapping[str, int], keys: Sequence[str], what: str) -> list[str]:
    missing = [k for k in keys if k not in known]
    if missing:
        raise ConfigError(f"suites.drowzee.{what}: relation(s) {missing} are not relations of the KG; "
                          f"use relation keys of its relations table (e.g. {sorted(known)[:5]})")
    return list(keys)


def _order(seed: int, *parts: Any) -> str:
    return hashlib.sha256(repr((seed, *parts)).encode()).hexdigest()


def _every(con: Any, first: str, second: str) -> int:
    """1 when the two-step paths first -> second are within :data:`_PATH_BUDGET`, else the sampling step (about
    one subject in ``every`` keeps its paths)."""
    (paths,) = con.execute(load_sql("drowzee/path_estimate"), {"first": first, "second": second}).fetchone()
    return max(1, -(-int(paths) // _PATH_BUDGET))


def _rows(con: Any, name: str, params: Mapping[str, Any], rule: str, relation: str, source: str,
          truth: bool, totals: MutableMapping[str, Any] | None = None, every: int = 1) -> list[DerivedFact]:  # fmt: skip
    out = []
    for row in con.execute(load_sql(f"drowzee/{name}"), dict(params)).fetchall():
        subject, obj, premises, in_kg = row[:4]
        if subject is None:  # the totals row: every derivation before the in-KG filter and the caps
            if totals is not None:
                got = totals.setdefault(rule, {"candidates": 0, "stored": 0})
                got["candidates"] += int(row[4]) * every
                got["stored"] += int(row[5]) * every
                if every > 1:
                    got["estimated"] = True
            continue
        prem = tuple((int(p["head"]), int(p["relation"]), int(p["tail"])) for p in premises)
        out.append(DerivedFact(rule=rule, relation=relation, subject=int(subject), object=int(obj), premises=prem,
                               in_kg=bool(in_kg), truth=truth, source=source))
    return out


def functional_relations(con: Any, *, threshold: float = 0.95, min_support: int = 3) -> list[str]:
    """Relation keys whose subjects have exactly one object in at least ``threshold`` of cases."""
    rows = con.execute(load_sql("drowzee/propose_functional"), {"min_support": min_support}).fetchall()
    return sorted(key for key, _, _, share in rows if share >= threshold)


def derive(con: Any, config: RuleConfig, *, seed: int = 0,
           report: MutableMapping[str, Any] | None = None) -> list[DerivedFact]:  # fmt: skip
    """Every rule's derived facts over the KG of ``con`` (its tables unqualified), with caps: at most
    ``per_subject`` facts per (rule, subject) and ``per_rule`` per rule, chosen in a seeded order. ``report`` (when
    given) receives, per symmetric / inverse / transitive / composition rule, how many facts the rule derives
    (``candidates``) and how many of them the KG already states (``stored``), before the filter and the caps.
    A transitive or composition rule with more than :data:`_PATH_BUDGET` two-step paths draws its facts from the
    paths of a seeded sample of its subjects; its totals are then the sample's scaled up, marked ``estimated``."""
    known = _relations(con)
    from kgprobe.kg.readable import SQL_ID_PATTERN

    base = {"seed": int(seed), "per_subject": int(config.per_subject), "per_rule": int(config.per_rule),
            "named_only": bool(config.named_only), "id_pattern": SQL_ID_PATTERN}
    stored: dict[str, Any] = {}
    own = {**base, "derived_only": bool(config.derived_only)}
    facts: list[DerivedFact] = []
    negation = (functional_relations(con, threshold=config.functional_threshold) if config.negation is None
                else _need(known, config.negation, "negation"))
    symmetric = set(config.symmetric)
    ways = containment_relations(con) if negation else {}
    inside = {"inward": sorted(r for r, w in ways.items() if w == "inward"),
              "outward": sorted(r for r, w in ways.items() if w == "outward"), "hops": CONTAINMENT_HOPS}
    # the negation relations _NEGATION_BATCH at a time, one query each (its first column names the relation), the
    # facts in the order of ``negation``
    keys = {v: k for k, v in known.items()}
    by_relation: dict[str, list[DerivedFact]] = {}
    batches = list(dict.fromkeys(negation))
    for i in range(0, len(batches), _NEGATION_BATCH):
        batch = batches[i : i + _NEGATION_BATCH]
        for rid, subject, obj, premises, in_kg in con.execute(load_sql("drowzee/derive_negation"), {
                **base, "relations": batch, "symmetric": sorted(symmetric & set(batch)), **inside}).fetchall():
            rel = keys[int(rid)]
            prem = tuple((int(p["head"]), int(p["relation"]), int(p["tail"])) for p in premises)
            by_relation.setdefault(rel, []).append(DerivedFact(
                rule="negation", relation=rel, subject=int(subject), object=int(obj), premises=prem,
                in_kg=bool(in_kg), truth=False, source=rel))
    for rel in negation:
        facts += by_relation.get(rel, [])
    for rel in _need(known, list(config.inverse), "inverse"):
        facts += _rows(con, "derive_inverse", {**own, "relation": rel, "inverse": config.inverse[rel]},
                       "inverse", config.inverse[rel], rel, truth=True, totals=stored)
    for rel in _need(known, config.symmetric, "symmetric"):
        facts += _rows(con, "derive_symmetric", {**own, "relation": rel}, "symmetric", rel, rel, truth=True,
                       totals=stored)
    for rel in _need(known, config.transitive, "transitive"):
        every = _every(con, rel, rel)
        facts += _rows(con, "derive_composition", {**own, "first": rel, "second": rel, "target": rel, "every": every},
                       "transitive", rel, rel, truth=True, totals=stored, every=every)
    for first, second, target in config.compositions:
        _need(known, [first, second], "compositions")
        every = _every(con, first, second)
        facts += _rows(con, "derive_composition", {**own, "first": first, "second": second, "target": target,
                                                   "every": every},
                       "composition", target, f"{first}/{second}", truth=True, totals=stored, every=every)
    for rel in _need(known, config.same, "same"):
        facts += _rows(con, "derive_same", {**base, "relation": rel, "max_fanin": int(config.max_fanin)},
                       "same", rel, rel, truth=True)
    if report is not None:
        report.update({rule: {**v, "stored_share": round(v["stored"] / v["candidates"], 4) if v["candidates"] else None}
                       for rule, v in stored.items()})
    return _cap(facts, config, seed)


def _cap(facts: Sequence[DerivedFact], config: RuleConfig, seed: int) -> list[DerivedFact]:
    """The caps across relations: per (rule, subject), then per rule, in a seeded order; the result is sorted
    by rule (in :data:`RULES` order) and that order."""
    ranked = sorted(facts, key=lambda f: (RULES.index(f.rule), _order(seed, f.rule, f.relation, f.subject, f.object)))
    per_subject: dict[tuple[str, int], int] = {}
    per_rule: dict[str, int] = {}
    out = []
    seen: set[tuple[str, str, int, int]] = set()
    for f in ranked:
        if (f.rule, f.relation, f.subject, f.object) in seen:
            continue  # two relations of one rule deriving the same fact (father and mother -> child): ask it once
        seen.add((f.rule, f.relation, f.subject, f.object))
        k = (f.rule, f.subject)
        if per_subject.get(k, 0) >= config.per_subject or per_rule.get(f.rule, 0) >= config.per_rule:
            continue
        per_subject[k] = per_subject.get(k, 0) + 1
        per_rule[f.rule] = per_rule.get(f.rule, 0) + 1
        out.append(f)
    return out


def propose_properties(con: Any, *, threshold: float = 0.95, min_support: int = 3) -> dict[str, list[dict[str, Any]]]:
    """The relation properties the data supports, for a person to accept into the config: ``symmetric`` (reverse
    edges >= ``threshold``), ``inverse`` (pairs whose edges reverse each other >= ``threshold`` both ways),
    ``transitive`` (two-step paths the relation itself closes >= ``threshold``) and ``functional`` (subjects with
    one object). Each entry carries its counts, so a reader sees the evidence, not just the verdict. A relation with
    more than :data:`_PROPOSE_PATH_BUDGET` two-step paths is measured on the paths of a fixed-hash sample of its subjects,
    its ``paths`` and ``closed`` scaled up (estimates; the share is the sample's)."""
    def rows(name: str) -> list[dict[str, Any]]:
        params = {"min_support": min_support} | ({"budget": _PROPOSE_PATH_BUDGET} if name == "propose_transitive" else {})
        cur = con.execute(load_sql(f"drowzee/{name}"), params)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    # symmetric and inverse from one self-join of the KG (two joins and 125k inverse rows into Python took 4 CPU s
    # more at 20M triples)
    sym, inv = [], []
    for r in rows("propose_reversed"):
        if r["relation"] == r["other"]:  # non-loop edges and how many of them hold reversed
            edges, matched = r["edges"] - r["loops"], r["matched"] - r["loops"]
            if edges >= min_support and matched / edges >= threshold:
                sym.append({"key": r["relation"], "edges": edges, "reversed": matched, "share": matched / edges})
        else:  # a pair of relations, once, with min_support matches (the query's filter)
            share, other = r["matched"] / r["edges"], r["matched"] / r["other_edges"]
            if min(share, other) >= threshold:
                inv.append({"relation": r["relation"], "inverse": r["other"], "matched": r["matched"],
                            "edges": r["edges"], "inverse_edges": r["other_edges"], "share": share,
                            "inverse_share": other})
    sym.sort(key=lambda r: (-r["share"], r["key"]))
    inv.sort(key=lambda r: (-min(r["share"], r["inverse_share"]), r["relation"], r["inverse"]))
    trans = [r for r in rows("propose_transitive") if r["share"] >= threshold]
    func = [r for r in rows("propose_functional") if r["share"] >= threshold]
    as_float = lambda rs: [{k: (round(float(v), 4) if isinstance(v, float) else v) for k, v in r.items()} for r in rs]
    return {"symmetric": as_float(sym), "inverse": as_float(inv), "transitive": as_float(trans),
            "functional": as_float(func)}
