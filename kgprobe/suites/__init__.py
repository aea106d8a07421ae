"""The benchmarks kgprobe implements, one package per paper, and the registry the shared stages loop over.

:data:`SUITES` maps a suite's name to its :class:`~kgprobe.suites.base.Suite` object; generation, scoring, the
leaderboard and the report never name a suite. Adding one is a package ``kgprobe/suites/<name>/``, a line in
:data:`SUITES` (or :func:`register` from outside the package, e.g. a plug-in or a test) and, if it has stages of its
own before its items, an assets module.

    >>> from kgprobe.suites import SUITES
    >>> sorted(SUITES)
    ['drowzee', 'erbench', 'fpq', 'grapheval', 'okgqa']
"""

from __future__ import annotations

from kgprobe.suites.base import Suite
from kgprobe.suites.drowzee.suite import DrowzeeSuite
from kgprobe.suites.erbench.suite import ERBenchSuite
from kgprobe.suites.fpq.suite import FPQSuite
from kgprobe.suites.grapheval.suite import GraphEvalSuite
from kgprobe.suites.okgqa.suite import OKGQASuite

__all__ = ["SUITES", "Suite", "register", "unregister"]

#: Every registered suite by name.
SUITES: dict[str, Suite] = {s.name: s for s in (FPQSuite(), OKGQASuite(), GraphEvalSuite(), ERBenchSuite(),
                                                   DrowzeeSuite())}


def register(suite: Suite) -> Suite:
    """Add ``suite`` to :data:`SUITES` (a name already taken by another suite is an error); return it."""
    if not suite.name or not suite.name.isidentifier():
        raise ValueError(f"a suite name must be a Python identifier (it names assets and tables), got {suite.name!r}")
    held = SUITES.get(suite.name)
    if held is not None and held is not suite:
        raise ValueError(f"a suite named {suite.name!r} is already registered ({held!r})")
    SUITES[suite.name] = suite
    return suite


def unregister(name: str) -> None:
    """Remove a suite from :data:`SUITES` (tests that register a toy suite clean up with it)."""
    SUITES.pop(name, None)
