"""Great Expectations suites for the scoring stage's tables, run in memory so the Dagster asset checks can report them.

Four table kinds are checked, each by one function that takes a :class:`pyarrow.Table` (or a list of row dicts) and
returns one :class:`ExpectationOutcome` per expectation, passing ones included, so a check can both decide and show
what it looked at:

    >>> outcomes = validate_score_items(table)
    >>> failed(outcomes)                # [] when the table is sound
    >>> outcomes_markdown(outcomes)     # a markdown table for the check's metadata

- :func:`validate_responses`: model answers (``responses_closed``, ``responses_grounded``).
- :func:`validate_score_samples`: one row per (item, model, perturbation, sample, judge).
- :func:`validate_score_items`: one row per (item, model, perturbation, judge), with the vote of its samples.
- :func:`validate_metrics`: accuracy-style metric rows with their intervals (Wilson score or bootstrap).

Every suite starts with ``expect_column_to_exist`` for each column it reads. A missing column fails that
expectation, and the expectations that read the column are left out rather than reported as crashes, so the
outcome names the real problem once.

Rules that compare columns are checked on derived columns, added to the frame before validation and named for
what they hold: ``n_yes+n_no+n_unknown`` and ``len(labels)`` (each must equal ``n_samples``), ``vote==target``
(must equal ``correct``). They are null wherever an input is null, and the pair expectations skip such rows, so a
null is reported once, by the not-null expectation of its own column. "Every response has text or error" is
``expect_column_values_to_not_be_null`` on ``text`` with a GX row condition (``error`` is null); likewise "a
Wilson interval of n > 0 items has width" is ``ci_high > ci_low`` on the rows where ``interval`` is "wilson" and
``n > 0`` (a percentile bootstrap may collapse to a point, which is why proportions no longer use it).

NaN: GX's pandas engine treats NaN as missing (it uses ``pandas.isna``), so NaN values are skipped by range and
pair expectations exactly like nulls and are flagged by not-null expectations; a metric's ``value`` of NaN
(``n == 0``) therefore reads as "undefined", not as "a number outside [0, 1]". Arrow, unlike pandas, keeps NaN and
null apart, so float NaNs are turned into nulls before conversion: the suites then mean the same on an engine that
would compare NaN as a number.

GX runs in one ephemeral, in-memory Data Context per process, built on first use (importing great_expectations
takes seconds, so this module imports it lazily). The context keeps no files and writes nothing to the working
directory; GX 1.24 ships no usage-statistics client, and ``GX_ANALYTICS_ENABLED=false`` is set before the import
(unless already set) so older or future 1.x releases stay quiet on the network too. Progress bars are off.
Building the context also makes it GX's process-wide current context, which is how ``gx.get_context`` works.
Batches are validated with ``Batch.validate`` rather than a ``ValidationDefinition`` because the latter stores
every result in the context, which would grow for as long as the process lives.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kgprobe.report.safe_text import md_cell, safe_markdown

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "ExpectationOutcome",
    "failed",
    "outcomes_markdown",
    "validate_metrics",
    "validate_responses",
    "validate_score_items",
    "validate_score_samples",
    "validate_votes",
]

#: Most unexpected values or rows kept per outcome.
MAX_EXAMPLES = 5

_EXAMPLE_CELL_CHARS = 300


@dataclass(frozen=True)
class ExpectationOutcome:
    """The result of one expectation on one table.

    ``column`` is the column checked, or the columns joined with ", " for multi-column expectations;
    ``unexpected_count`` is None where GX counts nothing (column existence, or an expectation that raised);
    ``examples`` holds up to :data:`MAX_EXAMPLES` unexpected rows (the row's key columns and the checked values),
    or ``{"error": ...}`` when the expectation could not be evaluated.
    """

    table: str
    expectation: str
    column: str | None
    success: bool
    unexpected_count: int | None
    examples: list[Any] = field(default_factory=list)

    def as_row(self) -> dict[str, Any]:
        """A plain, JSON-friendly dict of the outcome, for tables and metadata."""
        return asdict(self)


@dataclass(frozen=True)
class _Check:
    """One expectation: its GX class name, its arguments, and the source columns it reads (it is left out when
    one is missing). ``optional_keys`` join ``column_list`` when the table has them; ``when_null`` restricts the
    expectation to rows where that column is null, and ``when`` to rows where every ``(column, operator, value)``
    holds (operators ``==`` and ``>``)."""

    expectation: str
    kwargs: Mapping[str, Any]
    needs: tuple[str, ...]
    optional_keys: tuple[str, ...] = ()
    when_null: str | None = None
    when: tuple[tuple[str, str, Any], ...] = ()


@dataclass(frozen=True)
class _Derived:
    """A helper column computed from source columns before validation."""

    name: str
    needs: tuple[str, ...]
    compute: Callable[[pa.Table], pa.Array]


@dataclass(frozen=True)
class _TableSpec:
    """What one table kind must satisfy: the columns it must have, the columns that identify a row in examples,
    the expectations, and the helper columns they read."""

    kind: str
    columns: tuple[str, ...]
    keys: tuple[str, ...]
    checks: tuple[_Check, ...]
    derived: tuple[_Derived, ...] = ()


def _not_null(*columns: str) -> tuple[_Check, ...]:
    return tuple(_Check("ExpectColumnValuesToNotBeNull", {"column": c}, (c,)) for c in columns)


def _in_set(column: str, values: Sequence[str]) -> _Check:
    return _Check("ExpectColumnValuesToBeInSet", {"column": column, "value_set": list(values)}, (column,))


def _between(column: str, low: float | None, high: float | None) -> _Check:
    return _Check("ExpectColumnValuesToBeBetween", {"column": column, "min_value": low, "max_value": high}, (column,))


def _unique(*columns: str, optional: tuple[str, ...] = ()) -> _Check:
    return _Check("ExpectCompoundColumnsToBeUnique", {"column_list": list(columns)}, columns, optional_keys=optional)


def _pair_equal(a: str, b: str, needs: tuple[str, ...]) -> _Check:
    return _Check("ExpectColumnPairValuesToBeEqual",
                  {"column_A": a, "column_B": b, "ignore_row_if": "either_value_is_missing"}, needs)


def _a_at_least_b(a: str, b: str) -> _Check:
    return _Check("ExpectColumnPairValuesAToBeGreaterThanB",
                  {"column_A": a, "column_B": b, "or_equal": True, "ignore_row_if": "either_value_is_missing"}, (a, b))


def _sum_of_counts(table: pa.Table) -> pa.Array:
    import pyarrow.compute as pc

    return pc.add(pc.add(table["n_yes"], table["n_no"]), table["n_unknown"])


def _label_count(table: pa.Table) -> pa.Array:
    import pyarrow.compute as pc

    return pc.list_value_length(table["labels"])


def _vote_matches_target(table: pa.Table) -> pa.Array:
    import pyarrow.compute as pc

    return pc.equal(table["vote"], table["target"])


_LABELS = ("yes", "no", "unknown")
_FORMATS = ("yn", "wh")
# kgprobe.suites.fpq.metrics.INTERVALS, spelled out: importing kgprobe.suites.fpq.metrics would pull numpy, scipy and duckdb into this
# module, which stays light until a suite runs (a test keeps the two equal).
_INTERVALS = ("wilson", "bootstrap", "wilson_mean")

_RESPONSE_REQUIRED = ("item_id", "model", "response_id", "prompt_sha256", "params_sha256", "sample_index",
                      "prompt_template_id")
_RESPONSES = _TableSpec(
    kind="responses",
    columns=(*_RESPONSE_REQUIRED, "text", "error"),
    keys=("item_id", "model", "perturbation", "sample_index"),
    checks=(
        *_not_null(*_RESPONSE_REQUIRED),
        _between("sample_index", 0, None),
        # A grounded responses table read across partitions repeats (item, model, sample) once per perturbation.
        _unique("item_id", "model", "sample_index", optional=("perturbation",)),
        _Check("ExpectColumnValuesToNotBeNull", {"column": "text"}, ("text", "error"), when_null="error"),
    ),
)

_SAMPLE_REQUIRED = ("response_id", "item_id", "model", "perturbation", "sample_index", "format", "judge", "label")
_SAMPLES = _TableSpec(
    kind="score_samples",
    columns=_SAMPLE_REQUIRED,
    keys=("item_id", "model", "perturbation", "sample_index", "judge"),
    checks=(
        *_not_null(*_SAMPLE_REQUIRED),
        _in_set("label", _LABELS),
        _in_set("format", _FORMATS),
        _unique("item_id", "model", "perturbation", "sample_index", "judge"),
    ),
)

_ITEM_REQUIRED = ("item_id", "model", "perturbation", "task", "judge", "format", "premise", "domain", "target",
                  "vote", "correct", "n_samples", "n_yes", "n_no", "n_unknown")
_ITEMS = _TableSpec(
    kind="score_items",
    columns=(*_ITEM_REQUIRED, "labels"),
    keys=("item_id", "model", "perturbation", "judge"),
    checks=(
        *_not_null(*_ITEM_REQUIRED),
        _in_set("vote", _LABELS),
        _in_set("target", ("yes", "no")),
        _in_set("task", ("discriminative", "generative")),
        _in_set("premise", ("tpq", "fpq")),
        _in_set("format", _FORMATS),
        _unique("item_id", "model", "perturbation", "judge"),
        _pair_equal("n_yes+n_no+n_unknown", "n_samples", ("n_yes", "n_no", "n_unknown", "n_samples")),
        _pair_equal("len(labels)", "n_samples", ("labels", "n_samples")),
        _pair_equal("vote==target", "correct", ("vote", "target", "correct")),
    ),
    derived=(
        _Derived("n_yes+n_no+n_unknown", ("n_yes", "n_no", "n_unknown"), _sum_of_counts),
        _Derived("len(labels)", ("labels",), _label_count),
        _Derived("vote==target", ("vote", "target"), _vote_matches_target),
    ),
)

_METRIC_REQUIRED = ("model", "perturbation", "suite", "task", "judge", "metric", "higher_is_better", "n", "interval")
_METRICS = _TableSpec(
    kind="metrics",
    columns=(*_METRIC_REQUIRED, "value", "ci_low", "ci_high"),
    keys=("model", "perturbation", "suite", "task", "judge", "metric"),
    checks=(
        *_not_null(*_METRIC_REQUIRED),
        _between("value", 0, 1),
        _between("ci_low", 0, 1),
        _between("ci_high", 0, 1),
        _between("n", 0, None),
        _a_at_least_b("value", "ci_low"),
        _a_at_least_b("ci_high", "value"),
        _in_set("interval", _INTERVALS),
        # A Wilson interval of n > 0 items is never a point; one that is was computed some other way.
        _Check("ExpectColumnPairValuesAToBeGreaterThanB",
               {"column_A": "ci_high", "column_B": "ci_low", "or_equal": False,
                "ignore_row_if": "either_value_is_missing"},
               ("ci_high", "ci_low", "interval", "n"), when=(("interval", "==", "wilson"), ("n", ">", 0))),
        _Check("ExpectColumnPairValuesAToBeGreaterThanB",
               {"column_A": "ci_high", "column_B": "ci_low", "or_equal": False,
                "ignore_row_if": "either_value_is_missing"},
               ("ci_high", "ci_low", "interval", "n"), when=(("interval", "==", "wilson_mean"), ("n", ">", 0))),
    ),
)

_VOTE_REQUIRED = ("item_id", "model", "perturbation", "task", "judge", "vote", "correct")
_VOTES = _TableSpec(
    kind="votes",
    columns=(*_VOTE_REQUIRED, "labels"),
    keys=("item_id", "model", "perturbation", "judge"),
    checks=(
        *_not_null(*_VOTE_REQUIRED),
        _unique("item_id", "model", "perturbation", "judge"),
    ),
)


def validate_responses(
    table: pa.Table | Sequence[Mapping[str, Any]], *, name: str = "responses"
) -> list[ExpectationOutcome]:
    """Outcomes of the responses suite: required ids non-null, ``sample_index >= 0``, one row per
    (item_id, model, sample_index) (and perturbation, when the table has that column), and text present on every
    row without an error. ``name`` labels the outcomes (the asset's name, say)."""
    return _validate(_RESPONSES, table, name)


def validate_score_samples(
    table: pa.Table | Sequence[Mapping[str, Any]], *, name: str = "score_samples"
) -> list[ExpectationOutcome]:
    """Outcomes of the sample-rows suite: required columns non-null, label in yes/no/unknown, format yn/wh, one row
    per (item_id, model, perturbation, sample_index, judge)."""
    return _validate(_SAMPLES, table, name)


def validate_score_items(
    table: pa.Table | Sequence[Mapping[str, Any]], *, name: str = "score_items"
) -> list[ExpectationOutcome]:
    """Outcomes of the item-rows suite: required columns non-null, vote/target/task/premise/format in their sets,
    one row per (item_id, model, perturbation, judge), vote counts that add up to ``n_samples == len(labels)``,
    and ``correct == (vote == target)``."""
    return _validate(_ITEMS, table, name)


def validate_metrics(
    table: pa.Table | Sequence[Mapping[str, Any]], *, name: str = "metrics"
) -> list[ExpectationOutcome]:
    """Outcomes of the metric-rows suite, for the metric schema every suite shares
    (:data:`kgprobe.suites.base.METRIC_SCHEMA`): required columns (``higher_is_better`` and ``interval`` among
    them) non-null, value and interval bounds in [0, 1] where defined (NaN and null are undefined), ``n >= 0``,
    ``ci_low <= value <= ci_high``, ``interval`` in {"wilson", "bootstrap", "wilson_mean"}, and ``ci_low < ci_high`` on every
    Wilson and Wilson-of-the-mean row of n > 0 items. A partition written in an older schema fails a column's existence (re-score it)."""
    return _validate(_METRICS, table, name)


def validate_votes(
    table: pa.Table | Sequence[Mapping[str, Any]], *, name: str = "votes"
) -> list[ExpectationOutcome]:
    """Outcomes of the vote-rows suite of any suite: required columns non-null, one row per (item_id, model,
    perturbation, judge)."""
    return _validate(_VOTES, table, name)


def failed(outcomes: Sequence[ExpectationOutcome]) -> list[ExpectationOutcome]:
    """The outcomes that did not pass, in order; empty when the table is sound."""
    return [o for o in outcomes if not o.success]


def outcomes_markdown(outcomes: Sequence[ExpectationOutcome]) -> str:
    """A markdown table of the outcomes (table, expectation, column, success, unexpected, examples), for a Dagster
    check's ``MetadataValue.md``."""
    lines = ["| table | expectation | column | success | unexpected | examples |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        examples = json.dumps(o.examples, ensure_ascii=False, default=str) if o.examples else ""
        if len(examples) > _EXAMPLE_CELL_CHARS:
            examples = examples[: _EXAMPLE_CELL_CHARS - 1] + "…"
        cells = [md_cell(c, limit=_EXAMPLE_CELL_CHARS) for c in (o.table, o.expectation, o.column or "")]
        cells += ["pass" if o.success else "**FAIL**", "" if o.unexpected_count is None else str(o.unexpected_count),
                  md_cell(examples, limit=_EXAMPLE_CELL_CHARS)]
        lines.append("| " + " | ".join(cells) + " |")
    return safe_markdown("\n".join(lines))


def _validate(spec: _TableSpec, table: pa.Table | Sequence[Mapping[str, Any]], name: str) -> list[ExpectationOutcome]:
    table = _as_arrow(table)
    present = set(table.column_names)
    keys = [k for k in spec.keys if k in present]
    derived, broken = _derive(spec, table, present)
    # A check is left out when a column it reads is missing (its expect_column_to_exist fails instead) and is
    # reported as failed without running when a helper column it reads could not be computed.
    runnable = [i for i, c in enumerate(spec.checks) if set(c.needs) <= present]
    usable = tuple(i for i in runnable if not _columns_of(spec.checks[i]) & broken.keys())
    optional = tuple(sorted({k for i in usable for k in spec.checks[i].optional_keys if k in present}))
    reads = {n for i in usable
             for n in _columns_of(spec.checks[i]) | {spec.checks[i].when_null} | {c for c, _, _ in spec.checks[i].when}}
    frame = _frame(table, sorted(present & (set(spec.columns) | reads | set(keys) | set(optional))), derived)

    suite = _suite(spec, usable, optional)
    result_format: dict[str, Any] = {"result_format": "SUMMARY", "partial_unexpected_count": MAX_EXAMPLES * 2}
    if keys:
        result_format["unexpected_index_column_names"] = keys
    with _LOCK:
        batch = _batch_definition(spec.kind).get_batch(batch_parameters={"dataframe": frame})
        results = batch.validate(suite, result_format=result_format).results

    # GX does not return results in suite order; each expectation carries its position in the spec.
    by_position: dict[int, ExpectationOutcome] = {}
    for r in results:
        config = r.expectation_config
        by_position[int(config.meta["position"])] = _outcome(name, config.type, dict(config.kwargs), r, keys)
    for i in runnable:
        if i not in usable:
            check = spec.checks[i]
            error = "; ".join(broken[c] for c in sorted(_columns_of(check) & broken.keys()))
            by_position[len(spec.columns) + i] = ExpectationOutcome(
                name, _type_name(check.expectation), _column_label(check.kwargs), False, None, [{"error": error}])
    return [by_position[i] for i in sorted(by_position)]


def _as_arrow(table: pa.Table | Sequence[Mapping[str, Any]]) -> pa.Table:
    import pyarrow as pa

    if isinstance(table, pa.Table):
        return table
    if isinstance(table, Sequence) and not isinstance(table, str | bytes):
        return pa.Table.from_pylist(list(table))
    raise ValueError(f"expected a pyarrow.Table or a list of row dicts, got {type(table).__name__}")


def _derive(spec: _TableSpec, table: pa.Table, present: set[str]) -> tuple[dict[str, pa.Array], dict[str, str]]:
    """Helper columns whose inputs are present, and the error of each one that could not be computed (a column
    of the wrong type, say)."""
    import pyarrow as pa

    values: dict[str, pa.Array] = {}
    broken: dict[str, str] = {}
    for d in spec.derived:
        if not set(d.needs) <= present:
            continue
        try:
            values[d.name] = d.compute(table)
        except (pa.ArrowException, TypeError) as exc:
            types = ", ".join(f"{n}: {table.schema.field(n).type}" for n in d.needs)
            broken[d.name] = f"cannot compute {d.name} from {types}: {exc}"
    return values, broken


def _columns_of(check: _Check) -> set[str]:
    kw = check.kwargs
    return {*(kw.get("column_list") or ()), *(kw[k] for k in ("column", "column_A", "column_B") if k in kw)}


def _frame(table: pa.Table, columns: Sequence[str], derived: Mapping[str, pa.Array]) -> pd.DataFrame:
    """The pandas frame GX validates: only the columns the suite reads, float NaN as null, helper columns added."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arrays, names = [], []
    for name, values in [*((c, table[c]) for c in columns), *derived.items()]:
        if pa.types.is_floating(values.type):
            values = pc.if_else(pc.is_nan(values), pa.scalar(None, values.type), values)
        arrays.append(values)
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names).to_pandas() if names else pa.table({}).to_pandas()


def _outcome(
    name: str, expectation: str, kwargs: dict[str, Any], result: Any, keys: Sequence[str]
) -> ExpectationOutcome:
    column = _column_label(kwargs)
    info = result.exception_info or {}
    if info.get("raised_exception") or _nested_exception(info):
        message = info.get("exception_message") or _nested_exception(info)
        return ExpectationOutcome(name, expectation, column, False, None, [{"error": str(message)}])
    res = result.result or {}
    count = res.get("unexpected_count")
    examples: list[Any] = []
    if not result.success:
        checked = _checked_columns(kwargs)
        rows = res.get("partial_unexpected_index_list") if keys else None
        if rows and isinstance(rows[0], Mapping):
            raw = [{c: row[c] for c in (*keys, *checked) if c in row} for row in rows]
        else:
            raw = list(res.get("partial_unexpected_list") or [])
        for value in raw:
            value = _jsonable(value)
            if value not in examples:
                examples.append(value)
            if len(examples) == MAX_EXAMPLES:
                break
    return ExpectationOutcome(name, expectation, column, bool(result.success),
                              None if count is None else int(count), examples)


def _nested_exception(info: Mapping[str, Any]) -> str | None:
    """GX reports a metric that raised as ``{metric id: {"exception_message": ...}}`` rather than at the top."""
    for value in info.values():
        if isinstance(value, Mapping) and value.get("raised_exception"):
            return str(value.get("exception_message"))
    return None


def _checked_columns(kwargs: Mapping[str, Any]) -> list[str]:
    if "column_list" in kwargs:
        return list(kwargs["column_list"])
    return [kwargs[k] for k in ("column", "column_A", "column_B") if k in kwargs]


def _column_label(kwargs: Mapping[str, Any]) -> str | None:
    columns = _checked_columns(kwargs)
    return ", ".join(columns) if columns else None


def _type_name(class_name: str) -> str:
    """``ExpectColumnPairValuesToBeEqual`` -> ``expect_column_pair_values_to_be_equal``, GX's expectation type."""
    return "".join(f"_{ch.lower()}" if ch.isupper() else ch for ch in class_name).lstrip("_")


def _jsonable(value: Any) -> Any:
    """Plain Python for numpy scalars, tuples, arrays, NaN and NA, so examples survive ``json.dumps``."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", None) == 0:
        return _jsonable(item())
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return _jsonable(tolist())
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    isoformat = getattr(value, "isoformat", None)
    return isoformat() if callable(isoformat) else str(value)


_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {"==": lambda c, v: c == v, ">": lambda c, v: c > v}

_LOCK = threading.RLock()
_CONTEXT: Any = None
_BATCH_DEFINITIONS: dict[str, Any] = {}
_SUITES: dict[tuple[Any, ...], Any] = {}


def _context() -> Any:
    """The process's ephemeral GX Data Context, built on first use: in-memory stores, no docs site, no progress
    bars, analytics off."""
    global _CONTEXT
    with _LOCK:
        if _CONTEXT is None:
            os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
            gx_logger = logging.getLogger("great_expectations")
            if gx_logger.level == logging.NOTSET:
                # GX logs dozens of INFO lines on import and on every validation; keep a caller's own setting.
                gx_logger.setLevel(logging.WARNING)
            with warnings.catch_warnings():
                # great_expectations 1.24 imports the deprecated sre_constants/sre_parse modules.
                warnings.simplefilter("ignore", DeprecationWarning)
                import great_expectations as gx
            from great_expectations.data_context.types.base import (
                DataContextConfig,
                InMemoryStoreBackendDefaults,
                ProgressBarsConfig,
            )

            config = DataContextConfig(
                store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
                progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
                analytics_enabled=False,
            )
            context = gx.get_context(project_config=config, mode="ephemeral")
            context.data_sources.add_pandas(name="kgprobe")
            _CONTEXT = context
        return _CONTEXT


def _batch_definition(kind: str) -> Any:
    """The whole-dataframe batch definition of one table kind (one dataframe asset per kind)."""
    with _LOCK:
        if kind not in _BATCH_DEFINITIONS:
            source = _context().data_sources.get("kgprobe")
            asset = source.add_dataframe_asset(name=kind)
            _BATCH_DEFINITIONS[kind] = asset.add_batch_definition_whole_dataframe(name=f"{kind}_whole")
        return _BATCH_DEFINITIONS[kind]


def _suite(spec: _TableSpec, usable: tuple[int, ...], optional: tuple[str, ...]) -> Any:
    """The GX suite of ``spec``: column existence for every column it reads, then the checks at indices ``usable``
    (``optional`` key columns joined to ``column_list`` where a check allows them), built once per distinct shape.
    Each expectation carries its position in the spec in ``meta["position"]``."""
    key = (spec.kind, usable, optional)
    with _LOCK:
        if key in _SUITES:
            return _SUITES[key]
        _context()
        import great_expectations as gx
        from great_expectations.expectations.row_conditions import Column

        expectations = [gx.expectations.ExpectColumnToExist(column=c, meta={"position": i})
                        for i, c in enumerate(spec.columns)]
        for i in usable:
            check = spec.checks[i]
            kwargs = dict(check.kwargs)
            if check.optional_keys:
                kwargs["column_list"] = [*kwargs["column_list"], *(k for k in check.optional_keys if k in optional)]
            conditions = [Column(check.when_null).is_null()] if check.when_null else []
            conditions += [_OPERATORS[op](Column(column), value) for column, op, value in check.when]
            if conditions:
                condition = conditions[0]
                for more in conditions[1:]:
                    condition = condition & more
                kwargs["row_condition"] = condition
            cls = getattr(gx.expectations, check.expectation)
            expectations.append(cls(**kwargs, meta={"position": len(spec.columns) + i}))
        suite = gx.ExpectationSuite(name=f"kgprobe_{spec.kind}_{len(_SUITES)}", expectations=expectations)
        _SUITES[key] = suite
        return suite
