"""``kgprobe init`` on a user's own table (issue 43, items 1-3): FD discovery on a realistic airports table (no FD
to a nearly constant column, key FDs, the coordinate pair), one question per left side that reads as a person
would write it, a per-FD limit, SQLite and DuckDB files, and the check that no two items share a prompt while
expecting different answers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pytest
import yaml

from kgprobe.config import load_config
from kgprobe.errors import ConfigError
from kgprobe.project.init import ERBENCH_LIMIT_PER_FD, init_project
from kgprobe.suites.erbench.clashes import check_shared_prompts, shared_prompts
from kgprobe.suites.erbench.erdb import load_erdb
from kgprobe.suites.erbench.fds import (CONSTANT_SHARE, choose_fds, database_kind, discover_fds,
                                        entity_name_column, read_table, singular, with_article)
from kgprobe.suites.erbench.questions import QuestionOptions, build_items
from kgprobe.suites.erbench.spec import load_spec, parse_spec

sys.path.insert(0, str(Path(__file__).parent))
from own_airports import COLUMNS, airports, write_csv, write_duckdb, write_sqlite  # noqa: E402

MODELS = ("models:\n  - {name: oracle, backend: reference, kind: oracle}\n"
          "  - {name: always-yes, backend: reference, kind: always-yes}\n")


def _frame() -> pl.DataFrame:
    return pl.DataFrame([{c: str(r[c]) for c in COLUMNS} for r in airports()])


def test_nearly_constant_right_side_is_left_out() -> None:
    frame = _frame()
    usa = frame.get_column("country").value_counts(sort=True).row(0)
    assert usa == ("USA", 398) and usa[1] / frame.height >= CONSTANT_SHARE
    found = discover_fds(frame, relation="airports")
    assert not [c for c in found if c.rhs == "country"]
    # without the threshold city -> country is a candidate (2 of 400 rows break it, under 1%): the rule drops it
    loose = discover_fds(frame, relation="airports", max_constant_share=1.01)
    assert any(c.lhs == ("city",) and c.rhs == "country" for c in loose)


def test_key_and_coordinate_fds_are_found() -> None:
    found = {(c.lhs, c.rhs): c for c in discover_fds(_frame(), relation="airports")}
    assert found[(("iata",), "name")].lhs_is_key
    assert found[(("latitude", "longitude"), "name")].lhs_is_key
    # a coordinate alone is unique only by its digits: never a left side on its own, nor with a non-measurement
    assert not [k for k in found if "latitude" in k[0] and k[0] != ("latitude", "longitude")]
    assert (("city",), "state") not in found  # Jackson is in MS, WY and TN


def test_one_fd_per_left_side_naming_the_entity_first() -> None:
    frame = _frame()
    assert entity_name_column(frame) == "name"
    chosen = choose_fds(frame, discover_fds(frame, relation="airports"), relation="airports")
    assert [(c.lhs, c.rhs) for c in chosen[:2]] == [(("iata",), "name"), (("latitude", "longitude"), "name")]
    assert len({frozenset(c.lhs) for c in chosen}) == len(chosen)
    # a fact of the named airport: its city, in words, rather than its code or a coordinate
    assert (("name", "state"), "city") in [(c.lhs, c.rhs) for c in chosen]


@pytest.mark.parametrize(("noun", "phrase"), [("airports", "an airport"), ("cities", "a city"),
                                              ("universities", "a university"), ("people", "a people"),
                                              ("classes", "a class"), ("bus", "a bus"), ("orders", "an order")])
def test_entity_noun_in_the_singular_with_its_article(noun: str, phrase: str) -> None:
    assert with_article(singular(noun)) == phrase


def test_database_files_are_read_and_told_apart(tmp_path: Path) -> None:
    rows = airports(50)
    csv_file = write_csv(tmp_path / "a.csv", rows)
    sqlite_file = write_sqlite(tmp_path / "a.db", rows)
    duck_file = write_duckdb(tmp_path / "a.db2", rows)
    assert [database_kind(p) for p in (csv_file, sqlite_file, duck_file)] == [None, "sqlite", "duckdb"]
    frames = [read_table(p) for p in (csv_file, sqlite_file, duck_file)]
    assert all(f.columns == COLUMNS and f.height == 50 for f in frames)
    # values compared as written: the same codes and names whichever file they came from
    assert frames[1].get_column("iata").to_list() == frames[0].get_column("iata").to_list() == \
        frames[2].get_column("iata").to_list()
    assert float(frames[1].get_column("latitude")[0]) == float(frames[0].get_column("latitude")[0])
    with sqlite3_two_tables(tmp_path / "two.sqlite") as path, pytest.raises(ConfigError, match="airports, runways"):
        read_table(path)
    assert read_table(tmp_path / "two.sqlite", "runways").columns == ["id", "length"]


class sqlite3_two_tables:  # noqa: N801 - a context that writes a SQLite file of two tables
    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> Path:
        write_sqlite(self.path, airports(20))
        import sqlite3

        with sqlite3.connect(self.path) as con:
            con.execute("CREATE TABLE runways (id INTEGER, length INTEGER)")
            con.execute("INSERT INTO runways VALUES (1, 3000)")
        return self.path

    def __exit__(self, *exc: object) -> None:
        return None


def _issue_spec(tmp_path: Path) -> dict:
    """What init wrote before issue 43: two FDs with one left side and one question text."""
    write_csv(tmp_path / "airports.csv", airports())
    given = "Is there a airports whose name is {name}, whose state is {state}?"
    return {"name": "airports", "source": {"kind": "csv", "path": str(tmp_path)},
            "relations": {"airports": {"file": "airports.csv", "columns": COLUMNS}},
            "fds": [{"name": f"airports_{rhs}", "relation": "airports", "lhs": ["name", "state"], "rhs": [rhs],
                     "basic": given, "negated": "Is it true that there is no airports whose name is {name}?"}
                    for rhs in ("city", "iata")]}


def test_items_sharing_a_prompt_with_different_answers_are_refused(tmp_path: Path) -> None:
    spec = parse_spec(_issue_spec(tmp_path))
    with duckdb.connect() as con:
        load_erdb(con, spec)
        items = build_items(con, spec, QuestionOptions(limit=10, known=False))
    clashes = shared_prompts(items)
    assert len(clashes) == 20  # 10 records x (BN(Y), BN(N)), each asked by both FDs
    first = clashes[0]
    assert {i["fd"] for i in first["items"]} == {"airports_city", "airports_iata"}
    with pytest.raises(ConfigError) as err:
        check_shared_prompts(items)
    message = str(err.value)
    assert "airports_city" in message and "airports_iata" in message and first["question"] in message
    assert "rhs: [city, iata]" in message  # what to change in the spec
    # the same prompt asked twice for the same answer is no clash
    assert shared_prompts(items.filter(pa.array([f == "airports_city" for f in items.column("fd").to_pylist()]))) == []


def test_records_of_one_fd_that_read_alike_are_left_out_or_refused_strictly(tmp_path: Path) -> None:
    # coordinates rounded to whole degrees: two airports of one FD read alike, expecting other names
    write_csv(tmp_path / "airports.csv", airports())
    spec = parse_spec({"name": "airports", "source": {"kind": "csv", "path": str(tmp_path)},
                       "relations": {"airports": {"file": "airports.csv", "columns": COLUMNS}},
                       "formats": {"airports.latitude": {"round": 0}, "airports.longitude": {"round": 0}},
                       "fds": [{"name": "at", "relation": "airports", "lhs": ["latitude", "longitude"], "rhs": ["name"],
                                "basic": "Is there an airport at latitude {latitude} and longitude {longitude}?",
                                "negated": "Is it true that no airport is at {latitude}, {longitude}?"}]})
    with duckdb.connect() as con:
        load_erdb(con, spec)
        items = build_items(con, spec, QuestionOptions(limit=50, known=False))
    found = shared_prompts(items)
    assert found and all({i["fd"] for i in f["items"]} == {"at"} for f in found)
    kept, messages = check_shared_prompts(items)
    assert len(messages) == 1 and found[0]["question"] in messages[0] and "read alike" in messages[0]
    # both records of each such prompt are left out, and nothing else
    dropped = {i["item_id"] for f in found for i in f["items"]}
    assert kept.num_rows == items.num_rows - len(dropped) > 0 and shared_prompts(kept) == []
    assert f"Their {len(dropped)} items are left out" in messages[0]
    with pytest.raises(ConfigError, match="read alike"):
        check_shared_prompts(items, strict=True)


def _init(tmp_path: Path, db: str) -> Path:
    cfg = tmp_path / "airports.yaml"
    cfg.write_text(f"warehouse: warehouse/kgprobe.duckdb\nsuites:\n  erbench: {{db: {db}}}\n" + MODELS,
                   encoding="utf-8")
    init_project(cfg, log=lambda _: None)
    return cfg


@pytest.mark.parametrize("kind", ["sqlite", "duckdb"])
def test_init_on_a_database_file_builds_questions_as_written(tmp_path: Path, kind: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (write_sqlite if kind == "sqlite" else write_duckdb)(data / f"airports.{kind}", airports())
    original = f"warehouse: warehouse/kgprobe.duckdb\nsuites:\n  erbench: {{db: data/airports.{kind}}}\n" + MODELS
    cfg = _init(tmp_path, f"data/airports.{kind}")
    assert (tmp_path / "airports.before-init.yaml").read_text(encoding="utf-8") == original
    settings = load_config(cfg).suite("erbench")
    assert settings.db == "airports.erbench-spec.yaml" and settings.limit_per_fd == ERBENCH_LIMIT_PER_FD
    raw = yaml.safe_load((tmp_path / "airports.erbench-spec.yaml").read_text(encoding="utf-8"))
    assert raw["source"] == {"kind": kind, "path": f"data/airports.{kind}"}  # relative to the config
    assert raw["relations"]["airports"]["table"] == "airports"
    assert len({frozenset(fd["lhs"]) for fd in raw["fds"]}) == len(raw["fds"])
    assert not any(fd["rhs"] == ["country"] for fd in raw["fds"])
    # unedited, as kgprobe run reads it
    spec = load_spec(settings.db, config_dir=tmp_path)
    with duckdb.connect() as con:
        load_erdb(con, spec)
        items = build_items(con, spec, QuestionOptions(limit=settings.limit_per_fd))
    assert check_shared_prompts(items, strict=True) == (items, [])
    questions = items.column("question").to_pylist()
    assert len(questions) == len(set(questions)) == 2 * ERBENCH_LIMIT_PER_FD * len(raw["fds"])
    per_fd = Counter(items.column("fd").to_pylist())
    assert set(per_fd.values()) == {2 * ERBENCH_LIMIT_PER_FD}
    shown = [q for q, t in zip(questions, items.column("qtype").to_pylist(), strict=True) if t == "BN(Y)"]
    sample = shown[::len(shown) // 20][:20]
    print(f"\n{kind}: 20 of {len(shown)} BN(Y) questions:\n" + "\n".join(sample))
    for q in shown:
        assert q.startswith("Is there an airport whose ") and q.count("?") in (1, 2)
        assert not re.search(r"\ba airport|\bairports\b|\{|\}|is \?|is ,| {2}", q), q
    assert any(re.fullmatch(r"Is there an airport whose latitude is -?\d+\.\d{4} and whose longitude is "
                            r"-?\d+\.\d{4}\?", q) for q in shown)
    assert any(q.endswith("? If so, what is its city?") for q in shown)
    # the header shows 20 example questions, each one of the built ones
    header = [line[4:] for line in (tmp_path / "airports.erbench-spec.yaml").read_text(encoding="utf-8").splitlines()
              if line.startswith("#   Is ")]
    assert len(header) == 20 and set(header) <= set(shown)


def test_init_names_the_table_or_lists_them(tmp_path: Path) -> None:
    with sqlite3_two_tables(tmp_path / "two.sqlite"):
        pass
    with pytest.raises(ConfigError, match=r"2 tables \(airports, runways\).*db: two.sqlite#airports"):
        _init(tmp_path, "two.sqlite")
    with pytest.raises(ConfigError, match="no table 'gates'; its tables: airports, runways"):
        _init(tmp_path, "two.sqlite#gates")
    cfg = _init(tmp_path, "two.sqlite#airports")
    raw = yaml.safe_load((tmp_path / "airports.erbench-spec.yaml").read_text(encoding="utf-8"))
    assert load_config(cfg).suite("erbench").db == "airports.erbench-spec.yaml"
    assert list(raw["relations"]) == ["airports"] and raw["source"] == {"kind": "sqlite", "path": "two.sqlite"}


def test_init_keeps_the_spec_it_replaces(tmp_path: Path) -> None:
    write_csv(tmp_path / "airports.csv", airports(60))
    old = "# my own edits\nname: airports\n"
    (tmp_path / "airports.erbench-spec.yaml").write_text(old, encoding="utf-8")
    _init(tmp_path, "airports.csv")
    assert (tmp_path / "airports.erbench-spec.before-init.yaml").read_text(encoding="utf-8") == old
    raw = yaml.safe_load((tmp_path / "airports.erbench-spec.yaml").read_text(encoding="utf-8"))
    assert raw["source"] == {"kind": "csv", "path": "."} and raw["relations"]["airports"]["file"] == "airports.csv"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "duckdb"])
def test_init_then_run_with_the_reference_models(tmp_path: Path, kind: str) -> None:
    (write_sqlite if kind == "sqlite" else write_duckdb)(tmp_path / f"airports.{kind}", airports())
    cfg = tmp_path / "airports.yaml"
    cfg.write_text(f"warehouse: warehouse/kgprobe.duckdb\nsuites:\n  erbench: {{db: airports.{kind}}}\n" + MODELS,
                   encoding="utf-8")
    kgprobe = [sys.executable, "-c", "from pipelines.cli import main; main()"]
    root = Path(__file__).resolve().parents[4]
    for args in (["init", "--config", cfg.name], ["run", "--config", cfg.name, "--suites", "erbench"]):
        done = subprocess.run([*kgprobe, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(root)})
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((tmp_path / "warehouse" / "results.json").read_text(encoding="utf-8"))
    assert results["succeeded"] and not results["warnings"]
    headline = {h["model"]: h for h in results["headlines"] if h["suite"] == "erbench"}
    n = 2 * ERBENCH_LIMIT_PER_FD * 3  # three FDs: iata -> name, latitude, longitude -> name, name, state -> city
    assert (headline["oracle"]["value"], headline["oracle"]["n"]) == (1.0, n)
    assert headline["always-yes"]["value"] == 0.0  # every BN(N) answered wrongly, every BN(Y) without a rationale


@pytest.mark.shared_data
def test_init_on_erbenchs_real_airports_in_sqlite(tmp_path: Path, shared_data: Path) -> None:
    # the released ERBench airports (1,500 real airports: name, ICAO code, latitude, longitude, country code,
    # country under generic headers), loaded into SQLite as a user would
    source = shared_data / "seeds" / "erbench" / "multi_choice" / "dataset" / "crafted" / "airport.csv"
    frame = read_table(source)
    import sqlite3

    with sqlite3.connect(tmp_path / "airports.sqlite") as con:
        con.execute("CREATE TABLE airports (name TEXT, icao TEXT, lat REAL, lon REAL, country_code TEXT, country TEXT)")
        con.executemany("INSERT INTO airports VALUES (?, ?, ?, ?, ?, ?)",
                        [(r[1], r[2], float(r[3]), float(r[4]), r[5], r[6]) for r in frame.iter_rows()])
    cfg = _init(tmp_path, "airports.sqlite")
    raw = yaml.safe_load((tmp_path / "airports.erbench-spec.yaml").read_text(encoding="utf-8"))
    asked = [(fd["lhs"], fd["rhs"]) for fd in raw["fds"]]
    # the paper's Table 7 FD (latitude, longitude -> name) and the ICAO key; a country code and its country are
    # asked in one direction only
    assert asked[:2] == [(["icao"], ["name"]), (["lat", "lon"], ["name"])]
    assert ((["country_code"], ["country"]) in asked) + ((["country"], ["country_code"]) in asked) == 1
    assert raw["formats"] == {"airports.lat": {"round": 4}, "airports.lon": {"round": 4}}
    settings = load_config(cfg).suite("erbench")
    spec = load_spec(settings.db, config_dir=tmp_path)
    with duckdb.connect() as con:
        load_erdb(con, spec)
        items = build_items(con, spec, QuestionOptions(limit=settings.limit_per_fd))
    questions = items.column("question").to_pylist()
    assert len(questions) == len(set(questions)) and shared_prompts(items) == []
    assert "Is there an airport whose ICAO is SCLI?" in questions  # Torca, Chile: the table's first row
    # its lat and lon columns, spelled out as a person asks
    assert any(re.fullmatch(r"Is there an airport whose latitude is -?[0-9.]+ and whose longitude is -?[0-9.]+\?", q)
               for q in questions)


def test_init_on_headers_that_are_not_identifiers(tmp_path: Path) -> None:
    # a spreadsheet export: "Airport Name", "IATA Code", "Lat." ... become identifiers mapped to the headers
    headers = {"iata": "IATA Code", "name": "Airport Name", "city": "City", "state": "State", "country": "Country",
               "latitude": "Lat.", "longitude": "Long."}
    write_csv(tmp_path / "airports.csv", [{headers[k]: v for k, v in r.items()} for r in airports(120)])
    cfg = _init(tmp_path, "airports.csv")
    raw = yaml.safe_load((tmp_path / "airports.erbench-spec.yaml").read_text(encoding="utf-8"))
    assert raw["relations"]["airports"]["columns"] == {"iata_code": "IATA Code", "airport_name": "Airport Name",
                                                       "City": "City", "State": "State", "Country": "Country",
                                                       "lat": "Lat.", "long": "Long."}
    assert [(fd["lhs"], fd["rhs"]) for fd in raw["fds"]][:2] == [(["iata_code"], ["airport_name"]),
                                                                 (["lat", "long"], ["airport_name"])]
    settings = load_config(cfg).suite("erbench")
    spec = load_spec(settings.db, config_dir=tmp_path)
    with duckdb.connect() as con:
        load_erdb(con, spec)
        items = build_items(con, spec, QuestionOptions(limit=settings.limit_per_fd))
    questions = items.column("question").to_pylist()
    assert len(questions) == len(set(questions))
    assert f"Is there an airport whose iata code is {airports(120)[0]['iata']}?" in questions
