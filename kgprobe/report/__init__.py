"""The report every suite shares: the leaderboard across suites (:mod:`.leaderboard`), plots (:mod:`.plots`) and
the self-contained HTML page (:mod:`.render`, Jinja2 templates in ``templates/``). A suite with a section of its
own keeps it in its package (KG-FPQ: :mod:`kgprobe.suites.fpq.report`)."""

from __future__ import annotations

from kgprobe.report.render import INTERVAL_NAMES, ReportContext, ReportSection, render_page, sql_name, write_report

__all__ = ["INTERVAL_NAMES", "ReportContext", "ReportSection", "render_page", "sql_name", "write_report"]
