"""Malformed JSON-RPC envelopes: every one gets a well-formed error, or nothing if it is a notification."""

from __future__ import annotations

import pytest

from mcp_django.protocol import Connection


@pytest.mark.parametrize(
    ("message", "reply_id"),
    [
        ("just a string", None),
        (42, None),
        (None, None),
        ({}, None),
        ({"jsonrpc": "1.0", "id": 3, "method": "ping"}, 3),
        ({"id": 3, "method": "ping"}, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": 12}, 3),
        ({"jsonrpc": "2.0", "id": 3}, 3),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None),
    ],
)
async def test_an_invalid_envelope_is_an_invalid_request(handler, message, reply_id):
    reply = await handler.handle(message, Connection(sessions=False))
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == reply_id
    assert reply["error"]["code"] == -32600


@pytest.mark.parametrize("params", [[1, 2], "x", 3])
async def test_params_that_are_not_an_object_are_invalid_params(handler, params):
    reply = await handler.handle(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": params}, Connection(sessions=False)
    )
    assert reply == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32602, "message": "Invalid params: params must be an object"},
    }


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/unknown"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "oops"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"bad": 1}}},
        {"jsonrpc": "1.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 4, "result": {}},
        {"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "client says no"}},
    ],
)
async def test_notifications_and_responses_get_no_reply_even_when_malformed(handler, message):
    assert await handler.handle(message, Connection(sessions=False)) is None


async def test_a_string_id_is_echoed(handler):
    reply = await handler.handle({"jsonrpc": "2.0", "id": "abc", "method": "nope"}, Connection(sessions=False))
    assert reply["id"] == "abc"
    assert reply["error"]["code"] == -32601


async def test_a_backend_bug_is_an_internal_error_without_detail(handler, backend):
    async def broken(ctx):
        raise RuntimeError("password=hunter2")

    backend.list_tools = broken
    reply = await handler.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, Connection(sessions=False))
    assert reply == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}


async def test_deeply_nested_params_are_answered_not_crashed(handler):
    deep: dict = {}
    node = deep
    for _ in range(2000):
        node["x"] = {}
        node = node["x"]
    reply = await handler.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": deep}},
        Connection(sessions=False),
    )
    assert reply["id"] == 1
    assert "result" in reply or reply["error"]["code"] in (-32602, -32603)
