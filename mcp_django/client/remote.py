"""What every connection to a remote MCP server shares: opening it, one request's lifecycle, its errors.

`RemoteConnection` speaks MCP as a client over a transport its subclasses provide
(`http.HTTPConnection`, `stdio.StdioConnection`): it opens once for concurrent callers, bounds each
request in time, and re-opens after the server forgot the session. Which revision it speaks and what
it declares (the handshake in either era, a -32022 renegotiation, the stateless `_meta`) is
`negotiation.Negotiation`'s; what the server sends of its own accord (its
notifications, its requests, the stream they come on) is `streams.ServerStream`'s. Each subclass is a
kind of remote a `SERVERS` entry's `BACKEND` names: it says which keys it reads and what they give.
Callers get one through `connection.connect(server)`, which pools them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from mcp_django.client.config import ServerConfig
from mcp_django.client.negotiation import Negotiation
from mcp_django.client.streams import NotificationListener, ServerStream, SessionExpired
from mcp_django.conf import mcp_settings
from mcp_django.exceptions import BackendUnavailable, RemoteError
from mcp_django.extensions import installed_extensions
from mcp_django.protocol import jsonrpc
from mcp_django.protocol.jsonrpc import MCPError, Message
from mcp_django.protocol.observers import ClientObserver, RemotePeer, compose_client_observers

logger = logging.getLogger("mcp_django.client")

_request_ids = itertools.count(1)
"""Request ids, unique in the process rather than per connection: a stateless server has no session to tell
two connections' requests apart by, and a retry must never reuse the id of the request it retries."""

_observer: list[ClientObserver | None] = []
"""The installed extensions' client observers as one (None: none), gathered on first use."""


def client_observer() -> ClientObserver | None:
    """What observes every request sent to a remote server: the installed extensions' `client_observers()`."""
    if not _observer:
        observers = [observer for extension in installed_extensions() for observer in extension.client_observers()]
        _observer.append(compose_client_observers(observers))
    return _observer[0]


mcp_settings.on_reload(_observer.clear)


class NotForwardable(MCPError):
    """What the caller asked cannot travel through the gateway in its era (docs/gateway.md lists what)."""

    code = jsonrpc.INVALID_REQUEST
    default_message = "Not forwardable through the gateway"


