"""Model names a config may hold: each becomes a Dagster partition key and a row of every table a person reads, so a
name Dagster cannot take is refused at config validation (naming the key and the allowed characters) rather than by
a raw Dagster error later; names are read in NFC, and two names that look the same (NFKC, case, look-alike letters)
are refused with both named."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
import yaml

from kgprobe.config import generation_settings, load_config, scoring_settings
from kgprobe.errors import ConfigError

KG = {"kgs": {"k": {"format": "tsv", "triples": "t.tsv"}}}


def _config(folder: Path, *names: str, **extra) -> Path:
    models = [{"name": n, "backend": "reference", "kind": "always-yes"} for n in names]
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump({**KG, "models": models, **extra}, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["a|b", "a,b", "a[0]", "b]", "wait...", "tab\there", "nul\x00", "line\nbreak",
                                  "rtl\u202egpt", "zero\u200bwidth", " padded"])
def test_a_name_dagster_cannot_key_is_a_config_error_naming_the_key(folder: Path, name: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(_config(folder, "ok", name))
    message = str(err.value)
    assert message.startswith(f"{folder / 'c.yaml'}: models.1.name: {name!r} ")
    assert "any other printable character except | , [ ] and '...'" in message


def test_names_with_slashes_colons_spaces_and_accents_make_partitions(folder: Path) -> None:
    from pipelines.partitions import build_partitions

    names = ["openai/gpt-4o-mini", "llama3:8b", "my model", "é", "Qwen2.5 (7B) #1 @home", "模型…"]
    cfg = load_config(_config(folder, *names))
    parts = build_partitions(cfg)
    assert parts.model.get_partition_keys() == names
    keys = parts.model_perturbation.get_partition_keys()
    assert "llama3:8b|none" in keys and "模型…|none" in keys


def test_names_are_read_in_nfc_wherever_the_config_names_them(folder: Path) -> None:
    nfd = unicodedata.normalize("NFD", "Modèle-é")
    nfc = unicodedata.normalize("NFC", nfd)
    assert nfd != nfc
    cfg = load_config(_config(folder, nfd, scoring={"judges": [nfc]}, generation={"grounded_models": [nfd]}))
    assert [m.name for m in cfg.models] == [nfc]
    assert [j.name for j in scoring_settings(cfg).judges] == [nfc]
    assert generation_settings(cfg)["grounded_models"] == [nfc]


@pytest.mark.parametrize("a,b", [
    ("gpt-4o", "GPT-4o"),                        # case
    ("gpt-4o", "gpt-4\u043e"),                   # a Cyrillic o
    ("gpt-4o", "gpt-\uff14o"),                   # a fullwidth 4 (NFKC)
    ("llama", "\u217clama"),                     # ROMAN NUMERAL FIFTY, which NFKC reads as l
    ("Modèle", unicodedata.normalize("NFD", "MODÈLE")),
])
def test_names_that_look_the_same_are_refused_with_both_named(folder: Path, a: str, b: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(_config(folder, a, "other", b))
    message = str(err.value)
    assert f"models.2.name: {unicodedata.normalize('NFC', b)!r} looks the same as models.0.name {a!r}" in message
    assert "rename one" in message
