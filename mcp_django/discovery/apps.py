"""The Django app of discovery: `"mcp_django.discovery"` in `INSTALLED_APPS`, after `"mcp_django"`."""

from __future__ import annotations

from django.apps import AppConfig


class MCPDiscoveryConfig(AppConfig):
    """Serves the Server Cards and the AI Catalog (`mcp_urls`, mounted by `include("mcp_django.urls")`), owns
    their settings and registers their system checks."""

    name = "mcp_django.discovery"
    label = "mcp_django_discovery"
    verbose_name = "MCP discovery"
    mcp_urls = "mcp_django.discovery.urls"
    mcp_settings = ["mcp_django.discovery.conf.discovery_settings"]

    def ready(self) -> None:
        from mcp_django.discovery import checks  # noqa: F401  # register the system checks
