"""Scale benchmark: every stage the five suites run, and a project's init and prepare job, on a synthetic KG.

    python benchmarks/scale.py [--triples 1000000 5000000 20000000] [--queries 1000] [--fpq 15000] [--fanout-cap 100]
        [--erbench-rows 1000000] [--retrieval-questions 10] [--scorer-steps 100] [--perturb-subgraphs 100]
        [--stages all | ingest,ingest+types,...] [--workdir DIR]

For each size a synthetic KG is written as Parquet (string keys, as a dump would have them) with a realistic
degree skew: subjects and objects are drawn from power laws over the entities (Zipf exponents 0.8 and 1.05; one
entity per five triples), so that a few hub objects have 100k+ edges at 10M triples, and relations from a power
law over 500 relation keys. Side files, all deterministic from ``--seed`` and proportional to the KG:
``types.tsv`` (every entity one type, a power law over 50 real class names: human, city, film, event, ...),
``entity_labels.tsv`` (two pseudo-words per entity, "Karo Velinstra", from 2,000 words: labels repeat, about 3% of
the entities at 1M triples, 12% at 5M), ``relation_labels.tsv`` (a phrase per relation key: "place of birth",
"former member of", ...) and ``temporal.tsv`` (5% of the triples dated, ``head relation tail start end``, starts
1800-2019; relations of key rank divisible by 3 are events, ending in their start year, the others spans of 1-40
years, one in ten with an unknown end ``####``). The relations whose labels kgprobe reads as containment ("located
in", "part of", "has part", "contains": ``containment_relations``, about 3% of the triples) are a hierarchy, as in a
real KG: each triple's outer end is the inner end's parent (the entity of rank (rank - 1) // 8), not a power-law
draw; as random graphs with hubs, their 3-hop closure (Drowzee's negation check) grew faster than the KG. Then,
each stage in a fresh child process so that its peak RSS (max resident set size, imports included) is its own:

* ``ingest``: ``load_kg`` of the Parquet triples into a new DuckDB file (the goal: >= 1M triples/s; DuckDB's
  one-time import of pandas on its first Python parameter is done before the clock starts);
* ``ingest + types``: the same with every side file (types, entity and relation labels, dated facts), the KG the
  next stages read;
* ``subgraph``: ``--queries`` two-seed queries (seeds drawn with ``--seed``), 2-hop ``iter_khop_batch`` with the
  fan-out cap, then ``ppr_prune_batch`` on each chunk, as the ``khop_subgraphs`` / ``ppr_subgraphs`` assets call them;
* ``fpq``: ``select_true_triples`` of ``--fpq`` true triples over three domains (three types), then ``edit`` with the
  six methods and 5 hops (the project defaults), as the ``fpq_true_triples`` / ``fpq_edits`` assets call them;
* ``checks``: the ``kg`` asset's checks (``kg_summary``, ``dangling_ids``) and the label checks of every items asset
  (``label_report``, ``unreadable_names``);
* ``grapheval``: the ``grapheval_items`` asset's work with the default settings (profile paper, ``positives``
  null): ``GraphEvalSuite.items`` states every triple of the KG with a verified negative each, and
  ``store_items`` writes them as the items partition (in a folder of the workdir). Up to ``stream_items_above``
  (1M) items the suite returns one table (two statements a triple at about 790 bytes each: 1.45 GB at 1M triples);
  above it a stream the store writes a chunk at a time, so the stage's memory is the draw's arrays, not the items;
* ``drowzee``: ``DrowzeeSuite.items`` with the default ``per_rule`` / ``n_formulas``: the six rules (negation over
  the relations the data show to be functional; symmetric, transitive, inverse, composition and same over the
  largest relations by triple count, which the stage names in the settings) and the temporal formulas over the
  dated facts. A user would not name these random relations (``kgprobe init`` proposes a transitive relation only
  when the data closes its paths): the stage is the worst case, hub entities with 10^7+ two-step paths, which the
  rules and the proposals read from a seeded sample of subjects above their path budget (docs/suites/drowzee.md);
* ``okgqa-questions``: ``template_questions`` with the default ``per_template``, as the ``okgqa_question_bank``
  asset calls it;
* ``erbench``: ERBench on a ``--erbench-rows`` table (benchmarks/erbench.py's synthetic one, six columns and three
  FDs), the same whatever the KG's size: ``load_erdb`` and ``ERBenchSuite.items`` with the default settings (every
  record: 9 items per row);
* ``claims-index``: the claim checker's index of the whole KG (``KGFacts.from_duckdb``), its relation phrase file
  (``relation_file``: every relation's phrase set and single-valued verdict) and the name index its first
  ``check_fact`` builds; the per-relation counts and the by-head and role indexes are built from the triples as
  arrays (NumPy sorts, sparse products), linear in the KG.
* ``fpq-questions``: from those true triples and edits, ``FPQSuite().items``, as the ``fpq_items`` asset calls it,
  with the suite's default settings (Yes-No and WH) and a template per relation drawn, written by the stage, after
  the ``fpq_edits`` asset's premise check (``check_premises``).
* ``okgqa-retrieval``: triplet, path and PCST retrieval (``GraphRetriever.retrieve``, default ``RetrievalConfig``,
  the bundled all-MiniLM-L6-v2 embedder on CPU, loaded before the clock starts) for ``--retrieval-questions``
  questions, each on its PPR-pruned subgraph (the subgraph stage's first queries, built untimed), as
  ``OKGQASuite.grounded_context`` calls it: bounded, a fixed number of questions;
* ``scorer``: the ``triple_scorer`` asset's training: by default (``perturbation.scorer_train_on: subgraphs``, as
  the OKGQA authors' released code) on the union of ``--scorer-subgraphs`` PPR-pruned subgraphs, 7 epochs: bounded
  by the queries. Beside it the ``kg`` setting per step: every triple read as the asset reads them, then
  ``train_scorer`` for ``--scorer-steps`` and twice as many steps of the full-size model, the step their
  difference; the epoch (triples / 256 steps) is extrapolated from the step. Lazy Adam (the default) updates the
  rows a step names, so the step is flat and the epoch linear in the triples (dense Adam, ``optimizer: adam``,
  updated the whole entity table each step: the epoch grew with triples x entities);
* ``perturb``: RS, RR, ER and ED at levels 0.1, 0.5 and 1.0 (and the clean ``none`` partition) of
  ``--perturb-subgraphs`` PPR-pruned subgraphs (``perturb_subgraphs``, 64 at a time), then ATS, SC2D and SD2 of
  each against its original (``similarity_batch``, one call per partition), as the ``perturbed_subgraphs`` /
  ``kg_similarity`` assets compute them, with an untrained scorer of the default shape (scoring costs the same):
  bounded, a fixed number of subgraphs.

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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_prepare import init_stage, prepare_stage  # noqa: E402 - the init and prepare stages

N_RELATIONS = 500
N_TYPES = 50
TRIPLES_PER_ENTITY = 5
HEAD_EXPONENT, TAIL_EXPONENT, RELATION_EXPONENT, TYPE_EXPONENT = 0.8, 1.05, 1.0, 1.0
#: Type names by rank: real class names (OKGQA's templates draw entities of person, city, film, event, ... types).
TYPE_NAMES = (
    "human", "city", "film", "organization", "country", "book", "event", "painting", "university", "company",
    "writer", "novel", "politician", "battle", "musical work", "scientist", "museum", "art movement", "poem", "war",
    "actor", "genre", "play", "composer", "election", "painter", "opera", "treaty", "discipline", "sculpture",
    "river", "mountain", "album", "species", "building", "language", "ship", "award", "sports team", "village",
    "television series", "newspaper", "church", "airport", "railway station", "island", "lake", "bridge", "castle",
    "school",
)
FPQ_DOMAINS = {"domain_a": [TYPE_NAMES[3]], "domain_b": [TYPE_NAMES[7]], "domain_c": [TYPE_NAMES[12]]}
#: Relation labels: a phrase per relation key (P0, P1, ...), each a base phrase with an optional qualifier, unique.
RELATION_PHRASES = (
    "place of birth", "place of death", "country of citizenship", "member of", "employer", "educated at", "spouse",
    "child", "sibling", "award received", "occupation", "genre", "director", "author", "publisher", "located in",
    "capital of", "part of", "has part", "founded by", "headquarters location", "owned by", "influenced by",
    "student of", "notable work", "composer", "performer", "producer", "screenwriter", "cast member",
    "participant in", "instance of", "follows", "followed by", "language of work", "country of origin", "sponsor",
    "architect", "developer", "manufacturer", "record label", "position held", "military branch", "religion",
    "field of work", "doctoral advisor", "head of state", "shares border with", "twinned with", "contains",
    "narrative location", "filming location", "original broadcaster", "home venue", "league", "coach of",
    "residence", "nominated for", "movement", "significant event",
)
RELATION_QUALIFIERS = ("", "former", "official", "notable", "primary", "secondary", "regional", "historical", "honorary")
#: Share of triples that are also dated facts (the temporal side file); a relation of key rank divisible by 3 is
#: an event relation (its facts end in their start year), the others spans (some with an unknown end).
TEMPORAL_SHARE = 0.05
#: Entity labels: two of LABEL_WORDS pseudo-words per entity, so that labels repeat as in a real KG (about 3% of the
#: entities share their label with another at 1M triples, 12% at 5M).
LABEL_WORDS = 2_000
KG_NAME = "main"  # the schema load_kg writes (KGSource.name's default)
STAGES = ("ingest", "ingest+types", "subgraph", "fpq", "fpq-questions", "checks", "grapheval", "drowzee",
          "okgqa-questions", "erbench", "claims-index", "okgqa-retrieval", "scorer", "perturb", "init", "prepare")
#: The synthetic KG's files as a project config names them (benchmarks/scale_prepare.py).
KG_FILES = {"triples": "triples.parquet", "format": "parquet", "entity_labels": "entity_labels.tsv",
            "relation_labels": "relation_labels.tsv", "entity_types": "types.tsv", "temporal": "temporal.tsv"}


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


def _label_words(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct capitalised pseudo-words of two or three consonant-vowel syllables."""
    onsets = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "ch", "st", "tr"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou"]
    codas = ["", "", "n", "r", "s", "l"]
    words: dict[str, None] = {}
    while len(words) < n:
        k = int(rng.integers(2, 4))
        w = "".join(onsets[rng.integers(len(onsets))] + vowels[rng.integers(len(vowels))] for _ in range(k))
        words.setdefault((w + codas[rng.integers(len(codas))]).capitalize(), None)
    return list(words)


