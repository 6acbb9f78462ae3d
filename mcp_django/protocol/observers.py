"""Watching every message a handler serves (`MessageObserver`) and every request a client sends (`ClientObserver`).

Hooks (`mcp_django.protocol.hooks`) wrap operations and may change them; an observer wraps every
message, requests of every method, notifications and answers to the server's own requests alike, on
every transport, and changes nothing. A handler takes a list of observers; with none, serving a
message costs nothing more. A `ClientObserver` watches the other direction: each request this process
sends to a remote MCP server (a gateway's, a hub's, `MCPClient`'s), told whom it goes to (`RemotePeer`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from mcp_django.protocol.context import Connection
from mcp_django.protocol.jsonrpc import Message


class Observation(Protocol):
    """One message being served: entered before the handler looks at it, left when it has answered.

    The handler enters it (so whatever it makes current, a trace context, is current while the
    message is served: in hooks, sources, and sync code on the database threads), calls `answered`
    with the reply, then leaves it; left with an exception, the serving was cancelled.
    """

    def __enter__(self) -> Observation: ...

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: Any) -> None: ...

    def answered(self, reply: Message | list[Message] | None) -> None:
        """What the handler answers (None: nothing, for a notification or a client's response)."""


class MessageObserver(Protocol):
    """Observes every message of an endpoint's handler, and the channels that carry many of them."""

    def observe(self, message: Any, connection: Connection) -> Observation:
        """The observation of `message` (parsed JSON, not yet checked) arriving on `connection`."""

    def asking(self, request: Message, connection: Connection) -> Observation:
        """The observation of a request the server sends the client (elicitation, sampling, roots) while it
        serves one of the client's: entered before it is sent (it may add trace context to the request's
        `params._meta`), told the client's reply."""

    def opened(self, connection: Connection) -> None:
        """A channel that carries many messages (a WebSocket, a stdio pipe) opened with `connection`."""

    def closed(self, connection: Connection) -> None:
        """That channel closed: no more messages come on `connection`."""


@dataclass(frozen=True, slots=True)
class RemotePeer:
    """The remote MCP server a request goes to, as a `ClientObserver` is told it."""

    name: str
    """The server's configured name (`MCP_DJANGO["SERVERS"]`), never a credential."""
    transport: str
    """`"http"` or `"stdio"`."""
    url: str | None
    """The Streamable HTTP URL (None over stdio)."""
    protocol_version: str | None
    """The revision negotiated with it (None before the handshake's answer)."""
    session_id: str | None = None
    """The handshake-era HTTP session id, once the server gave one."""


class ClientObserver(Protocol):
    """Observes every request this process sends to a remote MCP server (gateways, hubs, `MCPClient`)."""

    def sending(self, request: Message, peer: RemotePeer) -> Observation:
        """The observation of `request` (a complete JSON-RPC request) about to go to `peer`: entered before
        it is sent (it may add trace context to the request's `params._meta`), told the server's answer."""


class Unobserved:
    """The observation of a message an observer does not watch: it does nothing."""

    __slots__ = ()

    def __enter__(self) -> Unobserved:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def answered(self, reply: Message | list[Message] | None) -> None:
        return None


UNOBSERVED: Final = Unobserved()


class _Observations:
    """The observations of one message by several observers: entered in order, left in reverse."""

    __slots__ = ("observations", "stack")

    def __init__(self, observations: list[Observation]) -> None:
        self.observations = observations

    def __enter__(self) -> _Observations:
        self.stack = contextlib.ExitStack()
        for observation in self.observations:
            self.stack.enter_context(observation)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: Any) -> None:
        self.stack.__exit__(kind, error, traceback)

    def answered(self, reply: Message | list[Message] | None) -> None:
        for observation in self.observations:
            observation.answered(reply)


class _Observers:
    """Several observers (message observers, or client observers) as one."""

    __slots__ = ("observers",)

    def __init__(self, observers: Sequence[Any]) -> None:
        self.observers = tuple(observers)

    def observe(self, message: Any, connection: Connection) -> Observation:
        return _Observations([observer.observe(message, connection) for observer in self.observers])

    def asking(self, request: Message, connection: Connection) -> Observation:
        return _Observations([observer.asking(request, connection) for observer in self.observers])

    def sending(self, request: Message, peer: RemotePeer) -> Observation:
        return _Observations([observer.sending(request, peer) for observer in self.observers])

    def opened(self, connection: Connection) -> None:
        for observer in self.observers:
            observer.opened(connection)

    def closed(self, connection: Connection) -> None:
        for observer in self.observers:
            observer.closed(connection)


def compose_observers(observers: Sequence[MessageObserver]) -> MessageObserver | None:
    """One observer for `observers`, in order; None for none (the handler then observes nothing)."""
    if not observers:
        return None
    return observers[0] if len(observers) == 1 else _Observers(observers)


def compose_client_observers(observers: Sequence[ClientObserver]) -> ClientObserver | None:
    """One client observer for `observers`, in order; None for none (requests are then sent unobserved)."""
    if not observers:
        return None
    return observers[0] if len(observers) == 1 else _Observers(observers)
