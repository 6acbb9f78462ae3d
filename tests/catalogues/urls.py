"""The demo's providers (its toolsets among them) flat, in `search` mode and in `grouped` mode (tests/catalogues/)."""

from __future__ import annotations

from mcp_django.catalogues import CatalogueExtension
from mcp_django.urls import endpoint

urlpatterns = [
    *endpoint("flat/mcp", name="flat", mode="adapter"),
    *endpoint(
        "search/mcp",
        name="search",
        mode="adapter",
        extensions=[CatalogueExtension("search", pinned=["get_catalogue_stats", "create_book"])],
    ),
    *endpoint("grouped/mcp", name="grouped", mode="adapter", extensions=[CatalogueExtension("grouped")]),
    # the installed extension's mode, from MCP_DJANGO["CATALOGUES"]
    *endpoint("configured/mcp", name="configured", mode="adapter"),
]
