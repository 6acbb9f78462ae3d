"""Server notifications to listening clients: 2026 `subscriptions/listen`, and the filters every stream uses.

A transport that can deliver server notifications gives the core a `NotificationSource`
(`Connection.notifications`): an async iterator of the notifications sent to the endpoint,
whatever their origin (an admin change, a signal handler, another worker). The core decides
what each listener may see:

- a `subscriptions/listen` stream gets only the kinds its filter asked for and the server
  honoured, each tagged with the subscription id, after an acknowledgement;
- a handshake session (its GET stream, its WebSocket) gets the list-changed notifications and
  the resource updates for the URIs it subscribed to.

Both respect scope: a URI the caller cannot read is refused at `resources/subscribe` as an
unknown resource and left out of a listen stream's acknowledgement, and every resource update
is checked again against the caller's reach when it is delivered (`still_readable`), so a scope
lowered or a resource switched off later stops the updates.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from mcp_django.protocol.backend import Backend
from mcp_django.protocol.context import Connection, RequestContext, aclose
from mcp_django.protocol.features.base import STATELESS_ONLY, MethodSpec, Server
from mcp_django.protocol.jsonrpc import Message
from mcp_django.protocol.versions import Era

SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
RESOURCE_UPDATED: Final = "notifications/resources/updated"
LIST_CHANGED: Final[Mapping[str, tuple[str, str]]] = {
    "notifications/tools/list_changed": ("toolsListChanged", "tools"),
    "notifications/prompts/list_changed": ("promptsListChanged", "prompts"),
    "notifications/resources/list_changed": ("resourcesListChanged", "resources"),
}
"""Each list-changed notification: the listen-filter flag that asks for it and the feature it concerns."""


def honoured_filter(requested: Mapping[str, Any], features: Collection[str]) -> dict[str, Any]:
    """The part of a client's `SubscriptionFilter` this server serves (the acknowledgement reports it)."""
    honoured: dict[str, Any] = {
        flag: True for flag, feature in LIST_CHANGED.values() if requested.get(flag) is True and feature in features
    }
    uris = requested.get("resourceSubscriptions")
    if "resources" in features and isinstance(uris, list) and uris:
        honoured["resourceSubscriptions"] = [uri for uri in uris if isinstance(uri, str)]
    return honoured


def wanted_by_filter(note: Message, honoured: Mapping[str, Any]) -> bool:
    """True when a listen stream with this honoured filter should receive `note`."""
    method = note.get("method")
    if isinstance(method, str) and method in LIST_CHANGED:
        return honoured.get(LIST_CHANGED[method][0]) is True
    if method == RESOURCE_UPDATED:
        return _uri(note) in honoured.get("resourceSubscriptions", ())
    return False


def wanted_by_session(note: Message, subscriptions: Collection[str], features: Collection[str]) -> bool:
    """True when a handshake session subscribed to `subscriptions` should receive `note`."""
    method = note.get("method")
    if isinstance(method, str) and method in LIST_CHANGED:
        return LIST_CHANGED[method][1] in features
    if method == RESOURCE_UPDATED:
        return _uri(note) in subscriptions
    return False


async def still_readable(backend: Backend, note: Message, connection: Connection, era: Era, version: str) -> bool:
    """False for a resource update whose resource the connection's caller cannot read (now); True otherwise.

    The check runs in a context of its own, so the caller's scope is worked out afresh rather than
    remembered from the request that opened the stream.
    """
    if note.get("method") != RESOURCE_UPDATED:
        return True
    uri = _uri(note)
    if not isinstance(uri, str):
        return False
    return await backend.readable(uri, RequestContext("resources/read", None, era, version, connection))


def _uri(note: Message) -> Any:
    params = note.get("params")
    return params.get("uri") if isinstance(params, dict) else None


def tagged(note: Message, subscription_id: Any) -> Message:
    """`note` with the subscription id in its `params._meta`."""
    params = dict(note.get("params") or {})
    params["_meta"] = {**(params.get("_meta") or {}), SUBSCRIPTION_ID: subscription_id}
    return {**note, "params": params}


async def listen(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Acknowledge the subscription, then relay what it asked for until the client goes away."""
    honoured = honoured_filter(params.get("notifications") or {}, server.features)
    if "resourceSubscriptions" in honoured:
        # What the caller cannot read is left out, exactly as a URI nothing serves.
        readable = [uri for uri in honoured["resourceSubscriptions"] if await server.backend.readable(uri, ctx)]
        if readable:
            honoured["resourceSubscriptions"] = readable
        else:
            del honoured["resourceSubscriptions"]
    source = ctx.connection.notifications
    # Subscribe before acknowledging, so nothing sent after the acknowledgement is missed.
    inbox = await source() if source is not None and ctx.emit is not None else None
    ack = {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": honoured},
    }
    await ctx.send_notification("notifications/subscriptions/acknowledged", tagged(ack, ctx.request_id)["params"])
    if inbox is not None and ctx.emit is not None:
        try:
            async for note in inbox:
                if wanted_by_filter(note, honoured) and await still_readable(
                    server.backend, note, ctx.connection, ctx.era, ctx.protocol_version
                ):
                    await ctx.emit(tagged(note, ctx.request_id))
        finally:
            await aclose(inbox)
    # The source ended (the server is shutting the stream down): end the subscription gracefully.
    return {"_meta": {SUBSCRIPTION_ID: ctx.request_id}}


SUBSCRIPTION_METHODS = (
    MethodSpec(
        "subscriptions/listen", listen, eras=STATELESS_ONLY, feature="notifications", operation=False, streams=True
    ),
)
