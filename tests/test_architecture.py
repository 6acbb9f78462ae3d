"""The package's shape holds: imports go one way (no cycle, counting imports inside functions and under
`TYPE_CHECKING`), and no module grows past what one reader takes in (docs/architecture.md)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_django"
MAX_LINES = 500


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def _imported(node: ast.Import | ast.ImportFrom, module: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The dotted names an import statement reaches.

    `from x import y` reaches the submodule `x.y` when there is one (its package `x` runs first in
    any case, as the parent of every submodule, so that is no edge of its own), else the module `x`.
    """
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    for alias in node.names:
        submodule = f"{target}.{alias.name}"
        yield submodule if submodule in modules else target


def import_graph() -> dict[str, set[str]]:
    """Each module of the package -> the package modules it imports, anywhere in its body."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for name in _imported(node, module, path, modules):
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    edges.add(name)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_scanner_finds_a_cycle_through_an_import_inside_a_function() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_package_takes_part_in_an_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_no_module_is_longer_than_what_one_reader_takes_in() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): length
        for path in _modules().values()
        if (length := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
