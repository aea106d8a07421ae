"""GraphEval as a suite on the sample KG: items, prompts, the oracle at the best value of every metric row it emits,
the baselines clearly worse, and the report section."""

from __future__ import annotations

import pytest

from kgprobe.generation.backends.reference import ReferenceBackend
from kgprobe.generation.records import SamplingParams
from kgprobe.scoring.answers import parse_true_false
from kgprobe.scoring.quality import failed
from kgprobe.suites.base import ItemSource, ScoringOptions, check_items, is_best
from kgprobe.suites.grapheval.suite import GraphEvalSettings, GraphEvalSuite

from .conftest import SAMPLE

SUITE = GraphEvalSuite()


@pytest.fixture(scope="module")
def items(sample_con):
    settings = GraphEvalSettings(positives=150, templates="grapheval/templates.yaml")
    result = SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap", settings=settings, seed=0,
                                    config_dir=SAMPLE))
    check_items("grapheval", result.items)
    return result


def _answers(kind: str, items: list[dict], n: int = 3) -> list[dict]:
    prompts = SUITE.prompts(items)
    completions = ReferenceBackend(kind).generate(prompts, SamplingParams(n=n, temperature=0.6, top_p=0.9))
    return [{"response_id": f"{kind}-{p.item_id}-{i}", "item_id": p.item_id, "model": kind, "backend": "reference",
             "prompt_template_id": p.template_id, "prompt": p.text, "sample_index": i, "text": c.text,
             "error": c.error} for p, cs in zip(prompts, completions, strict=True) for i, c in enumerate(cs)]


def _overall(scores, judge: str = "") -> dict[str, float]:
    return {m["metric"]: m["value"] for m in scores.metrics if not m["breakdown"] and m["judge"] == judge}


def test_items_are_sample_statements(items) -> None:
    rows = items.items.to_pylist()
    # the paper profile: a uniform sample of 150 triples, one negative each
    assert len(rows) == 300 and sum(r["polarity"] == "positive" for r in rows) == 150
    assert {r["answer_format"] for r in rows} == {"true_false_idk"} and {r["task"] for r in rows} == {"statement"}
    assert items.metadata["template_sources"][-1] == {"source": "fallback", "relations": 0}
    assert items.metadata["fallback_statement_share"] == 0.0
    assert items.metadata["profiles"] == [{"profile": "paper", "task": "statement", "items": 300,
                                           "negatives_per_positive": 1, "corruption": "uniform"}]
    first = rows[0]
    assert first["polarity"] == "positive" and rows[1]["polarity"] == "negative"
    import json

    template = json.loads(first["evidence"])["template"]
    assert first["question"] == template.format(head=first["head_label"], tail=first["tail_label"])
    assert dict(first["breakdown"])["head_type"] and dict(first["breakdown"])["degree_bucket"]
    prompt = SUITE.prompts([first])[0]
    assert "Answer 'No, the statement is false.' if you know the statement is false." in prompt.text
    assert prompt.text.count(first["question"]) == 1 and prompt.gold == "true" and prompt.answer_kind == "tf"
    # the paper's prompt: raw text (no chat template), ending as the released code does
    assert prompt.raw and prompt.text.endswith("\n\n## Response:\n\n") and "### Response" not in prompt.text


