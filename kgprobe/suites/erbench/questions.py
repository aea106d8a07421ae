"""ERBench questions from the ``erdb`` tables, generated in DuckDB as set operations (no Python loop per row).

For every FD ``X -> Y`` of the spec (§3.1 and appendix A of the paper):

* binary: the basic question BN(Y) from the ``basic`` template over X (expected "yes") and the negated BN(N) from
  ``negated`` (expected "no"); the FD-inferred values are the record's Y values. When the FD has a ``kg`` link and
  the record's triple is in the KG (``QuestionOptions.kg``), BN(Y)'s evidence ``asserts`` it (head label, relation
  key, tail label): a "yes" affirms a KG fact that other suites may ask too;
* multiple choice: per record and phrasing (the three of Table 8), one option per Y column, one of them made false
  by replacing its value with another row's value of that column (a different value: the FD makes it false), drawn
  over the relation's rows as the released code does (``distractors="by_row"``) or uniformly over its distinct
  values (``by_value``), expected the false option's number; a seeded share of records instead keeps every option
  true and expects "None of the above". The inferred value is the replaced column's true value;
* known-entity prompts (§B.2): binary, one concatenated prompt per record (``known``); multiple choice, one prompt
  for X and one per Y column (``mc.known``); they show raw values, not the questions' display formats.

For every multi-hop path (§3.3): the basic and negated question joined over the foreign keys, each hop's inferred
value recorded (the director; the club, the city and the years) so each hop can be scored.

An FD asks about one record per left-hand side, its first row in table order (where the table keeps rows that
violate the FD). Records are sampled per FD (``limit``): the first ones in table order (``sample="first"``, the
paper's first N rows) or by a seeded hash of their key (``seeded``: a sample that does not depend on row order and
grows without reshuffling). Item ids are content hashes of the dataset, FD, question type, phrasing and the key
values, the same whichever source (CSV, SQLite, PostgreSQL, DuckDB) the rows came from.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from kgprobe.errors import ConfigError
from kgprobe.sql import quote_identifier
from kgprobe.suites.base import ITEM_SCHEMA
from kgprobe.suites.erbench.spec import FD, ERSpec, Format, MultiHop, identifier

__all__ = [
    "BINARY_SYSTEM",
    "ITEM_COLUMNS_ERBENCH",
    "KNOWN_SYSTEM",
    "MC_SYSTEM",
    "MC_SYSTEM_NOTA",
    "NONE_OF_THE_ABOVE",
    "QuestionOptions",
    "binary_sql",
    "build_items",
    "evidence_of",
    "item_schema",
    "mc_sql",
    "multihop_sql",
]

#: The paper's system prompts: binary questions (§3.1), known-entity prompts (§B.2) and, from the released code,
#: multiple choice without and with the None-of-the-above hint.
BINARY_SYSTEM = ("Answer the following question in yes or no, and then explain why. Say 'unsure' if you don't know "
                 "and then explain why.")
KNOWN_SYSTEM = "Answer the following question in yes or no. Be concise"
MC_SYSTEM = "Answer the following multiple choice question, and then explain why."
#: The oracle's answer to a multiple-choice question whose options are all true.
NONE_OF_THE_ABOVE = "None of the above. All options are correct."
MC_SYSTEM_NOTA = ("Answer the following multiple choice question, and then explain why. Say 'None of above' if all "
                  "options are correct.")
_SEP = "\x1f"

_S, _I = pa.string(), pa.int64()
#: ERBench's own item columns, after the common ones.
ITEM_COLUMNS_ERBENCH = pa.schema([
    ("dataset", _S), ("qtype", _S), ("fd", _S), ("hops", _I), ("phrasing", _I), ("entity", _S), ("known_group", _S),
    ("inferred", pa.list_(_S)), ("match", pa.list_(_S)), ("hop_values", pa.list_(_S)), ("options", pa.list_(_S)),
    ("names", pa.list_(_S)), ("system", _S), ("gold", _S), ("template_id", _S), ("aliases", _S),
    ("kgprobe_aliases", _S),
])


def item_schema() -> pa.Schema:
    """The common item columns followed by ERBench's (:data:`ITEM_COLUMNS_ERBENCH`)."""
    return pa.schema(list(ITEM_SCHEMA) + list(ITEM_COLUMNS_ERBENCH))


@dataclass(frozen=True)
class QuestionOptions:
    """What to generate: ``limit`` records per FD / path (None: all), the ``none_of_the_above`` share of multiple-
    choice records whose options are all true, the ``seed`` of both samples, and the kinds to build."""

    limit: int | None = None
    none_of_the_above: float = 0.0
    seed: int = 0
    binary: bool = True
    multiple_choice: bool = True
    multihop: bool = True
    known: bool = True
    snapshot_id: str = ""
    kg: str | None = None
    """The schema of the KG that FDs with a ``kg`` link are checked against (None: no BN(Y) asserts a triple)."""
    prefer_kg: bool = False
    """With ``limit``, an FD with a ``kg`` link samples the records whose triple is in the KG first."""
    sample: str = "first"
    """With ``limit``: ``first`` takes the first records in table order (the paper: the first N rows, its famous
    entities); ``seeded`` the records of smallest seeded hash (a sample that does not depend on row order)."""
    distractors: str = "by_row"
    """The false option's value: ``by_row`` another row's value of the column, drawn over the relation's rows (the
    paper's code, so frequent values are frequent distractors); ``by_value`` drawn uniformly over the column's
    distinct other values."""


