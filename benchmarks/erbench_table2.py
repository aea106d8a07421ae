"""ERBench's Tables 2 and 4 reproduced from the authors' own answer logs: the released model answers of Soccer,
Airport, Music and Book (Table 2) and of the Movie & Director and Soccer & Olympic multi-hop questions, with and
without chain of thought (Table 4), read by kgprobe's readers and matcher with the suite's default settings, side
by side with the paper's numbers.

The answers come from a checkout of DILAB-KAIST/ERBench (``--logs``, the repository root): per model and dataset,
the binary answers ``binary/results/<model>/<dataset>.log`` and their known-entity answers
``binary/results/<model>/validate_<dataset>.log``; the multiple-choice answers
``multi_choice/results/<model>/<dataset>/choice_<n>.csv``, its ``.log`` or ``choice_<n>_validated.csv`` (whichever
answers the most entities; none is skipped for its size) and their known-entity answers
``multi_choice/dataset/validated/<model>/<dataset>.log``; the multi-hop answers
``binary/results/<model>/{movie_foreign_year,soccer_olympic}[_cot].log`` and their known-entity answers. Nothing
is generated.

What is kgprobe's here: which entities a model knows (:func:`~kgprobe.suites.erbench.knows_entity` on its answers to
the known-entity prompts, the prompt's values removed first, as in the suite), every answer read
(:func:`~kgprobe.suites.erbench.verify.read_binary_answer`, :func:`~kgprobe.suites.erbench.verify.read_choice`), the
rationale matched with the heuristics and aliases of the dataset's spec (``examples/erbench/<dataset>.yaml``) and
the measures (setting 1: the entities the model knows; "n/a" below 20, as the paper; Table 4 through the suite's own
:func:`~kgprobe.suites.erbench.scoring.metrics_for`). The readings are the suite's defaults (``known_reading``,
``answer_reading``, ``rationale_match``, ``rationale_ext``, ``hop_questions``: the released scripts' readings, which
produced the tables), each overridable by a flag (``--answer-reading kgprobe --rationale-match kgprobe`` for
kgprobe's own). Under each table the script prints how many cells are within 0.03 of the paper. The logs give the
question, the expected answer and the inferred value (their "gold entity"). ``BN(Y)`` is a log's question 0 of each
entity, ``BN(N)`` its question 1 (question 2, a rephrased basic question, is in neither table).

    ERBENCH_DATA=/path/to/ERBench python benchmarks/erbench_table2.py --logs /path/to/ERBench
"""

from __future__ import annotations

import argparse
import ast
import csv
import math
import os
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kgprobe.config import load_config  # noqa: E402
from kgprobe.suites.erbench.scoring import metrics_for  # noqa: E402
from kgprobe.suites.erbench.spec import ERSpec, load_spec  # noqa: E402
from kgprobe.suites.erbench.suite import ERBenchSettings  # noqa: E402
from kgprobe.suites.erbench.verify import (  # noqa: E402
    BinaryAnswer,
    ChoiceAnswer,
    ERMetrics,
    knows_entity,
    measures,
    read_binary_answer,
    read_choice,
    value_mentioned,
)

#: the suite's defaults (``suites.erbench``): the reproduction runs with them unless told otherwise
DEFAULTS = {k: ERBenchSettings.model_fields[k].default
            for k in ("known_reading", "answer_reading", "rationale_match", "rationale_ext", "hop_questions")}

DATASETS = ("soccer", "airport", "music", "book")
MODELS = {"gpt35": "GPT-3.5", "gpt4": "GPT-4", "llama": "Llama2", "gemini": "Gemini-Pro", "claude": "Claude-3-Sonnet",
          "mistral": "Mistral"}
N_CHOICES = {"soccer": 4, "airport": 4, "music": 2, "book": 3}
MIN_KNOWN = 20
#: the crafted tables the prompts were made from (row i = entity i), for the values a known-entity answer may repeat
BINARY_TABLE = {"soccer": "binary/fifa_data/crafted/fifa_df.csv", "airport": "binary/airport_data/crafted/airport_df.csv",
                "music": "binary/music_data/crafted/music_df.csv", "book": "binary/book_data/crafted/book_df.csv"}
MC_TABLE = {d: f"multi_choice/dataset/crafted/{d}.csv" for d in DATASETS}

