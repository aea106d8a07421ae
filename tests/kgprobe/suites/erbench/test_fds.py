"""kgprobe.suites.erbench.fds: candidate FDs found in a table's data, with support and violations, and an ERBench
spec of them."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from kgprobe.suites.erbench.fds import discover_fds, erbench_spec, identifying_fd, read_table
from kgprobe.suites.erbench.spec import parse_spec

# city -> country holds but for one row; (name) is a key; zip -> city holds exactly; the index is a row number
ROWS = [
    (0, "Ann", "Paris", "France", "75001"), (1, "Bob", "Paris", "France", "75002"),
    (2, "Cid", "Lyon", "France", "69001"), (3, "Dan", "Lyon", "France", "69001"),
    (4, "Eve", "Rome", "Italy", "00100"), (5, "Fay", "Rome", "Italy", "00100"),
    (6, "Gus", "Rome", "Italia", "00118"), (7, "Hal", "Milan", "Italy", "20100"),
]


def _frame() -> pl.DataFrame:
    return pl.DataFrame([dict(zip(["", "name", "city", "country", "zip"], map(str, r), strict=True)) for r in ROWS])


def test_discover_fds() -> None:
    strict = {(c.lhs, c.rhs): c for c in discover_fds(_frame(), relation="people", max_violation_share=0.0)}
    assert ("",) not in {c[0] for c in strict}  # the row number is not a column of the data
    zip_city = strict[(("zip",), "city")]
    assert (zip_city.groups, zip_city.support, zip_city.violations, zip_city.lhs_is_key) == (6, 2, 0, False)
    assert (("city",), "country") not in strict  # Rome is in Italy and in Italia
    assert strict[(("name",), "city")].lhs_is_key
    assert not any(set(lhs) > {"zip"} and rhs == "city" for lhs, rhs in strict)  # only minimal left sides
    loose = {(c.lhs, c.rhs): c for c in discover_fds(_frame(), relation="people", max_violation_share=0.2)}
    assert loose[(("city",), "country")].violations == 1 and loose[(("city",), "country")].support == 3
    # most support first, keys last
    ordered = discover_fds(_frame(), relation="people", max_violation_share=0.2)
    assert ordered[-1].lhs_is_key and not ordered[0].lhs_is_key
    with pytest.raises(Exception, match="max_lhs"):
        discover_fds(_frame(), relation="people", max_lhs=0)


def test_identifying_fd_and_spec(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    _frame().write_csv(path)
    frame = read_table(path)
    # two people share Lyon 69001 and two Rome 00100: the name is not determined by the rest (2 of 8 rows)
    assert identifying_fd(frame, relation="people") is None
    whole = identifying_fd(frame, relation="people", max_violation_share=0.25)
    assert (whole.lhs, whole.rhs, whole.violations) == (("city", "country", "zip"), "name", 2)
    candidates = discover_fds(frame, relation="people")
    spec = erbench_spec("people", {"people": path}, candidates, folder=tmp_path)
    # one FD per left side: a fact of the named person (name is a key; zip has the most values), then zip -> city,
    # which the data could have broken (support 2); name -> city or zip -> country would ask them again
    assert [(f["lhs"], f["rhs"]) for f in spec["fds"]] == [(["name"], ["zip"]), (["zip"], ["city"])]
    assert spec["fds"][1]["basic"] == "Is there a people whose zip is {zip}? If so, what is its city?"
    assert spec["relations"]["people"] == {"file": "people.csv", "columns": ["name", "city", "country", "zip"],
                                           "entity": "people"}
    assert spec["source"] == {"kind": "csv", "path": "."}
    parsed = parse_spec(spec, base=tmp_path)  # what the ERBench suite reads
    assert [f.name for f in parsed.fds] == [f["name"] for f in spec["fds"]]


@pytest.mark.slow
def test_soccer_spec_has_the_papers_fd(shared_data: Path) -> None:
    path = shared_data / "seeds" / "erbench" / "binary" / "fifa_data" / "crafted" / "fifa_df.csv"
    frame = read_table(path)
    # ERBench's Soccer FD: nationality (entity2), club (entity1), jersey number (entity3) -> player (common_entity)
    whole = identifying_fd(frame, relation="soccer")
    assert set(whole.lhs) == {"entity1", "entity2", "entity3"} and whole.rhs == "common_entity"
    found = {(frozenset(c.lhs), c.rhs): c for c in discover_fds(frame, relation="soccer")}
    # its minimal form: club and number already name the player in the 2019 data
    assert found[(frozenset({"entity1", "entity3"}), "common_entity")].lhs_is_key
