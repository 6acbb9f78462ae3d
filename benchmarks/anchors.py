"""The anchors: the official SDK's server (`mcp` 2.3) and FastMCP, each with the same one-line echo tool.

Served by uvicorn as `benchmarks.anchors:<name>`:

- `sdk_session`: handshake era with a session (stateful), JSON responses;
- `sdk_stateless`: stateless, JSON responses (also what the 2026-07-28 rows hit: the SDK routes that
  version to its stateless entry whatever the mode);
- `fastmcp_session`: FastMCP, handshake era with a session, JSON responses.
"""

from __future__ import annotations

from fastmcp import FastMCP
from mcp.server.mcpserver import MCPServer

sdk = MCPServer("sdk-bench")


@sdk.tool()
async def echo(text: str) -> str:
    """Return the text."""
    return text


sdk_session = sdk.streamable_http_app(json_response=True, stateless_http=False, max_sessions=None)
stateless = MCPServer("sdk-bench-stateless")
stateless.tool()(echo)
sdk_stateless = stateless.streamable_http_app(json_response=True, stateless_http=True)

fast = FastMCP("fastmcp-bench")
fast.tool(echo)
fastmcp_session = fast.http_app(path="/mcp", json_response=True, stateless_http=False)
