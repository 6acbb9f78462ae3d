"""The MCP Apps extension as a Django app: its template tags, its bridge script and its extension."""

from __future__ import annotations

from django.apps import AppConfig


class MCPAppsConfig(AppConfig):
    """Installs `AppsExtension` on the seam (`mcp_extensions`) and ships `{% load mcp_apps %}`."""

    name = "mcp_django.ui"
    label = "mcp_django_ui"
    verbose_name = "MCP Apps"
    mcp_extensions = ["mcp_django.ui.extension.AppsExtension"]
