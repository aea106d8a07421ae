"""Small helpers that turn rows into the metadata a person reads in the Dagster UI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgprobe.report.safe_text import md_cell, safe_markdown

__all__ = ["image_md", "markdown_table", "table_metadata"]


def markdown_table(rows: Sequence[Mapping[str, Any]], *, limit: int = 20) -> str:
    """A Markdown table of the first ``limit`` rows (all rows share the keys of the first)."""
    if not rows:
        return "_(no rows)_"
    cols = list(rows[0])
    lines = ["| " + " | ".join(_cell(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for row in rows[:limit]:
        cells = (_cell(row.get(c)) for c in cols)
        lines.append("| " + " | ".join(cells) + " |")
    if len(rows) > limit:
        lines.append(f"\n_{len(rows) - limit} more rows_")
    return safe_markdown("\n".join(lines))


def _cell(value: Any) -> str:
    """One table cell: pipes and line breaks cannot end the cell, HTML in data (an entity called ``<script>``) is
    shown as text, no image or link forms (nothing loads from another host when the UI shows it), and bidi
    controls are made visible (see :func:`kgprobe.report.safe_text.md_cell`)."""
    return md_cell(value)


def table_metadata(row_count: int, columns: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The standard ``dagster/row_count`` and ``dagster/column_schema`` entries the UI shows for a table."""
    import dagster as dg

    out: dict[str, Any] = {"dagster/row_count": dg.MetadataValue.int(int(row_count))}
    if columns:
        out["dagster/column_schema"] = dg.TableSchema(
            columns=[dg.TableColumn(name=n, type=t) for n, t in columns.items()]
        )
    return out


def image_md(png: bytes, *, alt: str = "plot") -> Any:
    """A PNG embedded in Markdown metadata, which the Dagster UI renders inline."""
    import base64

    import dagster as dg

    return dg.MetadataValue.md(f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode()})")
