"""What the fuzz tests found, each kept as the example that found it (issue 13.13)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from tests.fuzz.test_fuzz_websocket import WAIT_S, application

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("frame", "reply_id"),
    [
        # The WebSocket and stdio transports hashed the method to see whether it could be cancelled:
        # a list or object as the method raised TypeError and closed the socket, unanswered.
        pytest.param({"jsonrpc": "2.0", "method": [], "id": 0}, 0, id="list-method"),
        pytest.param({"jsonrpc": "2.0", "method": {}, "id": "a"}, "a", id="object-method"),
        # An object as the id was hashed when its request ended, in a done callback: an error logged every time.
        pytest.param({"jsonrpc": "2.0", "method": "ping", "id": {}}, None, id="object-id"),
    ],
)
async def test_a_method_or_id_of_any_json_type_is_answered_and_the_socket_lives_on(
    frame: dict[str, Any], reply_id: Any, caplog: pytest.LogCaptureFixture
) -> None:
    socket = WebsocketCommunicator(application, "/ws/fuzz", subprotocols=["mcp"])
    socket.scope["user"] = AnonymousUser()
    assert (await socket.connect(timeout=WAIT_S))[0]
    try:
        await socket.send_to(text_data=json.dumps(frame))
        reply = json.loads(await socket.receive_from(timeout=WAIT_S))
        await socket.send_to(text_data=json.dumps({"jsonrpc": "2.0", "id": "next", "method": "ping"}))
        after = json.loads(await socket.receive_from(timeout=WAIT_S))
    finally:
        await socket.disconnect()

    assert reply["id"] == reply_id
    assert reply["error"]["code"] == -32600
    assert after == {"jsonrpc": "2.0", "id": "next", "result": {}}
    assert not [record.getMessage() for record in caplog.records if record.name == "asyncio"]
