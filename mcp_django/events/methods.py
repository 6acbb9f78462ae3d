"""`events/list` and `events/poll`: the event types a caller may see, and their occurrences after a cursor.

An endpoint composing remote servers (a gateway, a hub) lists theirs too and forwards a poll of one
(`sources`).

Poll keeps no state on the server: every request carries the type, the subscription's arguments and the
cursor. A `null` cursor means "from now": no events, and the cursor to poll from next.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_django.events import wire
from mcp_django.events.access import visible
from mcp_django.events.conf import events_settings
from mcp_django.events.declarations import EventType, event_types
from mcp_django.events.errors import EventNotFound, EventUnsupported
from mcp_django.events.sources import event_sources, remote_source
from mcp_django.events.store import after, occurrence, parse_cursor, position
from mcp_django.protocol import InvalidParams, RequestContext
from mcp_django.protocol.features.base import Server
from mcp_django.runtime.executor import run_sync


async def resolve(params: Mapping[str, Any], ctx: RequestContext, mode: str) -> tuple[EventType, dict[str, Any]]:
    """The event type `params.name` names and the subscription's bound arguments, for a request in `mode`.

    Raises:
        EventNotFound: no such type, or the caller may not see it (-32011, alike).
        EventUnsupported: the type does not offer `mode` (-32014).
        InvalidParams: the arguments do not fit its input schema.
    """
    name = params.get("name")
    declared = event_types.get(name) if isinstance(name, str) else None
    if declared is None or not await visible(ctx, declared):
        raise EventNotFound(name)
    if mode not in declared.delivery:
        raise EventUnsupported(declared.name, mode)
    return declared, declared.bind(params.get("arguments"))


async def list_events(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """`{"events": [descriptor, ...]}`: the types the caller may see (one page: a site declares few)."""
    if params.get("cursor") is not None:
        raise InvalidParams("Invalid params: unknown events/list cursor")
    listed = [declared.descriptor() for declared in event_types if await visible(ctx, declared)]
    names = {described["name"] for described in listed}
    for source in event_sources(ctx.connection.endpoint):  # a gateway's or a hub's remote servers', after
        listed += [described for described in await source.list_events(ctx) if described["name"] not in names]
    return {"events": listed}


def _positive(params: Mapping[str, Any], key: str) -> float | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise InvalidParams(f"Invalid params: {key} must be a positive number")
    return float(value)


async def poll_events(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """The occurrences after the cursor that match the arguments, the cursor after them, and when to poll next."""
    source = await remote_source(params, ctx, wire.POLL_MODE)
    if source is not None:
        return await source.poll_events(params, ctx)
    declared, bound = await resolve(params, ctx, wire.POLL_MODE)
    cursor = parse_cursor(params.get("cursor"))
    interval_ms = int(events_settings.EVENTS_POLL_INTERVAL * 1000)
    if cursor is None:
        now = await run_sync(position, declared.name)
        return {"events": [], "cursor": str(now), "truncated": False, "hasMore": False, "nextPollMs": interval_ms}
    limit = min(
        int(_positive(params, "maxEvents") or events_settings.EVENTS_MAX_BATCH), events_settings.EVENTS_MAX_BATCH
    )
    max_age_ms = _positive(params, "maxAgeMs")
    batch = await run_sync(after, declared, cursor, limit, None if max_age_ms is None else max_age_ms / 1000)
    return {
        "events": [occurrence(row) for row in batch.rows if declared.matches(row.data, bound)],
        "cursor": str(batch.cursor),
        "truncated": batch.truncated,
        "hasMore": batch.has_more,
        "nextPollMs": 0 if batch.has_more else interval_ms,
    }
