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