class _Params:
    """Bound parameters of one statement: template text is never spliced into SQL."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def used(self, sql: str) -> dict[str, Any]:
        """The parameters ``sql`` names (DuckDB rejects unused ones)."""
        names = set(re.findall(r"\$(p\d+)\b", sql))
        return {k: v for k, v in self.values.items() if k in names}

    def __call__(self, value: Any) -> str:
        name = f"p{len(self.values)}"
        self.values[name] = value
        return f"${name}"


def _q(name: str) -> str:
    return quote_identifier(identifier(name, "column"))


def _raw(expr: str, dtype: str) -> str:
    """A value as text the way the rationale check reads it: integral floats without ".0"."""
    if dtype.upper() in ("DOUBLE", "FLOAT", "REAL") or dtype.upper().startswith("DECIMAL"):
        return (f"CASE WHEN {expr} IS NULL THEN NULL WHEN {expr} = trunc({expr}) AND abs({expr}) < 1e15 "
                f"THEN CAST(CAST({expr} AS BIGINT) AS VARCHAR) ELSE CAST({expr} AS VARCHAR) END")
    return f"CAST({expr} AS VARCHAR)"


def _shown(expr: str, dtype: str, fmt: Format) -> str:
    """A value as a question shows it (the spec's format)."""
    num = f"TRY_CAST({expr} AS DOUBLE)"
    if fmt.kind == "float":
        # the stored number as Python writes a float ("-34.7833328247", "-15.0"): the released prompts' values
        return f"CAST({num} AS VARCHAR)"
    if fmt.kind == "decade":
        return f"CAST(CAST(floor({num} / 10) * 10 AS BIGINT) AS VARCHAR) || 's'"
    if fmt.kind == "round":
        return f"CAST(round({num}, {int(fmt.digits)}) AS VARCHAR)"
    if fmt.kind == "int":
        return f"CAST(CAST(round({num}) AS BIGINT) AS VARCHAR)"
    if fmt.kind == "list":
        return f"regexp_replace(trim(CAST({expr} AS VARCHAR), ' ,'), '\\s*,\\s*', ', ', 'g')"
    return _raw(expr, dtype)


_OPTIONAL = re.compile(r"\[\[(.*?)\]\]", re.DOTALL)


def _segments(template: str) -> list[tuple[str, bool]]:
    """``template`` as (text, optional) pieces: an optional piece is written ``[[...]]`` and is left out of the
    prompt where one of its fields is empty (the released Soccer & Olympic known-entity prompt drops "If yes did
    <city> host the summer olympics at <years>?" for a city that never hosted)."""
    out, pos = [], 0
    for m in _OPTIONAL.finditer(template):
        if m.start() > pos:
            out.append((template[pos:m.start()], False))
        out.append((m.group(1), True))
        pos = m.end()
    if pos < len(template):
        out.append((template[pos:], False))
    return out


def _empty(expr: str) -> str:
    return f"(trim(coalesce({expr}, '')) = '')"


def _template(template: str, columns: Mapping[str, str], p: _Params) -> str:
    """SQL concatenating ``template``'s text (bound) and its fields (``columns``: field -> SQL text expression); an
    optional piece ``[[...]]`` only where all its fields have a value."""
    pieces = []
    for text, optional in _segments(template):
        parts = []
        for literal, name, _spec, _conv in string.Formatter().parse(text):
            if literal:
                parts.append(p(literal))
            if name:
                if name not in columns:
                    raise ConfigError(f"template {template!r} names {{{name}}}, which is not a column here "
                                      f"({', '.join(sorted(columns))})")
                parts.append(f"coalesce({columns[name]}, '')")
        sql = "(" + (" || ".join(parts) or "''") + ")"
        names = _fields(text)
        if optional and names:
            sql = f"(CASE WHEN {' OR '.join(_empty(columns[n]) for n in names)} THEN '' ELSE {sql} END)"
        pieces.append(sql)
    return "(" + (" || ".join(pieces) or "''") + ")"


def _required(template: str) -> list[str]:
    """The fields of ``template`` outside its optional pieces: a prompt is malformed where one of them is empty."""
    return list(dict.fromkeys(f for text, optional in _segments(template) if not optional for f in _fields(text)))


def _empty_slot(checks: Sequence[tuple[str, str, Mapping[str, str]]], p: _Params) -> str:
    """SQL of the first prompt template of ``checks`` ((where, template, columns)) that renders a required field
    empty for the record, as JSON [where, template, field], or NULL: :func:`build_items` refuses such prompts."""
    whens = [f"WHEN {_empty(columns[f])} THEN {p(json.dumps([where, template, f]))}"
             for where, template, columns in checks for f in _required(template)]
    return f"CASE {' '.join(whens)} END" if whens else "CAST(NULL AS VARCHAR)"


def _types(con: duckdb.DuckDBPyConnection, schema: str, relation: str) -> dict[str, str]:
    rows = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $s AND "
                       "table_name = $t ORDER BY ordinal_position", {"s": schema, "t": relation}).fetchall()
    if not rows:
        raise ConfigError(f"table {schema}.{relation} does not exist; materialize the erdb asset (load_erdb) first")
    return dict(rows)


def _hash_int(expr: str) -> str:
    return f"CAST(('0x' || substr(sha256({expr}), 1, 12)) AS BIGINT)"


def _key(exprs: Sequence[str]) -> str:
    return "concat_ws(chr(31), " + ", ".join(f"coalesce({e}, '')" for e in exprs) + ")"


