"""The benchmark's front page: leaderboard tables, plots and the self-contained HTML report."""

from __future__ import annotations

from kgprobe.report.render import (
    HEADLINE_METRIC,
    KEY_METRICS,
    PLOT_KEYS,
    ReportContext,
    leaderboard_tables,
    render_html,
    report_plots,
    sql_name,
    write_report,
)

__all__ = ["HEADLINE_METRIC", "KEY_METRICS", "PLOT_KEYS", "ReportContext", "leaderboard_tables", "render_html",
           "report_plots", "sql_name", "write_report"]
