"""Benchmark: GraphEval statements and verified negatives in DuckDB against a Python loop, and the hidden-state judge
against generation.

    python benchmarks/grapheval.py [--data ../shared/data] [--k 3] [--seed 0] [--skip-judge] [--judge-groups 40]

1. Statements (every triple of FB15k-237's train split, 272k, k negatives each, typed corruption) with
   :func:`kgprobe.suites.grapheval.statements.draw_statements` and the texts of every statement, against what one
   would write by hand: a Python loop over the positives that draws each negative with ``random.Random`` from the
   same pools and checks it with a set lookup (KG triples, surface forms, positive texts, the positive's other
   negatives), re-drawing up to the same limit. Like for like, both give the verified statements as KG ids and the
   rejection counts (the loop builds each candidate's text for its lookups and keeps none): that ratio is the goal
   (>= 10x); the time with every statement's text rendered as well is shown beside it. Both run in one process on the same loaded KG, alternating, and the
   fastest of ``--repeats`` runs of each counts. Memory is measured apart, each implementation in a fresh process:
   its peak RSS during the run (Linux VmHWM, reset after loading the KG). Both must reject about the same share of
   candidates (they draw differently, so the counts are not equal). The whole item table
   (:func:`~kgprobe.suites.grapheval.statements.build_statements`: ids, breakdown, JSON evidence) is timed apart.
2. The rejection counts by reason on FB15k-237 and CoDEx-M (train + valid + test, Wikidata types), and how many of
   CoDEx-M's human-checked hard negatives (valid_negatives.txt, test_negatives.txt) our verification accepts as false.
3. SmolLM2-135M-Instruct (CPU) on the sample KG under both profiles: it answers ``--judge-groups`` groups of each
   profile's statements (3 samples at temperature 0.6, 40 new tokens at most, as the paper asks), the paper- and
   kgprobe-profile metrics are printed; then one hidden-state judge per profile (``--network``: the released
   network by default) trains on 70% of that profile's answered groups and is scored on the rest (agreement, macro
   and weighted F1, precision, recall) beside the majority-class baseline, and the seconds
   per 1,000 statements of one forward pass against generation (8 answered prompts again) are measured on the same
   machine, one after the other.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _peak_reset() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _fb15k(data: Path):
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    d = data / "kg" / "fb15k-237"
    con = duckdb.connect()
    load_kg(con, KGSource(triples=[d / "train.txt.gz"], format="tsv", entity_labels=d / "FB15k_mid2name.txt",
                          relation_labels=d / "relation2text.txt"))
    return con


def _codex(data: Path):
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    d = data / "kg" / "codex"
    con = duckdb.connect()
    load_kg(con, KGSource(triples=[d / "codex-m" / f"{s}.txt" for s in ("train", "valid", "test")], format="tsv",
                          relation_labels=d / "relations" / "en" / "relations.json",
                          entity_types=d / "types" / "entity2types.json", type_labels=d / "types" / "en" / "types.json"))
    return con


def _run_kgprobe(data: str, k: int, seed: int, out: Any) -> None:
    """Peak memory of the kgprobe path in a fresh process: the draw, the texts, then the whole item table."""
    from kgprobe.suites.grapheval.statements import (
        StatementOptions,
        build_statements,
        draw_statements,
    )

    con = _fb15k(Path(data))
    con.execute("SET memory_limit = '1GB'")  # DuckDB spills beyond it
    _peak_reset()
    t0 = time.perf_counter()
    drawn = draw_statements(con, StatementOptions(per_relation=None, negatives=k), seed=seed)
    positives, negatives = drawn.texts(con)
    seconds = time.perf_counter() - t0
    peak = _peak_mb()
    del positives, negatives
    _peak_reset()
    t0 = time.perf_counter()
    items = build_statements(con, StatementOptions(per_relation=None, negatives=k), seed=seed, rejects=False)
    out.put({"seconds": seconds, "peak_mb": peak, "items_seconds": time.perf_counter() - t0,
             "items_peak_mb": _peak_mb(), "items": items.items.num_rows, "positives": drawn.metadata["positives_unique"],
             "negatives": drawn.metadata["negatives"], "rejected": drawn.metadata["rejected_by_reason"],
             "attempts": drawn.metadata["attempts"], "reject_counts": drawn.reject_counts})


def _side_by_side(data: str, k: int, seed: int, repeats: int, out: Any) -> None:
    """Both implementations in one process on the same loaded KG, alternating, ``repeats`` times each; the
    fastest run of each counts (the machine's other load only ever slows a run down)."""
    from kgprobe.suites.grapheval.statements import StatementOptions, draw_statements

    con = _fb15k(Path(data))
    inputs = _loop_inputs(con)
    loop, draw, texts = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = _loop(*inputs, k=k, seed=seed)
        loop.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        drawn = draw_statements(con, StatementOptions(per_relation=None, negatives=k), seed=seed)
        draw.append(time.perf_counter() - t0)
        drawn.texts(con)
        texts.append(time.perf_counter() - t0)
    out.put({"loop": min(loop), "draw": min(draw), "draw_texts": min(texts), "loop_result": result,
             "runs": {"loop": loop, "draw": draw, "draw_texts": texts}})


def _loop_inputs(con: Any) -> tuple[Any, ...]:
    ent = {i: (key, label) for i, key, label in con.execute("SELECT id, key, label FROM entities").fetchall()}
    rel_label = dict(con.execute("SELECT id, label FROM relations").fetchall())
    triples = con.execute("SELECT head, relation, tail FROM triples ORDER BY relation, head, tail").fetchall()
    return ent, rel_label, triples


def _loop(ent: dict, rel_label: dict, triples: list, *, k: int, seed: int,
          max_attempts: int = 10) -> dict[str, Any]:
    """The hand-written baseline: the same rules, a Python set lookup per candidate."""
    norm = {i: " ".join(label.lower().split()) for i, (_, label) in ent.items()}
    kg = set(triples)
    surface = {(norm[h], r, norm[t]) for h, r, t in triples}
    heads: dict[int, list[int]] = {}
    tails: dict[int, list[int]] = {}
    for h, r, t in triples:
        heads.setdefault(r, []).append(h)
        tails.setdefault(r, []).append(t)
    heads = {r: sorted(set(v)) for r, v in heads.items()}
    tails = {r: sorted(set(v)) for r, v in tails.items()}
    relations = sorted(rel_label)

    def text(h: int, r: int, t: int) -> str:
        return f"{ent[h][1]} {rel_label[r]} {ent[t][1]}."

    positives, seen = [], set()
    for tr in triples:
        s = text(*tr)
        if s not in seen:
            seen.add(s)
            positives.append(tr)
    rng = random.Random(seed)
    rejected: dict[str, int] = {}
    negatives = 0
    for h, r, t in positives:
        mine: set[str] = set()
        for _ in range(k):
            for _attempt in range(max_attempts):
                part = rng.choice(("head", "relation", "tail"))
                if part == "head":
                    c = (rng.choice(heads[r]), r, t)
                elif part == "tail":
                    c = (h, r, rng.choice(tails[r]))
                else:
                    c = (h, rng.choice(relations), t)
                s = text(*c)
                reason = ("unchanged" if c == (h, r, t) else "in_kg" if c in kg
                          else "same_label" if (norm[c[0]], c[1], norm[c[2]]) in surface
                          else "duplicate_text" if s in seen else "duplicate_negative" if s in mine else None)
                if reason is None:
                    mine.add(s)
                    negatives += 1
                    break
                rejected[reason] = rejected.get(reason, 0) + 1
            else:
                rejected["exhausted"] = rejected.get("exhausted", 0) + 1
    return {"positives": len(positives), "negatives": negatives, "rejected": rejected}


def _run_python(data: str, k: int, seed: int, out: Any) -> None:
    """Peak memory of the baseline in a fresh process."""
    inputs = _loop_inputs(_fb15k(Path(data)))
    _peak_reset()
    t0 = time.perf_counter()
    result = _loop(*inputs, k=k, seed=seed)
    out.put({"seconds": time.perf_counter() - t0, "peak_mb": _peak_mb(), **result})


def _in_process(target: Any, *args: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    p.start()
    result = q.get()
    p.join()
    return result


def statements(data: Path, k: int, seed: int, repeats: int = 3) -> dict[str, Any]:
    both = _in_process(_side_by_side, str(data), k, seed, repeats)
    ours = _in_process(_run_kgprobe, str(data), k, seed)
    loop = _in_process(_run_python, str(data), k, seed)
    print(f"FB15k-237, {ours['positives']} positives, k = {k}: kgprobe {ours['negatives']} verified negatives in "
          f"{ours['attempts']} attempts, rejected {ours['rejected']}", flush=True)
    print(f"  Python loop: {both['loop_result']['negatives']} negatives, rejected {both['loop_result']['rejected']}",
          flush=True)
    print(f"  side by side, fastest of {repeats}: loop {both['loop']:.3f} s; kgprobe draw + verify {both['draw']:.3f} s "
          f"({both['loop'] / both['draw']:.1f}x, goal >= 10x: both give the verified statements as ids and their "
          f"rejection counts); and rendering every statement's text too {both['draw_texts']:.3f} s "
          f"({both['loop'] / both['draw_texts']:.1f}x)", flush=True)
    print(f"  peak RSS above the loaded KG: kgprobe {ours['peak_mb']:.0f} MB (goal < 2048), loop {loop['peak_mb']:.0f} MB; "
          f"the whole item table ({ours['items']} rows, ids, JSON evidence) {ours['items_seconds']:.2f} s, "
          f"peak {ours['items_peak_mb']:.0f} MB", flush=True)
    return {"side_by_side": both, "kgprobe": ours, "python": loop, "speedup": both["loop"] / both["draw"],
            "speedup_with_texts": both["loop"] / both["draw_texts"]}


def codex(data: Path, k: int, seed: int) -> dict[str, Any]:
    from kgprobe.suites.grapheval.statements import (
        StatementOptions,
        build_statements,
        verify_negatives,
    )

    con = _codex(data)
    t0 = time.perf_counter()
    s = build_statements(con, StatementOptions(per_relation=None, negatives=k), seed=seed, rejects=False)
    seconds = time.perf_counter() - t0
    print(f"CoDEx-M: {seconds:.2f} s, {s.metadata['positives_unique']} positives, {s.metadata['negatives']} negatives, "
          f"rejected {s.metadata['rejected_by_reason']}", flush=True)
    out: dict[str, Any] = {"seconds": seconds, "rejected": s.metadata["rejected_by_reason"],
                           "reject_counts": s.reject_counts, "negatives": s.metadata["negatives"]}
    for name in ("valid_negatives", "test_negatives"):
        rows = [tuple(line.split("\t")[:3]) for line in
                (data / "kg" / "codex" / "codex-m" / f"{name}.txt").read_text().splitlines() if line.strip()]
        reasons = verify_negatives(con, rows)
        counts: dict[str, int] = {}
        for r in reasons:
            counts[r or "verified_false"] = counts.get(r or "verified_false", 0) + 1
        print(f"CoDEx-M {name}: {counts}", flush=True)
        out[name] = counts
    return out


def judge(groups: int, seed: int, threads: int | None, samples: int = 3, network: str = "paper") -> dict[str, Any]:
    import duckdb

    from kgprobe.generation.backends.hf import HFBackend, HFConfig
    from kgprobe.generation.records import SamplingParams
    from kgprobe.kg.ingest import KGSource, load_kg
    from kgprobe.suites.base import ItemSource, ScoringOptions
    from kgprobe.suites.grapheval.judge import run_hidden_judge
    from kgprobe.suites.grapheval.profiles import profile_of_task
    from kgprobe.suites.grapheval.suite import GraphEvalSettings, GraphEvalSuite

    sample = REPO / "examples" / "sample"
    con = duckdb.connect()
    load_kg(con, KGSource(triples=[sample / "triples.tsv"], format="tsv", entity_labels=sample / "entity_labels.tsv",
                          relation_labels=sample / "relation_labels.tsv", entity_types=sample / "entity_types.tsv"))
    suite = GraphEvalSuite()
    settings = GraphEvalSettings(profile="paper", compare_profile="kgprobe", per_relation=12,
                                 templates="grapheval/templates.yaml")
    items = suite.items(ItemSource(con=con, kg="main", snapshot_id="bench", settings=settings, seed=seed,
                                   config_dir=sample)).items.to_pylist()
    asked = suite.select(items, limit=groups)  # `groups` groups of each profile
    prompts = suite.prompts(asked)
    backend = HFBackend(HFConfig("smollm2-135m-instruct", device="cpu", num_threads=threads))
    # the paper's sampling: 3 answers at temperature 0.6, the majority counts
    params = SamplingParams(n=samples, temperature=0.6, top_p=0.9, max_tokens=40, seed=seed)
    responses, t0 = [], time.perf_counter()
    for start in range(0, len(prompts), 16):
        batch = prompts[start:start + 16]
        for p, cs in zip(batch, backend.generate(batch, params), strict=True):
            responses += [{"response_id": f"{p.item_id}-{i}", "item_id": p.item_id, "model": "smollm2-135m",
                           "sample_index": i, "text": c.text, "error": c.error} for i, c in enumerate(cs)]
    print(f"SmolLM2 answered {len(prompts)} statements x {samples} in {time.perf_counter() - t0:.1f} s", flush=True)
    scores = suite.score(asked, responses, model="smollm2-135m", scoring=ScoringOptions(seed=seed, resamples=1000))
    for m in scores.metrics:
        if not m["breakdown"] and not m["judge"]:
            print(f"  {profile_of_task(m['task']).label:>34} {m['metric']:<16} {m['value']:.3f} "
                  f"[{m['ci_low']:.3f}, {m['ci_high']:.3f}] n={m['n']}", flush=True)
    # one judge per profile (never across the two prompt formats), the released network by default
    result = run_hidden_judge(asked, responses, backend, model="smollm2-135m", params=params, seed=seed,
                              max_statements=None, timing_statements=8, network=network)
    print(json.dumps(result.summary, indent=1), flush=True)
    for m in result.metrics:
        if not m["breakdown"] and m["metric"].startswith("judge_") and m["interval"] != "measured":
            print(f"  {profile_of_task(m['task']).name:>8} {m['judge']:>15} {m['metric']:<18} {m['value']:.3f} "
                  f"[{m['ci_low']:.3f}, {m['ci_high']:.3f}] n={m['n']}")
    for name, s in result.summary["profiles"].items():
        print(f"  {name} profile: judge agreement {s['agreed']}/{s['heldout_classed']}, baseline "
              f"{s['baseline_agreed']}/{s['heldout_classed']} ({s['baseline_class']}); macro F1 {s['f1']:.2f} vs "
              f"{s['baseline_f1']:.2f}: " + ("beats" if s["beats_baseline"] else "does NOT beat") + " its baseline")
    return result.summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-statements", action="store_true")
    parser.add_argument("--skip-judge", action="store_true")
    parser.add_argument("--judge-groups", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--network", choices=("paper", "relu256"), default="paper")
    args = parser.parse_args()
    if not args.skip_statements:
        statements(args.data, args.k, args.seed, args.repeats)
        codex(args.data, args.k, args.seed)
    if not args.skip_judge:
        judge(args.judge_groups, args.seed, args.threads, network=args.network)


if __name__ == "__main__":
    main()