def test_the_paper_prompt_is_the_released_prompt_byte_for_byte() -> None:
    # The spec, from the released GraphEval code (data_gen/llm_clients.py add_system_prompt for LLaMA, around
    # data_gen/data_generator.py judge_construct_instruct): the Alpaca preamble and a blank line; "### Instruction:",
    # a line break and a SPACE before "You are given"; the three answers, each answer sentence followed by one space,
    # so a space stands before the blank line; "### Input: " with the statement on the same line; a blank line;
    # "## Response:" (two hashes) and a blank line. Nothing else: no chat template, no trailing text.
    from kgprobe.suites.grapheval.prompts import PAPER_TEMPLATE_ID, statement_prompt

    statement = "Brendan Fraser was nominated for the Academy Award for Best Actor."
    expected = (
        b"Below is an instruction that describes a task, paired with an input that provides further context. "
        b"Write a response that appropriately completes the request.\n"
        b"\n"
        b"### Instruction:\n"
        b" You are given a statement. You are asked to judge whether the statement is true or false. "
        b"Answer 'Yes, the statement is true.' if you know the statement is true. "
        b"Answer 'No, the statement is false.' if you know the statement is false. "
        b"Otherwise, answer 'I don't know.' \n"
        b"\n"
        b"### Input: Brendan Fraser was nominated for the Academy Award for Best Actor.\n"
        b"\n"
        b"## Response:\n"
        b"\n"
    )
    prompt = statement_prompt({"item_id": "a", "question": statement, "expected": "true", "task": "statement"})
    assert prompt.text.encode("utf-8") == expected
    assert prompt.raw and prompt.template_id == PAPER_TEMPLATE_ID
    # braces in a statement are text, not format fields
    odd = statement_prompt({"item_id": "b", "question": "{head} is {tail}.", "expected": "false", "task": "statement"})
    assert "### Input: {head} is {tail}.\n\n## Response:" in odd.text
    # the kgprobe profile keeps Table 6 as printed, in the chat template
    ours = statement_prompt({"item_id": "c", "question": statement, "expected": "true", "task": "statement_kgprobe"})
    assert not ours.raw and f"### Input:\n{statement}\n\n### Response:\n" in ours.text
    assert "### Instruction:\nYou are given" in ours.text


def test_oracle_texts_read_as_true_and_false(items) -> None:
    rows = items.items.to_pylist()[:8]
    for r in _answers("oracle", rows, n=1):
        expected = next(x["expected"] for x in rows if x["item_id"] == r["item_id"])
        assert parse_true_false(r["text"]) == expected


def test_oracle_is_best_on_every_row_and_baselines_are_worse(items) -> None:
    rows = items.items.to_pylist()
    scores = {kind: SUITE.score(rows, _answers(kind, rows), model=kind, scoring=ScoringOptions(seed=3, resamples=200))
              for kind in ("oracle", "always-yes", "always-no", "random")}
    oracle = scores["oracle"]
    assert oracle.metrics and all(is_best(m) for m in oracle.metrics), [
        (m["metric"], m["breakdown"], m["value"]) for m in oracle.metrics if not is_best(m)]
    assert _overall(oracle) == {"correctness": 1.0, "truthfulness": 1.0, "informativeness": 1.0,
                                "unknown_share": 0.0, "accuracy": 1.0}
    breakdown_keys = {k for m in oracle.metrics for k, _ in (m["breakdown"] or {}).items()}
    assert breakdown_keys == {"relation", "head_type", "tail_type", "degree_bucket", "polarity"}
    yes, no, rnd = (_overall(scores[k]) for k in ("always-yes", "always-no", "random"))
    assert yes["correctness"] == 0.0 and yes["truthfulness"] == 0.0 and yes["informativeness"] == 1.0
    assert no["correctness"] == 0.0 and no["truthfulness"] == 0.0
    assert 0.0 < rnd["correctness"] < 0.5 and rnd["truthfulness"] < 0.6
    for kind in ("oracle", "random"):
        tables = scores[kind].tables()
        assert not failed(SUITE.validate(tables, name=kind)), kind
        boot = [m for m in scores[kind].metrics if m["interval"] == "wilson_mean"]
        assert boot and all(m["ci_low"] <= m["value"] <= m["ci_high"] for m in boot)
        assert all(m["ci_low"] < m["ci_high"] for m in boot if m["n"]), "a mean of [0, 1] scores collapsed"
    rnd_rows = [m for m in scores["random"].metrics if m["metric"] == "correctness" and not m["breakdown"]]
    assert rnd_rows[0]["ci_low"] < rnd_rows[0]["value"] < rnd_rows[0]["ci_high"]
    assert rnd_rows[0]["n"] == sum(r["expected"] == "true" for r in rows)
    again = SUITE.score(rows, _answers("random", rows), model="random", scoring=ScoringOptions(seed=3, resamples=200))
    assert [m["ci_low"] for m in again.metrics] == [m["ci_low"] for m in scores["random"].metrics]