#: Table 2 of the paper (setting 1), per model: dataset -> question type -> (A, R, AR, H); None is "n/a".
PAPER: dict[str, dict[str, dict[str, tuple[float, float, float, float] | None]]] = {
    "gpt35": {"soccer": {"BN(Y)": (.35, .28, .24, .64), "BN(N)": (.00, .02, .00, 1.0), "MC": (.83, .60, .55, .17)},
              "airport": {"BN(Y)": (.13, .01, .01, .67), "BN(N)": (.00, .00, .00, .97), "MC": (.71, .44, .44, .29)},
              "music": {"BN(Y)": (.58, .36, .34, .27), "BN(N)": (.20, .18, .14, .76), "MC": (.91, .68, .66, .09)},
              "book": {"BN(Y)": (.77, .13, .12, .05), "BN(N)": (.01, .01, .00, .94), "MC": (.55, .55, .12, .45)}},
    "gpt4": {"soccer": {"BN(Y)": (.47, .70, .41, .38), "BN(N)": (.19, .49, .17, .04), "MC": (.91, .69, .69, .02)},
             "airport": {"BN(Y)": (.68, .23, .20, .32), "BN(N)": (.11, .16, .03, .80), "MC": (.96, .90, .90, .04)},
             "music": {"BN(Y)": (.83, .74, .68, .15), "BN(N)": (.63, .56, .54, .01), "MC": (.97, .87, .86, .01)},
             "book": {"BN(Y)": (.41, .21, .19, .08), "BN(N)": (.02, .02, .01, .01), "MC": (.48, .34, .34, .01)}},
    "llama": {"soccer": {"BN(Y)": (.02, .18, .02, .98), "BN(N)": (1.0, .62, .62, .00), "MC": None},
              "airport": {"BN(Y)": (.00, .00, .00, 1.0), "BN(N)": (1.0, .02, .02, .00), "MC": None},
              "music": {"BN(Y)": (.76, .31, .29, .24), "BN(N)": (1.0, .29, .29, .00), "MC": (.91, .71, .67, .09)},
              "book": {"BN(Y)": (.02, .02, .00, .98), "BN(N)": (1.0, .05, .05, .00), "MC": None}},
    "gemini": {"soccer": {"BN(Y)": (.01, .06, .00, .17), "BN(N)": (.00, .05, .00, .29), "MC": (.89, .55, .51, .11)},
               "airport": {"BN(Y)": (.00, .00, .00, .00), "BN(N)": (.00, .00, .00, .42), "MC": (.76, .33, .33, .24)},
               "music": {"BN(Y)": (.51, .14, .11, .02), "BN(N)": (.02, .05, .01, .10), "MC": (.89, .55, .54, .11)},
               "book": {"BN(Y)": (.00, .00, .00, .01), "BN(N)": (.00, .00, .00, .01), "MC": (.47, .13, .11, .53)}},
    "claude": {"soccer": {"BN(Y)": (.21, .36, .17, .30), "BN(N)": (.01, .02, .01, .00), "MC": None},
               "airport": {"BN(Y)": (.52, .08, .05, .00), "BN(N)": (.01, .07, .01, .00), "MC": (.91, .80, .76, .09)},
               "music": {"BN(Y)": (.46, .30, .26, .33), "BN(N)": (.38, .23, .23, .01), "MC": (.97, .93, .90, .03)},
               "book": {"BN(Y)": (.24, .18, .14, .10), "BN(N)": (.00, .06, .00, .00), "MC": None}},
    "mistral": {"soccer": {"BN(Y)": (.54, .10, .06, .46), "BN(N)": (.99, .18, .18, .01), "MC": (.44, .21, .19, .56)},
                "airport": {"BN(Y)": (.71, .00, .00, .29), "BN(N)": (1.0, .00, .00, .00), "MC": (.13, .09, .05, .87)},
                "music": {"BN(Y)": (.41, .03, .03, .54), "BN(N)": (.96, .04, .04, .00), "MC": (.56, .37, .14, .44)},
                "book": {"BN(Y)": (.16, .01, .00, .83), "BN(N)": (.98, .01, .01, .02), "MC": (.40, .04, .03, .60)}},
}
METRICS = ("A", "R", "AR", "H")
QTYPES = ("BN(Y)", "BN(N)", "MC")

