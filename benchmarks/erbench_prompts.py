"""ERBench's example projects against the authors' released prompts: how many released prompts kgprobe's questions
(``examples/erbench/<dataset>.yaml`` on the crafted tables of ``$ERBENCH_DATA``) do not reproduce word for word.

The released prompts come from a DILAB-KAIST/ERBench checkout (``--logs``, the repository root): the binary BN(Y)
and BN(N) prompts of ``binary/results/<model>/<dataset>.log`` (question 0 and 1 of each entity), the binary
known-entity prompts of ``binary/results/<model>/validate_<dataset>.log`` and the multiple-choice known-entity
prompts of ``multi_choice/dataset/validated/<model>/<dataset>.log`` (with their "Q: ...\\nA:" wrapper); for the
3-hop Soccer & Olympic path ``soccer_olympic.log`` and its validation log. kgprobe's prompts are the text
:meth:`ERBenchSuite.prompts` sends, without demonstrations. A released prompt counts as reproduced when kgprobe
builds the same text (as a multiset: a released prompt asked twice needs two).

    ERBENCH_DATA=/path/to/ERBench python benchmarks/erbench_prompts.py --logs /path/to/ERBench [--model gpt4]

Most released runs of the 3-hop validation were made from an earlier Olympic table (its multi-word cities, "los
angeles", never matched); Claude's run is the one made from the released table, so ``--hop-model`` defaults to it.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import duckdb  # noqa: E402

from kgprobe.config import load_config  # noqa: E402
from kgprobe.suites.erbench import load_erdb, load_spec  # noqa: E402
from kgprobe.suites.erbench.questions import QuestionOptions, build_items  # noqa: E402
from kgprobe.suites.erbench.suite import ERBenchSuite  # noqa: E402

DATASETS = ("movie", "soccer", "music", "airport", "book")
_BINARY = re.compile(r"^(\d+)-(\d+)th question\nQ: ?(.*?)\nA:", re.DOTALL | re.MULTILINE)
_VALIDATE = re.compile(r"^\d+th question\nQ: (.*?)\nA:", re.DOTALL | re.MULTILINE)
_MC_KNOWN = re.compile(r"^\d+-\d+th question\n<Question> ?\n(.*?)\n\n<Answer>", re.DOTALL | re.MULTILINE)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def missing(released: list[str], ours: list[str]) -> list[str]:
    """The released prompts that kgprobe's ``ours`` do not reproduce (multiset difference, in released order)."""
    have = Counter(ours)
    out = []
    for r in released:
        if have[r] > 0:
            have[r] -= 1
        else:
            out.append(r)
    return out


def prompts_of(dataset: str) -> list[tuple[dict, str]]:
    """Every item of the example project ``dataset`` with the prompt text kgprobe sends."""
    cfg = load_config(REPO / "examples" / "erbench" / f"{dataset}.yaml")
    settings = cfg.suite("erbench")
    spec = load_spec(settings.db, config_dir=cfg.path.parent)
    con = duckdb.connect()
    load_erdb(con, spec, fd_violations=settings.fd_violations)
    items = build_items(con, spec, QuestionOptions(limit=settings.limit_per_fd, sample=settings.sample,
                                                   distractors=settings.distractors)).to_pylist()
    for it in items:
        it["demos"], it["demo_kind"] = "", ""
    return list(zip(items, (p.text for p in ERBenchSuite().prompts(items))))


def compare(logs: Path, dataset: str, model: str, hop_model: str) -> list[tuple[str, int, int, list[str]]]:
    """(what, released prompts, not reproduced, examples) per prompt kind of ``dataset``."""
    built = prompts_of(dataset)

    def ours(keep) -> list[str]:
        return [text for it, text in built if keep(it)]

    rows = []
    binary = [q for _e, k, q in _BINARY.findall(_read(logs / f"binary/results/{model}/{dataset}.log")) if k in "01"]
    kinds = [("binary BN(Y), BN(N)", binary, ours(lambda it: it["task"] == "binary")),
             ("known-entity (binary)", _VALIDATE.findall(_read(logs / f"binary/results/{model}/validate_{dataset}.log")),
              ours(lambda it: it["qtype"] == "known" and it["hops"] == 1)),
             ("known-entity (MC)", _MC_KNOWN.findall(_read(logs / f"multi_choice/dataset/validated/{model}/{dataset}.log")),
              ours(lambda it: it["qtype"] == "known_mc"))]
    if dataset == "soccer":
        hop = [q for _e, k, q in _BINARY.findall(_read(logs / f"binary/results/{model}/soccer_olympic.log"))
               if k in "01"]
        kinds += [("3-hop BN(Y), BN(N)", hop, ours(lambda it: it["task"] == "multihop")),
                  (f"3-hop known-entity ({hop_model})",
                   _VALIDATE.findall(_read(logs / f"binary/results/{hop_model}/validate_soccer_olympic.log")),
                   ours(lambda it: it["qtype"] == "known" and it["hops"] > 1))]
    for what, released, mine in kinds:
        if released:
            diff = missing(released, mine)
            rows.append((what, len(released), len(diff), diff[:3]))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", required=True, type=Path, help="root of a DILAB-KAIST/ERBench checkout")
    ap.add_argument("--data", type=Path, default=os.environ.get("ERBENCH_DATA"),
                    help="the crafted tables (default: $ERBENCH_DATA)")
    ap.add_argument("--model", default="gpt4", help="whose logs hold the released prompts (default gpt4)")
    ap.add_argument("--hop-model", default="claude", help="whose 3-hop validation log to compare (default claude)")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--examples", type=int, default=0, help="show this many unreproduced prompts per row")
    args = ap.parse_args()
    if args.data is None:
        ap.error("give --data or set ERBENCH_DATA to the folder of ERBench's crafted tables")
    os.environ["ERBENCH_DATA"] = str(args.data)
    print("| dataset | kind | released | not reproduced |\n|---|---|---|---|")
    for dataset in args.datasets.split(","):
        for what, n, bad, examples in compare(args.logs, dataset, args.model, args.hop_model):
            print(f"| {dataset} | {what} | {n} | {bad} |")
            for e in examples[:args.examples]:
                print(f"|  | e.g. {e!r} |  |  |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