#: An item id is 14 hex digits of the record's hash (spec, FD or path, key values) and a 2-character code of the
#: question (y0 BN(Y), n0 BN(N), k0 known, m<phrasing> MC, q<part> MC known): one hash per record, not per item.
_ITEM_ID = "substr(e._h, 1, 14) || {code}"
_GROUP_ID = "substr(e._h, 17, 16)"
_CODES = {"BN(Y)": "y0", "BN(N)": "n0", "known": "k0"}
_TEMPLATE_KEYS = {"BN(Y)": "basic", "BN(N)": "negated", "known": "known"}


def _known_columns(raw: Mapping[str, str], shown: Mapping[str, str], fmt: Any) -> dict[str, str]:
    """The values a known-entity prompt shows: raw (the released scripts' values, not the questions' display
    formats), except a ``float`` column, whose format only writes the stored number as the released prompts do."""
    return {c: shown[c] if fmt(c).kind == "float" else raw[c] for c in raw}


def _ent(p: _Params, name: str, source: str, spec_name: str, key: str, opts: QuestionOptions,
         extra: Mapping[str, str] | None = None, first: str | None = None) -> str:  # fmt: skip
    """The CTE ``name`` of the sampled records of ``source`` with ``_h`` (the record's hash: item and group ids),
    ``_key`` and ``extra`` columns, materialized once for every question type that reads it. Without a limit
    nothing is sorted; with one, the first records in table order (``opts.sample`` = first) or those whose seeded
    hash is smallest (seeded) are kept, those where the SQL condition ``first`` holds before the others."""
    cols = "".join(f", {sql} AS {col}" for col, sql in (extra or {}).items())
    order = ""
    if opts.limit is not None:
        rank = "e._row" if opts.sample == "first" else \
            f"md5(concat_ws(chr(31), {p(str(opts.seed))}, {p(spec_name)}, {key}))"
        order = (f" ORDER BY {f'CASE WHEN {first} THEN 0 ELSE 1 END, ' if first else ''}{rank} "
                 f"LIMIT {int(opts.limit)}")
    return (f"{name} AS MATERIALIZED (SELECT e.*, {key} AS _key, md5(concat_ws(chr(31), 'erbench', {p(spec_name)}, "
            f"{key})) AS _h{cols} FROM {source} e{order})")


def _breakdown(p: _Params, dataset: str, qtype: str, hops: int | None = None) -> str:
    keys = ["'dataset'", "'qtype'"] + (["'hops'"] if hops else [])
    vals = [p(dataset), qtype] + ([p(str(hops))] if hops else [])
    return f"MAP([{', '.join(keys)}], [{', '.join(vals)}])"


def _evidence(p: _Params, opts: QuestionOptions, kind: str, name: str, record: Mapping[str, str]) -> str:
    pairs = ", ".join(f"{p(k)}, {v}" for k, v in record.items())
    return (f"CAST(json_object('snapshot_id', {p(opts.snapshot_id)}, 'kind', {p(kind)}, 'name', {p(name)}, "
            f"'record', json_object({pairs})) AS VARCHAR)")


def _list(exprs: Sequence[str]) -> str:
    return "list_value(" + ", ".join(exprs) + ")" if exprs else "CAST([] AS VARCHAR[])"


def _names(exprs: Sequence[str]) -> str:
    return _list([f"coalesce({e}, '')" for e in exprs])


