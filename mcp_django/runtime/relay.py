"""Carry clients' answers to server-to-client requests between worker processes, over the Channels layer.

In the handshake era a tool's question (elicitation, sampling, roots) goes to the client on the
SSE stream of the POST that called the tool, and the client answers in a *separate* POST, which a
load balancer may hand to any worker. The worker whose tool waits joins a Channels group named
after the request id; a worker that receives an answer nobody waits for in-process sends it to
that group. With the in-memory layer this stays within one process; a shared layer (Redis,
`channels_redis`) spans every worker.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

from channels.layers import get_channel_layer

from mcp_django.protocol.jsonrpc import Message

logger = logging.getLogger("mcp_django.runtime.relay")

EVENT_TYPE: Final = "mcp.answer"


def _group(request_id: str) -> str:
    return f"mcp_django.answer.{request_id}"


class ChannelLayerRelay:
    """A `ResponseRelay` over the default Channels layer.

    Each watched request gets its own channel and a reader task, so the relay works in any event
    loop (every test has its own) and holds nothing once the request is answered.
    """

    def __init__(self) -> None:
        self._readers: dict[str, tuple[str, asyncio.Task[None]]] = {}

    async def watch(self, request_id: str, deliver: Callable[[Message, str | None], object]) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        channel = await layer.new_channel()
        await layer.group_add(_group(request_id), channel)
        self._readers[request_id] = (channel, asyncio.ensure_future(self._read(layer, channel, deliver)))

    async def unwatch(self, request_id: str) -> None:
        entry = self._readers.pop(request_id, None)
        if entry is None:
            return
        channel, reader = entry
        reader.cancel()
        layer = get_channel_layer()
        if layer is not None:
            await layer.group_discard(_group(request_id), channel)

    async def forward(self, message: Message, owner: str | None) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        await layer.group_send(_group(str(message["id"])), {"type": EVENT_TYPE, "message": message, "owner": owner})

    @staticmethod
    async def _read(layer: Any, channel: str, deliver: Callable[[Message, str | None], object]) -> None:
        while True:
            event = await layer.receive(channel)
            message = event.get("message")
            if event.get("type") == EVENT_TYPE and isinstance(message, dict):
                owner = event.get("owner")
                deliver(message, owner if isinstance(owner, str) else None)


def channel_layer_relay() -> ChannelLayerRelay | None:
    """A relay over the configured Channels layer, or None when there is none."""
    return ChannelLayerRelay() if get_channel_layer() is not None else None
