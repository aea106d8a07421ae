"""Plots a person would rather look at than read: PNG bytes from matplotlib (headless), for asset metadata and the
HTML report. Every plot has a title, axis labels and, where several series share axes, a legend.

The ``*_ci`` and :func:`panel_lines` plots take a point as ``value``, ``(value, lo, hi)`` or ``(value, lo, hi, n)``:
``lo``/``hi`` is the value's 95% interval, drawn as an error bar or a shaded band, of whatever kind the caller
computed (the report's metric rows carry Wilson score intervals; bootstrap ones are for measures that are not
proportions), and ``n`` the items behind the value, printed where it helps. A NaN value is skipped; input with
nothing to draw gives a figure that says "no data" instead of raising, so a report never fails because one
partition is empty."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["Point", "bar_chart", "grouped_bars_ci", "histograms", "line_chart", "lines_ci", "panel_lines"]

#: A plotted value: ``value``, ``(value, lo, hi)`` or ``(value, lo, hi, n)``.
Point: TypeAlias = "float | tuple[float, float, float] | tuple[float, float, float, int | None]"


def _png(fig: plt.Figure) -> bytes:
    fig.tight_layout()
    return _save(fig, dpi=110)


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


# --------------------------------------------------------------------------------------------------------------
# Plots with 95% intervals (the report's)
# --------------------------------------------------------------------------------------------------------------

# The report embeds a dozen of these: modest sizes and dpi keep the HTML small and rendering fast.
_DPI = 100


def _save(fig: plt.Figure, *, dpi: int = _DPI) -> bytes:
    buf = io.BytesIO()
    # No "Software" chunk: the same input gives the same bytes whatever matplotlib wrote them.
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def _text(label: Any) -> str:
    # A "$" in a model name would switch matplotlib into mathtext and can fail to parse.
    return str(label).replace("$", r"\$")


def _num(x: Any) -> float:
    try:
        return float(x) if x is not None else math.nan
    except (TypeError, ValueError):
        return math.nan


def _point(p: Any) -> tuple[float, float, float, int | None]:
    if isinstance(p, (tuple, list)):
        value = _num(p[0]) if len(p) > 0 else math.nan
        lo = _num(p[1]) if len(p) > 1 else math.nan
        hi = _num(p[2]) if len(p) > 2 else math.nan
        n = p[3] if len(p) > 3 and p[3] is not None else None
        return value, lo, hi, (int(n) if n is not None else None)
    return _num(p), math.nan, math.nan, None


def _finite(*xs: float) -> bool:
    return all(math.isfinite(x) for x in xs)


def _series_order(containers: Sequence[Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for c in containers:
        for name in c:
            seen.setdefault(name, None)
    return list(seen)


def _palette(series: Sequence[str], colors: Mapping[str, str] | None) -> dict[str, Any]:
    cmap = matplotlib.colormaps["tab10" if len(series) <= 10 else "tab20"]
    out: dict[str, Any] = {}
    for i, name in enumerate(series):
        out[name] = (colors or {}).get(name) or cmap(i % cmap.N)
    return out


def _no_data(title: str, *, figsize: tuple[float, float] = (5.0, 2.5)) -> bytes:
    fig = plt.figure(figsize=figsize, layout="constrained")
    ax = fig.subplots()
    ax.set_axis_off()
    ax.set_title(_text(title))
    ax.text(0.5, 0.5, "no data", ha="center", va="center", fontsize=14, color="0.4", transform=ax.transAxes)
    return _save(fig)


def grouped_bars_ci(
    groups: Mapping[str, Mapping[str, Any]],
    *,
    title: str,
    ylabel: str,
    xlabel: str,
    ylim: tuple[float, float] | None = (0.0, 1.0),
    colors: Mapping[str, str] | None = None,
    notes: Mapping[str, str] | None = None,
) -> bytes:
    """Grouped bars with 95% error bars: ``groups[group][series] = (value, lo, hi[, n])``; return PNG bytes.

    One cluster of bars per group (e.g. KG-FPQ edit method), one bar per series (e.g. model), series in order of
    first appearance and coloured by ``colors`` where given. ``n`` goes under the group name when every bar of the
    group has the same one, else at the foot of each bar. ``notes[group]`` adds a line under the group name.

        >>> grouped_bars_ci({"NSC": {"m1": (0.8, 0.7, 0.9, 40)}}, title="...", ylabel="accuracy", xlabel="method")
    """
    import numpy as np

    names = [g for g in groups if any(_finite(_point(p)[0]) for p in groups[g].values())]
    series = _series_order([groups[g] for g in names])
    if not names:
        return _no_data(title)
    palette = _palette(series, colors)
    width = 0.8 / max(1, len(series))
    fig = plt.figure(figsize=(max(6.0, min(12.0, 2.0 + 0.45 * len(names) * max(1, len(series)))), 4.2),
                     layout="constrained")
    ax = fig.subplots()
    x = np.arange(len(names))
    for i, s in enumerate(series):
        bars = []  # (x, value, lower error, upper error, n, group)
        for j, g in enumerate(names):
            value, lo, hi, n = _point(groups[g].get(s, math.nan))
            if _finite(value):
                bars.append((x[j] - 0.4 + width * (i + 0.5), value, max(0.0, value - lo) if _finite(lo) else 0.0,
                             max(0.0, hi - value) if _finite(hi) else 0.0, n, g))
        if not bars:
            continue
        errors = np.array([[b[2] for b in bars], [b[3] for b in bars]])
        ax.bar([b[0] for b in bars], [b[1] for b in bars], width, yerr=errors, capsize=2.5, color=palette[s],
               label=_text(s), error_kw={"elinewidth": 1, "ecolor": "0.2"})
        for xi, _, _, _, n, g in bars:
            if n is not None and _shared_n(groups[g]) is None:
                ax.text(xi, (ylim[0] if ylim else 0.0) + 0.01, f"n={n}", rotation=90, ha="center", va="bottom",
                        fontsize=6)
    labels = []
    for g in names:
        label = _text(g)
        shared = _shared_n(groups[g])
        if shared is not None:
            label += f"\nn={shared}"
        if notes and notes.get(g):
            label += "\n" + _text(notes[g])
        labels.append(label)
    ax.set_xticks(x, labels, fontsize="small")
    ax.set_title(_text(title))
    ax.set_ylabel(_text(ylabel))
    if xlabel:
        ax.set_xlabel(_text(xlabel))
    if ylim:
        ax.set_ylim(*ylim)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    _legend_outside(fig, len(series))
    return _save(fig)


def _legend_outside(fig: plt.Figure, entries: int, handles: Sequence[Any] | None = None,
                    labels: Sequence[str] | None = None, *, right: bool = False) -> None:
    # Outside the axes, where a long model or judge name hides no data: below them, or on the right (centred, clear
    # of the title) where a figure-wide x label already sits below.
    if not entries:
        return
    args = (handles, labels) if handles is not None else ()
    if labels is None:
        labels = [t for ax in fig.axes for t in ax.get_legend_handles_labels()[1]]
    # as many columns as fit the figure's width: long series names (judges, models) get fewer
    width_chars = fig.get_figwidth() * 14
    longest = max((len(str(t)) for t in labels), default=10) + 6
    ncol = max(1, min(entries, 3, int(width_chars // longest)))
    loc, ncol = ("outside right center", 1) if right else ("outside lower center", ncol)
    fig.legend(*args, loc=loc, ncol=ncol, fontsize="small", frameon=False)


def _shared_n(group: Mapping[str, Any]) -> int | None:
    ns = {_point(p)[3] for p in group.values() if _finite(_point(p)[0])}
    return ns.pop() if len(ns) == 1 and None not in ns else None


def _draw_lines(ax: plt.Axes, lines: Mapping[str, Mapping[Any, Any]], palette: Mapping[str, Any], *, show_n: bool = True) -> bool:
    drew = False
    for name, points in lines.items():
        pts = sorted(((float(x), *_point(p)) for x, p in points.items()), key=lambda t: t[0])
        pts = [t for t in pts if _finite(t[0], t[1])]
        if not pts:
            continue
        drew = True
        xs = [t[0] for t in pts]
        ns = {t[4] for t in pts}
        label = _text(name) + (f" (n={next(iter(ns))})" if show_n and len(ns) == 1 and None not in ns else "")
        ax.plot(xs, [t[1] for t in pts], marker="o", markersize=4, color=palette[name], label=label, clip_on=False)
        band = [t for t in pts if _finite(t[2], t[3])]
        if len(band) > 1:
            ax.fill_between([t[0] for t in band], [t[2] for t in band], [t[3] for t in band], color=palette[name],
                            alpha=0.18, linewidth=0)
        elif band:
            t = band[0]
            ax.errorbar([t[0]], [t[1]], yerr=[[max(0.0, t[1] - t[2])], [max(0.0, t[3] - t[1])]], color=palette[name],
                        capsize=2.5, linewidth=1)
    return drew


def lines_ci(
    lines: Mapping[str, Mapping[float, Any]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    ylim: tuple[float, float] | None = (0.0, 1.0),
    xlim: tuple[float, float] | None = None,
    colors: Mapping[str, str] | None = None,
) -> bytes:
    """One line per series over a numeric x, with the 95% interval as a shaded band; return PNG bytes.

    ``lines[series][x] = value | (value, lo, hi[, n])``. A series whose points share one ``n`` shows it in the
    legend. A lone point with an interval gets an error bar instead of a band.
    """
    series = list(lines)
    if not any(_finite(_point(p)[0]) for pts in lines.values() for p in pts.values()):
        return _no_data(title)
    fig = plt.figure(figsize=(6.0, 4.2), layout="constrained")
    ax = fig.subplots()
    _draw_lines(ax, lines, _palette(series, colors))
    ax.set_title(_text(title))
    ax.set_xlabel(_text(xlabel))
    ax.set_ylabel(_text(ylabel))
    if ylim:
        ax.set_ylim(*ylim)
    if xlim:
        ax.set_xlim(*xlim)
    ax.grid(alpha=0.3)
    _integer_ticks(ax, [x for pts in lines.values() for x in pts])
    _legend_outside(fig, len(series))
    return _save(fig)


def _integer_ticks(ax: plt.Axes, xs: Sequence[Any]) -> None:
    # Hops 1..5 read as "1, 2, 3", not "1.0, 1.5, 2.0".
    if xs and all(float(x).is_integer() for x in xs):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def panel_lines(
    panels: Mapping[str, Mapping[str, Mapping[float, Any]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    ylim: tuple[float, float] | None = (0.0, 1.0),
    xlim: tuple[float, float] | None = None,
    colors: Mapping[str, str] | None = None,
    ncols: int = 4,
) -> bytes:
    """Small multiples sharing both axes: ``panels[panel_title][series][x] = value | (value, lo, hi[, n])``.

    One panel per key (e.g. one per perturbation method), at most ``ncols`` per row; a series keeps its colour in
    every panel and appears once in the figure's legend. Return PNG bytes.
    """
    titles = list(panels)
    series = _series_order(list(panels.values()))
    if not any(_finite(_point(p)[0]) for lines in panels.values() for pts in lines.values() for p in pts.values()):
        return _no_data(title)
    ncols = max(1, min(ncols, len(titles)))
    nrows = math.ceil(len(titles) / ncols)
    fig = plt.figure(figsize=(1.0 + 3.0 * ncols, 1.4 + 2.4 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
    palette = _palette(series, colors)
    handles: dict[str, Any] = {}
    for ax, name in zip(axes, titles):
        # n differs between panels, so the shared legend names the series only
        if not _draw_lines(ax, panels[name], palette, show_n=False):
            ax.text(0.5, 0.5, "no data", ha="center", va="center", color="0.4", transform=ax.transAxes)
        ax.set_title(_text(name), fontsize="small")
        ax.grid(alpha=0.3)
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    for ax in axes[len(titles):]:
        ax.set_visible(False)
    if ylim:
        axes[0].set_ylim(*ylim)
    if xlim:
        axes[0].set_xlim(*xlim)
    fig.suptitle(_text(title))
    fig.supxlabel(_text(xlabel), fontsize="medium")
    fig.supylabel(_text(ylabel), fontsize="medium")
    _integer_ticks(axes[0], [x for lines in panels.values() for pts in lines.values() for x in pts])
    _legend_outside(fig, len(handles), list(handles.values()), list(handles), right=True)
    return _save(fig)
