"""Metric temporal logic over dated events: Drowzee's Definition 1 (point semantics over years), evaluated in closed
form by interval arithmetic.

A formula is built from :class:`Atom` (an event name), :class:`Not`, :class:`And`, :class:`Or`, :class:`Next`,
:class:`Finally`, :class:`Globally` and :class:`Until`; ``events`` maps each event name to its inclusive
``(start_year, end_year)`` intervals. At a year ``t`` (Definition 1 of the paper):

* ``Atom(nm)`` holds iff ``t`` lies in one of ``nm``'s intervals (an unknown name never holds);
* ``Finally(a, b, f)`` iff ``f`` holds at ``t + d`` for some ``d`` in ``[a, b]``;
* ``Globally(a, b, f)`` iff ``f`` holds at ``t + d`` for every ``d`` in ``[a, b]``;
* ``Next(f)`` iff ``f`` holds at ``t + 1``;
* ``Until(a, b, f1, f2)`` as the paper's encoding [R-Until] (§3.4, Fig. 11-12) computes it, with [R-Until-0]: for
  some ``d`` in ``[a, b]``, ``f2`` holds at ``t + d`` and, when ``d >= 1``, ``f1`` holds at every year from ``t``
  through ``t + d - 1`` (the encoding intersects with ``f1``'s years, so ``f1`` holds at ``t`` too, and its
  ``helper1`` ends at ``f1``'s end + 1); ``d = 0`` is ``f2`` at ``t`` (``f1 U[0,b] f2 = (f1 U[1,b] f2) ∨ f2``).
  Definition 1's text asks ``f1`` only strictly between ``t`` and ``t + d``; Table 3's "Did Event1 happen
  continuously until Event2 started" and the encoding ask it from ``t``, which kgprobe follows. Event1's years
  ``t .. t + d - 1`` are one stretch of ``f1``: the encoding's ``helper1`` per interval would let a later
  interval of ``f1`` stand in for the years between, which the word "continuously" rules out;
* ``Not(f)`` iff ``t`` is in the domain ``[lo, hi]`` and ``f`` does not hold at ``t``. The paper takes "all the
  after-century years" as the full set: ``¬victorian_era = [1, 1836] ∪ [1902, 2024]``, hence the defaults
  ``lo=1, hi=2024``. Only negation needs the domain: every other operator looks forward from ``t`` on the integer
  line, as the paper's Prolog encoding does, so every satisfying set is a finite union of intervals;
* ``And`` / ``Or``: intersection / union.

:func:`satisfying_years` computes the satisfying years of a formula as sorted, disjoint, inclusive intervals (with
adjacent intervals merged) without visiting years: each operator is a shift, a Minkowski difference, a complement,
an intersection or a union of interval lists. :func:`holds` evaluates Definition 1 directly at one year (the
reference the closed form is tested against); :func:`brute_force_years` does so year by year over the window
where anything can hold.

    >>> events = {"charles_dickens": [(1812, 1870)], "victorian_era": [(1837, 1901)]}
    >>> satisfying_years(Until(10, 20, Atom("charles_dickens"), Atom("victorian_era")), events)
    [(1817, 1861)]
    >>> satisfying_years(Not(Atom("victorian_era")), events)
    [(1, 1836), (1902, 2024)]
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "DOMAIN",
    "And",
    "Atom",
    "Finally",
    "Formula",
    "Globally",
    "Next",
    "Not",
    "Or",
    "Until",
    "atoms",
    "brute_force_years",
    "depth",
    "holds",
    "horizon",
    "normalize",
    "operator",
    "satisfying_bounds",
    "satisfying_years",
]

#: The default time domain of negation, inclusive: the paper's worked example (¬victorian_era = [1,1836] ∪ [1902,2024]).
DOMAIN: tuple[int, int] = (1, 2024)

Interval = tuple[int, int]


def _check_bounds(kind: str, lo: int, hi: int) -> None:
    if isinstance(lo, bool) or isinstance(hi, bool) or not isinstance(lo, int) or not isinstance(hi, int):
        raise TypeError(f"{kind}: interval bounds must be integers, got [{lo!r}, {hi!r}]")
    if lo < 0 or hi < lo:
        raise ValueError(f"{kind}: the interval [{lo}, {hi}] must satisfy 0 <= lo <= hi")


@dataclass(frozen=True)
class Atom:
    """An event (atomic proposition): true in the years of its intervals."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Not:
    """¬f: the years of the domain where ``f`` does not hold."""

    f: Formula

    def __str__(self) -> str:
        return f"¬({self.f})"


