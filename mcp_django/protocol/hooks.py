"""The one place operations can be wrapped: an `OperationHook` around every feature method.

The interceptor chain (`mcp_django.interceptors`) is such a hook. The core calls it for
every operation it performs on a backend — lists, calls, reads, gets, completions — in
both eras and on every transport, and never for lifecycle methods (`initialize`,
`ping`, `server/discover`, …).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcp_django.protocol.context import RequestContext

__all__ = ["CallNext", "OperationHook"]

CallNext = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Runs the operation with the (possibly rewritten) params and returns its raw result."""


class OperationHook(Protocol):
    """Wraps one operation: may inspect or rewrite params and result, or refuse the operation.

    To refuse, raise an `MCPError` (the client gets that JSON-RPC error) or, for `tools/call`,
    return an `isError` result. The result is decorated (`resultType`, cache hints) and
    validated after the hook returns, so a hook must leave it well-formed.
    """

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]: ...
