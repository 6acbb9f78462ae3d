"""The package's shape holds: imports go one way (down the layer table, and no cycle, counting imports
inside functions and under `TYPE_CHECKING`), and no module grows past what one reader takes in
(docs/architecture.md)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_django"
MAX_LINES = 500


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = path.relative_to(package.parent).with_suffix("").parts
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


def _imported_on_first_use(node: ast.Call) -> list[str]:
    """The module a `first_use("<module>", "<name>")` call imports (`mcp_django/runtime/first_use.py`)."""
    function = node.func
    called = function.id if isinstance(function, ast.Name) else getattr(function, "attr", None)
    if called == "first_use" and node.args and isinstance(node.args[0], ast.Constant):
        return [str(node.args[0].value)]
    return []


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of the package -> the package modules it imports, anywhere in its body."""
    modules = _modules(package)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = list(_imported(node, module, path, modules))
            elif isinstance(node, ast.Call):
                names = _imported_on_first_use(node)
            else:
                continue
            for name in names:
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


LAYERS: dict[str, int] = {
    # 0 the protocol core: JSON-RPC and MCP on plain dicts, no Django
    "mcp_django.protocol": 0,
    # 1 settings and what every layer above uses
    **dict.fromkeys(["version", "conf", "exceptions", "checks.support", "content"], 1),
    "runtime": 1,  # how a call runs: sync code's threads, time limits, units of work, results, notifications
    # 2 who is calling, and the rows the core keeps
    **dict.fromkeys(["scopes", "permissions", "auth", "context", "forms", "models"], 2),
    # 3 what is served, and what runs around every operation
    **dict.fromkeys(["declarations", "sources", "registry", "providers", "toolsets", "bus", "interceptors"], 3),
    "safety": 3,  # safe side effects around tool calls: idempotency keys
    # 4 endpoints (admission, composition, sessions, mounts, the overlay), and the seam extensions plug into
    **dict.fromkeys(["extensions", "endpoints"], 4),
    # 5 extensions and optional parts (the core imports none of them)
    **dict.fromkeys(
        ["tasks", "skills", "ui", "gateway", "oauth", "client", "telemetry", "discovery", "events", "catalogues"], 5
    ),
    "interceptors.protocol": 5,  # SEP-2624's wire methods: an extension on the seam (InterceptorsExtension)
    # 6 transports
    **dict.fromkeys(["transports", "asgi", "wsgi", "servers"], 6),
    # 7 the control plane (the admin's overlay, installed in ready())
    "control": 7,
    # 8 Django glue, the checks of everything, the tools that drive the whole package
    **dict.fromkeys(["apps", "admin", "urls", "views", "routing", "management", "checks"], 8),
    **dict.fromkeys(["testing", "inspection"], 8),
    "mcp_django": 8,  # the public face (the package's __init__): names from every layer; nothing inside imports it
    "oauth.urls": 8,  # the OAuth app's URLconf: wiring, like urls.py (its views take the transports' body limit)
    # the gateway app's admin (the core admin's switches, the control plane's inventory) and URLconf: wiring
    **dict.fromkeys(["gateway.admin", "gateway.urls"], 8),
    "discovery.urls": 8,  # the discovery app's URLconf: wiring (its views take the transports' body limit)
}
"""Each module or subpackage of `mcp_django` -> its layer (docs/architecture.md); a module may import its
own layer and those below, never one above. The longest matching name decides."""


def layer_of(module: str, layers: dict[str, int], root: str = "mcp_django") -> int:
    """The layer of `module`: that of the longest name in `layers` it is or lies under.

    Raises:
        KeyError: `layers` does not place the module.
    """
    if module == root and root in layers:
        return layers[root]
    name = module
    while name != root and name:  # the root's entry is the package's own module, no default for the others
        for key in (name, name.removeprefix(f"{root}.")):
            if key in layers:
                return layers[key]
        name = name.rpartition(".")[0]
    raise KeyError(f"{module} is in no layer: add it to LAYERS (and to docs/architecture.md)")