@dataclass(frozen=True)
class And:
    """a ∧ b."""

    a: Formula
    b: Formula

    def __str__(self) -> str:
        return f"({self.a} ∧ {self.b})"


@dataclass(frozen=True)
class Or:
    """a ∨ b."""

    a: Formula
    b: Formula

    def __str__(self) -> str:
        return f"({self.a} ∨ {self.b})"


@dataclass(frozen=True)
class Next:
    """N f: ``f`` holds next year."""

    f: Formula

    def __str__(self) -> str:
        return f"N({self.f})"


@dataclass(frozen=True)
class Finally:
    """F[lo,hi] f: ``f`` holds in some year ``t + d``, ``lo <= d <= hi``."""

    lo: int
    hi: int
    f: Formula

    def __post_init__(self) -> None:
        _check_bounds("Finally", self.lo, self.hi)

    def __str__(self) -> str:
        return f"F[{self.lo},{self.hi}]({self.f})"


@dataclass(frozen=True)
class Globally:
    """G[lo,hi] f: ``f`` holds in every year ``t + d``, ``lo <= d <= hi``."""

    lo: int
    hi: int
    f: Formula

    def __post_init__(self) -> None:
        _check_bounds("Globally", self.lo, self.hi)

    def __str__(self) -> str:
        return f"G[{self.lo},{self.hi}]({self.f})"


@dataclass(frozen=True)
class Until:
    """a U[lo,hi] b ([R-Until]): ``b`` holds at some ``t + d`` (``lo <= d <= hi``) and, for ``d >= 1``, ``a`` at
    every year from ``t`` through ``t + d - 1``."""

    lo: int
    hi: int
    a: Formula
    b: Formula

    def __post_init__(self) -> None:
        _check_bounds("Until", self.lo, self.hi)

    def __str__(self) -> str:
        return f"({self.a} U[{self.lo},{self.hi}] {self.b})"


Formula = Atom | Not | And | Or | Next | Finally | Globally | Until


# ------------------------------------------------------------------------------------------------ interval lists


def normalize(intervals: Iterable[Sequence[int]]) -> list[Interval]:
    """``intervals`` sorted, with overlapping or adjacent ones merged and empty ones (end < start) dropped: the one
    canonical form of a set of years, so that two equal sets compare equal."""
    spans = sorted((int(s), int(e)) for s, e in intervals if int(e) >= int(s))
    out: list[Interval] = []
    for s, e in spans:
        if out and s <= out[-1][1] + 1:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _intersect(a: Sequence[Interval], b: Sequence[Interval]) -> list[Interval]:
    out: list[Interval] = []
    i = j = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s <= e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _complement(a: Sequence[Interval], lo: int, hi: int) -> list[Interval]:
    out: list[Interval] = []
    cur = lo
    for s, e in a:
        if e < lo:
            continue
        if s > hi:
            break
        if s > cur:
            out.append((cur, s - 1))
        cur = max(cur, e + 1)
    if cur <= hi:
        out.append((cur, hi))
    return out


def _finally(a: Sequence[Interval], lo: int, hi: int) -> list[Interval]:
    # t + d in [s, e] for some d in [lo, hi]  <=>  t in [s - hi, e - lo]
    return normalize((s - hi, e - lo) for s, e in a)