def _relation_labels() -> list[str]:
    return [f"{q} {p}".strip() for q in RELATION_QUALIFIERS for p in RELATION_PHRASES][:N_RELATIONS]


def _containment_keys() -> tuple[list[int], list[int]]:
    """The relation ranks whose labels kgprobe reads as containment (``containment_relations``): inward ("located
    in": head inside tail) and outward ("contains")."""
    from kgprobe.scoring.relations import containment, profile_of

    ways = {i: containment(profile_of(lab, key=f"P{i}")) for i, lab in enumerate(_relation_labels())}
    return [i for i, w in ways.items() if w == "inward"], [i for i, w in ways.items() if w == "outward"]


def _generate(out: Path, n_triples: int, seed: int) -> dict[str, Any]:
    """Write ``triples.parquet``, ``types.tsv``, ``entity_labels.tsv``, ``relation_labels.tsv`` and
    ``temporal.tsv``; return sizes and the largest degrees."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    n_entities = max(1_000, n_triples // TRIPLES_PER_ENTITY)
    entity_of_rank = rng.permutation(n_entities)  # hubs get arbitrary keys, not the first ones
    head_rank = _zipf(rng, n_entities, HEAD_EXPONENT, n_triples)
    tail_rank = _zipf(rng, n_entities, TAIL_EXPONENT, n_triples)
    rels = _zipf(rng, N_RELATIONS, RELATION_EXPONENT, n_triples)
    # containment relations form a hierarchy, as in a real KG (a place is located in one larger place), not a random
    # graph with hubs: the inner entity's parent is the entity of rank (rank - 1) // 8 (rank 0's is rank 1)
    inward, outward = _containment_keys()
    parent = lambda rank: np.where(rank == 0, 1, (rank - 1) // 8)  # noqa: E731
    inner = np.isin(rels, inward)
    tail_rank[inner] = parent(head_rank[inner])
    outer = np.isin(rels, outward)
    head_rank[outer] = parent(tail_rank[outer])
    heads, tails = entity_of_rank[head_rank], entity_of_rank[tail_rank]
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
        fh.write("".join(f"Q{i}\t{TYPE_NAMES[t]}\n" for i, t in enumerate(types.tolist())))
    # entity labels: two different pseudo-words ("Karo Velinstra"); pairs repeat, as names do in a real KG
    words = _label_words(np.random.default_rng([seed, 1]), LABEL_WORDS)
    first = rng.integers(0, LABEL_WORDS, n_entities)
    second = (first + rng.integers(1, LABEL_WORDS, n_entities)) % LABEL_WORDS  # never the first word again
    with open(out / "entity_labels.tsv", "w", encoding="utf-8") as fh:
        fh.write("entity\tlabel\n")
        fh.write("".join(f"Q{i}\t{words[a]} {words[b]}\n" for i, (a, b) in enumerate(zip(first.tolist(), second.tolist()))))
    labels = _relation_labels()
    with open(out / "relation_labels.tsv", "w", encoding="utf-8") as fh:
        fh.write("relation\tlabel\n")
        fh.write("".join(f"P{i}\t{lab}\n" for i, lab in enumerate(labels)))
    # dated facts: TEMPORAL_SHARE of the triples (so their triples are in the KG already), start 1800-2019; an event
    # relation's facts end in their start year, a span lasts 1-40 years, or has an unknown end (one in ten)
    dated = np.flatnonzero(rng.random(n_triples) < TEMPORAL_SHARE)
    start = rng.integers(1800, 2020, dated.size)
    end = start + rng.integers(1, 41, dated.size)
    end = np.where(rels[dated] % 3 == 0, start, end)
    unknown = (rng.random(dated.size) < 0.1) & (rels[dated] % 3 != 0)
    with open(out / "temporal.tsv", "w", encoding="utf-8") as fh:
        fh.write("head\trelation\ttail\tstart\tend\n")
        fh.write("".join(f"Q{h}\tP{r}\tQ{t}\t{s}\t{'####' if u else e}\n" for h, r, t, s, e, u in zip(
            heads[dated].tolist(), rels[dated].tolist(), tails[dated].tolist(), start.tolist(), end.tolist(),
            unknown.tolist())))
    degree = np.bincount(heads, minlength=n_entities) + np.bincount(tails, minlength=n_entities)
    top = np.sort(degree)[::-1]
    distinct_labels = len(set(zip(first.tolist(), second.tolist())))
    return {
        "entities": n_entities,
        "parquet_mb": (out / "triples.parquet").stat().st_size / 1e6,
        "max_degree": int(top[0]),
        "hubs_100k": int((top >= 100_000).sum()),
        "median_degree": float(np.median(degree)),
        "dated": int(dated.size),
        "shared_labels": n_entities - distinct_labels,
    }


def _ingest(out: Path, with_types: bool) -> dict[str, Any]:
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    db = out / ("kg.duckdb" if with_types else "kg_triples_only.duckdb")
    db.unlink(missing_ok=True)
    # with_types: every side file (types, entity and relation labels, dated facts), the KG the later stages read
    sides = {"entity_types": out / "types.tsv", "entity_labels": out / "entity_labels.tsv",
             "relation_labels": out / "relation_labels.tsv", "temporal": out / "temporal.tsv"} if with_types else {}
    source = KGSource(triples=out / "triples.parquet", format="parquet", **sides)
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
                f"{report.entities:,} entities, {report.entity_types:,} typed"
                + (f", {report.labelled_entities:,} labelled, {report.temporal_facts:,} dated facts" if with_types else ""),
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


def _open_kg(out: Path) -> tuple[Any, str]:
    """A read-only connection to the KG of ``ingest+types`` with its schema selected, and its snapshot id."""
    import duckdb

    from kgprobe.kg.stats import current_snapshot

    con = duckdb.connect(str(out / "kg.duckdb"), read_only=True)
    snapshot = current_snapshot(con, KG_NAME)
    con.execute(f"USE {KG_NAME}")
    return con, snapshot


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    start, cpu = time.perf_counter(), _cpu()
    value = fn()
    return value, time.perf_counter() - start, _cpu() - cpu


# ---- stage: checks
def _checks(out: Path) -> dict[str, Any]:
    """The kg asset's checks (kg_not_empty, kg_reject_rate, kg_label_coverage: ``kg_summary``; kg_no_dangling_ids:
    ``dangling_ids``) and the label checks every items asset runs on a KG (``label_report``, ``unreadable_names``)."""
    from kgprobe.kg.readable import label_report, unreadable_names
    from kgprobe.kg.stats import dangling_ids, kg_summary

    con, _ = _open_kg(out)

    def run() -> tuple:
        return kg_summary(con, KG_NAME), dangling_ids(con, KG_NAME), label_report(con, KG_NAME), unreadable_names(con, KG_NAME)

    (summary, dangling, labels, (ents, rels)), seconds, cpu = _timed(run)
    return {
        "seconds": seconds, "cpu": cpu, "rate": summary["triples"] / seconds, "unit": "triples/s",
        "note": f"{summary['typed_entities']:,} typed entities, label coverage {summary['label_coverage']:.0%}, "
                f"{sum(dangling.values())} dangling ids, {labels['readable_entities']:,} readable entities, "
                f"{len(ents) + len(rels)} id-like names",
    }


# ---- stage: grapheval
def _grapheval(out: Path, seed: int) -> dict[str, Any]:
    """The grapheval_items asset with the default settings (profile paper, positives null): every triple of the KG
    stated, with one verified negative each (``GraphEvalSuite.items``), written as the items partition
    (``store_items``, as the asset writes it; into ``grapheval-warehouse`` beside the KG). Above
    ``stream_items_above`` items (1M, the default) the suite hands the store a stream built a chunk at a time, so
    the peak RSS is the draw's arrays and one chunk; below it, mostly the item table (~790 bytes a statement)."""
    import pyarrow as pa

    from kgprobe.suites.base import ItemSource
    from kgprobe.suites.grapheval.suite import GraphEvalSettings, GraphEvalSuite
    from kgprobe.suites.store import store_items

    con, snapshot = _open_kg(out)
    settings = GraphEvalSettings()
    source = ItemSource(con=con, kg=KG_NAME, snapshot_id=snapshot, settings=settings, seed=seed,
                        named_only=GraphEvalSuite.names_kg_entities)
    root = out / "grapheval-warehouse"

    def run() -> tuple[Any, Any]:
        result = GraphEvalSuite().items(source)
        return result, store_items(root, "grapheval_items", "grapheval", result.items)

    (result, stored), seconds, cpu = _timed(run)
    streamed = not isinstance(result.items, pa.Table)
    n = stored.rows
    written = sum(f.stat().st_size for f in (root / "grapheval_items").glob("*.parquet"))
    negatives = n - result.metadata["positives"]
    shutil.rmtree(root, ignore_errors=True)
    return {
        "seconds": seconds, "cpu": cpu, "rate": n / seconds, "unit": "statements/s",
        "note": f"{result.metadata['positives']:,} positives, {negatives:,} negatives, "
                f"{result.rejects.num_rows if result.rejects is not None else 0:,} rejected candidates, "
                f"{written / 2**30:.1f} GiB of Parquet ("
                + (f"streamed: more than stream_items_above {settings.stream_items_above:,} items" if streamed
                   else "one table") + ")",
    }


