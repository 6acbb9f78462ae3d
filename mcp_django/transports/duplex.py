"""One long-lived, two-way connection (a WebSocket, a stdio pipe) served by the protocol core.

HTTP carries one request per POST; a duplex transport carries every message of a client over one
channel, in both directions. `DuplexTransport` holds what the WebSocket consumer and the stdio
command share:

- one `Connection` for the channel's life, so a handshake-era session (`initialize`) lives in memory
  until the channel closes, while messages carrying 2026-07-28 `_meta` are served statelessly, message
  by message, as the core decides;
- requests run concurrently, one task each: a slow tool never holds up a `ping` or a quick call, and
  the notifications a request emits go out before its response, as they happen;
- `initialize`, notifications and responses are served in arrival order, before the next message is
  read, so `notifications/initialized` always finds the session `initialize` opened;
- `notifications/cancelled` stops the named request, which then sends nothing more;
- text that is not JSON is answered `-32700` and the channel stays open.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from mcp_django.protocol import Connection, InvalidRequest, MessageHandler, ParseError
from mcp_django.protocol.context import aclose
from mcp_django.protocol.jsonrpc import Message, RequestId, is_request
from mcp_django.transports.http import parse_body
from mcp_django.transports.sse import dump_message

logger = logging.getLogger("mcp_django.transports")

Send = Callable[[bytes], Awaitable[None]]
"""Writes one serialized JSON-RPC message (compact JSON, ASCII, no newline) to the channel."""

_UNCANCELLABLE: Final = frozenset({"initialize"})
"""Requests `notifications/cancelled` must not stop (the lifecycle spec says so for `initialize`)."""


def too_large(limit: int) -> dict[str, Any]:
    """The error answering a message over `limit` bytes; its id is unknown, so it is null."""
    return InvalidRequest(f"Request too large: a message may have at most {limit} bytes").to_response(None)


class DuplexTransport:
    """Serves every message of one duplex channel through an endpoint's protocol core.

    Args:
        handler: the protocol core of the endpoint being served.
        connection: the channel's `Connection` (principal, endpoint, transport name); it lives as
            long as the channel and holds the handshake session, if one is opened.
        send: writes one serialized message to the channel.
        refresh: brings the endpoint's overlay (the admin's state) up to date before each message
            (`Overlay.refresh`, throttled): a long-lived channel is admitted once, so it is refreshed here.
    """

    def __init__(
        self,
        handler: MessageHandler,
        connection: Connection,
        send: Send,
        *,
        refresh: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.handler = handler
        self.connection = connection
        self._send = send
        self._refresh = refresh
        self._send_lock = asyncio.Lock()
        self._requests: dict[RequestId, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        handler.opened(connection)

    async def receive_text(self, data: str | bytes) -> None:
        """Parse one message as JSON-RPC and serve it; text that is not JSON is answered `-32700`."""
        try:
            message = parse_body(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
        except ParseError as error:
            await self.send(error.to_response(None))
            return
        await self.receive(message)

    async def receive(self, message: Any) -> None:
        """Serve one parsed message: requests in a task of their own, everything else right away."""
        if self._refresh is not None:
            await self._refresh()
        method = message.get("method") if isinstance(message, dict) else None
        # A method or id of any JSON type may come: neither is hashed unless it is a string (the core refuses the rest).
        if not is_request(message) or not isinstance(method, str) or method in _UNCANCELLABLE:
            if _is_cancellation(message):
                self._cancel(message["params"]["requestId"])
            reply = await self.handler.handle(message, self.connection)
            if reply is not None:
                await self.send(reply)
            return
        request_id = message["id"]
        task = asyncio.create_task(self._serve(message))
        self._tasks.add(task)
        if _is_valid_id(request_id):
            self._requests[request_id] = task
        task.add_done_callback(lambda done: self._forget(request_id, done))

    async def push(self, message: Message) -> bool:
        """Send a server notification no request asked for, if this channel's client takes it.

        Only a handshake-era client that finished `initialize` gets one here: the list-changed
        notifications, and `notifications/resources/updated` for the URIs it subscribed to while it
        may read them (a 2026-07-28 client receives them on its `subscriptions/listen` request instead).

        Returns:
            True when the notification was sent.
        """
        session = self.connection.session
        if session is None or not session.initialized:
            return False
        if not await self.handler.delivers(message, self.connection):
            return False
        await self.send(message)
        return True

    async def send(self, message: Any) -> None:
        """Serialize and send one message; messages never interleave."""
        data = dump_message(message)
        async with self._send_lock:
            await self._send(data)

    async def drain(self) -> None:
        """Wait until every request in flight has been answered."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel every request in flight (the channel is gone) and wait for them to stop."""
        for task in list(self._tasks):
            task.cancel()
        await self.drain()
        self.handler.closed(self.connection)

    async def _serve(self, message: dict[str, Any]) -> None:
        stream = self.handler.stream(message, self.connection)
        try:
            async for item in stream:
                await self.send(item)
        except Exception:
            logger.exception("Could not send the reply to %r over %s", message.get("method"), self.connection.transport)
        finally:
            await aclose(stream)  # cancels the request if it is still running

    def _cancel(self, request_id: Any) -> None:
        task = self._requests.get(request_id) if _is_valid_id(request_id) else None
        if task is not None:
            task.cancel()

    def _forget(self, request_id: RequestId, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if _is_valid_id(request_id) and self._requests.get(request_id) is task:
            del self._requests[request_id]


def _is_valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _is_cancellation(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("method") != "notifications/cancelled" or "id" in message:
        return False
    params = message.get("params")
    return isinstance(params, dict) and "requestId" in params
