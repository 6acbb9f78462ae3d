"""The admin as an overlay: the core asks the installed `Overlay` and never imports `mcp_django.control`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from example_project.demo.models import Book
from mcp_django.control.state import control_state
from mcp_django.endpoints import ChainHook, Endpoint
from mcp_django.endpoints.overlay import NullOverlay
from mcp_django.models import ProviderState
from mcp_django.safety.idempotency import IdempotencyHook
from mcp_django.testing import MCPTestClient

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_django"
ABOVE_THE_CORE = {"admin", "apps", "checks", "control", "management"}
"""What may import the control package: the package itself and what composes the app around the core (and an
extension app's own admin, such as the gateway's)."""


def tool_names(endpoint: Endpoint) -> set[str]:
    return {tool["name"] for tool in MCPTestClient(endpoint, era="stateless").sync.list_tools()}


@pytest.mark.django_db
def test_an_endpoint_given_the_null_overlay_serves_everything_as_the_code_says() -> None:
    Book.objects.create(title="Dune", author="Frank Herbert", year=1965)
    ProviderState.objects.update_or_create(provider_id="demo.books", defaults={"enabled": False})
    control_state.invalidate()
    overlaid = Endpoint("a", name="a", mode="adapter", providers=["demo.books"], allow_anonymous=True)
    plain = Endpoint(
        "b", name="b", mode="adapter", providers=["demo.books"], allow_anonymous=True, overlay=NullOverlay()
    )

    assert tool_names(overlaid) == set()
    assert tool_names(plain) == {"about_dune"}
    assert [type(hook) for hook in plain.handler.hooks] == [ChainHook, IdempotencyHook]
    control_state.invalidate()


def test_the_core_never_imports_the_control_package() -> None:
    importers = []
    for path in PACKAGE.rglob("*.py"):
        module = path.relative_to(PACKAGE).parts
        if module[0].removesuffix(".py") in ABOVE_THE_CORE or module[-1] == "admin.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
            if any(name == "mcp_django.control" or name.startswith("mcp_django.control.") for name in names):
                importers.append("/".join(module))
    assert importers == []
