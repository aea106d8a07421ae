"""The declarative spec of a relational database for ERBench: where its tables come from, their entity columns,
functional dependencies with their question templates, foreign keys, multi-hop paths and value formats.

A spec is YAML (a file the ``suites.erbench.db`` setting names, or the same mapping inline)::

    name: films
    source: {kind: csv, path: .}            # csv | parquet (a folder) | duckdb | sqlite (a file) | postgres
    relations:
      movies: {file: movies.csv, columns: [title, year, director, star], key: [title, year], entity: movie}
    foreign_keys: ["movies.director -> directors.name"]
    formats: {movies.year: int, directors.birth_year: decade, airports.lat: {round: 4}}
    fds:
      - name: movie_title
        relation: movies
        lhs: [director, star, year]
        rhs: [title]
        basic: "Is there a movie, released in {year}, starring {star} where {director} is the director?"
        negated: "Is it true that there are no movies, released in {year}, starring {star} where {director} is ..."
        explain: "The movie is {title} ({year}), directed by {director}."
        known: "Do you know about the movie {title} released in {year}? If yes, is the movie directed by ...?"
        kg: {relation: directed_by, head: title, tail: director}   # optional: the KG triple a "yes" affirms
      - name: movie_facts
        relation: movies
        lhs: [title, year]
        rhs: [director, star]
        mc:
          questions: [three phrasings of "What is the false option about the movie {title} ...?"]
          options: {director: [three phrasings], star: [three phrasings]}
          known: {lhs: "Do you know about the movie {title} released in {year}?", director: "...", star: "..."}
    multihop:
      - name: movie_director_decade
        path: ["movies.director -> directors.name"]
        show: [title, year]
        target: directors.birth_year
        basic: "Was the director who directed the movie titled {title} that was released in {year} born in the
                {birth_year}?"

Templates are Python format strings over the relation's columns (multi-hop: ``{relation.column}``, or the bare
column where it is unambiguous); a clause written ``[[...]]`` is left out where one of its fields is empty, and a
prompt that would show any other field empty is refused. Questions show values through ``formats`` (``int``,
``decade`` "1950s", ``round`` to n decimals, ``list`` of comma-separated values, ``float`` the stored number as
Python writes it, "-15.0", ``text``); known-entity prompts show raw values (``float`` columns as formatted); explanations (``explain``, the oracle's
rationale) show the raw value, which is what the rationale check looks for. ``match`` names extra matching
heuristics per column (``last_name``, ``club``, ``first_name``, ``list``; ``first_word``, the value's first word,
is the released check's Book publisher heuristic and counts only under ``rationale_match: released``). Column and table names must be SQL identifiers.

``kg`` (optional, FDs with binary templates) names the KG relation the FD's record states, and which of its columns
are the triple's head and tail (both among the FD's ``lhs`` and ``rhs``). When the record's triple is in the KG
(the head and tail values are entity labels or keys there), the record's BN(Y) question says in its evidence that
a "yes" affirms that triple (``"asserts": [head label, relation key, tail label]``), which the cross-suite
consistency view reads: a database loaded from the KG, or joined to it, asks the same facts as the KG suites.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from kgprobe.errors import ConfigError
from kgprobe.yaml_io import load_yaml

__all__ = [
    "FD",
    "ERSpec",
    "ForeignKey",
    "Format",
    "KGLink",
    "MCTemplates",
    "MultiHop",
    "Relation",
    "Source",
    "identifier",
    "load_spec",
    "placeholders",
]

SOURCE_KINDS = ("csv", "parquet", "duckdb", "sqlite", "postgres")
FORMAT_KINDS = ("text", "int", "decade", "round", "list", "float")
MATCH_KINDS = ("last_name", "first_name", "club", "list", "first_word")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
#: an optional clause of a template, ``[[...]]`` (not nested)
_OPTIONAL_CLAUSE = re.compile(r"\[\[(?:(?!\[\[|\]\]).)*\]\]", re.DOTALL)
_FK = re.compile(r"^\s*(\w+)\.(\w+)\s*->\s*(\w+)\.(\w+)\s*(\?)?\s*$")


def identifier(name: Any, what: str) -> str:
    """``name`` when it is an SQL identifier (letters, digits, underscore; not starting with a digit), else a
    ConfigError naming ``what``: table and column names are put into SQL, so only plain identifiers pass."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ConfigError(f"{what}: {name!r} is not a valid identifier (use letters, digits and _; start with a "
                          "letter or _)")
    return name


