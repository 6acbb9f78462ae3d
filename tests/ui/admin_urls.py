"""A URLconf for the dashboard's apps table: the admin, the adapter endpoint of `sourced`, and a server endpoint
whose view no extension serves."""

from __future__ import annotations

from django.contrib import admin
from django.urls import path

from mcp_django.urls import endpoint
from tests.ui.sourced import ShelfToolset, StockProvider, server_registry

urlpatterns = [
    path("admin/", admin.site.urls),
    *endpoint(
        "apps-adapter/mcp",
        name="apps-adapter",
        mode="adapter",
        providers=[StockProvider, ShelfToolset],
        allow_anonymous=True,
        extensions=["mcp_django.ui.extension.AppsExtension"],
    ),
    *endpoint(
        "apps-server/mcp",
        name="apps-server",
        registry=server_registry,
        allow_anonymous=True,
        exclude_extensions=["io.modelcontextprotocol/ui"],
    ),
]
