"""kgprobe.config: the project YAML file, its path resolution, its errors and its JSON schema."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from kgprobe.config import CONFIG_ENV, ConfigDeprecationWarning, config_path, load_config
from kgprobe.errors import ConfigError


def _cfg(tmp_path: Path, text: str) -> Path:
    # the input files the configs below name: load_config checks that they exist
    for name in ("x", "t.yaml"):
        (tmp_path / name).touch()
    p = tmp_path / "project.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    for name in ("kg.tsv", "labels.tsv"):
        (tmp_path / "data" / name).touch()
    cfg = load_config(_cfg(tmp_path, "kgs:\n  mini:\n    triples: [data/kg.tsv]\n    entity_labels: data/labels.tsv\n"))
    src = cfg.kgs["mini"]
    assert src.files == (tmp_path.resolve() / "data" / "kg.tsv",)
    assert Path(src.entity_labels) == tmp_path.resolve() / "data" / "labels.tsv"
    assert src.name == "mini" and src.format == "tsv"
    assert cfg.warehouse == Path("warehouse/kgprobe.duckdb") and cfg.seed == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kgs: {}\n", "kgs: map at least one KG"),
        ("kgz:\n  a: {triples: x}\n", r"kgz: unknown key; did you mean 'kgs'\?"),
        ("kgs:\n  a: {triples: x, format: rdfxml}\n", "kgs.a.format: must be 'tsv', .* got 'rdfxml'"),
        ("kgs:\n  a: {format: tsv}\n", "kgs.a: 'triples'.*is required"),
        ("kgs:\n  a: {triples: x, labels: y}\n", r"kgs.a.labels: unknown key; did you mean 'type_labels'\?"),
        ("seed: one\nkgs:\n  a: {triples: x}\n", "seed: must be an integer, got 'one'"),
        ("kgs: [\n", "not valid YAML"),
    ],
)
def test_mistakes_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        load_config(_cfg(tmp_path, text))
    assert "project.yaml" in str(info.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "absent.yaml")


def test_bundled_sample_config_is_valid() -> None:
    cfg = load_config(Path(__file__).resolve().parents[2] / "examples" / "sample.yaml")
    assert set(cfg.kgs) == {"sample"}
    assert all(p.is_file() for p in cfg.kgs["sample"].files + cfg.kgs["sample"].temporal_files)
    # the sample is written in the current layout: fpq under suites, nothing deprecated
    assert cfg.has_suite("fpq") and cfg.fpq is None and cfg.suites.fpq.n_per_domain == 40


_MODELS = ("kgs:\n  a: {triples: x}\nseed: 5\nmodels:\n  - {name: oracle, backend: reference, kind: oracle}\n"
           "  - {name: coin, backend: reference, kind: random}\n")


def test_scoring_judges_get_greedy_single_samples_and_the_project_seed(tmp_path: Path) -> None:
    from kgprobe.config import scoring_settings

    cfg = load_config(_cfg(tmp_path, _MODELS + "scoring:\n  judges: [oracle, {model: coin, temperature: 0.7, max_tokens: 4}]\n"
                                      "  bootstrap: {resamples: 200}\n"))
    s = scoring_settings(cfg)
    assert [j.name for j in s.judges] == ["oracle", "coin"]
    assert (s.judges[0].params.n, s.judges[0].params.temperature, s.judges[0].params.max_tokens) == (1, 0.0, 8)
    assert (s.judges[1].params.temperature, s.judges[1].params.max_tokens, s.judges[1].params.seed) == (0.7, 4, 5)
    assert (s.resamples, s.confidence, s.seed, s.unknown_warn) == (200, 0.95, 5, 0.2)
    assert scoring_settings(load_config(_cfg(tmp_path, _MODELS))).judges == ()


@pytest.mark.parametrize(
    ("scoring", "message"),
    [
        ("  judge: [oracle]\n", r"scoring.judge: unknown key; did you mean 'judges'\?"),
        ("  judges: [gpt-9]\n", r"scoring.judges.0.model: 'gpt-9' is not one of the models listed under models"),
        ("  judges: [{model: oracle, n: 3}]\n", r"scoring.judges.0.n: unknown key; allowed keys: model, temperature"),
        ("  judges: [oracle, oracle]\n", "scoring.judges: a model is listed twice"),
        ("  judges: [{model: oracle, temperature: -1}]\n", "scoring.judges.0.temperature: must be ≥ 0"),
        ("  bootstrap: {resamples: 0}\n", "scoring.bootstrap.resamples: must be ≥ 1, got 0"),
        ("  bootstrap: {level: 0.9}\n", "scoring.bootstrap.level: unknown key; allowed keys: resamples, confidence"),
        ("  unknown_warn: 1.5\n", "scoring.unknown_warn: must be ≤ 1.0, got 1.5"),
    ],
)
def test_scoring_mistakes_name_the_key(tmp_path: Path, scoring: str, message: str) -> None:
    from kgprobe.config import scoring_settings

    with pytest.raises(ConfigError, match=message) as info:
        scoring_settings(load_config(_cfg(tmp_path, _MODELS + "scoring:\n" + scoring)))
    assert "project.yaml" in str(info.value)


# KG-FPQ settings under suites:, and in the deprecated top-level place, which is still read (with a warning)
_FPQ = "kgs:\n  a: {triples: x}\nsuites:\n  fpq:\n    domains: {art: [film]}\n    templates: t.yaml\n"
_FPQ_TOP = "kgs:\n  a: {triples: x}\nfpq:\n  domains: {art: [film]}\n  templates: t.yaml\n"
_LAYOUTS = pytest.mark.parametrize(("base", "indent"), [(_FPQ, "    "), (_FPQ_TOP, "  ")], ids=["suites", "top-level"])


def _fpq_config(tmp_path: Path, text: str):
    # the top-level layout must warn; the suites layout must not
    warns = pytest.warns(ConfigDeprecationWarning) if "\nfpq:" in text else contextlib.nullcontext()
    with warns:
        return load_config(_cfg(tmp_path, text))


@_LAYOUTS
def test_fpq_hops_default_to_directed_with_the_hop_drawn_first(tmp_path: Path, base: str, indent: str) -> None:
    from kgprobe.config import fpq_settings

    s = fpq_settings(_fpq_config(tmp_path, base))
    assert (s.directed, s.hop_sampling, s.max_hops) == (True, "uniform_hop", 5)
    s = fpq_settings(_fpq_config(tmp_path, base + f"{indent}directed: false\n{indent}hop_sampling: uniform_candidate\n"))
    assert (s.directed, s.hop_sampling) == (False, "uniform_candidate")


@_LAYOUTS
def test_fpq_search_budget_defaults_to_the_bound_and_may_be_lifted(tmp_path: Path, base: str, indent: str) -> None:
    from kgprobe.config import fpq_settings

    assert fpq_settings(_fpq_config(tmp_path, base)).search_budget == 1 << 15
    assert fpq_settings(_fpq_config(tmp_path, base + f"{indent}search_budget: null\n")).search_budget is None
    with pytest.raises(ConfigError, match="search_budget"):
        fpq_settings(load_config(_cfg(tmp_path, base + f"{indent}search_budget: 0\n")))


@_LAYOUTS
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("directed: 'yes'\n", r"fpq.directed: must be true or false, got 'yes'"),
        ("hop_sampling: by_hop\n", "fpq.hop_sampling: must be 'uniform_hop' or 'uniform_candidate', got 'by_hop'"),
    ],
)
def test_fpq_hop_settings_are_checked(tmp_path: Path, base: str, indent: str, extra: str, message: str) -> None:
    from kgprobe.config import fpq_settings

    with pytest.raises(ConfigError, match=message) as info:
        fpq_settings(load_config(_cfg(tmp_path, base + indent + extra)))
    assert "project.yaml" in str(info.value)


def test_fpq_settings_resolve_their_files_and_fill_the_kg(tmp_path: Path) -> None:
    from kgprobe.config import fpq_settings

    (tmp_path / "domains.yaml").write_text("art: [film]\npeople: {types: [actor], deny_relations: [spouse]}\n",
                                           encoding="utf-8")
    cfg = load_config(_cfg(tmp_path, _FPQ.replace("{art: [film]}", "domains.yaml")))
    s = fpq_settings(cfg)
    # a bare list of types becomes the mapping form DomainSpec.from_config reads
    assert s.domains == {"art": {"types": ["film"]}, "people": {"types": ["actor"], "deny_relations": ["spouse"]}}
    assert s.templates == tmp_path.resolve() / "t.yaml"
    assert (s.kg, s.methods, s.formats) == ("a", ("NSC", "NDC", "NNSC", "NNDC", "NNSR", "NNDR"), ("yn", "wh"))


def test_the_fpq_suite_is_found_under_suites_and_at_the_old_place(tmp_path: Path) -> None:
    from kgprobe.config import fpq_settings

    new = load_config(_cfg(tmp_path, _FPQ))
    assert new.has_suite("fpq") and "fpq" in new.sections and fpq_settings(new) is new.suites.fpq
    with pytest.warns(ConfigDeprecationWarning, match=r"project.yaml: the top-level 'fpq:' section is deprecated; "
                                                      r"move it under 'suites:'"):
        old = load_config(_cfg(tmp_path, _FPQ_TOP))
    assert old.has_suite("fpq") and "fpq" in old.sections and fpq_settings(old) == fpq_settings(new)
    none = load_config(_cfg(tmp_path, "kgs:\n  a: {triples: x}\n"))
    assert not none.has_suite("fpq") and "fpq" not in none.sections
    with pytest.raises(ConfigError, match="suites.fpq: the fpq suite is not configured"):
        fpq_settings(none)


def test_sections_keep_the_file_as_written(tmp_path: Path) -> None:
    cfg = load_config(_cfg(tmp_path, _FPQ + _MODELS.split("\n", 2)[2]))
    assert cfg.sections == {
        "suites": {"fpq": {"domains": {"art": ["film"]}, "templates": "t.yaml"}},
        "fpq": {"domains": {"art": ["film"]}, "templates": "t.yaml"},  # the enabled suite under its own name
        "models": [{"name": "oracle", "backend": "reference", "kind": "oracle"},
                   {"name": "coin", "backend": "reference", "kind": "random"}],
    }


def test_a_registered_suite_is_configured_under_suites_with_its_own_settings(tmp_path: Path) -> None:
    from pydantic import BaseModel, ConfigDict

    from kgprobe.config import project_schema
    from kgprobe.suites import Suite, register, unregister

    class ToySettings(BaseModel):
        model_config = ConfigDict(extra="forbid")
        size: int = 1

    class Toy(Suite):
        name = "toy"
        Settings = ToySettings

    register(Toy())
    try:
        cfg = load_config(_cfg(tmp_path, "kgs:\n  a: {triples: x}\nsuites:\n  toy: {size: 2}\n"))
        assert cfg.has_suite("toy") and cfg.suite("toy") == ToySettings(size=2) and not cfg.has_suite("fpq")
        assert "toy" in cfg.sections
        path = _cfg(tmp_path, "kgs:\n  a: {triples: x}\nsuites:\n  toy: {sise: 2}\n")
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert str(info.value) == f"{path}: suites.toy.sise: unknown key; did you mean 'size'?"
        toy = project_schema()["$defs"]["SuitesConfig"]["properties"]["toy"]
        assert toy["anyOf"][0]["properties"]["size"]["default"] == 1
    finally:
        unregister("toy")


def test_the_fpq_suite_in_both_places_is_an_error(tmp_path: Path) -> None:
    path = _cfg(tmp_path, _FPQ + "fpq:\n  domains: {art: [film]}\n  templates: t.yaml\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}: fpq: the fpq suite is set twice, at the top level and under suites; "
                               "keep suites.fpq only")


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        (_FPQ + "    max_hop: 3\n", "suites.fpq.max_hop", "unknown key; did you mean 'max_hops'?"),
        (_MODELS + "generation:\n  temprature: 0.3\n", "generation.temprature", "unknown key; did you mean 'temperature'?"),
        (_MODELS + "  - {name: x, backend: reference, kindd: oracle}\n", "models.2.kindd", "unknown key; did you mean 'kind'?"),
        (_FPQ.replace("[film]", "{types: [film], deny_relation: [spouse]}"), "suites.fpq.domains.art.deny_relation",
         "unknown key; did you mean 'deny_relations'?"),
        (_FPQ.replace("  fpq:", "  fqp:"), "suites.fqp", "unknown suite; did you mean 'fpq'?"),
        ("kgs:\n  a: {triples: x}\nsuites:\n  zzz: {}\n", "suites.zzz",
         "unknown suite; registered suites: drowzee, erbench, fpq, grapheval, okgqa"),
    ],
)
def test_unknown_keys_suggest_the_closest_allowed_one(tmp_path: Path, text: str, where: str, problem: str) -> None:
    path = _cfg(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: {where}: {problem}"


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        # nested sections
        (_FPQ + "    max_hops: 0\n", "suites.fpq.max_hops", "must be ≥ 1, got 0"),
        (_FPQ + "    kg: b\n", "suites.fpq.kg", "'b' is not one of the configured KGs (a)"),
        ("kgs:\n  a: {triples: x}\nsubgraph:\n  ppr: {alpha: 2}\n", "subgraph.ppr.alpha", "must be ≤ 1.0, got 2"),
        ("kgs:\n  a: {triples: x}\nqueries:\n  kg: a\n", "queries",
         "give at least one of lists, files, sample or fpq_subjects"),
        # a list index in the path
        (_MODELS + "  - {name: x, backend: gpt}\n", "models.2.backend",
         "must be one of 'reference', 'transformers', 'litellm', 'vllm', 'imported', got 'gpt'"),
        (_MODELS + "  - {name: x, backend: transformers}\n", "models.2",
         "'model_id' is required: a folder of HF weights, a hub id in the local HF cache, ``gguf:<file>`` or "
         "``smollm2-135m-instruct``"),
        (_MODELS + "  - {name: oracle, backend: reference}\n", "models.2.name",
         "'oracle' is used twice; model names must be unique (they key the response store)"),
        (_MODELS + "generation:\n  grounded_models: [oracle, gpt]\n", "generation.grounded_models.1",
         "'gpt' is not one of the models listed under models (oracle, coin)"),
        ("kgs:\n  a: {triples: x}\nperturbation:\n  levels: [0.5, 1.5]\n", "perturbation.levels.1", "must be ≤ 1, got 1.5"),
        ("kgs:\n  a: {triples: x}\nqueries:\n  files: [{mention_column: m}]\n", "queries.files.0", "'path' is required"),
        ("kgs:\n  a: {format: tsv}\n", "kgs.a",
         "'triples' is required: one triples file or a list of them, relative to the config file"),
    ],
)
def test_mistakes_name_their_key_path(tmp_path: Path, text: str, where: str, problem: str) -> None:
    path = _cfg(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: {where}: {problem}"


def test_every_problem_gets_its_own_line(tmp_path: Path) -> None:
    path = _cfg(tmp_path, "seed: one\nkgs:\n  a: {triples: x, lenient: 'no'}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).splitlines() == [f"{path}: seed: must be an integer, got 'one'",
                                            f"{path}: kgs.a.lenient: must be true or false, got 'no'"]


def test_generation_options_and_model_defaults(tmp_path: Path) -> None:
    from kgprobe.config import generation_models, generation_settings

    cfg = load_config(_cfg(tmp_path, _MODELS + "generation:\n  n: 1\n  limit: 4\n"))
    assert generation_settings(cfg) == {"shard_size": 4096, "limit": 4, "formats": ("yn", "wh"), "grounded_limit": 4,
                                        "grounded_models": None, "max_run_cost_usd": None, "max_failed_share": 0.0}
    assert [(m.name, m.params.n, m.params.temperature) for m in generation_models(cfg)] == [("oracle", 1, 0.6),
                                                                                         ("coin", 1, 0.6)]
    cfg = load_config(_cfg(tmp_path, _MODELS + "generation:\n  limit: 4\n  grounded_limit: null\n"))
    assert generation_settings(cfg)["grounded_limit"] is None
    cfg = load_config(_cfg(tmp_path, _MODELS + "generation:\n  max_failed_share: 0.25\n"))
    assert generation_settings(cfg)["max_failed_share"] == 0.25
    with pytest.raises(ConfigError, match="max_failed_share"):
        load_config(_cfg(tmp_path, _MODELS + "generation:\n  max_failed_share: 1.5\n"))


def test_config_path_prefers_the_flag_then_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    assert config_path() == Path("examples/sample.yaml")
    monkeypatch.setenv(CONFIG_ENV, "")
    assert config_path() == Path("examples/sample.yaml")
    project = _cfg(tmp_path, "kgs:\n  a: {triples: x}\n")
    monkeypatch.setenv(CONFIG_ENV, str(project))
    assert config_path() == project
    assert config_path("other.yaml") == Path("other.yaml")
    # load_config without a path reads the same file
    assert load_config().path == project.resolve()


def test_kgprobe_run_reads_the_config_the_environment_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from pipelines.cli import main

    # broken configs stop `run` before Dagster starts, with the message naming the file that was read
    from_env = _cfg(tmp_path, _FPQ + "    max_hop: 3\n")
    monkeypatch.setenv(CONFIG_ENV, str(from_env))
    assert main(["run"]) == 2
    assert capsys.readouterr().err == f"kgprobe: {from_env}: suites.fpq.max_hop: unknown key; did you mean 'max_hops'?\n"
    flag = tmp_path / "flag.yaml"
    flag.write_text("kgs:\n  a: {triples: x}\nsed: 1\n", encoding="utf-8")
    assert main(["run", "--config", str(flag)]) == 2  # the flag wins over the environment
    assert capsys.readouterr().err == f"kgprobe: {flag}: sed: unknown key; did you mean 'seed'?\n"


def test_schema_command_prints_the_config_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pipelines.cli import main

    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert {"kgs", "models", "suites", "generation", "scoring"} <= set(schema["properties"])
    suites = schema["$defs"][schema["properties"]["suites"]["$ref"].rsplit("/", 1)[-1]]
    assert set(suites["properties"]) == {"fpq", "okgqa", "grapheval", "erbench", "drowzee"}
    assert suites["additionalProperties"] is False
    fpq = schema["$defs"]["FPQSettings"]
    assert {"domains", "templates", "max_hops", "directed", "hop_sampling"} <= set(fpq["properties"])
    assert fpq["properties"]["hop_sampling"]["enum"] == ["uniform_hop", "uniform_candidate"]
    assert schema["properties"]["fpq"]["deprecated"] is True
    out = tmp_path / "kgprobe.schema.json"
    assert main(["schema", "--output", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == schema


def test_the_schema_accepts_the_sample_config_and_rejects_a_typo() -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema checks the schema the way an editor does")
    from kgprobe.config import project_schema

    schema = project_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    sample = yaml.safe_load((Path(__file__).resolve().parents[2] / "examples" / "sample.yaml").read_text(encoding="utf-8"))
    assert list(validator.iter_errors(sample)) == []
    sample["suites"]["fpq"]["max_hop"] = 3
    assert [list(e.absolute_path) for e in validator.iter_errors(sample)] == [["suites", "fpq"]]


def _undescribed(node: object, path: str = "") -> tuple[list[str], list[str]]:
    """(every key path under a ``properties`` of the schema, those without a description), inline schemas too."""
    seen: list[str] = []
    missing: list[str] = []
    if isinstance(node, dict):
        for key, prop in (node.get("properties") or {}).items():
            where = f"{path}.{key}" if path else key
            seen.append(where)
            if not (isinstance(prop, dict) and str(prop.get("description") or "").strip()):
                missing.append(where)
        for key, value in node.items():
            sub_seen, sub_missing = _undescribed(value, f"{path}/{key}" if key not in ("properties",) else path)
            seen += sub_seen
            missing += sub_missing
    elif isinstance(node, list):
        for value in node:
            sub_seen, sub_missing = _undescribed(value, path)
            seen += sub_seen
            missing += sub_missing
    return seen, missing


def test_every_key_of_the_config_schema_has_a_description() -> None:
    # the config reference (docs/hooks.py) and editors show these; a key without one is a key nobody can look up
    from kgprobe.config import project_schema
    from kgprobe.generation.backends import CONFIG_CLASSES
    from kgprobe.grounding.scorer import TrainConfig
    from kgprobe.suites import SUITES

    seen, missing = _undescribed(project_schema())
    assert missing == []
    # the walk reaches the keys this test is for: backend options, the scorer's, and the suites' inline settings
    keys = {p.rsplit(".", 1)[-1] for p in seen}
    assert {f for cls in CONFIG_CLASSES.values() for f in cls.__dataclass_fields__} <= keys
    assert set(TrainConfig.__dataclass_fields__) <= keys
    assert {f.alias or name for suite in SUITES.values() for name, f in suite.Settings.model_fields.items()} <= keys


@dataclasses.dataclass(frozen=True)
class _DocumentedOptions:
    """Options of a test backend.

    More prose."""

    model_id: str
    """Which model.

    Its second paragraph."""
    retries: int = 3
    plain: bool = False  # a comment is no description
    extra: dict = dataclasses.field(default_factory=dict)
    """Anything else."""


def test_model_entries_describe_their_keys_with_the_option_dataclass_field_docstrings() -> None:
    from kgprobe.config import _backend_entry, _field_docs

    assert _field_docs(_DocumentedOptions) == {"model_id": "Which model.\n\nIts second paragraph.",
                                               "extra": "Anything else."}
    fields = _backend_entry("toy", _DocumentedOptions).model_json_schema()["properties"]
    assert fields["backend"]["description"] == "toy: options of a test backend."
    assert fields["model_id"]["description"] == "Which model.\n\nIts second paragraph."
    assert fields["extra"]["description"] == "Anything else."
    assert "description" not in fields["retries"] and fields["retries"]["default"] == 3
    assert "description" not in fields["plain"]


def test_a_limit_comes_from_the_model_then_the_suite_then_the_generation_section(tmp_path: Path) -> None:
    from kgprobe.project.plan import partition_limit as _limit
    from kgprobe.config import generation_models
    from kgprobe.suites import SUITES

    fpq = ("suites:\n  fpq: {kg: a, domains: {art: [painter]}, templates: t.yaml, limit: 5, grounded_limit: 7}\n")
    (tmp_path / "t.yaml").write_text("{}\n", encoding="utf-8")
    models = _MODELS.replace("kind: random}", "kind: random, limit: 2}")
    cfg = load_config(_cfg(tmp_path, models + fpq + "generation:\n  limit: 9\n"))
    oracle, coin = generation_models(cfg)
    assert coin.limit == 2 and oracle.limit is None
    suite = SUITES["fpq"]
    assert [_limit(cfg, suite, s, grounded=False) for s in (oracle, coin)] == [5, 2]
    assert [_limit(cfg, suite, s, grounded=True) for s in (oracle, coin)] == [7, 2]
    cfg = load_config(_cfg(tmp_path, _MODELS + fpq.replace(", limit: 5, grounded_limit: 7", "")
                           + "generation:\n  limit: 9\n"))
    assert _limit(cfg, suite, generation_models(cfg)[0], grounded=True) == 9
    with pytest.raises(ConfigError, match="limit"):
        load_config(_cfg(tmp_path, _MODELS.replace("kind: random}", "kind: random, limit: 0}")))


def test_named_models_leave_out_the_reference_baselines(tmp_path: Path) -> None:
    from kgprobe.config import named_models

    cfg = load_config(_cfg(tmp_path, _MODELS + "  - {name: smol, backend: transformers, model_id: some/model}\n"
                                      "  - {name: big, backend: vllm, model_id: other/model}\n"))
    assert named_models(cfg) == ["smol", "big"]
    assert named_models(load_config(_cfg(tmp_path, _MODELS))) == []