def upward_imports(
    graph: dict[str, set[str]], layers: dict[str, int], root: str = "mcp_django"
) -> set[tuple[str, str]]:
    """Every (importer, imported) pair of `graph` where the imported module lies in a higher layer."""
    return {
        (module, other)
        for module, edges in graph.items()
        for other in edges
        if layer_of(other, layers, root) > layer_of(module, layers, root)
    }


def test_the_layer_scanner_finds_an_upward_import_inside_a_function_and_under_type_checking(tmp_path: Path) -> None:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text("def load():\n    from shop import extra\n    return extra\n")
    (package / "base.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from shop.core import load\n"
    )
    (package / "extra.py").write_text("import shop.core\n")
    layers = {"shop": 0, "base": 0, "core": 1, "extra": 2}

    assert upward_imports(import_graph(package), layers, root="shop") == {
        ("shop.core", "shop.extra"),
        ("shop.base", "shop.core"),
    }


def test_the_layer_scanner_reads_a_first_use_call_as_an_import_of_its_module(tmp_path: Path) -> None:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text('from shop.base import first_use\nextra = first_use("shop.extra", "thing")\n')
    (package / "base.py").write_text("def first_use(module, name): ...\n")
    (package / "extra.py").write_text("thing = 1\n")
    layers = {"shop": 0, "base": 0, "core": 1, "extra": 2}

    assert upward_imports(import_graph(package), layers, root="shop") == {("shop.core", "shop.extra")}


def test_a_module_no_entry_places_has_no_layer_though_the_package_itself_has_one() -> None:
    layers = {"shop": 8, "core": 1}

    assert (layer_of("shop", layers, root="shop"), layer_of("shop.core.db", layers, root="shop")) == (8, 1)
    with pytest.raises(KeyError, match=r"shop\.extra is in no layer"):
        layer_of("shop.extra", layers, root="shop")


def test_every_module_of_the_package_has_a_layer() -> None:
    for module in _modules():
        layer_of(module, LAYERS)


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    assert upward_imports(import_graph(), LAYERS) == set()


def test_the_core_imports_no_extension_and_no_optional_part() -> None:
    core: tuple[str, ...] = ("protocol", "declarations", "sources", "registry", "providers", "endpoints")
    core += ("composition", "admission", "interceptors", "extensions")
    optional_parts = ("tasks", "skills", "gateway", "oauth", "control", "discovery", "events", "catalogues")
    optional = tuple(f"mcp_django.{name}" for name in optional_parts)
    reached = {
        (module, other)
        for module, edges in import_graph().items()
        if any(module == f"mcp_django.{name}" or module.startswith(f"mcp_django.{name}.") for name in core)
        for other in edges
        if other.startswith(optional)
    }
    assert reached == set()


def test_the_client_imports_nothing_of_the_gateway() -> None:
    """The gateway is built on the client: what the client needs of it (each user's own token, the remote sinks'
    end) reaches it through seams the gateway app fills (`client.connection.install_callers`, `in_background`)."""
    reached = {
        (module, other)
        for module, edges in import_graph().items()
        if module.startswith("mcp_django.client")
        for other in edges
        if other.startswith("mcp_django.gateway")
    }
    assert reached == set()


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


def documented_layers(table: str) -> dict[str, int]:
    """Each top-level module or subpackage named in the layer table of docs/architecture.md -> its row's layer.

    A row is `| rank | name | modules | ... |`; a module is named `name.py` or `name/` in backticks. What a row
    says in parentheses is about the module before it (the files inside a subpackage), and is left out."""
    documented: dict[str, int] = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        modules = cells[2]
        while re.search(r"\([^()]*\)", modules):
            modules = re.sub(r"\([^()]*\)", "", modules)
        for name in re.findall(r"`([a-z_]+)(?:\.py|/)`", modules):
            if name != "__init__":
                documented[f"mcp_django.{name}"] = int(cells[0])
    return documented


def test_the_layer_table_of_the_docs_is_the_one_the_test_enforces() -> None:
    table = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    enforced = {
        name if name.startswith("mcp_django.") else f"mcp_django.{name}": rank
        for name, rank in LAYERS.items()
        if name != "mcp_django" and "." not in name.removeprefix("mcp_django.")
    }

    assert documented_layers(table) == enforced
