"""django-mcpz 1.2.0 with the benchmark's sync echo, mounted at `mcpz/mcp` when installed (the `bench` extra).

django-mcpz serves the 2026-07-28 era and, statelessly (no session), the handshake era, as a plain sync
Django view: under WSGI it is the Django peer to compare the WSGI fast path with (docs/performance.md).
"""

from __future__ import annotations

from typing import Any

import msgspec
from django_mcpz.server import MCPServer, public

server = MCPServer(name="mcpz-bench", version="0", auth=public)


class EchoParams(msgspec.Struct):
    text: str


@server.tool(description="Return the text.")
def echo_sync(request: Any, params: EchoParams) -> str:
    """The sync echo, as the mcp_django rows call it (django-mcpz tools are plain functions)."""
    return params.text
