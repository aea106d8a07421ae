"""Configs written to hurt: YAML aliases that expand to millions of values, documents nested thousands of levels
deep (YAML configs, JSON KG files), and input paths that climb out of the config's folder. The first two are
refused with a clear error naming the file, before they are built; the third when ``allow_paths_outside_config:
false`` (what a shared daemon sets)."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import duckdb
import pytest
import yaml

from kgprobe.config import load_config
from kgprobe.errors import ConfigError
from kgprobe.suites.erbench.spec import load_spec
from kgprobe.yaml_io import MAX_YAML_VALUES, load_yaml

SAMPLE = Path(__file__).resolve().parents[2] / "examples"


def _bomb(levels: int, width: int = 9) -> str:
    """A litellm entry whose ``extra`` holds ``width ** levels`` strings through ``levels`` nested aliases."""
    lines = ["kgs:", "  k: {format: tsv, triples: t.tsv}", "models:", "  - name: bomb", "    backend: litellm",
             "    model_id: openai/x", "    extra:"]
    lines.append(f"      l0: &l0 [{', '.join(['lol'] * width)}]")
    for i in range(1, levels + 1):
        lines.append(f"      l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def _write(folder: Path, text: str, name: str = "c.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("levels", [6, 9])
def test_an_alias_bomb_is_refused_quickly_and_clearly(folder: Path, levels: int) -> None:
    # 9 ** 6 = 531,441 values (a few seconds to validate before), 9 ** 9 = 387 million (minutes and gigabytes)
    path = _write(folder, _bomb(levels))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert time.perf_counter() - started < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024  # KiB: under 200 MB more
    message = str(err.value)
    assert message.startswith(f"{path}: refused: the document expands to more than {MAX_YAML_VALUES:,} values")
    assert "aliases" in message


def test_an_alias_that_contains_itself_is_refused(folder: Path) -> None:
    path = _write(folder, "kgs:\n  k: {format: tsv, triples: t.tsv}\nloop: &a [1, *a]\n")
    with pytest.raises(ConfigError, match="refers to a list or mapping that contains it"):
        load_config(path)


def test_ordinary_aliases_still_work(folder: Path) -> None:
    text = ("kgs:\n  k: {format: tsv, triples: t.tsv}\nmodels:\n"
            "  - &m {name: a, backend: reference, kind: oracle}\n  - {<<: *m, name: b}\n")
    cfg = load_config(_write(folder, text))
    assert [m.name for m in cfg.models] == ["a", "b"]
    assert load_yaml("a: &x [1, 2]\nb: *x\n", what="x") == {"a": [1, 2], "b": [1, 2]}


def test_an_erbench_spec_bomb_is_refused(folder: Path) -> None:
    path = _write(folder, _bomb(9), "spec.yaml")
    with pytest.raises(ConfigError, match="expands to more than"):
        load_spec("spec.yaml", config_dir=folder)
    with pytest.raises(ConfigError, match="expands to more than"):
        load_yaml(path.read_text(encoding="utf-8"), what=str(path))


# ------------------------------------------------------------------------------------------------------ paths
ESCAPES = ["../../../../../../../../etc/passwd", "/etc/passwd", "sub/../../outside.tsv"]


def _outside(folder: Path) -> None:
    (folder.parent / "outside.tsv").write_text("x\tr\ty\n", encoding="utf-8")


@pytest.mark.parametrize("triples", ESCAPES)
def test_confined_configs_refuse_paths_outside_their_folder(folder: Path, triples: str) -> None:
    _outside(folder)
    (folder / "sub").mkdir()
    text = f"allow_paths_outside_config: false\nkgs:\n  k: {{format: tsv, triples: {triples}}}\n"
    with pytest.raises(ConfigError) as err:
        load_config(_write(folder, text))
    message = str(err.value)
    assert "kgs.k.triples" in message and "outside the config file's folder" in message
    assert "allow_paths_outside_config" in message


def test_the_environment_confines_every_config(folder: Path, monkeypatch) -> None:
    # a shared daemon sets it once; a config that asks for more is confined all the same
    _outside(folder)
    monkeypatch.setenv("KGPROBE_ALLOW_PATHS_OUTSIDE_CONFIG", "false")
    for head in ("", "allow_paths_outside_config: true\n"):
        with pytest.raises(ConfigError, match="kgs.k.triples.0: .* is outside the config file's folder"):
            load_config(_write(folder, head + "kgs:\n  k: {format: tsv, triples: ../outside.tsv}\n"))
    assert load_config(_write(folder, "kgs:\n  k: {format: tsv, triples: t.tsv}\n")).kgs["k"].files


def test_a_symlink_out_of_the_folder_is_outside(folder: Path) -> None:
    _outside(folder)
    (folder / "link.tsv").symlink_to(folder.parent / "outside.tsv")
    text = "allow_paths_outside_config: false\nkgs:\n  k: {format: tsv, triples: t.tsv, entity_labels: link.tsv}\n"
    with pytest.raises(ConfigError, match="kgs.k.entity_labels: .* is outside the config file's folder"):
        load_config(_write(folder, text))


def test_paths_inside_the_folder_and_the_personal_default(folder: Path) -> None:
    _outside(folder)
    (folder / "sub").mkdir()
    (folder / "sub" / "t2.tsv").write_text("c\tr\td\n", encoding="utf-8")
    text = "allow_paths_outside_config: false\nkgs:\n  k: {format: tsv, triples: [t.tsv, sub/../sub/t2.tsv]}\n"
    assert len(load_config(_write(folder, text)).kgs["k"].files) == 2
    # a personal run (the default) may read files anywhere
    cfg = load_config(_write(folder, "kgs:\n  k: {format: tsv, triples: ../outside.tsv}\n"))
    assert cfg.kgs["k"].files[0].resolve() == (folder.parent / "outside.tsv").resolve()


def _confined_sample(folder: Path) -> dict:
    """The sample config with its data copied into ``folder``, confined: it writes inside its own folder (the
    sample's warehouse and embedding cache lie beside the repository) or where the service says."""
    import shutil

    shutil.copytree(SAMPLE / "sample", folder / "sample")
    cfg = yaml.safe_load((SAMPLE / "sample.yaml").read_text(encoding="utf-8"))
    del cfg["warehouse"]
    cfg["suites"]["okgqa"]["embedding_cache"] = "embeddings"
    return {**cfg, "allow_paths_outside_config": False}


def test_confinement_covers_suite_inputs_and_erbench_data(folder: Path) -> None:
    cfg = _confined_sample(folder)  # the sample's own data, copied beside the config: everything inside loads
    assert load_config(_write(folder, yaml.safe_dump(cfg))).allow_paths_outside_config is False

    _outside(folder)
    spec = yaml.safe_load((folder / "sample" / "erdb" / "erdb.yaml").read_text(encoding="utf-8"))
    spec["relations"]["olympics"]["file"] = "../../../outside.tsv"
    (folder / "sample" / "erdb" / "erdb.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    with pytest.raises(ConfigError, match="suites.erbench.db: .*outside.tsv is outside the config file's folder"):
        load_config(_write(folder, yaml.safe_dump(cfg)))


# a confined config names no path outside its folder, whatever key holds it: model weights (read), the converted
# weights' cache and the embedding cache (read and written), the warehouse (written)
CONFINED = "allow_paths_outside_config: false\nkgs:\n  k: {format: tsv, triples: t.tsv}\n"
LOCAL_MODEL = {"name": "m", "backend": "transformers", "model_id": "smollm2-135m-instruct"}


@pytest.mark.parametrize("key,value,where", [
    ("model_id", "gguf:/etc/passwd", "models.0.model_id"),
    ("model_id", "/etc", "models.0.model_id"),
    ("model_id", "gguf:../outside.gguf", "models.0.model_id"),
    ("cache_dir", "../../..", "models.0.cache_dir"),
])
def test_confined_configs_refuse_model_paths_outside_their_folder(folder: Path, monkeypatch, key: str, value: str,
                                                                  where: str) -> None:  # fmt: skip
    monkeypatch.chdir(folder)  # the backend reads a model id from the working directory: here the config's folder
    entry = yaml.safe_dump({"models": [{**LOCAL_MODEL, key: value}]})
    with pytest.raises(ConfigError) as err:
        load_config(_write(folder, CONFINED + entry))
    assert f"{where}: " in str(err.value) and "outside the config file's folder" in str(err.value)
    # the personal default takes them as written
    assert load_config(_write(folder, "kgs:\n  k: {format: tsv, triples: t.tsv}\n" + entry)).models


def test_confined_configs_keep_hub_ids_and_weights_inside_their_folder(folder: Path, monkeypatch) -> None:
    monkeypatch.chdir(folder)
    (folder / "weights").mkdir()
    (folder / "m.gguf").write_bytes(b"GGUF")
    models = ("models:\n  - {name: hub, backend: transformers, model_id: HuggingFaceTB/SmolLM2-135M-Instruct}\n"
              "  - {name: smol, backend: transformers, model_id: smollm2-135m-instruct, cache_dir: cache}\n"
              "  - {name: dir, backend: vllm, model_id: ./weights}\n"
              "  - {name: gguf, backend: transformers, model_id: 'gguf:m.gguf'}\n"
              "  - {name: api, backend: litellm, model_id: /etc/passwd}\n")  # a provider's model name, never read
    assert [m.name for m in load_config(_write(folder, CONFINED + models)).models] == ["hub", "smol", "dir", "gguf",
                                                                                        "api"]


@pytest.mark.parametrize("warehouse", ["/tmp/elsewhere/kgprobe.duckdb", "../w/kgprobe.duckdb"])
def test_confined_configs_refuse_a_warehouse_outside_their_folder(folder: Path, monkeypatch, warehouse: str) -> None:
    monkeypatch.chdir(folder)
    with pytest.raises(ConfigError, match=r"warehouse: .* is outside the config file's folder .*KGPROBE_WAREHOUSE"):
        load_config(_write(folder, CONFINED + f"warehouse: {warehouse}\n"))
    assert load_config(_write(folder, CONFINED + "warehouse: w/kgprobe.duckdb\n")).warehouse == Path("w/kgprobe.duckdb")


@pytest.mark.parametrize("section,where", [
    ({"okgqa": {"embedding_cache": "../../.."}}, "suites.okgqa.embedding_cache"),
    ({"okgqa": {"embedding_cache": "/tmp"}}, "suites.okgqa.embedding_cache"),
    ({"grapheval": {"hidden_judge": {"substitute_model": "gguf:/etc/passwd"}}},
     "suites.grapheval.hidden_judge.substitute_model"),
    ({"drowzee": {"reword": {"name": "r", "backend": "transformers", "model_id": "/etc"}}}, "suites.drowzee.reword"),
])
def test_confined_configs_refuse_suite_paths_outside_their_folder(folder: Path, section: dict, where: str) -> None:
    cfg = _confined_sample(folder)
    for name, settings in section.items():
        cfg["suites"][name] = {**(cfg["suites"].get(name) or {}), **settings}
    with pytest.raises(ConfigError) as err:
        load_config(_write(folder, yaml.safe_dump(cfg)))
    assert f"{where}: " in str(err.value) and "outside the config file's folder" in str(err.value)


@pytest.mark.parametrize("depth", [150, 100_000])
@pytest.mark.parametrize("shape", ["flow", "block"])
def test_a_deeply_nested_config_is_refused_clearly(folder: Path, depth: int, shape: str) -> None:
    # past a few hundred levels PyYAML's recursive composer ended in a RecursionError traceback
    nested = ("[" * depth + "]" * depth if shape == "flow"
              else "\n" + "\n".join("        " + "  " * i + f"k{i}:" for i in range(min(depth, 2_000))) + " 1")
    path = _write(folder, _bomb(0).replace("      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
                                           f"      deep: {nested}"))
    with pytest.raises(ConfigError, match=rf"^{path}: refused: lists and mappings nest (more than 100 levels deep|too "
                                          "deeply to read)"):
        load_config(path)


@pytest.mark.parametrize("fmt", ["labels", "kopl", "events"])
def test_a_deeply_nested_json_file_is_refused_clearly(folder: Path, fmt: str) -> None:
    from kgprobe import KGSource, load_kg
    from kgprobe.errors import IngestError

    deep = "[" * 100_000 + "]" * 100_000
    text = {"labels": '{"a": "Alpha",\n"b": ' + deep + "}", "kopl": '{"entities": ' + deep + "}", "events": deep}[fmt]
    path = _write(folder, text, "deep.json")
    source = (KGSource(triples=[folder / "t.tsv"], entity_labels=path) if fmt == "labels"
              else KGSource(triples=[path], format=fmt))
    with pytest.raises(IngestError, match=rf"^{path}(, line 2)?: .*nested too deeply"):
        load_kg(duckdb.connect(), source)
