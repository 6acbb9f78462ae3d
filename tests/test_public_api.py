"""The public surface: the modules users import (docs/reference/api.md) declare what they offer in
`__all__`, no other module does (but the packages' `__init__`s and the OAuth client's one face), and the
docs and the example project import nothing else from mcp_django."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PUBLIC_MODULES = (
    "mcp_django",
    "mcp_django.asgi",
    "mcp_django.wsgi",
    "mcp_django.auth",
    "mcp_django.endpoints.auth_cache",
    "mcp_django.bus",
    "mcp_django.client",
    "mcp_django.content",
    "mcp_django.endpoints",
    "mcp_django.exceptions",
    "mcp_django.extensions",
    "mcp_django.interceptors",
    "mcp_django.interceptors.protocol",
    "mcp_django.models",
    "mcp_django.runtime.notifications",
    "mcp_django.safety.approvals",
    "mcp_django.providers",
    "mcp_django.routing",
    "mcp_django.scopes",
    "mcp_django.testing",
    "mcp_django.toolsets",
    "mcp_django.transports.stdio",
    "mcp_django.urls",
    "mcp_django.oauth.defaults",
    "mcp_django.oauth.machines",
    "mcp_django.oauth.models",
    "mcp_django.tasks.models",
    "mcp_django.gateway.models",
    "mcp_django.skills",
    "mcp_django.ui",
    "mcp_django.telemetry",
    "mcp_django.catalogues",
    "mcp_django.events",
    "mcp_django.events.receiver",
    "mcp_django.events.signatures",
)
"""The modules users import, as the table of docs/reference/api.md lists them."""

REEXPORT_PATHS = {
    "mcp_django.client.auth.authorization": "the OAuth client's one face; its transport and grants split off to auth.*",
}
"""The modules neither public nor a package that keep `__all__`: faces kept on purpose, and why."""

_IMPORT = re.compile(r"^[ \t]*from (mcp_django(?:\.\w+)*) import (\([^)]*\)|[^\n]+)", re.MULTILINE)
_PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def module_name(path: Path) -> str:
    """The dotted name of the module at `path` (a package's `__init__.py` is the package)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level(path: Path) -> list[ast.stmt]:
    """The statements of the module at `path`, its docstring left out."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    has_docstring = body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    return body[1:] if has_docstring else body


def declared_all(statements: list[ast.stmt]) -> list[str] | None:
    """The names an `__all__ = [...]` among `statements` lists, or None when there is none."""
    for statement in statements:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
            return list(ast.literal_eval(value))
    return None


def imports_in(text: str) -> list[tuple[str, str]]:
    """Each `(module, name)` a `from mcp_django... import ...` statement of `text` imports."""
    found: list[tuple[str, str]] = []
    for match in _IMPORT.finditer(text):
        names = " ".join(line.split("#")[0] for line in match[2].splitlines()).strip("() ")
        for entry in names.split(","):
            name = entry.split(" as ")[0].strip()
            if name:
                found.append((match[1], name))
    return found


def documented_imports() -> list[tuple[str, str, str]]:
    """`(where, module, name)` for every import from mcp_django in the docs' Python blocks and the example project."""
    found: list[tuple[str, str, str]] = []
    for page in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]:
        for block in _PYTHON_BLOCK.findall(page.read_text(encoding="utf-8")):
            found += [(str(page.relative_to(ROOT)), *pair) for pair in imports_in(block)]
    for module in sorted((ROOT / "example_project").rglob("*.py")):
        found += [(str(module.relative_to(ROOT)), *pair) for pair in imports_in(module.read_text(encoding="utf-8"))]
    return found


def test_the_scanner_reads_parenthesised_and_aliased_imports() -> None:
    text = "from mcp_django import (\n    Scope,  # why\n    tool as t,\n)\n    from mcp_django.urls import endpoint\n"
    assert imports_in(text) == [("mcp_django", "Scope"), ("mcp_django", "tool"), ("mcp_django.urls", "endpoint")]


def test_the_docs_and_the_example_project_import_only_public_names() -> None:
    found = documented_imports()
    private = [
        f"{where}: from {module} import {name}"
        for where, module, name in found
        if f"{module}.{name}" not in PUBLIC_MODULES
        and (module not in PUBLIC_MODULES or name not in importlib.import_module(module).__all__)
    ]

    assert len(found) > 50, "the scanner found too few imports to be reading the docs"
    assert private == []


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_a_public_module_declares_its_names_and_has_each(module: str) -> None:
    imported = importlib.import_module(module)
    names = imported.__all__
    assert names, f"{module} declares no __all__"
    assert [name for name in names if not hasattr(imported, name)] == []


