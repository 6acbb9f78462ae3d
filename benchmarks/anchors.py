"""The anchors: the official SDK's server (`mcp` 2.3) and FastMCP, each with the same one-line echo tools.

`echo` is `async def`, `echo_sync` a plain `def` (each framework runs it on a worker thread, as it
runs sync tools).

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


def echo_sync(text: str) -> str:
    """Return the text, from a sync function."""
    return text


sdk.tool()(echo_sync)
sdk_session = sdk.streamable_http_app(json_response=True, stateless_http=False, max_sessions=None)
stateless = MCPServer("sdk-bench-stateless")
stateless.tool()(echo)
stateless.tool()(echo_sync)
sdk_stateless = stateless.streamable_http_app(json_response=True, stateless_http=True)

fast = FastMCP("fastmcp-bench")
fast.tool(echo)
fast.tool(echo_sync)
fastmcp_session = fast.http_app(path="/mcp", json_response=True, stateless_http=False)
