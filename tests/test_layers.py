"""The package's layering, checked on the source: no import circles, nothing imports a higher
layer, and no private name (``_x``) is imported from another module (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "toposolve"

# Lower layers never import higher ones; packages of one rank do not import each other.
RANKS = {
    "core": 0,
    "policy": 1,
    "formats": 2,
    "check": 2,
    "engines": 3,
    "generate": 3,
    "solve": 4,
    "defrag": 4,
    "analysis": 5,
    "sim": 6,
    "report": 7,
    "cli": 8,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text()) for p in sorted(SRC.rglob("*.py"))}


def imports(tree: ast.Module, known: set[str]) -> list[tuple[str, list[str]]]:
    """(imported module, names) of every import statement, at any depth of the tree."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith(PACKAGE):
                names = [a.name for a in node.names]
                submodules = [f"{node.module}.{n}" for n in names if f"{node.module}.{n}" in known]
                found.append((node.module, [n for n in names if f"{node.module}.{n}" not in known]))
                found.extend((m, []) for m in submodules)
        elif isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names if a.name.startswith(PACKAGE))
    return found


def top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.fixture(scope="module")
def graph() -> dict[str, list[tuple[str, list[str]]]]:
    trees = modules()
    return {name: imports(tree, set(trees)) for name, tree in trees.items()}


def test_every_top_level_package_has_a_rank(graph):
    tops = {top(m) for m in graph} - {""}
    assert tops <= set(RANKS), tops - set(RANKS)


def test_nothing_imports_a_higher_layer(graph):
    upward = [
        f"{src} imports {dst}"
        for src, deps in graph.items()
        for dst, _ in deps
        if top(src) in RANKS
        and top(dst) in RANKS
        and top(src) != top(dst)
        and RANKS[top(dst)] >= RANKS[top(src)]
    ]
    assert upward == []


def test_no_private_name_is_imported_across_modules(graph):
    private = [
        f"{src} imports {dst}.{name}"
        for src, deps in graph.items()
        for dst, names in deps
        for name in names
        if name.startswith("_") and dst != src
    ] + [
        f"{src} imports private module {dst}"
        for src, deps in graph.items()
        for dst, _ in deps
        if any(p.startswith("_") and p != "__init__" for p in dst.split(".")[1:])
        and not src.startswith(dst.rsplit(".", 1)[0])
    ]
    assert private == []


def test_no_import_circle(graph):
    edges = {m: {d for d, _ in deps if d in graph and d != m} for m, deps in graph.items()}
    # a package's __init__ re-exporting its children is not a circle through them
    edges = {m: {d for d in ds if not m.startswith(d + ".")} for m, ds in edges.items()}
    circles, index, low, stack, on_stack = [], {}, {}, [], set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
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
                circles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert circles == []