# ---- stage: drowzee
def _drowzee_settings(con: Any) -> Any:
    """Drowzee settings naming the synthetic relations by triple count: the largest ones get the rules (negation:
    the functional relations the data show, the default), so each rule has the most premises to join."""
    from kgprobe.suites.drowzee.suite import DrowzeeSettings

    keys = [k for k, in con.execute("SELECT r.key FROM triples t JOIN relations r ON r.id = t.relation "
                                    "GROUP BY r.key ORDER BY count(*) DESC, r.key LIMIT 9").fetchall()]
    return DrowzeeSettings(symmetric=[keys[0]], transitive=[keys[1]], inverse={keys[2]: keys[3]},
                           compositions=[[keys[4], keys[5], keys[6]]], same=[keys[7]])


def _drowzee(out: Path, seed: int) -> dict[str, Any]:
    """The drowzee_items asset with the default per_rule / n_formulas: the six rules over the KG's triples and the
    temporal formulas over its dated facts (``DrowzeeSuite.items``)."""
    from collections import Counter

    from kgprobe.suites.base import ItemSource
    from kgprobe.suites.drowzee.suite import DrowzeeSuite

    con, snapshot = _open_kg(out)
    settings = _drowzee_settings(con)
    source = ItemSource(con=con, kg=KG_NAME, snapshot_id=snapshot, settings=settings, seed=seed,
                        named_only=DrowzeeSuite.names_kg_entities)
    result, seconds, cpu = _timed(lambda: DrowzeeSuite().items(source))
    tasks = Counter(result.items.column("task").to_pylist())
    return {
        "seconds": seconds, "cpu": cpu, "rate": result.items.num_rows / seconds, "unit": "items/s",
        "note": ", ".join(f"{n:,} {t}" for t, n in sorted(tasks.items()))
                + f" (per_rule {settings.per_rule}, n_formulas {settings.n_formulas})",
    }


