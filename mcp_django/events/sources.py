"""Event types an endpoint serves from elsewhere: the remote servers a gateway or a hub composes (`EventSource`).

A source that offers events (the gateway's `RemoteSource`, when its server advertised the extension) lists
its types under the names callers use (a hub's namespace before each: `books_book.added`) and forwards
poll and push requests for them. A local type of the same name comes first, as for tools. Webhooks are not
forwarded: a remote would sign for the gateway's own principal, not the caller, so a forwarded type offers
poll and push only and `events/subscribe` of one answers `-32014`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from mcp_django.events import wire
from mcp_django.events.access import visible
from mcp_django.events.declarations import event_types
from mcp_django.events.errors import EventUnsupported
from mcp_django.protocol import RequestContext


@runtime_checkable
class EventSource(Protocol):
    """A source whose server has event types of its own (a remote server's, `gateway.events.RemoteEvents`)."""

    def offers_events(self) -> bool:
        """Whether its server advertised the events extension (then the endpoint serves it)."""
        ...

    def serves_event(self, name: str) -> bool:
        """Whether `name` (as callers name it) may be one of its types: it is in its namespace."""
        ...

    async def list_events(self, ctx: RequestContext) -> list[dict[str, Any]]:
        """Its types this caller may see, named as callers name them (nothing while its server cannot be reached)."""
        ...

    async def poll_events(self, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`events/poll` for one of its types, forwarded."""
        ...

    async def stream_events(self, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`events/stream` for one of its types: the server's notifications relayed on `ctx` until cancelled."""
        ...


def event_sources(endpoint: Any) -> list[EventSource]:
    """The endpoint's sources that offer events of their own (the remote servers a gateway or a hub composes)."""
    sources = getattr(endpoint, "remote_sources", ())
    return [source for source in sources if isinstance(source, EventSource) and source.offers_events()]


async def remote_source(params: Mapping[str, Any], ctx: RequestContext, mode: str) -> EventSource | None:
    """The source serving `params.name` when no local type this caller may see has that name; None otherwise.

    Raises:
        EventUnsupported: a webhook subscription of a forwarded type (-32014).
    """
    name = params.get("name")
    if not isinstance(name, str):
        return None
    declared = event_types.get(name)
    if declared is not None and await visible(ctx, declared):
        return None
    source = next((each for each in event_sources(ctx.connection.endpoint) if each.serves_event(name)), None)
    if source is not None and mode == wire.WEBHOOK_MODE:
        raise EventUnsupported(name, mode)
    return source
