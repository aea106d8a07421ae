"""The documentation site: every page is in the nav and the nav names no missing page; every code block of the
tutorials runs as written (in a fresh folder, offline) unless a ``<!-- no-test: reason -->`` line right above it
says why not."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
TUTORIALS = sorted((DOCS / "tutorials").glob("*.md"))
FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"<!--\s*no-test\b(.*?)-->", re.S)
RUNNERS = {"bash": "bash", "sh": "bash", "python": "python"}


def _hooks():
    spec = importlib.util.spec_from_file_location("kgprobe_docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generated() -> tuple[str, ...]:
    return _hooks().GENERATED


def blocks(text: str) -> list[dict]:
    """Every fenced block of a page: its language, code, line, and the no-test reason above it (None: none;
    "" a marker without a reason)."""
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        marker = MARKER.fullmatch(before)
        reason = None
        if marker is not None:
            reason = marker.group(1).strip()
            reason = reason[1:].strip() if reason.startswith(":") else ""
        found.append({"lang": match.group(1).lower(), "code": match.group(2), "reason": reason,
                      "line": text.count("\n", 0, match.start()) + 1})
    return found


def _nav_pages(nav) -> list[str]:
    pages = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_nav_and_pages_agree() -> None:
    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    generated = set(_generated())
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    assert sorted(on_disk - set(nav)) == [], "pages in docs/ that the nav does not list"
    assert sorted(set(nav) - on_disk - generated) == [], "nav entries with no page"
    assert generated <= set(nav) and not generated & on_disk


def test_references_are_generated_from_the_cli_and_the_config_models() -> None:
    hooks = _hooks()
    cli = hooks.cli_reference()
    for command in ("run", "init", "jobs", "plan", "schema", "ui", "compare", "import-responses", "export"):
        assert f"## kgprobe {command}\n" in cli
    assert "--partition PARTITION" in cli and "--format {jsonl,hf,lm-eval,inspect}" in cli
    fpq = hooks.config_keys("suites.fpq")
    assert "### `suites.fpq`" in fpq and "| `max_hops` |" in fpq and "### `suites.fpq.domains.<name>`" in fpq
    assert "| `limit` |" not in hooks.config_keys("suites.grapheval").split("### `suites.grapheval.")[0]
    with pytest.raises(ValueError, match="no section suites.nope"):
        hooks.config_keys("suites.nope")
    checks = hooks.checks_reference()
    assert "| `kg_not_empty` | `kg` | blocks the run" in checks
    assert "| `fpq_edit_coverage` | `fpq_edits` | warns or fails, the run goes on |" in checks
    assert "`okgqa_grounded_scores_unknown_share`" in checks and "| |" not in checks  # every check says what it does


def test_block_parser_reads_markers() -> None:
    page = ("<!-- no-test: needs a GPU -->\n```bash\nnvidia-smi\n```\n\n<!-- no-test -->\n```bash\nx\n```\n\n"
            "```python\nprint(1)\n```\n")
    assert [(b["lang"], b["reason"]) for b in blocks(page)] == [("bash", "needs a GPU"), ("bash", ""),
                                                                ("python", None)]


@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_blocks_are_runnable_or_say_why_not(page: Path) -> None:
    found = blocks(page.read_text(encoding="utf-8"))
    assert found, f"{page.name} has no code block"
    for block in found:
        where = f"{page.name}:{block['line']}"
        assert block["reason"] != "", f"{where}: a no-test marker needs a reason: <!-- no-test: why -->"
        if block["reason"] is None:
            assert block["lang"] in RUNNERS, (f"{where}: a {block['lang'] or 'plain'} block cannot be run; mark it "
                                              "<!-- no-test: why --> or make it bash or python")
            assert "../shared" not in block["code"], f"{where}: a tutorial block may not read ../shared"


@pytest.mark.slow
@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_blocks_run(page: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KGPROBE_CONFIG", "KGPROBE_WAREHOUSE", "DAGSTER_HOME")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["HF_HUB_OFFLINE"] = "1"
    ran = 0
    for block in blocks(page.read_text(encoding="utf-8")):
        if block["reason"] is not None:
            continue
        if RUNNERS[block["lang"]] == "bash":
            cmd = ["bash", "-euo", "pipefail", "-c", block["code"]]
        else:
            cmd = [sys.executable, "-c", block["code"]]
        done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (f"{page.name}:{block['line']} exited {done.returncode}\n"
                                      f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        ran += 1
    if page.name != "papers.md":  # every block there needs a paper's data set
        assert ran > 0, f"{page.name}: no block ran"