# ---- stage: okgqa-questions
def _okgqa_questions(out: Path, seed: int) -> dict[str, Any]:
    """The okgqa_question_bank asset with the default per_template: ``template_questions`` over typed entities."""
    from kgprobe.suites.okgqa.questions import template_questions
    from kgprobe.suites.okgqa.suite import OKGQASettings

    con, snapshot = _open_kg(out)
    per_template = OKGQASettings().per_template
    (found, rejects), seconds, cpu = _timed(
        lambda: template_questions(con, per_template=per_template, seed=seed, snapshot_id=snapshot))
    return {
        "seconds": seconds, "cpu": cpu, "rate": len(found) / seconds, "unit": "questions/s",
        "note": f"{len(found)} questions (per_template {per_template}), {len(rejects)} templates unfilled",
    }


# ---- stage: erbench
def _erbench(out: Path, rows: int, seed: int) -> dict[str, Any]:
    """ERBench on a ``rows``-row table (benchmarks/erbench.py's synthetic one: six columns, three FDs), whatever
    the KG's size: the erdb asset's ``load_erdb`` and the erbench_items asset (``ERBenchSuite.items``) with the
    default settings (every record, binary and multiple-choice questions, known-entity prompts)."""
    import importlib.util

    import duckdb

    from kgprobe.suites.base import ItemSource
    from kgprobe.suites.erbench.erdb import load_erdb
    from kgprobe.suites.erbench.spec import parse_spec
    from kgprobe.suites.erbench.suite import ERBenchSettings, ERBenchSuite

    spec_file = importlib.util.spec_from_file_location("erbench_benchmark", Path(__file__).with_name("erbench.py"))
    erbench = importlib.util.module_from_spec(spec_file)
    spec_file.loader.exec_module(erbench)  # type: ignore[union-attr]
    folder = out / "erdb"
    folder.mkdir(exist_ok=True)
    spec_data = erbench._synthetic(folder, rows)
    settings = ERBenchSettings(db=spec_data)
    con = duckdb.connect(str(out / "erbench.duckdb"))
    start, cpu = time.perf_counter(), _cpu()
    load_erdb(con, parse_spec(spec_data), schema=settings.schema_name, fd_violations=settings.fd_violations)
    loaded = time.perf_counter() - start
    result = ERBenchSuite().items(ItemSource(con=con, kg=None, snapshot_id="", settings=settings, seed=seed,
                                             config_dir=folder))
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    con.close()
    (out / "erbench.duckdb").unlink(missing_ok=True)
    return {
        "seconds": seconds, "cpu": cpu, "rate": result.items.num_rows / seconds, "unit": "items/s",
        "note": f"{rows:,} rows loaded in {loaded:.1f} s, {result.items.num_rows:,} items in {seconds - loaded:.1f} s",
    }