# ------------------------------------------------------------------------------------------------------ binary
def binary_sql(spec: ERSpec, fd: FD, types: Mapping[str, str], opts: QuestionOptions, *, schema: str = "erdb",
               known: bool = True, columns: Sequence[str] | None = None) -> tuple[str, dict[str, Any]]:  # fmt: skip
    """The SELECT of an FD's binary items (BN(Y), BN(N) and, with ``known``, its known-entity prompt) and its
    parameters; columns are those of :func:`item_schema`, or only ``columns`` (DuckDB does not prune the columns of
    a UNION ALL, so a caller that needs few should say so)."""
    p = _Params()
    rel = spec.relations[fd.relation]
    used = list(dict.fromkeys([*fd.lhs, *fd.rhs, *(c for t in (fd.basic, fd.negated, fd.explain, fd.known) if t
                                                   for c in _fields(t))]))
    others = [c for c in used if c not in fd.lhs and c not in fd.rhs]
    raw = {c: _raw(f"e.{_q(c)}", types[c]) for c in used}
    shown = {c: _shown(f"e.{_q(c)}", types[c], spec.format_of(rel.name, c)) for c in used}
    known_cols = _known_columns(raw, shown, lambda c: spec.format_of(rel.name, c))
    key = _key([raw[c] for c in fd.lhs])
    explain = fd.explain or " ".join(f"The {c} is {{{c}}}." for c in fd.rhs)
    explain_sql = _template(explain, raw, p)
    kinds = [("BN(Y)", "yes", fd.basic, f"'Yes. ' || {explain_sql}", BINARY_SYSTEM),
             ("BN(N)", "no", fd.negated, f"'No. ' || {explain_sql}", BINARY_SYSTEM)]
    if known and fd.known:
        kinds.append(("known", "yes", fd.known, "'Yes.'", KNOWN_SYSTEM))
    wanted = [c for c in (list(columns) if columns is not None else [*item_schema().names, "_empty"])
              if c not in ("aliases", "kgprobe_aliases")]
    inferred = _list([raw[c] for c in fd.rhs])
    match = _list([p(",".join(fd.match.get(c, ()))) for c in fd.rhs])
    # per record, computed once in the materialized CTE for all three questions
    extra = {}
    if "names" in wanted:
        extra["_names"] = _names([raw[c] for c in used])
    triple = (_kg_triple(p, opts.kg, fd.kg.relation, raw[fd.kg.head], raw[fd.kg.tail])
              if fd.kg is not None and opts.kg else None)
    if "evidence" in wanted:
        extra["_evidence"] = _evidence(p, opts, "fd", fd.name, {c: raw[c] for c in used})
        if triple is not None:
            extra["_asserts"] = triple
    empty = "CAST([] AS VARCHAR[])"
    evidence_y = ("CASE WHEN e._asserts IS NULL THEN e._evidence ELSE CAST(json_merge_patch(e._evidence, "
                  "json_object('asserts', e._asserts)) AS VARCHAR) END") if "_asserts" in extra else "e._evidence"

    def part(qtype: str, expected: str, template: str, gold: str, system: str) -> str:
        task = "known_entity" if qtype == "known" else "binary"
        exprs = {
            "item_id": lambda: _ITEM_ID.format(code=p(_CODES[qtype])), "suite": lambda: "'erbench'",
            "task": lambda: p(task), "answer_format": lambda: "'yes_no'",
            "question": lambda: _template(template, known_cols if qtype == "known" else shown, p),
            "expected": lambda: p(expected),
            "group_id": lambda: _GROUP_ID, "breakdown": lambda: _breakdown(p, fd.dataset, p(qtype)),
            "evidence": lambda: evidence_y if qtype == "BN(Y)" else "e._evidence", "dataset": lambda: p(fd.dataset),
            "qtype": lambda: p(qtype),
            "fd": lambda: p(fd.name), "hops": lambda: "CAST(1 AS BIGINT)", "phrasing": lambda: "CAST(0 AS BIGINT)",
            "entity": lambda: "e._key", "known_group": lambda: _GROUP_ID,
            "inferred": lambda: inferred if qtype != "known" else empty,
            "match": lambda: match if qtype != "known" else empty, "hop_values": lambda: empty,
            "options": lambda: empty, "names": lambda: "e._names", "system": lambda: p(system), "gold": lambda: gold,
            "template_id": lambda: p(f"erbench-{qtype.lower()}-v1"),
            "_empty": lambda: _empty_slot([(f"fds[{fd.name}].{_TEMPLATE_KEYS[qtype]}", template,
                                            known_cols if qtype == "known" else shown)], p),
        }  # fmt: skip
        return "SELECT " + ", ".join(f"{exprs[c]()} AS {c}" for c in wanted) + " FROM ent e"

    parts = [part(*kind) for kind in kinds]
    first = f"{triple} IS NOT NULL" if triple is not None and opts.prefer_kg else None
    sql = (f"WITH base AS ({_base(schema, rel.name, fd.lhs, fd.rhs, others)}), "
           f"{_ent(p, 'ent', 'base', f'{spec.name}|{fd.name}', key, opts, extra, first)} " + " UNION ALL ".join(parts))
    return sql, p.used(sql)


def _base(schema: str, relation: str, lhs: Sequence[str], rhs: Sequence[str], others: Sequence[str]) -> str:
    """The records an FD asks about: one per left-hand side, its first row in table order (``_row``). Where the
    table keeps rows that violate the FD (fd_violations: keep), the first row's right-hand side is the one asked
    about, as the paper asks about its table as it is."""
    select = ", ".join([*(_q(c) for c in (*lhs, *rhs)), *(f"min({_q(c)}) AS {_q(c)}" for c in others)])
    group = ", ".join(_q(c) for c in (*lhs, *rhs))
    part = ", ".join(_q(c) for c in lhs)
    return (f"SELECT * FROM (SELECT {select}, min(rowid) AS _row FROM {_q(schema)}.{_q(relation)} GROUP BY {group}) "
            f"QUALIFY row_number() OVER (PARTITION BY {part} ORDER BY _row) = 1")


def _kg_triple(p: _Params, kg: str, relation: str, head: str, tail: str) -> str:
    """SQL for ``[head label, relation key, tail label]`` of the KG triple the record's ``head`` and ``tail`` values
    (labels or keys) state with ``relation``, or NULL when the KG lacks it (correlated to the record ``e``)."""
    k = _q(kg)
    return (f"(SELECT list_value(h.label, r.key, t.label) FROM {k}.triples x JOIN {k}.relations r ON r.id = x.relation "
            f"JOIN {k}.entities h ON h.id = x.head JOIN {k}.entities t ON t.id = x.tail "
            f"WHERE r.key = {p(relation)} AND {head} IN (h.label, h.key) AND {tail} IN (t.label, t.key) "
            f"ORDER BY h.id, t.id LIMIT 1)")


