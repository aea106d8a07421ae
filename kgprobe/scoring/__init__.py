"""Scoring shared by every suite: reading answers (yes/no, true/false/IDK), votes and statistics (Wilson and
bootstrap intervals, Cohen's kappa, judge agreement) and the data-quality suites (Great Expectations).

    >>> from kgprobe.scoring import parse_yes_no, wilson_ci
"""

from __future__ import annotations

from kgprobe.scoring.answers import parse_true_false, parse_yes_no
from kgprobe.scoring.stats import bootstrap_ci, cohen_kappa, vote, wilson_ci

__all__ = ["bootstrap_ci", "cohen_kappa", "parse_true_false", "parse_yes_no", "vote", "wilson_ci"]
