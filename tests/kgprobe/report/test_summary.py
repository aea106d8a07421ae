"""results.json's account of where a chain's time went: one row per Dagster run and the seconds per job."""

from __future__ import annotations

import pytest

from kgprobe.report.summary import format_job_seconds, job_seconds, run_timing

RUNS = [run_timing("prepare", None, "r1", True, 14.04, 13.2),
        run_timing("grounded", ["oracle|none", "oracle|RS-0.5"], "r2", True, 3.26),
        run_timing("closed_book", ["oracle"], "r3", True, 1.5),
        run_timing("grounded", ["random|none", "random|RS-0.5"], "r4", False, 2.75)]


def test_a_run_row_names_its_job_partitions_and_seconds() -> None:
    assert RUNS[1] == {"job": "grounded", "partitions": ["oracle|none", "oracle|RS-0.5"], "run_id": "r2",
                       "succeeded": True, "seconds": 3.26, "cpu_seconds": None}
    assert RUNS[0]["partitions"] == [] and RUNS[0]["cpu_seconds"] == 13.2


def test_seconds_per_job_sum_its_runs_in_the_order_jobs_first_ran() -> None:
    totals = job_seconds(RUNS)
    assert list(totals) == ["prepare", "grounded", "closed_book"]
    assert totals["grounded"] == pytest.approx(6.0) and totals["prepare"] == pytest.approx(14.0)


def test_the_console_line_counts_runs_of_jobs_that_ran_more_than_once() -> None:
    assert format_job_seconds(RUNS) == "prepare 14s, grounded 6s (2 runs), closed_book 2s"
    assert format_job_seconds([]) == "no runs"