def _fields(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


# ------------------------------------------------------------------------------------------------------ multiple choice
def mc_sql(spec: ERSpec, fd: FD, types: Mapping[str, str], opts: QuestionOptions, *, schema: str = "erdb",
           known: bool = True) -> tuple[str, dict[str, Any]]:  # fmt: skip
    """The SELECT of an FD's multiple-choice items (one per record and phrasing) and, with ``known``, its
    known-entity prompts (one for the left-hand side, one per option column)."""
    assert fd.mc is not None
    p = _Params()
    rel = spec.relations[fd.relation]
    mc = fd.mc
    templates = [*mc.questions, *(t for ts in mc.options.values() for t in ts), *mc.known.values()]
    used = list(dict.fromkeys([*fd.lhs, *fd.rhs, *(c for t in templates for c in _fields(t))]))
    others = [c for c in used if c not in fd.lhs and c not in fd.rhs]
    raw = {c: _raw(f"e.{_q(c)}", types[c]) for c in used}
    shown = {c: _shown(f"e.{_q(c)}", types[c], spec.format_of(rel.name, c)) for c in used}
    known_cols = _known_columns(raw, shown, lambda c: spec.format_of(rel.name, c))
    key = _key([raw[c] for c in fd.lhs])
    n = len(fd.rhs)
    nota = f"({_hash_int(_key([p(str(opts.seed)), p('nota'), p(fd.name), key]))} % 1000000) < {round(opts.none_of_the_above * 1e6)}"
    pick = f"(1 + {_hash_int(_key([p(str(opts.seed)), p('falsify'), p(fd.name), key]))} % {n})"
    ctes = [f"base AS ({_base(schema, rel.name, fd.lhs, fd.rhs, others)})",
            _ent(p, "ent0", "base", f"{spec.name}|{fd.name}", key, opts),
            f"ent1 AS (SELECT e.*, CASE WHEN {nota} THEN 0 ELSE {pick} END AS _f FROM ent0 e)"]
    joins, false_cols = [], []
    table = f"{_q(schema)}.{_q(rel.name)}"
    for k, col in enumerate(fd.rhs, start=1):
        h = _hash_int(_key([p(str(opts.seed)), p(f"value{k}"), p(fd.name), key]))
        if opts.distractors == "by_value":
            # uniform over the distinct other values: value i is skipped by shifting the draws at or above it
            ctes.append(f"v{k} AS (SELECT v, CAST(row_number() OVER (ORDER BY v) - 1 AS BIGINT) AS i, count(*) OVER () "
                        f"AS cnt FROM (SELECT DISTINCT {_q(col)} AS v FROM base))")
            joins.append(f"JOIN v{k} t{k} ON t{k}.v = e.{_q(col)} "
                         f"LEFT JOIN v{k} f{k} ON f{k}.i = ({h} % greatest(t{k}.cnt - 1, 1)) + "
                         f"CASE WHEN ({h} % greatest(t{k}.cnt - 1, 1)) >= t{k}.i THEN 1 ELSE 0 END")
        else:
            # another row's value, over the relation's rows: with the rows sorted by value, the record's own value
            # is the block [lo, lo + cnt); a draw over the other total - cnt rows skips that block
            ctes.append(f"c{k} AS (SELECT v, CAST(count(*) AS BIGINT) AS cnt, CAST(sum(count(*)) OVER (ORDER BY v) - "
                        f"count(*) AS BIGINT) AS lo, CAST(sum(count(*)) OVER () AS BIGINT) AS total FROM (SELECT "
                        f"{_q(col)} AS v FROM {table} WHERE {_q(col)} IS NOT NULL) GROUP BY v)")
            ctes.append(f"r{k} AS (SELECT {_q(col)} AS v, CAST(row_number() OVER (ORDER BY {_q(col)}) - 1 AS BIGINT) "
                        f"AS i FROM {table} WHERE {_q(col)} IS NOT NULL)")
            joins.append(f"JOIN c{k} t{k} ON t{k}.v = e.{_q(col)} "
                         f"LEFT JOIN r{k} f{k} ON f{k}.i = ({h} % greatest(t{k}.total - t{k}.cnt, 1)) + "
                         f"CASE WHEN ({h} % greatest(t{k}.total - t{k}.cnt, 1)) >= t{k}.lo THEN t{k}.cnt ELSE 0 END")
        false_cols.append(f"f{k}.v AS {_q('_false_' + col)}")
    ctes.append(f"ent AS (SELECT e.*, {', '.join(false_cols)} FROM ent1 e {' '.join(joins)})")
    parts = []
    names = _names([raw[c] for c in used])
    record = {c: raw[c] for c in used}
    false_value = "CASE e._f " + " ".join(f"WHEN {k} THEN {_raw('e.' + _q('_false_' + c), types[c])}"
                                          for k, c in enumerate(fd.rhs, 1)) + " END"
    mc_evidence = _evidence(p, opts, "fd", fd.name, record).replace(
        "'record',", f"'false_column', CASE e._f {' '.join(f'WHEN {k} THEN {p(c)}' for k, c in enumerate(fd.rhs, 1))} "
                     f"END, 'false_value', {false_value}, 'record',", 1)
    group_id = _GROUP_ID
    inferred = "CASE e._f " + " ".join(f"WHEN {k} THEN list_value({raw[c]})" for k, c in enumerate(fd.rhs, 1)) \
               + " ELSE CAST([] AS VARCHAR[]) END"
    match = "CASE e._f " + " ".join(f"WHEN {k} THEN list_value({p(','.join(fd.match.get(c, ())))})"
                                    for k, c in enumerate(fd.rhs, 1)) + " ELSE CAST([] AS VARCHAR[]) END"
    system = MC_SYSTEM_NOTA if opts.none_of_the_above > 0 else MC_SYSTEM
    for ph, question in enumerate(mc.questions):
        option_sql, true_sql = [], []
        checks = [(f"fds[{fd.name}].mc.questions[{ph}]", question, shown)]
        for k, col in enumerate(fd.rhs, start=1):
            cols = dict(shown)
            fmt = spec.format_of(rel.name, col)
            cols[col] = (f"CASE WHEN e._f = {k} THEN {_shown('e.' + _q('_false_' + col), types[col], fmt)} "
                         f"ELSE {shown[col]} END")
            checks.append((f"fds[{fd.name}].mc.options.{col}[{ph}]", mc.options[col][ph], cols))
            option_sql.append(_template(mc.options[col][ph], cols, p))
            true_sql.append(_template(mc.options[col][ph], raw, p))
        body = " || ".join(f"{p(chr(10) + f'Option {k}: ')} || {o}" for k, o in enumerate(option_sql, 1))
        gold = ("CASE e._f WHEN 0 THEN " + p(NONE_OF_THE_ABOVE) + " "
                + " ".join(f"WHEN {k} THEN {p(f'Option {k}: ')} || {o} || {p(' The correct statement is: ')} || {t}"
                           for k, (o, t) in enumerate(zip(option_sql, true_sql), 1)) + " END")
        parts.append(f"""SELECT {_ITEM_ID.format(code=p(f'm{ph}'))} AS item_id,
            'erbench' AS suite, 'multiple_choice' AS task, 'choice' AS answer_format,
            {_template(question, shown, p)} || {body} AS question,
            CASE WHEN e._f = 0 THEN 'none' ELSE CAST(e._f AS VARCHAR) END AS expected, {group_id} AS group_id,
            {_breakdown(p, fd.dataset, "CASE WHEN e._f = 0 THEN 'MC-NOTA' ELSE 'MC' END")} AS breakdown,
            {mc_evidence} AS evidence, {p(fd.dataset)} AS dataset,
            CASE WHEN e._f = 0 THEN 'MC-NOTA' ELSE 'MC' END AS qtype, {p(fd.name)} AS fd, CAST(1 AS BIGINT) AS hops,
            CAST({ph} AS BIGINT) AS phrasing, e._key AS entity, {group_id} AS known_group, {inferred} AS inferred,
            {match} AS match, CAST([] AS VARCHAR[]) AS hop_values, list_value({', '.join(option_sql)}) AS options,
            {names} AS names, {p(system)} AS system, {gold} AS gold, {p(f'erbench-mc{ph}-v1')} AS template_id,
            {_empty_slot(checks, p)} AS _empty FROM ent e""")
    if known:
        for k, (part, template) in enumerate(mc.known.items()):
            parts.append(f"""SELECT {_ITEM_ID.format(code=p(f'q{k:x}'))} AS item_id,
                'erbench' AS suite, 'known_entity' AS task, 'yes_no' AS answer_format,
                {_template(template, known_cols, p)} AS question, 'yes' AS expected, {group_id} AS group_id,
                {_breakdown(p, fd.dataset, p('known_mc'))} AS breakdown,
                {_evidence(p, opts, 'fd', fd.name, record)} AS evidence, {p(fd.dataset)} AS dataset,
                'known_mc' AS qtype, {p(fd.name)} AS fd, CAST(1 AS BIGINT) AS hops, CAST(0 AS BIGINT) AS phrasing,
                e._key AS entity, {group_id} AS known_group, CAST([] AS VARCHAR[]) AS inferred,
                CAST([] AS VARCHAR[]) AS match, CAST([] AS VARCHAR[]) AS hop_values,
                CAST([] AS VARCHAR[]) AS options, {names} AS names, {p(KNOWN_SYSTEM)} AS system, 'Yes.' AS gold,
                {p('erbench-known-mc-v1')} AS template_id,
                {_empty_slot([(f"fds[{fd.name}].mc.known.{part}", template, known_cols)], p)} AS _empty FROM ent e""")
    sql = "WITH " + ", ".join(ctes) + " " + " UNION ALL ".join(parts)
    return sql, p.used(sql)


# ------------------------------------------------------------------------------------------------------ multi-hop
def multihop_sql(spec: ERSpec, hop: MultiHop, types: Mapping[str, Mapping[str, str]], opts: QuestionOptions, *,
                 schema: str = "erdb", known: bool = True) -> tuple[str, dict[str, Any]]:  # fmt: skip
    """The SELECT of a multi-hop path's items: BN(Y) and BN(N) per start record, with each hop's inferred value,
    and its known-entity prompt."""
    p = _Params()
    rels = [hop.path[0].relation, *(fk.ref_relation for fk in hop.path)]
    alias = {r: f"t{i}" for i, r in enumerate(rels)}
    joins = [f"{_q(schema)}.{_q(rels[0])} t0"]
    for i, fk in enumerate(hop.path, start=1):
        kind = "LEFT JOIN" if hop.answer == "exists" and i == len(hop.path) else "JOIN"
        joins.append(f"{kind} {_q(schema)}.{_q(fk.ref_relation)} t{i} ON t{i}.{_q(fk.ref_column)} = "
                     f"{alias[fk.relation]}.{_q(fk.column)}")
    counts: dict[str, int] = {}
    for r in rels:
        for c in spec.relations[r].columns:
            counts[c] = counts.get(c, 0) + 1
    cols: dict[str, tuple[str, str]] = {}  # template name -> (output column, relation.column)
    for r in rels:
        for c in spec.relations[r].columns:
            out = f"{alias[r]}_{c}"
            cols[f"{r}.{c}"] = (out, f"{r}.{c}")
            if counts[c] == 1:
                cols[c] = (out, f"{r}.{c}")
    select = ", ".join(f"{alias[r]}.{_q(c)} AS {_q(alias[r] + '_' + c)}" for r in rels for c in spec.relations[r].columns)
    matched = f"(t{len(hop.path)}.{_q(hop.path[-1].ref_column)} IS NOT NULL)"

    def typ(name: str) -> str:
        r, c = cols[name][1].split(".")
        return types[r][c]

    raw = {n: _raw(f"e.{_q(cols[n][0])}", typ(n)) for n in cols}
    shown = {n: _shown(f"e.{_q(cols[n][0])}", typ(n), spec.format_of(*cols[n][1].split("."))) for n in cols}
    known_cols = _known_columns(raw, shown, lambda n: spec.format_of(*cols[n][1].split(".")))
    # a start record is its row of the first relation: two players of one short name are two questions (the
    # released scripts ask every row), told apart by the record's other columns (exact duplicates are not loaded)
    start = [*hop.show, *(c for c in spec.relations[rels[0]].columns if c not in hop.show)]
    key = _key([raw[f"{rels[0]}.{c}"] for c in start])
    hop_names = [f"{fk.relation}.{fk.column}" for fk in hop.path] + [hop.target]
    hop_values = _list([f"coalesce({raw[n]}, '')" for n in hop_names])

    def how(name: str, k: int) -> str:
        fk = hop.path[k] if k < len(hop.path) else None
        keys = [name, name.split(".")[1]] + ([f"{fk.ref_relation}.{fk.ref_column}", fk.ref_column] if fk else [])
        kinds = next((hop.match[x] for x in keys if x in hop.match), ())
        fmt = spec.format_of(*name.split("."))
        return ",".join([*kinds, *(["list"] if fmt.kind == "list" else [])])

    match = _list([p(how(n, k)) for k, n in enumerate(hop_names)])
    inferred = f"list_filter({hop_values}, x -> x <> '')"
    explain = hop.explain or " ".join(f"{{{n}}}." for n in hop_names)
    explain_sql = _template(explain, raw, p)
    used = [n for n in cols if "." in n]
    names = _names([raw[n] for n in used if n.split(".")[0] == rels[0] or n in hop_names])
    record = {n: raw[n] for n in used}
    group_id = _GROUP_ID
    yes_basic = "CASE WHEN e._matched THEN 'yes' ELSE 'no' END" if hop.answer == "exists" else "'yes'"
    no_negated = "CASE WHEN e._matched THEN 'no' ELSE 'yes' END" if hop.answer == "exists" else "'no'"
    kinds = [("BN(Y)", yes_basic, hop.basic, BINARY_SYSTEM), ("BN(N)", no_negated, hop.negated, BINARY_SYSTEM)]
    if known and hop.known:
        kinds.append(("known", "'yes'", hop.known, KNOWN_SYSTEM))
    parts = []
    n_hops = len(hop.path) + 1
    for qtype, expected, template, system in kinds:
        task = "known_entity" if qtype == "known" else "multihop"
        gold = "'Yes.'" if qtype == "known" else \
            f"CASE WHEN {expected} = 'yes' THEN 'Yes. ' ELSE 'No. ' END || {explain_sql}"
        values = known_cols if qtype == "known" else shown
        parts.append(f"""SELECT {_ITEM_ID.format(code=p(_CODES[qtype]))} AS item_id,
            'erbench' AS suite, {p(task)} AS task, 'yes_no' AS answer_format,
            {_template(template, values, p)} AS question,
            {expected} AS expected, {group_id} AS group_id, {_breakdown(p, hop.dataset, p(qtype), n_hops)} AS breakdown,
            {_evidence(p, opts, 'multihop', hop.name, record)} AS evidence, {p(hop.dataset)} AS dataset,
            {p(qtype)} AS qtype, {p(hop.name)} AS fd, CAST({n_hops} AS BIGINT) AS hops, CAST(0 AS BIGINT) AS phrasing,
            e._key AS entity, {group_id} AS known_group,
            {inferred if qtype != 'known' else 'CAST([] AS VARCHAR[])'} AS inferred,
            {match if qtype != 'known' else 'CAST([] AS VARCHAR[])'} AS match,
            {hop_values if qtype != 'known' else 'CAST([] AS VARCHAR[])'} AS hop_values,
            CAST([] AS VARCHAR[]) AS options, {names} AS names, {p(system)} AS system, {gold} AS gold,
            {p(f'erbench-hop-{qtype.lower()}-v1')} AS template_id,
            {_empty_slot([(f"multihop[{hop.name}].{_TEMPLATE_KEYS[qtype]}", template, values)], p)} AS _empty
            FROM ent e""")
    # one question per start record (the first relation's row): its first joined row in table order, relation by
    # relation
    rows = ", ".join(f"min(t{i}.rowid) AS _row{i}" for i in range(len(rels)))
    order = ", ".join(f"_row{i}" for i in range(len(rels)))
    sql = (f"WITH base AS (SELECT * EXCLUDE ({order}), _row0 AS _row FROM (SELECT {select}, {matched} AS _matched, "
           f"{rows} FROM {' '.join(joins)} GROUP BY ALL) QUALIFY row_number() OVER (PARTITION BY _row0 ORDER BY "
           f"{order}) = 1), "
           f"{_ent(p, 'ent', 'base', f'{spec.name}|{hop.name}', key, opts)} " + " UNION ALL ".join(parts))
    return sql, p.used(sql)


# ------------------------------------------------------------------------------------------------------ all items
def build_items(con: duckdb.DuckDBPyConnection, spec: ERSpec, opts: QuestionOptions = QuestionOptions(), *,
                schema: str = "erdb") -> pa.Table:  # fmt: skip
    """Every item of ``spec``'s FDs and paths as one Arrow table of :func:`item_schema`, FD by FD (the order of
    rows within an FD is unspecified: sorting millions of rows costs more than generating them). Reads ``schema`` (the loaded ``erdb`` tables) through ``con`` (read-only is
    enough)."""
    types = {r: _types(con, schema, r) for r in spec.relations}
    if opts.kg and any(fd.kg for fd in spec.fds):
        found = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = $s",
                                           {"s": opts.kg}).fetchall()}
        if not {"triples", "entities", "relations"} <= found:
            raise ConfigError(f"FDs with a kg link are checked against KG {opts.kg!r}, which is not loaded (no "
                              f"{opts.kg}.triples); materialize the kg asset, or set suites.erbench.kg")
    statements = []
    for fd in spec.fds:
        if fd.basic and opts.binary:
            statements.append(binary_sql(spec, fd, types[fd.relation], opts, schema=schema, known=opts.known))
        if fd.mc and opts.multiple_choice:
            for col in fd.rhs:
                n = con.execute(f"SELECT count(DISTINCT {_q(col)}) FROM {_q(schema)}.{_q(fd.relation)}").fetchone()[0]
                if n < 2:
                    raise ConfigError(f"FD {fd.name}: column {col} of table {fd.relation} has {n} distinct value(s); a "
                                      "false option needs another record's value. Drop the column from the FD's mc")
            statements.append(mc_sql(spec, fd, types[fd.relation], opts, schema=schema, known=opts.known))
    if opts.multihop:
        for hop in spec.multihop:
            statements.append(multihop_sql(spec, hop, types, opts, schema=schema, known=opts.known))
    schema_out = item_schema()
    tables = []
    for sql, params in statements:
        t = con.execute(sql, params).to_arrow_table()
        _refuse_empty_slots(spec, t)
        t = t.append_column("aliases", _aliases_column(spec, t))
        t = t.append_column("kgprobe_aliases", _aliases_column(spec, t, rationale_match="kgprobe"))
        tables.append(t.select(schema_out.names).cast(schema_out))
    if not tables:
        return schema_out.empty_table()
    return pa.concat_tables(tables)


