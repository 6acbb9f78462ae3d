"""Push delivery: `events/stream`, one long-lived request per subscription, its events as notifications.

The stream confirms itself with `notifications/events/active {cursor, truncated}`, replays what came
after the client's cursor (when it gave one), then sends each new occurrence the subscription's
arguments match as `notifications/events/event`, and `notifications/events/heartbeat {cursor}` whenever
`EVENTS_HEARTBEAT` seconds pass without one. Every notification names the stream in
`_meta["io.modelcontextprotocol/subscriptionId"]` (the request's id). It ends when the client cancels
the request (or goes away).

An emit announces its occurrence through the Channels layer once its transaction commits (`announce`),
so a stream on any worker reads it from the database; each read also happens on a heartbeat, so a
stream misses nothing even where no layer is configured. Each occurrence is checked against the
subscriber's access afresh, from the database, before it is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

from mcp_django.events import wire
from mcp_django.events.access import allowed_now, caller_scope, principal_pk
from mcp_django.events.conf import events_settings
from mcp_django.events.declarations import EventType
from mcp_django.events.errors import EventUnsupported
from mcp_django.events.methods import resolve
from mcp_django.events.models import EventOccurrence
from mcp_django.events.sources import remote_source
from mcp_django.events.store import after, occurrence, on_emitted, parse_cursor, position
from mcp_django.protocol import RequestContext
from mcp_django.protocol.context import aclose
from mcp_django.protocol.features.base import Server
from mcp_django.runtime import notifications
from mcp_django.runtime.executor import run_sync

ANNOUNCEMENTS: Final = "mcp_django.events"
"""The Channels group every push stream listens on for the occurrences committed on any worker."""
_EMITTED: Final = "mcp_django/events/emitted"


@on_emitted
def announce(row: EventOccurrence) -> None:
    """Tell the push streams of every worker that `row` was committed (nothing to do without a layer)."""
    if notifications.available():
        with contextlib.suppress(Exception):  # a layer that is down delays push until the next heartbeat
            notifications.send_notification_sync(ANNOUNCEMENTS, _EMITTED, {"name": row.name, "id": row.pk})


async def _next(inbox: AsyncIterator[Any], seconds: float) -> bool:
    """Wait up to `seconds` for an announcement; False when the time ran out first."""
    try:
        await asyncio.wait_for(anext(inbox), seconds)
    except TimeoutError:
        return False
    except StopAsyncIteration:
        await asyncio.sleep(seconds)  # no layer: the heartbeat alone paces the reads
        return False
    return True


async def stream_events(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Serve one push subscription until the client cancels it; its final result is `{}`."""
    source = await remote_source(params, ctx, wire.PUSH_MODE)  # a gateway's or a hub's remote type
    if source is None:
        declared, bound = await resolve(params, ctx, wire.PUSH_MODE)
    if ctx.emit is None:  # a transport that can only answer in one piece
        raise EventUnsupported(str(params.get("name")), wire.PUSH_MODE)
    if source is not None:
        return await source.stream_events(params, ctx)
    cursor = parse_cursor(params.get("cursor"))
    meta = {wire.SUBSCRIPTION_ID_META: ctx.request_id}
    owner, ceiling = principal_pk(ctx.principal), await caller_scope(ctx) or 0
    inbox = await notifications.subscribe(ANNOUNCEMENTS)  # joined before reading: nothing committed now is missed
    try:
        truncated = False
        if cursor is None:
            cursor = await run_sync(position, declared.name)
        else:
            batch = await run_sync(after, declared, cursor, 0)
            truncated = batch.truncated
        await ctx.send_notification(
            wire.ACTIVE_NOTIFICATION, {"cursor": str(cursor), "truncated": truncated, "_meta": meta}
        )
        while True:
            cursor = await _deliver(ctx, declared, bound, cursor, owner, int(ceiling), meta)
            if not await _next(inbox, events_settings.EVENTS_HEARTBEAT):
                cursor = await _deliver(ctx, declared, bound, cursor, owner, int(ceiling), meta)
                await ctx.send_notification(wire.HEARTBEAT_NOTIFICATION, {"cursor": str(cursor), "_meta": meta})
    finally:
        await aclose(inbox)


async def _deliver(
    ctx: RequestContext,
    declared: EventType,
    bound: Mapping[str, Any],
    cursor: int,
    owner: Any,
    ceiling: int,
    meta: Mapping[str, Any],
) -> int:
    """Send what came after `cursor` that this subscriber may receive and wants; return the cursor after it."""
    while True:
        batch = await run_sync(after, declared, cursor, events_settings.EVENTS_MAX_BATCH)
        wanted = [row for row in batch.rows if declared.matches(row.data, bound)]
        if wanted and not await allowed_now(owner, ceiling, declared):
            wanted = []  # the subscriber lost access: it stops receiving, the cursor still moves on
        for row in wanted:
            await ctx.send_notification(wire.EVENT_NOTIFICATION, {**occurrence(row), "_meta": dict(meta)})
        cursor = batch.cursor
        if not batch.has_more:
            return cursor
