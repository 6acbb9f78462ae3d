"""The one place operations can be wrapped: `OperationHook`s around every feature method.

The core calls the hooks for every operation it performs on a backend — lists, calls, reads,
gets, completions — in both eras and on every transport, and never for lifecycle methods
(`initialize`, `ping`, `server/discover`, …). A handler takes an ordered list of hooks,
outermost first (like `MIDDLEWARE`), and `compose` turns it into one hook once, when the
handler is built. An endpoint's list is: the admin's overlay (tools switched off), then the
interceptor chain (`mcp_django.interceptors`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from mcp_django.protocol.context import RequestContext

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


class _Composed:
    """Two hooks as one: `outer` sees the operation first and calls `inner` as its `call_next`."""

    __slots__ = ("inner", "outer")

    def __init__(self, outer: OperationHook, inner: OperationHook) -> None:
        self.outer = outer
        self.inner = inner

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        inner = self.inner

        async def next_hook(rewritten: dict[str, Any]) -> dict[str, Any]:
            return await inner(method, rewritten, ctx, call_next)

        return await self.outer(method, params, ctx, next_hook)


def compose(hooks: Sequence[OperationHook]) -> OperationHook | None:
    """One hook running `hooks` outermost first; None for an empty list (the core then calls no hook)."""
    composed: OperationHook | None = None
    for hook in reversed(hooks):
        composed = hook if composed is None else _Composed(hook, composed)
    return composed
