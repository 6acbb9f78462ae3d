"""What a method implementation looks like to the handler."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.versions import Era

if TYPE_CHECKING:
    from mcp_django.protocol.handler import MessageHandler

__all__ = ["BOTH_ERAS", "MethodImpl", "MethodSpec"]

MethodImpl = Callable[["MessageHandler", Mapping[str, Any], RequestContext], Awaitable[dict[str, Any]]]
BOTH_ERAS = frozenset(Era)


@dataclasses.dataclass(frozen=True, slots=True)
class MethodSpec:
    """One request method: its implementation, the eras that have it and the capability it needs.

    Args:
        name: the JSON-RPC method name.
        impl: the coroutine that computes the result.
        eras: the eras in which the method exists; elsewhere it is `-32601`.
        feature: the `ServerCapabilities` key the backend must advertise, if any.
        cacheable: whether stateless results carry `ttlMs`/`cacheScope`.
        operation: whether it is an operation on the backend, run through the `OperationHook`.
    """

    name: str
    impl: MethodImpl
    eras: frozenset[Era] = BOTH_ERAS
    feature: str | None = None
    cacheable: bool = False
    operation: bool = True
