"""MkDocs hook: the CLI and config references, generated from the code at every build so that they cannot drift.

``reference/cli.md`` is ``kgprobe --help`` and ``kgprobe <command> --help`` for every subcommand, run in-process
through the argparse parser of ``pipelines.cli``; ``reference/config.md`` is the pydantic models' JSON schema
(``kgprobe schema``), one table of keys (type, default, description) per config section; ``reference/checks.md`` is
every data-quality check the bundled sample's code location defines (all five suites, closed book and grounded).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# pages this hook writes; tests/test_docs.py reads this to tell generated pages from files in docs/
GENERATED = ("reference/cli.md", "reference/config.md", "reference/checks.md")


def _ensure_path() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _help(argv: list[str]) -> str:
    from pipelines.cli import main

    out = io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "110"  # argparse wraps at $COLUMNS: a fixed width keeps the page the same everywhere
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(argv)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return out.getvalue().rstrip() + "\n"


def subcommands() -> list[str]:
    """The subcommands, in the order ``kgprobe --help`` lists them."""
    usage = _help(["--help"])
    match = re.search(r"\{([a-z0-9_,-]+)\}", usage)
    if match is None:
        raise RuntimeError("kgprobe --help lists no subcommands in {...}; the CLI reference cannot be generated")
    return match.group(1).split(",")


def cli_reference() -> str:
    _ensure_path()
    parts = [
        "# CLI reference\n",
        "Generated from `kgprobe --help` when the site is built, so it is the installed command's own text.\n",
        "```text\n" + _help(["--help"]) + "```\n",
    ]
    for cmd in subcommands():
        parts.append(f"## kgprobe {cmd}\n\n```text\n{_help([cmd, '--help'])}```\n")
    return "\n".join(parts)


# ---- config reference -------------------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def _first_paragraph(text: str | None) -> str:
    if not text:
        return ""
    para = text.strip().split("\n\n")[0]
    return " ".join(line.strip() for line in para.splitlines())


class _Schema:
    def __init__(self, schema: dict):
        self.root = schema
        self.defs = schema.get("$defs", {})

    def resolve(self, node: dict) -> dict:
        while "$ref" in node:
            node = self.defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def type_of(self, node: dict) -> str:
        if "$ref" in node:
            return node["$ref"].rsplit("/", 1)[-1]
        if "enum" in node:
            return " | ".join(json.dumps(v) for v in node["enum"])
        if "const" in node:
            return json.dumps(node["const"])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return " | ".join(self.type_of(n) for n in node[key])
        kind = node.get("type")
        if kind == "array":
            items = node.get("items")
            if isinstance(items, dict) and items:
                return f"list[{self.type_of(items)}]"
            if "prefixItems" in node:
                return "[" + ", ".join(self.type_of(n) for n in node["prefixItems"]) + "]"
            return "list"
        if kind == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"map[str, {self.type_of(extra)}]"
            return node.get("title", "object") if "properties" in node else "object"
        if isinstance(kind, list):
            return " | ".join(kind)
        return kind or "any"

    def children(self, path: str, node: dict) -> list[tuple[str, dict]]:
        """The objects with keys of their own under one property: (key path, object schema)."""
        if "$ref" in node:
            target = self.resolve(node)
            return [(path, target)] if "properties" in target else self.children(path, target)
        found: list[tuple[str, dict]] = []
        for key in ("anyOf", "oneOf"):
            for option in node.get(key, []):
                tagged = path
                target = self.resolve(option)
                backend = target.get("properties", {}).get("backend", {})
                if key == "oneOf" and "const" in backend:
                    tagged = f"{path} (backend: {backend['const']})"
                elif key == "oneOf" and len(backend.get("enum", [])) == 1:
                    tagged = f"{path} (backend: {backend['enum'][0]})"
                found += self.children(tagged, option)
        if "properties" in node:
            found.append((path, node))
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            found += self.children(path + "[]", node["items"])
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            found += self.children(path + ".<name>", extra)
        return found


def config_sections() -> list[tuple[str, str]]:
    """(key path, Markdown: the section's description and its table of keys), depth first from the top level."""
    _ensure_path()
    from kgprobe.config import project_schema

    schema = _Schema(project_schema())
    sections: list[tuple[str, str]] = []
    queue: list[tuple[str, dict]] = [("", schema.root)]
    seen: set[str] = set()
    while queue:
        path, node = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        out = []
        desc = _first_paragraph(node.get("description"))
        if desc:
            out.append(_cell(desc) + "\n")
        required = set(node.get("required", []))
        rows = ["| key | type | default | description |", "|---|---|---|---|"]
        nested: list[tuple[str, dict]] = []
        for key, prop in node.get("properties", {}).items():
            if "default" in prop:
                default = json.dumps(prop["default"], ensure_ascii=False)
                if len(default) > 60:
                    default = default[:57] + "…"
                default = f"`{_cell(default)}`"
            else:
                default = "required" if key in required else ""
            text = _first_paragraph(prop.get("description"))
            if prop.get("deprecated"):
                text = ("deprecated. " + text).strip()
            rows.append(f"| `{key}` | {_cell(schema.type_of(prop))} | {default} | {_cell(text)} |")
            nested += schema.children(f"{path}.{key}" if path else key, prop)
        out.append("\n".join(rows) + "\n")
        sections.append((path, "\n".join(out)))
        queue = nested + queue  # depth first: a section's subsections follow it
    return sections


def config_reference() -> str:
    out = [
        "# Config reference\n",
        "Generated from the project config's pydantic models (`kgprobe schema` prints the same as JSON schema) when "
        "the site is built. Every section rejects keys it does not list. Paths are key paths in the YAML file: "
        "`<name>` is a key you choose, `[]` an entry of a list. How each setting is used is on the page of its "
        "stage or suite.\n",
    ]
    for path, body in config_sections():
        out.append(f"## {f'`{path}`' if path else 'Top level'}\n\n{body}")
    return "\n".join(out)


def checks_reference() -> str:
    """Every asset check of the sample config's Definitions: its asset, whether it blocks, what it checks."""
    _ensure_path()
    import warnings

    from pipelines.definitions import build_definitions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        defs = build_definitions(str(ROOT / "examples" / "sample.yaml"))
    specs = sorted((spec for cd in defs.asset_checks or [] for spec in cd.check_specs),
                   key=lambda s: (s.asset_key.to_user_string(), s.name))
    rows = ["| check | asset | when it fails | what it checks |", "|---|---|---|---|"]
    rows += [f"| `{s.name}` | `{s.asset_key.to_user_string()}` | "
             f"{'blocks the run (the assets after it do not run)' if s.blocking else 'warns or fails, the run goes on'} "
             f"| {_cell(s.description or '')} |" for s in specs]
    return "\n".join([
        "# Data-quality checks\n",
        "Generated when the site is built from the checks the bundled sample's config defines (every suite, closed "
        "book and grounded; a config defines the checks of the suites it enables). A suite's checks repeat per "
        "suite: `<suite>_scores_expectations` and so on. A warning that fires is printed at the end of `kgprobe run` "
        "with its details and kept in `results.json`; `kgprobe ui` shows every evaluation with its metadata.\n",
        *rows, ""])


KEYS_MARKER = re.compile(r"^<!-- config-keys: ([A-Za-z0-9_.]+) -->$", re.M)


def config_keys(prefix: str) -> str:
    """The tables of the config sections at ``prefix`` and below it, for a stage's or a suite's own page."""
    found = [(path, body) for path, body in config_sections() if path == prefix or path.startswith(prefix + ".")
             or path.startswith(prefix + "[")]
    if not found:
        raise ValueError(f"<!-- config-keys: {prefix} -->: the config has no section {prefix}")
    return "\n".join(f"### `{path}`\n\n{body}" for path, body in found)


def on_page_markdown(markdown, page, config, files):
    return KEYS_MARKER.sub(lambda m: config_keys(m.group(1)), markdown)


def on_files(files, config):
    from mkdocs.structure.files import File

    for uri, render in zip(GENERATED, (cli_reference, config_reference, checks_reference)):
        files.append(File.generated(config, uri, content=render()))
    return files
