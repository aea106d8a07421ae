"""A suite is a plug-in: a toy suite written here, registered, and run through the shared lane (items, answers,
scores, oracle check), the leaderboard and the report, without any change to generation, scoring or report code."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import yaml

from kgprobe.generation import Prompt
from kgprobe.suites import register, unregister
from kgprobe.suites.base import (ITEM_SCHEMA, Headline, ItemSource, ItemsResult, Sampling, Suite, content_id,
                                 metric_row, table)

SAMPLE = Path(__file__).resolve().parents[2] / "examples"

# ------------------------------------------------------------------ the whole suite: under 100 lines


class Capitals(Suite):
    """Is X the capital of Y? True from the KG's capital_of triples, and corrupted with another country."""

    name = "capitals"
    title = "Capitals: a toy suite"
    headline = Headline("discriminative", "accuracy", "accuracy (yes/no)")
    sampling = Sampling(n=1, temperature=0.0)

    def items(self, source: ItemSource) -> ItemsResult:
        triples = source.con.execute(
            "SELECT h.label, t.label, t.id FROM triples x JOIN relations r ON r.id = x.relation "
            "JOIN entities h ON h.id = x.head JOIN entities t ON t.id = x.tail "
            "WHERE r.key = 'capital_of' ORDER BY h.label, t.label").fetchall()
        countries = sorted({c for _, c, _ in triples})
        capital_of = {(city, country) for city, country, _ in triples}
        rows = []
        for k, (city, country, _) in enumerate(triples):
            other = next(c for c in countries[k % len(countries):] + countries if (city, c) not in capital_of)
            for target, expected in ((country, "yes"), (other, "no")):
                rows.append({"item_id": content_id(source.snapshot_id, city, target), "suite": self.name,
                             "task": "discriminative", "answer_format": "yes_no",
                             "question": f"Is {city} the capital of {target}?", "expected": expected,
                             "group_id": content_id(city), "breakdown": {"premise": "true" if expected == "yes" else "corrupted"},
                             "evidence": json.dumps({"snapshot_id": source.snapshot_id, "triple": [city, "capital_of", country]})})
        return ItemsResult(table(rows, ITEM_SCHEMA))

    def cross_model_metrics(self, votes, items, *, settings=None, models=None) -> list[dict]:
        """Accuracy on the questions every model decided (a metric no single partition can compute)."""
        models = {v["model"] for v in votes}
        decided = {i for i in items if all(any(v["item_id"] == i and v["decided"] and v["model"] == m for v in votes)
                                           for m in models)}
        return [metric_row(model=m, perturbation="none", suite=self.name, task="discriminative", judge="",
                           metric="accuracy_all_decided", breakdown={}, item_ids=sorted(decided),
                           flags=[v["correct"] for v in sorted(votes, key=lambda v: v["item_id"])
                                  if v["model"] == m and v["item_id"] in decided]) for m in sorted(models)]

    def prompts(self, items, context=None) -> list[Prompt]:
        return [Prompt(item_id=it["item_id"], text=f'{it["question"]} Answer "Yes" or "No".', template_id="capitals-v1",
                       gold=it["expected"], answer_kind="yn") for it in items]


# ------------------------------------------------------------------ running it


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    import dagster as dg

    from pipelines.definitions import build_definitions

    register(Capitals())
    tmp = tmp_path_factory.mktemp("plugin")
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    project = {"name": "plugin", "seed": 0, "warehouse": str(tmp / "warehouse" / "kgprobe.duckdb"), "kgs": cfg["kgs"],
               "models": [m for m in cfg["models"] if m["name"] in ("oracle", "always-yes", "random")],
               "suites": {"capitals": {}}, "scoring": {"judges": []}}
    path = SAMPLE / f".test-{tmp.name}.yaml"  # beside the sample so its relative data paths resolve
    path.write_text(yaml.safe_dump(project), encoding="utf-8")
    try:
        defs = build_definitions(str(path))
        results = {}
        with dg.DagsterInstance.ephemeral() as instance:
            for job, keys in (("ingest", [None]), ("capitals_questions", [None]),
                              ("closed_book", ["oracle", "always-yes", "random"]), ("publish", [None])):
                for key in keys:
                    results[(job, key)] = defs.resolve_job_def(job).execute_in_process(instance=instance, partition_key=key)
        yield defs, results, tmp / "warehouse"
    finally:
        path.unlink()
        unregister("capitals")


