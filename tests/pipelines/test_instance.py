"""The Dagster home `kgprobe run` and `kgprobe ui` share, and `kgprobe ui` (`dg dev`) started as a person starts it:
in the foreground or in the background, stopped by SIGTERM or SIGINT, quiet about its own setup."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from kgprobe.errors import ConfigError
from pipelines import instance
from pipelines.instance import INSTANCE_CONFIG, dagster_home

REPO = Path(__file__).resolve().parents[2]


def test_a_new_home_gets_the_instance_config_and_an_absolute_path(tmp_path: Path) -> None:
    env: dict[str, str] = {}
    home, note = dagster_home(env, cwd=tmp_path)
    assert home == tmp_path / ".dagster_home" and note is None
    assert env["DAGSTER_HOME"] == str(home) and Path(env["DAGSTER_HOME"]).is_absolute()
    assert (home / "dagster.yaml").read_bytes() == INSTANCE_CONFIG.read_bytes()
    # the queue and the GPU limit the README describes are what Dagster will read there
    settings = yaml.safe_load((home / "dagster.yaml").read_text(encoding="utf-8"))
    assert settings["concurrency"]["runs"]["max_concurrent_runs"] == 4
    assert settings["concurrency"]["runs"]["tag_concurrency_limits"] == [
        {"key": "kgprobe/gpu", "value": "true", "limit": 1}]


def test_a_relative_dagster_home_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"DAGSTER_HOME": "dh"}
    home, _ = dagster_home(env)
    assert home == tmp_path / "dh" and env["DAGSTER_HOME"] == str(tmp_path / "dh")


def test_a_users_instance_config_is_kept_and_the_difference_said(tmp_path: Path) -> None:
    home = tmp_path / "dh"
    home.mkdir()
    edited = INSTANCE_CONFIG.read_text(encoding="utf-8").replace("max_concurrent_runs: 4", "max_concurrent_runs: 1")
    (home / "dagster.yaml").write_text(edited, encoding="utf-8")
    _, note = dagster_home({"DAGSTER_HOME": str(home)})
    assert (home / "dagster.yaml").read_text(encoding="utf-8") == edited
    assert note is not None and str(home / "dagster.yaml") in note and "diff" in note


def test_comments_alone_are_no_difference(tmp_path: Path) -> None:
    home = tmp_path / "dh"
    home.mkdir()
    (home / "dagster.yaml").write_text("# my notes\n" + INSTANCE_CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    assert dagster_home({"DAGSTER_HOME": str(home)})[1] is None


def test_a_file_as_dagster_home_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="DAGSTER_HOME=.* is a file"):
        dagster_home({"DAGSTER_HOME": str(tmp_path / "f")})


def test_the_working_folder_holds_no_instance_config() -> None:
    # Dagster warns that a dagster.yaml in the folder `dg dev` runs in is ignored (it reads only DAGSTER_HOME's)
    assert not (REPO / "dagster.yaml").exists() and not (REPO / "dagster.yml").exists()


def test_ui_command_is_dg_dev_on_the_repository(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "dg"
    fake.write_text("", encoding="utf-8")
    monkeypatch.setattr(instance, "dg_executable", lambda: fake)
    assert instance.ui_command(host="0.0.0.0", port=4000) == [
        str(fake), "dev", "--target-path", str(REPO), "--host", "0.0.0.0", "--port", "4000"]


def test_ui_with_a_missing_config_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--config .*nope.yaml: no such file"):
        instance.start_ui(config=tmp_path / "nope.yaml", environ={"DAGSTER_HOME": str(tmp_path / "dh")})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_free(port: int) -> bool:
    """Whether a new server could listen on ``port`` now (SO_REUSEADDR, as servers bind: the closed connections of
    the old one may linger in TIME_WAIT, a listener may not)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_ui_started_in_the_background_stops_on_a_signal(sig: signal.Signals, tmp_path: Path) -> None:
    psutil = pytest.importorskip("psutil")
    port, log = _free_port(), tmp_path / "ui.log"
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dh"), "PYTHONPATH": str(REPO)}
    env.pop("KGPROBE_CONFIG", None)
    # as a person types it: `kgprobe ui ... &` in a shell without job control, which starts the job with SIGINT
    # ignored (and so, before, Dagster's dev command ignored SIGTERM too)
    line = f"'{sys.executable}' -m pipelines.cli ui --host 127.0.0.1 --port {port} > '{log}' 2>&1 & echo $!"
    pid = int(subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                             check=True).stdout.strip())
    proc = psutil.Process(pid)
    family = [proc]
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE, log.read_text(errors="replace")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5) as response:
                    assert response.status == 200
                break
            except OSError:
                assert time.monotonic() < deadline, "the UI did not answer in 180 s:\n" + log.read_text(errors="replace")
                time.sleep(1)
        family = [proc, *proc.children(recursive=True)]
        assert len(family) >= 4  # dg dev, its webserver, its daemon and its code server
        started = time.monotonic()
        proc.send_signal(sig)
        gone, alive = psutil.wait_procs(family, timeout=45)
        took = time.monotonic() - started
        text = log.read_text(errors="replace")
        assert not alive, f"still running {took:.0f} s after {sig.name}: {[p.cmdline()[:4] for p in alive]}\n{text}"
        assert _port_free(port)
        # and nothing to warn about in how it was started
        assert "superseded" not in text and "will not be used to configure Dagster" not in text, text
        assert "Dagster services shut down" in text
    finally:
        try:
            family += proc.children(recursive=True)
        except psutil.Error:
            pass
        for p in family:
            try:
                p.kill()
            except psutil.Error:
                pass
