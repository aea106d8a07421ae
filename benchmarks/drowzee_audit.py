"""Drowzee audit on YAGO11k: the gold answers the suite's items carry, checked against readings written out here
independently of the suite (issue 41, items 3, 4 and 7).

    python benchmarks/drowzee_audit.py [--items 900] [--per-rule 300] [--seed 0] [--data PATH] [--kg wikidata12k]

Items are made as ``benchmarks/drowzee.py`` makes them (YAGO11k train, valid and test; symmetric ``isMarriedTo``,
same ``playsFor``; 900 formulas). Printed:

* **Until** (§3.5, [R-Until] with [R-Until-0]): every "yes" Until item re-read from its evidence (the formula, the
  year, each event's ``known`` and ``possible`` years) by a literal year-by-year reading of the encoding: for
  ``d = 0`` (only when the interval holds 0) Event2 at ``t``; for ``d >= 1`` Event2 at ``t + d`` and Event1 at every
  year from ``t`` through ``t + d - 1``. A "yes" must hold over the ``known`` years of every event, a "no" must
  fail over the ``possible`` ones; the counts of items that do not.
* **Rules on a temporal KG**: the gold-"yes" ``isMarriedTo`` questions (positive phrasing) whose marriage the KG
  dates with an end year, and the same-``playsFor`` pairs that never played for the club in one year (their dated
  facts' known years do not meet), as they are asked: a question that carries the period in the past tense
  ("... was married to ... from 1965 to 1972?") is counted apart.
* **Operator x depth** of the temporal items (the And row: conjunction or nesting).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "kg"


def _at(spans, year: int) -> bool:
    return any(s <= year <= e for s, e in spans)


def _holds(f, events, year: int, lo: int, hi: int) -> bool:
    """[R-Until]-faithful point-wise reading of a formula in the suite's JSON form over ``events`` (name -> spans)."""
    op = f[0]
    if op == "atom":
        return _at(events.get(f[1], ()), year)
    if op == "not":
        return lo <= year <= hi and not _holds(f[1], events, year, lo, hi)
    if op == "and":
        return _holds(f[1], events, year, lo, hi) and _holds(f[2], events, year, lo, hi)
    if op == "or":
        return _holds(f[1], events, year, lo, hi) or _holds(f[2], events, year, lo, hi)
    if op == "next":
        return _holds(f[1], events, year + 1, lo, hi)
    if op == "finally":
        return any(_holds(f[3], events, year + d, lo, hi) for d in range(f[1], f[2] + 1))
    if op == "globally":
        return all(_holds(f[3], events, year + d, lo, hi) for d in range(f[1], f[2] + 1))
    if op == "until":
        for d in range(f[1], f[2] + 1):
            if d == 0:
                if _holds(f[4], events, year, lo, hi):
                    return True
            elif _holds(f[4], events, year + d, lo, hi) and all(
                    _holds(f[3], events, k, lo, hi) for k in range(year, year + d)):
                return True
        return False
    raise ValueError(op)


def _negated(f) -> bool:
    return f[0] == "not" or any(isinstance(x, list) and _negated(x) for x in f[1:])


def until_audit(rows) -> None:
    yes = [r for r in rows if r["task"] == "temporal" and json.loads(r["evidence"])["formula"][0] == "until"]
    counts = Counter()
    for r in yes:
        ev = json.loads(r["evidence"])
        f, year = ev["formula"], ev["year"]
        lo, hi = ev.get("domain", [1, 2024])
        known = {n: [tuple(x) for x in e["known"]] for n, e in ev["events"].items()}
        possible = {n: [tuple(x) for x in e["possible"]] for n, e in ev["events"].items()}
        if _negated(f):
            counts["skipped (negation inside)"] += 1
            continue
        if r["expected"] == "yes":
            counts["yes"] += 1
            counts["yes, but no under [R-Until]"] += not _holds(f, known, year, lo, hi)
        else:
            counts["no"] += 1
            counts["no, but may be yes under [R-Until]"] += _holds(f, possible, year, lo, hi)
    n_yes = counts["yes"]
    bad = counts["yes, but no under [R-Until]"]
    print(f"\nUntil items: {len(yes)}; gold yes {n_yes}, of which {bad} are 'no' under [R-Until] "
          f"({bad / n_yes:.0%} )" if n_yes else "\nUntil items: none with gold yes")
    print(f"  gold no {counts['no']}, of which {counts['no, but may be yes under [R-Until]']} may be 'yes' under "
          f"[R-Until]")


_PERIOD = re.compile(r"\b(?:from|in|between) -?\d{1,4}\b")


