"""Watching every message a handler serves: `MessageObserver`s (telemetry, structured logs).

Hooks (`mcp_django.protocol.hooks`) wrap operations and may change them; an observer wraps every
message, requests of every method, notifications and answers to the server's own requests alike, on
every transport, and changes nothing. A handler takes a list of observers; with none, serving a
message costs nothing more.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcp_django.protocol.context import Connection
from mcp_django.protocol.jsonrpc import Message

__all__ = ["MessageObserver", "Observation"]


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

    def opened(self, connection: Connection) -> None:
        """A channel that carries many messages (a WebSocket, a stdio pipe) opened with `connection`."""

    def closed(self, connection: Connection) -> None:
        """That channel closed: no more messages come on `connection`."""
