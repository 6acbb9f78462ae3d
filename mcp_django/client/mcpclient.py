"""An MCP client for Django code that runs the interceptor chain around its own requests (seed 004's
`InterceptingMcpClient`).

Views, tasks and management commands that *call* MCP servers get the same chain the project's
endpoints run: `MCP_DJANGO["INTERCEPTORS"]`, with the remote interceptor servers it names (as the admin amended
both), or a list of their own::

    from mcp_django.client import MCPClient, SyncMCPClient

    async def view(request):
        client = MCPClient("github", user=request.user)   # a SERVERS name, a config dict, or a ServerConfig
        result = await client.call_tool("search_issues", {"query": "is:open"})

    def command():
        with SyncMCPClient({"URL": "https://mcp.example/mcp", "TOKEN": "..."}) as client:
            tools = client.list_tools()

The request phase runs before the request is sent (mutations, then validations, then sinks, unless
`INTERCEPTOR_DIRECTIONS` says otherwise), the response phase on the answer. A refused `tools/call`
comes back as an `isError` result, a refused request of any other method raises `MCPError`, and so
do the server's own errors (`RemoteError`) and an unreachable server (`BackendUnavailable`).
docs/client.md.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypedDict, Unpack

from asgiref.sync import async_to_sync

from mcp_django.client.cards import card_server, read_server_card
from mcp_django.client.conf import client_settings
from mcp_django.client.config import ClientAuth, ElicitationHandler, ServerConfig
from mcp_django.client.connection import installed_callers, pool
from mcp_django.client.events import EventsMethods
from mcp_django.client.limits import over_limit
from mcp_django.client.methods import MCPClientMethods, SyncClient, synced
from mcp_django.client.remote import RemoteConnection
from mcp_django.client.servers import server_config
from mcp_django.conf import mcp_settings
from mcp_django.endpoints.overlay import installed, on_change
from mcp_django.exceptions import BackendUnavailable
from mcp_django.extensions import chain_options
from mcp_django.interceptors.base import drain_background
from mcp_django.interceptors.hook import caller_context
from mcp_django.protocol.versions import Era

_settings_chain: dict[str, Any] | None = None


def _forget_settings_chain() -> None:
    global _settings_chain
    _settings_chain = None


on_change("state", _forget_settings_chain)
mcp_settings.on_reload(_forget_settings_chain)


class MCPClientOptions(TypedDict, total=False):
    """`MCPClient`'s (and `SyncMCPClient`'s) options after the server; mypy checks them, an unknown one is a
    `TypeError`."""

    interceptors: Sequence[Any] | None
    """The chain, in the settings' format (import strings, dicts, `{"SERVER": name}`); None runs the
    settings' chain, `MCP_DJANGO["INTERCEPTORS"]`."""
    user: Any
    """Who the requests are made for (a Django user): the interceptors' `context.principal`, and, for a
    server with `"AUTH": "oauth"`, whose own token the requests carry (docs/federation.md)."""
    auth: ClientAuth | None
    """How the connection authenticates with OAuth (`ClientAuth`, e.g. `OAuthClientAuth(ClientCredentials(...))`):
    it answers the server's 401 and 403 challenges and sends the token; None keeps the server's own (`AUTH`,
    `TOKEN`, `HEADERS`)."""
    elicitation: ElicitationHandler | None
    """Answers the server's `elicitation/create` questions (`ElicitationHandler`: its params in, the
    `ElicitResult` out); only then is the `elicitation` capability declared. In the stateless era its answers
    go back with the retried request, by itself."""


