"""The Django app of the gateway: `"mcp_django.gateway"` in `INSTALLED_APPS`, after `"mcp_django"`.

A project whose endpoints serve remote MCP servers (`MCP_DJANGO["SERVERS"]`), or whose interceptor lists
name one (`{"SERVER": ...}`), installs it: check `mcp_django.E172` says so when it is missing.
"""

from __future__ import annotations

from django.apps import AppConfig


class GatewayConfig(AppConfig):
    """Installs the gateway's extension (`GatewayExtension`: remote interceptor servers in chains), holds its
    models (`RemoteServer`, `UpstreamCredential`), their admin, the pages where users connect their own
    accounts to remote servers (`mcp_urls`, mounted by `include("mcp_django.urls")`), and registers the
    gateway's system checks."""

    name = "mcp_django.gateway"
    label = "mcp_django_gateway"
    verbose_name = "MCP gateway"
    default_auto_field = "django.db.models.BigAutoField"
    mcp_extensions = ["mcp_django.gateway.extension.GatewayExtension"]  # runs the chains' {"SERVER": ...} entries
    mcp_urls = "mcp_django.gateway.urls"
    """The URLconf `mcp_django.urls` includes while this app is installed."""

    def ready(self) -> None:
        from mcp_django.client.connection import install_callers
        from mcp_django.gateway import (  # noqa: F401  # register the system checks
            checks,
            interceptor_checks,  # and those of the interceptor servers
            upstream_checks,  # and those of the servers users sign in to (AUTH "oauth")
        )
        from mcp_django.gateway.upstream import UpstreamConnections

        install_callers(UpstreamConnections())  # MCPClient's requests carry each user's own token where asked
