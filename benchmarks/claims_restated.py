"""FActScore of answers that restate their KG context, clean and perturbed: what OKGQA's headline rests on.

    python benchmarks/claims_restated.py [--items 200] [--facts 6] [--seed 0] [--out benchmarks/results/claims_restated.json]

An answer that restates a clean context states only true facts, so its FActScore (supported / all atomic facts,
checked against the unperturbed KG) should be near 1; one that restates an RR-1.0 context (every relation replaced)
or an ER-1.0 context (every entity replaced) states false facts, so near 0. On the bundled sample KG: for
``--items`` seeded entities, the context is up to ``--facts`` of the entity's triples; each perturbation (none,
RS-1.0, RR-1.0, ER-1.0) perturbs that context (RR with a seeded, untrained DistMult: RR-1.0 replaces every relation
whatever the scorer); the answer restates each context triple in a phrasing drawn (seeded) from several per phrase
type (noun: "X's R is Y", "Y is the R of X", ...; passive; active), none of them the KG's own "X R Y"; its facts
are extracted by the offline heuristic (answer-level: pronouns carried, values read) and checked with
``check_claim``. Per perturbation: mean FActScore with the Wilson interval of the mean, and n answers.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for p in (REPO, REPO / "benchmarks"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402

from kgprobe.grounding import perturb  # noqa: E402
from okgqa import _RandomDistMult  # noqa: E402  (RR-1.0 replaces every relation whichever one a scorer ranks first)
from kgprobe.kg.ingest import KGSource, load_kg  # noqa: E402
from kgprobe.scoring.claims import KGFacts, check_claim, extract_claims, factscore  # noqa: E402
from kgprobe.scoring.stats import wilson_mean_ci  # noqa: E402
from kgprobe.suites.drowzee.templates import phrase_type  # noqa: E402

SAMPLE = REPO / "examples" / "sample"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "claims_restated.json"
PERTURBATIONS = ("none", "RS-1.0", "RR-1.0", "ER-1.0")
#: How an answer restates a triple, per how its relation label reads; never the KG's bare "X R Y".
PHRASINGS: dict[str, tuple[str, ...]] = {
    "noun": ("{s}'s {r} is {o}.", "The {r} of {s} is {o}.", "{o} is the {r} of {s}.", "{s} has {o} as its {r}.",
             "As far as I know, the {r} of {s} was {o}."),
    "prep": ("{s} is {r} {o}.", "{s} was {r} {o}.", "Indeed, {s} is {r} {o}."),
    "passive": ("{s} was {r} {o}.", "{s} is {r} {o}.", "{s} has been {r} {o}."),
    "active": ("{s} {r} {o}.", "Indeed {s} {r} {o}."),
}
_PREPS = {"of", "in", "to", "for", "at", "on", "from", "with", "into"}


def restate(triples: list[tuple[int, int, int]], entities: dict[int, str], labels: dict[int, str],
            seed: int) -> list[str]:  # fmt: skip
    """One sentence per triple, its phrasing drawn (seeded) for the way the relation label reads."""
    rng = random.Random(seed)
    out = []
    for h, r, t in triples:
        label = labels[r]
        kind = phrase_type(label)
        if kind == "noun" and label.split()[-1] in _PREPS:
            kind = "prep"
        out.append(rng.choice(PHRASINGS[kind]).format(s=entities[h], r=label, o=entities[t]))
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--facts", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    args = ap.parse_args(argv)

    con = duckdb.connect()
    load_kg(con, KGSource(triples=[SAMPLE / "triples.tsv"], entity_labels=SAMPLE / "entity_labels.tsv",
                          relation_labels=SAMPLE / "relation_labels.tsv", name="sample"))
    kg = KGFacts.from_duckdb(con, "sample")
    con.close()
    triples = np.array(sorted(kg.triples), dtype=np.int64)
    by_head: dict[int, list[tuple[int, int, int]]] = {}
    for h, r, t in triples.tolist():
        by_head.setdefault(h, []).append((h, r, t))
    rng = random.Random(args.seed)
    seeds = sorted(by_head)
    rng.shuffle(seeds)
    seeds = seeds[:args.items]
    scorer = _RandomDistMult(max(kg.entities) + 1, max(kg.relations) + 1, seed=args.seed)
    labels = {r: kg.profiles[r].label for r in kg.relations}
    res: dict[str, Any] = {"items": len(seeds), "facts_per_item": args.facts, "seed": args.seed, "rows": {}}
    t0 = time.perf_counter()
    for key in PERTURBATIONS:
        scores: list[float] = []
        n_facts = n_supported = 0
        for i, s in enumerate(seeds):
            context = np.array(sorted(by_head[s])[:args.facts], dtype=np.int64)
            if key != "none":
                method, level = key.split("-")
                context = np.asarray(perturb(context, method, float(level), seed=args.seed + i, scorer=scorer,
                                             nodes=range(len(kg.entities))), dtype=np.int64).reshape(-1, 3)
            if not len(context):
                continue
            said = restate([(int(h), int(r), int(t)) for h, r, t in context], kg.entities, labels, seed=args.seed + i)
            answer = " ".join(said)
            claims, _ = extract_claims(answer, kg)
            verdicts = [check_claim(c, kg) for c in claims] + \
                [None] * max(0, len(said) - len(claims))  # a restated fact the heuristic missed counts unsupported
            fs = factscore([v for v in verdicts if v is not None] + [_Missed() for v in verdicts if v is None])
            if fs is not None:
                scores.append(fs)
                n_facts += len(verdicts)
                n_supported += sum(v is not None and v.label == "supported" for v in verdicts)
        n = len(scores)
        mean = float(np.mean(scores)) if scores else float("nan")
        lo, hi = wilson_mean_ci(scores) if n else (float("nan"), float("nan"))
        res["rows"][key] = {"n": n, "factscore": round(mean, 3), "ci": [round(lo, 3), round(hi, 3)],
                            "facts": n_facts, "supported": n_supported}
    res["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"\nFActScore of answers restating {len(seeds)} sample-KG contexts of up to {args.facts} triples "
          "(heuristic extraction, checked against the unperturbed KG; Wilson interval of the mean):")
    print("| context | n answers | facts | mean FActScore [95% CI] |")
    print("|---|---|---|---|")
    for key, row in res["rows"].items():
        print(f"| {key} | {row['n']} | {row['facts']} | {row['factscore']:.2f} [{row['ci'][0]:.2f}, "
              f"{row['ci'][1]:.2f}] |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    print(f"\nwritten {out} ({res['seconds']} s)")
    return res


class _Missed:
    label = "missed"


if __name__ == "__main__":
    main()
