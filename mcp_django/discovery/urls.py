"""The discovery URLs: each endpoint's card, the AI Catalog and the legacy card location.

`include("mcp_django.urls")` mounts them while `"mcp_django.discovery"` is installed
(`MCPDiscoveryConfig.mcp_urls`). The catalog and the legacy card belong at the site root; a project that
mounts the package's URLs under a prefix also mounts `path("", include("mcp_django.discovery.urls"))`.
"""

from __future__ import annotations

from django.urls import path

from mcp_django.discovery import views
from mcp_django.discovery.wire import CARD_SUFFIX, CATALOG_PATH, LEGACY_CARD_PATH
from mcp_django.transports.public import public_view

urlpatterns = [
    path(CATALOG_PATH, public_view(views.ai_catalog), name="mcp-ai-catalog"),
    path(LEGACY_CARD_PATH, public_view(views.legacy_server_card), name="mcp-legacy-server-card"),
    path(CARD_SUFFIX, public_view(views.server_card), name="mcp-root-server-card"),
    path(f"<path:route>/{CARD_SUFFIX}", public_view(views.server_card), name="mcp-server-card"),
]
"""Public views: anyone may read them, and a body from anyone is bounded before Django reads it."""
