"""The Dagster UI as a person uses it: `kgprobe ui` (`dg dev`: webserver and daemon) on a temporary DAGSTER_HOME and a free
port, driven through Debian's chromium with Selenium.

What a person checks: the asset graph shows one group per suite; an asset page shows its last materialization's
metadata and plot; *Materialize* on an unpartitioned asset starts a run that succeeds; *Materialize* on a
partitioned asset opens the partition picker, and a backfill of two partitions completes. Screenshots of every step
go to a folder under the test's tmp_path (printed) and, when ``KGPROBE_UI_SCREENSHOTS`` names a folder, there too.
Skipped, with the reason, when chromium, chromium-driver or selenium is missing (``.ci/run`` installs them).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SCREENSHOTS_ENV = "KGPROBE_UI_SCREENSHOTS"
# the unpartitioned asset materialized from the UI (its metadata carries a plot), and the partitioned one backfilled
UNPARTITIONED = "fpq_edits"
PARTITIONED = "fpq_responses"
BACKFILL_PARTITIONS = ("oracle", "always-yes")
# materialized in-process first, so that the UI's runs find their inputs (the UI materializes fpq_edits again)
BEFORE = ("kg_source", "kg", "fpq_true_triples", "fpq_edits", "fpq_items")
WAIT_S = 240
# flags that let Debian's chromium run headless as root, offline, with nothing left behind
CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                  "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1600,1000")


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    return found or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Screens:
    """Numbered screenshots in `folder` (and in a copy folder when one is given)."""

    def __init__(self, driver, folder: Path, copy_to: Path | None) -> None:
        self.driver, self.folder, self.copy_to, self.n = driver, folder, copy_to, 0
        folder.mkdir(parents=True, exist_ok=True)
        if copy_to is not None:
            copy_to.mkdir(parents=True, exist_ok=True)

    def __call__(self, name: str) -> Path:
        self.n += 1
        path = self.folder / f"{self.n:02d}-{name}.png"
        assert self.driver.save_screenshot(str(path)), f"could not write the screenshot {path}"
        if self.copy_to is not None:
            shutil.copy(path, self.copy_to / path.name)
        return path


@pytest.fixture
def browser(tmp_path: Path) -> Iterator:
    """A headless chromium driven by chromedriver (Service with the binary's path, so selenium-manager never looks
    for one on the network)."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')")
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = _binary("chromium"), _binary("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed (`apt-get install chromium "
                    "chromium-driver`; .ci/run installs them): the UI test needs a real browser")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    try:
        yield driver
    finally:
        driver.quit()


class _DagsterDev:
    """`kgprobe ui` (`dg dev`) in its own process group, with its output in a log file for failure messages."""

    def __init__(self, env: dict, log: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self._out = log.open("wb")
        # as the README tells a person: the code location comes from [tool.dg] in pyproject.toml
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", "ui", "--host", "127.0.0.1", "--port", str(self.port)], cwd=REPO,
            env=env,
            stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True)

    def tail(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-3000:]

    def graphql(self, query: str) -> dict:
        request = urllib.request.Request(f"{self.url}/graphql", data=json.dumps({"query": query}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)

    def wait_ready(self, timeout: float = 120) -> None:
        """Until the webserver answers and the code location has loaded."""
        deadline = time.monotonic() + timeout
        query = "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"kgprobe ui exited with {self.proc.returncode}:\n{self.tail()}"
            try:
                entries = self.graphql(query)["data"]["workspaceOrError"]["locationEntries"]
                if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                    return
            except OSError:
                pass
            time.sleep(1)
        raise AssertionError(f"kgprobe ui did not serve a loaded code location in {timeout}s:\n{self.tail()}")

    def stop(self) -> None:
        try:
            self._stop_group()
        finally:
            self._out.close()

    def _stop_group(self) -> None:
        # dagster dev may linger after SIGTERM (its code servers keep it waiting): the whole group goes, then KILL
        for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=grace)
                os.killpg(self.proc.pid, 0)  # the dev process is gone; are its children?
            except subprocess.TimeoutExpired:
                continue
            except ProcessLookupError:
                return


def _finished_run(instance: dg.DagsterInstance, run_id: str, dev: _DagsterDev) -> dg.DagsterRun:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        run = instance.get_run_by_id(run_id)
        if run is not None and run.is_finished:
            return run
        time.sleep(1)
    raise AssertionError(f"run {run_id} did not finish in {WAIT_S}s:\n{dev.tail()}")