def _globally(a: Sequence[Interval], lo: int, hi: int) -> list[Interval]:
    # [t + lo, t + hi] inside one maximal interval [s, e]  <=>  t in [s - lo, e - hi]
    return [(s - lo, e - hi) for s, e in a if e - hi >= s - lo]


def _until(a: Sequence[Interval], b: Sequence[Interval], lo: int, hi: int) -> list[Interval]:
    # [R-Until] with [R-Until-0]: d = 0 (when lo = 0) is b now; d >= 1 needs a at every year t .. t+d-1, so t and
    # those years lie in one maximal interval [s, e] of a and u = t + d lies in b with s + d <= u <= e + 1.
    parts: list[Interval] = []
    if lo == 0:
        parts.extend(b)                                   # d = 0: b now ([R-Until-0])
    dlo = max(lo, 1)
    if hi >= dlo:
        # t in [s, e]; u in b clipped to [s + dlo, e + 1]; u - t in [dlo, hi]  <=>  t in [us - hi, ue - dlo]
        starts = [s for s, _ in b]
        for s, e in a:
            k = max(0, bisect.bisect_right(starts, s + dlo) - 1)
            while k < len(b) and b[k][0] <= e + 1:
                us, ue = max(b[k][0], s + dlo), min(b[k][1], e + 1)
                if us <= ue:
                    ts, te = max(us - hi, s), min(ue - dlo, e)
                    if ts <= te:
                        parts.append((ts, te))
                k += 1
    return normalize(parts)


def _event_intervals(events: Mapping[str, Sequence[Sequence[int]]], name: str) -> list[Interval]:
    return normalize(events.get(name, ()))


def satisfying_years(formula: Formula, events: Mapping[str, Sequence[Sequence[int]]], *, lo: int = DOMAIN[0],
                     hi: int = DOMAIN[1]) -> list[Interval]:  # fmt: skip
    """The years at which ``formula`` holds over ``events`` (Definition 1; negation within ``[lo, hi]``), as sorted,
    disjoint, inclusive ``(start, end)`` intervals, computed without visiting years: the ground-truth interval that
    decides every query year of a temporal question at once.

        >>> satisfying_years(Finally(0, 40, Atom("v")), {"v": [(1837, 1901)]})
        [(1797, 1901)]
    """
    if hi < lo:
        raise ValueError(f"satisfying_years: the domain [{lo}, {hi}] is empty; give lo <= hi")
    cache: dict[Formula, list[Interval]] = {}

    def sat(f: Formula) -> list[Interval]:
        got = cache.get(f)
        if got is not None:
            return got
        if isinstance(f, Atom):
            out = _event_intervals(events, f.name)
        elif isinstance(f, Not):
            out = _complement(sat(f.f), lo, hi)
        elif isinstance(f, And):
            out = _intersect(sat(f.a), sat(f.b))
        elif isinstance(f, Or):
            out = normalize([*sat(f.a), *sat(f.b)])
        elif isinstance(f, Next):
            out = [(s - 1, e - 1) for s, e in sat(f.f)]
        elif isinstance(f, Finally):
            out = _finally(sat(f.f), f.lo, f.hi)
        elif isinstance(f, Globally):
            out = _globally(sat(f.f), f.lo, f.hi)
        elif isinstance(f, Until):
            out = _until(sat(f.a), sat(f.b), f.lo, f.hi)
        else:
            raise TypeError(f"not an MTL formula: {f!r} (use Atom, Not, And, Or, Next, Finally, Globally, Until)")
        cache[f] = out
        return out

    return list(sat(formula))


