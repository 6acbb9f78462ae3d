"""The remote MCP connection: one pooled client connection per remote server, of the kind its entry names.

::

    from mcp_django.client.connection import connect

    connection = connect("github")              # a SERVERS name, an entry dict, or a ServerConfig (`servers`)
    result = await connection.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})

`connect` is pooled: the same object for the same server on this loop. `request` returns the result dict,
raises `RemoteError` (the server's JSON-RPC error, unchanged) or `BackendUnavailable` (down, timed out,
refused the gateway, broke the protocol). The connection opens on first use in the newest era the server
speaks, re-opens when the server forgot the session, and `add_listener` receives the server's
notifications. Only the gateway's own credentials (`HEADERS`, `TOKEN` from settings) are ever sent, or,
for an entry with `AUTH`, a caller's own token for the server (`gateway.upstream` pools one connection per
caller's token). docs/gateway.md.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping
from typing import Any, Final

from django.core.exceptions import ImproperlyConfigured

from mcp_django.client.config import ServerConfig
from mcp_django.client.remote import (
    RemoteConnection,
)
from mcp_django.client.servers import import_backend, server_config
from mcp_django.exceptions import BackendUnavailable


class ConnectionPool:
    """One `RemoteConnection` per remote server and event loop, reused by every caller on that loop.

    A connection belongs to the loop it was opened on (its sockets, its process pipes); a worker has
    one loop, so in practice one connection per server per worker process.
    """

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[ServerConfig, RemoteConnection]]
        self._by_loop = weakref.WeakKeyDictionary()

    def get(self, server: ServerConfig) -> RemoteConnection:
        """The connection to `server` on the running loop, created (not yet opened) on first use."""
        connections = self._by_loop.setdefault(asyncio.get_running_loop(), {})
        connection = connections.get(server)
        if connection is None:
            connection = connections[server] = import_backend(server.backend)(server)
        return connection

    async def drop(self, server: ServerConfig) -> None:
        """Close and forget the connection to `server` on the running loop, if there is one (a replaced token's)."""
        connection = self._by_loop.get(asyncio.get_running_loop(), {}).pop(server, None)
        if connection is not None:
            await connection.aclose()

    async def aclose(self) -> None:
        """Close every connection of the running loop (stops stdio processes, ends HTTP sessions)."""
        connections = self._by_loop.pop(asyncio.get_running_loop(), {})
        await asyncio.gather(*(connection.aclose() for connection in connections.values()), return_exceptions=True)


pool: Final = ConnectionPool()


def connect(server: str | Mapping[str, Any] | ServerConfig) -> RemoteConnection:
    """The pooled connection to `server` (see `servers.server_config` for what it may be), opened on first request."""
    return pool.get(server_config(server))


class CallerConnections:
    """Which connection carries a caller's requests to a server, and what the server refusing it means.

    The default: the server's own pooled connection (`connect`). A server whose entry says `"AUTH": "oauth"`
    takes each user's own token, which the gateway app keeps: its `ready()` installs the one that knows
    them (`gateway.upstream.UpstreamConnections`, docs/federation.md). `MCPClient` asks the installed one.
    """

    async def connection(self, server: ServerConfig, principal: Any) -> RemoteConnection:
        """The connection for `principal`'s requests to `server`.

        Raises:
            ImproperlyConfigured: the server takes each user's own token, and no installed app keeps them.
        """
        if server.oauth is not None:
            raise ImproperlyConfigured(
                f"{server.name!r} takes each user's own token (AUTH 'oauth'): "
                "add 'mcp_django.gateway' to INSTALLED_APPS, which keeps them"
            )
        return connect(server)

    async def refused(
        self, server: ServerConfig, principal: Any, connection: RemoteConnection, error: BackendUnavailable
    ) -> None:
        """After `error` on `principal`'s connection (a token the server no longer takes): by default, nothing."""
        return None


_callers: list[CallerConnections] = [CallerConnections()]


def install_callers(callers: CallerConnections) -> None:
    """Make `callers` the one every `MCPClient` asks (an app's `ready()` does, as the gateway's)."""
    _callers[0] = callers


def installed_callers() -> CallerConnections:
    """The `CallerConnections` installed (the default until an app installs its own)."""
    return _callers[0]
