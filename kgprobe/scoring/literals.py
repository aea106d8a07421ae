"""Typed literal values in claims and KGs: years, dates at any granularity, numbers with units, codes.

A literal is never an entity mention: "Avatar was released in 2012" states a date even when a film is titled
"2012". Two values are compared at their common granularity ("December 2009" agrees with 2009 and with
2009-12-18; "August 2007" conflicts with September 2007), numbers at the precision the claim writes them.

    >>> agree(parse_literal("December 2009"), parse_literal("2009"))
    True
    >>> agree(parse_literal("1985"), parse_literal("2009-12-18"))
    False
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Literal", "agree", "parse_literal"]

_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>[12]\d{3})"
_ERA = re.compile(r"^(?P<year>\d{1,4})\s*(?P<era>bc|bce|b\.c\.|ad|ce|a\.d\.)$")
_NEG_ISO = re.compile(r"^-(?P<year>\d{1,6})(?:-(?P<mnum>[01]?\d)(?:-(?P<dnum>[0-3]?\d))?)?$")
_APPROX = re.compile(r"^(?:approximately|about|around|roughly|nearly|almost|over|some|an estimated|more than|"
                     r"less than|fewer than|at least|up to|just over|just under|circa|c\.)\s+")
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_DATE_FORMS = [
    re.compile(rf"^{_YEAR}-(?P<mnum>[01]?\d)(?:-(?P<dnum>[0-3]?\d))?(?:T.*)?$"),
    re.compile(rf"^{_MONTH},?\s+{_DAY},?\s+{_YEAR}$"),
    re.compile(rf"^{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}$"),
    re.compile(rf"^{_MONTH},?\s+(?:of\s+)?{_YEAR}$"),
    re.compile(rf"^(?P<dnum>[0-3]?\d)[/.](?P<mnum>[01]?\d)[/.]{_YEAR}$"),
    re.compile(rf"^(?:the\s+)?(?:year\s+)?{_YEAR}$"),
]
_MONTH_ONLY = re.compile(rf"^(?:in\s+)?{_MONTH}$")
_DECADE = re.compile(r"^(?:the\s+)?(?:early\s+|mid\s+|late\s+|mid-)?(?P<dec>[12]\d{2})0'?s$")
_NUMBER = re.compile(r"^(?:no\.?\s*|number\s+|#\s*)?(?P<num>[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[-+]?\d+(?:\.\d+)?)"
                     r"\s*(?P<unit>[a-z%°][a-z%°.\s/²³]*)?$")


@dataclass(frozen=True)
class Literal:
    """A typed value: ``kind`` is ``date`` (``year``, optional ``month``, ``day``; a decade has ``decade`` set) or
    ``number`` (``value``, optional ``unit``, ``decimals`` written)."""

    kind: str
    year: int | None = None
    month: int | None = None
    day: int | None = None
    decade: int | None = None
    value: float | None = None
    unit: str = ""
    decimals: int = 0
    text: str = ""


def parse_literal(text: str | None) -> Literal | None:
    """The typed value ``text`` writes, or None when it is not one (a name, a phrase)."""
    if text is None:
        return None
    t = " ".join(str(text).strip().strip("\"'“”‘’()[].,;").lower().split())
    if not t or len(t) > 40:
        return None
    m = _ERA.match(t) or _NEG_ISO.match(t)
    if m:  # "753 BC", ISO "-0753-04-21"
        g = m.groupdict()
        bc = g.get("era") in {"bc", "bce", "b.c."} or t.startswith("-")
        year = int(g["year"]) * (-1 if bc else 1)
        return Literal("date", year=year, month=int(g["mnum"]) if g.get("mnum") else None,
                       day=int(g["dnum"]) if g.get("dnum") else None, text=str(text))
    approx = bool(_APPROX.match(t))
    t = _APPROX.sub("", t)
    scaled = re.match(r"^(?P<num>\d+(?:\.\d+)?)\s+(?P<scale>thousand|million|billion|trillion)\b\s*(?P<unit>.*)$", t)
    if scaled:
        value = float(scaled.group("num")) * _SCALE[scaled.group("scale")]
        digits = len(scaled.group("num").split(".")[1]) if "." in scaled.group("num") else 0
        unit = " ".join(scaled.group("unit").split()[:3])
        return Literal("number", value=value, unit=unit, decimals=-(len(str(int(_SCALE[scaled.group("scale")]))) - 1
                                                                  - digits), text=str(text))
    if approx:
        m = re.match(r"^(?P<num>[\d,]+(?:\.\d+)?)\s+(?P<unit>[a-z].*)$", t)
        if m and len(m.group("unit").split()) <= 3:
            t = m.group("num")
    for rx in _DATE_FORMS:
        m = rx.match(t)
        if m:
            g = m.groupdict()
            month = _MONTHS.get(g["month"].rstrip(".")) if g.get("month") else (int(g["mnum"]) if g.get("mnum") else None)
            day = int(g["day"]) if g.get("day") else (int(g["dnum"]) if g.get("dnum") else None)
            if month is not None and not 1 <= month <= 12 or day is not None and not 1 <= day <= 31:
                return None
            return Literal("date", year=int(g["year"]), month=month, day=day, text=str(text))
    m = _MONTH_ONLY.match(t)
    if m:
        return Literal("date", month=_MONTHS[m.group("month").rstrip(".")], text=str(text))
    m = _DECADE.match(t)
    if m:
        return Literal("date", decade=int(m.group("dec")) * 10, text=str(text))
    m = _NUMBER.match(t)
    if m:
        raw = m.group("num").replace(",", "")
        unit = " ".join((m.group("unit") or "").split()).rstrip(".")
        if unit and len(unit) > 12:
            return None
        try:
            value = float(raw)
        except ValueError:
            return None
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        if not unit and decimals == 0 and 1000 <= value <= 2999 and raw.lstrip("+-") == raw:
            return Literal("date", year=int(value), text=str(text))
        return Literal("number", value=value, unit=unit, decimals=decimals, text=str(text))
    return None


def agree(claim: Literal, kg: Literal) -> bool | None:
    """Whether a claimed value agrees with the KG's at their common granularity: True, False, or None when they
    are of different kinds (a date against a number) and cannot be compared."""
    if claim.kind == "date" and kg.kind == "number" and kg.decimals == 0 and kg.value is not None \
            and 1000 <= kg.value <= 2999 and not kg.unit:
        kg = Literal("date", year=int(kg.value))
    if kg.kind == "date" and claim.kind == "number" and claim.decimals == 0 and claim.value is not None \
            and not claim.unit and 1000 <= claim.value <= 2999:
        claim = Literal("date", year=int(claim.value))
    if claim.kind != kg.kind:
        return None
    if claim.kind == "date":
        if claim.decade is not None or kg.decade is not None:
            cy = claim.decade if claim.decade is not None else claim.year
            ky = kg.decade if kg.decade is not None else kg.year
            return cy is not None and ky is not None and cy // 10 == ky // 10
        if claim.year is None:  # "published in September": the month alone
            return None if kg.month is None else claim.month == kg.month
        if claim.year != kg.year:
            return False
        if claim.month is not None and kg.month is not None and claim.month != kg.month:
            return False
        if claim.day is not None and kg.day is not None and claim.month == kg.month and claim.day != kg.day:
            return False
        return True
    assert claim.value is not None and kg.value is not None
    if claim.unit and kg.unit and claim.unit.rstrip("s") != kg.unit.rstrip("s"):
        return None
    if claim.unit and not kg.unit and claim.unit.split()[0] in {"feet", "foot", "ft", "miles", "mile", "mi",
                                                                "pounds", "lb", "lbs", "inches", "inch", "in"}:
        return None  # another unit system than the KG's: no verdict without its unit
    if claim.decimals:  # negative for "2.3 million": written to the nearest 100,000
        tol = 0.5 * 10 ** (-claim.decimals)
    else:  # "1,000,000" is written to the nearest million
        digits = str(int(abs(claim.value)))
        tol = 0.5 * 10 ** (len(digits) - len(digits.rstrip("0"))) if abs(claim.value) >= 100 else 0.5
    return abs(claim.value - kg.value) <= max(tol, 1e-9 * abs(kg.value))
