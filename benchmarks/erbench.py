"""Benchmark: ERBench question generation in DuckDB (kgprobe.suites.erbench) against a pandas row-by-row loop like
the released ERBench scripts.

    python benchmarks/erbench.py [--rows 1000000] [--linear 250000] [--baseline-rows 100000] [--data ../shared/data]
                                 [--skip-synthetic] [--skip-crafted]

Synthetic table: ``--rows`` rows, six columns and three FDs (``person, batch -> title``, ``code -> score``,
``title, shard -> code``), written as Parquet and loaded with ``load_erdb`` (FD checks included). kgprobe makes
every binary item of the three FDs (BN(Y), BN(N) and the known-entity prompt: 9 items per row) with
``binary_sql``, into a DuckDB table. The baseline is the released scripts' shape: ``pd.read_csv`` then, per FD, a
Python loop over the rows reading each cell with ``df.loc[i, col]`` and formatting the prompts with f-strings (it
checks no FD). The baseline runs on ``--baseline-rows`` rows and its time is scaled to ``--rows`` (its loop is
linear by construction); kgprobe runs at ``--linear`` and ``--rows`` rows to show it is linear too.

Crafted: the five crafted tables of ``../shared/data/seeds/erbench`` (binary and multiple-choice), end to end
(load + every item) against the pandas loop over the same CSV (binary prompts; multiple choice: three phrasings
with one option replaced by another row's value, as the released multi_choice scripts do).

Each measurement runs in a fresh process; memory is its peak RSS (Linux VmHWM).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import queue as queue_mod
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
CRAFTED = REPO / "tests" / "kgprobe" / "suites" / "erbench"

FDS = [("person_title", ["person", "batch"], ["title"],
        "Is there a record of {person} in batch {batch}?", "Is it true that there is no record of {person} in batch {batch}?",
        "Do you know {title} by {person}?"),
       ("code_score", ["code"], ["score"],
        "Is there an item with code {code}?", "Is it true that there is no item with code {code}?",
        "Do you know the item {code} scoring {score}?"),
       ("title_code", ["title", "shard"], ["code"],
        "Is there a work titled {title} in shard {shard}?", "Is it true that there is no work titled {title} in shard {shard}?",
        "Do you know {title} with code {code}?")]


def _peak_mib() -> float:
    try:
        status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
        return int(status["VmHWM"].split()[0]) / 1024
    except (OSError, KeyError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _synthetic(folder: Path, rows: int) -> dict[str, Any]:
    import duckdb

    with duckdb.connect() as con:
        con.execute(f"""COPY (SELECT 'person ' || i AS person, i % 97 AS batch, 'title ' || i AS title,
                        'C' || lpad(CAST(i AS VARCHAR), 8, '0') AS code, i % 1000 AS score, i % 7 AS shard
                        FROM range({int(rows)}) t(i)) TO '{folder / "works.parquet"}' (FORMAT parquet)""")
        con.execute(f"COPY (SELECT * FROM '{folder / 'works.parquet'}') TO '{folder / 'works.csv'}' (HEADER)")
    return {"name": "synthetic", "source": {"kind": "parquet", "path": str(folder)},
            "relations": {"works": {"file": "works.parquet",
                                    "columns": ["person", "batch", "title", "code", "score", "shard"]}},
            "fds": [{"name": n, "relation": "works", "lhs": lhs, "rhs": rhs, "basic": b, "negated": ng, "known": k}
                    for n, lhs, rhs, b, ng, k in FDS]}


# ---------------------------------------------------------------------------------------------------- runs
def _kgprobe_synthetic(spec_data: dict, full: bool, queue: Any) -> None:
    import duckdb

    from kgprobe.suites.erbench.erdb import load_erdb
    from kgprobe.suites.erbench.questions import (
        QuestionOptions,
        binary_sql,
        build_items,
    )
    from kgprobe.suites.erbench.spec import parse_spec

    con = duckdb.connect()
    spec = parse_spec(spec_data)
    t0 = time.perf_counter()
    load_erdb(con, spec)
    t1 = time.perf_counter()
    if full:  # every item column (evidence, breakdown, gold, ...) as one Arrow table
        items = build_items(con, spec, QuestionOptions(multiple_choice=False, multihop=False)).num_rows
    else:  # what the released scripts produce: the question, the expected answer and the FD-inferred values
        types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = "
                                 "'erdb' AND table_name = 'works'").fetchall())
        items = 0
        for fd in spec.fds:
            sql, params = binary_sql(spec, fd, types, QuestionOptions(), known=True,
                                     columns=("item_id", "question", "expected", "inferred"))
            items += con.execute(sql, params).to_arrow_table().num_rows
    t2 = time.perf_counter()
    queue.put({"load_s": t1 - t0, "generate_s": t2 - t1, "items": items, "peak_mib": _peak_mib()})


def _pandas_synthetic(csv_path: str, rows: int, queue: Any) -> None:
    import pandas as pd

    t0 = time.perf_counter()
    df = pd.read_csv(csv_path, nrows=rows)
    t1 = time.perf_counter()
    prompts = []
    for _name, lhs, rhs, basic, negated, known in FDS:
        for i in range(len(df)):
            values = {c: df.loc[i, c] for c in (*lhs, *rhs, "title", "person", "code", "score")}
            prompts.append((basic.format(**values), "yes", [str(values[c]) for c in rhs]))
            prompts.append((negated.format(**values), "no", [str(values[c]) for c in rhs]))
            prompts.append((known.format(**values), "yes", []))
    t2 = time.perf_counter()
    queue.put({"load_s": t1 - t0, "generate_s": t2 - t1, "items": len(prompts), "peak_mib": _peak_mib()})


def _kgprobe_crafted(spec_data: dict, opts: dict, queue: Any) -> None:
    import duckdb

    from kgprobe.suites.erbench.erdb import load_erdb
    from kgprobe.suites.erbench.questions import QuestionOptions, build_items
    from kgprobe.suites.erbench.spec import parse_spec

    # DuckDB's first CSV read in a process pays a one-time start-up (~0.5 s); like the imports, it is not timed
    duckdb.connect().execute("SELECT * FROM read_csv(?, header = true)",
                             [str(REPO / "examples/sample/erdb/olympics.csv")]).to_arrow_table()
    t0 = time.perf_counter()
    con = duckdb.connect()
    spec = parse_spec(spec_data)
    load_erdb(con, spec)
    items = build_items(con, spec, QuestionOptions(**opts))
    queue.put({"seconds": time.perf_counter() - t0, "items": items.num_rows, "peak_mib": _peak_mib()})


def _pandas_crafted(csv_path: str, kind: str, columns: dict[str, str], templates: Any, limit: int | None,
                    queue: Any) -> None:  # fmt: skip
    import random

    import pandas as pd

    t0 = time.perf_counter()
    df = pd.read_csv(csv_path)
    if limit is not None:  # the released scripts keep the first rows (soccer: 1,500)
        df = df.iloc[:limit].reset_index(drop=True)
    df = df.rename(columns={("Unnamed: 0" if v == "column0" else v): k for k, v in columns.items()})
    prompts = []
    rng = random.Random(0)
    if kind == "binary":
        basic, negated, known = templates
        for i in range(len(df)):
            values = {c: df.loc[i, c] for c in columns}
            prompts += [basic.format(**values), negated.format(**values), known.format(**values)]
    else:
        questions, options = templates
        uniques = {c: list(df[c].dropna().unique()) for c in options}
        for i in range(len(df)):
            values = {c: df.loc[i, c] for c in columns}
            wrong = rng.choice(list(options))
            false = rng.choice([v for v in uniques[wrong] if v != values[wrong]])
            for p, q in enumerate(questions):
                shown = dict(values, **{wrong: false})
                body = "".join(f"\nOption {k}: {options[c][p].format(**shown)}" for k, c in enumerate(options, 1))
                prompts.append(q.format(**values) + body)
    queue.put({"seconds": time.perf_counter() - t0, "items": len(prompts), "peak_mib": _peak_mib()})


def _run(target, *args) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    while True:
        try:
            out = queue.get(timeout=5)
            break
        except queue_mod.Empty:  # still running, or died
            if not proc.is_alive():
                raise RuntimeError(f"{target.__name__} failed (exit code {proc.exitcode})") from None
    proc.join()
    return out


# ---------------------------------------------------------------------------------------------------- main
def synthetic(rows: int, linear: int, baseline_rows: int) -> None:
    with tempfile.TemporaryDirectory(prefix="erbench-bench-") as tmp:
        folder = Path(tmp)
        spec = _synthetic(folder, rows)
        small = folder / "small"
        small.mkdir()
        spec_small = _synthetic(small, linear)
        big = _run(_kgprobe_synthetic, spec, False)
        mid = _run(_kgprobe_synthetic, spec_small, False)
        full = _run(_kgprobe_synthetic, spec_small, True)
        base = _run(_pandas_synthetic, str(folder / "works.csv"), baseline_rows)
    scaled = base["generate_s"] * rows / baseline_rows
    print("\nSynthetic table, 3 FDs, binary items (BN(Y), BN(N), known) = 9 per row: question, expected answer, "
          "inferred values, item id")
    print("| run | rows | items | load s | generate s | peak RSS MiB |\n|---|---|---|---|---|---|")
    for label, r, n in (("kgprobe (DuckDB)", mid, linear), ("kgprobe (DuckDB)", big, rows),
                        ("kgprobe, every item column", full, linear), ("pandas row loop", base, baseline_rows)):
        print(f"| {label} | {n:,} | {r['items']:,} | {r['load_s']:.2f} | {r['generate_s']:.2f} | {r['peak_mib']:.0f} |")
    print(f"| pandas row loop, scaled | {rows:,} | {9 * rows:,} | {base['load_s'] * rows / baseline_rows:.2f} | "
          f"{scaled:.1f} | |")
    print(f"\nratio (pandas scaled / kgprobe, generation at {rows:,} rows): {scaled / big['generate_s']:.1f}x")
    print(f"ratio with every item column (at {linear:,} rows): "
          f"{base['generate_s'] * linear / baseline_rows / full['generate_s']:.1f}x")
    print(f"ratio incl. load (pandas read_csv + loop / load_erdb with FD checks + generation, {rows:,} rows): "
          f"{(base['load_s'] * rows / baseline_rows + scaled) / (big['load_s'] + big['generate_s']):.1f}x")
    print(f"linearity: kgprobe generate {rows:,} / {linear:,} rows = {big['generate_s'] / mid['generate_s']:.2f} "
          f"(rows x{rows / linear:.0f}); load {big['load_s'] / mid['load_s']:.2f}")

def crafted(data: Path) -> None:
    sys.path.insert(0, str(CRAFTED))
    from crafted import BINARY, MC, binary_spec, mc_spec

    root = data / "seeds" / "erbench"
    if not root.is_dir():
        print(f"\n(crafted tables not found at {root}; skipped)")
        return
    print("\nCrafted tables: load + every item (kgprobe) vs pandas row loop over the CSV")
    print("| dataset | type | kgprobe items | kgprobe s | pandas items | pandas s | ratio | kgprobe peak MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for name in BINARY:
        folder, file, columns, _lhs, _rhs, basic, negated, _explain, known, _m, _f = BINARY[name]
        ours = _run(_kgprobe_crafted, binary_spec(root, name), {"multiple_choice": False, "multihop": False})
        theirs = _run(_pandas_crafted, str(root / folder / file), "binary", columns, (basic, negated, known), None)
        print(f"| {name} | binary | {ours['items']:,} | {ours['seconds']:.2f} | {theirs['items']:,} | "
              f"{theirs['seconds']:.2f} | {theirs['seconds'] / ours['seconds']:.1f}x | {ours['peak_mib']:.0f} |")
    for name in MC:
        spec, limit = mc_spec(root, name)
        file, columns, _lhs, _what, options, _formats, _ = MC[name]
        fd = spec["fds"][0]
        ours = _run(_kgprobe_crafted, spec, {"limit": limit, "known": False})
        theirs = _run(_pandas_crafted, str(root / "multi_choice/dataset/crafted" / file), "mc", columns,
                      (fd["mc"]["questions"], options), limit)
        print(f"| {name} | multiple choice | {ours['items']:,} | {ours['seconds']:.2f} | {theirs['items']:,} | "
              f"{theirs['seconds']:.2f} | {theirs['seconds'] / ours['seconds']:.1f}x | {ours['peak_mib']:.0f} |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--linear", type=int, default=250_000)
    parser.add_argument("--baseline-rows", type=int, default=100_000)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--skip-crafted", action="store_true")
    parser.add_argument("--skip-synthetic", action="store_true")
    args = parser.parse_args(argv)
    if not args.skip_synthetic:
        synthetic(args.rows, args.linear, args.baseline_rows)
    if not args.skip_crafted:
        crafted(args.data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
