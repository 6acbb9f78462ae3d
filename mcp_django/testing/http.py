"""Test a running server over real HTTP: `MCPHTTPTestClient` speaks Streamable HTTP in either era.

It offers the methods of the in-memory `mcp_django.testing.MCPTestClient` (`list_tools`, `call_tool`,
`read_resource`, …) and raises the same `MCPCallError`, so one test body can run in memory and over
HTTP. It authenticates as a Django user through a DRF token (made for the user when none is given),
or with the headers you pass::

    async with MCPHTTPTestClient(live_server.url + "/mcp", user=alice, era="stateless") as client:
        result = await client.call_tool("search_books", {"query": "dune"})

The pytest plugin's `mcp_http_client` fixture builds one against pytest-django's `live_server`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, Literal

from mcp_django.client.config import ServerConfig
from mcp_django.client.http import HTTPConnection
from mcp_django.client.methods import MCPClientMethods
from mcp_django.exceptions import MCPCallError, RemoteError
from mcp_django.protocol.versions import LATEST_HANDSHAKE_VERSION, LATEST_STATELESS_VERSION
from mcp_django.scopes import User

DEFAULT_TIMEOUT_S = 30.0


class MCPHTTPTestClient(MCPClientMethods):
    """An MCP client over Streamable HTTP for tests of a running server.

    Args:
        url: the endpoint's absolute URL (`http://127.0.0.1:8000/mcp`).
        user: the Django user to call as, through its DRF token (created if it has none; needs
            `rest_framework.authtoken` installed and a database the server reads too).
        token: a bearer token to send instead.
        headers: more request headers (another authentication scheme, `Origin`).
        era: `"handshake"` (an `initialize` handshake, 2025-11-25) or `"stateless"` (2026-07-28).
        timeout: seconds to wait for the server to connect and to answer each request.
    """

    def __init__(
        self,
        url: str,
        *,
        user: User | None = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        era: Literal["handshake", "stateless"] = "handshake",
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.url = url
        self.user = user
        self.token = token
        self.headers = dict(headers or {})
        self.era = era
        self.timeout = timeout
        self.notifications: list[dict[str, Any]] = []
        self._connection: HTTPConnection | None = None

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send one request over HTTP and return its result; `_meta` in `params` is sent along.

        Raises:
            MCPCallError: the server answered with a JSON-RPC error.
        """
        connection = await self._open()
        params = dict(params or {})
        meta = params.pop("_meta", None)
        try:
            return await connection.request(method, params, meta=meta, on_notification=self._notified)
        except RemoteError as error:
            raise MCPCallError({"code": error.code, "message": error.message, "data": error.data}) from None

    @property
    def server_info(self) -> dict[str, Any]:
        """The `serverInfo` the server answered the handshake or `server/discover` with."""
        return self._connection.server_info if self._connection is not None else {}

    async def aclose(self) -> None:
        """End the session (a handshake session is deleted on the server) and close the HTTP client."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()

    async def __aenter__(self) -> MCPHTTPTestClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _open(self) -> HTTPConnection:
        if self._connection is None:
            token = self.token
            if token is None and self.user is not None and self.user.is_authenticated:
                token = await _token_for(self.user)
            server = ServerConfig(
                name="mcp-test",
                url=self.url,
                headers=tuple(self.headers.items()),
                token=token,
                connect_timeout=self.timeout,
                read_timeout=self.timeout,
                protocol_version=LATEST_STATELESS_VERSION if self.era == "stateless" else LATEST_HANDSHAKE_VERSION,
            )
            self._connection = HTTPConnection(server)
        return self._connection

    async def _notified(self, message: dict[str, Any]) -> None:
        self.notifications.append(message)


async def _token_for(user: User) -> str:
    from rest_framework.authtoken.models import Token  # only when a user is named: authtoken may not be installed

    token, _ = await Token.objects.aget_or_create(user=user)
    return str(token.key)