#: Table 4 of the paper (setting 1), per model: (path, CoT) -> question type -> (A, R-ext, AR-ext per hop, H).
#: Mistral is not in Table 4 (it knows fewer than 20 entities).
HOP_LOGS = {"movie_director": "movie_foreign_year", "soccer_olympic": "soccer_olympic"}
HOP_NAMES = {"movie_director": "Movie & Director", "soccer_olympic": "Soccer & Olympic"}
PAPER4: dict[str, dict[tuple[str, bool], dict[str, tuple[float, float, tuple[float, ...], float]]]] = {
    "gpt35": {("movie_director", False): {"BN(Y)": (.74, .92, (.73, .70), .21), "BN(N)": (.00, .92, (.00, .00), .96)},
              ("movie_director", True): {"BN(Y)": (.36, .95, (.35, .34), .62), "BN(N)": (.54, .79, (.53, .50), .27)},
              ("soccer_olympic", False): {"BN(Y)": (.81, .09, (.01, .05, .03), .17),
                                          "BN(N)": (.82, .15, (.00, .00, .00), .18)},
              ("soccer_olympic", True): {"BN(Y)": (.59, .67, (.47, .54, .54), .33),
                                         "BN(N)": (.76, .60, (.28, .31, .31), .21)}},
    "gpt4": {("movie_director", False): {"BN(Y)": (.59, .98, (.59, .59), .41), "BN(N)": (.40, .98, (.40, .39), .60)},
             ("movie_director", True): {"BN(Y)": (.80, .98, (.80, .79), .20), "BN(N)": (.66, .98, (.66, .65), .34)},
             ("soccer_olympic", False): {"BN(Y)": (.46, .59, (.38, .42, .41), .25),
                                         "BN(N)": (.55, .60, (.18, .19, .19), .13)},
             ("soccer_olympic", True): {"BN(Y)": (.79, .80, (.52, .55, .55), .20),
                                        "BN(N)": (.70, .80, (.68, .73, .73), .29)}},
    "llama": {("movie_director", False): {"BN(Y)": (.02, .95, (.02, .02), .98), "BN(N)": (1.0, .95, (.98, .92), .00)},
              ("movie_director", True): {"BN(Y)": (.79, .97, (.78, .77), .21), "BN(N)": (.06, .95, (.06, .05), .94)},
              ("soccer_olympic", False): {"BN(Y)": (.88, .25, (.00, .00, .00), .12),
                                          "BN(N)": (.12, .30, (.44, .55, .44), .88)},
              ("soccer_olympic", True): {"BN(Y)": (.84, .47, (.12, .14, .13), .15),
                                         "BN(N)": (.33, .56, (.45, .62, .62), .65)}},
    "gemini": {("movie_director", False): {"BN(Y)": (.19, .42, (.19, .19), .02), "BN(N)": (.01, .60, (.01, .01), .33)},
               ("movie_director", True): {"BN(Y)": (.31, .40, (.31, .30), .00), "BN(N)": (.02, .28, (.02, .01), .20)},
               ("soccer_olympic", False): {"BN(Y)": (.00, .01, (.00, .00, .00), .00),
                                           "BN(N)": (.00, .07, (.00, .00, .00), .00)},
               ("soccer_olympic", True): {"BN(Y)": (.18, .60, (.66, .73, .75), .60),
                                          "BN(N)": (.41, .46, (.16, .15, .21), .15)}},
    "claude": {("movie_director", False): {"BN(Y)": (.44, .95, (.44, .42), .50), "BN(N)": (.57, .95, (.57, .55), .37)},
               ("movie_director", True): {"BN(Y)": (.56, .96, (.56, .53), .44), "BN(N)": (.02, .95, (.02, .02), .97)},
               ("soccer_olympic", False): {"BN(Y)": (.57, .58, (.21, .23, .18), .20),
                                           "BN(N)": (1.0, .26, (.33, .34, .33), .18)},
               ("soccer_olympic", True): {"BN(Y)": (.21, .39, (.58, .60, .59), .22),
                                          "BN(N)": (.14, .27, (.39, .40, .40), .14)}},
}