def satisfying_bounds(formula: Formula, known: Mapping[str, Sequence[Sequence[int]]],
                      possible: Mapping[str, Sequence[Sequence[int]]], *, lo: int = DOMAIN[0],
                      hi: int = DOMAIN[1]) -> tuple[list[Interval], list[Interval]]:  # fmt: skip
    """The years where ``formula`` surely holds and the years where it may hold, when some events' years are only
    partly known: ``known`` gives each event's years it is known to hold, ``possible`` those it may hold (a superset:
    ``known`` plus the years the data leaves open, e.g. after a start whose end is unknown).

    Every operator but negation is monotone in its operands, so the sure set of a formula is its satisfying set over
    the sure sets of its operands and the possible set over the possible ones; negation swaps the two. For every
    reading of the open years (any end between the start and the horizon) the formula's satisfying years lie
    between the two sets, so a year in the first is a "yes" and a year outside the second a "no" whatever the
    unknown ends are. The operators themselves are those of :func:`satisfying_years`.

        >>> satisfying_bounds(Atom("x"), {"x": [(1950, 1950)]}, {"x": [(1950, 2024)]})
        ([(1950, 1950)], [(1950, 2024)])
    """
    if hi < lo:
        raise ValueError(f"satisfying_bounds: the domain [{lo}, {hi}] is empty; give lo <= hi")
    cache: dict[Formula, tuple[list[Interval], list[Interval]]] = {}

    def sat(f: Formula) -> tuple[list[Interval], list[Interval]]:
        got = cache.get(f)
        if got is not None:
            return got
        if isinstance(f, Atom):
            out = (_event_intervals(known, f.name), normalize([*known.get(f.name, ()), *possible.get(f.name, ())]))
        elif isinstance(f, Not):
            sure, maybe = sat(f.f)
            out = (_complement(maybe, lo, hi), _complement(sure, lo, hi))
        elif isinstance(f, (And, Or)):
            (sa, ma), (sb, mb) = sat(f.a), sat(f.b)
            out = ((_intersect(sa, sb), _intersect(ma, mb)) if isinstance(f, And)
                   else (normalize([*sa, *sb]), normalize([*ma, *mb])))
        elif isinstance(f, Next):
            out = tuple([(s - 1, e - 1) for s, e in x] for x in sat(f.f))  # type: ignore[assignment]
        elif isinstance(f, Finally):
            out = tuple(_finally(x, f.lo, f.hi) for x in sat(f.f))  # type: ignore[assignment]
        elif isinstance(f, Globally):
            out = tuple(_globally(x, f.lo, f.hi) for x in sat(f.f))  # type: ignore[assignment]
        elif isinstance(f, Until):
            (sa, ma), (sb, mb) = sat(f.a), sat(f.b)
            out = (_until(sa, sb, f.lo, f.hi), _until(ma, mb, f.lo, f.hi))
        else:
            raise TypeError(f"not an MTL formula: {f!r} (use Atom, Not, And, Or, Next, Finally, Globally, Until)")
        cache[f] = out
        return out

    sure, maybe = sat(formula)
    return list(sure), list(maybe)


