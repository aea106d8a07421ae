"""Malformed project configs, section by section: every mistake is one ConfigError whose lines name the file and the
key path and say what to do, never a traceback from pydantic, PyYAML or a suite's own code.

Each case is a mutation of the bundled sample config (examples/sample.yaml), written beside a link to the sample's
data so that every other path in it resolves."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kgprobe.config import load_config
from kgprobe.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "sample.yaml"
DELETE = object()

# pydantic's and PyYAML's own wording, which a user should never have to read
RAW = ("Input should be", "validation error", "For further information", "Traceback", "pydantic", "[type=")


def _sample() -> dict[str, Any]:
    return yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))


def _set(cfg: dict[str, Any], keys: tuple[Any, ...], value: Any) -> dict[str, Any]:
    node = cfg
    for key in keys[:-1]:
        node = node[key]
    if value is DELETE:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return cfg


@pytest.fixture
def project(tmp_path: Path) -> Callable[[str], Path]:
    """Writes a config text as ``bad.yaml`` in a folder where the sample's relative data paths resolve."""
    (tmp_path / "sample").symlink_to(SAMPLE.parent / "sample", target_is_directory=True)

    def write(text: str) -> Path:
        path = tmp_path / "bad.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


def _assert_clear(message: str, path: Path, where: str, expected: tuple[str, ...]) -> None:
    lines = message.splitlines()
    assert lines and all(line.startswith(f"{path}: ") for line in lines), message  # every line names the file
    # a missing key is reported at its parent ("kgs.sample: 'triples' is required"), at the top level without one
    prefix = f"{path}: {where}: " if where else f"{path}: "
    assert any(line.startswith(prefix) for line in lines), f"no line about {where}:\n{message}"
    for text in expected:
        assert text in message, f"{text!r} not in:\n{message}"
    assert not [raw for raw in RAW if raw in message], message


