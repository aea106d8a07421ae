"""Scale benchmark: ingest, subgraph retrieval and KG-FPQ edits and questions on a synthetic KG of up to 10M triples.

    python benchmarks/scale.py [--triples 1000000 10000000] [--queries 1000] [--fpq 15000] [--fanout-cap 100]

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
* ``fpq-questions``: from those true triples and edits, ``FPQSuite().items``, as the ``fpq_items`` asset calls it,
  with the suite's default settings (Yes-No and WH) and a template per relation drawn, written by the stage (the
  premise check is left out: see the stage).

The table gives seconds, throughput and peak RSS per stage and size, and, with two sizes, how the time grew against
how the data grew (linear scaling: the two ratios are equal). Goals: peak RSS under 8 GB, ingest >= 1M triples/s.
An exact hop search of one subject spans the KG (its 5-hop ball holds about half the entities), so exact edits cost
distinct subjects times KG size. Above 2M adjacency entries (64 times ``suites.fpq.search_budget``) ``edit`` bounds the
search per subject instead: the ball grows level by level within the budget, and the candidates beyond it are
seeded uniform draws from the method's pool whose hops are verified by a bounded search back from each
(docs/suites/fpq.md), so the time per subject stays nearly flat; below, the batched exact BFS is the cheaper. The
same number of true triples drawn from a larger KG has more distinct subjects: the stage prints both, and the time
per distinct subject.
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
    _save_fpq(out, chosen, edits)  # for the fpq-questions stage, after the clock
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


# ---- stage: fpq-questions


def _save_fpq(out: Path, chosen: list, edits: list) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([t.as_row() for t in chosen]), out / "fpq_true_triples.parquet")
    pq.write_table(pa.Table.from_pylist([e.as_row() for e in edits]), out / "fpq_edits.parquet")


def _fpq_questions(out: Path, n_true: int, seed: int) -> dict[str, Any]:
    """KG-FPQ's questions from the ``fpq`` stage's true triples and edits (made here, untimed, when that stage did not
    run): ``FPQSuite().items`` as the ``fpq_items`` asset calls it, with the suite's default settings (both formats)
    and a yn / wh template per relation drawn. The synthetic KG has no labels (an entity's label is its key), so, as
    with ``require_labels: false``, no edit is rejected for an unreadable name. The ``fpq_edits`` asset's premise
    check (``check_premises``) is left out: on the 1M-triple KG its ``subject_neighbours`` query (6,022 subjects)
    never returned (DuckDB 1.5.6, idle, not busy), with 3,000 subjects it takes 0.1 s; a finding to fix apart."""
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kgprobe.suites.base import ItemSource
    from kgprobe.suites.fpq.edits import Edit
    from kgprobe.suites.fpq.settings import FPQSettings
    from kgprobe.suites.fpq.suite import FPQSuite

    if not (out / "fpq_edits.parquet").exists():
        _fpq(out, n_true, seed)
    con = duckdb.connect(str(out / "kg.duckdb"), read_only=True)
    true_triples = pq.read_table(out / "fpq_true_triples.parquet")
    edit_rows = pq.read_table(out / "fpq_edits.parquet").to_pylist()
    keys = sorted(set(true_triples.column("relation_key").to_pylist()))
    templates = out / "fpq_templates.yaml"
    templates.write_text("".join(f'{k}:\n  yn: "Is {{object}} the {k} of {{subject}}?"\n'
                                 f'  wh: "Why is {{object}} the {k} of {{subject}}?"\n' for k in keys), encoding="utf-8")
    settings = FPQSettings.model_validate({"kg": "synthetic", "domains": FPQ_DOMAINS, "templates": str(templates)})
    fields = Edit.__dataclass_fields__
    start, cpu = time.perf_counter(), _cpu()
    edits = [Edit(**{k: (tuple(tuple(t) for t in v) if k == "path" and v is not None else v)
                     for k, v in r.items() if k in fields}) for r in edit_rows]
    edits_table = pa.Table.from_pylist([e.as_row() for e in edits])
    source = ItemSource(con=con, kg="synthetic", snapshot_id="scale", settings=settings, seed=seed,
                        upstream={"fpq_true_triples": true_triples, "fpq_edits": edits_table})
    result = FPQSuite().items(source)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    n_items = result.items.num_rows
    rejected = sum(1 for e in edits if e.false_object is None)
    return {
        "seconds": seconds, "cpu": cpu, "rate": n_items / seconds, "unit": "questions/s",
        "note": f"{len(edits):,} edits ({rejected:,} without a false object), "
                f"{n_items:,} questions (yn + wh) and {result.rejects.num_rows:,} rejects from "
                f"{true_triples.num_rows:,} true triples over {len(keys)} relations",
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
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None, help="where the synthetic files go (default: a temporary folder)")
    ap.add_argument("--stages", default="ingest,ingest+types,subgraph,fpq,fpq-questions", help="comma-separated stages to run")
    args = ap.parse_args(argv)
    stages = args.stages.split(",")
    unknown = set(stages) - {"ingest", "ingest+types", "subgraph", "fpq", "fpq-questions"}
    if unknown:
        ap.error(f"unknown stages {sorted(unknown)}")
    root = args.workdir or Path(tempfile.mkdtemp(prefix="kgprobe-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    results: dict[int, dict[str, dict[str, Any]]] = {}
    widths = [10, 14, 9, 9, 12, 16, 10, 0]
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
                ("fpq-questions", _fpq_questions, (out, args.fpq, args.seed)),
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
                print(f"  {name:<13} {b['seconds'] / a['seconds']:5.1f}x the time, {b['cpu'] / a['cpu']:5.1f}x the CPU time, "
                      f"{b['peak_mib'] / a['peak_mib']:4.1f}x the peak RSS")
                if "per_subject" in a and "per_subject" in b:
                    print(f"  {'':<13} {b['subjects'] / a['subjects']:5.1f}x the distinct subjects, "
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
