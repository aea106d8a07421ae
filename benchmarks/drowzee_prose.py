"""Drowzee's reasoning oracle on correct answers written in ordinary prose: how often it calls right reasoning right.

    python benchmarks/drowzee_prose.py [--config examples/sample.yaml] [--seed 0] [--out benchmarks/results/drowzee_prose.json]

For every rule item of the config's KG (negation, inverse, symmetric, transitive, composition, same; the positive
phrasings), a correct answer is written: the gold Yes / No, then each premise restated in a phrasing drawn (seeded)
for its relation's label (noun: "X's R is Y", "Y is the R of X", ...; passive; active; never the KG's bare "X R Y"),
then, for a Yes, the conclusion as the question states it ("So Cosima Wagner is the child of Franz Liszt."). The suite scores the answers with its offline extractor (the shared
claim checker's heuristic) and the sample's embedder; a correct answer should be CO (correct reasoning). Per rule:
the share read CO with its Wilson interval and n, beside the share when the answer is the suite's own verbalisation
of the premises (the KG's "X R Y", what the extractor was first written for).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for p in (REPO, REPO / "benchmarks"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import duckdb  # noqa: E402

from claims_restated import restate  # noqa: E402
from kgprobe.config import load_config  # noqa: E402
from kgprobe.kg.ingest import load_kg  # noqa: E402
from kgprobe.scoring.stats import wilson_ci  # noqa: E402
from kgprobe.suites.base import ItemSource, ScoringOptions, breakdown_of  # noqa: E402
from kgprobe.suites.drowzee.suite import DrowzeeSuite  # noqa: E402

DEFAULT_OUT = REPO / "benchmarks" / "results" / "drowzee_prose.json"


def answers(rows: list[dict[str, Any]], seed: int) -> tuple[list[str], list[str]]:
    """(prose, verbalised) correct answers, one per row."""
    prose, plain = [], []
    for k, row in enumerate(rows):
        ev = json.loads(row["evidence"])
        ents = {int(i): v for i, v in ev["entities"].items()}
        rels = {str(r): lab for r, lab in ev["relations"].items()}
        yes = str(row["expected"]).lower() == "yes"
        facts = [(p["head"], p["relation"], p["tail"]) for p in ev["premises"]]
        said = restate([(int(h), r, int(t)) for h, r, t in facts], ents, rels, seed=seed + k)
        if yes:  # the conclusion as the question states it: "Is it true that X?" -> "So X."
            claim = re.sub(r"^(?:is it true that|is it the case that|do|does|did|is|are)\s+", "",
                           str(row["question"]).strip().rstrip("?"), flags=re.IGNORECASE)
            said.append(f"So {claim}.")
        prose.append(("Yes. " if yes else "No. ") + " ".join(said))
        plain.append(("Yes. " if yes else "No. ") + " ".join(ev.get("sentences") or []))
    return prose, plain


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(REPO / "examples" / "sample.yaml"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    args = ap.parse_args(argv)

    from kgprobe.embedding import Embedder

    cfg = load_config(args.config)
    settings = cfg.suite("drowzee")
    kg = settings.kg
    con = duckdb.connect()
    report = load_kg(con, cfg.kgs[kg])
    con.execute(f'USE "{kg}"')
    suite = DrowzeeSuite()
    items = suite.items(ItemSource(con=con, kg=kg, snapshot_id=report.snapshot_id, settings=settings,
                                   seed=args.seed)).items.to_pylist()
    rows = [r for r in items if breakdown_of(r).get("phrasing") == "positive" and breakdown_of(r).get("rule")
            and r.get("task", "rule") != "temporal" and json.loads(r["evidence"]).get("premises")]
    prose, plain = answers(rows, args.seed)
    embedder = Embedder()
    res: dict[str, Any] = {"items": len(rows), "rows": {}}
    for name, texts in (("prose", prose), ("verbalised", plain)):
        responses = [{"response_id": f"r{k}", "item_id": it["item_id"], "model": "m", "sample_index": 0, "text": t,
                      "error": None} for k, (it, t) in enumerate(zip(rows, texts))]
        scored = suite.score(rows, responses, model="m", scoring=ScoringOptions(embedder=embedder), settings=settings)
        cat = {s["item_id"]: s["category"] for s in scored.samples if s["judge"] == "heuristic"}
        by_rule: dict[str, Counter[str]] = {}
        for it in rows:
            by_rule.setdefault(breakdown_of(it)["rule"], Counter())[cat.get(it["item_id"], "none")] += 1
        by_rule["all"] = sum(by_rule.values(), Counter())
        for rule, c in by_rule.items():
            n = sum(c.values())
            lo, hi = wilson_ci(c["CO"], n)
            res["rows"].setdefault(rule, {})[name] = {"n": n, "CO": round(c["CO"] / n, 3), "ci": [round(lo, 3),
                                                                                                   round(hi, 3)],
                                                       "categories": dict(c)}
    print(f"\nDrowzee's oracle on {len(rows)} correct answers to the rule items of {args.config} (share read CO, "
          "Wilson 95% interval):")
    print("| rule | n | prose answers | the suite's own verbalisation |")
    print("|---|---|---|---|")
    for rule, row in res["rows"].items():
        p, v = row["prose"], row["verbalised"]
        print(f"| {rule} | {p['n']} | {p['CO']:.2f} [{p['ci'][0]:.2f}, {p['ci'][1]:.2f}] | {v['CO']:.2f} "
              f"[{v['ci'][0]:.2f}, {v['ci'][1]:.2f}] |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    print(f"\nwritten {out}")
    return res


if __name__ == "__main__":
    main()