def test_failed_requests_and_partial_groups(items) -> None:
    rows = items.items.to_pylist()
    answers = _answers("oracle", rows, n=1)
    group = rows[0]["group_id"]
    members = [r["item_id"] for r in rows if r["group_id"] == group]
    # the positive of the first group failed: unreadable, no credit; a negative of the second group is missing
    answers = [dict(a, text=None, error="timeout") if a["item_id"] == members[0] else a for a in answers]
    second = [r["item_id"] for r in rows if r["group_id"] == rows[len(members)]["group_id"]]
    answers = [a for a in answers if a["item_id"] != second[-1]]
    s = SUITE.score(rows, answers, model="m")
    per_item = {v["item_id"]: v for v in s.votes}
    assert per_item[members[0]]["vote"] == "unknown" and per_item[members[0]]["correctness"] == 0.0
    assert per_item[second[0]]["correctness"] == 1.0
    overall = _overall(s)
    n_pos = sum(r["expected"] == "true" for r in rows)
    assert overall["correctness"] == pytest.approx((n_pos - 1) / n_pos)
    assert overall["unknown_share"] == pytest.approx(1 / (len(rows) - 1))


def test_report_section(items) -> None:
    from kgprobe.report.render import ReportContext, render_page

    rows = items.items.to_pylist()
    metrics = []
    for kind in ("oracle", "random"):
        metrics += [dict(m, setting="closed") for m in SUITE.score(rows, _answers(kind, rows), model=kind).metrics]
    ctx = ReportContext(project="t", config_path="x.yaml", snapshot_ids=("snap",), created_at="2026-01-01",
                        models=("oracle", "random"))
    section, plots = SUITE.report(ctx, metrics)
    assert section is not None and "grapheval_metrics" in plots
    html = render_page(ctx, metrics=metrics, own=[section])
    assert "GraphEval: true, false or I don&#39;t know" in html or "GraphEval: true, false or I don't know" in html
    assert "1.00 [1.00, 1.00] n=" not in html and "1.00 [0." in html and "By relation" in html and "By degree bucket" in html


def test_settings_forbid_unknown_keys() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        GraphEvalSettings(per_relaton=3)
    assert GraphEvalSettings().judge == "none" and GraphEvalSettings().profile == "paper"
    from kgprobe.suites.grapheval.suite import statement_options

    paper, ours = (statement_options(GraphEvalSettings(), profile=p) for p in ("paper", "kgprobe"))
    assert (paper.negatives, paper.corruption, paper.per_relation, paper.task) == (1, "uniform", None, "statement")
    assert (ours.negatives, ours.corruption, ours.per_relation, ours.task) == (3, "typed", 50, "statement_kgprobe")
    # an explicit setting wins over the profile's default
    assert statement_options(GraphEvalSettings(negatives=2), profile="paper").negatives == 2


