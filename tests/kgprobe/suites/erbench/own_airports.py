"""A realistic airports table for the tests of ``kgprobe init`` on a user's own table: like the airports CSV users
load into SQLite or DuckDB (IATA code, name, city, state, country, latitude, longitude), with unique codes, a
country that is nearly constant (398 of 400 rows USA), cities of one name in several states, airport names that
repeat across states, and coordinates with many decimals. Generated from a seed, so every run sees the same rows."""

from __future__ import annotations

import csv
import random
import sqlite3
from pathlib import Path

COLUMNS = ["iata", "name", "city", "state", "country", "latitude", "longitude"]
_PLACES = [
    ("Mohall", "ND", 48.76, -101.51), ("Bismarck", "ND", 46.77, -100.75), ("Fargo", "ND", 46.92, -96.81),
    ("Jackson", "MS", 32.31, -90.07), ("Jackson", "WY", 43.6, -110.73), ("Jackson", "TN", 35.59, -88.91),
    ("Springfield", "IL", 39.84, -89.67), ("Springfield", "MO", 37.24, -93.38), ("Springfield", "OH", 39.84, -83.84),
    ("Columbus", "OH", 39.99, -82.89), ("Columbus", "GA", 32.52, -84.94), ("Columbus", "MS", 33.64, -88.44),
    ("Bay Springs", "MS", 31.95, -89.23), ("Livingston", "TX", 30.68, -95.01), ("Houston", "TX", 29.98, -95.34),
    ("Austin", "TX", 30.19, -97.67), ("Tucson", "AZ", 32.12, -110.94), ("Phoenix", "AZ", 33.43, -112.01),
    ("Denver", "CO", 39.86, -104.67), ("Aspen", "CO", 39.22, -106.87), ("Boise", "ID", 43.56, -116.22),
    ("Portland", "OR", 45.59, -122.6), ("Portland", "ME", 43.65, -70.31), ("Salem", "OR", 44.91, -123.0),
    ("Albany", "NY", 42.75, -73.8), ("Albany", "GA", 31.54, -84.19), ("Ithaca", "NY", 42.49, -76.46),
    ("Burlington", "VT", 44.47, -73.15), ("Burlington", "IA", 40.78, -91.13), ("Bangor", "ME", 44.81, -68.83),
    ("Reno", "NV", 39.5, -119.77), ("Elko", "NV", 40.82, -115.79), ("Juneau", "AK", 58.35, -134.58),
    ("Nome", "AK", 64.51, -165.44), ("Hilo", "HI", 19.72, -155.05), ("Lihue", "HI", 21.98, -159.34),
    ("Tampa", "FL", 27.98, -82.53), ("Ocala", "FL", 29.17, -82.22), ("Macon", "GA", 32.69, -83.65),
    ("Dothan", "AL", 31.32, -85.45), ("Mobile", "AL", 30.69, -88.24), ("Monroe", "LA", 32.51, -92.04),
    ("Lafayette", "LA", 30.21, -91.99), ("Lafayette", "IN", 40.41, -86.94), ("Wichita", "KS", 37.65, -97.43),
    ("Salina", "KS", 38.79, -97.65), ("Omaha", "NE", 41.3, -95.89), ("Lincoln", "NE", 40.85, -96.76),
    ("Duluth", "MN", 46.84, -92.19), ("Bemidji", "MN", 47.51, -94.93), ("Madison", "WI", 43.14, -89.34),
    ("Wausau", "WI", 44.93, -89.63), ("Marquette", "MI", 46.53, -87.56), ("Flint", "MI", 42.97, -83.74),
    ("Erie", "PA", 42.08, -80.18), ("Altoona", "PA", 40.3, -78.32), ("Dover", "DE", 39.13, -75.47),
    ("Roanoke", "VA", 37.33, -79.98), ("Asheville", "NC", 35.44, -82.54), ("Greenville", "SC", 34.9, -82.22),
]
_KINDS = ["Municipal", "Regional", "County", "Memorial", "Field", "Airpark", "International", "Airport"]
_PEOPLE = ["Thigpen", "Clark", "Hawkins", "Miller", "Baker", "Turner", "Wood", "Harris", "Perry", "Lewis"]
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def airports(n: int = 400, seed: int = 7) -> list[dict]:
    """``n`` airports (see the module docstring)."""
    rng = random.Random(seed)
    rows: list[dict] = []
    codes: set[str] = set()
    names: set[tuple[str, str]] = set()
    while len(rows) < n:
        city, state, lat, lon = rng.choice(_PLACES)
        kind = rng.choice(_KINDS)
        name = f"{city} {kind}" if rng.random() < 0.5 else f"{rng.choice(_PEOPLE)} {kind}"
        if (name, state) in names:
            continue
        names.add((name, state))
        code = None
        while code is None or code in codes:  # FAA codes mix letters and digits ("00M", "9S6")
            code = ("".join(rng.choice(_LETTERS) for _ in range(3)) if rng.random() < 0.6 else
                    f"{rng.randint(0, 9)}{rng.choice(_LETTERS)}{rng.randint(0, 9)}")
        codes.add(code)
        rows.append({"iata": code, "name": name, "city": city, "state": state, "country": "USA",
                     "latitude": round(lat + rng.uniform(-0.4, 0.4), 8),
                     "longitude": round(lon + rng.uniform(-0.4, 0.4), 8)})
    rows[n * 17 // 400].update(country="Palau", state="PW")
    rows[n * 203 // 400].update(country="Federated States of Micronesia", state="FM")
    return rows


def write_csv(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_sqlite(path: Path, rows: list[dict], table: str = "airports") -> Path:
    with sqlite3.connect(path) as con:
        con.execute(f"CREATE TABLE {table} (iata TEXT PRIMARY KEY, name TEXT, city TEXT, state TEXT, country TEXT, "
                    "latitude REAL, longitude REAL)")
        con.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?)", [tuple(r[c] for c in COLUMNS) for r in rows])
    return path


def write_duckdb(path: Path, rows: list[dict], table: str = "airports") -> Path:
    import duckdb

    with duckdb.connect(str(path)) as con:
        con.execute(f"CREATE TABLE {table} (iata VARCHAR PRIMARY KEY, name VARCHAR, city VARCHAR, state VARCHAR, "
                    "country VARCHAR, latitude DOUBLE, longitude DOUBLE)")
        con.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?)", [tuple(r[c] for c in COLUMNS) for r in rows])
    return path