def _finished_backfill(instance: dg.DagsterInstance, backfill_id: str, dev: _DagsterDev):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        backfill = instance.get_backfill(backfill_id)
        assert backfill is not None, f"backfill {backfill_id} is not in the instance"
        if backfill.status.value not in ("REQUESTED", "CANCELING", "FAILING"):
            return backfill
        time.sleep(1)
    raise AssertionError(f"backfill {backfill_id} did not finish in {WAIT_S}s:\n{dev.tail()}")


def _materialize_in_process(config: Path, names: tuple[str, ...]) -> None:
    from pipelines.definitions import build_definitions

    job = build_definitions(str(config)).resolve_implicit_global_asset_job_def()
    with dg.DagsterInstance.get() as instance:
        result = job.get_subset(asset_selection={dg.AssetKey(n) for n in names}).execute_in_process(instance=instance)
    assert result.success, f"materializing {names} in-process failed"


@pytest.mark.slow
def test_ui_graph_asset_page_materialize_and_backfill(
    tmp_path: Path, project_config: Callable[..., Path], browser, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        StaleElementReferenceException,
    )
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from kgprobe.warehouse import read_partition
    from pipelines.definitions import build_definitions

    config = project_config()  # every suite of the sample, the reference models only
    cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    suites = sorted(cfg["suites"])
    models = [m["name"] for m in cfg["models"]]
    assert set(BACKFILL_PARTITIONS) < set(models) and len(suites) > 1
    groups = {spec.group_name for spec in build_definitions(str(config)).resolve_all_asset_specs()}
    assert set(suites) <= groups

    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "pipelines" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))  # dagster.yaml reads its storage folder from it
    env = {**os.environ, "DAGSTER_HOME": str(home), "KGPROBE_CONFIG": str(config)}

    folder = tmp_path / "screenshots"
    copy_to = Path(os.environ[SCREENSHOTS_ENV]) if os.environ.get(SCREENSHOTS_ENV) else None
    shot = _Screens(browser, folder, copy_to)
    print(f"\nUI screenshots: {folder}" + (f" (and {copy_to})" if copy_to else ""))

    with dg.DagsterInstance.get():  # its SQLite storage created once, before two processes open it
        pass
    dev = _DagsterDev(env, tmp_path / "dagster_dev.log")
    try:
        _materialize_in_process(config, BEFORE)  # while the webserver starts
        dev.wait_ready()
        # a fresh DAGSTER_HOME greets a localhost visitor with a newsletter dialog; mark it seen, as Skip would
        assert dev.graphql("mutation { setNuxSeen }")["data"]["setNuxSeen"]
        wait = WebDriverWait(browser, WAIT_S, ignored_exceptions=(StaleElementReferenceException,))

        def xpath(path: str):
            return wait.until(ec.presence_of_element_located((By.XPATH, path)), f"nothing at {path}")

        def click(path: str) -> None:
            # React re-renders while data arrives: find the element afresh until one click lands
            def attempt(driver) -> bool:
                try:
                    ec.element_to_be_clickable((By.XPATH, path))(driver).click()
                    return True
                except (AttributeError, StaleElementReferenceException, ElementClickInterceptedException):
                    return False
            wait.until(attempt, f"nothing clickable at {path}")

        def toast_id(words: str) -> str:
            # the id after ``words`` in a toast, read again until it is there (a toast fading in can show its words
            # before its id is visible)
            def found(driver) -> str | bool:
                for el in driver.find_elements(By.XPATH, f"//*[starts-with(normalize-space(), '{words} ')]"):
                    m = re.search(rf"{words} (\w+)", el.text)
                    if m:
                        return m.group(1)
                return False
            return wait.until(found, f"no toast '{words} <id>'")

        # 1. the global asset graph: one group node per suite, beside the shared stages
        browser.get(f"{dev.url}/asset-groups")
        node = "//*[local-name()='foreignObject']//div[@data-tooltip='{}']"
        for group in sorted(groups):
            xpath(node.format(group))
        shown = {e.get_attribute("data-tooltip") for e in browser.find_elements(
            By.XPATH, "//*[local-name()='foreignObject']//div[@data-tooltip]")}
        shot("asset-graph")
        assert groups <= shown, f"groups missing from the graph: {sorted(groups - shown)}"

        # 2. Materialize on an unpartitioned asset starts a run (checked below, while the backfill runs too)
        browser.get(f"{dev.url}/assets/{UNPARTITIONED}")
        click("//button[normalize-space()='Materialize']")
        prefix = toast_id("Launched run")
        shot("materialize-launched")

        # 3. Materialize on a partitioned asset opens the partition picker; a backfill of two partitions
        browser.get(f"{dev.url}/assets/{PARTITIONED}")
        click("//button[normalize-space()='Materialize…']")  # the ellipsis: the partitions have loaded
        title = f"Launch runs to materialize {PARTITIONED}"
        dialog = f"//*[@role='dialog'][.//*[normalize-space()='{title}']]"
        click(f"{dialog}//*[contains(text(), 'Select a partition')]")
        for model in models:  # the picker lists every model partition of the config
            xpath(f"//*[@title='{model}']")
        shot("partition-picker")
        for key in BACKFILL_PARTITIONS:
            click(f"//*[@title='{key}']")
        click(f"{dialog}//*[normalize-space()='{title}']")  # closes the picker's list, not the dialog
        wait.until(ec.invisibility_of_element_located((By.XPATH, "//input[@placeholder='Filter partitions']")))
        xpath(f"{dialog}//*[normalize-space()='{len(BACKFILL_PARTITIONS)} partitions']")
        for key in BACKFILL_PARTITIONS:
            xpath(f"{dialog}//*[normalize-space()='{key}']")
        shot("backfill-two-partitions")
        click(f"{dialog}//button[normalize-space()='Launch backfill']")
        backfill_id = toast_id("Created backfill")
        shot("backfill-created")

        # the run from step 2 succeeded, and wrote the asset's latest materialization
        with dg.DagsterInstance.get() as instance:
            [run_id] = [r.run_id for r in instance.get_runs() if r.run_id.startswith(prefix)]
            run = _finished_run(instance, run_id, dev)
            assert run.status == dg.DagsterRunStatus.SUCCESS, f"run {run_id} ended {run.status}:\n{dev.tail()}"
            assert run.tags.get("dagster/from_ui") == "true" and "dagster/backfill" not in run.tags
            event = instance.get_latest_materialization_event(dg.AssetKey(UNPARTITIONED))
        assert event is not None and event.run_id == run_id
        metadata = event.asset_materialization.metadata
        browser.get(f"{dev.url}/runs/{run_id}")
        xpath("//*[normalize-space()='Success']")
        shot("materialize-run-succeeded")

        # 4. the asset page shows that materialization's metadata, and its plot
        browser.get(f"{dev.url}/assets/{UNPARTITIONED}")
        row_count = metadata["dagster/row_count"].value
        xpath(f"//*[normalize-space()='Row count']/following::*[normalize-space()='{row_count:,}' or "
              f"normalize-space()='{row_count}']")
        texts = {k: v.value for k, v in metadata.items() if isinstance(v, dg.TextMetadataValue) and "'" not in v.value}
        assert texts, f"{UNPARTITIONED} has no text metadata to look for"
        for key, value in texts.items():
            xpath(f"//tr[td[normalize-space()='{key}']]//*[normalize-space()='{value}']")
        shot("asset-page-metadata")
        plot_key = next(k for k, v in metadata.items() if isinstance(v, dg.MarkdownMetadataValue)
                        and "data:image/png;base64," in v.value)
        expected_src = re.search(r"\((data:image/png;base64,[^)]+)\)", metadata[plot_key].value).group(1)
        click(f"//tr[td[normalize-space()='{plot_key}']]//*[contains(text(), 'Show Markdown')]")
        plot = f"//*[@role='dialog'][.//*[normalize-space()='{plot_key}']]//img"
        image = wait.until(lambda d: (img := d.find_element(By.XPATH, plot)).get_property("complete")
                           and img.get_property("naturalWidth") > 0 and img, f"no loaded image at {plot}")
        assert image.get_attribute("src") == expected_src
        assert image.get_property("naturalWidth") > 200 and image.get_property("naturalHeight") > 100
        shot("asset-page-plot")

        # the backfill from step 3 completed: one successful run per chosen partition
        with dg.DagsterInstance.get() as instance:
            backfill = _finished_backfill(instance, backfill_id, dev)
            runs = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
        assert backfill.status.value == "COMPLETED_SUCCESS", f"backfill ended {backfill.status}:\n{dev.tail()}"
        assert sorted(r.tags["dagster/partition"] for r in runs) == sorted(BACKFILL_PARTITIONS)
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs), [(r.run_id, r.status) for r in runs]
        browser.get(f"{dev.url}/runs/b/{backfill_id}")
        xpath("//*[normalize-space()='Succeeded']")
        shot("backfill-succeeded")
    except Exception:
        with contextlib.suppress(Exception):  # the page as it was when the test failed, for a person to look at
            print(f"failure screenshot: {shot('failure')}")
        raise
    finally:
        dev.stop()

    for key in BACKFILL_PARTITIONS:
        rows = read_partition(tmp_path / "warehouse", PARTITIONED, {"model": key}).to_pylist()
        assert rows and {r["model"] for r in rows} == {key}