class MCPClient(EventsMethods, MCPClientMethods):
    """An async MCP client to one server whose requests go through the interceptor chain.

    Args:
        server: the server: a name in `MCP_DJANGO["SERVERS"]`, a config dict (`URL` or `COMMAND`,
            `HEADERS`, `TOKEN`, timeouts: docs/gateway.md) or a `ServerConfig`.
        **options: `MCPClientOptions`: `interceptors` (the chain; None runs the settings'), `user` (who
            the requests are made for), `auth` (OAuth, a `ClientAuth`) and `elicitation` (answers the
            server's questions), each described there.

    Its methods are `MCPClientMethods`' (`call_tool`, `list_tools`, ... each the wire result; a `list_*`
    returns every item, across at most `REMOTE_MAX_LIST_PAGES` pages), `EventsMethods`' (`list_events`,
    `poll_events`, `stream_events`, `subscribe_events`: docs/events.md) and `list_interceptors`.
    Connections are pooled per event loop and shared with the gateway; nothing needs closing.

    Raises:
        ValueError: a server with `"AUTH": "oauth"` and no `user`: nobody's token to call it with.
        TypeError: an option `MCPClientOptions` does not have.
    """

    def __init__(self, server: str | Mapping[str, Any] | ServerConfig, **options: Unpack[MCPClientOptions]) -> None:
        unknown = sorted(set(options) - MCPClientOptions.__optional_keys__)
        if unknown:
            raise TypeError(f"MCPClient: unknown option {unknown[0]!r}")
        interceptors, user = options.get("interceptors"), options.get("user")
        auth, elicitation = options.get("auth"), options.get("elicitation")
        self.server = server_config(server)
        if auth is not None:
            self.server = dataclasses.replace(self.server, auth=auth)
        if elicitation is not None:  # a connection of its own: the gateway's declare no capability
            self.server = dataclasses.replace(self.server, elicitation=elicitation)
        if self.server.oauth is not None and user is None:
            raise ValueError(
                f"MCPClient({self.server.name!r}): the server signs each user in (AUTH 'oauth'): "
                "pass user= to call it with that user's own token"
            )
        self.interceptors = None if interceptors is None else list(interceptors)
        self.user = user
        self.max_list_pages = client_settings.REMOTE_MAX_LIST_PAGES
        self._chain: dict[str, Any] | None = None

    @classmethod
    async def from_server_card(
        cls, url: str, *, entry: Mapping[str, Any] | None = None, **options: Unpack[MCPClientOptions]
    ) -> MCPClient:
        """A client of the server whose Server Card is at `url` (its first Streamable HTTP remote).

        `entry` adds the keys of a `SERVERS` entry the card cannot say (`TOKEN`, `HEADERS`, `AUTH`,
        timeouts); `options` are the constructor's. The card is read once, now (`client.cards`).

        Raises:
            BackendUnavailable: the card cannot be read or lists no Streamable HTTP remote.
        """
        return cls(card_server(await read_server_card(url), url, entry), **options)

    def chain(self) -> dict[str, Any]:
        """The chain's handler options (`hook` when there is a chain), with the admin's overrides applied."""
        global _settings_chain
        if self.interceptors is None:
            if _settings_chain is None:
                config = installed().interceptors(mcp_settings.INTERCEPTORS)
                _settings_chain = chain_options(config)
            return _settings_chain
        if self._chain is None:
            config = installed().interceptors(self.interceptors)
            self._chain = chain_options(config, label="MCPClient interceptors")
        return self._chain

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send `method` with `params` through the chain and return the (response-phase) result.

        Raises:
            MCPError: the chain refused a request other than `tools/call`.
            RemoteError: the server answered with a JSON-RPC error.
            BackendUnavailable: the server is down or did not answer in time; `NotConnected` (one of
                them) when the server takes each user's own token and `user` has not connected theirs.
        """
        return await self._stream_request(method, dict(params or {}), None, None)

    async def _stream_request(
        self,
        method: str,
        params: dict[str, Any],
        on_notification: Callable[[dict[str, Any]], None] | None,
        timeout: float | None,  # noqa: ASYNC109 (a long-lived request's own deadline)
    ) -> dict[str, Any]:
        """`request`, with the server's notifications about it going to `on_notification`, waiting up to
        `timeout` seconds (None: the server's `read_timeout`); what `stream_events` sends."""
        await installed().refresh()  # the admin's changes, as at an endpoint's admission
        callers = installed_callers()
        connection = await callers.connection(self.server, self.user)
        if self.server.elicitation is not None:
            await _listening(connection)

        async def sent_once(sent: dict[str, Any]) -> dict[str, Any]:
            try:
                return await connection.request(method, sent, on_notification=on_notification, timeout=timeout)
            except BackendUnavailable as error:
                await callers.refused(self.server, self.user, connection, error)  # a revoked token: connect again
                raise

        send: _Send = sent_once
        if self.server.elicitation is not None:
            send = self._answering(sent_once, self.server.elicitation)
        hook = self.chain().get("hook")
        if hook is None:
            return await send(params)
        result: dict[str, Any] = await hook.around(method, params, caller_context(self.user), send)
        return result

    @staticmethod
    def _answering(send: _Send, handler: ElicitationHandler) -> _Send:
        """`send`, retried while the server answers `input_required` with elicitations the handler answers."""

        async def answered(sent: dict[str, Any]) -> dict[str, Any]:
            result = await send(sent)
            for _ in range(client_settings.REMOTE_MAX_INPUT_ROUNDS):
                asked = result.get("inputRequests")
                if result.get("resultType") != "input_required" or not isinstance(asked, dict):
                    return result
                if not all(isinstance(r, dict) and r.get("method") == "elicitation/create" for r in asked.values()):
                    return result  # sampling or roots: nobody here to answer them
                responses = {key: dict(await handler(request.get("params") or {})) for key, request in asked.items()}
                sent = {**sent, "inputResponses": responses}
                if "requestState" in result:
                    sent["requestState"] = result["requestState"]
                result = await send(sent)
            return result

        return answered

    def too_many_pages(self, method: str) -> Exception:
        return over_limit(self.server.name, f"{method} went past {self.max_list_pages} pages")

    async def list_interceptors(self, event: str | None = None) -> dict[str, Any]:
        """`interceptors/list` on the server itself, not intercepted (the seed's direct passthrough)."""
        connection = await installed_callers().connection(self.server, self.user)
        return await connection.request("interceptors/list", {} if event is None else {"event": event})


_Send = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
_listened: weakref.WeakSet[RemoteConnection] = weakref.WeakSet()


async def _ignore(message: dict[str, Any]) -> None:
    return None


async def _listening(connection: RemoteConnection) -> None:
    """Open the server's own stream first (handshake era, HTTP), where a server may ask questions unrelated
    to the request's stream; waited for within the connect timeout, and not at all by a server that has none."""
    await connection.open()
    if connection.era is not Era.HANDSHAKE or connection.transport != "http":
        return
    if connection not in _listened:
        _listened.add(connection)
        connection.add_listener(_ignore)
    await connection.stream_ready(connection.server.connect_timeout)


class SyncMCPClient(SyncClient[MCPClient]):
    """`MCPClient` for sync code: the same methods, each run to completion on an event loop of its own.

    Each call opens the connection, sends, waits for the remote sinks it started, and closes it
    (the sync world has no loop to keep a connection on). Call it from sync code only, never from a
    coroutine (use `MCPClient` there); it also works as a context manager. `client` is the `MCPClient`.
    """

    list_interceptors = synced(MCPClient.list_interceptors)
    list_events = synced(MCPClient.list_events)
    poll_events = synced(MCPClient.poll_events)
    subscribe_events = synced(MCPClient.subscribe_events)
    unsubscribe_events = synced(MCPClient.unsubscribe_events)

    def __init__(self, server: str | Mapping[str, Any] | ServerConfig, **options: Unpack[MCPClientOptions]) -> None:
        super().__init__(MCPClient(server, **options), finish=_end_of_loop)

    @classmethod
    def from_server_card(
        cls, url: str, *, entry: Mapping[str, Any] | None = None, **options: Unpack[MCPClientOptions]
    ) -> SyncMCPClient:
        """`MCPClient.from_server_card` for sync code: the card is read now, on a loop of its own."""
        return cls(card_server(async_to_sync(read_server_card)(url), url, entry), **options)


async def _end_of_loop() -> None:
    """What a sync call leaves behind on its loop: the sinks it started in the background finish (remote sinks,
    each bounded by its server's timeout), its connections close."""
    await drain_background()
    await pool.aclose()
