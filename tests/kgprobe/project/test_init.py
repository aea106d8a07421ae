"""kgprobe.project.init: question templates from statements, and a starter project from a config with only kgs
and models."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kgprobe.config import load_config
from kgprobe.errors import ConfigError
from kgprobe.project.init import init_project, question_templates


@pytest.mark.parametrize(("statement", "yn", "wh"), [
    ("The place of birth of {head} is {tail}.", "Is {object} the place of birth of {subject}?",
     "What is the story behind the fact that the place of birth of {subject} is {object}?"),
    ("One of the artists of {head} is {tail}.", "Is {object} one of the artists of {subject}?", None),
    ("{head} was born in {tail}.", "Was {subject} born in {object}?",
     "What is the story behind the fact that {subject} was born in {object}?"),
    ("{head} contains {tail}.", "Does {subject} contain {object}?", None),
    ("{head} partially contains {tail}.", "Does {subject} partially contain {object}?", None),
    ("{head} has story by {tail}.", "Does {subject} have story by {object}?", None),
    ("{head} is the first level division of {tail}.", "Is {subject} the first level division of {object}?", None),
    ("{head} signed the languages spoken {tail}.", "Is it true that {subject} signed the languages spoken {object}?",
     None),
])
def test_question_templates(statement: str, yn: str, wh: str | None) -> None:
    got = question_templates(statement)
    assert got["yn"] == yn
    if wh is not None:
        assert got["wh"] == wh
    for text in got.values():  # what KG-FPQ's template loader requires
        assert text.count("{object}") == 1 and "{subject}" in text and "{head}" not in text


def test_question_templates_need_head_and_tail_once() -> None:
    assert question_templates("{head} and {head} with {tail}.") is None
    assert question_templates("{head} only.") is None


def _codex(tmp_path: Path, shared_data: Path) -> Path:
    d = shared_data / "kg" / "codex"
    cfg = tmp_path / "codex.yaml"
    cfg.write_text(
        f"warehouse: {tmp_path / 'wh' / 'kg.duckdb'}\n"
        f"kgs:\n  codex_s:\n    triples: [{d}/codex-s/train.txt]\n"
        f"    entity_labels: {d}/partial_entity_labels_en.tsv\n    relation_labels: {d}/relations/en/relations.json\n"
        f"    entity_types: {d}/types/entity2types.json\n    type_labels: {d}/types/en/types.json\n"
        "models:\n  - {name: oracle, backend: reference, kind: oracle}\n", encoding="utf-8")
    return cfg


@pytest.mark.slow
def test_init_on_codex_s(tmp_path: Path, shared_data: Path) -> None:
    cfg = _codex(tmp_path, shared_data)
    before = cfg.read_text(encoding="utf-8")
    logged: list[str] = []
    written = init_project(cfg, log=logged.append)
    # labels that are ids are counted and warned, with the share of triples that name one
    warning = next(line for line in logged if "warning" in line)
    assert re.search(r"[0-9,]+ entity and 0 relation labels of codex_s are ids .*9[0-9]% of its triples", warning)
    names = [w.path.name for w in written]
    assert names == ["codex.yaml", "codex.fpq-domains.yaml", "codex.fpq-templates.yaml",
                     "codex.grapheval-templates.yaml", "codex.drowzee-candidates.yaml", "codex.relations.yaml",
                     "codex.init-review.md"]
    assert all(w.check for w in written) and (tmp_path / "codex.before-init.yaml").read_text() == before
    project = load_config(cfg)
    assert set(project.suites_configured()) == {"fpq", "grapheval", "drowzee"}
    templates = yaml.safe_load((tmp_path / "codex.fpq-templates.yaml").read_text(encoding="utf-8"))
    statements = yaml.safe_load((tmp_path / "codex.grapheval-templates.yaml").read_text(encoding="utf-8"))
    # Wikidata relations, named by their labels, and only those rendered on a triple of named entities
    assert templates["P19"]["yn"] == "Is {object} the place of birth of {subject}?"
    assert statements["P19"] == "The place of birth of {head} is {tail}."
    # the same templates the suite proposes for the KG (its rules, multi-valued relations read "One of the ...")
    import duckdb

    from kgprobe.kg.verbalise import multi_valued, propose_template

    with duckdb.connect(str(tmp_path / "wh" / "kg.duckdb"), read_only=True) as con:
        con.execute('USE "codex_s"')
        many = multi_valued(con)
        labels = dict(con.execute("SELECT key, label FROM relations").fetchall())
    assert all(statements[k] == propose_template(k, labels[k], many=k in many) for k in statements)
    assert statements["P1412"] == "{tail} is one of the languages spoken, written, or signed by {head}."
    assert set(templates) == set(statements) and 10 <= len(templates) < 42
    assert not any(re.search(r"\b[QP][0-9]+\b", t) for v in templates.values() for t in v.values())
    domains = yaml.safe_load((tmp_path / "codex.fpq-domains.yaml").read_text(encoding="utf-8"))
    assert domains["human"]["types"] == ["Q5"] and set(domains["human"]["allow_relations"]) == set(templates)
    candidates = yaml.safe_load((tmp_path / "codex.drowzee-candidates.yaml").read_text(encoding="utf-8"))
    assert {"symmetric", "inverse", "transitive", "functional"} == set(candidates)
    sym = {r["key"]: r for r in candidates["symmetric"]}
    assert "P3373" in sym and sym["P3373"]["edges"] >= 3 and 0.8 <= sym["P3373"]["share"] <= 1  # sibling
    relations = yaml.safe_load((tmp_path / "codex.relations.yaml").read_text(encoding="utf-8"))
    # the claim checker's reading of each relation, by key, from its Wikidata label: place of birth is one value
    assert relations["P19"]["label"] == "place of birth" and relations["P19"]["single_valued"] is True
    assert "bear" in relations["P19"]["words"] and relations["P3373"]["single_valued"] is False  # sibling
    review = (tmp_path / "codex.init-review.md").read_text(encoding="utf-8")
    assert "no triple between named entities" in review and "require_labels" in review
    assert "Labels that are ids:" in review
    with pytest.raises(ConfigError, match="models"):
        bare = tmp_path / "bare.yaml"
        bare.write_text(before.split("models:")[0], encoding="utf-8")
        init_project(bare, log=lambda _: None)


@pytest.mark.slow
def test_init_writes_an_erbench_spec_for_csv_data(tmp_path: Path, shared_data: Path) -> None:
    sample = Path(__file__).resolve().parents[3] / "examples" / "sample"
    soccer = shared_data / "seeds" / "erbench" / "binary" / "fifa_data" / "crafted" / "fifa_df.csv"
    cfg = tmp_path / "soccer.yaml"
    cfg.write_text(f"warehouse: {tmp_path / 'wh' / 'kg.duckdb'}\n"
                   f"kgs:\n  sample:\n    triples: [{sample}/triples.tsv]\n    entity_labels: {sample}/entity_labels.tsv\n"
                   f"suites:\n  erbench: {{db: {soccer}, limit_per_fd: 5}}\n"
                   "models:\n  - {name: oracle, backend: reference, kind: oracle}\n", encoding="utf-8")
    written = init_project(cfg, log=lambda _: None)
    assert [w.path.name for w in written][:2] == ["soccer.yaml", "soccer.erbench-spec.yaml"]
    project = load_config(cfg)
    assert project.suite("erbench").db == "soccer.erbench-spec.yaml" and project.suite("erbench").limit_per_fd == 5
    spec = yaml.safe_load((tmp_path / "soccer.erbench-spec.yaml").read_text(encoding="utf-8"))
    # the paper's Soccer FD (club, jersey number, nationality -> player) in its minimal form: club and number name
    # the player in the 2019 data; one FD per left side
    assert (spec["fds"][0]["lhs"], spec["fds"][0]["rhs"]) == (["entity1", "entity3"], ["common_entity"])
    assert len({frozenset(fd["lhs"]) for fd in spec["fds"]}) == len(spec["fds"])
    assert "support" in (tmp_path / "soccer.erbench-spec.yaml").read_text(encoding="utf-8").split("name:")[0]


@pytest.mark.slow
def test_init_with_a_model_proposing_templates(tmp_path: Path, shared_data: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from kgprobe.generation import runner
    from kgprobe.generation.records import Completion

    asked: list[str] = []

    class Fake:
        def generate(self, prompts, params):
            asked.extend(p.text for p in prompts)
            return [[Completion('statement template: "{head} was born in the town of {tail}."' if
                                "relation: place of birth" in p.text else "I cannot help.", "stop", None, None, 0.0)]
                    for p in prompts]

        def close(self):
            pass

    monkeypatch.setattr(runner, "make_backend", lambda spec: Fake())
    cfg = _codex(tmp_path, shared_data)
    init_project(cfg, model="oracle", log=lambda _: None)
    statements = yaml.safe_load((tmp_path / "codex.grapheval-templates.yaml").read_text(encoding="utf-8"))
    templates = yaml.safe_load((tmp_path / "codex.fpq-templates.yaml").read_text(encoding="utf-8"))
    assert statements["P19"] == "{head} was born in the town of {tail}."  # the model's, rendered and kept
    assert templates["P19"]["yn"] == "Was {subject} born in the town of {object}?"
    assert statements["P20"] == "The place of death of {head} is {tail}."  # no usable reply: the rules' one
    assert asked and all(p.startswith("You are given a few samples of a relation") for p in asked)
    with pytest.raises(ConfigError, match="models: oracle"):
        init_project(cfg, model="gpt-9", log=lambda _: None)


def test_init_on_a_database_without_a_kg(tmp_path: Path) -> None:
    # a purely relational project: init writes the spec and its review, and loads no KG
    rows = ["title,director,year", "Avatar,James Cameron,2009", "Titanic,James Cameron,1997",
            "Jaws,Steven Spielberg,1975", "Psycho,Alfred Hitchcock,1960", "Vertigo,Alfred Hitchcock,1958"]
    (tmp_path / "films.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    cfg = tmp_path / "films.yaml"
    cfg.write_text(f"warehouse: {tmp_path / 'wh' / 'kg.duckdb'}\nsuites:\n  erbench: {{db: films.csv}}\n"
                   "models:\n  - {name: oracle, backend: reference, kind: oracle}\n", encoding="utf-8")
    written = init_project(cfg, log=lambda _: None)
    assert [w.path.name for w in written] == ["films.yaml", "films.erbench-spec.yaml", "films.init-review.md"]
    assert load_config(cfg).suite("erbench").db == "films.erbench-spec.yaml"
    assert "films.erbench-spec.yaml" in (tmp_path / "films.init-review.md").read_text(encoding="utf-8")
    assert not (tmp_path / "wh").exists()


def test_init_without_a_kg_or_a_database_says_what_to_add(tmp_path: Path) -> None:
    cfg = tmp_path / "empty.yaml"
    cfg.write_text("models:\n  - {name: oracle, backend: reference, kind: oracle}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="kgs: map at least one KG"):
        init_project(cfg, log=lambda _: None)


def test_init_on_a_kg_of_wikidata_ids_without_labels_says_which_labels_to_supply(tmp_path: Path) -> None:
    # WIKIDATA12k's shape: QIDs and PIDs only, no label file
    rows = [f"Q{100 + i}\tP{26 + i % 3}\tQ{200 + i}\n" for i in range(60)]
    (tmp_path / "kg.tsv").write_text("".join(rows), encoding="utf-8")
    cfg = tmp_path / "wd.yaml"
    cfg.write_text("kgs:\n  wd:\n    triples: [kg.tsv]\nmodels:\n  - {name: oracle, backend: reference, kind: oracle}\n",
                   encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        init_project(cfg, log=lambda _: None)
    message = str(caught.value)
    assert "no question can be written" in message
    assert "3 of 3 relations have no readable name" in message and "relation_labels" in message
    # with relation names, the entities are what is missing
    (tmp_path / "rel.tsv").write_text("P26\tspouse\nP27\tcountry of citizenship\nP28\temployer\n", encoding="utf-8")
    cfg.write_text("kgs:\n  wd:\n    triples: [kg.tsv]\n    relation_labels: rel.tsv\n"
                   "models:\n  - {name: oracle, backend: reference, kind: oracle}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        init_project(cfg, log=lambda _: None)
    message = str(caught.value)
    assert "relations with a readable name join no two entities with readable names" in message
    assert "0 of 120 entities have one" in message and "entity_labels" in message
    assert "have no readable name (give" not in message
