"""`MCPClient`'s side of the Events extension (SEP-3415): list a server's event types, poll them from a
cursor, hold a push stream, subscribe a webhook.

    client = MCPClient("shop")
    types = await client.list_events()
    page = await client.poll_events("order.shipped", cursor=saved)          # saved = page["cursor"] next time
    async with client.stream_events("order.shipped", cursor=saved) as stream:
        async for occurrence in stream:                                      # stream.cursor: where to resume
            ...
    await client.subscribe_events("order.shipped", url="https://me.example/hooks", secret=new_secret())

The wire names are the server side's (`mcp_django.events.wire`); the events extension's methods exist in
2026-07-28 and later, so the connection must speak it (a server that does not answers `-32601`).
docs/events.md ("Consuming a server's events").
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable, Mapping
from types import TracebackType
from typing import Any, Self

from mcp_django.events import wire


class EventsMethods:
    """The events methods on top of `request` and `_stream_request` (which `MCPClient` implements)."""

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        raise NotImplementedError

    async def _stream_request(
        self,
        method: str,
        params: dict[str, Any],
        on_notification: Callable[[dict[str, Any]], None],
        timeout: float,  # noqa: ASYNC109 (a long-lived request's own deadline)
    ) -> dict[str, Any]:
        """Send a request whose notifications go to `on_notification`, waiting up to `timeout` seconds."""
        raise NotImplementedError

    async def list_events(self) -> list[dict[str, Any]]:
        """`events/list`: the event types this caller may see (`name`, `delivery`, `inputSchema`, `payloadSchema`)."""
        events: list[dict[str, Any]] = (await self.request(wire.LIST, {})).get("events") or []
        return events

    async def poll_events(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        cursor: str | None = None,
        *,
        max_events: int | None = None,
    ) -> dict[str, Any]:
        """`events/poll`: `{events, cursor, truncated, hasMore, nextPollMs}`; a `None` cursor starts from now.

        Keep the answer's `cursor` and poll from it next time: any cursor can be polled from again.
        """
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {}), "cursor": cursor}
        if max_events is not None:
            params["maxEvents"] = max_events
        return await self.request(wire.POLL, params)

    def stream_events(
        self, name: str, arguments: Mapping[str, Any] | None = None, cursor: str | None = None
    ) -> EventStream:
        """`events/stream`: an `EventStream` of the occurrences, after `cursor` (replayed) or from now."""
        return EventStream(self, {"name": name, "arguments": dict(arguments or {}), "cursor": cursor})

    async def subscribe_events(
        self,
        name: str,
        *,
        url: str,
        secret: str,
        arguments: Mapping[str, Any] | None = None,
        ttl_ms: int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """`events/subscribe` a webhook: `{id, refreshBefore, cursor, truncated}`. Call it again with the same
        name, arguments and URL before `refreshBefore` to keep it (with another secret to rotate it).

        `secret` is yours (`mcp_django.events.signatures.new_secret()`); the receiver at `url` verifies with it
        (`mcp_django.events.receiver.WebhookReceiver`).
        """
        delivery = {"mode": wire.WEBHOOK_MODE, "url": url, "secret": secret}
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {}), "delivery": delivery}
        if ttl_ms is not None:
            params["ttlMs"] = ttl_ms
        if cursor is not None:
            params["cursor"] = cursor
        return await self.request(wire.SUBSCRIBE, params)

    async def unsubscribe_events(self, subscription_id: str) -> dict[str, Any]:
        """`events/unsubscribe` the webhook subscription `subscription_id`."""
        return await self.request(wire.UNSUBSCRIBE, {"id": subscription_id})


class EventStream:
    """One push subscription: iterate it for the occurrences, in order; `cursor` is where to resume from.

    Use it as an async context manager (`async with client.stream_events(...) as stream`): leaving it ends
    the request, which ends the subscription on the server. The server's error ends the iteration by raising
    it (`RemoteError`: `-32011` for a type this caller may not see).
    """

    def __init__(self, client: EventsMethods, params: dict[str, Any]) -> None:
        self._client = client
        self._params = params
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[dict[str, Any]] | None = None
        self.cursor: str | None = params["cursor"]
        """The cursor after the latest occurrence or heartbeat: poll or stream from it to resume."""
        self.truncated = False
        """Whether the server purged occurrences after the cursor given (a gap, marked on `active`)."""
        self.active = asyncio.Event()
        """Set once the server confirmed the subscription (`notifications/events/active`)."""

    def _received(self, message: dict[str, Any]) -> None:
        self._inbox.put_nowait(message)

    async def __aenter__(self) -> Self:
        self._start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    def _start(self) -> None:
        if self._task is None:
            request = self._client._stream_request(wire.STREAM, self._params, self._received, math.inf)
            self._task = asyncio.ensure_future(request)

    async def aclose(self) -> None:
        """End the subscription (the request is cancelled: the connection's stream for it closes)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._occurrences()

    async def _occurrences(self) -> AsyncIterator[dict[str, Any]]:
        self._start()
        assert self._task is not None
        while True:
            message = await self._next(self._task)
            if message is None:
                return
            method, params = message.get("method"), message.get("params") or {}
            if isinstance(params.get("cursor"), str):
                self.cursor = params["cursor"]
            if method == wire.ACTIVE_NOTIFICATION:
                self.truncated = bool(params.get("truncated"))
                self.active.set()
            elif method == wire.EVENT_NOTIFICATION:
                yield {key: value for key, value in params.items() if key != "_meta"}

    async def _next(self, task: asyncio.Task[dict[str, Any]]) -> dict[str, Any] | None:
        """The next notification; None once the request ended (its error raised)."""
        if not self._inbox.empty():
            return self._inbox.get_nowait()
        got = asyncio.ensure_future(self._inbox.get())
        try:
            await asyncio.wait({got, task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not got.done():
                got.cancel()
        if got.done() and not got.cancelled():
            return got.result()
        task.result()  # the server's error, raised
        return None
