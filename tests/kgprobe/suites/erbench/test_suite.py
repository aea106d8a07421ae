"""The suite on the bundled sample database: item counts, prompts, the oracle check, baselines, the three
evaluation settings, the report section and the erdb asset."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from kgprobe.generation.backends.reference import ReferenceBackend
from kgprobe.generation.records import SamplingParams
from kgprobe.suites.base import ItemSource, ScoringOptions, check_items, is_best
from kgprobe.suites.erbench import ERBenchSuite, load_erdb
from kgprobe.suites.erbench.scoring import known_counts, known_groups, known_kind
from kgprobe.suites.erbench.questions import BINARY_SYSTEM, KNOWN_SYSTEM, MC_SYSTEM_NOTA
from kgprobe.suites.erbench.spec import parse_spec

REPO = Path(__file__).resolve().parents[4]
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="module")
def sample(sample_spec_data):
    con = duckdb.connect()
    load_erdb(con, parse_spec(sample_spec_data))
    suite = ERBenchSuite()
    settings = suite.Settings.model_validate({"db": "sample/erdb/erdb.yaml", "limit_per_fd": 20,
                                              "none_of_the_above": 0.2})
    result = suite.items(ItemSource(con=con, kg=None, snapshot_id="", settings=settings, seed=0, config_dir=EXAMPLES))
    return suite, con, result


def _answers(suite, items, kind: str) -> list[dict]:
    prompts = suite.prompts(items)
    outs = ReferenceBackend(kind).generate(prompts, SamplingParams(n=1, temperature=0.0))
    return [{"response_id": f"{kind}-{i}", "item_id": p.item_id, "model": kind, "sample_index": 0, "text": c[0].text,
             "error": c[0].error} for i, (p, c) in enumerate(zip(prompts, outs))]


def test_sample_items_per_dataset_and_type(sample) -> None:
    _, _, result = sample
    check_items("erbench", result.items)
    rows = result.items.to_pylist()
    counts = Counter((r["dataset"], r["qtype"]) for r in rows)
    # 20 records per FD / path; MC: 3 phrasings each, known_mc: one prompt for X plus one per option column
    assert counts[("movie", "BN(Y)")] == counts[("movie", "BN(N)")] == counts[("movie", "known")] == 20
    assert counts[("movie", "MC")] + counts[("movie", "MC-NOTA")] == 60
    assert counts[("movie", "known_mc")] == 60 and counts[("country", "known_mc")] == 80
    assert counts[("movie_director_country", "BN(Y)")] == 20
    assert len(rows) == 680
    assert dict(rows[0]["breakdown"]).keys() >= {"dataset", "qtype"}
    nota = [r for r in rows if r["qtype"] == "MC-NOTA"]
    assert nota and all(r["expected"] == "none" and r["inferred"] == [] for r in nota)
    assert 0.05 < len(nota) / (len(nota) + counts[("movie", "MC")] + counts[("country", "MC")]
                               + counts[("olympics", "MC")]) < 0.45
    hop = next(r for r in rows if r["dataset"] == "movie_director_country" and r["qtype"] == "BN(Y)")
    assert len(hop["hop_values"]) == 3 and hop["hops"] == 3 and hop["hop_values"] == hop["inferred"]


def test_expected_answers_follow_the_table(sample) -> None:
    _, con, result = sample
    movies = {r[0]: r[1:] for r in con.execute("SELECT title, year, director, star FROM erdb.movies").fetchall()}
    directors = dict(con.execute("SELECT name, birth_year FROM erdb.directors").fetchall())
    for r in result.items.to_pylist():
        rec = json.loads(r["evidence"])["record"]
        if r["fd"] == "movie_title" and r["qtype"] in ("BN(Y)", "BN(N)"):
            assert r["expected"] == ("yes" if r["qtype"] == "BN(Y)" else "no")
            assert movies[r["inferred"][0]] == (int(rec["year"]), rec["director"], rec["star"])
        if r["fd"] == "movie_facts" and r["qtype"] == "MC":
            k = int(r["expected"])
            title = rec["title"]
            year, director = movies[title][0], movies[title][1]
            true = {1: director, 2: str(year)}
            assert r["inferred"] == [true[k]]
            assert true[k] not in r["options"][k - 1]  # the false option does not state the true value
            assert all(true[j] in r["options"][j - 1] for j in true if j != k)
        if r["fd"] == "movie_director_decade" and r["qtype"] == "BN(Y)":
            director = r["hop_values"][0]
            assert r["hop_values"][1] == str(directors[director])
            assert f"{directors[director] // 10 * 10}s" in r["question"]


def test_prompts_use_the_paper_system_prompts_and_gold(sample) -> None:
    suite, _, result = sample
    items = result.items.to_pylist()
    prompts = {p.item_id: p for p in suite.prompts(items)}
    for it in items:
        p = prompts[it["item_id"]]
        if it["task"] == "multiple_choice":  # the oracle answers the gold; random picks among the allowed answers
            gold = json.loads(p.gold)
            assert p.answer_kind == "open" and gold["answer"] == it["gold"]
            assert gold["alternatives"] == [f"Option {k}: {o}" for k, o in enumerate(it["options"], 1)] + [
                "None of the above. All options are correct."]
        else:
            assert p.answer_kind is None and p.gold == it["gold"]
        assert p.system == {"binary": BINARY_SYSTEM, "multihop": BINARY_SYSTEM, "known_entity": KNOWN_SYSTEM,
                            "multiple_choice": MC_SYSTEM_NOTA}[it["task"]]
    assert ERBenchSuite.sampling.n == 1 and ERBenchSuite.sampling.temperature == 0.0


def test_few_shot_demonstrations_come_before_the_question(sample, tmp_path: Path) -> None:
    suite, con, _ = sample
    demo = tmp_path / "movie_demo.txt"
    demo.write_text("Q: Is there a movie, released in 1975, starring Al Pacino where Sidney Lumet is the director?\n"
                    "A: Yes, Dog Day Afternoon.\n\nQ: Is it true that there are no movies ...?\nA: No.\n", encoding="utf-8")
    settings = suite.Settings.model_validate({"db": str(EXAMPLES / "sample/erdb/erdb.yaml"), "limit_per_fd": 2,
                                              "few_shot": {"movie.binary": str(demo)}})
    items = suite.items(ItemSource(con=con, kg=None, snapshot_id="", settings=settings, seed=0,
                                   config_dir=EXAMPLES)).items.to_pylist()
    prompts = {p.item_id: p for p in suite.prompts(items)}
    bn = next(it for it in items if it["fd"] == "movie_title" and it["qtype"] == "BN(Y)")
    known = next(it for it in items if it["fd"] == "movie_title" and it["qtype"] == "known")
    text = prompts[bn["item_id"]].text
    assert text.startswith("Q: Is there a movie, released in 1975") and text.endswith(f"Q: {bn['question']}\nA:")
    assert prompts[bn["item_id"]].template_id.endswith("+fewshot")
    assert prompts[known["item_id"]].text == known["question"]


@pytest.mark.parametrize("answer_reading,rationale_match", [("released", "released"), ("kgprobe", "kgprobe")])
def test_oracle_is_perfect_under_each_reading_and_the_rows_name_it(sample, answer_reading, rationale_match) -> None:
    suite, _, result = sample
    items = result.items.to_pylist()
    settings = suite.Settings.model_validate({"db": "sample/erdb/erdb.yaml", "answer_reading": answer_reading,
                                              "rationale_match": rationale_match})
    oracle = suite.score(items, _answers(suite, items, "oracle"), model="oracle",
                         scoring=ScoringOptions(settings=settings))
    assert oracle.metrics and all(is_best(m) for m in oracle.metrics), [m for m in oracle.metrics if not is_best(m)][:3]
    cells = [m for m in oracle.metrics if m["breakdown"] and m["task"] in ("binary", "multihop")]
    assert cells and {m["breakdown"]["reading"] for m in cells} == {
        f"answer_reading={answer_reading}, rationale_match={rationale_match}, known_reading=released"}
    overall = [m for m in oracle.metrics if not m["breakdown"]]
    assert {m["task"] for m in overall} >= {"binary", "multiple_choice", "multihop"}   # the headline stays overall


def test_oracle_is_perfect_and_baselines_are_worse(sample) -> None:
    suite, _, result = sample
    items = result.items.to_pylist()
    oracle = suite.score(items, _answers(suite, items, "oracle"), model="oracle")
    assert oracle.metrics and all(is_best(m) for m in oracle.metrics), [m for m in oracle.metrics if not is_best(m)][:3]
    overall = {(m["task"], m["metric"]): m for m in oracle.metrics if not m["breakdown"]}
    for task in ("binary", "multiple_choice", "multihop"):
        assert overall[(task, "answer_rationale_accuracy")]["value"] == 1.0
        assert overall[(task, "hallucination_rate")]["value"] == 0.0
    assert {m["breakdown"]["entities"] for m in oracle.metrics if "entities" in m["breakdown"]} == {"all", "known"}
    assert any(m["metric"] == "rationale_given_previous" and m["breakdown"]["hop"] == "3" for m in oracle.metrics)
    for kind in ("always-yes", "random"):
        scored = suite.score(items, _answers(suite, items, kind), model=kind)
        by = {(m["task"], m["metric"]): m["value"] for m in scored.metrics if not m["breakdown"]}
        assert by[("binary", "answer_rationale_accuracy")] == 0.0  # "Yes." mentions no inferred value
        assert by[("binary", "answer_accuracy")] <= 0.6
        # "Yes." picks no option; random picks one of the two options or None of the above: about 1 in 3
        mc = by[("multiple_choice", "answer_accuracy")]
        assert mc == 0.0 if kind == "always-yes" else 0.2 < mc < 0.5
    tables = oracle.tables()
    assert tables["votes"].num_rows == len(items) and tables["samples"].num_rows == len(items)


def test_known_entities_gate_setting_one_and_common_setting_two(sample) -> None:
    suite, _, result = sample
    items = result.items.to_pylist()
    by_id = {it["item_id"]: it for it in items}
    votes = []
    for kind in ("oracle", "random"):
        votes += suite.score(items, _answers(suite, items, kind), model=kind).votes
    random_known = {v["known_group"] for v in votes if v["model"] == "random" and v["task"] == "known_entity"
                    and v["knows"]}
    rows = suite.cross_model_metrics(votes, by_id, min_known=1)
    assert rows and {r["breakdown"]["entities"] for r in rows} == {"common"}
    shares = [r for r in rows if r["metric"] == "common_share"]
    rows = [r for r in rows if r["metric"] != "common_share"]
    # per dataset and question type (Table 13): where random knows an entity it is evaluated, and the common set is
    # within what it knows; where it knows none, it is left out and the oracle alone sets the common set
    random_counts = known_counts([v for v in votes if v["model"] == "random"])
    for r in rows:
        cell = (r["breakdown"]["dataset"], known_kind(by_id[r["item_ids"][0]]))
        if random_counts.get(cell, 0) >= 1:
            assert all(by_id[i]["known_group"] in random_known for i in r["item_ids"])
        else:
            assert r["model"] == "oracle"
    # the oracle knows every entity, so its common rows are perfect too
    assert all(is_best(r) for r in rows if r["model"] == "oracle")
    # setting 2's entity counts: per dataset and kind, of the entities asked, those every evaluated model knows
    assert {(r["model"], r["breakdown"]["qtype"]) for r in shares} >= {("oracle", "BN"), ("oracle", "MC"), ("oracle", "hop")}
    for r in shares:
        groups = {by_id[i]["known_group"] for i in r["item_ids"]}
        cell = (r["breakdown"]["dataset"], r["breakdown"]["qtype"])
        random_knows = {g for g, ok in known_groups([v for v in votes if v["model"] == "random"]).items() if ok}
        common = groups & random_knows if random_counts.get(cell, 0) >= 1 else groups
        assert r["n"] == len(groups) and round(r["value"] * r["n"]) == len(common)
    assert any(r["value"] < 1 for r in shares)   # random's coin flips shrink the common set
    # only the models named count (the project names every model but the reference ones): with the oracle alone,
    # the common set is every entity and no random row is made
    named = suite.cross_model_metrics(votes, by_id, min_known=1, models=["oracle"])
    assert named and {r["model"] for r in named} == {"oracle"}
    assert all(r["value"] == 1.0 for r in named if r["metric"] == "common_share")
    # a model knowing fewer than min_known entities of a dataset is left out there
    strict = suite.cross_model_metrics(votes, by_id, min_known=10_000)
    assert strict == []


def test_report_section_renders(sample) -> None:
    from kgprobe.report.render import ReportContext, render_page

    suite, _, result = sample
    items = result.items.to_pylist()
    metrics, votes = [], []
    for kind in ("oracle", "always-yes"):
        scored = suite.score(items, _answers(suite, items, kind), model=kind)
        metrics += [{**m, "setting": "closed"} for m in scored.metrics]
        votes += scored.votes
    # setting 2 with both models named (a project names only its non-reference models)
    common = suite.cross_model_metrics(votes, {it["item_id"]: it for it in items}, min_known=1,
                                       models=["oracle", "always-yes"])
    metrics += [{**m, "setting": "closed"} for m in common]
    ctx = ReportContext(project="p", config_path="c.yaml", snapshot_ids=("s",), created_at="2025-01-02",
                        models=("oracle", "always-yes"))
    section, plots = suite.report(ctx, metrics)
    assert plots == {} and section.template == "erbench/section.html"
    page = render_page(ctx, own=[section])
    assert "(1) entities the model knows" in page and "(3) all questions" in page and "Known entities" in page
    assert "BN(Y)" in page and "MC-NOTA" in page and "1.00 [" in page
    assert "20 of 20" in page  # the oracle knows every movie of the binary FD
    # multi-hop cells labelled as Table 4, with their per-hop rows, in setting 1 as in setting 3
    by_key = {s["key"]: s for s in section.data["settings"]}
    for key in ("known", "all"):
        assert by_key[key]["multihop"] and by_key[key]["hops"], key
        oracle = next(r for r in by_key[key]["multihop"] if r["model"] == "oracle")
        assert oracle["R-ext"].startswith("1.00 [") and oracle["ar_ext"][0].startswith("1.00 [")
    assert "R-ext" in page and "AR-ext hop 1" in page and "R (every hop)" in page and "AR-ext (hop i)" in page
    # the common sets' sizes: both models answer every known-entity prompt "yes", so every entity is common
    assert "Setting 2: entities every evaluated model knows" in page and "(2) entities every evaluated model" in page
    shares = [m for m in common if m["metric"] == "common_share"]
    assert shares and all(m["value"] == 1.0 for m in shares)
    assert all(f"<td>{m['n']} of {m['n']}</td><td>always-yes, oracle</td>" in page for m in shares)


def test_the_erdb_asset_loads_the_sample(tmp_path: Path) -> None:
    import dagster as dg
    import yaml

    from assets.erbench import erdb, erdb_constraints_hold
    from resources import ProjectResource, WarehouseResource

    cfg = yaml.safe_load((EXAMPLES / "sample.yaml").read_text(encoding="utf-8"))
    project = {"name": "erb", "seed": 0, "warehouse": str(tmp_path / "wh" / "kgprobe.duckdb"), "kgs": cfg["kgs"],
               "models": [m for m in cfg["models"] if m["name"] == "oracle"],
               "suites": {"erbench": {"db": "sample/erdb/erdb.yaml", "limit_per_fd": 5}}}
    path = EXAMPLES / f".test-erbench-{tmp_path.name}.yaml"
    path.write_text(yaml.safe_dump(project), encoding="utf-8")
    try:
        resources = {"project": ProjectResource(config_path=str(path)),
                     "warehouse": WarehouseResource(path=str(tmp_path / "wh" / "kgprobe.duckdb"))}
        result = dg.materialize([erdb], resources=resources)
        assert result.success
        md = result.get_asset_materialization_events()[0].materialization.metadata
        assert md["read"].value == md["loaded"].value == 275 and md["rejected"].value == 0
        with duckdb.connect(str(tmp_path / "wh" / "kgprobe.duckdb"), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM erdb.movies").fetchone()[0] == 145
        assert erdb_constraints_hold(project=resources["project"], warehouse=resources["warehouse"]).passed
    finally:
        path.unlink()


def test_the_random_baseline_picks_among_the_options_of_a_multiple_choice_question(sample) -> None:
    from kgprobe.suites.erbench.verify import read_option

    suite, _, result = sample
    items = [it for it in result.items.to_pylist() if it["task"] == "multiple_choice"]
    answers = _answers(suite, items, "random")
    picks = [read_option(a["text"], len(it["options"])) for a, it in zip(answers, items)]
    right = sum(p == it["expected"] for p, it in zip(picks, items))
    # every answer is one of the question's options or None of the above, and it is right about as often as
    # chance (1 / (options + 1)), where it answered "Yes." and was never right before
    assert all(p == "none" or 1 <= int(p) <= len(it["options"]) for p, it in zip(picks, items))
    assert {"1", "2", "none"} <= set(picks)
    chance = sum(1 / (len(it["options"]) + 1) for it in items) / len(items)
    assert abs(right / len(items) - chance) < 0.12, (right, len(items), chance)


def test_demonstrations_are_looked_up_per_dataset_and_task_for_every_item(tmp_path: Path) -> None:
    from kgprobe.suites.erbench.suite import ERBenchSettings, with_demos

    (tmp_path / "movie_mc.txt").write_text("Q: Which one?\nA: Option 1.\n", encoding="utf-8")
    (tmp_path / "movie.txt").write_text("Q: Is there a movie?\nA: Yes.\n", encoding="utf-8")
    (tmp_path / "soccer_cot.txt").write_text("Q: Is there a player?\nA: He plays for X. The answer is yes.\n",
                                              encoding="utf-8")
    settings = ERBenchSettings.model_validate({"db": {"name": "x"}, "few_shot": {
        "movie.multiple_choice": "movie_mc.txt", "movie": "movie.txt", "soccer": "movie.txt"},
        "cot": {"soccer.binary": "soccer_cot.txt"}})
    datasets = ["movie", "movie", "soccer", "movie", "soccer", "airport", "soccer", "movie"]
    tasks = ["binary", "multiple_choice", "binary", "known_entity", "multiple_choice", "binary", "known_entity",
             "binary"]
    items = pa.table({"item_id": [str(i) for i in range(len(tasks))], "dataset": datasets, "task": tasks})
    out = with_demos(items, settings, tmp_path).to_pydict()
    movie, movie_mc = "Q: Is there a movie?\nA: Yes.\n\n", "Q: Which one?\nA: Option 1.\n\n"
    cot = "Q: Is there a player?\nA: He plays for X. The answer is yes.\n\n"
    # the task's own file wins over the dataset's, cot over few-shot; a known-entity prompt never has any
    assert out["demos"] == [movie, movie_mc, cot, "", movie, "", "", movie]
    assert out["demo_kind"] == ["fewshot", "fewshot", "cot", "", "fewshot", "", "", "fewshot"]
    assert out["item_id"] == items.column("item_id").to_pylist()
