"""Drowzee benchmark: MTL satisfying years in closed form against year-by-year evaluation, on YAGO11k's dated facts;
the suite's 1,800 YAGO11k temporal items with their operator x depth counts and the formulas dropped by each rule;
and the rule derivation over FB15k-237 in seconds.

    python benchmarks/drowzee.py [--formulas 100000] [--baseline 1000] [--check 100] [--seed 0] [--data PATH]
                                 [--items 900] [--show 20] [--skip-rules]
    python benchmarks/drowzee.py --released CHECKOUT [--models gpt-4 chatgpt ...]

Released: the paper's hallucination rate (a wrong Yes/No answer, the suite's ``hallucination_rate``) on the authors'
released answers (``res/old/<model>/<domain>.json``) against their labels (``res/old/<model>/hallu/<domain>.json``:
the answers their oracle labelled hallucinations), per model and domain, with Wilson intervals and n, as a Markdown
table; pairs whose files the checkout lacks are listed.

Items: YAGO11k (train, valid and test) loaded into DuckDB, then the suite's ``items`` with ``n_formulas`` = ``--items``
(two items each), rules negation (functional relations), symmetric ``isMarriedTo`` and same ``playsFor``; end year
3000 read as an unknown end, event relations detected from the data. Prints the time, the relations read as events,
the operator x depth table, the formulas dropped per rule (each would have been two items) with the reason, the share
of symmetric derivations already stored, and ``--show`` seeded random questions with their gold answers.

Temporal: ``--formulas`` random formulas of nesting depth <= 2 (outermost operator uniform over not, and, or,
next, finally, globally, until; interval bounds up to 20 years; operands atoms or one-operator formulas; the second
atom of a binary operator drawn among events that overlap the first in time) over YAGO11k's train facts (an event
per (head, relation, tail), year 0 unknown; an unknown end, 3000 included, gives the start year only). kgprobe's :func:`satisfying_years` runs on all of
them. The baseline is the straightforward year-by-year evaluation: for every subformula, a truth value per year of
the window where anything can hold (Definition 1 applied year by year, memoised per subformula, in plain Python).
It runs on the first ``--baseline`` formulas (it is slow) and its time per formula is extrapolated to all; its
intervals must equal kgprobe's on every formula it runs. ``--check`` formulas are also compared with the literal
point-wise evaluator ``brute_force_years``. Goal: >= 50x.

Rules: FB15k-237's train triples loaded into DuckDB (time reported apart), then ``propose_properties`` and
``derive`` with negation over the functional relations, the symmetric relations, inverse pairs and transitive
relations proposed at ``--threshold`` (0.8: FB15k-237's split removed most reverse edges, so 0.95 proposes none), and same_P over five relations, caps 4 per subject and 300 per rule.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from pathlib import Path

from kgprobe.suites.drowzee.facts import events_from_tsv
from kgprobe.suites.drowzee.questions import sample_formula
from kgprobe.suites.drowzee.temporal import (
    DOMAIN,
    And,
    Atom,
    Finally,
    Globally,
    Next,
    Not,
    Or,
    atoms,
    brute_force_years,
    horizon,
    satisfying_years,
)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "kg"


def year_by_year(formula, events, lo: int = DOMAIN[0], hi: int = DOMAIN[1]) -> list[tuple[int, int]]:
    """The straightforward evaluation: a truth value per year of the window, per subformula, bottom up."""
    names = atoms(formula)
    first = min([lo, *(s for n in names for s, _ in events.get(n, ()))]) - horizon(formula)
    last = max([hi, *(e for n in names for _, e in events.get(n, ()))])
    width = last - first + 1
    memo: dict = {}

    def at(values: list[bool], t: int) -> bool:
        return 0 <= t < width and values[t]

    def ev(f) -> list[bool]:
        if f in memo:
            return memo[f]
        if isinstance(f, Atom):
            out = [False] * width
            for s, e in events.get(f.name, ()):
                for y in range(max(s, first), min(e, last) + 1):
                    out[y - first] = True
        elif isinstance(f, Not):
            c = ev(f.f)
            out = [lo <= t + first <= hi and not c[t] for t in range(width)]
        elif isinstance(f, And):
            a, b = ev(f.a), ev(f.b)
            out = [a[t] and b[t] for t in range(width)]
        elif isinstance(f, Or):
            a, b = ev(f.a), ev(f.b)
            out = [a[t] or b[t] for t in range(width)]
        elif isinstance(f, Next):
            c = ev(f.f)
            out = [at(c, t + 1) for t in range(width)]
        elif isinstance(f, Finally):
            c = ev(f.f)
            out = [any(at(c, t + d) for d in range(f.lo, f.hi + 1)) for t in range(width)]
        elif isinstance(f, Globally):
            c = ev(f.f)
            out = [all(at(c, t + d) for d in range(f.lo, f.hi + 1)) for t in range(width)]
        else:
            a, b = ev(f.a), ev(f.b)
            # [R-Until]: a from t through t + d - 1 (nothing of a for d = 0)
            out = [any(at(b, t + d) and all(at(a, k) for k in range(t, t + d)) for d in range(f.lo, f.hi + 1))
                   for t in range(width)]
        memo[f] = out
        return out

    truth = ev(formula)
    spans: list[tuple[int, int]] = []
    for i, v in enumerate(truth):
        if v:
            y = i + first
            if spans and spans[-1][1] == y - 1:
                spans[-1] = (spans[-1][0], y)
            else:
                spans.append((y, y))
    return spans


def temporal(args: argparse.Namespace) -> None:
    path = args.data / "temporal" / "yago11k" / "train.tsv"
    t0 = time.perf_counter()
    events = events_from_tsv(path)
    print(f"YAGO11k train: {len(events):,} dated facts with known years ({time.perf_counter() - t0:.2f} s to read)")
    names = sorted(events)
    ordered = sorted(names, key=lambda n: events[n][0][0])
    import bisect

    starts = [events[n][0][0] for n in ordered]
    near = {}
    for n in names:
        i = bisect.bisect_left(starts, events[n][0][0] - 60)
        j = bisect.bisect_right(starts, events[n][-1][1] + 30)
        near[n] = ordered[i:min(j, i + 40)]
    rng = random.Random(args.seed)
    formulas = [sample_formula(rng, names, max_depth=2, near=near) for _ in range(args.formulas)]
    t0 = time.perf_counter()
    closed = [satisfying_years(f, events) for f in formulas]
    t_closed = time.perf_counter() - t0
    per_closed = t_closed / len(formulas)
    print(f"satisfying_years (closed form): {len(formulas):,} formulas in {t_closed:.2f} s "
          f"({per_closed * 1e6:.1f} us per formula)")
    k = min(args.baseline, len(formulas))
    t0 = time.perf_counter()
    for f, want in zip(formulas[:k], closed[:k]):
        got = year_by_year(f, events)
        if got != want:
            raise SystemExit(f"MISMATCH on {f}: closed form {want[:4]}... year by year {got[:4]}...")
    t_base = time.perf_counter() - t0
    per_base = t_base / k
    print(f"year-by-year evaluation: {k:,} formulas in {t_base:.2f} s ({per_base * 1e3:.2f} ms per formula); "
          f"extrapolated to {len(formulas):,}: {per_base * len(formulas):.0f} s; identical intervals on all {k:,}")
    c = min(args.check, len(formulas))
    t0 = time.perf_counter()
    for f, want in zip(formulas[:c], closed[:c]):
        if brute_force_years(f, events) != want:
            raise SystemExit(f"MISMATCH against the point-wise Definition 1 on {f}")
    print(f"point-wise Definition 1 (brute_force_years): identical on {c} formulas "
          f"({(time.perf_counter() - t0) / max(c, 1) * 1e3:.1f} ms per formula)")
    true_share = sum(bool(x) for x in closed) / len(closed)
    print(f"formulas with some satisfying year: {true_share:.1%}")
    print(f"SPEEDUP closed form vs year by year: {per_base / per_closed:.0f}x (goal >= 50x)")


def items(args: argparse.Namespace) -> None:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg
    from kgprobe.suites.base import ItemSource, breakdown_of
    from kgprobe.suites.drowzee.questions import DROP_REASONS, OPERATORS
    from kgprobe.suites.drowzee.suite import DrowzeeSettings, DrowzeeSuite

    root = args.data / "temporal" / "yago11k"
    con = duckdb.connect()
    t0 = time.perf_counter()
    report = load_kg(con, KGSource(format="temporal", triples=[root / f"{s}.tsv" for s in ("train", "valid", "test")],
                                   name="yago11k"))
    con.execute('USE "yago11k"')
    print(f"\nYAGO11k: {report.temporal_facts:,} dated facts loaded in {time.perf_counter() - t0:.1f} s")
    settings = DrowzeeSettings(symmetric=["isMarriedTo"], same=["playsFor"], n_formulas=args.items, per_rule=300)
    t0 = time.perf_counter()
    result = DrowzeeSuite().items(ItemSource(con=con, kg="yago11k", snapshot_id=report.snapshot_id,
                                             settings=settings, seed=args.seed))
    seconds = time.perf_counter() - t0
    rows = result.items.to_pylist()
    temporal_rows = [r for r in rows if r["task"] == "temporal"]
    meta = result.metadata["temporal"]
    print(f"items: {len(temporal_rows):,} temporal and {len(rows) - len(temporal_rows):,} rule items in {seconds:.1f} s")
    events = {k: f"{v['share']:.0%}" for k, v in meta["event_relations"].items() if v["event"]}
    print(f"event relations (points at their start year; share of facts without an end or ending in their start "
          f"year): {events}")
    print(f"facts: {meta['facts_read_as_points']:,} read as points, {meta['facts_with_unknown_end']:,} with an unknown "
          f"end, {meta['facts_without_start']:,} without a start (left out)")
    by = Counter((breakdown_of(r)["operator"], breakdown_of(r)["depth"]) for r in temporal_rows)
    depths = sorted({d for _, d in by})
    print("\noperator x depth (items)")
    print(f"{'operator':<10}" + "".join(f"{'depth ' + d:>9}" for d in depths) + f"{'total':>8}")
    for op in OPERATORS:
        print(f"{op:<10}" + "".join(f"{by.get((op, d), 0):>9}" for d in depths) + f"{sum(by.get((op, d), 0) for d in depths):>8}")
    print(f"\nformulas tried {meta['formulas_tried']:,}, asked {meta['formulas_asked']:,}; dropped (x2 items each):")
    for reason, n in meta["dropped"].items():
        print(f"  {reason:<28} {n:>6}  {DROP_REASONS[reason]}")
    stored = result.metadata["derivations_already_stored"].get("symmetric")
    if stored:
        print(f"symmetric isMarriedTo: {stored['stored']:,} of {stored['candidates']:,} derivations already stored "
              f"({stored['stored_share']:.1%}); asked: the {stored['candidates'] - stored['stored']:,} that are not")
    rng = random.Random(args.seed)
    for r in rng.sample(temporal_rows, min(args.show, len(temporal_rows))):
        print(f"\n[{breakdown_of(r)['operator']}, depth {breakdown_of(r)['depth']}] {r['question']}\n{r['gold_answer']}")


def rules(args: argparse.Namespace) -> None:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg
    from kgprobe.suites.drowzee.rules import RuleConfig, derive, propose_properties

    con = duckdb.connect()
    t0 = time.perf_counter()
    report = load_kg(con, KGSource(triples=[args.data / "fb15k-237" / "train.txt.gz"], name="fb"))
    con.execute('USE "fb"')
    print(f"FB15k-237 train: {report.triples:,} triples, {report.relations} relations loaded in "
          f"{time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    props = propose_properties(con, threshold=args.threshold)
    t_props = time.perf_counter() - t0
    print(f"propose_properties (threshold {args.threshold}): {t_props:.2f} s; symmetric {len(props['symmetric'])}, inverse pairs "
          f"{len(props['inverse'])}, transitive {len(props['transitive'])}, functional {len(props['functional'])}")
    same = [r for r, in con.execute("SELECT r.key FROM triples t JOIN relations r ON r.id = t.relation "
                                   "GROUP BY r.key ORDER BY count(*) DESC, r.key LIMIT 5").fetchall()]
    config = RuleConfig(negation=None, symmetric=tuple(r["key"] for r in props["symmetric"]),
                        inverse={r["relation"]: r["inverse"] for r in props["inverse"]},
                        transitive=tuple(r["key"] for r in props["transitive"]), same=tuple(same),
                        per_subject=4, per_rule=300)
    t0 = time.perf_counter()
    facts = derive(con, config, seed=args.seed)
    t_derive = time.perf_counter() - t0
    from collections import Counter

    print(f"derive: {len(facts):,} derived facts in {t_derive:.2f} s "
          f"({dict(Counter(f.rule for f in facts))}; {sum(f.in_kg for f in facts)} already in the KG)")
    print(f"RULES total (proposals + derivation): {t_props + t_derive:.2f} s")


DOMAINS = ("culture", "geography", "health", "history", "math", "nature", "people", "society", "tech")


def released(args: argparse.Namespace) -> None:
    """The paper's hallucination rate on the authors' released answers, computed by the suite's own votes and
    metrics, against the authors' labels: ``res/old/<model>/<domain>.json`` holds every answered item (``answer``
    the gold "Yes."/"No.", ``llm_answer`` the model's text) and ``res/old/<model>/hallu/<domain>.json`` the items
    their oracle labelled hallucinations (the same records); their rate is the second's count over the first's."""
    import json

    from kgprobe.scoring.stats import wilson_ci
    from kgprobe.suites.drowzee.oracle import MISSING, read_answer
    from kgprobe.suites.drowzee.suite import DrowzeeSuite

    suite = DrowzeeSuite()
    root = args.released / "res" / "old"
    if not root.is_dir():
        raise SystemExit(f"{root}: not found; give a checkout of the authors' repository (Ningke-Li/drowzee)")
    models = args.models or sorted(p.name for p in root.iterdir() if p.is_dir())
    print("| model | domain | n | ours (wrong Yes/No) | their labels (hallu/) | difference |")
    print("|---|---|---:|---|---|---:|")
    missing, worst = [], {}
    for model in models:
        for domain in DOMAINS:
            answers_path, hallu_path = root / model / f"{domain}.json", root / model / "hallu" / f"{domain}.json"
            try:
                answers = json.loads(answers_path.read_text(encoding="utf-8"))
                hallu = json.loads(hallu_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                missing.append(f"{model}/{domain}")
                continue
            items, samples = {}, []
            for k, rec in enumerate(answers):
                item_id = f"{domain}-{k}"
                items[item_id] = {"item_id": item_id, "task": "rule", "expected": read_answer(rec["answer"]),
                                  "breakdown": {"rule": str(rec.get("reasoning", ""))}}
                samples.append({"response_id": f"{model}-{item_id}", "item_id": item_id, "sample_index": 0,
                                "judge": "heuristic", "text": rec["llm_answer"], "error": None,
                                "answer": read_answer(rec["llm_answer"]), "label": "", "category": MISSING,
                                "node_similarity": None, "edge_similarity": None})  # the oracle is not run here
            votes = suite._votes(samples, items, model, "none")
            (rate,) = [m for m in suite.metrics(votes, items, model=model, perturbation="none")
                       if m["metric"] == "hallucination_rate" and not m["breakdown"]]
            theirs = len(hallu) / len(answers)
            lo, hi = wilson_ci(len(hallu), len(answers))
            diff = rate["value"] - theirs
            worst[model] = max(worst.get(model, 0.0), abs(diff))
            print(f"| {model} | {domain} | {rate['n']} | {rate['value']:.3f} [{rate['ci_low']:.3f}, "
                  f"{rate['ci_high']:.3f}] | {theirs:.3f} [{lo:.3f}, {hi:.3f}] | {diff:+.3f} |")
    print(f"\nlargest |difference| per model: " + ", ".join(f"{m} {d:.3f}" for m, d in worst.items()))
    if missing:
        print(f"not in this checkout (answers or labels absent): {', '.join(missing)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--formulas", type=int, default=100_000)
    ap.add_argument("--baseline", type=int, default=1000)
    ap.add_argument("--check", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threshold", type=float, default=0.8,
                    help="proposal threshold whose relations the derivation uses (FB15k-237 dropped most reverse "
                         "edges, so at 0.95 it proposes none)")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--skip-rules", action="store_true")
    ap.add_argument("--items", type=int, default=900, help="temporal formulas asked on YAGO11k (two items each)")
    ap.add_argument("--show", type=int, default=0, help="random YAGO11k questions to print with their gold answers")
    ap.add_argument("--skip-items", action="store_true")
    ap.add_argument("--released", type=Path, default=None,
                    help="a checkout of the authors' repository: compare the paper's hallucination rate on their "
                         "released answers (res/old) with their labels (hallu/), per model and domain, and stop")
    ap.add_argument("--models", nargs="*", default=None, help="with --released: these models only (default all)")
    args = ap.parse_args()
    if args.released is not None:
        released(args)
        return
    temporal(args)
    if not args.skip_items:
        items(args)
    if not args.skip_rules:
        rules(args)


if __name__ == "__main__":
    main()
