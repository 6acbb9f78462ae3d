"""`MCPHTTPTestClient` under its first import path: it lives in `mcp_django.testing.http`.

Import it from `mcp_django.testing`.
"""

from __future__ import annotations

from mcp_django.testing.http import MCPHTTPTestClient

__all__ = ["MCPHTTPTestClient"]
