"""kgprobe.config: the project YAML file, its path resolution and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgprobe.config import load_config
from kgprobe.errors import ConfigError


def _cfg(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "project.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    cfg = load_config(_cfg(tmp_path, "kgs:\n  mini:\n    triples: [data/kg.tsv]\n    entity_labels: data/labels.tsv\n"))
    src = cfg.kgs["mini"]
    assert src.files == (tmp_path.resolve() / "data" / "kg.tsv",)
    assert Path(src.entity_labels) == tmp_path.resolve() / "data" / "labels.tsv"
    assert src.name == "mini" and src.format == "tsv"
    assert cfg.warehouse == Path("warehouse/kgprobe.duckdb") and cfg.seed == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kgs: {}\n", "'kgs' must map at least one KG"),
        ("kgz:\n  a: {triples: x}\n", r"unknown section\(s\) \['kgz'\]"),
        ("kgs:\n  a: {triples: x, format: rdfxml}\n", "kgs.a.format: 'rdfxml' is not one of"),
        ("kgs:\n  a: {format: tsv}\n", "kgs.a: 'triples'.*is required"),
        ("kgs:\n  a: {triples: x, labels: y}\n", r"kgs.a: unknown key\(s\) \['labels'\]"),
        ("seed: one\nkgs:\n  a: {triples: x}\n", "seed must be an integer"),
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
        ("  judge: [oracle]\n", r"scoring: unknown key\(s\) \['judge'\]"),
        ("  judges: [gpt-9]\n", r"scoring.judges\[0\]: model 'gpt-9' is not in the config's models"),
        ("  judges: [{model: oracle, n: 3}]\n", r"scoring.judges\[0\]: unknown key\(s\) \['n'\]"),
        ("  judges: [oracle, oracle]\n", "a model is listed twice"),
        ("  judges: [{model: oracle, temperature: -1}]\n", r"scoring.judges\[0\]: sampling parameter temperature"),
        ("  bootstrap: {resamples: 0}\n", "scoring.bootstrap: resamples must be >= 1"),
        ("  bootstrap: {level: 0.9}\n", "scoring.bootstrap: expected"),
        ("  unknown_warn: 1.5\n", r"scoring.unknown_warn must lie in \[0, 1\]"),
    ],
)
def test_scoring_mistakes_name_the_key(tmp_path: Path, scoring: str, message: str) -> None:
    from kgprobe.config import scoring_settings

    with pytest.raises(ConfigError, match=message) as info:
        scoring_settings(load_config(_cfg(tmp_path, _MODELS + "scoring:\n" + scoring)))
    assert "project.yaml" in str(info.value)


_FPQ = "kgs:\n  a: {triples: x}\nfpq:\n  domains: {art: [film]}\n  templates: t.yaml\n"


def test_fpq_hops_default_to_directed_with_the_hop_drawn_first(tmp_path: Path) -> None:
    from kgprobe.config import fpq_settings

    s = fpq_settings(load_config(_cfg(tmp_path, _FPQ)))
    assert (s.directed, s.hop_sampling, s.max_hops) == (True, "uniform_hop", 5)
    s = fpq_settings(load_config(_cfg(tmp_path, _FPQ + "  directed: false\n  hop_sampling: uniform_candidate\n")))
    assert (s.directed, s.hop_sampling) == (False, "uniform_candidate")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("  directed: 'yes'\n", r"fpq.directed: true .* or false, got 'yes'"),
        ("  hop_sampling: by_hop\n", "fpq.hop_sampling: use uniform_hop .* got 'by_hop'"),
    ],
)
def test_fpq_hop_settings_are_checked(tmp_path: Path, extra: str, message: str) -> None:
    from kgprobe.config import fpq_settings

    with pytest.raises(ConfigError, match=message) as info:
        fpq_settings(load_config(_cfg(tmp_path, _FPQ + extra)))
    assert "project.yaml" in str(info.value)