def test_the_api_reference_lists_the_public_modules() -> None:
    reference = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    assert [module for module in PUBLIC_MODULES if f"`{module}`" not in reference] == []


@pytest.mark.parametrize(
    ("face", "name"),
    [
        ("mcp_django", "ToolError"),
        ("mcp_django", "DeclarationError"),
        ("mcp_django", "RegistryFrozen"),
        ("mcp_django.declarations", "DeclarationError"),
        ("mcp_django.bus", "ActionError"),
        ("mcp_django.client", "RemoteError"),
        ("mcp_django.client", "BackendUnavailable"),
        ("mcp_django.testing", "MCPCallError"),
        ("mcp_django.protocol.jsonrpc", "InternalError"),
        ("mcp_django.protocol.inputs", "ClientRequestError"),
    ],
)
def test_an_error_a_package_offers_on_its_face_is_the_one_in_mcp_django_exceptions(face: str, name: str) -> None:
    exceptions = importlib.import_module("mcp_django.exceptions")
    assert getattr(importlib.import_module(face), name) is getattr(exceptions, name)


def test_a_module_declares_all_exactly_when_users_import_it() -> None:
    """`__all__` marks what users import: the public modules, the packages' `__init__`s that gather their
    modules' names (one that is only a docstring has none to gather), and the old import paths kept on purpose."""
    paths = sorted((ROOT / "mcp_django").rglob("*.py"))
    wrong = []
    for path in paths:
        module, statements = module_name(path), top_level(path)
        offered = module in PUBLIC_MODULES or module in REEXPORT_PATHS or (path.name == "__init__.py" and statements)
        if (declared_all(statements) is not None) != bool(offered):
            wrong.append(f"{module}: {'has no' if offered else 'declares'} __all__")

    assert len(paths) > 100, "the walk found too few modules to be reading the package"
    assert wrong == []


@pytest.mark.parametrize("module", sorted(REEXPORT_PATHS))
def test_a_kept_import_path_re_exports_a_name_it_does_not_define(module: str) -> None:
    path = ROOT / (module.replace(".", "/") + ".py")
    statements = top_level(path)
    imported = {
        alias.asname or alias.name for node in statements if isinstance(node, ast.ImportFrom) for alias in node.names
    }

    assert set(declared_all(statements) or []) & imported, f"{module} re-exports nothing: drop it from REEXPORT_PATHS"


def defined_names(path: Path) -> set[str]:
    """The names the module at `path` defines at its top level (under `if` and `try` too), not those it imports."""
    names: set[str] = set()
    pending: list[ast.stmt] = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names |= {node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)}
        elif isinstance(statement, ast.If):
            pending += [*statement.body, *statement.orelse]
        elif isinstance(statement, ast.Try):
            pending += [*statement.body, *statement.orelse, *statement.finalbody]
            pending += [line for handler in statement.handlers for line in handler.body]
    return names


def passed_on_names(root: Path = ROOT) -> list[str]:
    """`from M import name` statements of the package, the tests and the example project where M, a module neither
    public, nor a package, nor a kept path, does not define `name` itself but imports it from elsewhere."""
    homes = {
        ".".join(path.relative_to(root).with_suffix("").parts): path
        for path in (root / "mcp_django").rglob("*.py")
        if path.name != "__init__.py"
    }
    found: list[str] = []
    for folder in ("mcp_django", "tests", "example_project", "benchmarks"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ImportFrom) or node.level or node.module not in homes:
                    continue
                if node.module in PUBLIC_MODULES or node.module in REEXPORT_PATHS:
                    continue
                defined = defined_names(homes[node.module])
                found += [
                    f"{path.relative_to(root)}:{node.lineno}: from {node.module} import {alias.name}"
                    for alias in node.names
                    if alias.name not in defined
                ]
    return found


def test_a_name_is_imported_from_the_module_that_defines_it_not_through_another() -> None:
    """One home per name: a module passes on no name it imports (a package's `__init__`, a public module and a kept
    path may gather names; nothing else re-exports)."""
    assert passed_on_names() == []


def test_the_re_export_scanner_finds_a_name_imported_through_a_module_that_only_imports_it(tmp_path: Path) -> None:
    (tmp_path / "mcp_django").mkdir()
    (tmp_path / "mcp_django" / "home.py").write_text("from mcp_django.far import Thing\n\nHERE = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("from mcp_django.home import HERE, Thing\n")

    assert passed_on_names(tmp_path) == ["tests/test_x.py:1: from mcp_django.home import Thing"]
