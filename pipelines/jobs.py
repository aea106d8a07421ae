"""Jobs. Dagster runs one partition scheme per run, so the work is split by partitioning:

* ``prepare``: the unpartitioned assets: KGs, subgraphs, every enabled suite's items (and the assets before
  them), the triple scorer, checks included;
* ``perturb``: the pruned subgraphs perturbed, one run per ``perturbation`` partition;
* ``similarity``: ATS / SC2D / SD2 over all perturbation partitions;
* ``closed_book``: one model's closed-book answers to every enabled suite, and their scores, one run per ``model``
  partition; the model is loaded once for the run (in process, so every step shares the run's ``models``);
* ``grounded``: the same with KG context, one run per ``model|perturbation`` partition;
* ``publish``: the leaderboard over every scored partition, and the HTML report;
* ``generate_closed`` / ``generate_grounded`` (answers only), ``score_closed`` / ``score_grounded`` (scores only,
  e.g. after adding a judge: stored answers are read back, nothing is generated again), one job per suite
  (``<suite>_questions``: its items and what comes before them) and per stage (``ingest``, ``subgraphs``).

The whole chain for every partition of the config is named after the project (:func:`chain_name`, :data:`MAIN_JOB`
for the sample); ``kgprobe run`` runs it in-process, stage by stage (:data:`MAIN_SEQUENCE`), ``perturb``'s levels
in one run, each grounded model's levels in one run, and the reference models' closed-book and grounded partitions
in one run each (a run over a range of partitions: the assets loop over ``context.partition_keys``; see
``pipelines.cli.RANGED_JOBS``), and a backfill over the partitioned jobs does the same through the daemon, one run per
partition.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence

import dagster as dg

from kgprobe.stages import Stages
from pipelines.partitions import Partitions

MAIN_JOB = "kgprobe_sample"


def chain_name(cfg) -> str:
    """The name of a project's whole chain (``kgprobe run``'s default job): ``kgprobe_<project name>``, in the
    characters a job name allows (:data:`MAIN_JOB` for the bundled sample)."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", str(getattr(cfg, "name", None) or "project")).strip("_") or "project"
    return f"kgprobe_{name}"
#: The jobs the main chain runs, in order; partitioned ones run once per partition.
MAIN_SEQUENCE = ("prepare", "perturb", "similarity", "closed_book", "grounded", "publish")
#: The run tag of a partition whose model runs on a GPU (``dagster.yaml`` runs one of them at a time). It is the one
#: GPU limit: runs without it (API and reference models, CPU models) run side by side up to ``max_concurrent_runs``.
GPU_TAG = "kgprobe/gpu"
#: Comma-separated model names whose partitions count as GPU runs whatever their backend says (a model served on
#: this machine's GPU through an OpenAI-compatible server, say); pipelines/definitions.py reads it.
GPU_MODELS_ENV = "KGPROBE_GPU_MODELS"
#: JSON of the ``dagster-k8s/config`` tag given to GPU partitions' runs (node selector, GPU limits) on Kubernetes;
#: see deploy/k8s/.
GPU_K8S_CONFIG_ENV = "KGPROBE_GPU_K8S_CONFIG"


