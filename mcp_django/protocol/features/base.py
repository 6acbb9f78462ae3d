"""What a method implementation looks like to the handler, and what it sees of the server."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Protocol

from mcp_django.protocol.backend import Backend
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.versions import Era


class Server(Protocol):
    """The part of the server a method implementation may use (`MessageHandler` implements it)."""

    @property
    def backend(self) -> Backend:
        """What serves the endpoint's tools, resources and prompts."""
        ...

    @property
    def server_info(self) -> Mapping[str, Any]:
        """The `Implementation` object naming this server."""
        ...

    @property
    def instructions(self) -> str | None:
        """Guidance for the client's model, if any."""
        ...

    @property
    def features(self) -> frozenset[str]:
        """The capability keys served (`tools`, `resources`, ..., `notifications` when they can flow)."""
        ...

    def capabilities(self, era: Era) -> dict[str, Any]:
        """Return the `ServerCapabilities` advertised in `era`."""
        ...

    def page(self, key: str, items: Sequence[Any], params: Mapping[str, Any]) -> dict[str, Any]:
        """Return one page of a list result under `key`, with `nextCursor` when more follow."""
        ...


MethodImpl = Callable[[Server, Mapping[str, Any], RequestContext], Awaitable[dict[str, Any]]]
BOTH_ERAS: Final = frozenset(Era)
HANDSHAKE_ONLY: Final = frozenset({Era.HANDSHAKE})
STATELESS_ONLY: Final = frozenset({Era.STATELESS})


@dataclasses.dataclass(frozen=True, slots=True)
class MethodSpec:
    """One request method: its implementation, the eras that have it and the capability it needs.

    Args:
        name: the JSON-RPC method name.
        impl: the coroutine that computes the result from the `Server`, the params and the request context.
        eras: the eras in which the method exists; elsewhere it is `-32601`.
        feature: the `ServerCapabilities` key the backend must advertise, if any.
        cacheable: whether stateless results carry `ttlMs`/`cacheScope`.
        operation: whether it is an operation on the backend, run through the `OperationHook`.
        streams: whether it may send messages before its response even in the stateless era (a
            long-lived request that delivers notifications, as `subscriptions/listen` does), so a
            transport serves it as a stream rather than answering it in one piece.
    """

    name: str
    impl: MethodImpl
    eras: frozenset[Era] = BOTH_ERAS
    feature: str | None = None
    cacheable: bool = False
    operation: bool = True
    streams: bool = False
