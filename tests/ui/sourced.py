"""Views declared by a provider and a toolset, served on an adapter endpoint beside a server endpoint of their own."""

from __future__ import annotations

from typing import Any

import mcp_django
from mcp_django.context import Context
from mcp_django.endpoints import Endpoint
from mcp_django.providers import ToolProvider
from mcp_django.registry import Registry
from mcp_django.toolsets.base import Toolset, ToolsetTool
from mcp_django.ui.extension import AppsExtension

STOCK_URI = "ui://apps/apps_test/stock.html"
SHELF_URI = "ui://shelf"
SERVER_URI = "ui://server-card"


class StockProvider(ToolProvider):
    """Tools known at run time, one of them with a view, one of them called by that view only."""

    id = "apps-test.stock"
    apps = {
        "stock": "apps_test/stock.html",
        "restock": mcp_django.App("apps_test/stock.html", visibility=["app"]),
    }

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        schema = {"type": "object"}
        return [
            {"name": "stock", "description": "How many are left.", "inputSchema": schema},
            {"name": "restock", "description": "Order more (the view's button).", "inputSchema": schema},
            {"name": "count", "description": "A tool without a view.", "inputSchema": schema},
        ]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        return f"{name} done"


def shelf(ctx: Context) -> str:
    """What is on the shelf."""
    return "three books"


class ShelfToolset(Toolset):
    """A toolset naming its tool's view in `apps`."""

    apps = {"shelf": {"template": "apps_test/whoami.html", "uri": SHELF_URI, "visibility": ["model"]}}

    def build_tools(self) -> list[ToolsetTool]:
        return [ToolsetTool(shelf)]


server_registry = Registry("apps-sourced-server")


@server_registry.tool(app={"template": "apps_test/whoami.html", "uri": SERVER_URI})
def server_card() -> str:
    """The server endpoint's own tool with a view."""
    return "server"


def adapter_endpoint(**options: Any) -> Endpoint:
    """The adapter endpoint: the provider and the toolset, with the apps extension (and `options`)."""
    return Endpoint(
        "apps-adapter/mcp",
        name="apps-adapter",
        mode="adapter",
        providers=[StockProvider, ShelfToolset],
        allow_anonymous=True,
        extensions=[AppsExtension()],
        **options,
    )


def server_endpoint() -> Endpoint:
    """A server endpoint of the same project, with the apps extension too, serving a view of its own only."""
    return Endpoint(
        "apps-server/mcp",
        name="apps-server",
        mode="server",
        registry=server_registry,
        allow_anonymous=True,
        extensions=[AppsExtension()],
    )