def gpu_run_tags(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The run tags of a partition whose model needs a GPU: ``kgprobe/gpu=true``, and ``dagster-k8s/config`` from
    ``KGPROBE_GPU_K8S_CONFIG`` when it is set (a JSON object; a malformed one is an error naming the variable)."""
    environ = os.environ if environ is None else environ
    tags = {GPU_TAG: "true"}
    raw = environ.get(GPU_K8S_CONFIG_ENV)
    if raw:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{GPU_K8S_CONFIG_ENV}: not valid JSON ({exc}); set it to a dagster-k8s/config object "
                             "such as deploy/k8s/gpu-run-config.json") from exc
        if not isinstance(parsed, dict):
            raise ValueError(f"{GPU_K8S_CONFIG_ENV}: expected a JSON object, got {type(parsed).__name__}")
        tags["dagster-k8s/config"] = json.dumps(parsed, sort_keys=True)
    return tags


def _partition_tags(partitions_def: dg.PartitionsDefinition, gpu_models: set[str] | frozenset[str], *,
                    every: bool = False) -> dict:
    """``config=`` for a job partitioned by model (or model|perturbation): runs of GPU models' partitions (of every
    partition with ``every``: the job judges with a model on the GPU) carry :func:`gpu_run_tags`, others no extra
    tag."""
    if not gpu_models and not every:
        return {}
    tags = gpu_run_tags()

    def for_key(key: str) -> dict[str, str]:
        return dict(tags) if every or key.split("|", 1)[0] in gpu_models else {}

    return {"config": dg.PartitionedConfig(partitions_def=partitions_def, run_config_for_partition_key_fn=lambda _: {},
                                           tags_for_partition_key_fn=for_key)}


def _assets(names: Sequence[str]) -> dg.AssetSelection:
    return dg.AssetSelection.assets(*names) if names else dg.AssetSelection.assets()


def all_jobs(parts: Partitions, suites: Sequence = (), *, grounded: set[str] | frozenset[str] = frozenset(),
             gpu_models: set[str] | frozenset[str] = frozenset(), gpu_judge: bool = False,
             stages: Stages | None = None) -> list[dg.UnresolvedAssetJobDefinition]:  # fmt: skip
    """The jobs of the code location for the enabled ``suites`` (and the names of those with a grounded lane);
    runs of ``gpu_models``' partitions carry :func:`gpu_run_tags`, and with ``gpu_judge`` (a judge runs on the GPU)
    so does every run of a job that scores. ``stages`` (:func:`kgprobe.stages.needed_stages`; default: all of them)
    leaves out the jobs of stages the config does not need: ``subgraphs``, ``perturb``, ``similarity`` and the
    grounded ones."""
    if stages is None:
        stages = Stages(grounded_suites=frozenset(grounded), subgraphs=True, perturb=True, similarity=True, scorer=True)
    names = [s.name for s in suites]
    items = [f"{n}_items" for n in names]
    upstream = [a for s in suites for a in s.upstream]
    closed_answers = [f"{n}_responses" for n in names]
    closed_scores = [f"{n}_scores" for n in names] + [a for s in suites for a in getattr(s, "closed_extras", ())]
    grounded_answers = [f"{n}_grounded_responses" for n in names if n in grounded]
    grounded_scores = [f"{n}_grounded_scores" for n in names if n in grounded]
    unpartitioned = dg.AssetSelection.groups("ingest") | _assets([*upstream, *items])
    if stages.subgraphs:
        unpartitioned = unpartitioned | dg.AssetSelection.groups("subgraph")
    if stages.scorer:
        unpartitioned = unpartitioned | dg.AssetSelection.assets("triple_scorer")
    in_process = {"executor_def": dg.in_process_executor}
    # answering holds the GPU for GPU models; scoring also for every model when a judge is on the GPU
    answer_model = {**in_process, **_partition_tags(parts.model, gpu_models)}
    answer_level = {**in_process, **_partition_tags(parts.model_perturbation, gpu_models)}
    by_model = {**in_process, **_partition_tags(parts.model, gpu_models, every=gpu_judge)}
    by_model_level = {**in_process, **_partition_tags(parts.model_perturbation, gpu_models, every=gpu_judge)}
    jobs = [
        dg.define_asset_job("prepare", selection=unpartitioned,
                            description="Load the KGs, retrieve subgraphs, write every suite's questions, train the "
                                        "triple scorer."),
        dg.define_asset_job("closed_book", selection=_assets([*closed_answers, *closed_scores]), **by_model,
                            description="One model (partition) answers every suite closed book; answers read, judged "
                                        "and scored. The model is loaded once for the run."),
        dg.define_asset_job("grounded", selection=_assets([*grounded_answers, *grounded_scores]), **by_model_level,
                            description="One model answers every grounded suite with KG context at one perturbation "
                                        "level; answers read, judged and scored."),
        dg.define_asset_job("publish", selection=dg.AssetSelection.groups("report"),
                            description="The leaderboard over every scored partition, and the HTML report with its plots."),
        dg.define_asset_job("score_closed", selection=_assets(closed_scores), **by_model,
                            description="Re-score stored closed-book answers of one model (no generation)."),
        dg.define_asset_job("score_grounded", selection=_assets(grounded_scores), **by_model_level,
                            description="Re-score stored grounded answers of one model|perturbation (no generation)."),
        dg.define_asset_job("generate_closed", selection=_assets(closed_answers), **answer_model,
                            description="Closed-book answers of one model (partition) to every suite's questions."),
        dg.define_asset_job("generate_grounded", selection=_assets(grounded_answers), **answer_level,
                            description="KG-grounded answers of one model at one perturbation level (model|perturbation)."),
        dg.define_asset_job("perturb", selection=dg.AssetSelection.assets("perturbed_subgraphs"),
                            description="The pruned subgraphs perturbed at one method and level (partition)."),
        dg.define_asset_job("similarity", selection=dg.AssetSelection.groups("similarity"),
                            description="ATS, SC2D and SD2 of every perturbed subgraph (after all perturbation partitions)."),
        dg.define_asset_job("ingest", selection=dg.AssetSelection.groups("ingest"),
                            description="Load the configured KGs into the DuckDB warehouse."),
        dg.define_asset_job("subgraphs", selection=dg.AssetSelection.groups("subgraph"),
                            description="Queries, their k-hop subgraphs and the PPR-pruned subgraphs."),
    ]
    skip = ({"subgraphs"} if not stages.subgraphs else set()) | ({"perturb"} if not stages.perturb else set()) \
        | ({"similarity"} if not stages.similarity else set()) \
        | ({"grounded", "score_grounded", "generate_grounded"} if not stages.grounded else set())
    jobs = [j for j in jobs if j.name not in skip]
    for suite in suites:
        jobs.append(dg.define_asset_job(
            f"{suite.name}_questions", selection=_assets(["kg", *suite.upstream, f"{suite.name}_items"]),
            description=f"{suite.title}: the questions and the assets before them."))
    return jobs
