"""MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`): tools' views rendered from Django templates.

Add `"mcp_django.ui"` to `INSTALLED_APPS` and name a template as a tool's view
(`@mcp_django.tool(app="shop/product_card.html")`); docs/apps.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_django.declarations.apps import APP_MIME_TYPE, App

if TYPE_CHECKING:
    from mcp_django.declarations.tools import Tool

__all__ = ["APP_MIME_TYPE", "EXTENSION", "App", "apps_of"]

EXTENSION = "io.modelcontextprotocol/ui"
"""The extension's identifier, under `capabilities.extensions` on both sides."""


def apps_of(endpoint: Any) -> dict[str, Tool]:
    """The tools of the endpoint's registry that declare an app, by name."""
    registry = getattr(endpoint, "registry", None)
    if registry is None:
        return {}
    return {name: tool for name, tool in registry.tools.items() if tool.app is not None}
