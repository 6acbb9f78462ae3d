"""Push delivery: `events/stream`, one long-lived request per subscription, its events as notifications.

The stream confirms itself with `notifications/events/active {cursor, truncated}`, replays what came
after the client's cursor (when it gave one), then sends each new occurrence the subscription's
arguments match as `notifications/events/event`, and `notifications/events/heartbeat {cursor}` whenever
`EVENTS_HEARTBEAT` seconds pass without one. Every notification names the stream in
`_meta["io.modelcontextprotocol/subscriptionId"]` (the request's id). It ends when the client cancels
the request (or goes away), or with `notifications/events/terminated {error}` and the stream's result
when the subscriber loses access (`-32012`) or the type is no longer declared (`-32011`). A purge that
overtakes the stream's cursor is a fresh `notifications/events/active` with `truncated: true`; a store
that cannot be read, `notifications/events/error` (the stream stays and reads again).

An emit announces its occurrence through the Channels layer once its transaction commits (`announce`),
so a stream on any worker reads it from the database; each read also happens on a heartbeat, so a
stream misses nothing even where no layer is configured. The subscriber's access is checked afresh,
from the database, before occurrences are sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

from django.db import DatabaseError

from mcp_django.events import wire
from mcp_django.events.access import allowed_now, caller_scope, principal_pk
from mcp_django.events.conf import events_settings
from mcp_django.events.declarations import EventType, event_types
from mcp_django.events.errors import EventUnsupported
from mcp_django.events.methods import resolve
from mcp_django.events.models import EventOccurrence
from mcp_django.events.sources import remote_source
from mcp_django.events.store import after, occurrence, on_emitted, parse_cursor, position, purged_through
from mcp_django.protocol import RequestContext
from mcp_django.protocol.context import aclose
from mcp_django.protocol.features.base import Server
from mcp_django.protocol.jsonrpc import INTERNAL_ERROR
from mcp_django.runtime import notifications
from mcp_django.runtime.executor import run_sync

logger = logging.getLogger("mcp_django.events")

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
    owner, ceiling = principal_pk(ctx.principal), int(await caller_scope(ctx) or 0)
    inbox = await notifications.subscribe(ANNOUNCEMENTS)  # joined before reading: nothing committed now is missed
    try:
        truncated = False
        if cursor is None:
            cursor = await run_sync(position, declared.name)
        else:
            batch = await run_sync(after, declared, cursor, 0)
            truncated = batch.truncated
            if truncated:  # resume where the kept occurrences begin: the gap is told once
                cursor = max(cursor, await run_sync(purged_through, declared.name))
        await ctx.send_notification(
            wire.ACTIVE_NOTIFICATION, {"cursor": str(cursor), "truncated": truncated, "_meta": meta}
        )
        stream = _Stream(ctx, declared, bound, owner, ceiling, meta)
        while True:
            try:
                cursor = await stream.deliver(cursor)
                if not await _next(inbox, events_settings.EVENTS_HEARTBEAT):
                    cursor = await stream.deliver(cursor)
                    await ctx.send_notification(wire.HEARTBEAT_NOTIFICATION, {"cursor": str(cursor), "_meta": meta})
            except _Ended as ended:
                await ctx.send_notification(wire.TERMINATED_NOTIFICATION, {"error": ended.error, "_meta": meta})
                return {}
            except DatabaseError as error:  # the store could not be read: said, and tried again at the next wake
                logger.warning("Push stream of %s could not read the event store: %s", declared.name, error)
                failure = {"code": INTERNAL_ERROR, "message": "Internal error", "data": {"reason": "store"}}
                await ctx.send_notification(wire.ERROR_NOTIFICATION, {"error": failure, "_meta": meta})
                await _next(inbox, events_settings.EVENTS_HEARTBEAT)
    finally:
        await aclose(inbox)


class _Ended(Exception):
    """The subscription ends: `notifications/events/terminated` with `error`, then the stream's result."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.error = error


class _Stream:
    """One push subscription's deliveries: what its subscriber may receive and wants, checked afresh."""

    def __init__(
        self,
        ctx: RequestContext,
        declared: EventType,
        bound: Mapping[str, Any],
        owner: Any,
        ceiling: int,
        meta: Mapping[str, Any],
    ) -> None:
        self.ctx, self.declared, self.bound = ctx, declared, bound
        self.owner, self.ceiling, self.meta = owner, ceiling, meta

    async def deliver(self, cursor: int) -> int:
        """Send what came after `cursor`; return the cursor after it.

        A purge that overtook the cursor is told by a fresh `active` with `truncated: true` (a gap, never
        silent). A subscriber who lost access, or a type no longer declared, ends the subscription (`_Ended`).
        """
        declared = self.declared
        if event_types.get(declared.name) is not declared:
            raise _Ended({"code": wire.NOT_FOUND, "message": "Event type not found", "data": {"kind": "event"}})
        while True:
            batch = await run_sync(after, declared, cursor, events_settings.EVENTS_MAX_BATCH)
            if batch.truncated:
                cursor = max(cursor, await run_sync(purged_through, declared.name))
                active = {"cursor": str(cursor), "truncated": True, "_meta": dict(self.meta)}
                await self.ctx.send_notification(wire.ACTIVE_NOTIFICATION, active)
                continue
            wanted = [row for row in batch.rows if declared.matches(row.data, self.bound)]
            if wanted and not await allowed_now(self.owner, self.ceiling, declared):
                raise _Ended({"code": wire.FORBIDDEN, "message": "Forbidden", "data": {"reason": "access_revoked"}})
            for row in wanted:
                await self.ctx.send_notification(wire.EVENT_NOTIFICATION, {**occurrence(row), "_meta": dict(self.meta)})
            cursor = batch.cursor
            if not batch.has_more:
                return cursor