def test_both_profiles_side_by_side(sample_con) -> None:
    settings = GraphEvalSettings(positives=40, per_relation=2, compare_profile="kgprobe",
                                 templates="grapheval/templates.yaml")
    result = SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap", settings=settings, seed=0,
                                    config_dir=SAMPLE))
    check_items("grapheval", result.items)
    rows = result.items.to_pylist()
    by_task = {t: [r for r in rows if r["task"] == t] for t in ("statement", "statement_kgprobe")}
    assert len(by_task["statement"]) == 80  # 40 positives, 1 uniform negative each
    kg = by_task["statement_kgprobe"]
    pos = [r for r in kg if r["polarity"] == "positive"]
    assert 0 < len(pos) <= 40 and len(kg) > 2 * len(pos)  # up to 3 typed negatives each
    assert len({r["item_id"] for r in rows}) == len(rows)
    # a limit keeps that many groups of each profile
    chosen = SUITE.select(rows, limit=3)
    assert {t: len({r["group_id"] for r in chosen if r["task"] == t}) for t in by_task} == {
        "statement": 3, "statement_kgprobe": 3}
    prompts = {p.item_id: p for p in SUITE.prompts(rows)}
    assert all(prompts[r["item_id"]].raw == (r["task"] == "statement") for r in rows)
    assert all("### Response:" in prompts[r["item_id"]].text for r in kg)
    # the same unreadable answers: the paper reads them as IDK, kgprobe gives the full penalty
    answers = [{"response_id": f"r{i}", "item_id": r["item_id"], "model": "m", "sample_index": 0,
                "text": "Hmm." if r["polarity"] == "positive" else "No, the statement is false.", "error": None}
               for i, r in enumerate(rows)]
    scores = SUITE.score(rows, answers, model="m")
    overall = {(m["task"], m["metric"]): m["value"] for m in scores.metrics if not m["breakdown"] and not m["judge"]}
    assert overall[("statement", "truthfulness")] == 1.0 and overall[("statement_kgprobe", "truthfulness")] == 0.0
    assert overall[("statement", "unknown_share")] == overall[("statement", "unknown_share")] > 0
    from kgprobe.report.render import ReportContext, render_page

    ctx = ReportContext(project="t", config_path="x.yaml", snapshot_ids=("snap",), created_at="2026-01-01",
                        models=("m",))
    section, _ = SUITE.report(ctx, [dict(m, setting="closed") for m in scores.metrics])
    labels = [row["labels"] for row in section.data["overall"]]
    assert any("paper profile" in x for x in labels) and any("kgprobe profile" in x for x in labels)
    assert "Table 2" in section.data["table2_note"]


def test_more_items_than_stream_items_above_come_as_a_stream_of_the_same_items(sample_con, tmp_path) -> None:
    # above stream_items_above the items are a reader the warehouse writes a batch at a time: the same rows, and
    # the same counts, gates and review (read from the stream's arrays and the rows it builds on demand), both
    # profiles and a share of statements on the fallback template included
    import json

    import pyarrow as pa

    first = sample_con.execute("SELECT r.key FROM triples t JOIN relations r ON r.id = t.relation GROUP BY r.key "
                               "ORDER BY count(*) DESC, r.key LIMIT 1").fetchone()[0]
    (tmp_path / "templates.yaml").write_text(f'"{first}": "{{head}} is linked to {{tail}}."\n', encoding="utf-8")
    common = dict(positives=60, per_relation=5, compare_profile="kgprobe", propose_templates=False,
                  max_fallback_share=1.0, max_unreadable_share=1.0, templates="templates.yaml")
    whole, streamed = (SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap", seed=3,
                                              settings=GraphEvalSettings(**common, stream_items_above=limit),
                                              config_dir=tmp_path)) for limit in (None, 0))
    assert isinstance(whole.items, pa.Table) and isinstance(streamed.items, pa.RecordBatchReader)
    table = streamed.items.read_all()
    assert table.num_rows == whole.items.num_rows > 120 and table.equals(whole.items.combine_chunks())
    assert set(table.column("task").to_pylist()) == {"statement", "statement_kgprobe"}
    assert 0 < whole.metadata["fallback_statement_share"] < 1
    assert json.dumps(streamed.metadata, sort_keys=True, default=str) == \
        json.dumps(whole.metadata, sort_keys=True, default=str)
    assert streamed.rejects.equals(whole.rejects)
    # the limit is a number of items: at or above the count the items stay one table
    kept = SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap", seed=3, config_dir=tmp_path,
                                  settings=GraphEvalSettings(**common, stream_items_above=table.num_rows)))
    assert isinstance(kept.items, pa.Table)


def test_fallback_gate_fails_the_items(sample_con) -> None:
    from kgprobe.suites.grapheval.suite import TemplateCoverageError

    settings = GraphEvalSettings(positives=40, propose_templates=False, max_fallback_share=0.0)
    with pytest.raises(TemplateCoverageError, match="fallback"):
        SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap", settings=settings, seed=0,
                               config_dir=SAMPLE))
    # proposed templates cover every relation of the sample
    ok = SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap",
                                settings=GraphEvalSettings(positives=40, max_fallback_share=0.0), seed=0,
                                config_dir=SAMPLE))
    assert ok.metadata["fallback_statement_share"] == 0.0
    assert {r["source"] for r in ok.metadata["template_review"]} == {"proposed"}
    assert all(r["examples"] for r in ok.metadata["template_review"] if r["relation_key"] in
               {x["relation_key"] for x in ok.items.to_pylist() if x["polarity"] == "positive"})


