"""``kgprobe init``: a starter project from a config that names only its KG(s) and models.

Given a config with ``kgs:`` and ``models:``, :func:`init_project` loads the first KG, reads what the data offers and
writes beside the config everything the suites need, each file listed with what a person should check:

* KG-FPQ domains from the entity types of the subjects (a greedy cover of the subjects by their most common types),
  each limited to the relations that have templates (``allow_relations``), so no true triple is drawn that no
  template can ask;
* per-relation Yes-No and WH question templates and GraphEval statement templates, from the relation's key and
  label (:mod:`kgprobe.kg.verbalise`, rule-based), each kept only when it renders on real triples of named
  entities; a relation with no readable name is left out and listed;
* Drowzee rule candidates from the data (:func:`kgprobe.suites.drowzee.rules.propose_properties`: symmetric,
  inverse pairs, transitive, functional, each with its support); those at Drowzee's own threshold go into the
  config, the others are listed for review.

When ``suites.erbench.db`` names data rather than a spec (a CSV file or folder, a SQLite or DuckDB file, ``file#table``
for one of its tables), an ERBench spec of it is written first (:func:`_database_spec`: one FD per left side, its
questions built once and checked, ``limit_per_fd`` :data:`ERBENCH_LIMIT_PER_FD` unless set).

The config gets a ``suites:`` section for each suite it did not have (sections already written are kept) and is
saved in place, its previous text beside it as ``<name>.before-init.yaml``; ``kgprobe run --config FILE`` then runs
unchanged. The KG is loaded into the config's warehouse on the way, so the run reuses that snapshot.

    >>> written = init_project(Path("codex.yaml"))
    >>> [w.path.name for w in written]
    ['codex.fpq-domains.yaml', 'codex.fpq-templates.yaml', 'codex.grapheval-templates.yaml', ...]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from kgprobe.errors import ConfigError
from kgprobe.yaml_io import load_yaml

__all__ = ["Written", "format_written", "init_project", "model_generate", "question_templates"]

#: Relations (and types) whose examples are rendered for review.
_EXAMPLES = 3
#: Domains written at most, and the least share of the subjects a further domain must add.
_MAX_DOMAINS, _MIN_DOMAIN_SHARE = 6, 0.03
#: Drowzee: candidates listed from this share on; accepted into the config from Drowzee's own threshold.
_CANDIDATE_SHARE, _ACCEPT_SHARE = 0.8, 0.95
#: GraphEval positives a starter project asks about (between named entities).
_GRAPHEVAL_POSITIVES = 1000


@dataclass(frozen=True)
class Written:
    """One file ``init`` wrote, what it holds and what a person should check by hand."""

    path: Path
    what: str
    check: str


# --------------------------------------------------------------------------------------------------------------------
# templates


def _base_verb(word: str) -> str:
    if word.endswith(("sses", "ches", "shes", "xes", "zes")):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def question_templates(statement: str) -> dict[str, str] | None:
    """Yes-No and WH question templates (``{subject}``, ``{object}``) from a statement template (``{head}``,
    ``{tail}``), or None when the statement does not hold each once. The Yes-No question inverts the statement
    ("{head} was born in {tail}." -> "Was {subject} born in {object}?"; "The genre of {head} is {tail}." -> "Is
    {object} the genre of {subject}?"); the WH question presupposes it ("What is the story behind the fact that
    {subject} was born in {object}?"), so that putting another entity in place of ``{object}`` makes a false
    premise."""
    if statement.count("{head}") != 1 or statement.count("{tail}") != 1:
        return None
    s = statement.strip().rstrip(".").replace("{head}", "{subject}").replace("{tail}", "{object}")
    yn = None
    m = re.fullmatch(r"((?:One of )?[Tt]he .*\{subject\}.*?) (is|was|are|were) \{object\}", s)
    if m:
        yn = f"{m.group(2).capitalize()} {{object}} {_lower_first(m.group(1))}?"
    elif s.startswith("{subject} "):
        words = s[len("{subject} "):].split(" ")
        first, rest = words[0], " ".join(words[1:])
        if first in ("is", "was", "are", "were", "can"):
            yn = f"{first.capitalize()} {{subject}} {rest}?"
        elif first in ("has", "have"):
            yn = f"Does {{subject}} have {rest}?"
        elif first == "had":
            yn = f"Did {{subject}} have {rest}?"
        elif first.endswith("ly") and len(words) > 1:  # "partially contains"
            yn = f"Does {{subject}} {first} {_base_verb(words[1])} {' '.join(words[2:])}?"
        elif first.endswith("s"):
            yn = f"Does {{subject}} {_base_verb(first)} {rest}?"
    if yn is None:
        yn = f"Is it true that {_lower_first(s)}?"
    yn = re.sub(r"\s+", " ", yn).replace(" ?", "?")
    wh = f"What is the story behind the fact that {_lower_first(s)}?"
    return {"yn": yn, "wh": wh}


def _render(template: str, subject: str, obj: str) -> str:
    return template.replace("{subject}", subject).replace("{object}", obj)


# --------------------------------------------------------------------------------------------------------------------
# the data


def _relations(con: Any) -> list[tuple[int, str, str, int]]:
    from kgprobe.sql import load_sql

    return [tuple(r) for r in con.execute(load_sql("project/relations")).fetchall()]


def _examples(con: Any, unreadable: frozenset[str]) -> dict[int, list[tuple[str, str]]]:
    """Per relation id, up to a few (head label, tail label) pairs of named entities, in a stable order."""
    from kgprobe.sql import load_sql

    out: dict[int, list[tuple[str, str]]] = {}
    from kgprobe.kg.readable import _SQL_PATTERN

    for rel, head, tail in con.execute(load_sql("project/examples"), {"per": 10, "pattern": _SQL_PATTERN}).fetchall():
        if head.strip() in unreadable or tail.strip() in unreadable or head == tail:
            continue
        pairs = out.setdefault(rel, [])
        if len(pairs) < _EXAMPLES:
            pairs.append((head, tail))
    return out


def _id_label_counts(con: Any, ents: frozenset[str], rels: frozenset[str]) -> dict[str, Any]:
    """How many entity and relation labels are ids (:func:`kgprobe.kg.readable.unreadable_names`), a few examples,
    and the share of triples whose head, relation or tail is named by one."""
    total = con.execute("SELECT count(*) FROM triples").fetchone()[0]
    share = 0.0
    if total and (ents or rels):
        con.register("_init_id_labels", pa.table({"label": pa.array(sorted(ents | rels), pa.string())}))
        try:
            named = con.execute(
                "SELECT count(*) FROM triples x JOIN entities h ON h.id = x.head JOIN entities t ON t.id = x.tail "
                "JOIN relations r ON r.id = x.relation WHERE trim(h.label) IN (SELECT label FROM _init_id_labels) "
                "OR trim(t.label) IN (SELECT label FROM _init_id_labels) "
                "OR trim(r.label) IN (SELECT label FROM _init_id_labels)").fetchone()[0]
        finally:
            con.unregister("_init_id_labels")
        share = named / total
    return {"entities": len(ents), "relations": len(rels), "examples": sorted(ents | rels)[:3],
            "triple_share": share}


def _domains(con: Any, relations: Sequence[str], unreadable: frozenset[str]) -> tuple[dict[str, Any], list[dict]]:
    """KG-FPQ domains: a greedy cover of the named subjects of ``relations`` by their types (the type that covers
    most subjects not yet covered first), at most :data:`_MAX_DOMAINS`, each adding at least
    :data:`_MIN_DOMAIN_SHARE` of the subjects; and the rows of that choice (type, subjects) for review."""
    from kgprobe.sql import load_sql

    rows = con.execute(load_sql("project/subject_types"), {"relations": list(relations)}).fetchall()
    by_type: dict[str, set[int]] = {}
    names: dict[str, str] = {}
    subjects: set[int] = set()
    for entity, label, type_key, type_label in rows:
        if label.strip() in unreadable:
            continue
        by_type.setdefault(type_key, set()).add(entity)
        names[type_key] = type_label
        subjects.add(entity)
    covered: set[int] = set()
    chosen: list[dict] = []
    while by_type and len(chosen) < _MAX_DOMAINS:
        key = max(sorted(by_type), key=lambda k: len(by_type[k] - covered))
        gain = len(by_type[key] - covered)
        if not subjects or gain < max(1, _MIN_DOMAIN_SHARE * len(subjects)):
            break
        covered |= by_type.pop(key)
        chosen.append({"type_key": key, "type": names[key], "subjects": gain})
    domains: dict[str, Any] = {}
    for c in chosen:
        name = re.sub(r"[^a-z0-9]+", "_", c["type"].lower()).strip("_") or "domain"
        while name in domains:
            name += "_"
        domains[name] = {"types": [c["type_key"]], "allow_relations": list(relations)}
    return domains, chosen


# --------------------------------------------------------------------------------------------------------------------
# the project


def _dump(path: Path, header: str, data: Any) -> None:
    text = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    path.write_text(text + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")


def model_generate(cfg: Any, name: str) -> Callable[[list[str]], list[str]]:
    """``prompts -> replies`` through the configured model ``name`` (one greedy sample each, its backend started
    on the first call), for :func:`kgprobe.kg.verbalise.propose_with_model`; a name that is not a configured model
    is a :class:`ConfigError` listing those that are."""
    from kgprobe.config import generation_models
    from kgprobe.generation.records import Prompt, SamplingParams
    from kgprobe.generation.runner import make_backend

    specs = {m.name: m for m in generation_models(cfg)}
    if name not in specs:
        raise ConfigError(f"--model {name!r} is not a model of {cfg.path}; models: {', '.join(specs) or 'none'}")
    spec = specs[name]

    def generate(prompts: list[str]) -> list[str]:
        backend = make_backend(spec)
        try:
            asked = [Prompt(item_id=f"init-template-{i}", text=t, template_id="grapheval-figure9")
                     for i, t in enumerate(prompts)]
            out = backend.generate(asked, SamplingParams(n=1, temperature=0.0, max_tokens=64, seed=cfg.seed))
        finally:
            backend.close()
        return [(c[0].text or "") if c else "" for c in out]

    return generate


def init_project(config: str | Path, *, model: str | None = None,
                 log: Callable[[str], None] = print) -> list[Written]:
    """Fill the config at ``config`` (kgs and models at least) into a starter project, as the module docstring
    says; returns every file written, with what to check by hand. With ``model`` (a configured model's name), that
    model proposes each relation's statement template from GraphEval's Figure 9 prompt and sample triples; a reply
    without a usable template keeps the rule-based one. Raises :class:`ConfigError` for a config that does not
    validate or whose first KG has no triple."""
    from kgprobe.config import load_config
    from kgprobe.kg.ingest import load_kg
    from kgprobe.kg.readable import label_report, unreadable_names
    from kgprobe.kg.verbalise import multi_valued, propose_template, propose_with_model
    from kgprobe.suites.drowzee.rules import propose_properties
    from kgprobe.suites.fpq.edits import infer_types_from_relations
    from kgprobe.warehouse import connect

    path = Path(config)
    original = path.read_text(encoding="utf-8")
    raw = load_yaml(original, what=str(path)) or {}
    db_written = _database_spec(path, raw, log)
    if db_written is not None:  # the config now names the spec written for review; its text as it was beside it
        (path.parent / f"{path.stem}.before-init.yaml").write_text(original, encoding="utf-8")
        path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")
    try:
        cfg = load_config(path)
    except ConfigError:
        path.write_text(original, encoding="utf-8")
        raise
    if not raw.get("models"):
        raise ConfigError(f"{path}: models: list at least one model (a reference one, {{name: oracle, backend: "
                          "reference, kind: oracle}}, needs no weights) before kgprobe init")
    stem, folder = path.stem, path.parent
    if not cfg.kgs:  # a purely relational project (ERBench alone): the spec is all there is to write
        if db_written is None:
            raise ConfigError(f"{path}: kgs: name a KG, or suites.erbench.db a CSV file or folder or a SQLite / "
                              "DuckDB file, for kgprobe init to start from")
        review_path = folder / f"{stem}.init-review.md"
        written = [Written(path, "the config, naming the ERBench spec written from the data", "the models"),
                   db_written, Written(review_path, "this list", "-")]
        lines = [f"# kgprobe init: {path.name}", "", "No KG: only the ERBench spec was written.", "",
                 "| file | what | check by hand |", "|---|---|---|"]
        lines += [f"| {w.path.name} | {w.what} | {w.check} |" for w in written]
        review_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return written
    kg = next(iter(cfg.kgs))
    written: list[Written] = []
    warehouse = Path(cfg.warehouse)
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    with connect(warehouse) as con:
        report = load_kg(con, cfg.kgs[kg])
        if report.loaded == 0 and not report.reused:
            raise ConfigError(f"{path}: kgs.{kg}: no triple was loaded from {cfg.kgs[kg].files}; check the files")
        con.execute(f'USE "{kg}"')
        infer = False
        if con.execute("SELECT count(*) FROM entity_types").fetchone()[0] == 0:
            infer = True  # a KG without types: types from relation keys, as kgs.<kg>.infer_types does at run time
            infer_types_from_relations(con)
        labels = label_report(con, kg)
        ents, rels = unreadable_names(con, kg)
        unreadable = ents | rels
        relations = _relations(con)
        examples = _examples(con, unreadable)
        log(f"kgprobe init: {kg}: {labels['entities']:,} entities ({labels['readable_share']:.0%} with a readable "
            f"name), {len(relations)} relations")
        id_labels = _id_label_counts(con, ents, rels)
        if id_labels["entities"] or id_labels["relations"]:
            log(f"kgprobe init: warning: {id_labels['entities']:,} entity and {id_labels['relations']:,} relation "
                f"labels of {kg} are ids (e.g. {', '.join(id_labels['examples']) or '-'}); "
                f"{id_labels['triple_share']:.0%} of its triples name one, and their questions and statements are "
                f"dropped (kgs.{kg}.require_labels): give entity_labels / relation_labels for more")
        many = multi_valued(con)
        proposed: dict[str, Any] = {}
        if model is not None:
            named = [(key, label) for rid, key, label, _ in relations if label.strip() not in rels and examples.get(rid)]
            proposed = propose_with_model(named, {key: examples[rid] for rid, key, _, _ in relations
                                                  if examples.get(rid)}, model_generate(cfg, model))
            log(f"kgprobe init: {model} proposed {sum(p.method == 'model' for p in proposed.values())} of "
                f"{len(proposed)} statement templates (the others keep the rule-based one)")
        statements, questions, review, skipped = {}, {}, [], []
        for rid, key, label, n in relations:
            pairs = examples.get(rid, [])
            statement = propose_template(key, label, many=key in many) if label.strip() not in rels else None
            how = "rules"
            if key in proposed and proposed[key].template is not None:
                statement, how = proposed[key].template, proposed[key].method
            asks = question_templates(statement) if statement else None
            if statement is None or asks is None:
                skipped.append({"relation": key, "label": label, "triples": n, "why": "no readable name"})
                continue
            if not pairs:
                skipped.append({"relation": key, "label": label, "triples": n,
                                "why": "no triple between named entities to check the templates on"})
                continue
            rendered = [(_render(asks["yn"], h, t), _render(asks["wh"], h, t),
                         statement.replace("{head}", h).replace("{tail}", t)) for h, t in pairs]
            if any("{subject}" in r or "{object}" in r or h not in r or t not in r
                   for (h, t), triple in zip(pairs, rendered, strict=True) for r in triple):
                skipped.append({"relation": key, "label": label, "triples": n, "why": "a template did not render"})
                continue
            statements[key] = statement
            questions[key] = asks
            review.append({"relation": key, "label": label, "triples": n, "statement": rendered[0][2],
                           "yn": rendered[0][0], "wh": rendered[0][1], "source": how})
        if not questions:
            why = Counter(s["why"] for s in skipped)
            unnamed_relations = why.get("no readable name", 0)
            no_pairs = why.get("no triple between named entities to check the templates on", 0)
            missing = []
            if unnamed_relations:
                missing.append(f"{unnamed_relations} of {len(relations)} relations have no readable name (give "
                               f"kgs.{kg}.relation_labels: a TSV of key<TAB>label, e.g. P26<TAB>spouse)")
            if no_pairs:
                missing.append(f"{no_pairs} relations with a readable name join no two entities with readable names "
                               f"({labels['readable_entities']:,} of {labels['entities']:,} entities have one; give "
                               f"kgs.{kg}.entity_labels: a TSV of key<TAB>label, e.g. Q42<TAB>Douglas Adams)")
            raise ConfigError(f"{path}: kgs.{kg}: no question can be written: " + "; ".join(missing or [
                "no relation has a readable name and a triple between named entities"]) +
                ". Wikidata-keyed KGs (WIKIDATA12k, CoDEx) ship ids only: labels come from a Wikidata dump or the "
                "dataset's own label files (see docs/tutorials/own-kg.md)")
        domains, cover = _domains(con, sorted(questions), unreadable)
        from kgprobe.scoring.claims import KGFacts

        relation_text = KGFacts.from_duckdb(con, kg).relation_file()
        props = propose_properties(con, threshold=_CANDIDATE_SHARE, min_support=3)
        has_dates = con.execute("SELECT count(*) FROM temporal_facts").fetchone()[0] > 0

    files = {name: folder / f"{stem}.{name}.yaml" for name in ("fpq-domains", "fpq-templates", "grapheval-templates",
                                                                "drowzee-candidates", "relations")}
    _dump(files["fpq-domains"], "KG-FPQ question domains written by kgprobe init from the entity types of the "
          f"subjects of {kg}.\nEach domain asks only the relations that have question templates (allow_relations)."
          "\nCheck: one domain per kind of subject you want reported; rename them; merge or drop types.\n"
          + "\n".join(f"  {c['type']} ({c['type_key']}): {c['subjects']} subjects" for c in cover), domains)
    written.append(Written(files["fpq-domains"], f"{len(domains)} KG-FPQ domains: "
                           + ", ".join(f"{d} ({c['subjects']} subjects)" for d, c in zip(domains, cover, strict=True)),
                           "the domains are the kinds of subject you want accuracy reported by; types chosen by "
                           "frequency may overlap (a person and an actor)"))
    _dump(files["fpq-templates"], "KG-FPQ Yes-No (yn) and WH (wh) question templates per relation, written by "
          "kgprobe init from each relation's label\n(rule-based; each rendered on real triples below). Check: "
          "each yn question is answered 'yes' by the true triple;\neach wh question presupposes it. "
          "Rendered examples:\n" + "\n".join(f"  {r['relation']}: {r['yn']} | {r['wh']}" for r in review),
          questions)
    written.append(Written(files["fpq-templates"], f"Yes-No and WH templates for {len(questions)} relations",
                           "read each rendered example in the file's header: a relation whose label reads "
                           "backwards (an inverse relation) needs its subject and object swapped by hand"))
    _dump(files["grapheval-templates"], "GraphEval statement templates per relation, written by kgprobe init "
          f"({'proposed by ' + model + ', else ' if model else ''}rule-based). Rendered examples:\n"
          + "\n".join(f"  {r['relation']} ({r['source']}): {r['statement']}" for r in review),
          statements)
    written.append(Written(files["grapheval-templates"], f"statement templates for {len(statements)} relations",
                       "each statement must be true of its triple as written (direction, tense)"))
    accepted = {k: [r for r in v if r.get("share", 0) >= _ACCEPT_SHARE
                    and min(r.get("share", 0), r.get("inverse_share", 1)) >= _ACCEPT_SHARE] for k, v in props.items()}
    _dump(files["drowzee-candidates"], "Drowzee rule candidates found in the data of "
          f"{kg} by kgprobe init: relations that are symmetric, inverse pairs,\ntransitive or functional in at "
          f"least {_CANDIDATE_SHARE:.0%} of their support. Those at {_ACCEPT_SHARE:.0%} or more are in the config's "
          "suites.drowzee;\ncheck that each holds in the world, not only in this KG, and move others in by hand.",
          props)
    written.append(Written(files["drowzee-candidates"],
                           "Drowzee candidates: " + ", ".join(f"{len(v)} {k}" for k, v in props.items()),
                           "accepted rules (in the config) must hold in the world: a symmetric relation that only "
                           "happens to be stored both ways is not a rule"))
    files["relations"].write_text(f"# Relations of {kg} as the claim checker reads them, written by kgprobe init.\n"
                                  + relation_text, encoding="utf-8")
    written.append(Written(files["relations"], "how the claim checker reads each relation (phrases, single-valued)",
                           "single_valued: a relation with one value per subject in the world (a birth date), not "
                           "only in this KG; add the phrases your answers use"))

    suites = dict(raw.get("suites") or {})
    added = []
    if "fpq" not in suites and raw.get("fpq") is None:
        suites["fpq"] = {"kg": kg, "domains": files["fpq-domains"].name, "templates": files["fpq-templates"].name,
                         "n_per_domain": 50}
        added.append("fpq")
    if "grapheval" not in suites:
        # about 1,000 positives between named entities: with a share s of entities named, s^2 of the triples
        grapheval: dict[str, Any] = {"kg": kg, "templates": files["grapheval-templates"].name,
                                     "templated_only": True}
        wanted = math.ceil(_GRAPHEVAL_POSITIVES / max(labels["readable_share"] ** 2, 1e-6))
        if wanted < sum(r[3] for r in relations):
            grapheval["positives"] = wanted
        suites["grapheval"] = grapheval
        added.append("grapheval")
    if "drowzee" not in suites:
        known = set(questions)
        drowzee: dict[str, Any] = {"kg": kg, "per_rule": 50, "temporal": has_dates}
        sym = [r["key"] for r in accepted["symmetric"] if r["key"] in known]
        trans = [r["key"] for r in accepted["transitive"] if r["key"] in known]
        inv = {r["relation"]: r["inverse"] for r in accepted["inverse"]
               if r["relation"] in known and r["inverse"] in known and r["inverse"] != r["relation"]}
        if sym:
            drowzee["symmetric"] = sym
        if trans:
            drowzee["transitive"] = trans
        if inv:
            drowzee["inverse"] = inv
        suites["drowzee"] = drowzee
        added.append("drowzee")
    if isinstance(suites.get("okgqa"), dict) and not suites["okgqa"].get("relations"):
        suites["okgqa"] = {**suites["okgqa"], "relations": files["relations"].name}
    raw["suites"] = suites
    if infer:
        raw["kgs"][kg]["infer_types"] = True
    backup = folder / f"{stem}.before-init.yaml"
    backup.write_text(original, encoding="utf-8")
    header = (f"# {path.name}: completed by kgprobe init (the file as it was: {backup.name}).\n"
              f"# Added: suites {', '.join(added) or 'none'}"
              + ("; kgs." + kg + ".infer_types (the KG has no entity types)" if infer else "") + ".\n")
    path.write_text(header + yaml.safe_dump(raw, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")
    completed = load_config(path)  # what init wrote must validate as it stands
    written.insert(0, Written(path, f"the config, with suites {', '.join(added) or '(none added)'}",
                              "the sample sizes (n_per_domain, positives, per_rule) and the models"))
    if db_written is not None:
        written.insert(1, db_written)
    review_path = folder / f"{stem}.init-review.md"
    lines = [f"# kgprobe init: {path.name}", "",
             f"KG `{kg}`: {labels['entities']:,} entities, {labels['readable_entities']:,} with a readable name "
             f"({labels['readable_share']:.0%}); {len(relations)} relations, {len(questions)} with templates.", "",
             "| file | what | check by hand |", "|---|---|---|"]
    lines += [f"| {w.path.name} | {w.what} | {w.check} |" for w in written]
    if skipped:
        lines += ["", "Relations left out (no question is asked about them):", ""]
        lines += [f"- `{s['relation']}` ({s['label']}, {s['triples']} triples): {s['why']}" for s in skipped]
    if id_labels["entities"] or id_labels["relations"]:
        lines += ["", f"Labels that are ids: {id_labels['entities']:,} entities and {id_labels['relations']:,} relations "
                  f"(e.g. {', '.join(id_labels['examples']) or '-'}); {id_labels['triple_share']:.1%} of the triples "
                  "name one."]
    if labels["readable_share"] < 1:
        lines += ["", f"{labels['entities'] - labels['readable_entities']:,} entities have no readable name "
                  f"(e.g. {', '.join(labels['unreadable_examples'])}): questions about them are rejected at run time "
                  f"(kgs.{kg}.require_labels); give entity_labels for more questions."]
    from kgprobe.project.plan import unscored

    lines += [line for note in unscored(completed) for line in ("", f"Not scored: {note}.")]
    review_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written.append(Written(review_path, "this list", "-"))
    return written


#: Records per FD a starter ERBench project asks (``limit_per_fd``), when the config sets none: 200 records give 400
#: binary questions per FD, a Wilson 95% interval of about +-5 points per FD on a share near one half, in about a
#: minute with the reference models (the sample project asks 20; the paper's datasets, examples/erbench, 1,500).
ERBENCH_LIMIT_PER_FD = 200
#: Example questions ``init`` shows for review.
_ERBENCH_EXAMPLES = 20


def _erbench_tables(db: str, path: Path) -> tuple[Path, dict[str, Any]]:
    """The tables ``suites.erbench.db`` names: a folder of CSV files, a CSV file, or a SQLite / DuckDB file
    (``file#table`` names one of its tables; without it, the file's only table), as (where, relation -> CSV path or
    :class:`~kgprobe.suites.erbench.fds.TableRef`)."""
    from kgprobe.suites.erbench.fds import TableRef, database_kind, list_tables

    name, _, table = db.partition("#")
    source = Path(name).expanduser()
    source = source if source.is_absolute() else path.parent / source
    if source.is_dir():
        files = sorted(source.glob("*.csv"))
        if not files:
            raise ConfigError(f"{path}: suites.erbench.db: no CSV file in the folder {source}; name a spec YAML, a "
                              "CSV file, a folder of CSV files, or a SQLite / DuckDB file")
        return source, {_relation_name(f.stem): f for f in files}
    if not source.is_file():
        raise ConfigError(f"{path}: suites.erbench.db: no file at {source}; name a spec YAML, a CSV file, a folder "
                          "of CSV files, or a SQLite / DuckDB file (file.sqlite#table names one of its tables)")
    kind = database_kind(source)
    if kind is None:
        if table:
            raise ConfigError(f"{path}: suites.erbench.db: {source} is not a SQLite or DuckDB file, so '#{table}' "
                              "names no table in it")
        return source, {_relation_name(source.stem): source}
    tables = list_tables(source, kind)
    if not table:
        if len(tables) != 1:
            raise ConfigError(f"{path}: suites.erbench.db: the {kind} file {source.name} holds {len(tables)} tables "
                              f"({', '.join(tables) or 'none'}); name the one to ask about: "
                              f"db: {name}#{tables[0] if tables else '<table>'}")
        table = tables[0]
    if table not in tables:
        raise ConfigError(f"{path}: suites.erbench.db: the {kind} file {source.name} has no table {table!r}; its "
                          f"tables: {', '.join(tables) or 'none'}")
    return source, {_relation_name(table): TableRef(source, kind, table)}


def _relation_name(stem: str) -> str:
    name = re.sub(r"\W+", "_", stem).strip("_").lower() or "table"
    return f"t_{name}" if name[0].isdigit() else name


def _erbench_examples(spec_path: Path, limit: int | None) -> tuple[int, list[str]]:
    """Build the questions of the spec just written, as ``kgprobe run`` will (an in-memory load of its tables):
    the number of items and a few BN(Y) questions; a spec whose items share a prompt with different expected answers
    is a :class:`ConfigError` naming them."""
    import duckdb

    from kgprobe.suites.erbench.clashes import check_shared_prompts
    from kgprobe.suites.erbench.erdb import load_erdb
    from kgprobe.suites.erbench.questions import QuestionOptions, build_items

    from kgprobe.suites.erbench.spec import load_spec

    spec = load_spec(spec_path.name, config_dir=spec_path.parent)
    with duckdb.connect() as con:
        load_erdb(con, spec)
        items = build_items(con, spec, QuestionOptions(limit=limit))
    check_shared_prompts(items, strict=True)
    rows = [r for r in items.select(["qtype", "fd", "question"]).to_pylist() if r["qtype"] == "BN(Y)"]
    by_fd: dict[str, list[str]] = {}
    for r in rows:
        by_fd.setdefault(r["fd"], []).append(r["question"])
    examples: list[str] = []
    while len(examples) < _ERBENCH_EXAMPLES and any(by_fd.values()):  # round robin over the FDs
        for questions in by_fd.values():
            if questions and len(examples) < _ERBENCH_EXAMPLES:
                examples.append(questions.pop(0))
    return items.num_rows, examples


def _database_spec(path: Path, raw: dict, log: Callable[[str], None]) -> Written | None:
    """When ``suites.erbench.db`` names data (a CSV file, a folder of CSV files, or a SQLite or DuckDB file, whose
    ``#table`` or only table is read) rather than a spec, write an ERBench spec of it beside the config (candidate
    FDs with support and violations, :mod:`kgprobe.suites.erbench.fds`, one question per left-hand side), its source
    path relative to the config, point ``db`` at it, set ``limit_per_fd`` (:data:`ERBENCH_LIMIT_PER_FD`) when the
    config has none, build its questions once to check them, and say what to check; else None. A spec already
    there is kept as ``<stem>.erbench-spec.before-init.yaml``."""
    from kgprobe.suites.erbench.fds import discover_fds, erbench_spec, table_frame

    section = (raw.get("suites") or {}).get("erbench")
    db = section.get("db") if isinstance(section, dict) else None
    if not isinstance(db, str) or db.endswith((".yaml", ".yml", ".json")):
        return None
    source, tables = _erbench_tables(db, path)
    candidates = [c for rel, f in tables.items() for c in discover_fds(table_frame(f)[0], relation=rel)]
    folder = source if source.is_dir() else source.parent
    spec = erbench_spec(path.stem, tables, candidates, folder=folder, spec_folder=path.parent)
    out = path.parent / f"{path.stem}.erbench-spec.yaml"
    if out.is_file():
        (path.parent / f"{path.stem}.erbench-spec.before-init.yaml").write_bytes(out.read_bytes())
    evidence = "\n".join(f"  {c.relation}: {', '.join(c.lhs)} -> {c.rhs}: {c.groups} groups, support {c.support}, "
                          f"{c.violations} violations{' (left side is a key)' if c.lhs_is_key else ''}"
                          for c in candidates)
    header = ("ERBench spec written by kgprobe init from the data: candidate FDs (at most 3 columns on the left, at "
              "most 1% of the rows breaking them,\nno right side that one value fills in 90% of the rows), one FD per "
              "left side, those naming the entity first. Check: keep the FDs that hold in the world,\nreword the "
              "templates, add foreign keys. Candidates found:\n" + evidence)
    _dump(out, header, spec)
    section["db"] = out.name
    section.setdefault("limit_per_fd", ERBENCH_LIMIT_PER_FD)
    try:
        n_items, examples = _erbench_examples(out, section.get("limit_per_fd"))
    except ConfigError as exc:
        raise ConfigError(f"{path}: the ERBench spec written to {out.name} does not build: {exc}") from exc
    _dump(out, header + "\nQuestions it asks, for example:\n" + "\n".join(f"  {q}" for q in examples), spec)
    log(f"kgprobe init: {len(candidates)} candidate FDs in {len(tables)} table(s) of {source}; {len(spec['fds'])} "
        f"FDs, {n_items:,} questions at limit_per_fd {section.get('limit_per_fd')}")
    return Written(out, f"ERBench spec: {len(spec['fds'])} FDs of {len(tables)} table(s), chosen from "
                        f"{len(candidates)} candidates (listed in its header with support and violations); "
                        f"{n_items:,} questions, e.g. {examples[0] if examples else '(none)'}",
                   "the FDs must hold in the world, not only in this data; read the example questions in its "
                   "header and reword the templates where they do not read as a person would ask")


def format_written(written: Sequence[Written]) -> str:
    """The list ``kgprobe init`` prints: each file, what it holds, what to check by hand."""
    return "\n".join(f"  {w.path}\n      {w.what}\n      check: {w.check}" for w in written)