def holds(formula: Formula, events: Mapping[str, Sequence[Sequence[int]]], year: int, *, lo: int = DOMAIN[0],
          hi: int = DOMAIN[1]) -> bool:  # fmt: skip
    """Whether ``formula`` holds at ``year`` (Definition 1, evaluated point by point; negation within
    ``[lo, hi]``). This is the reference semantics: it follows the definition literally, year by year.

        >>> holds(Next(Atom("v")), {"v": [(1837, 1901)]}, 1836)
        True
    """
    f = formula
    if isinstance(f, Atom):
        return any(int(s) <= year <= int(e) for s, e in events.get(f.name, ()))
    if isinstance(f, Not):
        return lo <= year <= hi and not holds(f.f, events, year, lo=lo, hi=hi)
    if isinstance(f, And):
        return holds(f.a, events, year, lo=lo, hi=hi) and holds(f.b, events, year, lo=lo, hi=hi)
    if isinstance(f, Or):
        return holds(f.a, events, year, lo=lo, hi=hi) or holds(f.b, events, year, lo=lo, hi=hi)
    if isinstance(f, Next):
        return holds(f.f, events, year + 1, lo=lo, hi=hi)
    if isinstance(f, Finally):
        return any(holds(f.f, events, year + d, lo=lo, hi=hi) for d in range(f.lo, f.hi + 1))
    if isinstance(f, Globally):
        return all(holds(f.f, events, year + d, lo=lo, hi=hi) for d in range(f.lo, f.hi + 1))
    if isinstance(f, Until):  # [R-Until]: Event1 from t through t + d - 1; [R-Until-0]: d = 0 is Event2 at t
        for d in range(f.lo, f.hi + 1):
            if holds(f.b, events, year + d, lo=lo, hi=hi) and all(
                    holds(f.a, events, k, lo=lo, hi=hi) for k in range(year, year + d)):
                return True
        return False
    raise TypeError(f"not an MTL formula: {f!r} (use Atom, Not, And, Or, Next, Finally, Globally, Until)")


def horizon(formula: Formula) -> int:
    """How many years ahead of ``t`` the truth of ``formula`` at ``t`` can look."""
    f = formula
    if isinstance(f, Atom):
        return 0
    if isinstance(f, (Not,)):
        return horizon(f.f)
    if isinstance(f, (And, Or)):
        return max(horizon(f.a), horizon(f.b))
    if isinstance(f, Next):
        return 1 + horizon(f.f)
    if isinstance(f, (Finally, Globally)):
        return f.hi + horizon(f.f)
    if isinstance(f, Until):
        return f.hi + max(horizon(f.a), horizon(f.b))
    raise TypeError(f"not an MTL formula: {f!r}")


def atoms(formula: Formula) -> list[str]:
    """The event names of ``formula``, in order of first appearance."""
    out: list[str] = []

    def walk(f: Formula) -> None:
        if isinstance(f, Atom):
            if f.name not in out:
                out.append(f.name)
        elif isinstance(f, (Not, Next, Finally, Globally)):
            walk(f.f)
        else:
            walk(f.a)  # type: ignore[union-attr]
            walk(f.b)  # type: ignore[union-attr]

    walk(formula)
    return out


def depth(formula: Formula) -> int:
    """The operator nesting depth: 0 for an atom, 1 for an operator over atoms, and so on."""
    f = formula
    if isinstance(f, Atom):
        return 0
    if isinstance(f, (Not, Next, Finally, Globally)):
        return 1 + depth(f.f)
    return 1 + max(depth(f.a), depth(f.b))  # type: ignore[union-attr]


def operator(formula: Formula) -> str:
    """The name of the outermost operator: atom, not, and, or, next, finally, globally, until."""
    return type(formula).__name__.lower() if not isinstance(formula, Atom) else "atom"


def brute_force_years(formula: Formula, events: Mapping[str, Sequence[Sequence[int]]], *, lo: int = DOMAIN[0],
                      hi: int = DOMAIN[1]) -> list[Interval]:  # fmt: skip
    """:func:`satisfying_years` computed the straightforward way: :func:`holds` at every year of the window where
    anything can hold (from the earliest event or ``lo``, less the formula's horizon, to the latest event or
    ``hi``), grouped into intervals. Outside that window every subformula is false: atoms are, negation is, and
    every other operator only looks forward."""
    names = atoms(formula)
    starts = [int(s) for n in names for s, _ in events.get(n, ())]
    ends = [int(e) for n in names for _, e in events.get(n, ())]
    first = min([lo, *starts]) - horizon(formula)
    last = max([hi, *ends])
    out: list[Interval] = []
    for year in range(first, last + 1):
        if holds(formula, events, year, lo=lo, hi=hi):
            if out and out[-1][1] == year - 1:
                out[-1] = (out[-1][0], year)
            else:
                out.append((year, year))
    return out
