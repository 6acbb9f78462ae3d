"""Resume an SSE stream on any worker: a `Last-Event-ID` for another process's stream, served over the Channels layer.

A handshake-era POST's stream is buffered in the worker that serves the call (`transports.resumable`).
Behind a load balancer without sticky sessions the client's resuming GET may reach another worker. So,
when the Channels layer is shared between processes (Redis), each worker listens on a channel of its
own, and the ids of its streams carry that channel's name. A worker that gets a `Last-Event-ID` it
does not hold asks the owner, through the layer, for the rest of the stream, and relays it to the
client. The in-memory layer reaches no other process: then there is nothing to ask, and an unknown id
is answered 404 as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any, Final

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer, get_channel_layer

from mcp_django.transports import resumable
from mcp_django.transports.sse import dump_message, format_event

REQUEST: Final = "mcp.resume.request"
EVENT: Final = "mcp.resume.event"
END: Final = "mcp.resume.end"
MISSING: Final = "mcp.resume.missing"

ANSWER_TIMEOUT_S: Final = 3.0
"""How long a worker waits for the owner of a stream to answer (a dead owner never does: then 404)."""
SEND_TIMEOUT_S: Final = 60.0
"""How long the owner keeps retrying a message the resuming worker's full channel cannot take yet."""


def _shared_layer() -> Any:
    """The default Channels layer when it spans processes; None for none or the in-memory one."""
    layer = get_channel_layer()
    return None if layer is None or isinstance(layer, InMemoryChannelLayer) else layer


class StreamRelay:
    """This process's side of the relay: it serves its streams to other workers and resumes theirs."""

    def __init__(self) -> None:
        self._listening: dict[asyncio.AbstractEventLoop, tuple[str, asyncio.Task[None]]] = {}

    async def owner(self) -> str | None:
        """The channel other workers reach this process's streams on (listening from the first call);
        None when the layer is not shared."""
        layer = _shared_layer()
        if layer is None:
            return None
        loop = asyncio.get_running_loop()
        listening = self._listening.get(loop)
        if listening is None or listening[1].done():
            for other in [other for other in self._listening if other.is_closed()]:
                del self._listening[other]
            channel = await layer.new_channel()
            listening = (channel, asyncio.ensure_future(self._serve(layer, channel)))
            self._listening[loop] = listening
        return listening[0]

    async def resume(self, last_event_id: str, session_id: str) -> AsyncIterator[bytes] | None:
        """The SSE bytes after `last_event_id` of a stream another worker holds; None when none does."""
        stream_id, _, number = last_event_id.rpartition(".")
        owner = stream_id.partition("~")[2]
        layer = _shared_layer()
        if layer is None or not owner or not number.isdigit() or owner == await self.owner():
            return None
        reply = await layer.new_channel()
        request = {"type": REQUEST, "stream": stream_id, "after": int(number), "session": session_id, "reply": reply}
        await layer.send(owner, request)
        try:
            async with asyncio.timeout(ANSWER_TIMEOUT_S):
                first = await layer.receive(reply)
        except TimeoutError:
            return None
        if first.get("type") not in {EVENT, END}:
            return None
        return self._relayed(layer, reply, stream_id, first)

    @staticmethod
    async def _relayed(layer: Any, reply: str, stream_id: str, event: dict[str, Any]) -> AsyncIterator[bytes]:
        while event.get("type") == EVENT:
            yield format_event(dump_message(event["message"]), f"{stream_id}.{event['number']}")
            event = await layer.receive(reply)

    async def _serve(self, layer: Any, channel: str) -> None:
        streaming: set[asyncio.Task[None]] = set()
        while True:
            event = await layer.receive(channel)
            if event.get("type") == REQUEST and isinstance(event.get("reply"), str):
                task = asyncio.ensure_future(self._stream(layer, event))
                streaming.add(task)
                task.add_done_callback(streaming.discard)

    @staticmethod
    async def _stream(layer: Any, request: dict[str, Any]) -> None:
        reply = request["reply"]
        found = resumable.buffers.find(f"{request.get('stream')}.{request.get('after')}", str(request.get("session")))
        if found is None:
            await _send(layer, reply, {"type": MISSING})
            return
        buffer, after = found
        async for number, message in buffer.follow(after):
            await _send(layer, reply, {"type": EVENT, "number": number, "message": message})
        await _send(layer, reply, {"type": END})


async def _send(layer: Any, channel: str, message: dict[str, Any]) -> None:
    """Send `message`, waiting while the receiver's channel is full (a slow client), for a bounded time."""
    deadline = time.monotonic() + SEND_TIMEOUT_S
    while True:
        with contextlib.suppress(ChannelFull):
            await layer.send(channel, message)
            return
        if time.monotonic() > deadline:
            return  # the resuming worker stopped reading: its client went away
        await asyncio.sleep(0.05)


stream_relay = StreamRelay()
