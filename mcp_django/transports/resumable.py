"""Resumable SSE streams for handshake-era sessions (SEP-1699): priming events, `retry`, `Last-Event-ID`.

Every POST of a handshake session that answers with SSE writes its messages into an `EventBuffer`
instead of straight onto the wire. The request runs on its own, so a dropped connection does not
cancel it (in the handshake era only `notifications/cancelled` does). The POST's response follows the
buffer; a client that lost it, or that the server asked to reconnect (`ctx.close_stream()`), sends a
GET with `Last-Event-ID` and gets the rest, the final response included.

Buffers live in the worker process that serves the request. With a Channels layer shared between
processes (Redis), a stream's id names the channel its worker listens on, and a GET that reaches another
worker is relayed from the owner (`transports.resume_relay`): no sticky sessions are needed.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any, ClassVar, Final

from mcp_django.transports.sse import dump_message, format_event, priming_event

KEEP_FINISHED_S: Final = 120.0
"""How long a finished stream stays resumable."""


class EventBuffer:
    """The messages of one POST's SSE stream, numbered from 1; 0 is the priming event."""

    def __init__(self, session_id: str, owner: str | None = None) -> None:
        # "<random>~<owner channel>": another worker can tell whom to ask (transports.resume_relay).
        self.stream_id = secrets.token_hex(8) + (f"~{owner}" if owner else "")
        self.session_id = session_id
        self.messages: list[dict[str, Any]] = []
        self.done = False
        self.detached_at: int | None = None
        self.finished_at: float | None = None
        self._wakeup = asyncio.Event()

    def event_id(self, number: int) -> str:
        return f"{self.stream_id}.{number}"

    def append(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self._wake()

    def finish(self) -> None:
        self.done = True
        self.finished_at = time.monotonic()
        self._wake()

    def detach(self) -> None:
        """End the POST's response after what it holds so far; the request goes on, the client resumes with a GET."""
        if self.detached_at is None:
            self.detached_at = len(self.messages)
            self._wake()

    async def first(self) -> dict[str, Any] | None:
        """The first message, once there is one; None when the request ended without any."""
        while not self.messages and not self.done:
            await self._wait()
        return self.messages[0] if self.messages else None

    async def follow(self, after: int, *, until_detached: bool = False) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """Yield `(number, message)` for every message after `after`, as they come, until the stream ends."""
        number = after
        while True:
            # The end is read again after every yield: while the caller held a message, more may have come
            # and the stream finished; ending on `done` with a stale end would lose those.
            wakeup = self._wakeup
            end = len(self.messages)
            if until_detached and self.detached_at is not None:
                end = self.detached_at
            if number < end:
                number += 1
                yield number, self.messages[number - 1]
                continue
            if self.done or (until_detached and self.detached_at is not None):
                return
            await wakeup.wait()

    def _wake(self) -> None:
        self._wakeup.set()
        self._wakeup = asyncio.Event()

    async def _wait(self) -> None:
        await self._wakeup.wait()


class BufferRegistry:
    """The resumable streams of this process, by stream id; finished ones are dropped after a while."""

    sweep_interval: ClassVar[float] = 1.0
    """Seconds between two sweeps for finished buffers (a sweep reads every buffer)."""

    def __init__(self) -> None:
        self._buffers: dict[str, EventBuffer] = {}
        self._swept = time.monotonic()

    def open(self, session_id: str, owner: str | None = None) -> EventBuffer:
        """A new buffer for a POST of `session_id`; `owner` is the channel other workers resume it through."""
        self._sweep()
        buffer = EventBuffer(session_id, owner)
        self._buffers[buffer.stream_id] = buffer
        return buffer

    def discard(self, buffer: EventBuffer) -> None:
        """Forget a buffer at once: its request answered in one piece, so there is no stream to resume."""
        self._buffers.pop(buffer.stream_id, None)

    def __len__(self) -> int:
        return len(self._buffers)

    def find(self, last_event_id: str, session_id: str) -> tuple[EventBuffer, int] | None:
        """The buffer and position a `Last-Event-ID` names, if it belongs to `session_id`."""
        stream_id, _, number = last_event_id.rpartition(".")  # an owner channel's name has dots too
        buffer = self._buffers.get(stream_id)
        if buffer is None or buffer.session_id != session_id or not number.isdigit():
            return None
        return buffer, min(int(number), len(buffer.messages))

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._swept < self.sweep_interval:
            return
        self._swept = now
        for stream_id, buffer in list(self._buffers.items()):
            if buffer.finished_at is not None and now - buffer.finished_at > KEEP_FINISHED_S:
                del self._buffers[stream_id]


buffers = BufferRegistry()


async def resumable_events(
    buffer: EventBuffer, after: int, *, priming: bool, until_detached: bool
) -> AsyncIterator[bytes]:
    """The SSE bytes of `buffer` after event `after`: a POST's response, or a GET that resumes one."""
    if priming:
        # An id and empty data: something to resume from even before the first message (SEP-1699).
        yield priming_event(buffer.event_id(0))
    async for number, message in buffer.follow(after, until_detached=until_detached):
        yield format_event(dump_message(message), buffer.event_id(number))
