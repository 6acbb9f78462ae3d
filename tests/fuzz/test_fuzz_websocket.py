"""The WebSocket transport under arbitrary input: a handshake with any headers and subprotocols, then text frames
of any characters or of JSON-RPC-shaped messages, and binary frames (13.13).

A socket is accepted or closed, never crashed; every request frame is answered on it by a valid JSON-RPC
response with the frame's id, and every other reply is a valid JSON-RPC response too.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from hypothesis import given
from hypothesis import strategies as st

from mcp_django.endpoints import Endpoint
from mcp_django.routing import websocket_endpoint
from tests.fuzz.strategies import check_reply, is_request, messages
from tests.fuzz.test_fuzz_http import any_headers
from tests.test_websocket import registry

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 10.0
TOOLS = ["echo", "count", "whoami", "nope"]
"""Tools of the WebSocket tests' registry a message may name (not `wait` or `greet`, which wait on purpose)."""
SENTINEL = "fuzz-sentinel"

application = URLRouter(
    websocket_endpoint(
        "ws/fuzz", endpoint=Endpoint("ws-fuzz/mcp", registry=registry, name="ws-fuzz", allow_anonymous=True)
    )
)

characters = st.text(st.characters(codec=None, exclude_categories=()), max_size=64)
"""Any characters, lone surrogates included (a text frame is whatever the client's library lets through)."""
frames = (
    messages(TOOLS).map(lambda message: ("json", message))
    | characters.map(lambda text: ("text", text))
    | st.binary(max_size=64).map(lambda data: ("bytes", data))
)


@given(
    headers=any_headers,
    subprotocols=st.sampled_from([["mcp"], [], ["mcp", "other"], ["other"]]),
    sent=st.lists(frames, max_size=4),
)
async def test_any_socket_and_frames_are_answered_with_valid_json_rpc(
    headers: list[tuple[bytes, bytes]], subprotocols: list[str], sent: list[tuple[str, Any]]
) -> None:
    socket = WebsocketCommunicator(application, "/ws/fuzz", headers=headers, subprotocols=subprotocols)
    socket.scope["user"] = AnonymousUser()
    accepted, _ = await socket.connect(timeout=WAIT_S)
    if not accepted:
        return
    try:
        expected: Counter[Any] = Counter()
        for kind, frame in sent:
            # As the server hands frames over (the communicator's send_to refuses an empty frame).
            if kind == "bytes":
                await socket.send_input({"type": "websocket.receive", "bytes": frame})
            elif kind == "text":
                await socket.send_input({"type": "websocket.receive", "text": frame})
            else:
                await socket.send_input({"type": "websocket.receive", "text": json.dumps(frame)})
                if is_request(frame):
                    expected[json.dumps(frame["id"])] += 1
        await socket.send_to(text_data=json.dumps({"jsonrpc": "2.0", "id": SENTINEL, "method": "ping"}))
        expected[json.dumps(SENTINEL)] += 1
        async with asyncio.timeout(WAIT_S):
            while +expected:
                reply = json.loads(await socket.receive_from(timeout=WAIT_S))
                if isinstance(reply, dict) and "method" in reply:
                    continue  # a notification or a request of the server's (progress, logging)
                replies = reply if isinstance(reply, list) else [reply]
                for item in replies:
                    check_reply(item, None)
                    key = json.dumps(item.get("id"))
                    if expected[key]:
                        expected[key] -= 1
    finally:
        await socket.disconnect()
