"""deploy/: the PostgreSQL instance loads against a real server and stores runs, events and schedules there; the
Kubernetes instance config passes Dagster's instance and K8sRunLauncher schemas, and the pod of a GPU partition's
run (built offline, no cluster) gets the GPU node selector and limit while other partitions' pods do not."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import dagster as dg
import pytest
import yaml

from pipelines.jobs import GPU_K8S_CONFIG_ENV, GPU_TAG, gpu_run_tags

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
_PG_ENV = ("DAGSTER_PG_USERNAME", "DAGSTER_PG_PASSWORD", "DAGSTER_PG_HOST", "DAGSTER_PG_PORT", "DAGSTER_PG_DB")


def _home(tmp_path: Path, instance_yaml: Path) -> Path:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(instance_yaml.read_text(encoding="utf-8"), encoding="utf-8")
    return home


@pytest.mark.slow
def test_postgres_instance_stores_runs_events_and_schedules_in_the_server(postgres_uri, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg2
    from dagster_postgres import (
        PostgresEventLogStorage,
        PostgresRunStorage,
        PostgresScheduleStorage,
    )

    database = f"kgprobe_deploy_{uuid.uuid4().hex[:8]}"
    conn = psycopg2.connect(postgres_uri)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {database}")
    conn.close()
    host, port = postgres_uri.split("@", 1)[1].split("/", 1)[0].split(":")
    for key, value in zip(_PG_ENV, ("postgres", "unused-under-trust", host, port, database), strict=True):
        monkeypatch.setenv(key, value)
    home = _home(tmp_path, DEPLOY / "postgres" / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))

    @dg.op
    def hello() -> int:
        return 1

    @dg.job
    def deploy_smoke():
        hello()

    with dg.DagsterInstance.get() as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert instance.event_log_storage.supports_global_concurrency_limits
        assert instance.get_concurrency_config().pool_config.pool_granularity.value == "run"
        assert instance.run_monitoring_enabled
        result = deploy_smoke.execute_in_process(instance=instance)
        assert result.success
        instance.event_log_storage.set_concurrency_slots("gpu", 1)
    with psycopg2.connect(postgres_uri.rsplit("/", 1)[0] + f"/{database}") as conn, conn.cursor() as cur:
        cur.execute("SELECT run_id, status FROM runs WHERE pipeline_name = 'deploy_smoke'")
        assert cur.fetchall() == [(result.run_id, "SUCCESS")]
        cur.execute("SELECT count(*) FROM event_logs WHERE run_id = %s", (result.run_id,))
        assert cur.fetchone()[0] > 5
        cur.execute("SELECT \"limit\" FROM concurrency_limits WHERE concurrency_key = 'gpu'")
        assert cur.fetchone()[0] == 1
        cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name IN ('jobs', 'job_ticks')")
        assert cur.fetchone()[0] == 2  # schedule storage
    conn.close()
    assert not list(home.rglob("*.db")), "nothing may fall back to SQLite files under DAGSTER_HOME"


def _kubeconfig(tmp_path: Path) -> Path:
    """A kubeconfig for a cluster that does not exist: the launcher loads it, nothing connects."""
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "none",
        "clusters": [{"name": "none", "cluster": {"server": "https://127.0.0.1:9"}}],
        "contexts": [{"name": "none", "context": {"cluster": "none", "user": "none"}}],
        "users": [{"name": "none", "user": {"token": "unused"}}]}), encoding="utf-8")
    return path


def test_k8s_instance_config_is_valid_and_gpu_partitions_get_gpu_pods(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster._config import process_config
    from dagster._core.instance.config import dagster_instance_config
    from dagster_k8s.job import construct_dagster_k8s_job
    from dagster_k8s.launcher import K8sRunLauncher

    for key in _PG_ENV:
        monkeypatch.setenv(key, "5432" if key.endswith("PORT") else "x")
    home = _home(tmp_path, DEPLOY / "k8s" / "dagster.yaml")
    config, _ = dagster_instance_config(str(home))  # the whole instance schema; raises on any mistake
    assert config["concurrency"]["pools"]["granularity"] == "run"
    launcher_cfg = config["run_launcher"]
    assert (launcher_cfg["module"], launcher_cfg["class"]) == ("dagster_k8s", "K8sRunLauncher")
    checked = process_config(K8sRunLauncher.config_type(), launcher_cfg["config"])
    assert checked.success, checked.errors
    launcher = K8sRunLauncher(**{**checked.value, "load_incluster_config": False,
                                 "kubeconfig_file": str(_kubeconfig(tmp_path))})

    gpu_config = (DEPLOY / "k8s" / "gpu-run-config.json").read_text(encoding="utf-8")
    pods = {}
    for name, tags in (("gpu", gpu_run_tags({GPU_K8S_CONFIG_ENV: gpu_config})), ("cpu", {})):
        run = dg.DagsterRun(job_name="closed_book", run_id=str(uuid.uuid4()), tags=tags)
        context = launcher.get_container_context_for_run(run)
        job = construct_dagster_k8s_job(
            job_config=context.get_k8s_job_config(job_image=None, run_launcher=launcher),
            args=["dagster", "api", "execute_run"], job_name=f"run-{name}", pod_name=f"run-{name}",
            component="run_worker", user_defined_k8s_config=context.run_k8s_config)
        pods[name] = job.spec.template.spec
    gpu, cpu = pods["gpu"], pods["cpu"]
    assert gpu.node_selector == {"nvidia.com/gpu.present": "true"}
    assert gpu.containers[0].resources.limits["nvidia.com/gpu"] == "1"
    assert [t.key for t in gpu.tolerations] == ["nvidia.com/gpu"]
    assert cpu.node_selector is None and "nvidia.com/gpu" not in (cpu.containers[0].resources.limits or {})
    for spec in (gpu, cpu):  # one pod per run, each with the shared warehouse and the project config
        assert {v.name for v in spec.volumes} == {"warehouse", "project"}
        env = {e.name: e.value for e in spec.containers[0].env}
        assert env["KGPROBE_WAREHOUSE"] == "/warehouse/kgprobe.duckdb" and env["KGPROBE_CONFIG"] == "/project/project.yaml"


def test_helm_values_carry_the_same_gpu_run_config() -> None:
    values = yaml.safe_load((DEPLOY / "k8s" / "values.yaml").read_text(encoding="utf-8"))
    [deployment] = values["dagster-user-deployments"]["deployments"]
    env = {e["name"]: e.get("value") for e in deployment["env"]}
    assert json.loads(env[GPU_K8S_CONFIG_ENV]) == json.loads((DEPLOY / "k8s" / "gpu-run-config.json").read_text())
    assert deployment["dagsterApiGrpcArgs"] == ["-m", "pipelines.definitions"]
    assert values["runLauncher"]["type"] == "K8sRunLauncher"


@pytest.mark.parametrize(("raw", "message"), [("{not json", "not valid JSON"), ("[1]", "expected a JSON object")])
def test_a_malformed_gpu_k8s_config_names_the_variable(raw: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"{GPU_K8S_CONFIG_ENV}: {message}"):
        gpu_run_tags({GPU_K8S_CONFIG_ENV: raw})
    assert gpu_run_tags({}) == {GPU_TAG: "true"}


def test_gpu_models_partitions_carry_the_gpu_tag(project_config, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.definitions import build_definitions

    def with_vllm(cfg: dict) -> None:
        cfg["models"].append({"name": "big", "backend": "vllm", "model_id": "Qwen/Qwen2.5-7B-Instruct"})
        cfg["generation"]["grounded_models"] = ["oracle", "big"]

    monkeypatch.setenv(GPU_K8S_CONFIG_ENV, (DEPLOY / "k8s" / "gpu-run-config.json").read_text())
    defs = build_definitions(str(project_config(with_vllm)))
    closed = defs.resolve_job_def("closed_book").partitioned_config
    grounded = defs.resolve_job_def("grounded").partitioned_config
    assert closed.get_tags_for_partition_key("big")[GPU_TAG] == "true"
    assert "dagster-k8s/config" in closed.get_tags_for_partition_key("big")
    assert GPU_TAG not in closed.get_tags_for_partition_key("oracle")
    assert grounded.get_tags_for_partition_key("big|none")[GPU_TAG] == "true"
    assert GPU_TAG not in grounded.get_tags_for_partition_key("oracle|none")