# (id, keys to change, new value (DELETE removes the key), the key path the message names, what it says)
CASES: list[tuple[str, tuple[Any, ...], Any, str, tuple[str, ...]]] = [
    # top level
    ("seed-string", ("seed",), "zero", "seed", ("must be an integer", "'zero'")),
    ("seed-float", ("seed",), 1.5, "seed", ("must be an integer", "1.5")),
    ("name-list", ("name",), ["a"], "name", ("must be a string",)),
    ("warehouse-number", ("warehouse",), 5, "warehouse", ("must be a file path",)),
    ("top-level-typo", ("sed",), 1, "sed", ("unknown key", "did you mean 'seed'?")),
    # kgs
    ("kgs-list", ("kgs",), ["sample"], "kgs", ("must be a mapping",)),
    ("kgs-empty", ("kgs",), {}, "kgs", ("map at least one KG",)),
    ("kgs-missing", ("kgs",), DELETE, "kgs", ("map at least one KG", "fpq")),   # only erbench alone may leave it out
    ("kg-missing-triples", ("kgs", "sample", "triples"), DELETE, "kgs.sample", ("'triples' is required",)),
    ("kg-triples-absent", ("kgs", "sample", "triples"), ["sample/absent.tsv"], "kgs.sample.triples.0",
     ("absent.tsv not found", "fix the path")),
    ("kg-labels-absent", ("kgs", "sample", "entity_labels"), "sample/absent.tsv", "kgs.sample.entity_labels",
     ("absent.tsv not found",)),
    ("kg-labels-folder", ("kgs", "sample", "entity_labels"), "sample", "kgs.sample.entity_labels",
     ("is a folder; give a file",)),
    ("kg-format", ("kgs", "sample", "format"), "rdfxml", "kgs.sample.format", ("must be 'tsv'", "'rdfxml'")),
    ("kg-typo", ("kgs", "sample", "entity_label"), "x.tsv", "kgs.sample.entity_label",
     ("did you mean 'entity_labels'?",)),
    ("kg-lenient-string", ("kgs", "sample", "lenient"), "no", "kgs.sample.lenient", ("must be true or false",)),
    ("kg-encoding", ("kgs", "sample", "encoding"), "utf-42", "kgs.sample.encoding", ("unknown text encoding",)),
    ("kg-name", ("kgs", "my-kg"), {"triples": "sample/triples.tsv"}, "kgs", ("must be identifiers",)),
    # queries and subgraph
    ("queries-unknown-kg", ("queries", "kg"), "wiki", "queries.kg", ("'wiki' is not one of the configured KGs",)),
    ("queries-lists-mapping", ("queries", "lists"), {"seeds": ["Vienna"]}, "queries.lists", ("must be a list",)),
    ("queries-empty-seeds", ("queries", "lists", 0, "seeds"), [], "queries.lists.0.seeds", ("must not be empty",)),
    ("queries-per-type-0", ("queries", "sample", "per_type"), 0, "queries.sample.per_type", ("must be ≥ 1",)),
    ("queries-file-absent", ("queries", "files"), [{"path": "sample/absent.csv"}], "queries.files.0.path",
     ("absent.csv not found",)),
    ("subgraph-hops-string", ("subgraph", "hops"), "two", "subgraph.hops", ("must be an integer", "'two'")),
    ("ppr-alpha-range", ("subgraph", "ppr", "alpha"), 1.5, "subgraph.ppr.alpha", ("must be ≤ 1", "1.5")),
    ("ppr-list", ("subgraph", "ppr"), [0.85], "subgraph.ppr", ("must be a mapping",)),
    # perturbation
    ("perturbation-method", ("perturbation", "methods"), ["RS", "XX"], "perturbation.methods.1",
     ("must be 'RS', 'RR', 'ER' or 'ED'", "'XX'")),
    ("perturbation-level-0", ("perturbation", "levels"), [0.0, 0.5], "perturbation.levels.0", ("must be > 0",)),
    ("perturbation-level-scalar", ("perturbation", "levels"), 0.5, "perturbation.levels", ("must be a list",)),
    ("scorer-typo", ("perturbation", "scorer", "epoch"), 3, "perturbation.scorer.epoch",
     ("did you mean 'epochs'?",)),
    ("scorer-model", ("perturbation", "scorer", "model"), "transe", "perturbation.scorer.model",
     ("must be 'distmult' or 'complex'",)),
    ("scorer-dim-0", ("perturbation", "scorer", "dim"), 0, "perturbation.scorer.dim", ("must be a positive integer",)),
    ("scorer-lr-string", ("perturbation", "scorer", "lr"), "fast", "perturbation.scorer.lr", ("must be a number",)),
    # models
    ("models-mapping", ("models",), {"oracle": {"backend": "reference"}}, "models", ("must be a list",)),
    ("model-backend", ("models", 1, "backend"), "openai", "models.1.backend", ("must be one of 'reference'",)),
    ("model-no-backend", ("models", 1, "backend"), DELETE, "models.1", ("'backend' is required",)),
    ("model-no-model-id", ("models", 0, "model_id"), DELETE, "models.0", ("'model_id' is required",)),
    ("model-duplicate-name", ("models", 2, "name"), "oracle", "models.2.name",
     ("'oracle' is used twice", "must be unique")),
    ("model-reference-kind", ("models", 1, "kind"), "psychic", "models.1.kind", ("reference kind must be one of",)),
    ("model-batch-size-0", ("models", 0, "batch_size"), 0, "models.0.batch_size", ("must be ≥ 1",)),
    ("model-max-tokens-string", ("models", 0, "max_tokens"), "48", "models.0.max_tokens", ("must be an integer",)),
    ("model-typo", ("models", 1, "knd"), "oracle", "models.1.knd", ("did you mean 'kind'?",)),
    ("model-entry-string", ("models", 4), "random", "models.4", ("must be a mapping",)),
    # a backend's own checks, at the key they are about
    ("litellm-timeout", ("models", 0), {"name": "smollm2-135m", "backend": "litellm", "model_id": "openai/gpt-4o-mini",
                                        "timeout_s": -1}, "models.0.timeout_s", ("timeout_s must be positive",)),
    ("litellm-secret", ("models", 0), {"name": "smollm2-135m", "backend": "litellm", "model_id": "openai/gpt-4o-mini",
                                       "extra": {"api_key": "sk-do-not-print"}}, "models.0.extra",
     ("must not hold secrets", "api_key_env")),
    ("vllm-memory", ("models", 0), {"name": "smollm2-135m", "backend": "vllm", "model_id": "org/model",
                                    "gpu_memory_utilization": 1.5}, "models.0.gpu_memory_utilization",
     ("must be in (0, 1]",)),
    ("transformers-dtype", ("models", 0, "dtype"), "fp8", "models.0.dtype", ("dtype must be auto",)),
    # generation and scoring
    ("generation-typo", ("generation", "temprature"), 0.3, "generation.temprature",
     ("did you mean 'temperature'?",)),
    ("generation-shard-0", ("generation", "shard_size"), 0, "generation.shard_size", ("must be ≥ 1",)),
    ("generation-grounded-model", ("generation", "grounded_models"), ["oracle", "gpt"],
     "generation.grounded_models.1", ("'gpt' is not one of the models",)),
    ("generation-list", ("generation",), [1], "generation", ("must be a mapping",)),
    ("scoring-judge-unknown", ("scoring", "judges", 1), {"model": "gpt"}, "scoring.judges.1.model",
     ("'gpt' is not one of the models",)),
    ("scoring-confidence", ("scoring", "bootstrap", "confidence"), 1.5, "scoring.bootstrap.confidence",
     ("must be < 1",)),
    ("scoring-warn-string", ("scoring", "unknown_warn"), "high", "scoring.unknown_warn", ("must be a number",)),
    # suites
    ("suites-list", ("suites",), ["fpq"], "suites", ("must be a mapping",)),
    ("suites-unknown", ("suites", "fpp"), {}, "suites.fpp", ("unknown suite", "did you mean 'fpq'?")),
    ("fpq-typo", ("suites", "fpq", "max_hop"), 3, "suites.fpq.max_hop", ("did you mean 'max_hops'?",)),
    ("fpq-hops-0", ("suites", "fpq", "max_hops"), 0, "suites.fpq.max_hops", ("must be ≥ 1",)),
    ("fpq-method", ("suites", "fpq", "methods"), ["NSC", "XYZ"], "suites.fpq.methods.1", ("must be 'NSC'",)),
    ("fpq-n-string", ("suites", "fpq", "n_per_domain"), "forty", "suites.fpq.n_per_domain", ("must be an integer",)),
    ("fpq-templates-absent", ("suites", "fpq", "templates"), "sample/absent.yaml", "suites.fpq.templates",
     ("absent.yaml not found",)),
    ("fpq-domains-absent", ("suites", "fpq", "domains"), "sample/absent.yaml", "suites.fpq.domains",
     ("absent.yaml not found",)),
    ("fpq-kg", ("suites", "fpq", "kg"), "wiki", "suites.fpq.kg", ("'wiki' is not one of the configured KGs",)),
    ("erbench-db-absent", ("suites", "erbench", "db"), "sample/erdb/absent.yaml", "suites.erbench.db",
     ("absent.yaml not found",)),
    ("erbench-db-malformed", ("suites", "erbench", "db"), {"source": {"kind": "excel"}}, "suites.erbench.db",
     ("source.kind", "must be one of")),
    ("erbench-db-missing", ("suites", "erbench", "db"), DELETE, "suites.erbench", ("'db' is required",)),
    ("erbench-limit-string", ("suites", "erbench", "limit_per_fd"), "many", "suites.erbench.limit_per_fd",
     ("must be an integer", "'many'")),
    ("erbench-share-range", ("suites", "erbench", "none_of_the_above"), 1.5, "suites.erbench.none_of_the_above",
     ("must be ≤ 1",)),
    ("erbench-question-type", ("suites", "erbench", "question_types"), ["binary", "essay"],
     "suites.erbench.question_types.1", ("must be 'binary', 'multiple_choice' or 'multihop'",)),
    ("erbench-typo", ("suites", "erbench", "known_entities"), True, "suites.erbench.known_entities",
     ("did you mean 'known_entity'?",)),
    ("erbench-demo-absent", ("suites", "erbench", "few_shot"), {"movie": "sample/absent.txt"},
     "suites.erbench.few_shot.movie", ("absent.txt not found",)),
    ("drowzee-kg", ("suites", "drowzee", "kg"), "wiki", "suites.drowzee.kg",
     ("'wiki' is not one of the configured KGs",)),
    ("drowzee-per-rule-0", ("suites", "drowzee", "per_rule"), 0, "suites.drowzee.per_rule", ("must be ≥ 1",)),
    ("drowzee-per-rule-string", ("suites", "drowzee", "per_rule"), "many", "suites.drowzee.per_rule",
     ("must be an integer",)),
    ("drowzee-rule", ("suites", "drowzee", "rules"), ["negation", "reflexive"], "suites.drowzee.rules.1",
     ("must be 'negation'", "'reflexive'")),
    ("drowzee-inverse-list", ("suites", "drowzee", "inverse"), ["father", "child"], "suites.drowzee.inverse",
     ("must be a mapping",)),
    ("drowzee-composition-pair", ("suites", "drowzee", "compositions"), [["located_in_city", "country"]],
     "suites.drowzee.compositions.0", ("must have at least 3 items",)),
    ("drowzee-threshold", ("suites", "drowzee", "threshold"), 2, "suites.drowzee.threshold", ("must be ≤ 1",)),
    ("drowzee-domain-short", ("suites", "drowzee", "domain"), [2000], "suites.drowzee.domain",
     ("must be a list of 2 values",)),
    ("drowzee-domain-order", ("suites", "drowzee", "domain"), [2000, 1900], "suites.drowzee.domain",
     ("must not come after",)),
    ("drowzee-phrase-type", ("suites", "drowzee", "phrase_types"), {"spouse": "verb"},
     "suites.drowzee.phrase_types.spouse", ("must be 'noun', 'passive' or 'active'",)),
    ("drowzee-events-absent", ("suites", "drowzee", "events"), "sample/absent.json", "suites.drowzee.events",
     ("absent.json not found",)),
    ("drowzee-typo", ("suites", "drowzee", "negatoin"), [], "suites.drowzee.negatoin",
     ("did you mean 'negation'?",)),
    ("grapheval-kg", ("suites", "grapheval", "kg"), "wiki", "suites.grapheval.kg",
     ("'wiki' is not one of the configured KGs",)),
    ("grapheval-negatives-0", ("suites", "grapheval", "negatives"), 0, "suites.grapheval.negatives",
     ("must be ≥ 1",)),
    ("grapheval-negatives-string", ("suites", "grapheval", "negatives"), "three", "suites.grapheval.negatives",
     ("must be an integer", "'three'")),
    ("grapheval-corrupt", ("suites", "grapheval", "corrupt"), ["head", "body"], "suites.grapheval.corrupt.1",
     ("must be 'head', 'relation' or 'tail'",)),
    ("grapheval-templates-absent", ("suites", "grapheval", "templates"), "sample/absent.yaml",
     "suites.grapheval.templates", ("absent.yaml not found",)),
    ("grapheval-templates-malformed", ("suites", "grapheval", "templates"), "sample/domains.yaml",
     "suites.grapheval.templates", ("must map each relation key to one template string",)),
    ("grapheval-judge-typo", ("suites", "grapheval", "hidden_judge"), {"epoch": 3},
     "suites.grapheval.hidden_judge.epoch", ("did you mean 'epochs'?",)),
    ("grapheval-number", ("suites", "grapheval"), 5, "suites.grapheval", ("must be a mapping",)),
    ("okgqa-kg", ("suites", "okgqa", "kg"), "wiki", "suites.okgqa.kg", ("'wiki' is not one of the configured KGs",)),
    ("okgqa-method", ("suites", "okgqa", "methods"), ["triplets", "magic"], "suites.okgqa.methods.1",
     ("must be 'triplets', 'paths' or 'subgraph'",)),
    ("okgqa-judge", ("suites", "okgqa", "judges"), ["gpt"], "suites.okgqa.judges.0",
     ("'gpt' is not one of the scoring judges", "add it under scoring.judges")),
    ("okgqa-generator", ("suites", "okgqa", "generator"), {"model": "gpt"}, "suites.okgqa.generator.model",
     ("'gpt' is not one of the models",)),
    ("okgqa-file-absent", ("suites", "okgqa", "files"), [{"path": "sample/absent.csv"}], "suites.okgqa.files.0.path",
     ("absent.csv not found",)),
    ("okgqa-retrieval-typo", ("suites", "okgqa", "retrieval"), {"knodes": 3}, "suites.okgqa.retrieval.knodes",
     ("did you mean 'k_nodes'?",)),
    ("okgqa-threshold", ("suites", "okgqa", "fact_threshold"), 2, "suites.okgqa.fact_threshold", ("must be ≤ 1",)),
]