def _refuse_empty_slots(spec: ERSpec, t: pa.Table) -> None:
    """A ConfigError when a prompt of ``t`` rendered a field empty ("... host the summer olympics at ?"), naming
    the template and one record: a model that rightly answers such a prompt "no" would be scored on a malformed
    question."""
    if "_empty" not in t.column_names or t.column("_empty").null_count == t.num_rows:
        return
    flags = t.column("_empty").to_pylist()
    first = next(i for i, f in enumerate(flags) if f is not None)
    where, template, field = json.loads(flags[first])
    n = sum(f is not None for f in flags)
    row = t.slice(first, 1).to_pylist()[0]
    record = evidence_of(row).get("record") or row.get("entity")
    raise ConfigError(f"{spec.origin}: {where}: the template {template!r} renders {{{field}}} empty in {n} "
                      f"prompt(s), e.g. for the record {json.dumps(record, ensure_ascii=False)}: "
                      f"{row.get('question')!r}. Put the clause that names it in [[...]] (left out where a field "
                      "in it is empty), or give the column a value")


def _inferred_columns(spec: ERSpec) -> dict[str, list[tuple[str, str]]]:
    """FD or path name -> the (relation, column) of each value it infers, in order (an MC question infers the
    column of its false option: position ``expected - 1``)."""
    out: dict[str, list[tuple[str, str]]] = {fd.name: [(fd.relation, c) for c in fd.rhs] for fd in spec.fds}
    for hop in spec.multihop:
        names = [(fk.relation, fk.column) for fk in hop.path] + [tuple(hop.target.split(".", 1))]
        out[hop.name] = [(r, c) for r, c in names]
    return out


