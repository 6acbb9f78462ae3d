"""`tools/list` and `tools/call`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec, Server
from mcp_django.protocol.jsonrpc import MCPError
from mcp_django.protocol.results import tool_error

logger = logging.getLogger("mcp_django.protocol")


async def list_tools(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return server.page("tools", await server.backend.list_tools(ctx), params)


async def call_tool(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    arguments = params.get("arguments") or {}
    try:
        return dict(await server.backend.call_tool(params["name"], arguments, ctx))
    except MCPError:
        raise
    except Exception:
        # A tool's failure is the model's business, not a protocol error: report it in the result.
        logger.exception("Tool %r raised", params["name"])
        return tool_error(f"Error executing tool {params['name']}")


TOOL_METHODS = (
    MethodSpec("tools/list", list_tools, feature="tools", cacheable=True),
    MethodSpec("tools/call", call_tool, feature="tools"),
)