def test_readability_gate_fails_the_items(sample_con, tmp_path) -> None:
    from kgprobe.suites.grapheval.readability import ReadabilityError

    keys = [k for (k,) in sample_con.execute("SELECT key FROM relations").fetchall()]
    bad = tmp_path / "bad.yaml"  # every relation read as "is the <plural>": the YAGO statement
    bad.write_text("".join(f'{k}: "{{head}} is the deals with {{tail}}."\n' for k in keys), encoding="utf-8")
    settings = GraphEvalSettings(positives=40, templates=str(bad))
    with pytest.raises(ReadabilityError, match=r"is the deals with.*max_unreadable_share"):
        SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap", settings=settings, seed=0,
                               config_dir=tmp_path))
    # raised far enough, the gate lets them through and reports the share
    loose = GraphEvalSettings(positives=40, templates=str(bad), max_unreadable_share=1.0)
    meta = SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap", settings=loose, seed=0,
                                  config_dir=tmp_path)).metadata
    assert meta["readability_failing_share"] == 1.0 and meta["readability_checked"] > 0
    ok = SUITE.items(ItemSource(con=sample_con, kg="main", snapshot_id="snap", settings=GraphEvalSettings(positives=40),
                                seed=0, config_dir=SAMPLE)).metadata
    assert ok["readability_failing"] == 0 and ok["id_label_statements"] == 0


def test_take_rows_and_template_review_read_a_chunked_table_as_arrow_does(sample_con) -> None:
    from dataclasses import replace

    import numpy as np
    import pyarrow as pa

    from kgprobe.kg.verbalise import review_rows
    from kgprobe.suites.grapheval.readability import take_rows
    from kgprobe.suites.grapheval.statements import build_statements
    from kgprobe.suites.grapheval.suite import statement_options, template_review

    built = build_statements(sample_con, statement_options(GraphEvalSettings(positives=150), SAMPLE),
                             snapshot_id="snap", seed=0)
    table = built.items
    chunked = pa.concat_tables([table.slice(i, 37) for i in range(0, table.num_rows, 37)])
    assert chunked.column("question").num_chunks > 3
    rows = np.array([table.num_rows - 1, 0, 40, 36, 37, 40, 5], np.int64)
    assert take_rows(chunked, rows).to_pylist() == table.take(pa.array(rows)).to_pylist()
    with pytest.raises(IndexError):
        take_rows(chunked, np.array([table.num_rows]))
    # the review's examples: the first two positives of each relation in table order, as a loop over rows reads them
    first: dict[str, list[tuple[str, str]]] = {}
    for r in table.to_pylist():
        if r["polarity"] == "positive" and len(first.setdefault(r["relation_key"], [])) < 2:
            first[r["relation_key"]].append((r["head_label"], r["tail_label"]))
    order = {"fallback": 0, "proposed": 1, "dbpedia": 2, "config": 3}
    expected = sorted(review_rows({t.key: t.template for t in built.templates}, first,
                                  sources={t.key: t.source for t in built.templates}),
                      key=lambda r: (order.get(r["source"], 4), r["relation_key"]))
    assert sum(" | " in r["examples"] for r in expected) > 3  # relations with two examples
    assert template_review(built) == expected
    assert template_review(replace(built, items=chunked)) == expected


def test_check_items_counts_repeated_ids_and_unknown_formats(items) -> None:
    import pyarrow as pa

    table = items.items
    with pytest.raises(ValueError, match=r"item ids are not unique \(3 repeated\)"):
        check_items("grapheval", pa.concat_tables([table, table.slice(5, 3)]))
    fmt = table.column_names.index("answer_format")
    odd = table.set_column(fmt, "answer_format", pa.array(["essay"] + ["true_false_idk"] * (table.num_rows - 1)))
    with pytest.raises(ValueError, match=r"unknown answer format\(s\) \['essay'\]"):
        check_items("grapheval", odd)
