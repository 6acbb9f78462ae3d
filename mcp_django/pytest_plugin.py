"""The pytest plugin under its first import path (`pytest_plugins = ["mcp_django.pytest_plugin"]`); it lives in
`mcp_django.testing.pytest_plugin`. Like it, this imports no Django."""

from __future__ import annotations

from mcp_django.testing.pytest_plugin import mcp_client, mcp_era, mcp_http_client

__all__ = ["mcp_client", "mcp_era", "mcp_http_client"]
