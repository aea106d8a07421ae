"""Jobs: the main job that materializes everything for the project config, and one job per stage group."""

from __future__ import annotations

import dagster as dg

MAIN_JOB = "kgprobe_sample"


def all_jobs() -> list[dg.UnresolvedAssetJobDefinition]:
    """The main job (every asset and check) and one job per stage group."""
    return [
        dg.define_asset_job(
            MAIN_JOB,
            selection=dg.AssetSelection.all(),
            description="Materialize every asset of the project config (the sample by default), checks included.",
        ),
        dg.define_asset_job(
            "subgraphs",
            selection=dg.AssetSelection.groups("subgraph"),
            description="Queries, their k-hop subgraphs and the PPR-pruned subgraphs.",
        ),
        dg.define_asset_job(
            "fpq_questions",
            selection=dg.AssetSelection.groups("questions"),
            description="KG-FPQ true triples, false-premise edits and questions.",
        ),
        dg.define_asset_job(
            "ingest",
            selection=dg.AssetSelection.groups("ingest"),
            description="Load the configured KGs into the DuckDB warehouse.",
        ),
    ]
