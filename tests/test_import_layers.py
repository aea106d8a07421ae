"""The layers of ``kgprobe/`` import one another in one direction, and the package imports no Dagster.

The import graph is read from the source by AST, without importing anything. It holds

* every module-level import (also those under a module-level ``if`` or ``try``, but not under
  ``if TYPE_CHECKING:``), with an edge to each package ``__init__`` the import runs on the way
  (``from kgprobe.suites.fpq.settings import X`` runs ``kgprobe/suites/__init__.py`` first), and
* every function-level (lazy) import, as an edge to the module it names: it runs after the modules are loaded,
  so it does not run package ``__init__`` files at import time, but a loop through it is a loop all the same.

A cycle in that graph fails the test with its modules and the lines that import them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(root: Path, package: str) -> dict[str, Path]:
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node):
                yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _module_level(block)


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: dict[str, Path]) -> list[str]:
    """The known modules an import statement names (a name imported from a package may be a submodule)."""

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        names = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
    return [t for t in map(resolve, names) if t is not None]


def import_graph(root: Path, package: str) -> dict[str, dict[str, list[int]]]:
    """module -> {imported module: [line, ...]} for the modules of ``package`` under ``root`` (see the module
    docstring for which imports count)."""
    known = _modules(root, package)
    graph: dict[str, dict[str, list[int]]] = {}
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        edges: dict[str, list[int]] = {}
        top = list(_module_level(tree.body))
        for node in top:
            for target in _targets(node, module, is_package, known):
                edges.setdefault(target, []).append(node.lineno)
                parts = target.split(".")
                for i in range(1, len(parts)):  # the package __init__ files the import runs first
                    parent = ".".join(parts[:i])
                    if parent in known and not module.startswith(parent + "."):
                        edges.setdefault(parent, []).append(node.lineno)
        skip = {id(n) for n in top} | {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                                       and _is_type_checking(block) for s in block.body for n in ast.walk(s)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
                for target in _targets(node, module, is_package, known):
                    edges.setdefault(target, []).append(node.lineno)
        edges.pop(module, None)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, dict[str, list[int]]]) -> list[tuple[list[str], list[str]]]:
    """Per strongly connected component of more than one module: one cycle through it (a closed path of modules)
    and all its modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan; the package has ~100 modules, so recursion depth is no concern
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for component in components:  # a shortest path back to the start, within the component
        members, start = set(component), min(component)
        paths = {start: [start]}
        frontier = [start]
        found = None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w == start:
                        found = paths[v] + [start]
                        break
                    if w in members and w not in paths:
                        paths[w] = paths[v] + [w]
                        nxt.append(w)
                if found:
                    break
            frontier = nxt
        out.append((found, sorted(members)))
    return out


def _describe(graph: dict[str, dict[str, list[int]]], cycle: list[str]) -> str:
    return " -> ".join(cycle) + "  (" + "; ".join(
        f"{a} line {', '.join(map(str, sorted(set(graph[a][b]))))}" for a, b in zip(cycle, cycle[1:])) + ")"


def test_kgprobe_imports_have_no_cycle() -> None:
    graph = import_graph(ROOT, "kgprobe")
    assert len(graph) > 50  # the walk found the package
    assert sum(map(len, graph.values())) > 100  # the imports were read
    found = cycles(graph)
    assert not found, "import cycles in kgprobe/:\n" + "\n".join(
        f"{_describe(graph, c)}; in a loop together: {', '.join(m)}" for c, m in found)


def test_the_cycle_finder_names_a_loop_through_a_lazy_import_and_a_package_init(tmp_path: Path) -> None:
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from toy.sub.b import B\n")
    (pkg / "sub" / "b.py").write_text("B = 1\n\ndef f():\n    from toy.a import A\n    return A\n")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.c import C\n"
                              "from toy.sub.b import B as _B\nA = 2\n")
    (pkg / "c.py").write_text("from toy.a import A\n")
    graph = import_graph(tmp_path, "toy")
    assert graph["toy.a"] == {"toy.sub.b": [4], "toy.sub": [4]}  # the TYPE_CHECKING import is left out
    assert graph["toy.sub.b"] == {"toy.a": [4]}  # lazy: the module only, no package __init__
    found = cycles(graph)
    assert found == [(["toy.a", "toy.sub.b", "toy.a"], ["toy.a", "toy.sub", "toy.sub.b"])]
    assert _describe(graph, found[0][0]) == "toy.a -> toy.sub.b -> toy.a  (toy.a line 4; toy.sub.b line 4)"


def test_kgprobe_imports_no_dagster() -> None:
    # the package is the library; the Dagster asset graph (assets/, pipelines/, resources/) sits on top of it
    offenders = []
    for path in sorted((ROOT / "kgprobe").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(n == "dagster" or n.startswith(("dagster.", "dagster_")) for n in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, f"kgprobe/ must not import Dagster: {', '.join(offenders)}"
