"""Server-initiated notifications to the clients connected to an endpoint over WebSocket or stdio.

Every WebSocket connected to an endpoint, and every `mcp_stdio` process serving one, listens on a
Channels group named after the endpoint. Anything in the project (a signal handler, an admin action,
a management command, a Celery task) can notify them all::

    from mcp_django.runtime.notifications import send_notification, send_notification_sync

    await send_notification("server", "notifications/tools/list_changed")
    send_notification_sync("server", "notifications/resources/updated", {"uri": "demo://books"})

A handshake-era client that finished `initialize` gets the list-changed notifications and the
`notifications/resources/updated` of the URIs it subscribed to; a 2026-07-28 client gets what its
`subscriptions/listen` filter asked for. With the in-memory channel layer that is the clients of this
process; a shared layer (Redis) reaches every worker.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any, Final, Protocol

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from mcp_django.protocol.context import NotificationSource, aclose
from mcp_django.protocol.jsonrpc import Message, notification

__all__ = [
    "EVENT_TYPE",
    "Named",
    "available",
    "group_name",
    "send_notification",
    "send_notification_sync",
    "source",
    "stream",
    "subscribe",
]

EVENT_TYPE: Final = "mcp.notification"
"""The channel-layer event type; Channels delivers it to a consumer's `mcp_notification` method."""

_GROUP_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_.-]")


class Named(Protocol):
    """An endpoint, as far as notifications go: its name (an `mcp_django.endpoints.Endpoint`)."""

    @property
    def name(self) -> str: ...


def group_name(endpoint: Named | str) -> str:
    """The Channels group of the clients connected to `endpoint` (an `Endpoint` or its name)."""
    name = endpoint if isinstance(endpoint, str) else endpoint.name
    return "mcp_django.endpoint." + _GROUP_UNSAFE.sub("_", name)[:70]


async def send_notification(endpoint: Named | str, method: str, params: dict[str, Any] | None = None) -> bool:
    """Send a notification to every client connected to `endpoint`.

    Args:
        endpoint: the `Endpoint`, or its name.
        method: the notification's method, e.g. `"notifications/tools/list_changed"`.
        params: its params, if any.

    Returns:
        False when no channel layer is configured (`CHANNEL_LAYERS`), so nothing could be sent.
    """
    layer = get_channel_layer()
    if layer is None:
        return False
    await layer.group_send(group_name(endpoint), {"type": EVENT_TYPE, "message": notification(method, params)})
    return True


def send_notification_sync(endpoint: Named | str, method: str, params: dict[str, Any] | None = None) -> bool:
    """`send_notification` for sync code (signal handlers, views, management commands)."""
    sent: bool = async_to_sync(send_notification)(endpoint, method, params)
    return sent


async def subscribe(endpoint: Named | str) -> AsyncIterator[Message]:
    """Join `endpoint`'s group now, and return an iterator of every notification sent to it from then on.

    Joining before returning is what lets a caller acknowledge a subscription knowing that nothing
    sent after the acknowledgement can be missed. Iterate the result to the end or close it
    (`aclose()`), which leaves the group. Yields nothing when no channel layer is configured.
    """
    layer = get_channel_layer()
    if layer is None:
        return _nothing()
    channel = await layer.new_channel()
    group = group_name(endpoint)
    await layer.group_add(group, channel)
    return _receive(layer, group, channel)


async def _receive(layer: Any, group: str, channel: str) -> AsyncIterator[Message]:
    try:
        while True:
            event = await layer.receive(channel)
            if event.get("type") == EVENT_TYPE and isinstance(event.get("message"), dict):
                yield event["message"]
    finally:
        await layer.group_discard(group, channel)


async def _nothing() -> AsyncIterator[Message]:
    return
    yield  # an async generator that yields nothing


async def stream(endpoint: Named | str) -> AsyncIterator[Message]:
    """Yield every notification sent to `endpoint` from the first iteration on, until the caller stops.

    What the stdio command relays to a handshake-era client. Prefer `subscribe` when the moment of
    joining matters.
    """
    inbox = await subscribe(endpoint)
    try:
        async for message in inbox:
            yield message
    finally:
        await aclose(inbox)


def source(endpoint: Named) -> NotificationSource | None:
    """The `NotificationSource` of `endpoint` for a `Connection`; None when no channel layer is configured."""
    if get_channel_layer() is None:
        return None
    return lambda: subscribe(endpoint)


def available() -> bool:
    """True when a channel layer is configured, so notifications can reach listening clients."""
    return get_channel_layer() is not None
