"""Scale benchmark: ingest, subgraph retrieval, KG-FPQ edits, OKGQA retrieval and perturbations on a synthetic KG.

    python benchmarks/scale.py [--triples 1000000 10000000] [--queries 1000] [--fpq 15000] [--fanout-cap 100]
        [--retrieval-questions 10] [--scorer-steps 20] [--perturb-subgraphs 100] [--stages ingest,...]

For each size a synthetic KG is written as Parquet (string keys, as a dump would have them) with a realistic
degree skew: subjects and objects are drawn from power laws over the entities (Zipf exponents 0.8 and 1.05; one
entity per five triples), so that a few hub objects have 100k+ edges at 10M triples, and relations from a power
law over 500 relation keys. Every entity has one type (a power law over 50 types), in a TSV side file. Then, each
stage in a fresh child process so that its peak RSS (max resident set size, imports included) is its own:

* ``ingest``: ``load_kg`` of the Parquet triples into a new DuckDB file (the goal: >= 1M triples/s; DuckDB's
  one-time import of pandas on its first Python parameter is done before the clock starts);
* ``ingest + types``: the same with the entity-types side file, the KG the next stages read;
* ``subgraph``: ``--queries`` two-seed queries (seeds drawn with ``--seed``), 2-hop ``iter_khop_batch`` with the
  fan-out cap, then ``ppr_prune_batch`` on each chunk, as the ``khop_subgraphs`` / ``ppr_subgraphs`` assets call them;
* ``fpq``: ``select_true_triples`` of ``--fpq`` true triples over three domains (three types), then ``edit`` with the
  six methods and 5 hops (the project defaults), as the ``fpq_true_triples`` / ``fpq_edits`` assets call them;
* ``okgqa-retrieval``: triplet, path and PCST retrieval (``GraphRetriever.retrieve``, default ``RetrievalConfig``,
  the bundled all-MiniLM-L6-v2 embedder on CPU, loaded before the clock starts) for ``--retrieval-questions``
  questions, each on its PPR-pruned subgraph (the subgraph stage's first queries, built untimed), as
  ``OKGQASuite.grounded_context`` calls it: bounded, a fixed number of questions;
* ``scorer``: the ``triple_scorer`` asset's training measured per step: every triple read as the asset reads them,
  then ``train_scorer`` (default ``TrainConfig``) for ``--scorer-steps`` steps of the full-size model; the epoch
  (triples / 256 steps) is extrapolated from the step. Adam updates the whole entity table at every step, so the
  step grows with the entities and the epoch with triples x entities: not linear (see the scaling lines);
* ``perturb``: RS, RR, ER and ED at levels 0.1, 0.5 and 1.0 (and the clean ``none`` partition) of
  ``--perturb-subgraphs`` PPR-pruned subgraphs (``perturb_subgraphs``, 64 at a time), then ATS, SC2D and SD2 of
  each against its original (``similarity_batch``, one call per partition), as the ``perturbed_subgraphs`` /
  ``kg_similarity`` assets compute them, with an untrained scorer of the default shape (scoring costs the same):
  bounded, a fixed number of subgraphs.

The table gives seconds, throughput and peak RSS per stage and size, and, with two sizes, how the time grew against
how the data grew (linear scaling: the two ratios are equal). Goals: peak RSS under 8 GB, ingest >= 1M triples/s.
The edits take one BFS row per distinct subject, and each row spans the KG, so their work is distinct subjects times
KG size; the same number of true triples drawn from a larger KG has more distinct subjects, and the stage prints
both, and the time per distinct subject.
Times on a busy machine are noisy: CPU seconds (user + system, all threads) are printed beside wall-clock seconds,
and the ratios between sizes, measured in one run, are what to compare.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import resource
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

N_RELATIONS = 500
N_TYPES = 50
TRIPLES_PER_ENTITY = 5
HEAD_EXPONENT, TAIL_EXPONENT, RELATION_EXPONENT, TYPE_EXPONENT = 0.8, 1.05, 1.0, 1.0
FPQ_DOMAINS = {"domain_a": ["T3"], "domain_b": ["T7"], "domain_c": ["T12"]}


def _peak_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _zipf(rng: np.random.Generator, n_items: int, exponent: float, size: int) -> np.ndarray:
    """``size`` draws of ranks 0..n_items-1 with P(rank k) proportional to (k + 1) ** -exponent."""
    cdf = np.cumsum(np.arange(1, n_items + 1, dtype=np.float64) ** -exponent)
    return np.minimum(np.searchsorted(cdf, rng.random(size) * cdf[-1], side="right"), n_items - 1)


# ---------------------------------------------------------------- stages (each runs in its own child process)


def _generate(out: Path, n_triples: int, seed: int) -> dict[str, Any]:
    """Write ``triples.parquet`` and ``types.tsv``; return sizes and the largest degrees."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    n_entities = max(1_000, n_triples // TRIPLES_PER_ENTITY)
    entity_of_rank = rng.permutation(n_entities)  # hubs get arbitrary keys, not the first ones
    heads = entity_of_rank[_zipf(rng, n_entities, HEAD_EXPONENT, n_triples)]
    tails = entity_of_rank[_zipf(rng, n_entities, TAIL_EXPONENT, n_triples)]
    rels = _zipf(rng, N_RELATIONS, RELATION_EXPONENT, n_triples)
    entity_keys = pa.array([f"Q{i}" for i in range(n_entities)], pa.string())
    relation_keys = pa.array([f"P{i}" for i in range(N_RELATIONS)], pa.string())
    table = pa.table({
        "head": pa.DictionaryArray.from_arrays(pa.array(heads, pa.int32()), entity_keys),
        "relation": pa.DictionaryArray.from_arrays(pa.array(rels, pa.int32()), relation_keys),
        "tail": pa.DictionaryArray.from_arrays(pa.array(tails, pa.int32()), entity_keys),
    })
    pq.write_table(table, out / "triples.parquet", row_group_size=1 << 20)
    types = _zipf(rng, N_TYPES, TYPE_EXPONENT, n_entities)
    with open(out / "types.tsv", "w", encoding="utf-8") as fh:
        fh.write("entity\ttype\n")
        fh.write("".join(f"Q{i}\tT{t}\n" for i, t in enumerate(types.tolist())))
    degree = np.bincount(heads, minlength=n_entities) + np.bincount(tails, minlength=n_entities)
    top = np.sort(degree)[::-1]
    return {
        "entities": n_entities,
        "parquet_mb": (out / "triples.parquet").stat().st_size / 1e6,
        "max_degree": int(top[0]),
        "hubs_100k": int((top >= 100_000).sum()),
        "median_degree": float(np.median(degree)),
    }