def placeholders(template: str) -> list[str]:
    """The field names of a format template, in order ("{a} and {b.c}" -> ["a", "b.c"])."""
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


@dataclass(frozen=True)
class Source:
    """Where the tables are read from: ``kind`` and ``path`` (folder of CSV / Parquet files, or a DuckDB / SQLite
    file), or for PostgreSQL the environment variable holding the connection URI (never the URI itself)."""

    kind: str
    path: str | None = None
    uri_env: str | None = None
    schema: str | None = None


@dataclass(frozen=True)
class Relation:
    """One relation: its name in schema ``erdb``, the table or file it is read from, its columns (spec name ->
    source column), an optional key and the entity noun questions use."""

    name: str
    source: str
    columns: Mapping[str, str]
    key: tuple[str, ...] = ()
    entity: str = "entity"


@dataclass(frozen=True)
class Format:
    """How a column's values are shown in questions: ``kind`` of :data:`FORMAT_KINDS` (``digits`` for round)."""

    kind: str = "text"
    digits: int = 0


@dataclass(frozen=True)
class MCTemplates:
    """Multiple-choice templates of an FD: the question phrasings, each RHS column's option phrasings (as many as
    questions) and the known-entity prompts (``lhs`` and one per RHS column)."""

    questions: tuple[str, ...]
    options: Mapping[str, tuple[str, ...]]
    known: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class KGLink:
    """The KG triple a record of an FD states: ``relation`` (a KG relation key) from the ``head`` column's value to
    the ``tail`` column's value."""

    relation: str
    head: str
    tail: str


@dataclass(frozen=True)
class FD:
    """A functional dependency ``lhs -> rhs`` of ``relation`` and the questions asked from it."""

    name: str
    relation: str
    lhs: tuple[str, ...]
    rhs: tuple[str, ...]
    dataset: str
    basic: str | None = None
    negated: str | None = None
    explain: str | None = None
    known: str | None = None
    mc: MCTemplates | None = None
    match: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    kg: KGLink | None = None


@dataclass(frozen=True)
class ForeignKey:
    """``relation.column -> ref_relation.ref_column``; ``checked`` is False for an optional join (``?``)."""

    relation: str
    column: str
    ref_relation: str
    ref_column: str
    checked: bool = True

    @property
    def label(self) -> str:
        return f"{self.relation}.{self.column} -> {self.ref_relation}.{self.ref_column}"


