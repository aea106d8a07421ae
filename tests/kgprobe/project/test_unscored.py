"""What a config has asked and answered but never scores is said: KG-FPQ's WH questions without a judge."""

from __future__ import annotations

from pathlib import Path

from kgprobe.config import load_config
from kgprobe.project.plan import unscored
from kgprobe.report.render import ReportContext, _header

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample"
KG = (f"kgs:\n  sample:\n    triples: [{SAMPLE}/triples.tsv]\n    entity_labels: {SAMPLE}/entity_labels.tsv\n"
      "models:\n  - {name: oracle, backend: reference, kind: oracle}\n")


def _cfg(tmp_path: Path, fpq: str, scoring: str = "") -> object:
    path = tmp_path / "p.yaml"
    path.write_text(KG + f"suites:\n  fpq: {{kg: sample, domains: {SAMPLE}/domains.yaml, "
                    f"templates: {SAMPLE}/templates.yaml{fpq}}}\n" + scoring, encoding="utf-8")
    return load_config(path)


def test_wh_questions_without_a_judge_are_said_to_be_unscored(tmp_path: Path) -> None:
    (note,) = unscored(_cfg(tmp_path, ""))
    assert "open (WH) questions are generated and answered but not scored" in note
    assert "scoring.judges" in note and "formats: [yn]" in note
    # with a judge, or with yes/no questions only, nothing goes unscored
    assert unscored(_cfg(tmp_path, "", "scoring: {judges: [oracle]}\n")) == []
    assert unscored(_cfg(tmp_path, ", formats: [yn]")) == []
    # the report's header carries the note
    ctx = ReportContext(project="p", config_path="p.yaml", snapshot_ids=(), created_at="now", unscored=(note,))
    assert {"term": "not scored", "value": note} in _header(ctx, {})


def test_plan_says_which_local_models_have_no_weights_here(tmp_path: Path) -> None:
    from kgprobe.generation.backends import HFConfig, LiteLLMConfig
    from kgprobe.generation.records import ModelSpec
    from kgprobe.project.plan import weights_problem

    folder = tmp_path / "weights"
    folder.mkdir()
    (folder / "config.json").write_text("{}", encoding="utf-8")
    assert weights_problem(ModelSpec("here", "transformers", HFConfig(str(folder)))) is None
    missing = weights_problem(ModelSpec("gone", "transformers", HFConfig(str(tmp_path / "nowhere"))))
    assert missing.startswith("gone: no weights at ") and "nowhere" in missing
    hub = weights_problem(ModelSpec("hub", "transformers", HFConfig("acme/never-downloaded-7b",
                                                                     cache_dir=str(tmp_path / "hf"))))
    assert "not in the local Hugging Face cache" in hub and "huggingface-cli download acme/never-downloaded-7b" in hub
    assert weights_problem(ModelSpec("api", "litellm", LiteLLMConfig("openai/gpt-4o-mini"))) is None


def test_plan_times_a_local_model_by_the_rate_of_its_stored_answers(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from kgprobe.generation.store import ResponseStore
    from kgprobe.project.plan import measured_rate, time_estimates

    store = ResponseStore(tmp_path / "response_store")
    base = {"backend": "transformers", "prompt": "p", "sampling_params": "{}", "params_sha256": "x",
            "text": "Yes.", "finish_reason": "stop", "tokens_in": 5, "tokens_out": 2, "cost": 0.0, "error": None,
            "retries": 0, "created_at": None}
    # two calls of one run: 4 samples in 2.0 s, then 4 in 6.0 s (a call's samples share its latency): 1 sample/s
    rows = [{**base, "model": "local", "prompt_sha256": f"s{i}", "sample_index": 0, "run_id": "r1",
             "latency_s": 2.0 if i < 4 else 6.0} for i in range(8)]
    store.write_shard("local", rows)
    assert measured_rate(store, "local") == (1.0, 8)
    assert measured_rate(store, "never") is None
    cfg = SimpleNamespace(warehouse=tmp_path / "kg.duckdb")
    plan = [{"model": "local", "backend": "transformers", "to_generate": 600, "note": ""},
            {"model": "fresh", "backend": "vllm", "to_generate": 10, "note": ""},
            {"model": "api", "backend": "litellm", "to_generate": 99, "note": ""}]
    assert time_estimates(cfg, plan) == [
        "local: 600 samples to generate, about 10 min at 1.00 samples/s (the rate of its 8 stored answers)",
        "fresh: 10 samples to generate; no earlier answer of it is stored to time them (run a small --limit first)"]