def rule_audit(con, rows) -> None:
    spans: dict[tuple[int, int, int], list[tuple[int, int | None]]] = {}
    for h, rel, t, s, e in con.execute(
            "SELECT f.head, f.relation, f.tail, f.start_year, f.end_year FROM temporal_facts f "
            "JOIN relations r ON r.id = f.relation WHERE r.key IN ('isMarriedTo', 'playsFor') "
            "AND f.start_year IS NOT NULL").fetchall():
        spans.setdefault((int(h), int(rel), int(t)), []).append((int(s), None if e in (None, 0, 3000) else int(e)))
    rel_id = {k: int(i) for i, k in con.execute("SELECT id, key FROM relations").fetchall()}

    def dated(h: int, rel: str, t: int) -> list[tuple[int, int | None]]:
        return spans.get((h, rel_id[rel], t), [])

    married = Counter()
    same = Counter()
    for r in rows:
        if r["task"] != "rule" or r["expected"] != "yes":
            continue
        ev = json.loads(r["evidence"])
        b = ev.get("derived") or {}
        with_period = bool(_PERIOD.search(r["question"])) or "period" in ev
        if ev.get("rule") == "symmetric" and b.get("relation") == "isMarriedTo" and r["question"].startswith(
                "Is it true"):
            married["gold yes"] += 1
            iv = dated(b["subject"], "isMarriedTo", b["object"]) + dated(b["object"], "isMarriedTo", b["subject"])
            ended = bool(iv) and all(e is not None for _, e in iv)
            married["ended (an end year in the KG)"] += ended
            married["ended, asked without its period"] += ended and not with_period
        if ev.get("rule") == "same" and b.get("relation") == "playsFor" and r["question"].startswith("Is it true"):
            same["gold yes pairs"] += 1
            (a, _, c), (bb, _, c2) = [(p["head"], p["relation"], p["tail"]) for p in ev["premises"]]
            ia, ib = dated(a, "playsFor", c), dated(bb, "playsFor", c2)
            known_a = [(s, s if e is None else e) for s, e in ia]
            known_b = [(s, s if e is None else e) for s, e in ib]
            meet = any(max(s1, s2) <= min(e1, e2) for s1, e1 in known_a for s2, e2 in known_b)
            same["dated"] += bool(ia and ib)
            same["never in the club in one year"] += bool(ia and ib) and not meet
    print(f"\nisMarriedTo (symmetric, positive phrasing): {dict(married)}")
    print(f"same playsFor (positive phrasing): {dict(same)}")


def depth_table(rows) -> None:
    by = Counter()
    for r in rows:
        if r["task"] == "temporal":
            b = r["breakdown"]
            b = b if isinstance(b, dict) else dict(b)
            by[(b["operator"], b["depth"])] += 1
    depths = sorted({d for _, d in by})
    ops = sorted({o for o, _ in by})
    print("\noperator x depth (temporal items)")
    print(f"{'operator':<10}" + "".join(f"{'depth ' + d:>9}" for d in depths) + f"{'total':>8}")
    for op in ops:
        print(f"{op:<10}" + "".join(f"{by.get((op, d), 0):>9}" for d in depths)
              + f"{sum(by.get((op, d), 0) for d in depths):>8}")


def main() -> None:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg
    from kgprobe.suites.base import ItemSource
    from kgprobe.suites.drowzee.suite import DrowzeeSettings, DrowzeeSuite

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=900)
    ap.add_argument("--per-rule", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--kg", default="yago11k", help="yago11k or wikidata12k (the Until audit; the rule audit reads "
                                                    "YAGO11k's isMarriedTo and playsFor)")
    args = ap.parse_args()
    root = args.data / "temporal" / args.kg
    con = duckdb.connect()
    report = load_kg(con, KGSource(format="temporal", triples=[root / f"{s}.tsv" for s in ("train", "valid", "test")],
                                   name=args.kg))
    con.execute(f'USE "{args.kg}"')
    yago = args.kg == "yago11k"
    settings = DrowzeeSettings(symmetric=["isMarriedTo"] if yago else [], same=["playsFor"] if yago else [],
                               rules=["negation", "symmetric", "same"] if yago else [], n_formulas=args.items,
                               per_rule=args.per_rule)
    result = DrowzeeSuite().items(ItemSource(con=con, kg=args.kg, snapshot_id=report.snapshot_id,
                                             settings=settings, seed=args.seed))
    rows = result.items.to_pylist()
    for r in rows:
        if not isinstance(r["breakdown"], dict):
            r["breakdown"] = dict(r["breakdown"])
    print(f"{args.kg}: {len(rows)} items ({sum(r['task'] == 'temporal' for r in rows)} temporal)")
    until_audit(rows)
    if yago:
        rule_audit(con, rows)
    depth_table(rows)
    meta = result.metadata.get("rule_periods")
    if meta:
        print(f"\nrule periods (items metadata): {meta}")


if __name__ == "__main__":
    main()
