"""Benchmark: how GraphEval's statements read on FB15k-237 and CoDEx-S (issue 40's categories), for any version of
kgprobe.

    PYTHONPATH=<checkout> python benchmarks/grapheval_statements.py dump OUT.jsonl [--data ../shared/data]
    python benchmarks/grapheval_statements.py measure BEFORE.jsonl AFTER.jsonl [--examples 10] [--seed 0]

``dump`` renders every triple of FB15k-237 (train, valid, test; entity2text labels) and of CoDEx-S (train, valid,
test; relations.json labels, the shared partial entity labels) as the positive statement the suite writes under
the paper profile (every triple): the templates the suite proposes (``propose_templates``, with ``multi_valued``
and the default label clean-up where the checkout has them). Run it once with the old checkout on PYTHONPATH and
once with the new one. ``measure`` reads both dumps (the same triples in the same order) and prints, per KG, the
share of statements in each category with its Wilson interval, and ``--examples`` seeded pairs of statements.

Categories (issue 40; each a test on a statement, its template and its relation key):

* ``compound_double_of``: a compound (CVT) key read as "The X of the Y of {head}";
* ``co_relation_misread``: a co-relation (the last segment names the head's own role, or ``participant``) read as
  an attribute, "The <role> of ... of {head} is {tail}.";
* ``stray_s``: a lone "s" token in the statement;
* ``locale_suffix``: a label ending in "-GB" / "-US" (an English locale's region);
* ``inverted``: "is the <plural or verb>" ("Africa is the countries within South Sudan."), or a compound key read
  "{head} was <participle> {tail}" whose first segment does not name the intermediate node (the head is not the
  participle's subject: "Academy Award for Best Sound Editing was nominated for Minority Report."; a first
  segment that starts with the participle, "registered_with", names the head as its subject);
* ``unreadable``: fails any check of the readability gate (:mod:`kgprobe.suites.grapheval.readability`), among
  statements whose labels are not ids; ``unreadable_template``: fails a check other than ``unresolved_id``, among
  all statements (a template's fault, whatever the labels);
* ``compound_keys``: the statement's relation is a compound (CVT) path (for scale; not a fault);
* ``id_label``: the head or tail label is an id (a KG with partial labels).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _load(data: Path, which: str):
    import duckdb

    from kgprobe.kg.ingest import KGSource, load_kg

    con = duckdb.connect()
    if which == "fb15k-237":
        d = data / "kg" / "fb15k-237"
        load_kg(con, KGSource(triples=[d / "train.txt.gz", d / "valid.txt", d / "test.txt"], format="tsv",
                              entity_labels=d / "entity2text.txt"))
    else:
        d = data / "kg" / "codex"
        load_kg(con, KGSource(triples=[d / "codex-s" / f"{s}.txt" for s in ("train", "valid", "test")], format="tsv",
                              relation_labels=d / "relations" / "en" / "relations.json",
                              entity_labels=d / "partial_entity_labels_en.tsv",
                              entity_types=d / "types" / "entity2types.json",
                              type_labels=d / "types" / "en" / "types.json"))
    return con


def dump(out: Path, data: Path) -> None:
    import kgprobe.kg.verbalise as verbalise
    from kgprobe.suites.grapheval.templates import resolve_templates

    with out.open("w", encoding="utf-8") as fh:
        for kg in ("fb15k-237", "codex-s"):
            con = _load(data, kg)
            relations = con.execute("SELECT id, key, label FROM relations ORDER BY id").fetchall()
            many = verbalise.multi_valued(con) if hasattr(verbalise, "multi_valued") else None
            pairs = [(k, lab) for _, k, lab in relations]
            proposals = (verbalise.propose_templates(pairs, many=many) if many is not None
                         else verbalise.propose_templates(pairs))
            proposed = {k: p.template for k, p in proposals.items() if p.template is not None}
            templates = {t.relation: t.template for t in resolve_templates(relations, proposed=proposed)[0]}
            keys = {rid: k for rid, k, _ in relations}
            try:
                from kgprobe.kg.readable import clean_label
            except ImportError:
                def clean_label(text: str) -> str:
                    return text
            labels = {i: clean_label(lab) for i, lab in con.execute("SELECT id, label FROM entities").fetchall()}
            rows = con.execute("SELECT e.key, x.relation, t.key, x.head, x.tail FROM triples x JOIN entities e ON "
                               "e.id = x.head JOIN entities t ON t.id = x.tail ORDER BY e.key, x.relation, t.key"
                               ).fetchall()
            # the suite's rendering makes a doubled final full stop one, where the checkout does
            import inspect

            from kgprobe.suites.grapheval import statements
            one_stop = "${1}." in inspect.getsource(statements._render)
            for hk, rel, tk, h, t in rows:
                template = templates[rel]
                text = verbalise.render(template, labels[h], labels[t])
                if one_stop:
                    text = re.sub(r"([^.])\.\.$", r"\1.", text)
                fh.write(json.dumps({"kg": kg, "triple": [hk, keys[rel], tk], "template": template, "text": text,
                                     "head": labels[h], "tail": labels[t]}, ensure_ascii=False) + "\n")


_DOUBLE_OF = re.compile(r"^(?:One of the|The) .+ of the .+ of \{head\}")
_ATTRIBUTE = re.compile(r"^(?:One of the|The) .+ of \{head\} is \{tail\}\.$")
_LOCALE = re.compile(r"-(?:GB|US|UK|AU|CA|IE|NZ|IN|ZA)$")
_WAS = re.compile(r"^\{head\} was (\w+) ")


def _segments(key: str) -> tuple[list[str], list[str], list[str], list[str]]:
    halves = [h.strip("/").split("/") for h in key.split("./")]
    first, last = halves[0], halves[-1]
    return (first[-2].split("_"), first[-1].split("_"), last[-2].split("_"),
            last[-1].split("_")) if len(first) >= 2 and len(last) >= 2 else ([], [], [], [])


def _stem(words: list[str]) -> list[str]:
    return [w[:5] for w in words if w != "s"]


def categories(row: dict) -> set[str]:
    from kgprobe.kg.readable import is_id_like
    from kgprobe.suites.grapheval.readability import problems

    key, template, text = row["triple"][1], row["template"], row["text"]
    out = set()
    compound = "./" in key
    if compound:
        out.add("compound_keys")
    if compound and _DOUBLE_OF.search(template):
        out.add("compound_double_of")
    if compound:
        head_type, p1, cvt, p2 = _segments(key)
        if (_stem(p2) == _stem(head_type) or p2 == ["participant"]) and _ATTRIBUTE.match(template):
            out.add("co_relation_misread")
        m = _WAS.match(template)
        if m and p1[0] != m.group(1) and _stem(p1) != _stem(cvt) and not set(_stem(p1)) >= set(_stem(cvt)):
            out.add("inverted")
    found = problems(text, row["head"], row["tail"])
    if "dangling_s" in found:
        out.add("stray_s")
    if "is_the_verb" in found:
        out.add("inverted")
    if _LOCALE.search(row["head"] or "") or _LOCALE.search(row["tail"] or ""):
        out.add("locale_suffix")
    if is_id_like(row["head"] or "") or is_id_like(row["tail"] or ""):
        out.add("id_label")
    elif found:
        out.add("unreadable")
    if set(found) - {"unresolved_id"}:
        out.add("unreadable_template")
    return out


NAMES = ("compound_keys", "compound_double_of", "co_relation_misread", "stray_s", "locale_suffix", "inverted",
         "unreadable", "unreadable_template", "id_label")


def measure(before: Path, after: Path, examples: int, seed: int) -> None:
    from kgprobe.scoring.stats import wilson_ci

    def read(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    old, new = read(before), read(after)
    assert [r["triple"] for r in old] == [r["triple"] for r in new], "the dumps hold different triples"
    for kg in ("fb15k-237", "codex-s"):
        pairs = [(o, n) for o, n in zip(old, new, strict=True) if o["kg"] == kg]
        n = len(pairs)
        print(f"\n## {kg}: {n:,} statements (every triple, the paper profile's positives)\n")
        print("| category | before | after |\n|---|---|---|")
        cats = [(categories(o), categories(x)) for o, x in pairs]
        for name in NAMES:
            cells = []
            for side in (0, 1):
                k = sum(name in c[side] for c in cats)
                lo, hi = wilson_ci(k, n)
                cells.append(f"{k / n:.1%} [{lo:.1%}, {hi:.1%}] ({k:,})")
            print(f"| {name} | {cells[0]} | {cells[1]} |")
        rng = random.Random(seed)
        named = [p for p, c in zip(pairs, cats, strict=True) if "id_label" not in c[1]]
        print(f"\n{examples} seeded examples (statements between named entities), before -> after:\n")
        for o, x in rng.sample(named, min(examples, len(named))):
            print(f"- {o['text']}\n  -> {x['text']}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    m = sub.add_parser("measure")
    m.add_argument("before", type=Path)
    m.add_argument("after", type=Path)
    m.add_argument("--examples", type=int, default=10)
    m.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.cmd == "dump":
        dump(args.out, args.data)
    else:
        measure(args.before, args.after, args.examples, args.seed)


if __name__ == "__main__":
    sys.exit(main())