@dataclass(frozen=True)
class MultiHop:
    """A multi-hop question: start at ``path[0].relation``, follow the joins of ``path``, ask about ``target``
    (``relation.column`` of the last relation). ``answer``: ``value`` (the basic question states the true target
    value; expected yes) or ``exists`` (expected yes iff the last join finds a row, e.g. the city hosted the
    Olympics). Each hop's inferred value is the join value (the director, the club, the city), the last hop's the
    target."""

    name: str
    dataset: str
    path: tuple[ForeignKey, ...]
    show: tuple[str, ...]
    target: str
    basic: str
    negated: str
    answer: str = "value"
    explain: str | None = None
    known: str | None = None
    match: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ERSpec:
    """A whole database spec (see the module docstring); ``origin`` names the file or key it came from."""

    name: str
    source: Source
    relations: Mapping[str, Relation]
    fds: tuple[FD, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    multihop: tuple[MultiHop, ...] = ()
    formats: Mapping[str, Format] = field(default_factory=dict)
    origin: str = "erdb spec"
    column_aliases: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    """``relation.column`` (or a bare column) -> value -> the other spellings of that value there."""
    value_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """value -> its other spellings in any column."""
    reading_aliases: Mapping[str, tuple[Mapping[str, Mapping[str, tuple[str, ...]]], Mapping[str, tuple[str, ...]]]] = \
        field(default_factory=dict)
    """``rationale_match`` reading (``released``, ``kgprobe``) -> (column aliases, value aliases) that count only
    under that reading (the spec's ``released_aliases`` and ``kgprobe_aliases``)."""

    def aliases_of(self, relation: str, column: str, value: str, *,
                   rationale_match: str = "released") -> tuple[str, ...]:  # fmt: skip
        """The other spellings of ``value`` in ``relation.column`` under the ``rationale_match`` reading: the
        column's aliases, then the value's, then those of ``released_aliases`` / ``kgprobe_aliases`` for that
        reading."""
        out: list[str] = []
        tables = [(self.column_aliases, self.value_aliases)]
        if rationale_match in self.reading_aliases:
            tables.append(self.reading_aliases[rationale_match])
        for column_aliases, value_aliases in tables:
            for key in (f"{relation}.{column}", column):
                table = column_aliases.get(key) or {}
                out += table.get(value, ()) or next((v for k, v in table.items()
                                                     if k.casefold() == value.casefold()), ())
            out += value_aliases.get(value, ()) or next(
                (v for k, v in value_aliases.items() if k.casefold() == value.casefold()), ())
        return tuple(dict.fromkeys(out))

    def format_of(self, relation: str, column: str) -> Format:
        """The display format of ``relation.column`` (``formats`` key ``relation.column`` or ``column``)."""
        return self.formats.get(f"{relation}.{column}") or self.formats.get(column) or Format()

    def fds_of(self, relation: str) -> list[FD]:
        return [fd for fd in self.fds if fd.relation == relation]

    def as_dict(self) -> dict[str, Any]:
        """A plain-data copy (for the snapshot id and the evidence)."""
        from dataclasses import asdict

        return asdict(self)


# ------------------------------------------------------------------------------------------------------ parsing
def _err(origin: str, where: str, message: str) -> ConfigError:
    return ConfigError(f"{origin}: {where}: {message}")


def _strs(value: Any, origin: str, where: str, *, min_len: int = 1) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or len(value) < min_len or not all(isinstance(v, str) for v in value):
        raise _err(origin, where, f"expected a list of at least {min_len} string(s), got {value!r}")
    return tuple(value)


def _fk(text: Any, origin: str, where: str) -> ForeignKey:
    m = _FK.match(text) if isinstance(text, str) else None
    if not m:
        raise _err(origin, where, f"expected 'relation.column -> relation.column', got {text!r}")
    a, b, c, d, optional = m.groups()
    return ForeignKey(a, b, c, d, checked=optional is None)


def _format(value: Any, origin: str, where: str) -> Format:
    if isinstance(value, str) and value in FORMAT_KINDS:
        return Format(value)
    if isinstance(value, Mapping) and len(value) == 1 and "round" in value and isinstance(value["round"], int):
        return Format("round", int(value["round"]))
    raise _err(origin, where, f"unknown format {value!r}; use one of {', '.join(FORMAT_KINDS)} or {{round: n}}")


def _match(value: Any, origin: str, where: str) -> dict[str, tuple[str, ...]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _err(origin, where, "expected a mapping column -> [last_name | club | list]")
    out = {}
    for col, kinds in value.items():
        kinds = _strs(kinds, origin, f"{where}.{col}")
        bad = [k for k in kinds if k not in MATCH_KINDS]
        if bad:
            raise _err(origin, f"{where}.{col}", f"unknown heuristic(s) {bad}; use {', '.join(MATCH_KINDS)}")
        out[str(col)] = kinds
    return out


def _kg_link(value: Any, columns: Sequence[str], binary: bool, origin: str, where: str) -> KGLink | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _err(origin, where, "expected a mapping {relation: <KG relation key>, head: <column>, tail: <column>}")
    _known_fields(set(value), {"relation", "head", "tail"}, origin, where)
    relation = value.get("relation")
    if not isinstance(relation, str) or not relation.strip():
        raise _err(origin, f"{where}.relation", f"name the KG relation key the record states, got {relation!r}")
    ends = {}
    for end in ("head", "tail"):
        col = value.get(end)
        if col not in columns:
            raise _err(origin, f"{where}.{end}", f"must be one of the FD's columns ({', '.join(columns)}), got {col!r}")
        ends[end] = col
    if ends["head"] == ends["tail"]:
        raise _err(origin, where, "head and tail must be different columns")
    if not binary:
        raise _err(origin, where, "only a binary question (basic) affirms the triple: add basic and negated "
                                  "templates to the FD, or remove kg")
    return KGLink(relation=relation.strip(), head=ends["head"], tail=ends["tail"])


def _known_fields(keys: set[str], allowed: set[str], origin: str, where: str) -> None:
    extra = sorted(keys - allowed)
    if extra:
        raise _err(origin, where, f"unknown key(s) {extra}; allowed: {', '.join(sorted(allowed))}")


def _check_template(template: str, columns: Sequence[str], origin: str, where: str) -> None:
    try:
        names = placeholders(template)
    except ValueError as exc:
        raise _err(origin, where, f"not a valid template ({exc}): {template!r}") from exc
    rest = _OPTIONAL_CLAUSE.sub("", template)
    if "[[" in rest or "]]" in rest:
        raise _err(origin, where, f"an optional clause opens with [[ and closes with ]], unnested: {template!r}")
    missing = [n for n in names if n not in columns]
    if missing:
        raise _err(origin, where, f"template names {missing}, which are not columns here ({', '.join(columns)})")


def parse_spec(data: Mapping[str, Any], *, origin: str = "erdb spec", base: Path | None = None) -> ERSpec:
    """An :class:`ERSpec` from its plain-data form; every error is a ConfigError naming ``origin`` and the key.
    Relative source paths resolve against ``base``."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{origin}: expected a mapping with source, relations and fds")
    _known_fields(set(data), {"name", "source", "relations", "fds", "foreign_keys", "multihop", "formats", "aliases",
                              "released_aliases", "kgprobe_aliases"}, origin, "spec")
    src = data.get("source") or {}
    if not isinstance(src, Mapping) or src.get("kind") not in SOURCE_KINDS:
        raise _err(origin, "source.kind", f"must be one of {', '.join(SOURCE_KINDS)}, got {src.get('kind')!r}")
    _known_fields(set(src), {"kind", "path", "uri_env", "schema"}, origin, "source")
    path = src.get("path")
    if path is not None:
        path = _expand(str(path), origin)
    if path is not None and base is not None and not Path(path).is_absolute():
        path = str((base / path).resolve())
    if src["kind"] == "postgres":
        env = src.get("uri_env")
        if not env or not isinstance(env, str):
            raise _err(origin, "source.uri_env", "PostgreSQL needs the name of an environment variable that holds "
                                                 "the connection URI (the URI itself never goes into a config)")
    elif path is None:
        raise _err(origin, "source.path", f"a {src['kind']} source needs a path")
    source = Source(src["kind"], path, src.get("uri_env"), src.get("schema"))

    rel_data = data.get("relations")
    if not isinstance(rel_data, Mapping) or not rel_data:
        raise _err(origin, "relations", "name at least one relation")
    relations: dict[str, Relation] = {}
    for name, r in rel_data.items():
        where = f"relations.{name}"
        identifier(name, f"{origin}: {where}")
        r = r or {}
        _known_fields(set(r), {"file", "table", "columns", "key", "entity"}, origin, where)
        cols = r.get("columns")
        if isinstance(cols, Mapping):
            columns = {identifier(k, f"{origin}: {where}.columns"): str(v) for k, v in cols.items()}
        else:
            columns = {identifier(c, f"{origin}: {where}.columns"): c for c in _strs(cols, origin, f"{where}.columns")}
        key = tuple(r.get("key") or ())
        for k in key:
            if k not in columns:
                raise _err(origin, f"{where}.key", f"key column {k!r} is not a column of {name} ({', '.join(columns)})")
        default_source = {"csv": f"{name}.csv", "parquet": f"{name}.parquet"}.get(source.kind, name)
        relations[name] = Relation(name=name, source=str(r.get("file") or r.get("table") or default_source),
                                   columns=columns, key=key, entity=str(r.get("entity") or name))

    formats = {str(k): _format(v, origin, f"formats.{k}") for k, v in (data.get("formats") or {}).items()}
    for key in formats:
        rel, _, col = key.rpartition(".")
        if rel and (rel not in relations or col not in relations[rel].columns):
            raise _err(origin, f"formats.{key}", "names no column of a declared relation")

    fds = []
    for i, f in enumerate(data.get("fds") or ()):
        where = f"fds[{i}]"
        if not isinstance(f, Mapping):
            raise _err(origin, where, "expected a mapping")
        _known_fields(set(f), {"name", "relation", "dataset", "lhs", "rhs", "basic", "negated", "explain", "known",
                               "mc", "match", "kg"}, origin, where)
        name = str(f.get("name") or f"fd{i}")
        where = f"fds[{name}]"
        rel = f.get("relation")
        if rel not in relations:
            raise _err(origin, f"{where}.relation", f"unknown relation {rel!r}; declared: {', '.join(relations)}")
        cols = list(relations[rel].columns)
        lhs, rhs = _strs(f.get("lhs"), origin, f"{where}.lhs"), _strs(f.get("rhs"), origin, f"{where}.rhs")
        for side, names in (("lhs", lhs), ("rhs", rhs)):
            for c in names:
                if c not in cols:
                    raise _err(origin, f"{where}.{side}", f"FD {name} names column {c!r}, which table {rel} does not "
                                                          f"have (columns: {', '.join(cols)})")
        for t in ("basic", "negated", "explain", "known"):
            if f.get(t) is not None:
                _check_template(str(f[t]), cols, origin, f"{where}.{t}")
        if (f.get("basic") is None) != (f.get("negated") is None):
            raise _err(origin, where, "give both basic and negated binary templates, or neither")
        mc = None
        if f.get("mc") is not None:
            m = f["mc"]
            _known_fields(set(m), {"questions", "options", "known"}, origin, f"{where}.mc")
            questions = _strs(m.get("questions"), origin, f"{where}.mc.questions")
            options = {}
            for col in rhs:
                opts = _strs((m.get("options") or {}).get(col), origin, f"{where}.mc.options.{col}")
                if len(opts) != len(questions):
                    raise _err(origin, f"{where}.mc.options.{col}", f"give {len(questions)} phrasings, one per question")
                for k, t in enumerate(opts):
                    _check_template(t, cols, origin, f"{where}.mc.options.{col}[{k}]")
                options[col] = opts
            if len(rhs) < 2 or len(rhs) > 4:
                raise _err(origin, f"{where}.rhs", "a multiple-choice FD needs 2 to 4 right-hand-side columns")
            for k, t in enumerate(questions):
                _check_template(t, cols, origin, f"{where}.mc.questions[{k}]")
                _no_answer_in_question(t, rhs, origin, f"{where}.mc.questions[{k}]")
            known = {str(k): str(v) for k, v in (m.get("known") or {}).items()}
            for k, t in known.items():
                _check_template(t, cols, origin, f"{where}.mc.known.{k}")
            mc = MCTemplates(questions=questions, options=options, known=known)
        # an FD with neither binary nor mc templates is declared for the load's checks only (a multi-hop path's
        # joins, a key): it asks nothing
        for t in ("basic", "negated"):
            if f.get(t) is not None:
                _no_answer_in_question(str(f[t]), rhs, origin, f"{where}.{t}")
        match = _match(f.get("match"), origin, f"{where}.match")
        kg = _kg_link(f.get("kg"), (*lhs, *rhs), f.get("basic") is not None, origin, f"{where}.kg")
        fds.append(FD(name=name, relation=rel, lhs=lhs, rhs=rhs, dataset=str(f.get("dataset") or rel),
                      basic=f.get("basic"), negated=f.get("negated"), explain=f.get("explain"), known=f.get("known"),
                      mc=mc, match=match, kg=kg))
    if len({fd.name for fd in fds}) != len(fds):
        raise _err(origin, "fds", "FD names must be unique")

    fks = []
    for i, text in enumerate(data.get("foreign_keys") or ()):
        fk = _fk(text, origin, f"foreign_keys[{i}]")
        _check_fk(fk, relations, origin, f"foreign_keys[{i}]")
        fks.append(fk)

    hops = []
    for i, h in enumerate(data.get("multihop") or ()):
        where = f"multihop[{i}]"
        _known_fields(set(h), {"name", "dataset", "path", "show", "target", "basic", "negated", "answer", "explain",
                               "known", "match"}, origin, where)
        name = str(h.get("name") or f"multihop{i}")
        path = tuple(_fk(t, origin, f"{where}.path[{k}]") for k, t in enumerate(_strs(h.get("path"), origin, f"{where}.path")))
        for k, fk in enumerate(path):
            _check_fk(fk, relations, origin, f"{where}.path[{k}]")
            if k and fk.relation != path[k - 1].ref_relation:
                raise _err(origin, f"{where}.path[{k}]", f"starts at {fk.relation}, not at {path[k - 1].ref_relation}")
        rels = [path[0].relation, *(fk.ref_relation for fk in path)]
        if len(set(rels)) != len(rels):
            raise _err(origin, f"{where}.path", "a path may visit each relation once")
        target = str(h.get("target") or "")
        trel, _, tcol = target.rpartition(".")
        trel = trel or rels[-1]
        if trel != rels[-1] or tcol not in relations[trel].columns:
            raise _err(origin, f"{where}.target", f"{target!r} is not a column of the path's last relation {rels[-1]}")
        show = _strs(h.get("show"), origin, f"{where}.show")
        for c in show:
            if c not in relations[rels[0]].columns:
                raise _err(origin, f"{where}.show", f"{c!r} is not a column of {rels[0]}")
        answer = h.get("answer", "value")
        if answer not in ("value", "exists"):
            raise _err(origin, f"{where}.answer", "must be value or exists")
        names = _hop_columns(relations, rels)
        for t in ("basic", "negated", "explain", "known"):
            if t in ("basic", "negated") and not h.get(t):
                raise _err(origin, f"{where}.{t}", "a multi-hop question needs basic and negated templates")
            if h.get(t):
                _check_template(str(h[t]), names, origin, f"{where}.{t}")
        hidden = [f"{fk.ref_relation}.{fk.ref_column}" for fk in path] + [f"{fk.relation}.{fk.column}" for fk in path]
        hidden_bare = [c.split(".")[1] for c in hidden if c.split(".")[1] in names]
        for t in ("basic", "negated"):
            _no_answer_in_question(str(h[t]), [*hidden, *(c for c in hidden_bare if c not in show)], origin,
                                   f"{where}.{t}", what="a hidden hop's value (the join column)")
        hops.append(MultiHop(name=name, dataset=str(h.get("dataset") or name), path=path, show=show,
                             target=f"{trel}.{tcol}", basic=h["basic"], negated=h["negated"], answer=answer,
                             explain=h.get("explain"), known=h.get("known"),
                             match=_match(h.get("match"), origin, f"{where}.match")))
    column_aliases, value_aliases = _aliases(data.get("aliases"), relations, origin)
    reading_aliases = {reading: _aliases(data.get(f"{reading}_aliases"), relations, origin,
                                         section=f"{reading}_aliases")
                       for reading in ("released", "kgprobe") if data.get(f"{reading}_aliases") is not None}
    return ERSpec(name=str(data.get("name") or "erdb"), source=source, relations=relations, fds=tuple(fds),
                  foreign_keys=tuple(fks), multihop=tuple(hops), formats=formats, origin=origin,
                  column_aliases=column_aliases, value_aliases=value_aliases, reading_aliases=reading_aliases)


def _expand(path: str, origin: str) -> str:
    """``path`` with ``$VAR`` / ``${VAR}`` replaced from the environment (the folder of a data set the user keeps
    elsewhere, e.g. ``${ERBENCH_DATA}``); an unset variable is a ConfigError naming it."""
    missing = [a or b for a, b in re.findall(r"\$\{(\w+)\}|\$(\w+)", path) if not os.environ.get(a or b)]
    if missing:
        raise _err(origin, "source.path", f"{path!r} names environment variable {missing[0]}, which is not set; "
                                          f"export {missing[0]}=<folder> before running")
    return os.path.expandvars(path)


def _aliases(value: Any, relations: Mapping[str, Relation], origin: str, *, section: str = "aliases"
             ) -> tuple[dict[str, dict[str, tuple[str, ...]]], dict[str, tuple[str, ...]]]:  # fmt: skip
    """``aliases:`` (or ``released_aliases:`` / ``kgprobe_aliases:``, named by ``section``) read: a key naming a column
    (``relation.column`` or a column of some relation) maps values to spellings; any other key is a value and maps
    to its spellings directly."""
    if value is None:
        return {}, {}
    if not isinstance(value, Mapping):
        raise _err(origin, section, "expected a mapping: {value: [spellings]} or {relation.column: {value: [spellings]}}")
    columns = {f"{r}.{c}" for r, rel in relations.items() for c in rel.columns} | {
        c for rel in relations.values() for c in rel.columns}
    per_column: dict[str, dict[str, tuple[str, ...]]] = {}
    per_value: dict[str, tuple[str, ...]] = {}
    for key, spec in value.items():
        key = str(key)
        if isinstance(spec, Mapping):
            if key not in columns:
                raise _err(origin, f"{section}.{key}", "a mapping of values names a column (relation.column or column); "
                                                     f"{key!r} is none of the declared relations' columns")
            per_column[key] = {str(v): _strs([str(x) for x in (s if isinstance(s, list) else [s])], origin,
                                             f"{section}.{key}.{v}") for v, s in spec.items()}
        else:
            per_value[key] = _strs([str(x) for x in (spec if isinstance(spec, list) else [spec])], origin,
                                   f"{section}.{key}")
    return per_column, per_value


def _no_answer_in_question(template: str, hidden: Sequence[str], origin: str, where: str, *,
                           what: str = "a right-hand-side column (the answer)") -> None:
    named = [n for n in placeholders(template) if n in hidden]
    if named:
        raise _err(origin, where, f"names {named}, {what}: the question would contain its own answer. Ask with "
                                  "the left-hand side only; the explanation and the known-entity prompt may name it")


def _hop_columns(relations: Mapping[str, Relation], rels: Sequence[str]) -> list[str]:
    """The names a multi-hop template may use: every ``relation.column`` and each column name that only one
    relation of the path has."""
    qualified = [f"{r}.{c}" for r in rels for c in relations[r].columns]
    counts: dict[str, int] = {}
    for r in rels:
        for c in relations[r].columns:
            counts[c] = counts.get(c, 0) + 1
    return qualified + [c for c, n in counts.items() if n == 1]


def _check_fk(fk: ForeignKey, relations: Mapping[str, Relation], origin: str, where: str) -> None:
    for rel, col in ((fk.relation, fk.column), (fk.ref_relation, fk.ref_column)):
        if rel not in relations:
            raise _err(origin, where, f"unknown relation {rel!r}")
        if col not in relations[rel].columns:
            raise _err(origin, where, f"table {rel} has no column {col!r} (columns: {', '.join(relations[rel].columns)})")


def load_spec(spec: str | Path | Mapping[str, Any], *, config_dir: Path | str = ".") -> ERSpec:
    """The spec from a YAML file (relative to ``config_dir``) or an inline mapping; source paths resolve against
    the YAML file's folder (inline: ``config_dir``)."""
    config_dir = Path(config_dir)
    if isinstance(spec, Mapping):
        return parse_spec(spec, origin="suites.erbench.db", base=config_dir)
    path = Path(spec)
    path = path if path.is_absolute() else config_dir / path
    if not path.is_file():
        raise ConfigError(f"erdb spec {path} not found; set suites.erbench.db to a YAML file (relative to the config)")
    data = load_yaml(path.read_text(encoding="utf-8"), what=f"erdb spec {path}")
    return parse_spec(data, origin=str(path), base=path.parent)
