"""Triple-scorer benchmark: train s_G on FB15k-237 with the default TrainConfig and report filtered MRR / Hits@k.

    python benchmarks/scorer.py [--data ../shared/data/kg/fb15k-237] [--threads 2] [--save DIR] [--epochs N] [--training T]

The KG is loaded the way the pipeline loads it (``load_kg`` of train + valid + test into one DuckDB schema, so
entity and relation ids are the warehouse's); each split's rows are then mapped to those ids. The scorer trains
on train.txt.gz only and is evaluated on valid.txt and test.txt in the standard filtered setting (candidates
forming a triple of train + valid + test are removed, head and tail prediction averaged). Reference numbers on
FB15k-237 (filtered): DistMult in Dettmers et al. 2018 MRR 0.241, Hits@1 0.155, Hits@3 0.263, Hits@10 0.419.

Training time is printed as wall time and as CPU time / threads: on a machine shared with other jobs the wall
time overstates what an idle box needs. The trained scorer is saved (default ``benchmarks/results/
fb15k237-distmult``, git-ignored) so that ``benchmarks/perturb.py`` can reuse it for RR and ATS.
"""

from __future__ import annotations

import argparse
import gzip
import resource
import sys
import time
from pathlib import Path

import duckdb
import numpy as np

from kgprobe.kg.ingest import KGSource, load_kg
from kgprobe.grounding.scorer import TRAININGS, TrainConfig, evaluate, train_scorer

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "kg" / "fb15k-237"
DEFAULT_SAVE = REPO / "benchmarks" / "results" / "fb15k237-distmult"
SPLITS = {"train": "train.txt.gz", "valid": "valid.txt", "test": "test.txt"}
PUBLISHED = {"mrr": 0.241, "hits@1": 0.155, "hits@3": 0.263, "hits@10": 0.419}


def load_splits(data: Path, con: duckdb.DuckDBPyConnection, schema: str = "fb") -> tuple[dict[str, np.ndarray], str]:
    """Load train + valid + test as one KG and return each split as an (n, 3) array of warehouse ids."""
    paths = [data / name for name in SPLITS.values()]
    report = load_kg(con, KGSource(triples=paths, format="tsv", name=schema))
    entity = dict(con.execute(f"SELECT key, id FROM {schema}.entities").fetchall())
    relation = dict(con.execute(f"SELECT key, id FROM {schema}.relations").fetchall())
    out = {}
    for split, name in SPLITS.items():
        opener = gzip.open if name.endswith(".gz") else open
        with opener(data / name, "rt", encoding="utf-8") as fh:
            rows = [line.rstrip("\n").split("\t") for line in fh if line.strip()]
        out[split] = np.array([(entity[h], relation[r], entity[t]) for h, r, t in rows], dtype=np.int64)
    return out, report.snapshot_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="FB15k-237 folder (train.txt.gz, valid.txt, test.txt)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="override TrainConfig.epochs (default: the default config)")
    parser.add_argument("--training", choices=TRAININGS, default=None,
                        help="override TrainConfig.training (default: the default config's, balanced; 1-N is the "
                             "link predictor the epochs were tuned for)")
    parser.add_argument("--save", type=Path, default=DEFAULT_SAVE, help=f"artifact folder (default {DEFAULT_SAVE})")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    con = duckdb.connect()
    splits, snapshot = load_splits(args.data, con)
    num_entities = con.execute("SELECT count(*) FROM fb.entities").fetchone()[0]
    num_relations = con.execute("SELECT count(*) FROM fb.relations").fetchone()[0]
    overrides = {k: v for k, v in (("epochs", args.epochs), ("training", args.training)) if v is not None}
    config = TrainConfig(**overrides)
    print(f"FB15k-237: {num_entities:,} entities, {num_relations} relations; train {len(splits['train']):,}, "
          f"valid {len(splits['valid']):,}, test {len(splits['test']):,} triples (snapshot {snapshot})")
    print(f"config: {config}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {config.device}")

    def log(epoch: int, loss: float, seconds: float) -> None:
        print(f"  epoch {epoch:3d}/{config.epochs}  loss {loss:.6f}  {seconds:6.1f} s", flush=True)

    wall, cpu = time.perf_counter(), time.process_time()
    scorer = train_scorer(splits["train"], num_entities, num_relations, config, log=log)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"training: {wall:.1f} s wall ({wall / 60:.1f} min), {cpu:.1f} s CPU = {cpu / args.threads:.1f} s per "
          f"thread (the wall time of an otherwise idle {args.threads}-core box)")

    known = np.concatenate([splits["train"], splits["valid"], splits["test"]])
    results = {}
    for split in ("valid", "test"):
        tick = time.perf_counter()
        results[split] = evaluate(scorer, splits[split], known)
        print(f"evaluated {split} in {time.perf_counter() - tick:.1f} s")
    train_probs = scorer.score(splits["train"][:, 0], splits["train"][:, 1], splits["train"][:, 2])
    test_probs = scorer.score(splits["test"][:, 0], splits["test"][:, 1], splits["test"][:, 2])
    print()
    print("filtered       MRR     MR   Hits@1  Hits@3  Hits@10")
    for split, m in results.items():
        print(f"{split:<10} {m['mrr']:7.4f} {m['mr']:6.0f} {m['hits@1']:8.4f} {m['hits@3']:7.4f} {m['hits@10']:8.4f}")
    print(f"{'published':<10} {PUBLISHED['mrr']:7.4f} {'':>6} {PUBLISHED['hits@1']:8.4f} {PUBLISHED['hits@3']:7.4f} "
          f"{PUBLISHED['hits@10']:8.4f}   (DistMult, Dettmers et al. 2018, test)")
    print(f"mean s_G: train triples {train_probs.mean():.3f}, test triples {test_probs.mean():.3f}")

    scorer.metadata.update({"kg_snapshot": snapshot, "valid": results["valid"], "test": results["test"],
                            "benchmark_wall_seconds": round(wall, 1), "benchmark_cpu_seconds": round(cpu, 1)})
    folder = scorer.save(args.save)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    print(f"saved {folder} (content hash {scorer.content_hash[:16]}); peak RSS {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
