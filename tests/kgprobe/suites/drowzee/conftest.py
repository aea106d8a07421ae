"""The bundled sample KG loaded once into an in-memory DuckDB, and the Drowzee settings the sample config uses."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from kgprobe.kg.ingest import KGSource, load_kg

SAMPLE = Path(__file__).resolve().parents[4] / "examples" / "sample"

#: The drowzee section of the sample config (relation properties of the bundled KG).
SAMPLE_SETTINGS = dict(
    negation=["born_in", "died_in", "capital_of", "painted_by", "written_by", "composed_by", "directed_by",
              "located_in_city", "premiered_in"],
    inverse={"father": "child", "mother": "child", "child": "parent"}, inverse_labels={"parent": "parent"},
    symmetric=["spouse", "sibling", "shares_border_with"], transitive=["located_in", "part_of"],
    compositions=[["located_in_city", "country", "country"]], same=["directed_by", "composed_by"],
    per_subject=4, per_rule=40, n_formulas=28, open_end="ongoing",
)


@pytest.fixture(scope="session")
def sample_kg():
    con = duckdb.connect()
    report = load_kg(con, KGSource(triples=[SAMPLE / "triples.tsv"], entity_labels=SAMPLE / "entity_labels.tsv",
                                   relation_labels=SAMPLE / "relation_labels.tsv",
                                   entity_types=SAMPLE / "entity_types.tsv", temporal=[SAMPLE / "temporal.tsv"],
                                   name="sample"))
    con.execute('USE "sample"')
    yield con, report.snapshot_id
    con.close()
