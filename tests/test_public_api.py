"""The public surface: the modules users import (docs/reference/api.md) declare what they offer in
`__all__`, and the docs and the example project import nothing else from mcp_django."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PUBLIC_MODULES = (
    "mcp_django",
    "mcp_django.asgi",
    "mcp_django.auth",
    "mcp_django.auth_cache",
    "mcp_django.bus",
    "mcp_django.client",
    "mcp_django.content",
    "mcp_django.endpoints",
    "mcp_django.exceptions",
    "mcp_django.extensions",
    "mcp_django.interceptors",
    "mcp_django.models",
    "mcp_django.notifications",
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
    "mcp_django.skills",
    "mcp_django.ui",
    "mcp_django.telemetry",
)
"""The modules users import, as the table of docs/reference/api.md lists them."""

_IMPORT = re.compile(r"^[ \t]*from (mcp_django(?:\.\w+)*) import (\([^)]*\)|[^\n]+)", re.MULTILINE)
_PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


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
    ("old_home", "name"),
    [
        ("mcp_django", "ToolError"),
        ("mcp_django", "DeclarationError"),
        ("mcp_django", "RegistryFrozen"),
        ("mcp_django.results", "ToolError"),
        ("mcp_django.declarations", "DeclarationError"),
        ("mcp_django.bus", "ActionError"),
        ("mcp_django.client", "RemoteError"),
        ("mcp_django.client", "BackendUnavailable"),
        ("mcp_django.gateway.connection", "BackendUnavailable"),
        ("mcp_django.testing", "MCPCallError"),
        ("mcp_django.protocol.jsonrpc", "InternalError"),
        ("mcp_django.protocol.inputs", "ClientRequestError"),
    ],
)
def test_an_error_imported_from_where_it_used_to_live_is_the_one_in_mcp_django_exceptions(
    old_home: str, name: str
) -> None:
    exceptions = importlib.import_module("mcp_django.exceptions")
    assert getattr(importlib.import_module(old_home), name) is getattr(exceptions, name)
