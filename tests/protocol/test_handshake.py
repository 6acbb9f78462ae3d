"""The handshake era: initialize, sessions, logging level, cancellation, batches."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_django.protocol import Connection, MessageHandler
from tests.protocol.backends import EchoBackend
from tests.protocol.conftest import SERVER_INFO, request


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_initialize_answers_with_the_requested_version_when_it_is_supported(handler, version):
    connection = Connection()
    reply = await handler.handle(
        request(
            "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
        ),
        connection,
    )
    assert reply["result"]["protocolVersion"] == version
    assert reply["result"]["serverInfo"] == SERVER_INFO
    assert connection.session is not None
    assert connection.session.protocol_version == version


async def test_initialize_counter_offers_the_latest_handshake_version_for_an_unknown_one(handler):
    reply = await handler.handle(
        request(
            "initialize",
            {"protocolVersion": "2099-01-01", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
        ),
        Connection(),
    )
    assert reply["result"]["protocolVersion"] == "2025-11-25"


async def test_initialize_advertises_exactly_the_backend_features_plus_logging(handler):
    reply = await handler.handle(
        request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
        ),
        Connection(),
    )
    assert reply["result"]["capabilities"] == {
        "tools": {},
        "resources": {"subscribe": True},
        "prompts": {},
        "completions": {},
        "logging": {},
    }


async def test_initialize_without_sessions_leaves_the_connection_stateless(handler):
    connection = Connection(sessions=False)
    reply = await handler.handle(
        request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
        ),
        connection,
    )
    assert "result" in reply
    assert connection.session is None


async def test_initialize_with_malformed_params_is_invalid_params_and_opens_no_session(handler):
    connection = Connection()
    reply = await handler.handle(request("initialize", {"protocolVersion": 7}), connection)
    assert reply["error"]["code"] == -32602
    assert connection.session is None


async def test_initialized_notification_marks_the_session_and_gets_no_reply(handler):
    connection = Connection()
    await handler.handle(
        request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
        ),
        connection,
    )
    session = connection.session
    assert session is not None
    session.changed = False
    assert await handler.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, connection) is None
    assert session.initialized
    assert session.changed


async def test_ping_answers_an_empty_result(handler, session):
    assert await handler.handle(request("ping", request_id="p1"), session) == {
        "jsonrpc": "2.0",
        "id": "p1",
        "result": {},
    }


async def test_set_level_records_the_threshold_and_filters_log_messages(handler, session):
    assert (await handler.handle(request("logging/setLevel", {"level": "warning"}), session))["result"] == {}
    assert session.session.log_level == "warning"
    messages = [m async for m in handler.stream(request("tools/call", {"name": "progress"}), session)]
    assert [m.get("method") for m in messages] == [None]  # the info message is below the threshold


async def test_set_level_rejects_an_unknown_level(handler, session):
    reply = await handler.handle(request("logging/setLevel", {"level": "loud"}), session)
    assert reply["error"]["code"] == -32602


async def test_log_messages_flow_by_default_in_a_session(handler, session):
    messages = [m async for m in handler.stream(request("tools/call", {"name": "progress"}), session)]
    assert [m["params"]["data"] for m in messages if m.get("method") == "notifications/message"] == ["halfway"]


async def test_resource_subscriptions_are_remembered_in_the_session(handler, session):
    assert (await handler.handle(request("resources/subscribe", {"uri": "test://a"}), session))["result"] == {}
    assert session.session.subscriptions == ("test://a",)
    assert (await handler.handle(request("resources/unsubscribe", {"uri": "test://a"}), session))["result"] == {}
    assert session.session.subscriptions == ()


async def test_unknown_resource_is_minus_32002_in_the_handshake_era(handler, session):
    reply = await handler.handle(request("resources/read", {"uri": "test://missing"}), session)
    assert reply["error"] == {
        "code": -32002,
        "message": "Resource not found: test://missing",
        "data": {"uri": "test://missing"},
    }


async def test_stateless_only_methods_do_not_exist_in_the_handshake_era(handler, session):
    reply = await handler.handle(request("server/discover"), session)
    assert reply["error"]["code"] == -32601


async def test_cancelled_notification_stops_a_running_request_without_a_reply(backend, handler, session):
    session.session.session_id = "s1"
    stream = handler.stream(request("tools/call", {"name": "slow"}, request_id=42), session)
    collected = asyncio.ensure_future(_collect(stream))
    await asyncio.wait_for(backend.started.wait(), 5)
    await handler.handle({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 42}}, session)
    assert await asyncio.wait_for(collected, 5) == []


async def test_batches_are_answered_in_protocol_2025_03_26(handler):
    connection = Connection(version_header="2025-03-26", sessions=False)
    reply = await handler.handle(
        [
            request("tools/list", request_id=1),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            request("nope", request_id=2),
        ],
        connection,
    )
    assert [item["id"] for item in reply] == [1, 2]
    assert reply[1]["error"]["code"] == -32601


@pytest.mark.parametrize("header", ["2025-06-18", "2025-11-25", None])
async def test_batches_are_refused_outside_2025_03_26(handler, header):
    connection = Connection(version_header=header, sessions=False)
    reply = await handler.handle([request("tools/list")], connection)
    if header is None:
        assert isinstance(reply, list)  # without a header the spec says to assume 2025-03-26
    else:
        assert reply["error"]["code"] == -32600
        assert reply["id"] is None


async def test_an_empty_batch_is_an_invalid_request(handler):
    reply = await handler.handle([], Connection(version_header="2025-03-26"))
    assert reply["error"]["code"] == -32600


async def test_a_backend_without_prompts_answers_prompt_methods_as_unknown():
    handler = MessageHandler(EchoBackend(features=("tools",)), server_info=SERVER_INFO)
    reply: Any = await handler.handle(request("prompts/list"), Connection(sessions=False))
    assert reply["error"]["code"] == -32601


async def _collect(stream):
    return [item async for item in stream]


async def test_a_batch_needs_a_session_where_initialize_opens_one(handler):
    connection = Connection(sessions=True)  # a WebSocket or stdio channel before its initialize
    reply = await handler.handle([request("tools/list")], connection)
    assert reply["error"]["code"] == -32600
