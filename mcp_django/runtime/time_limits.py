"""How long a tool call may run: the tool's own `timeout`, else its endpoint's `tool_timeout`, else `TOOL_TIMEOUT`.

`call_within_limit` runs one tool call under its limit; past it the awaiting coroutine is cancelled
and the call answers `ToolTimeout` (a JSON-RPC error, `-32603` with `data.reason = "timeout"`, as
an interceptor's timeout does). An async tool is cancelled where it awaits. A sync tool runs on a
thread, and Python cannot stop a thread: the caller gets its answer and the thread runs on to its
end (`mcp_django.runtime.executor`), so its effects may still happen after the timeout was answered. The
audit trail records such a call with the outcome `"timeout"`, which says exactly that: the caller
was told the call did not finish, not that nothing happened (docs/deployment.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import MCPError
from mcp_django.runtime.package_settings import package_settings


class ToolTimeout(MCPError):
    """A tool call that did not finish within its time limit."""

    default_message = "The tool did not finish within its time limit"

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(
            f"Tool {name} did not finish within {seconds:g} s", data={"reason": "timeout", "timeoutSeconds": seconds}
        )


def tool_time_limit(component: Any, ctx: RequestContext) -> float | None:
    """The seconds a call of `component` may take through `ctx`'s endpoint, or None for no limit."""
    own = getattr(component, "timeout", None)
    if own is not None:
        return float(own)
    endpoint_limit = getattr(ctx.endpoint, "tool_timeout", None)
    if endpoint_limit is not None:
        return float(endpoint_limit)
    setting = package_settings().TOOL_TIMEOUT
    return None if setting is None else float(setting)


async def call_within_limit(
    component: Any, name: str, arguments: Mapping[str, Any], ctx: RequestContext
) -> Mapping[str, Any]:
    """`component.call(arguments, ctx)`, cancelled when its time limit passes.

    Raises:
        ToolTimeout: the limit passed first.
    """
    limit = tool_time_limit(component, ctx)
    if limit is None:
        return await component.call(arguments, ctx)  # type: ignore[no-any-return]  # a ToolComponent's
    deadline = asyncio.timeout(limit)
    try:
        async with deadline:
            return await component.call(arguments, ctx)  # type: ignore[no-any-return]  # a ToolComponent's
    except TimeoutError:
        if not deadline.expired():
            raise  # the tool's own
        raise ToolTimeout(name, limit) from None