def _ingest(out: Path, with_types: bool) -> dict[str, Any]:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    db = out / ("kg.duckdb" if with_types else "kg_triples_only.duckdb")
    db.unlink(missing_ok=True)
    source = KGSource(triples=out / "triples.parquet", format="parquet", entity_types=out / "types.tsv" if with_types else None)
    con = duckdb.connect(str(db))
    # DuckDB imports pandas on its first Python parameter (about 0.25 s, once per process): done before the clock
    # starts, as benchmarks/ingest.py warms up each tool, so that what is timed is the load
    con.execute("SELECT $x", {"x": 1}).fetchall()
    start, cpu = time.perf_counter(), _cpu()
    report = load_kg(con, source)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    con.close()
    if not with_types:
        db.unlink()
    return {
        "seconds": seconds, "cpu": cpu, "rate": report.read / seconds, "unit": "triples/s",
        "note": f"read {report.read:,}, loaded {report.loaded:,}, duplicates {report.duplicates:,}, "
                f"{report.entities:,} entities, {report.entity_types:,} typed",
    }


def _subgraph(out: Path, n_queries: int, fanout_cap: int, seed: int) -> dict[str, Any]:
    import duckdb

    from kgprobe.kg.graph import iter_khop_batch, ppr_prune_batch

    con = duckdb.connect(str(out / "kg.duckdb"), read_only=True)
    n_entities = con.execute("SELECT count(*) FROM entities").fetchone()[0]
    rng = random.Random(seed)
    queries = {f"q{i:04d}": rng.sample(range(n_entities), 2) for i in range(n_queries)}
    nodes_before = nodes_after = triples_before = capped = 0
    start, cpu = time.perf_counter(), _cpu()
    for chunk in iter_khop_batch(con, queries, 2, fanout_cap=fanout_cap, seed=seed):
        keys = list(chunk)
        for i in range(0, len(keys), 64):  # the ppr_subgraphs asset prunes 64 queries at a time
            part = {k: chunk[k] for k in keys[i : i + 64]}
            pruned = ppr_prune_batch(part, {k: queries[k] for k in part}, 1e-5)
            nodes_before += sum(len(s.nodes) for s in part.values())
            triples_before += sum(len(s.triples) for s in part.values())
            capped += sum(s.capped_nodes for s in part.values())
            nodes_after += sum(len(s.nodes) for s in pruned.values())
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    return {
        "seconds": seconds, "cpu": cpu, "rate": n_queries / seconds, "unit": "queries/s",
        "note": f"mean {nodes_before / n_queries:,.0f} nodes / {triples_before / n_queries:,.0f} triples per 2-hop "
                f"subgraph, {nodes_after / n_queries:,.0f} nodes after PPR; {capped / n_queries:,.1f} capped nodes/query",
    }


