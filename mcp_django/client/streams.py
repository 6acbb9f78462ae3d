"""What a remote MCP server sends of its own accord, and the stream it sends it on.

`ServerStream` is the half of `remote.RemoteConnection` that listens: the server's notifications go to
the request they concern or to the listeners (`add_listener`), its own requests are answered (`ping`;
`elicitation/create` by an `MCPClient`'s handler; a question a handshake-era server asks during a request,
by the `Asker` listening to that request: a gateway's caller; anything else is refused), and while anyone
listens the server's own stream (the handshake era's GET, the 2026-07-28 `subscriptions/listen`) is kept
open, opened again with a backoff when it drops. The transports read that stream in `_listen`.

A question comes on the stream of the request it is about (an HTTP POST's), or names no request: on stdio,
or on the server's own stream (the TypeScript SDK sends `roots/list` there). One that names none goes to
the only request in flight that may ask, when just one is; with several, it could be any caller's, and is
refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Final, Protocol, runtime_checkable

from mcp_django.client.config import ServerConfig
from mcp_django.protocol import jsonrpc
from mcp_django.protocol.jsonrpc import Message, request_id_of

logger = logging.getLogger("mcp_django.client")

_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
_LIST_CHANGED: Final[Mapping[str, str]] = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}

NotificationListener = Callable[[Message], Awaitable[None] | None]
"""Called with each notification the server sends outside a request (list_changed, resource updates, logs)."""


@runtime_checkable
class Asker(Protocol):
    """A request's listener that also answers the server's questions about the request (a gateway's caller)."""

    def __call__(self, message: Message) -> Awaitable[None] | None:
        """Receive one of the server's notifications about the request."""
        ...

    async def ask(self, request: Message) -> Message:
        """Answer the server's request `request` (with an `id`): the JSON-RPC response to send back."""
        ...


def _without_subscription_id(message: Message) -> Message:
    """A notification without our own listen stream's subscription id (it means nothing to whoever gets it)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(params, dict) or not isinstance(meta, dict) or _SUBSCRIPTION_ID not in meta:
        return message
    meta = {key: value for key, value in meta.items() if key != _SUBSCRIPTION_ID}
    params = {key: value for key, value in params.items() if key != "_meta"} | ({"_meta": meta} if meta else {})
    return {key: value for key, value in message.items() if key != "params"} | ({"params": params} if params else {})


class SessionExpired(Exception):
    """The server forgot our session (404, or a 400 answering no request): open a new session and retry once."""


class ServerStream:
    """The server's own messages: its notifications to listeners, its requests answered, its stream kept open.

    A `RemoteConnection` is one; what it needs from the connection (`open`, `reset`, the stateless `_meta`)
    and from the transport (`_listen`) is declared below and provided there.
    """

    server: ServerConfig
    capabilities: dict[str, Any]
    _opened: bool
    """Whether the connection is open (the listeners' stream starts then)."""

    def __init__(self) -> None:
        self._listeners: list[NotificationListener] = []
        self._listen_task: asyncio.Task[None] | None = None
        self._in_flight: dict[Any, NotificationListener] = {}
        """The listener of each request awaiting its answer, by request id (`in_flight`)."""
        self._answering: set[asyncio.Task[None]] = set()
        self.stream_open = asyncio.Event()
        """Set while the server's own stream (the handshake era's GET) is open: what it asks there is answered."""

    def add_listener(self, listener: NotificationListener) -> None:
        """Receive the server's notifications from now on (its list_changed ones among them)."""
        self._listeners.append(listener)
        if self._opened:
            self._start_listening()

    async def stream_ready(self, within: float) -> bool:
        """Wait up to `within` seconds for the server's own stream to open (or to fail: it has none); True if open."""
        listening = self._listen_task
        if listening is None or listening.done() or self.stream_open.is_set():
            return self.stream_open.is_set()
        opened = asyncio.ensure_future(self.stream_open.wait())
        try:
            await asyncio.wait({opened, listening}, timeout=within, return_when=asyncio.FIRST_COMPLETED)
        finally:
            opened.cancel()
        return self.stream_open.is_set()

    def listen_params(self) -> dict[str, Any]:
        """`subscriptions/listen` params asking for every list_changed the server advertises (stateless era)."""
        wanted = {
            flag: True
            for feature, flag in _LIST_CHANGED.items()
            if isinstance(self.capabilities.get(feature), dict) and self.capabilities[feature].get("listChanged")
        }
        return {"notifications": wanted, "_meta": self._stateless_meta()}

    @contextlib.contextmanager
    def in_flight(self, request_id: Any, listener: NotificationListener | None) -> Iterator[None]:
        """While a request awaits its answer: what the server says about it without naming it may be for `listener`."""
        if listener is None:
            yield
            return
        self._in_flight[request_id] = listener
        try:
            yield
        finally:
            self._in_flight.pop(request_id, None)

    def sole_in_flight(self, askers: bool = False) -> NotificationListener | None:
        """The listener of the only request in flight (of the only one whose listener is an `Asker`), if just one."""
        listeners = [each for each in self._in_flight.values() if not askers or isinstance(each, Asker)]
        return listeners[0] if len(listeners) == 1 else None

    async def dispatch(self, message: Message, on_notification: NotificationListener | None = None) -> Message | None:
        """Handle a message the server sent us that is not an answer; return the reply it needs, if any.

        Notifications go to `on_notification` (the request they relate to) or else to the listeners.
        The server's own requests: `ping` is answered, `elicitation/create` by the server's `elicitation`
        handler when it has one (an `MCPClient`'s); any other by the `Asker` of the request it comes with
        (`on_notification`, else the only asking request in flight); anything else is refused.
        """
        method = message.get("method")
        request_id = request_id_of(message)
        if isinstance(method, str) and method.startswith("notifications/subscriptions/"):
            return None  # the listen stream's own bookkeeping
        if request_id is not None:
            return await self._answer_request(message, request_id, on_notification)
        message = _without_subscription_id(message)
        targets = [on_notification] if on_notification is not None else list(self._listeners)
        for target in targets:
            try:
                outcome = target(message)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:
                logger.exception("A listener of remote MCP server %r failed", self.server.name)
        return None

    async def _answer_request(
        self, message: Message, request_id: Any, on_notification: NotificationListener | None
    ) -> Message:
        method = message.get("method")
        if method == "ping":
            return {"jsonrpc": "2.0", "id": request_id, "result": {}}
        if method == "elicitation/create" and self.server.elicitation is not None:
            params = message.get("params")
            try:
                answer = await self.server.elicitation(params if isinstance(params, dict) else {})
            except Exception:
                logger.exception("The elicitation handler for remote MCP server %r failed", self.server.name)
                failed = {"code": jsonrpc.INTERNAL_ERROR, "message": "The client could not answer the elicitation"}
                return {"jsonrpc": "2.0", "id": request_id, "error": failed}
            return {"jsonrpc": "2.0", "id": request_id, "result": dict(answer)}
        asker = on_notification if on_notification is not None else self.sole_in_flight(askers=True)
        if isinstance(asker, Asker) and self.server.relays_questions:
            try:
                return await asker.ask(message)
            except Exception:
                logger.exception("Passing on a request of remote MCP server %r failed", self.server.name)
                failed = {"code": jsonrpc.INTERNAL_ERROR, "message": f"The gateway could not pass on {method}"}
                return {"jsonrpc": "2.0", "id": request_id, "error": failed}
        if self.server.relays_questions:
            detail = f"No caller to ask {method}: the gateway passes on only what is asked during one request"
        else:
            detail = f"Method not supported by this client: {method}"
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": jsonrpc.METHOD_NOT_FOUND, "message": detail}}

    def answer_soon(
        self, message: Message, on_notification: NotificationListener | None, send: Callable[[Message], Awaitable[None]]
    ) -> None:
        """`dispatch` a server's request on a task of its own, its reply passed to `send`.

        For a request that names no request of ours (stdio, the server's own stream): a caller taking
        minutes to answer holds up nothing else the server sends meanwhile (the answers of other requests).
        """

        async def answered() -> None:
            reply = await self.dispatch(message, on_notification)
            if reply is not None:
                try:
                    await send(reply)
                except Exception as error:
                    logger.info("Could not answer remote MCP server %r: %s", self.server.name, error)

        task = asyncio.get_running_loop().create_task(answered())
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    def _start_listening(self) -> None:
        if self._listen_task is None or self._listen_task.done():
            self._listen_task = asyncio.get_running_loop().create_task(self._listen_forever())

    async def _listen_forever(self) -> None:
        """Keep the server's notification stream open while anyone listens, reconnecting with a backoff."""
        delay = 0.25
        while self._listeners:
            try:
                await self.open()
                if not await self._listen():
                    return  # the server has no such stream
                delay = 0.25
            except asyncio.CancelledError:
                raise
            except SessionExpired:
                await self.reset()
                continue
            except Exception as error:
                logger.info("Notification stream of remote MCP server %r dropped: %s", self.server.name, error)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _stop_listening(self) -> None:
        """Forget every listener and close the stream (the connection's `aclose`)."""
        self._listeners.clear()
        if self._listen_task is not None:
            self._listen_task.cancel()
            self._listen_task = None

    # -- provided by the connection and its transport ----------------------------------------------

    async def open(self) -> None:
        """Open the connection (`RemoteConnection.open`)."""
        raise NotImplementedError

    async def reset(self) -> None:
        """Forget the session and stop the transport (`RemoteConnection.reset`)."""
        raise NotImplementedError

    def _stateless_meta(self, client_capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The `_meta` of a 2026-07-28 request (`RemoteConnection._stateless_meta`)."""
        raise NotImplementedError

    async def _listen(self) -> bool:
        """Read the server's notification stream until it ends; return False when the server has none."""
        raise NotImplementedError