@pytest.mark.parametrize(("keys", "value", "where", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_mistake_in_the_sample_names_the_file_and_the_key(project: Callable[[str], Path], keys: tuple[Any, ...],
                                                             value: Any, where: str, expected: tuple[str, ...]) -> None:
    path = project(yaml.safe_dump(_set(_sample(), keys, value if value is DELETE else copy.deepcopy(value)),
                                  allow_unicode=True))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    _assert_clear(str(info.value), path, where, expected)
    assert "sk-do-not-print" not in str(info.value)  # a secret written in the wrong place is not echoed


def test_the_sample_itself_loads_in_the_test_folder(project: Callable[[str], Path]) -> None:
    # the cases above fail because of their mutation only
    cfg = load_config(project(yaml.safe_dump(_sample(), allow_unicode=True)))
    assert set(cfg.suites_configured()) == {"fpq", "erbench", "drowzee", "grapheval", "okgqa"}


_SAMPLE_TEXT = SAMPLE.read_text(encoding="utf-8")

# whole-file mistakes: (id, file text, the key path named or "" for the file as a whole, what the message says)
FILES: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("yaml-syntax", "kgs:\n  sample: {triples: [a.tsv\n", "", ("not valid YAML", "line")),
    ("yaml-tab", "kgs:\n\tsample: {}\n", "", ("not valid YAML",)),
    ("empty", "", "", ("the config is empty", "kgs:")),
    ("comments-only", "# nothing yet\n", "", ("the config is empty",)),
    ("a-list", "- kgs\n- models\n", "", ("must be a mapping of sections", "got list")),
    ("a-string", "kgs\n", "", ("must be a mapping of sections", "got str")),
    ("duplicate-key", _SAMPLE_TEXT + "seed: 3\n", "", ("found the key 'seed' twice", "keep one")),
    ("duplicate-suite-key", _SAMPLE_TEXT.replace("  okgqa:\n", "  okgqa:\n    per_template: 1\n", 1), "",
     ("found the key 'per_template' twice",)),
]


@pytest.mark.parametrize(("text", "where", "expected"), [c[1:] for c in FILES], ids=[c[0] for c in FILES])
def test_a_broken_file_is_one_clear_error(project: Callable[[str], Path], text: str, where: str,
                                          expected: tuple[str, ...]) -> None:
    path = project(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    for part in expected:
        assert part in message, f"{part!r} not in:\n{message}"
    assert not [raw for raw in RAW if raw in message], message


def test_a_file_that_is_not_utf8(project: Callable[[str], Path]) -> None:
    path = project("")
    path.write_bytes("name: caf\xe9\nkgs: {}\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not a UTF-8 text file") as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ")


def test_yaml_merge_keys_still_work(project: Callable[[str], Path]) -> None:
    # the duplicate-key check leaves `<<: *anchor` alone, so a key may override what an anchor merges in
    text = _SAMPLE_TEXT.replace("  - {name: oracle, backend: reference, kind: oracle}",
                                "  - &ref {name: oracle, backend: reference, kind: oracle}\n"
                                "  - {<<: *ref, name: oracle-2}")
    cfg = load_config(project(text))
    assert [m["name"] for m in cfg.sections["models"]][:3] == ["smollm2-135m", "oracle", "oracle-2"]


def test_settings_validated_on_their_own_skip_the_file_checks() -> None:
    # without a config file there is no folder to resolve against and no models to look up: a suite's settings
    # built in code (tests, notebooks) take paths and names as given
    from kgprobe.suites.drowzee.suite import DrowzeeSettings
    from kgprobe.suites.erbench.suite import ERBenchSettings
    from kgprobe.suites.grapheval.suite import GraphEvalSettings
    from kgprobe.suites.okgqa.suite import OKGQASettings

    assert GraphEvalSettings(templates="absent.yaml").templates == "absent.yaml"
    assert ERBenchSettings(db="absent.yaml").db == "absent.yaml"
    assert DrowzeeSettings(events="absent.json").events == "absent.json"
    assert OKGQASettings.model_validate({"judges": ["anyone"], "generator": {"model": "x"}}).judges == ["anyone"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("keys", "value"),
    [(("suites", "grapheval", "negatives"), "three"), (("kgs", "sample", "triples"), ["sample/absent.tsv"])],
    ids=["wrong-type", "missing-file"],
)
def test_kgprobe_plan_prints_the_message_and_no_traceback(project: Callable[[str], Path], keys: tuple[Any, ...],
                                                          value: Any) -> None:
    path = project(yaml.safe_dump(_set(_sample(), keys, value), allow_unicode=True))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", "plan", "--config", str(path)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr == f"kgprobe: {info.value}\n"
    assert done.stdout == ""