def _fpq(out: Path, n_true: int, seed: int) -> dict[str, Any]:
    import duckdb

    from kgprobe.suites.fpq.edits import (
        ALL_METHODS,
        DomainSpec,
        edit,
        select_true_triples,
    )

    con = duckdb.connect(str(out / "kg.duckdb"), read_only=True)
    domains = {name: DomainSpec(types=types) for name, types in FPQ_DOMAINS.items()}
    start, cpu = time.perf_counter(), _cpu()
    chosen = select_true_triples(con, domains, -(-n_true // len(domains)), seed=seed)[:n_true]
    selected = time.perf_counter() - start
    edits = edit(con, [t.triple for t in chosen], methods=ALL_METHODS, max_hops=5, seed=seed)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    found = sum(1 for e in edits if e.false_object is not None)
    # the edits share one BFS row per distinct subject, and each row spans the KG: the work is subjects x KG size
    subjects = len({t.triple[0] for t in chosen})
    return {
        "seconds": seconds, "cpu": cpu, "rate": len(chosen) / seconds, "unit": "true triples/s",
        "per_subject": (seconds - selected) / max(subjects, 1), "subjects": subjects,
        "note": f"{len(chosen):,} true triples chosen in {selected:.1f} s, {len(edits):,} edits "
                f"({found / max(len(edits), 1):.0%} found a false object) in {seconds - selected:.1f} s; "
                f"{subjects:,} distinct subjects, {1000 * (seconds - selected) / max(subjects, 1):.1f} ms each",
    }


# ---- stage: shared by okgqa-retrieval and perturb


def _pruned_subgraphs(con: Any, n_queries: int, fanout_cap: int, seed: int) -> tuple[dict[str, Any], dict[str, list[int]], float]:
    """``n_queries`` two-seed PPR-pruned subgraphs as the subgraph stage builds them (its first queries, same seeds):
    2-hop ``iter_khop_batch`` with the fan-out cap, then ``ppr_prune_batch``; also the seconds that took."""
    from kgprobe.kg.graph import iter_khop_batch, ppr_prune_batch

    n_entities = con.execute("SELECT count(*) FROM entities").fetchone()[0]
    rng = random.Random(seed)
    queries = {f"q{i:04d}": rng.sample(range(n_entities), 2) for i in range(n_queries)}
    start = time.perf_counter()
    pruned: dict[str, Any] = {}
    for chunk in iter_khop_batch(con, queries, 2, fanout_cap=fanout_cap, seed=seed):
        pruned.update(ppr_prune_batch(chunk, {k: queries[k] for k in chunk}, 1e-5))
    return pruned, queries, time.perf_counter() - start


# ---- stage: okgqa-retrieval


def _okgqa_retrieval(out: Path, n_questions: int, fanout_cap: int, seed: int) -> dict[str, Any]:
    """G-retrieval (triplets, paths, PCST subgraph) of ``n_questions`` questions, each on its PPR-pruned subgraph,
    as ``OKGQASuite.grounded_context`` calls ``GraphRetriever.retrieve`` (default ``RetrievalConfig``, the bundled
    all-MiniLM-L6-v2 embedder on CPU, labels from the warehouse). Bounded: the cost is that of the questions'
    subgraphs, not of the KG. The model's load (one warm-up text) is not timed; the subgraphs' extraction is timed
    apart (the note)."""
    import duckdb

    from kgprobe.embedding import Embedder
    from kgprobe.grounding.retrieval import RETRIEVAL_METHODS, GraphRetriever, RetrievalConfig

    con = duckdb.connect(str(out / "kg.duckdb"), read_only=True)
    subs, queries, sub_seconds = _pruned_subgraphs(con, n_questions, fanout_cap, seed)
    ids = sorted({n for s in subs.values() for n in s.nodes})
    con.register("_ids", __import__("pyarrow").table({"id": ids}))
    entity_labels = dict(con.execute("SELECT e.id, e.label FROM entities e SEMI JOIN _ids i ON i.id = e.id").fetchall())
    relation_labels = dict(con.execute("SELECT id, label FROM relations").fetchall())
    embedder = Embedder()
    embedder.embed(["warm-up"])  # loads the model: a one-time cost per process
    retriever = GraphRetriever(embedder, entity_labels, relation_labels, config=RetrievalConfig())
    start, cpu = time.perf_counter(), _cpu()
    texts = 0
    for qid, sub in subs.items():
        a, b = (entity_labels.get(s, str(s)) for s in queries[qid])
        question = f"What is the relationship between {a} and {b}?"
        for method in RETRIEVAL_METHODS:
            texts += len(retriever.retrieve(question, list(sub.triples), method).text)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    mean_triples = sum(len(s.triples) for s in subs.values()) / max(len(subs), 1)
    return {
        "seconds": seconds, "cpu": cpu, "rate": len(subs) / seconds, "unit": "questions/s",
        "retrievals": len(subs) * len(RETRIEVAL_METHODS), "context_chars": texts,
        "note": f"{len(subs)} questions x {len(RETRIEVAL_METHODS)} methods on PPR subgraphs of {mean_triples:,.0f} "
                f"triples on average; {embedder.encoded:,} texts embedded; the subgraphs took {sub_seconds:.1f} s (not counted)",
    }


# ---- stage: scorer


def _scorer(out: Path, steps: int, seed: int) -> dict[str, Any]:
    """The ``triple_scorer`` asset's work, measured per optimiser step: every KG triple read from the warehouse as the
    asset reads them, then ``train_scorer`` with the default ``TrainConfig`` (DistMult, dim 200, ``balanced``, batch
    256, Adam) for one epoch over ``steps`` batches of triples drawn with ``seed`` but with the KG's entity and
    relation counts. A step's cost is that of the full-size model: Adam updates the whole entity table at every
    step, so it grows with the entities, and an epoch has triples / 256 steps: the epoch, extrapolated from the
    measured step, grows with triples x entities (quadratically). The default trains 7 epochs."""
    import duckdb

    from kgprobe.grounding.scorer import TrainConfig, train_scorer

    con = duckdb.connect(str(out / "kg.duckdb"), read_only=True)
    start, cpu = time.perf_counter(), _cpu()
    triples = np.asarray(con.execute("SELECT head, relation, tail FROM triples").fetchall(), dtype=np.int64)
    n_ent = con.execute("SELECT count(*) FROM entities").fetchone()[0]
    n_rel = con.execute("SELECT count(*) FROM relations").fetchone()[0]
    read, read_cpu = time.perf_counter() - start, _cpu() - cpu
    config = TrainConfig(epochs=1, seed=seed, device="cpu")
    rows = np.random.default_rng(seed).choice(len(triples), min(len(triples), steps * config.batch_size), replace=False)
    train_start, train_cpu = time.perf_counter(), _cpu()
    train_scorer(triples[rows], n_ent, n_rel, config)
    train, train_cpu = time.perf_counter() - train_start, _cpu() - train_cpu
    n_steps = -(-len(rows) // config.batch_size)
    per_step, per_step_cpu = train / n_steps, train_cpu / n_steps
    epoch_steps = -(-len(triples) // config.batch_size)
    epoch, epoch_cpu = epoch_steps * per_step, epoch_steps * per_step_cpu
    default = TrainConfig().epochs
    return {
        "seconds": read + train, "cpu": read_cpu + train_cpu, "rate": n_steps * config.batch_size / train, "unit": "triples/s",
        "per_step": per_step, "steps": n_steps, "epoch_steps": epoch_steps, "epoch": epoch, "epoch_cpu": epoch_cpu,
        "note": f"{len(triples):,} triples read in {read:.1f} s; {n_steps} steps of {1000 * per_step:,.0f} ms "
                f"({1000 * per_step_cpu:,.0f} ms CPU) with {n_ent:,} entities; an epoch ({epoch_steps:,} steps) "
                f"extrapolates to {epoch:,.0f} s ({epoch_cpu:,.0f} s CPU), the default {default} epochs to "
                f"{read + default * epoch:,.0f} s",
    }


# ---- stage: perturb


def _perturb(out: Path, n_subgraphs: int, fanout_cap: int, seed: int) -> dict[str, Any]:
    """RS, RR, ER and ED at levels 0.1, 0.5 and 1.0 of ``n_subgraphs`` PPR-pruned subgraphs (and the clean ``none``
    partition, as ``perturbation_keys`` lists the pipeline's partitions), then ATS, SC2D and SD2
    of each perturbed subgraph against its original, as the ``perturbed_subgraphs`` (``perturb_subgraphs``, 64
    subgraphs per call) and ``kg_similarity`` (``similarity_batch``, denominator ``own``) assets compute them.
    RR and ATS use an untrained scorer of the default shape (0 epochs: scoring costs the same). Bounded: the cost is
    that of the subgraphs, not of the KG."""
    import duckdb

    from kgprobe.grounding.perturb import METHODS, perturbation_keys, similarity_batch
    from kgprobe.grounding.perturb_store import perturb_subgraphs
    from kgprobe.grounding.scorer import TrainConfig, train_scorer

    con = duckdb.connect(str(out / "kg.duckdb"), read_only=True)
    subs, _, sub_seconds = _pruned_subgraphs(con, n_subgraphs, fanout_cap, seed)
    n_ent = con.execute("SELECT count(*) FROM entities").fetchone()[0]
    n_rel = con.execute("SELECT count(*) FROM relations").fetchone()[0]
    one = np.asarray([con.execute("SELECT head, relation, tail FROM triples LIMIT 1").fetchone()], dtype=np.int64)
    # scoring costs the same whatever the weights: an untrained scorer of the default shape stands in for s_G
    scorer = train_scorer(one, n_ent, n_rel, TrainConfig(epochs=0, seed=seed, device="cpu"))
    keys = perturbation_keys(METHODS, (0.1, 0.5, 1.0))
    start, cpu = time.perf_counter(), _cpu()
    original = {qid: list(sub.triples) for qid, sub in subs.items()}
    names = list(subs)
    perturb_seconds = 0.0
    rows = 0
    for key in keys:
        t0 = time.perf_counter()
        tables = [perturb_subgraphs({q: subs[q] for q in names[i : i + 64]}, key, seed=seed, scorer=scorer)
                  for i in range(0, len(names), 64)]
        perturb_seconds += time.perf_counter() - t0
        # kg_similarity: one similarity_batch per perturbation partition, each original the same object throughout
        pairs = [(original[r["query_id"]], [(t["head"], t["relation"], t["tail"]) for t in r["triples"]])
                 for table in tables for r in table.select(["query_id", "triples"]).to_pylist()]
        similarity_batch(pairs, scorer=scorer, denominator="own")
        rows += len(pairs)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    mean_triples = sum(len(t) for t in original.values()) / max(len(original), 1)
    return {
        "seconds": seconds, "cpu": cpu, "rate": rows / seconds, "unit": "subgraphs/s", "perturbed": rows,
        "note": f"{len(subs)} subgraphs ({mean_triples:,.0f} triples on average) x {len(keys)} perturbations: "
                f"perturbing {perturb_seconds:.1f} s, ATS/SC2D/SD2 {seconds - perturb_seconds:.1f} s (an untrained scorer); "
                f"the subgraphs took {sub_seconds:.1f} s (not counted)",
    }


def _child(fn: Callable[..., dict[str, Any]], args: tuple, q: mp.Queue) -> None:
    try:
        result = fn(*args)
        result["peak_mib"] = _peak_mib()
        q.put(result)
    except BaseException as exc:  # noqa: BLE001 - reported by the parent
        q.put({"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc(), "peak_mib": _peak_mib()})


def _run(fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Run ``fn(*args)`` in a fresh process; its result plus the process's peak RSS, or what went wrong."""
    ctx = mp.get_context("spawn")
    q: mp.Queue = ctx.Queue()
    p = ctx.Process(target=_child, args=(fn, args, q))
    p.start()
    while p.is_alive() and q.empty():
        p.join(0.5)
    result = q.get() if not q.empty() else {"error": f"the process died (exit code {p.exitcode}; out of memory?)"}
    p.join()
    return result


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.ljust(w) if i in (0, 1, 5, 7) else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--triples", type=int, nargs="+", default=[1_000_000, 10_000_000], help="KG sizes (default 1M and 10M)")
    ap.add_argument("--queries", type=int, default=1_000, help="two-seed subgraph queries (default 1000)")
    ap.add_argument("--fpq", type=int, default=15_000, help="true triples to edit (default 15000)")
    ap.add_argument("--fanout-cap", type=int, default=100, help="edges followed per node and hop (default 100)")
    ap.add_argument("--retrieval-questions", type=int, default=10,
                    help="questions whose subgraphs okgqa-retrieval searches (default 10)")
    ap.add_argument("--scorer-steps", type=int, default=20,
                    help="optimiser steps the scorer stage times, an epoch extrapolated from them (default 20)")
    ap.add_argument("--perturb-subgraphs", type=int, default=100, help="subgraphs the perturb stage perturbs (default 100)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None, help="where the synthetic files go (default: a temporary folder)")
    ap.add_argument("--stages", default="ingest,ingest+types,subgraph,fpq,okgqa-retrieval,scorer,perturb",
                    help="comma-separated stages to run")
    args = ap.parse_args(argv)
    stages = args.stages.split(",")
    unknown = set(stages) - {"ingest", "ingest+types", "subgraph", "fpq", "okgqa-retrieval", "scorer", "perturb"}
    if unknown:
        ap.error(f"unknown stages {sorted(unknown)}")
    root = args.workdir or Path(tempfile.mkdtemp(prefix="kgprobe-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    results: dict[int, dict[str, dict[str, Any]]] = {}
    widths = [10, 16, 9, 9, 12, 16, 10, 0]
    header = ["triples", "stage", "seconds", "CPU s", "throughput", "", "peak RSS", "notes"]
    try:
        for n in args.triples:
            out = root / f"kg-{n}"
            out.mkdir(exist_ok=True)
            gen = _run(_generate, out, n, args.seed)
            if "error" in gen:
                print(f"{n:,} triples: generation failed: {gen['error']}", file=sys.stderr)
                return 1
            print(f"\n{n:,} triples: {gen['entities']:,} entities, {gen['parquet_mb']:.0f} MB Parquet; largest degree "
                  f"{gen['max_degree']:,}, {gen['hubs_100k']} entities with 100k+ edges, median degree {gen['median_degree']:.0f}")
            print(_row(header, widths))
            results[n] = {}
            plan: list[tuple[str, Callable[..., dict[str, Any]], tuple]] = [
                ("ingest", _ingest, (out, False)),
                ("ingest+types", _ingest, (out, True)),
                ("subgraph", _subgraph, (out, args.queries, args.fanout_cap, args.seed)),
                ("fpq", _fpq, (out, args.fpq, args.seed)),
                ("okgqa-retrieval", _okgqa_retrieval, (out, args.retrieval_questions, args.fanout_cap, args.seed)),
                ("scorer", _scorer, (out, args.scorer_steps, args.seed)),
                ("perturb", _perturb, (out, args.perturb_subgraphs, args.fanout_cap, args.seed)),
            ]
            for name, fn, fargs in plan:
                if name not in stages:
                    continue
                r = _run(fn, *fargs)
                results[n][name] = r
                if "error" in r:
                    print(_row([f"{n:,}", name, "-", "-", "-", "", f"{r['peak_mib']:,.0f} MiB" if "peak_mib" in r else "-",
                                f"FAILED: {r['error']}"], widths))
                    if "trace" in r:
                        print(r["trace"], file=sys.stderr)
                    continue
                print(_row([f"{n:,}", name, f"{r['seconds']:.1f}", f"{r['cpu']:.1f}", f"{r['rate']:,.0f}", r["unit"],
                            f"{r['peak_mib']:,.0f} MiB", r["note"]], widths), flush=True)
            if args.workdir is None:
                shutil.rmtree(out, ignore_errors=True)
    finally:
        if args.workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    sizes = sorted(results)
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        print(f"\nscaling {small:,} -> {large:,} triples ({large / small:g}x the data):")
        for name in stages:
            a, b = results[small].get(name, {}), results[large].get(name, {})
            if "seconds" in a and "seconds" in b:
                print(f"  {name:<15} {b['seconds'] / a['seconds']:5.1f}x the time, {b['cpu'] / a['cpu']:5.1f}x the CPU time, "
                      f"{b['peak_mib'] / a['peak_mib']:4.1f}x the peak RSS")
                if "epoch" in a and "epoch" in b:
                    print(f"  {'':<15} {b['per_step'] / a['per_step']:5.1f}x the time per training step, "
                          f"{b['epoch'] / a['epoch']:5.1f}x the extrapolated epoch ({b['epoch_cpu'] / a['epoch_cpu']:5.1f}x in CPU)")
                if "per_subject" in a and "per_subject" in b:
                    print(f"  {'':<15} {b['subjects'] / a['subjects']:5.1f}x the distinct subjects, "
                          f"{b['per_subject'] / a['per_subject']:5.1f}x the edit time per distinct subject")
    peak = max((r.get("peak_mib", 0) for per in results.values() for r in per.values()), default=0)
    ingest = [per["ingest"]["rate"] for per in results.values() if "rate" in per.get("ingest", {})]
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"peak RSS of any stage {peak:,.0f} MiB (goal < 8 GB)"
          + (f"; ingest {min(ingest):,.0f} triples/s at the slowest (goal >= 1M/s)" if ingest else ""))
    failed = [f"{n:,} {name}" for n, per in results.items() for name, r in per.items() if "error" in r]
    if failed:
        print(f"failed stages: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