# ------------------------------------------------------------------------------------------------------ the logs
def _table_rows(data: Path, rel: str) -> list[list[str]]:
    with open(data / rel, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[1:]


def _binary_log(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    pattern = re.compile(r"^(\d+)-(\d+)th question\nQ: ?(.*?)\nA:(.*?)\nGold Answer: ?(.*?)\nGold Entity: ?(.*?)\n",
                         re.DOTALL | re.MULTILINE)
    return [{"entity": int(e), "q": int(q), "question": question.strip(), "text": answer.strip(),
             "expected": gold.strip().lower(), "inferred": entity.strip()}
            for e, q, question, answer, gold, entity in pattern.findall(text)]


def _binary_known(path: Path, table: list[list[str]] | dict[int, list[str]], rule: str) -> dict[int, bool]:
    """Entity -> known, from a known-entity log; ``table`` gives each entity's values (a table's rows, or a map),
    removed from the answer before it is read."""
    text = path.read_text(encoding="utf-8", errors="replace")
    parts = re.split(r"(?m)^(\d+)th question\n", text)
    out = {}
    for i in range(1, len(parts) - 1, 2):
        entity, body = int(parts[i]), parts[i + 1]
        answer = body.split("\nA:", 1)[1] if "\nA:" in body else ""
        if isinstance(table, dict):
            names = table.get(entity, [])
        else:
            names = [c for c in table[entity] if c] if entity < len(table) else []
        out[entity] = knows_entity(answer.strip(), names=names, rule=rule)
    return out


def _mc_known(path: Path, table: list[list[str]], rule: str) -> dict[int, bool]:
    text = path.read_text(encoding="utf-8", errors="replace")
    pattern = re.compile(r"^(\d+)-(\d+)th question\n<Question>.*?<Answer> ?\n(.*?)(?=^\d+-\d+th question\n|^=+\n|\Z)",
                         re.DOTALL | re.MULTILINE)
    out: dict[int, bool] = {}
    for e, _k, answer in pattern.findall(text):
        e = int(e)
        names = [c for c in table[e] if c] if e < len(table) else []
        out[e] = out.get(e, True) and knows_entity(answer.strip(), names=names, rule=rule)
    return out


def _mc_log(path: Path) -> list[dict[str, Any]]:
    """The answers of a released MC log (where its CSV was not released): entity, question, options, gold answer
    and gold entity per block."""
    text = path.read_text(encoding="utf-8", errors="replace")
    pattern = re.compile(r"^(\d+)-(\d+)th question\n<Question> ?\n(.*?)<Answer> ?\n(.*?)<Gold Answer> ?\n(.*?)"
                         r"<Gold Entity> ?\n(.*?)(?=^=+\n|^\d+-\d+th question\n|\Z)", re.DOTALL | re.MULTILINE)
    out = []
    for e, _q, question, answer, gold, entity in pattern.findall(text):
        gold = gold.strip()
        out.append({"entity": int(e), "text": answer.strip(), "n_options": len(re.findall(r"(?m)^Option \d:", question)),
                    "expected": "none" if gold == "There is no answer" else gold,
                    "inferred": entity.replace("=", "").strip()})
    return out


def _mc_answers(root: Path, model: str, dataset: str) -> tuple[list[dict[str, Any]], str]:
    """The MC answers of a model and where they come from: of the full CSV, its log and the CSV of the entities the
    authors found known (``choice_<n>_validated.csv``), the one that answers the most entities (a CSV released
    with a header or a few rows only loses to the log), the first of them on a tie. No file is skipped for its
    size: Claude-3-Sonnet's Soccer answers are a 95 KB ``choice_4_validated.csv``."""
    folder = root / "multi_choice" / "results" / model / dataset
    n = N_CHOICES[dataset]
    csv.field_size_limit(1 << 30)
    best: tuple[list[dict[str, Any]], str] = ([], "")
    for path, source in ((folder / f"choice_{n}.csv", "all"), (folder / f"choice_{n}.log", "log"),
                         (folder / f"choice_{n}_validated.csv", "their known")):
        if not path.is_file():
            continue
        if path.suffix == ".log":
            rows = _mc_log(path)
        else:
            with open(path, encoding="utf-8", newline="") as fh:
                rows = [{"entity": int(r["entity_idx"]), "text": r["model_response_all"], "expected": r["gold_answer"],
                         "inferred": r["gold_entity"], "n_options": len(ast.literal_eval(r["choices"]))}
                        for r in csv.DictReader(fh)]
        if len({r["entity"] for r in rows}) > len({r["entity"] for r in best[0]}):
            best = (rows, source)
    return best


# ------------------------------------------------------------------------------------------------------ scoring
def _spec(dataset: str) -> ERSpec:
    cfg = load_config(REPO / "examples" / "erbench" / f"{dataset}.yaml")
    return load_spec(cfg.suite("erbench").db, config_dir=cfg.path.parent)


def _binary_cell(spec: ERSpec, rows: list[dict[str, Any]], readings_of: dict[str, str]) -> ERMetrics:
    fd = next(f for f in spec.fds if f.basic)
    col = fd.rhs[0]
    readings = [read_binary_answer(BinaryAnswer(text=r["text"], expected=r["expected"], inferred=(r["inferred"],),
                                                question=r["question"],
                                                aliases={r["inferred"]: spec.aliases_of(
                                                    fd.relation, col, r["inferred"],
                                                    rationale_match=readings_of["rationale_match"])}),
                                   match=[fd.match.get(col, ())], **readings_of) for r in rows]
    return measures(readings)


def _mc_cell(spec: ERSpec, dataset: str, rows: list[dict[str, Any]], rationale_match: str) -> ERMetrics:
    fd = next(f for f in spec.fds if f.mc)
    readings = []
    for r in rows:
        expected = str(r["expected"]).strip()
        inferred, aliases, kinds = (), {}, ()
        if expected.isdigit():
            col = fd.rhs[int(expected) - 1]
            value = str(r["inferred"]).strip()
            others: tuple[str, ...] = ()
            if dataset == "airport" and col == "country_code" and "," in value:
                value, country = (x.strip() for x in value.split(",", 1))   # the log's gold: "CL, Chile"
                others = (country,)
            inferred = (value,)
            aliases = {value: (*others, *spec.aliases_of(fd.relation, col, value, rationale_match=rationale_match))}
            kinds = fd.match.get(col, ())
        readings.append(read_choice(ChoiceAnswer(text=r["text"], n_options=r["n_options"], expected=expected,
                                                 inferred=inferred, aliases=aliases), match=[kinds],
                                    rationale_match=rationale_match))
    return measures(readings)


def reproduce(root: Path, data: Path, models: list[str], datasets: list[str], *,
              rule: str = DEFAULTS["known_reading"], answer_reading: str = DEFAULTS["answer_reading"],
              rationale_match: str = DEFAULTS["rationale_match"]) -> dict[tuple[str, str, str], Any]:  # fmt: skip
    """(model, dataset, qtype) -> (ERMetrics or None for n/a, known entities, answers' source), or "no logs"."""
    readings_of = {"answer_reading": answer_reading, "rationale_match": rationale_match}
    out: dict[tuple[str, str, str], Any] = {}
    for dataset in datasets:
        spec = _spec(dataset)
        binary_table, mc_table = _table_rows(data, BINARY_TABLE[dataset]), _table_rows(data, MC_TABLE[dataset])
        for model in models:
            log = root / "binary" / "results" / model / f"{dataset}.log"
            val = root / "binary" / "results" / model / f"validate_{dataset}.log"
            if log.is_file() and val.is_file():
                known = _binary_known(val, binary_table, rule)
                n_known = sum(known.values())
                by_q = defaultdict(list)
                for r in _binary_log(log):
                    if known.get(r["entity"]):
                        by_q[r["q"]].append(r)
                for q, qtype in ((0, "BN(Y)"), (1, "BN(N)")):
                    cell = _binary_cell(spec, by_q[q], readings_of) if n_known >= MIN_KNOWN else None
                    out[(model, dataset, qtype)] = (cell, n_known, "all")
            else:
                out[(model, dataset, "BN(Y)")] = out[(model, dataset, "BN(N)")] = "no logs"
            val = root / "multi_choice" / "dataset" / "validated" / model / f"{dataset}.log"
            answers, source = _mc_answers(root, model, dataset)
            if answers and val.is_file():
                known = _mc_known(val, mc_table, rule)
                n_known = sum(known.values())
                rows = [r for r in answers if known.get(r["entity"])]
                out[(model, dataset, "MC")] = (_mc_cell(spec, dataset, rows, rationale_match)
                                               if n_known >= MIN_KNOWN and rows
                                               else None, n_known, source)
            else:
                out[(model, dataset, "MC")] = "no logs"
    return out


# ------------------------------------------------------------------------------------------------------ Table 4
#: per multi-hop path: the spec file, and each hop's column (the join values, then the target)
HOP_COLUMNS = {"movie_director": ("movie", ("directors.name", "directors.birth_year")),
               "soccer_olympic": ("soccer", ("soccer.club", "clubs.city", "olympics.year"))}


def _hop_values(path: str, gold: str) -> list[str]:
    """A log's "Gold Entity" as the path's hop values ('' where the path has no value: a city that never hosted)."""
    if path == "movie_director":                        # "James Cameron, 1954"
        name, _, year = gold.rpartition(",")
        return [name.strip(), year.strip()]
    # "FC Barcelona, barcelona, 1992," / "Juventus, turin,  " / "D.C. United, washington, d.c.," (a city with a comma)
    parts = [x.strip() for x in gold.split(",")]
    years = [x for x in parts[1:] if re.fullmatch(r"\d{4}", x)]
    city = ", ".join(x for x in parts[1:] if x and x not in years)
    return [parts[0], city, ",".join(years)]


def _hop_flags(spec: ERSpec, path: str, values: list[str], text: str, rationale_match: str) -> list[bool | None]:
    hop = next(h for h in spec.multihop if h.dataset == path)
    out: list[bool | None] = []
    for col, value in zip(HOP_COLUMNS[path][1], values):
        if not value:
            out.append(None)
            continue
        relation, column = col.split(".")
        kinds = hop.match.get(col, ())
        out.append(value_mentioned(value, text, club="club" in kinds, last_name="last_name" in kinds,
                                   first_name="first_name" in kinds, as_list="," in value,
                                   first_word="first_word" in kinds, aliases=spec.aliases_of(relation, column, value,
                                                                                       rationale_match=rationale_match),
                                   rationale_match=rationale_match))
    return out


def reproduce_multihop(root: Path, models: list[str], *, rule: str = DEFAULTS["known_reading"],
                       rationale_ext: str = DEFAULTS["rationale_ext"],
                       hop_questions: str = DEFAULTS["hop_questions"], answer_reading: str = DEFAULTS["answer_reading"],
                       rationale_match: str = DEFAULTS["rationale_match"],
                       ) -> dict[tuple[str, str, bool, str], Any]:  # fmt: skip
    """(model, path, CoT, qtype) -> ({A, R-ext, AR-ext: [per hop], H} or None for n/a, known entities), or "no
    logs": the released multi-hop answers read with kgprobe's readers and measured by the suite's own
    :func:`~kgprobe.suites.erbench.scoring.metrics_for` (setting 1) with the given readings."""
    out: dict[tuple[str, str, bool, str], Any] = {}
    for path, log_name in HOP_LOGS.items():
        spec = _spec(HOP_COLUMNS[path][0])
        for model in models:
            val = root / "binary" / "results" / model / f"validate_{log_name}.log"
            for cot in (False, True):
                log = root / "binary" / "results" / model / f"{log_name}{'_cot' if cot else ''}.log"
                if not (log.is_file() and val.is_file()):
                    for qtype in ("BN(Y)", "BN(N)"):
                        out[(model, path, cot, qtype)] = "no logs"
                    continue
                rows = _binary_log(log)
                names: dict[int, list[str]] = {}
                for r in rows:
                    names.setdefault(r["entity"], [v for v in _hop_values(path, r["inferred"]) if v])
                known = _binary_known(val, names, rule)
                n_known = sum(known.values())
                votes = []
                for r in rows:
                    if r["q"] not in (0, 1) or not known.get(r["entity"]):
                        continue
                    values = _hop_values(path, r["inferred"])
                    reading = read_binary_answer(BinaryAnswer(text=r["text"], expected=r["expected"],
                                                              inferred=tuple(v for v in values if v),
                                                              question=r["question"]),
                                                 answer_reading=answer_reading, rationale_match=rationale_match)
                    votes.append({"item_id": f"{r['entity']}-{r['q']}", "model": model, "task": "multihop",
                                  "dataset": path, "qtype": ("BN(Y)", "BN(N)")[r["q"]], "hops": len(values),
                                  "known_group": str(r["entity"]), "correct": reading.correct,
                                  "missing": reading.missing, "rationale": reading.rationale,
                                  "hop_rationale": _hop_flags(spec, path, values, r["text"], rationale_match)})
                rows_m = metrics_for(votes, model=model, perturbation="none", entities="known",
                                     rationale_ext_reading=rationale_ext, hop_questions=hop_questions)
                for qtype in ("BN(Y)", "BN(N)"):
                    if n_known < MIN_KNOWN:
                        out[(model, path, cot, qtype)] = (None, n_known)
                        continue
                    mine = [m for m in rows_m if m["breakdown"].get("qtype") == qtype]

                    def one(metric: str, mine: list[dict[str, Any]] = mine) -> float:
                        return next((m["value"] for m in mine if m["metric"] == metric and "hop" not in m["breakdown"]),
                                    math.nan)

                    hops = sorted((int(m["breakdown"]["hop"]), m["value"]) for m in mine
                                  if m["metric"] == "hop_answer_rationale_accuracy")
                    out[(model, path, cot, qtype)] = ({"A": one("answer_accuracy"), "R-ext": one("rationale_ext"),
                                                       "AR-ext": [v for _, v in hops],
                                                       "H": one("hallucination_rate")}, n_known)
    return out


def _close(ours: float | None, paper: float | None) -> bool:
    return ours is None or paper is None or math.isnan(ours) or abs(ours - paper) <= 0.03 + 1e-9


def table4(results: dict[tuple[str, str, bool, str], Any], models: list[str]) -> str:
    """A Markdown table of Table 4: per model and measure, each path x CoT x question type as "ours / paper" (AR-ext
    per hop, "a/b/c"; an asterisk where any number differs by more than 0.03), and the known entities."""
    cols = [(path, cot, q) for path in HOP_LOGS for cot in (False, True) for q in ("BN(Y)", "BN(N)")]
    head = "| model | measure | " + " | ".join(
        f"{HOP_NAMES[p]} {'w/ CoT' if c else 'w/o CoT'} {q}" for p, c, q in cols) + " |"
    lines = [head, "|" + "---|" * (2 + len(cols))]
    for model in models:
        if model not in PAPER4:
            continue
        for i, metric in enumerate(("A", "R-ext", "AR-ext", "H")):
            cells = []
            for path, cot, q in cols:
                paper = PAPER4[model][(path, cot)][q]
                p = paper[i]
                got = results.get((model, path, cot, q))
                if got is None or got == "no logs":
                    cells.append(f"- / {_fmt(p) if metric != 'AR-ext' else '/'.join(_fmt(x) for x in p)}")
                    continue
                ours = None if got[0] is None else got[0][metric]
                if metric == "AR-ext":
                    ours_t = "n/a" if ours is None else "/".join(_fmt(x) for x in ours)
                    ok = ours is None or (len(ours) == len(p) and all(_close(a, b) for a, b in zip(ours, p)))
                    cells.append(f"{ours_t} / {'/'.join(_fmt(x) for x in p)}{'' if ok else '*'}")
                else:
                    cells.append(f"{_fmt(ours)} / {_fmt(p)}{'' if _close(ours, p) else '*'}")
            lines.append(f"| {MODELS[model] if i == 0 else ''} | {metric} | " + " | ".join(cells) + " |")
        known = [str(got[1]) if isinstance(got := results.get((model, p, c, q)), tuple) else "-" for p, c, q in cols]
        lines.append("| | known | " + " | ".join(known) + " |")
    return "\n".join(lines)


def count_close(markdown: str) -> tuple[int, int]:
    """(cells within 0.03, cells the paper and the logs both give) of a table of :func:`table` or :func:`table4`:
    the "ours / paper" cells where neither side is "n/a" or "-"; a starred cell is off."""
    close = total = 0
    for line in markdown.splitlines():
        for cell in line.split("|"):
            ours, sep, paper = cell.strip().partition(" / ")
            if not sep or any(x in ("n/a", "-") or "n/a" in x for x in (ours, paper.rstrip("*"))):
                continue
            total += 1
            close += not paper.endswith("*")
    return close, total


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    text = f"{x:.2f}"
    return text.replace("0.", ".", 1) if text.startswith("0.") else f"{x:.1f}"


def table(results: dict[tuple[str, str, str], Any], models: list[str], datasets: list[str]) -> str:
    """A Markdown table: per model and measure, each dataset x question type as "ours / paper" (an asterisk where
    they differ by more than 0.03), and each cell's known entities."""
    head = "| model | measure | " + " | ".join(f"{d} {q}" for d in datasets for q in QTYPES) + " |"
    lines = [head, "|" + "---|" * (2 + len(datasets) * len(QTYPES))]
    for model in models:
        for i, metric in enumerate(METRICS):
            cells = []
            for d in datasets:
                for q in QTYPES:
                    paper = PAPER.get(model, {}).get(d, {}).get(q)
                    p = None if paper is None else paper[i]
                    got = results.get((model, d, q))
                    if got == "no logs":
                        cells.append(f"- / {_fmt(p)}")
                        continue
                    ours = None if got[0] is None else getattr(got[0], metric)
                    star = "*" if ours is not None and p is not None and abs(ours - p) > 0.03 + 1e-9 else ""
                    cells.append(f"{_fmt(ours)} / {_fmt(p)}{star}")
            lines.append(f"| {MODELS[model] if i == 0 else ''} | {metric} | " + " | ".join(cells) + " |")
        known = []
        for d in datasets:
            for q in QTYPES:
                got = results.get((model, d, q))
                known.append((str(got[1]) + ("" if got[2] in ("all", "log") else "\u2020"))
                             if isinstance(got, tuple) else "-")
        lines.append(f"| | known | " + " | ".join(known) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", required=True, type=Path, help="root of a DILAB-KAIST/ERBench checkout (the answer logs)")
    ap.add_argument("--data", type=Path, default=os.environ.get("ERBENCH_DATA"),
                    help="the crafted tables (default: $ERBENCH_DATA)")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--known", default=DEFAULTS["known_reading"], choices=("released", "only_yes"),
                    help="how a known-entity answer is read (default: the suite's known_reading)")
    ap.add_argument("--rationale-ext", default=DEFAULTS["rationale_ext"], choices=("per_question", "per_hop"),
                    help="Table 4's R-ext reading (default: the suite's rationale_ext)")
    ap.add_argument("--hop-questions", default=DEFAULTS["hop_questions"], choices=("complete", "each"),
                    help="the questions Table 4's per-hop AR-ext counts (default: the suite's hop_questions)")
    ap.add_argument("--answer-reading", default=DEFAULTS["answer_reading"], choices=("released", "kgprobe"),
                    help="how a binary answer is read (default: the suite's answer_reading)")
    ap.add_argument("--rationale-match", default=DEFAULTS["rationale_match"], choices=("released", "kgprobe"),
                    help="how a rationale is matched (default: the suite's rationale_match)")
    args = ap.parse_args()
    if args.data is None:
        ap.error("give --data or set ERBENCH_DATA to the folder of ERBench's crafted tables")
    os.environ["ERBENCH_DATA"] = str(args.data)
    models, datasets = args.models.split(","), args.datasets.split(",")
    results = reproduce(args.logs, Path(args.data), models, datasets, rule=args.known,
                        answer_reading=args.answer_reading, rationale_match=args.rationale_match)
    text2 = table(results, models, datasets)
    print(text2)
    close, total = count_close(text2)
    print(f"\nTable 2: {close} of the {total} cells the paper and the logs both give are within 0.03 "
          f"(answer_reading {args.answer_reading}, rationale_match {args.rationale_match}).")
    print("\nEach cell: kgprobe on the released answers / the paper's Table 2 (setting 1: entities the model knows; "
          "n/a: fewer than 20). * differs by more than 0.03. known: entities the model knows (kgprobe's reading, "
          f"rule {args.known}); \u2020: only the answers on the entities the authors found known were released.\n")
    hop = reproduce_multihop(args.logs, models, rule=args.known, rationale_ext=args.rationale_ext,
                             hop_questions=args.hop_questions, answer_reading=args.answer_reading,
                             rationale_match=args.rationale_match)
    text4 = table4(hop, models)
    print(text4)
    close, total = count_close(text4)
    print(f"\nTable 4: {close} of its {total} cells are within 0.03 (an AR-ext cell counts once).")
    print(f"\nTable 4 (setting 1): A, R-ext ({args.rationale_ext}), AR-ext per hop (over {args.hop_questions} "
          "paths), H; kgprobe on the released answers / the paper. * some number differs by more than 0.03.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
