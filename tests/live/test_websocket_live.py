"""Attacks on `/ws/mcp` of a live daphne, over a real socket: a browser page on another origin riding the
user's session cookie, a forged Host, a batch without a session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import LiveServer
from tests.http_support import initialize, request
from tests.live.admin_support import AdminUser
from tests.live.websocket_support import WebSocket

pytestmark = pytest.mark.live

OTHER_LOCAL_PAGE = "http://localhost:5555"
"""A page served by anything else on the machine: cookies are shared across ports, origins are not."""


@pytest.fixture(scope="module")
def session_cookie(example_server: LiveServer) -> str:
    """The `sessionid` cookie of the demo superuser, logged in to the admin as in a browser."""
    admin = AdminUser(example_server)
    (cookie,) = [cookie for cookie in admin.cookies if cookie.name == "sessionid"]
    return f"sessionid={cookie.value}"


@pytest.fixture
def sockets() -> Iterator[list[WebSocket]]:
    opened: list[WebSocket] = []
    yield opened
    for socket in opened:
        socket.close()


def connect(server: LiveServer, sockets: list[WebSocket], **headers: str) -> WebSocket:
    socket = WebSocket(server.base_url, "/ws/mcp", {name.replace("_", "-"): value for name, value in headers.items()})
    sockets.append(socket)
    return socket


def reindex(socket: WebSocket) -> Any:
    """Call the TEAM tool `reindex_catalogue` statelessly and return the reply."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": "reindex_catalogue", "arguments": {"steps": 1}, "_meta": meta}
    return socket.request(request("tools/call", params, id="call"))


def test_a_page_on_another_local_port_cannot_use_the_session_cookie(
    example_server: LiveServer, session_cookie: str, sockets: list[WebSocket]
) -> None:
    socket = connect(example_server, sockets, Cookie=session_cookie, Origin=OTHER_LOCAL_PAGE)

    assert socket.status == 403


def test_the_site_s_own_page_uses_the_session_cookie(
    example_server: LiveServer, session_cookie: str, sockets: list[WebSocket]
) -> None:
    socket = connect(example_server, sockets, Cookie=session_cookie, Origin=example_server.base_url)

    reply = reindex(socket)

    assert socket.status == 101
    assert reply["result"]["content"] == [{"type": "text", "text": "Reindexed the catalogue in 1 batches."}]


@pytest.mark.smoke
def test_a_bearer_token_from_a_local_page_is_not_a_cookie_and_is_admitted(
    example_server: LiveServer, sockets: list[WebSocket]
) -> None:
    bob = example_server.tokens["bob"]
    socket = connect(example_server, sockets, Authorization=f"Bearer {bob}", Origin=OTHER_LOCAL_PAGE)

    reply = reindex(socket)

    assert socket.status == 101
    assert "result" in reply


def test_a_host_outside_allowed_hosts_is_refused(
    example_server: LiveServer, session_cookie: str, sockets: list[WebSocket]
) -> None:
    socket = connect(example_server, sockets, Host="evil.example", Cookie=session_cookie)

    assert socket.status == 403


@pytest.mark.smoke
def test_a_batch_needs_a_2025_03_26_session_as_over_http(example_server: LiveServer, sockets: list[WebSocket]) -> None:
    socket = connect(example_server, sockets, Authorization=f"Bearer {example_server.tokens['alice']}")

    refused = socket.request(request("ping", id="before"))  # a single message is fine without a session
    socket.send([request("ping", id=1), request("ping", id=2)])
    batch_before = socket.receive()
    socket.request(initialize("2025-03-26", id=3))
    socket.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    socket.send([request("ping", id=4), request("ping", id=5)])
    batch_in_session = socket.receive()

    assert refused["result"] == {}
    assert (batch_before["id"], batch_before["error"]["code"]) == (None, -32600)
    assert sorted(reply["id"] for reply in batch_in_session) == [4, 5]
