"""Benchmark: GraphEval's true / false / IDK reader on real answers, before and after a change to it.

The answers are the ERBench authors' released binary logs (``binary/results/<model>/<dataset>.log`` of
DILAB-KAIST/ERBench, a different prompt: yes/no questions that models answer "Yes, ..." / "No, it is not true.
..."). An answer is *clear* when ERBench's reader (:func:`kgprobe.suites.erbench.verify.read_binary`, the shared
yes/no reader) reads it as yes or no; the measure is the share of clear answers that
:func:`kgprobe.scoring.answers.parse_true_false` makes ``unknown`` (lower is better; a GraphEval answer read as
unknown counts as IDK in the paper profile and as no credit in kgprobe's), with its Wilson interval, per model.

"Before" is the reader of another revision of this repository (``--before``, default the commit before the negation
and quoting fix): its ``kgprobe/scoring/answers.py`` is read with ``git show`` and imported on its own (the module
needs only the standard library), so both readers run in one process on the same answers. "After" is the reader of
the working tree.

    python benchmarks/grapheval_reader.py --logs /path/to/ERBench [--before 89c99dc] [--examples 5]

``--logs`` is a checkout of the repository or its bare git directory (read with ``git show HEAD:<path>``).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kgprobe.scoring.answers import explain_true_false  # noqa: E402
from kgprobe.scoring.stats import wilson_ci  # noqa: E402
from kgprobe.suites.erbench.verify import read_binary  # noqa: E402

#: the models whose binary logs cover the same five datasets, as the issue measured them
MODELS = {"gpt4": "GPT-4", "gpt35": "GPT-3.5", "llama": "Llama-2", "mistral": "Mistral"}
DATASETS = ("soccer", "airport", "music", "book", "movie")
#: the revision before the reader read "not true" and single-quoted statements (main when issue 40 was filed)
BEFORE = "89c99dc"
_ENTRY = re.compile(r"^(\d+)-(\d+)th question\nQ: ?(.*?)\nA:(.*?)\nGold Answer: ?(.*?)\n", re.DOTALL | re.MULTILINE)


def _log_text(root: Path, rel: str) -> str | None:
    path = root / rel
    if path.is_file():
        return path.read_text(encoding="utf-8", errors="replace")
    if (root / "HEAD").is_file():  # a bare git directory
        out = subprocess.run(["git", "-C", str(root), "show", f"HEAD:{rel}"], capture_output=True)
        return out.stdout.decode("utf-8", errors="replace") if out.returncode == 0 else None
    return None


def answers(root: Path, model: str) -> list[dict[str, str]]:
    """The (question, answer) pairs of one model's binary logs over :data:`DATASETS`."""
    out = []
    for dataset in DATASETS:
        text = _log_text(root, f"binary/results/{model}/{dataset}.log")
        if text is None:
            print(f"  (no log for {model}/{dataset})", file=sys.stderr)
            continue
        out += [{"dataset": dataset, "question": q.strip(), "text": a.strip()}
                for _, _, q, a, _ in _ENTRY.findall(text)]
    return out


def reader_at(revision: str) -> ModuleType:
    """``kgprobe/scoring/answers.py`` as it is at ``revision`` of this repository, imported as its own module."""
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{revision}:kgprobe/scoring/answers.py"],
                            capture_output=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / f"answers_{re.sub(r'[^0-9A-Za-z]', '_', revision)}.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def measure(root: Path, before: ModuleType, examples: int = 0, seed: int = 0) -> dict[str, dict[str, Any]]:
    rng = random.Random(seed)
    results = {}
    for model, name in MODELS.items():
        clear = [a for a in answers(root, model) if read_binary(a["text"], a["question"]) in ("yes", "no")]
        old = [before.explain_true_false(a["text"]) for a in clear]
        new = [explain_true_false(a["text"]) for a in clear]
        row: dict[str, Any] = {"model": name, "clear": len(clear)}
        for key, labels in (("before", old), ("after", new)):
            k = sum(1 for label, _ in labels if label == "unknown")
            row[key] = k
            row[f"{key}_ci"] = wilson_ci(k, len(clear))
            row[f"{key}_rules"] = collections.Counter(rule for label, rule in labels if label == "unknown")
        results[model] = row
        if examples:
            left = [(rule, a["text"]) for a, (label, rule) in zip(clear, new, strict=True) if label == "unknown"]
            for rule, text in rng.sample(left, min(examples, len(left))):
                print(f"  {name} still unknown ({rule}): {text[:150]!r}")
    return results


def table(results: dict[str, dict[str, Any]], before: str) -> str:
    def share(k: int, n: int, ci: tuple[float, float]) -> str:
        return f"{100 * k / n:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}] ({k:,})" if n else "–"

    lines = [f"| model | clear yes/no answers | unknown, reader of {before} | unknown, this reader |",
             "|---|---:|---:|---:|"]
    for r in results.values():
        lines.append(f"| {r['model']} | {r['clear']:,} | {share(r['before'], r['clear'], r['before_ci'])} | "
                     f"{share(r['after'], r['clear'], r['after_ci'])} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", required=True, type=Path, help="a DILAB-KAIST/ERBench checkout or its bare git directory")
    ap.add_argument("--before", default=BEFORE, help="the revision of this repository whose reader is 'before'")
    ap.add_argument("--examples", type=int, default=0, help="print this many answers per model still read unknown")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    results = measure(args.logs, reader_at(args.before), args.examples, args.seed)
    print(table(results, args.before))
    for r in results.values():
        print(f"  {r['model']}: unknown by rule, before {dict(r['before_rules'])}, after {dict(r['after_rules'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
