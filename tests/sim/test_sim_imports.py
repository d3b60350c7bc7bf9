"""No import circle in sim/ or ui/: no two modules import each other, directly or in a loop.

Every import counts, at module level or inside a function (a late import closes a circle at
run time but leaves the design seam), absolute (`sim.…`, `ui.…`) or relative. `from p import n`
is an edge to the module p.n when there is one, else to p (its package's __init__); a package
is not counted as imported by its own submodules' imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("sim", "ui")


def module_names(package: str) -> dict[str, Path]:
    """Dotted name → file, for every module of `package` (packages as their __init__)."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of `known` that the module `name` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in known:  # import sim.rules.x → sim.rules
                    target = target.rpartition(".")[0]
                if target:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, name, is_package)
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    found.add(f"{base}.{alias.name}")
                elif base in known:
                    found.add(base)
    return found - {name}


def import_graph() -> dict[str, set[str]]:
    known = {n: p for package in PACKAGES for n, p in module_names(package).items()}
    return {n: imports_of(n, p, known) for n, p in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One loop per strongly connected component of more than one module, as a path that
    returns to its start (Tarjan's algorithm, then a walk inside the component)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    loops = []
    for component in components:
        start = min(component)
        path, seen = [start], {start}
        while True:  # every module of the component reaches start, so this walk closes
            nxt = sorted(w for w in graph[path[-1]] if w in component)
            if start in nxt:
                loops.append([*path, start])
                break
            step = next((w for w in nxt if w not in seen), nxt[0])
            if step in seen:
                loops.append([*path[path.index(step):], step])
                break
            path.append(step)
            seen.add(step)
    return loops


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package: str) -> None:
    graph = {n: {w for w in ws if w.split(".")[0] == package}
             for n, ws in import_graph().items() if n.split(".")[0] == package}
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" → ".join(c) for c in found)


def test_the_cycle_check_names_a_loop() -> None:
    """The check itself: a loop of three is found and named, a chain is not a loop."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_the_graph_sees_late_and_relative_imports() -> None:
    graph = import_graph()
    assert "sim.registry" in graph["sim.rules"]          # from .registry import …
    assert "sim.validation" in graph["sim.rules"]        # from . import validation as check
    assert "sim.scenarios" in graph["ui.pages.gates_run"]    # a function-level import