# ---- stage: claims-index
def _claims_index(out: Path) -> dict[str, Any]:
    """The claim checker's index of the whole KG (``KGFacts.from_duckdb``, single-valued relations from the data),
    its relation phrase file (``relation_file``: every relation's phrase set and profile, as ``kgprobe init``
    writes it) and its name index (built by the first ``check_fact``)."""
    from kgprobe.scoring.claims import KGFacts, check_fact

    con, _ = _open_kg(out)
    kg, built, cpu_built = _timed(lambda: KGFacts.from_duckdb(con, KG_NAME))
    text, phrased, cpu_phrased = _timed(kg.relation_file)
    fact = kg.verbalise(next(iter(kg.triples)))
    verdict, checked, cpu_checked = _timed(lambda: check_fact(fact, kg))
    seconds, cpu = built + phrased + checked, cpu_built + cpu_phrased + cpu_checked
    return {
        "seconds": seconds, "cpu": cpu, "rate": len(kg.triples) / seconds, "unit": "triples/s",
        "note": f"from_duckdb {built:.1f} s ({len(kg.functional)} single-valued relations), relation_file "
                f"{phrased:.1f} s, first check_fact {checked:.1f} s ({verdict.label})",
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
    check (``check_premises``) is timed with them: DuckDB joins of the edits' (subject, false object) pairs and
    (subject, relation) pairs against the triples, so it follows the edits, not the degree of their subjects (it
    read every neighbour of every edited subject, hubs' 100k+ edges included: 165 s of the stage's 192 s at 1M
    triples, 2.2 s since; 4.2 s at 5M)."""
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kgprobe.suites.base import ItemSource
    from kgprobe.suites.fpq.edits import Edit, check_premises
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
    checked = time.perf_counter()
    edits = check_premises(con, edits)  # the fpq_edits asset's premise check (premise_check: kg, the default)
    checked = time.perf_counter() - checked
    edits_table = pa.Table.from_pylist([e.as_row() for e in edits])
    source = ItemSource(con=con, kg="synthetic", snapshot_id="scale", settings=settings, seed=seed,
                        upstream={"fpq_true_triples": true_triples, "fpq_edits": edits_table})
    result = FPQSuite().items(source)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    n_items = result.items.num_rows
    rejected = sum(1 for e in edits if e.false_object is None)
    return {
        "seconds": seconds, "cpu": cpu, "rate": n_items / seconds, "unit": "questions/s",
        "note": f"premise check {checked:.1f} s; {len(edits):,} edits ({rejected:,} without a false object), "
                f"{n_items:,} questions (yn + wh) and {result.rejects.num_rows:,} rejects from "
                f"{true_triples.num_rows:,} true triples over {len(keys)} relations",
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


def _scorer(out: Path, steps: int, seed: int, n_subgraphs: int = 300, fanout_cap: int = 100) -> dict[str, Any]:
    """The ``triple_scorer`` asset's work. Its default (``perturbation.scorer_train_on: subgraphs``, as the OKGQA
    authors' released code): ``train_scorer_on`` the union of ``n_subgraphs`` PPR-pruned subgraphs (about as many
    queries as the prepare job's: one per KG-FPQ subject and OKGQA question; built untimed) with the default
    ``TrainConfig`` (DistMult, dim 200, ``balanced``, 7 epochs): bounded by the queries, whatever the KG's size.
    Then the ``kg`` setting measured per optimiser step: every KG triple read as the asset reads them, two epochs of
    ``train_scorer`` over ``steps`` batches with the KG's entity and relation counts, the step from the second;
    lazy Adam (the default optimiser) updates the rows a step names, so the step stays flat and an epoch (triples /
    256 steps, extrapolated from the step) grows with the triples (dense Adam, ``optimizer: adam``, updated the
    whole entity table at every step: an epoch grew with triples x entities)."""
    import duckdb

    from kgprobe.grounding.perturb_store import subgraph_triples
    from kgprobe.grounding.scorer import TrainConfig, train_scorer, train_scorer_on
    from kgprobe.kg.subgraph_store import subgraphs_to_table

    con = duckdb.connect(str(out / "kg.duckdb"), read_only=True)
    n_rel = con.execute("SELECT count(*) FROM relations").fetchone()[0]
    subs, seeds, _ = _pruned_subgraphs(con, n_subgraphs, fanout_cap, seed)
    union = subgraph_triples(subgraphs_to_table(subs, seeds, snapshot_id="scale", params="{}"))
    start, cpu = time.perf_counter(), _cpu()
    fitted = train_scorer_on(union, n_rel, TrainConfig(seed=seed, device="cpu"))
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    # the kg setting, per step
    read_start, read_cpu = time.perf_counter(), _cpu()
    triples = con.execute("SELECT head, relation, tail FROM triples").fetchnumpy()
    triples = np.stack([triples[c].astype(np.int64) for c in ("head", "relation", "tail")], axis=1)
    n_ent = con.execute("SELECT count(*) FROM entities").fetchone()[0]
    read, read_cpu = time.perf_counter() - read_start, _cpu() - read_cpu
    config = TrainConfig(epochs=2, seed=seed, device="cpu")
    # the step from the second of two epochs over `steps` batches: the set-up (the initial entity table, the
    # optimiser's moments) is paid once per training, before the first epoch's clock, and the first epoch warms up.
    # (The difference of a `steps` and a 2 x `steps` training, measured before, came out negative at 20M triples:
    # the set-up's 16 s varied by more than 100 steps take.)
    rows = np.random.default_rng(seed).choice(len(triples), min(len(triples), steps * config.batch_size), replace=False)
    ticks: list[tuple[float, float]] = []

    def epoch_done(epoch: int, loss: float, epoch_seconds: float) -> None:
        ticks.append((epoch_seconds, _cpu()))

    train_start = time.perf_counter()
    train_scorer(triples[rows], n_ent, n_rel, config, log=epoch_done)
    train_seconds = time.perf_counter() - train_start
    n_steps = -(-len(rows) // config.batch_size)
    per_step, per_step_cpu = ticks[1][0] / n_steps, (ticks[1][1] - ticks[0][1]) / n_steps
    setup = max(train_seconds - ticks[0][0] - ticks[1][0], 0.0)
    epoch_steps = -(-len(triples) // config.batch_size)
    epoch, epoch_cpu = epoch_steps * per_step, epoch_steps * per_step_cpu
    default = TrainConfig().epochs
    return {
        "seconds": seconds, "cpu": cpu, "rate": len(union) * default / seconds, "unit": "triples/s",
        "trained_on": len(union), "entities": fitted.num_entities,
        "per_step": per_step, "steps": n_steps, "epoch_steps": epoch_steps, "epoch": epoch, "epoch_cpu": epoch_cpu,
        "note": f"default (subgraphs): {len(union):,} triples of {len(subs)} pruned subgraphs, {fitted.num_entities:,} "
                f"entities, {default} epochs; scorer_train_on kg: {len(triples):,} triples read in {read:.1f} s, "
                f"a step {1000 * per_step:,.0f} ms ({1000 * per_step_cpu:,.0f} ms CPU; the second of two epochs of "
                f"{n_steps} steps) with {n_ent:,} entities, set-up {setup:.1f} s, an epoch ({epoch_steps:,} steps) "
                f"extrapolates to {epoch:,.0f} s ({epoch_cpu:,.0f} s CPU), {default} epochs to "
                f"{read + setup + default * epoch:,.0f} s",
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
        # the stage's own peak, or its command's (init / prepare run kgprobe as a child and report that one's)
        result["peak_mib"] = max(result.get("peak_mib", 0.0), _peak_mib())
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
    ap.add_argument("--triples", type=int, nargs="+", default=[1_000_000, 5_000_000, 20_000_000],
                    help="KG sizes (default 1M, 5M and 20M)")
    ap.add_argument("--queries", type=int, default=1_000, help="two-seed subgraph queries (default 1000)")
    ap.add_argument("--fpq", type=int, default=15_000, help="true triples to edit (default 15000)")
    ap.add_argument("--fanout-cap", type=int, default=100, help="edges followed per node and hop (default 100)")
    ap.add_argument("--erbench-rows", type=int, default=1_000_000, help="rows of ERBench's table (default 1M)")
    ap.add_argument("--retrieval-questions", type=int, default=10,
                    help="questions whose subgraphs okgqa-retrieval searches (default 10)")
    ap.add_argument("--scorer-steps", type=int, default=100,
                    help="optimiser steps of the epoch the scorer stage times (the second of two), an epoch of the whole KG extrapolated from it (default 100)")
    ap.add_argument("--scorer-subgraphs", type=int, default=300,
                    help="pruned subgraphs whose triples the scorer stage trains on (default 300)")
    ap.add_argument("--perturb-subgraphs", type=int, default=100, help="subgraphs the perturb stage perturbs (default 100)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None, help="where the synthetic files go (default: a temporary folder)")
    ap.add_argument("--stages", default="ingest,ingest+types,subgraph,fpq,fpq-questions",
                    help=f"comma-separated stages to run, or all ({', '.join(STAGES)})")
    args = ap.parse_args(argv)
    stages = list(STAGES) if args.stages == "all" else args.stages.split(",")
    unknown = set(stages) - set(STAGES)
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
                ("fpq-questions", _fpq_questions, (out, args.fpq, args.seed)),
                ("checks", _checks, (out,)),
                ("grapheval", _grapheval, (out, args.seed)),
                ("drowzee", _drowzee, (out, args.seed)),
                ("okgqa-questions", _okgqa_questions, (out, args.seed)),
                ("erbench", _erbench, (out, args.erbench_rows, args.seed)),
                ("claims-index", _claims_index, (out,)),
                ("okgqa-retrieval", _okgqa_retrieval, (out, args.retrieval_questions, args.fanout_cap, args.seed)),
                ("scorer", _scorer, (out, args.scorer_steps, args.seed, args.scorer_subgraphs, args.fanout_cap)),
                ("perturb", _perturb, (out, args.perturb_subgraphs, args.fanout_cap, args.seed)),
                ("init", init_stage, (out, KG_FILES)),
                ("prepare", prepare_stage, (out, KG_FILES, args.erbench_rows)),
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
                cpu_ratio = b["cpu"] / a["cpu"]
                verdict = "OK" if cpu_ratio <= 1.5 * large / small else "ABOVE"
                print(f"  {name:<15} {b['seconds'] / a['seconds']:5.1f}x the time, {cpu_ratio:5.1f}x the CPU time "
                      f"(goal <= {1.5 * large / small:g}x, 1.5x of linear: {verdict}), "
                      f"{b['peak_mib'] / a['peak_mib']:4.1f}x the peak RSS")
                if "epoch" in a and "epoch" in b:
                    print(f"  {'':<15} {b['per_step'] / a['per_step']:5.1f}x the time per training step, "
                          f"{b['epoch'] / a['epoch']:5.1f}x the extrapolated epoch ({b['epoch_cpu'] / a['epoch_cpu']:5.1f}x in CPU)")
                if "per_subject" in a and "per_subject" in b:
                    print(f"  {'':<15} {b['subjects'] / a['subjects']:5.1f}x the distinct subjects, "
                          f"{b['per_subject'] / a['per_subject']:5.1f}x the edit time per distinct subject")
    peak = max((r.get("peak_mib", 0) for per in results.values() for r in per.values()), default=0)
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; peak RSS of any stage {peak:,.0f} MiB")
    for n, per in results.items():
        if "seconds" in per.get("prepare", {}):
            r = per["prepare"]
            ok = r["seconds"] <= 600 and r["peak_mib"] <= 12 * 1024
            print(f"prepare job at {n:,} triples: {r['seconds']:.1f} s, {r['peak_mib'] / 1024:.1f} GB peak RSS "
                  f"(goal: 10 minutes and 12 GB at 20M triples: {'OK' if ok else 'ABOVE'})")
    failed = [f"{n:,} {name}" for n, per in results.items() for name, r in per.items() if "error" in r]
    if failed:
        print(f"failed stages: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
