"""Plots a person would rather look at than read: PNG bytes from matplotlib (headless), for asset metadata and the
HTML report. Every plot has a title, axis labels and, where several series share axes, a legend."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["bar_chart", "histograms", "line_chart"]


def _png(fig: plt.Figure) -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def histograms(series: Mapping[str, Sequence[float]], *, title: str, xlabel: str, bins: int = 30, log: bool = False) -> bytes:
    """Overlaid histograms of several series (e.g. subgraph sizes before and after pruning)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    values = [v for s in series.values() for v in s]
    if log and values and min(values) > 0:
        import numpy as np

        edges = np.logspace(np.log10(min(values)), np.log10(max(values) + 1), bins)
        ax.set_xscale("log")
    else:
        edges = bins
    for name, data in series.items():
        if len(data):
            ax.hist(list(data), bins=edges, alpha=0.6, label=f"{name} (n={len(data)})")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("count")
    if len(series) > 1:
        ax.legend()
    return _png(fig)


def bar_chart(groups: Mapping[str, Mapping[str, float]], *, title: str, ylabel: str, xlabel: str = "") -> bytes:
    """Grouped bars: ``groups[group][series] = value`` (e.g. counts per method, grouped by domain)."""
    import numpy as np

    names = list(groups)
    series = sorted({s for g in groups.values() for s in g})
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(names) * max(1, len(series)) / 2), 4))
    width = 0.8 / max(1, len(series))
    x = np.arange(len(names))
    for i, s in enumerate(series):
        ax.bar(x + i * width - 0.4 + width / 2, [groups[g].get(s, 0) for g in names], width, label=s)
    ax.set_xticks(x, names, rotation=30 if len(names) > 6 else 0, ha="right" if len(names) > 6 else "center")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    if xlabel:
        ax.set_xlabel(xlabel)
    if len(series) > 1:
        ax.legend(fontsize="small")
    return _png(fig)


def line_chart(
    lines: Mapping[str, Mapping[float, float]], *, title: str, xlabel: str, ylabel: str, ylim: tuple[float, float] | None = None
) -> bytes:
    """One line per series over a numeric x axis (e.g. a measure against the perturbation level)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, points in lines.items():
        xs = sorted(points)
        ax.plot(xs, [points[x] for x in xs], marker="o", label=name)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    if len(lines) > 1:
        ax.legend()
    return _png(fig)
