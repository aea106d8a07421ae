"""Jobs. Dagster runs one partition scheme per run, so the work is split by partitioning:

* ``prepare``: the unpartitioned assets up to the questions and the triple scorer, checks included;
* ``perturb``: the pruned subgraphs perturbed, one run per ``perturbation`` partition;
* ``similarity``: ATS / SC2D / SD2 over all perturbation partitions;
* ``closed_book``: closed-book answers and their scores, one run per ``model`` partition;
* ``grounded``: KG-grounded answers and their scores, one run per ``model|perturbation`` partition;
* ``publish``: the leaderboard over every scored partition, and the HTML report;
* ``generate_closed`` / ``generate_grounded`` (answers only), ``score_closed`` / ``score_grounded`` (scores only,
  e.g. after adding a judge: stored answers are read back, nothing is generated again), and one job per stage group
  (``ingest``, ``subgraphs``, ``fpq_questions``) for partial refreshes.

:data:`MAIN_JOB` (``kgprobe_sample``) is the whole chain for every partition of the config; ``kgprobe run`` runs it
in-process, stage by stage (:data:`MAIN_SEQUENCE`), and a backfill over the partitioned jobs does the same
through the daemon.
"""

from __future__ import annotations

import dagster as dg

from pipelines.partitions import Partitions

MAIN_JOB = "kgprobe_sample"
#: The jobs the main chain runs, in order; partitioned ones run once per partition.
MAIN_SEQUENCE = ("prepare", "perturb", "similarity", "closed_book", "grounded", "publish")
GPU_TAG = "kgprobe/gpu"


def all_jobs(parts: Partitions) -> list[dg.UnresolvedAssetJobDefinition]:
    """The jobs of the code location."""
    unpartitioned = dg.AssetSelection.groups("ingest", "subgraph", "questions") | dg.AssetSelection.assets("triple_scorer")
    return [
        dg.define_asset_job("prepare", selection=unpartitioned,
                            description="Load the KGs, retrieve subgraphs, write the questions, train the triple scorer."),
        dg.define_asset_job("closed_book", selection=dg.AssetSelection.assets("responses_closed", "scores_closed"),
                            description="Closed-book answers of one model (partition) to every question, read and scored."),
        dg.define_asset_job("grounded", selection=dg.AssetSelection.assets("responses_grounded", "scores_grounded"),
                            description="KG-grounded answers of one model at one perturbation level, read and scored."),
        dg.define_asset_job("publish", selection=dg.AssetSelection.groups("report"),
                            description="The leaderboard over every scored partition, and the HTML report with its plots."),
        dg.define_asset_job("score_closed", selection=dg.AssetSelection.assets("scores_closed"),
                            description="Re-score stored closed-book answers of one model (no generation)."),
        dg.define_asset_job("score_grounded", selection=dg.AssetSelection.assets("scores_grounded"),
                            description="Re-score stored grounded answers of one model|perturbation (no generation)."),
        dg.define_asset_job("generate_closed", selection=dg.AssetSelection.assets("responses_closed"),
                            description="Closed-book answers of one model (partition) to every question."),
        dg.define_asset_job("generate_grounded", selection=dg.AssetSelection.assets("responses_grounded"),
                            description="KG-grounded answers of one model at one perturbation level (model|perturbation)."),
        dg.define_asset_job("perturb", selection=dg.AssetSelection.assets("perturbed_subgraphs"),
                            description="The pruned subgraphs perturbed at one method and level (partition)."),
        dg.define_asset_job("similarity", selection=dg.AssetSelection.groups("similarity"),
                            description="ATS, SC2D and SD2 of every perturbed subgraph (after all perturbation partitions)."),
        dg.define_asset_job("ingest", selection=dg.AssetSelection.groups("ingest"),
                            description="Load the configured KGs into the DuckDB warehouse."),
        dg.define_asset_job("subgraphs", selection=dg.AssetSelection.groups("subgraph"),
                            description="Queries, their k-hop subgraphs and the PPR-pruned subgraphs."),
        dg.define_asset_job("fpq_questions", selection=dg.AssetSelection.groups("questions"),
                            description="KG-FPQ true triples, false-premise edits and questions."),
    ]