def _aliases_column(spec: ERSpec, t: pa.Table, *, rationale_match: str = "released") -> pa.Array:
    """Per item, a JSON object value -> other spellings (the spec's ``aliases``, with its ``released_aliases`` or
    ``kgprobe_aliases`` for the ``rationale_match`` reading) of the values its rationale must mention; null where
    none has any. The item's ``aliases`` column holds the released reading's, ``kgprobe_aliases`` kgprobe's."""
    if not (spec.column_aliases or spec.value_aliases or spec.reading_aliases) or t.num_rows == 0:
        return pa.nulls(t.num_rows, pa.string())
    columns = _inferred_columns(spec)
    out = []
    for fd, task, expected, inferred, hop_values in zip(*(t.column(c).to_pylist() for c in (
            "fd", "task", "expected", "inferred", "hop_values"))):  # fmt: skip
        cols = columns.get(fd, [])
        if task == "multiple_choice":
            pairs = [(cols[int(expected) - 1], v) for v in inferred or ()] if str(expected).isdigit() else []
        elif task == "multihop":
            pairs = [(c, v) for c, v in zip(cols, hop_values or ()) if v]
        else:
            pairs = list(zip(cols, inferred or ()))
        found = {v: list(a) for (r, c), v in pairs
                 if (a := spec.aliases_of(r, c, str(v), rationale_match=rationale_match))}
        out.append(json.dumps(found, ensure_ascii=False) if found else None)
    return pa.array(out, pa.string())


def evidence_of(item: Mapping[str, Any]) -> dict[str, Any]:
    """An item's evidence JSON as a dict."""
    return json.loads(item["evidence"]) if item.get("evidence") else {}