@pytest.mark.slow
def test_the_toy_suite_runs_through_every_shared_stage(run) -> None:
    defs, results, wh = run
    assert all(r.success for r in results.values()), [k for k, r in results.items() if not r.success]
    graph = defs.resolve_asset_graph()
    groups = {k.to_user_string(): graph.get(k).group_name for k in graph.get_all_asset_keys()}
    assert {k for k, g in groups.items() if g == "capitals"} == {"capitals_items", "capitals_responses", "capitals_scores"}
    checks = {e.asset_check_key.name: e.passed for r in results.values() for e in r.get_asset_check_evaluations()}
    assert checks["capitals_scores_oracle_is_perfect"] and checks["capitals_scores_expectations"]
    with duckdb.connect(str(wh / "kgprobe.duckdb"), read_only=True) as con:
        heads = dict(con.execute("SELECT model, value FROM leaderboard.headlines WHERE suite = 'capitals'").fetchall())
        lows = con.execute("SELECT min(ci_low), max(ci_high - ci_low) FROM leaderboard.metrics WHERE suite = 'capitals' "
                           "AND model = 'oracle' AND metric = 'accuracy'").fetchone()
        wide = con.execute("SELECT model FROM leaderboard.capitals_closed ORDER BY model").fetchall()
        across = dict(con.execute("SELECT model, value FROM leaderboard.metrics WHERE suite = 'capitals' AND "
                                  "metric = 'accuracy_all_decided'").fetchall())
        n = con.execute("SELECT DISTINCT n FROM leaderboard.metrics WHERE metric = 'accuracy_all_decided'").fetchall()
    assert heads["oracle"] == 1.0 and heads["always-yes"] == 0.5  # half the questions are true
    assert lows[0] < 1.0 and lows[1] > 0  # the oracle's perfect score still has an interval of some width
    assert [m for (m,) in wide] == ["always-yes", "oracle", "random"]
    # the cross-model hook: every reference answer is decided, so its n is every question and the values are the
    # per-model accuracies
    assert across["oracle"] == 1.0 and across["always-yes"] == 0.5
    assert n == [(64,)]  # 32 capital_of triples in the sample, a true and a corrupted question each
    html = (wh / "report" / "report.html").read_text(encoding="utf-8")
    assert "Capitals: a toy suite" in html and "capitals: accuracy (yes/no)" in html
    # the paired comparison of every two models on the items both answered (all 64 here)
    assert "oracle (A) against always-yes (B)" in html and "always-yes (A) against random (B)" in html
    assert '<td>capitals</td><td>discriminative</td><td>overall</td><td class="num">64</td><td class="num">1.00</td><td class="num">0.50</td>' in html
    # the drill-down: every item of every model (64 x 3), embedded compressed
    import base64
    import gzip
    import re

    payload = re.search(r'<script type="application/octet-stream" id="kgp-items">([^<]+)</script>', html).group(1)
    drill = json.loads(gzip.decompress(base64.b64decode(payload)))
    assert len(drill) == 64 * 3 and {r["m"] for r in drill} == {"oracle", "always-yes", "random"}
    assert all(r["c"] == "correct" for r in drill if r["m"] == "oracle") and all(r["p"] and r["a"] for r in drill)


def test_the_suite_is_shorter_than_a_hundred_lines() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    body = source[source.index("class Capitals"):source.index("# ------------------------------------------------------------------ running")]
    assert len(body.strip().splitlines()) < 100
