"""The admin's control over what runs, as an overlay on the core: the core never imports this package.

- `state`: this process's snapshot of the admin's rows, re-read when the shared stamp moves (`bump`);
- `overlay`: `AdminOverlay`, what the core asks through `mcp_django.endpoints.overlay` (sources switched and
  re-scoped, interceptor overrides, the tool switch hook);
- `inventory`: what the code defines (providers, interceptors, tools) and `sync_inventory()`, which
  gives each its row (after `migrate`, and with `manage.py mcp_sync`);
- `signals`: a saved row moves the stamp and tells listening clients;
- `dashboard`: what the admin's MCP dashboard shows.

`MCPDjangoConfig.ready()` calls `install()`; docs/admin.md tells the whole story.
"""

from __future__ import annotations

from django.apps import AppConfig

from mcp_django.control import signals
from mcp_django.control.overlay import AdminOverlay
from mcp_django.endpoints.overlay import install as install_overlay

__all__ = ["install"]


def install(app_config: AppConfig) -> None:
    """Install the admin's overlay and connect its signal receivers (`MCPDjangoConfig.ready()`)."""
    install_overlay(AdminOverlay())
    signals.connect(app_config)
