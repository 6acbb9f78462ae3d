"""The JSON-RPC errors the Events extension defines (codes in `wire.py`), each with its typed `data`."""

from __future__ import annotations

from mcp_django.events import wire
from mcp_django.protocol.jsonrpc import MCPError


class EventNotFound(MCPError):
    """An event type this caller cannot see: unknown, or hidden from it by scope or permissions alike."""

    code = wire.NOT_FOUND
    default_message = "Event type not found"

    def __init__(self, name: object) -> None:
        super().__init__(data={"name": name})


class EventForbidden(MCPError):
    """What the caller may not do: a webhook subscription needs an authenticated principal."""

    code = wire.FORBIDDEN
    default_message = "Forbidden"


class EventUnsupported(MCPError):
    """A delivery mode the event type does not offer."""

    code = wire.UNSUPPORTED
    default_message = "Unsupported delivery mode"

    def __init__(self, name: str, mode: str) -> None:
        super().__init__(
            f"Event type {name!r} does not offer {mode} delivery", data={"feature": "deliveryMode", "value": mode}
        )


class CallbackEndpointError(MCPError):
    """The webhook callback refused, failed or did not echo the verification challenge."""

    code = wire.CALLBACK_ENDPOINT_ERROR
    default_message = "Callback endpoint verification failed"

    def __init__(self, reason: str) -> None:
        super().__init__(data={"reason": reason})
