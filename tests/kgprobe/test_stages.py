"""kgprobe.stages: a config gets only the shared stages an enabled suite or a grounded lane reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgprobe.config import load_config, subgraph_settings
from kgprobe.errors import ConfigError
from kgprobe.stages import needed_stages

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample"


def config_text(*, suites: str = "fpq", perturbation: str | None = None, grounded: str | None = None,
                queries: bool = False) -> str:
    """A project config on the bundled sample KG with the named suites (fpq, grapheval, okgqa)."""
    sections = {
        "fpq": f"  fpq: {{kg: sample, domains: {SAMPLE}/domains.yaml, templates: {SAMPLE}/templates.yaml}}\n",
        "grapheval": f"  grapheval: {{kg: sample, templates: {SAMPLE}/grapheval/templates.yaml}}\n",
        "okgqa": "  okgqa: {kg: sample, per_template: 1}\n",
    }
    text = (f"kgs:\n  sample:\n    triples: [{SAMPLE}/triples.tsv]\n    entity_labels: {SAMPLE}/entity_labels.tsv\n"
            f"    relation_labels: {SAMPLE}/relation_labels.tsv\n    entity_types: {SAMPLE}/entity_types.tsv\n"
            "models:\n  - {name: oracle, backend: reference, kind: oracle}\n"
            "  - {name: random, backend: reference, kind: random}\n"
            "suites:\n" + "".join(sections[s] for s in suites.split(",")))
    if perturbation is not None:
        text += f"perturbation: {perturbation}\n"
    if grounded is not None:
        text += f"generation: {{grounded_models: {grounded}}}\n"
    if queries:
        text += "queries: {sample: {per_type: 1}}\n"
    return text


def _load(tmp_path: Path, **kw):
    path = tmp_path / "p.yaml"
    path.write_text(config_text(**kw), encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize(("kw", "subgraphs", "perturb", "scorer", "grounded"), [
    # closed book only: no subgraph, no perturbation, no scorer
    ({"suites": "fpq,grapheval"}, False, False, False, set()),
    ({"suites": "fpq", "perturbation": "none"}, False, False, False, set()),
    # a perturbation section grounds the groundable suites with every model...
    ({"suites": "fpq,grapheval", "perturbation": "{methods: [RS], levels: [0.5]}"}, True, True, True, {"fpq"}),
    # ... unless no model is grounded
    ({"suites": "fpq", "perturbation": "{methods: [RS], levels: [0.5]}", "grounded": "[]"}, False, False, False,
     set()),
    # methods: [] grounds on the clean subgraphs only, with no scorer
    ({"suites": "fpq", "perturbation": "{methods: []}"}, True, True, False, {"fpq"}),
    # OKGQA reads the PPR subgraphs even closed book
    ({"suites": "okgqa"}, True, False, False, set()),
])
def test_needed_stages(tmp_path: Path, kw, subgraphs, perturb, scorer, grounded) -> None:
    s = needed_stages(_load(tmp_path, **kw))
    assert (s.subgraphs, s.perturb, s.scorer, s.similarity, set(s.grounded_suites)) == (
        subgraphs, perturb, scorer, scorer, grounded)
    assert ("subgraphs" in s.reasons) == subgraphs


def test_perturbation_none_has_one_level(tmp_path: Path) -> None:
    cfg = _load(tmp_path, perturbation="none")
    assert cfg.perturbation.keys == ["none"]


def test_grounded_models_empty_means_none(tmp_path: Path) -> None:
    cfg = _load(tmp_path, perturbation="{methods: [RS], levels: [0.5]}", grounded="[]")
    assert needed_stages(cfg).grounded_models == ()
    cfg = _load(tmp_path, perturbation="{methods: [RS], levels: [0.5]}", grounded="[random]")
    assert needed_stages(cfg).grounded_models == ("random",)
    cfg = _load(tmp_path, perturbation="{methods: [RS], levels: [0.5]}")
    assert needed_stages(cfg).grounded_models == ("oracle", "random")


def test_queries_default_to_the_readers(tmp_path: Path) -> None:
    # no queries section: the grounded KG-FPQ subjects and the OKGQA questions are the queries
    s = subgraph_settings(_load(tmp_path, suites="fpq,okgqa", perturbation="{methods: [RS], levels: [0.5]}"))
    assert (s.fpq_subjects, s.okgqa_questions, s.kg) == (True, True, "sample")
    s = subgraph_settings(_load(tmp_path, suites="okgqa"))
    assert (s.fpq_subjects, s.okgqa_questions) == (False, True)
    with pytest.raises(ConfigError, match="needs queries"):
        subgraph_settings(_load(tmp_path, suites="grapheval"))
    # a written queries section is kept as written
    s = subgraph_settings(_load(tmp_path, suites="okgqa", queries=True))
    assert (s.fpq_subjects, s.okgqa_questions, s.sample) == (False, False, {"per_type": 1})
