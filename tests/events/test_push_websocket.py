"""Events by push over WebSocket: the same `events/stream` request, its notifications on the socket."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from mcp_django.routing import websocket_endpoint
from tests.events.support import add_book

pytestmark = pytest.mark.django_db(transaction=True)

application = URLRouter(websocket_endpoint("ws/books", endpoint="books"))
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


async def test_a_websocket_client_streams_book_added_on_its_socket() -> None:
    socket = WebsocketCommunicator(application, "/ws/books", subprotocols=["mcp"])
    socket.scope["user"] = AnonymousUser()
    accepted, _ = await socket.connect()
    assert accepted
    params = {"name": "book.added", "arguments": {}, "cursor": None, "_meta": META}
    await socket.send_json_to({"jsonrpc": "2.0", "id": 5, "method": "events/stream", "params": params})
    active = await socket.receive_json_from(timeout=10)
    book = await sync_to_async(add_book)("Middlemarch", "George Eliot", 1871)
    pushed = await socket.receive_json_from(timeout=10)
    while pushed["method"] == "notifications/events/heartbeat":
        pushed = await socket.receive_json_from(timeout=10)
    await socket.disconnect()

    assert active["method"] == "notifications/events/active"
    assert pushed["method"] == "notifications/events/event"
    assert pushed["params"]["data"]["id"] == book.pk
    assert pushed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 5}
