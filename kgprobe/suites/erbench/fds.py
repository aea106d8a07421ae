"""Candidate functional dependencies of a table, found in its data, for an ERBench spec a person reviews.

A standard level-wise pass (as TANE's, without its partitions): for every column ``A`` and every set ``X`` of other
columns of at most ``max_lhs`` columns, smallest first, ``X -> A`` is a candidate when the rows that break it (the
g3 error: rows to drop so that each ``X`` value has one ``A`` value) are at most ``max_violation_share`` of the
rows; a superset of a candidate's left-hand side is not tried again for the same ``A`` (only minimal FDs). Each
candidate carries its evidence: ``groups`` (distinct ``X`` values), ``support`` (those shared by two or more rows,
where the data could have broken the FD), ``violations`` and whether ``X`` is a key of the table (then the FD holds
by construction and says nothing about the data). Row-number columns (an unnamed pandas index) are left out.

    >>> [(c.lhs, c.rhs) for c in discover_fds(read_table("soccer.csv"), relation="soccer")][:1]
    [(('entity1', 'entity2', 'entity3'), 'common_entity')]
"""

from __future__ import annotations

import itertools
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import polars as pl

from kgprobe.errors import ConfigError

__all__ = ["FDCandidate", "discover_fds", "erbench_spec", "identifying_fd", "read_table"]


@dataclass(frozen=True)
class FDCandidate:
    """``lhs -> rhs`` on ``relation``, with its evidence in the data."""

    relation: str
    lhs: tuple[str, ...]
    rhs: str
    rows: int
    groups: int
    support: int
    violations: int
    lhs_is_key: bool

    def as_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["lhs"] = list(self.lhs)
        return row


def read_table(path: str | Path) -> pl.DataFrame:
    """A CSV file as a table of strings (values compared as written), or a :class:`ConfigError` naming the file."""
    try:
        return pl.read_csv(path, infer_schema_length=0)
    except Exception as exc:  # noqa: BLE001 - polars raises several kinds for a bad file
        raise ConfigError(f"cannot read {path} as CSV ({exc}); give a CSV file with a header row") from exc


def _row_number(frame: pl.DataFrame, column: str) -> bool:
    if column == "" or column.lower() in ("index", "unnamed: 0") or column.startswith("Unnamed"):
        return True
    values = frame.get_column(column)
    if values.null_count() or values.n_unique() != frame.height:
        return False
    as_int = values.cast(pl.Int64, strict=False)
    return as_int.null_count() == 0 and sorted(as_int.to_list()) == list(range(as_int.min(), as_int.min() + frame.height))


def _g3(frame: pl.DataFrame, lhs: list[str], rhs: str) -> tuple[int, int, int]:
    """(violations, groups, support) of ``lhs -> rhs``."""
    counts = frame.group_by([*lhs, rhs]).len()
    per_lhs = counts.group_by(lhs).agg(pl.col("len").max().alias("top"), pl.col("len").sum().alias("rows"))
    violations = frame.height - int(per_lhs.get_column("top").sum())
    return violations, per_lhs.height, int((per_lhs.get_column("rows") >= 2).sum())


def discover_fds(frame: pl.DataFrame, *, relation: str, max_lhs: int = 3, max_violation_share: float = 0.01,
                 ) -> list[FDCandidate]:  # fmt: skip
    """The minimal candidate FDs of ``frame`` (see the module docstring), those with the most support first."""
    if max_lhs < 1:
        raise ConfigError(f"max_lhs must be at least 1, got {max_lhs}")
    columns = [c for c in frame.columns if not _row_number(frame, c)]
    frame = frame.select(columns)
    out: list[FDCandidate] = []
    for rhs in columns:
        others = [c for c in columns if c != rhs]
        found: list[frozenset[str]] = []
        for size in range(1, min(max_lhs, len(others)) + 1):
            for lhs in itertools.combinations(others, size):
                if any(f <= set(lhs) for f in found):
                    continue
                violations, groups, support = _g3(frame, list(lhs), rhs)
                if violations <= max_violation_share * frame.height:
                    found.append(frozenset(lhs))
                    out.append(FDCandidate(relation, tuple(lhs), rhs, frame.height, groups, support, violations,
                                           groups == frame.height))
    return sorted(out, key=lambda c: (c.lhs_is_key, -c.support, c.violations, len(c.lhs), c.lhs, c.rhs))


def identifying_fd(frame: pl.DataFrame, *, relation: str, max_violation_share: float = 0.01) -> FDCandidate | None:
    """The FD ERBench builds most questions on: every other column determines the entity's name, taken to be the
    column with the most distinct values ("nationality, club, jersey number -> player name"); None when the data
    breaks it. It is rarely minimal (a subset of its left-hand side is often a key already), so
    :func:`discover_fds` does not list it."""
    columns = [c for c in frame.columns if not _row_number(frame, c)]
    if len(columns) < 2:
        return None
    frame = frame.select(columns)
    rhs = max(columns, key=lambda c: (frame.get_column(c).n_unique(), -columns.index(c)))
    lhs = [c for c in columns if c != rhs]
    violations, groups, support = _g3(frame, lhs, rhs)
    if violations > max_violation_share * frame.height:
        return None
    return FDCandidate(relation, tuple(lhs), rhs, frame.height, groups, support, violations, groups == frame.height)


def _words(column: str) -> str:
    return " ".join(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", column).replace("_", " ").split()).lower() or column


def erbench_spec(name: str, tables: dict[str, Path], candidates: list[FDCandidate], *, folder: Path,
                 per_relation: int = 5) -> dict[str, Any]:  # fmt: skip
    """An ERBench spec (:mod:`kgprobe.suites.erbench.spec`) of ``tables`` (relation -> CSV path) with the first
    ``per_relation`` candidates of each relation that has support, each with generic templates to rewrite: a
    binary question that gives the left-hand side's values and an explanation that names the right-hand side."""
    relations, fds = {}, []
    for rel, path in tables.items():
        frame = read_table(path)
        columns = [c for c in frame.columns if not _row_number(frame, c)]
        relations[rel] = {"file": str(Path(path).resolve().relative_to(folder.resolve()))
                          if Path(path).resolve().is_relative_to(folder.resolve()) else str(Path(path).resolve()),
                          "columns": columns, "entity": _words(rel)}
        whole = identifying_fd(frame, relation=rel)
        chosen = ([whole] if whole is not None else []) + [
            c for c in candidates if c.relation == rel and c.support > 0][:per_relation]
        for i, c in enumerate(chosen):
            given = ", ".join(f"whose {_words(x)} is {{{x}}}" for x in c.lhs)
            fds.append({
                "name": f"{rel}_{c.rhs}_{i}", "dataset": rel, "relation": rel, "lhs": list(c.lhs), "rhs": [c.rhs],
                "basic": f"Is there a {_words(rel)} {given}?",
                "negated": f"Is it true that there is no {_words(rel)} {given}?",
                "explain": f"It is the {_words(rel)} whose {_words(c.rhs)} is {{{c.rhs}}}.",
            })
    return {"name": name, "source": {"kind": "csv", "path": "."}, "relations": relations, "fds": fds}