class RemoteConnection(Negotiation, ServerStream):
    """A client connection to one remote MCP server, opened on first use and shared by concurrent callers.

    After `open()` (done by the first `request`), `protocol_version`, `capabilities`, `server_info` and
    `instructions` describe what the server negotiated. Subclasses provide the transport: `_start`,
    `_round_trip` (one request, its answer), `_notify`, `_listen` (the server's own notifications) and
    `_stop`. Every request goes out through `_exchange`, which the installed client observers watch.

    A subclass is also a kind of remote, which a `SERVERS` entry's `BACKEND` names by its import path: it
    says which of the entry's keys it reads (`config_keys`), what is wrong with them (`config_problems`,
    which the system checks show) and which `ServerConfig` fields they give (`configure`).
    """

    transport: ClassVar[str] = ""
    """How it reaches the server, as telemetry's `network.transport` names it (`"http"`, `"stdio"`)."""
    config_keys: ClassVar[frozenset[str]] = frozenset()
    """The keys of a `SERVERS` entry it reads, besides those of every kind (`servers.COMMON_KEYS`)."""
    signs_in: ClassVar[bool] = False
    """Whether its server can take OAuth (`AUTH`): a resource behind an authorization server, over HTTP."""

    @classmethod
    def config_problems(cls, config: Mapping[str, Any]) -> list[str]:
        """What is wrong with its keys of the entry `config`, in words a system check shows (empty if fine)."""
        return []

    @classmethod
    def configure(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        """The `ServerConfig` fields its keys of the (checked) entry `config` give; `options` holds any others."""
        return {"options": tuple(sorted((key, config[key]) for key in cls.config_keys if key in config))}

    @classmethod
    def location(cls, config: Mapping[str, Any]) -> str:
        """Where the entry's server is, in a few words: the name of an entry that has none, and the admin's."""
        return cls.__name__

    def __init__(self, server: ServerConfig) -> None:
        super().__init__()
        self.server = server
        self.protocol_version: str | None = None
        self.capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.instructions: str | None = None
        self._open_lock = asyncio.Lock()
        self._opened = False

    # -- what callers use --------------------------------------------------------------------------

    async def open(self) -> None:
        """Start the transport and negotiate, once; concurrent callers wait for the same opening.

        Raises:
            BackendUnavailable: the server cannot be reached or does not answer within `connect_timeout`.
            RemoteError: the server refused the handshake.
        """
        if self._opened:
            return
        async with self._open_lock:
            if self._opened:
                return
            try:
                async with asyncio.timeout(self.server.connect_timeout):
                    await self._start()
                    await self._handshake()
            except TimeoutError:
                await self._stop()
                raise self.unavailable("timeout", f"no answer within {self.server.connect_timeout:g}s") from None
            except BaseException:
                await self._stop()
                raise
            self._opened = True
            if self._listeners:
                self._start_listening()

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        on_notification: NotificationListener | None = None,
        client_capabilities: Mapping[str, Any] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (a per-request deadline; the default comes from settings)
    ) -> dict[str, Any]:
        """Send one request and return its result.

        Args:
            method: the MCP method.
            params: its params (without the protocol's `_meta` keys: the connection adds its own).
            meta: `_meta` entries to send along (a `progressToken`, trace context); keys of the
                protocol's own namespace are dropped, since the gateway speaks its own era here.
            on_notification: receives the notifications the server sends about this request (progress, logs).
            client_capabilities: the client capabilities to declare for this request in the stateless era
                (a gateway declares its caller's, whose questions it relays); none by default.
            timeout: seconds to wait for the answer; `read_timeout` by default.

        Raises:
            RemoteError: the server answered with a JSON-RPC error.
            BackendUnavailable: down, timed out, or broke the protocol.
        """
        limit = self.server.read_timeout if timeout is None else timeout
        for attempt in (1, 2):
            await self.open()
            try:
                async with asyncio.timeout(limit):
                    outgoing = self._params(params, meta, client_capabilities)
                    try:
                        return await self._exchange(method, outgoing, on_notification)
                    except RemoteError as error:
                        if not self._renegotiate(error):
                            raise
                    outgoing = self._params(params, meta, client_capabilities)  # in the version agreed now
                    return await self._exchange(method, outgoing, on_notification)
            except SessionExpired:
                if attempt == 2:
                    raise self.unavailable("protocol", "the server forgot a session it had just opened") from None
                logger.info("Remote MCP server %r expired our session; opening a new one", self.server.name)
                await self.reset()
            except TimeoutError:
                raise self.unavailable("timeout", f"no answer to {method} within {limit:g}s") from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification (no answer expected), within `read_timeout` whatever the server does meanwhile."""
        await self.open()
        try:
            async with asyncio.timeout(self.server.read_timeout):
                await self._notify(method, dict(params) if params is not None else None)
        except TimeoutError:
            raise self.unavailable("timeout", f"no answer to {method} within {self.server.read_timeout:g}s") from None

    async def reset(self) -> None:
        """Forget the negotiated state and stop the transport; the next request opens it again."""
        async with self._open_lock:
            self._opened = False
            await self._stop()

    async def aclose(self) -> None:
        """Close the connection for good (the pool's shutdown)."""
        self._stop_listening()
        await self.reset()

    def unavailable(self, reason: str, detail: str) -> BackendUnavailable:
        """A `BackendUnavailable` naming this server."""
        return BackendUnavailable(self.server.name, reason, detail)

    def result_of(self, message: Any, method: str) -> dict[str, Any]:
        """The result of a response message, or its error raised as a `RemoteError`."""
        if not isinstance(message, dict):
            raise self.unavailable("protocol", f"the answer to {method} is not a JSON object")
        error = message.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            raise RemoteError(
                code if isinstance(code, int) and not isinstance(code, bool) else jsonrpc.INTERNAL_ERROR,
                str(error.get("message") or ""),
                error.get("data"),
                server=self.server.name,
            )
        result = message.get("result")
        if not isinstance(result, dict):
            raise self.unavailable("protocol", f"the answer to {method} has no result object")
        return result

    # -- the transport (subclasses) ----------------------------------------------------------------

    async def _start(self) -> None:
        """Make the transport ready (spawn the process, build the HTTP client)."""
        raise NotImplementedError

    async def _exchange(
        self, method: str, params: dict[str, Any], on_notification: NotificationListener | None
    ) -> dict[str, Any]:
        """Send one request with a fresh id and return the result of its answer, observed (telemetry).

        Raises:
            RemoteError, BackendUnavailable, SessionExpired.
        """
        request: Message = {"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params}
        observer = client_observer()
        with self.in_flight(request["id"], on_notification):
            if observer is None:
                return self.result_of(await self._round_trip(request, on_notification), method)
            server = self.server
            peer = RemotePeer(server.name, self.transport, server.url, self.protocol_version, self.session_id)
            with observer.sending(request, peer) as observation:
                answer = await self._round_trip(request, on_notification)
                observation.answered(answer)
        return self.result_of(answer, method)

    @property
    def session_id(self) -> str | None:
        """The session id the server gave (handshake-era HTTP only)."""
        return None

    async def _round_trip(self, request: Message, on_notification: NotificationListener | None) -> Message:
        """Send `request` and return the server's answer, unchecked (raises BackendUnavailable, SessionExpired)."""
        raise NotImplementedError

    async def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        """Send one notification."""
        raise NotImplementedError

    async def _stop(self) -> None:
        """Release the transport (idempotent)."""
        raise NotImplementedError

    def next_id(self) -> int:
        """A request id never used in this process (see `_request_ids`)."""
        return next(_request_ids)
