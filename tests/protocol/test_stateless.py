"""The stateless 2026-07-28 era: per-request _meta, discover, result decoration, error codes."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_django.protocol import Connection, MessageHandler
from tests.protocol.backends import EchoBackend
from tests.protocol.conftest import SERVER_INFO, STATELESS_META, request, stateless

SERVER_INFO_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}


async def test_discover_lists_versions_capabilities_server_info_and_cache_hints(handler):
    reply = await handler.handle(stateless("server/discover"), Connection())
    assert reply["result"] == {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "completions": {}, "logging": {}},
        "_meta": SERVER_INFO_META,
        "ttlMs": 5000,
        "cacheScope": "private",
    }


@pytest.mark.parametrize(
    ("params", "missing"),
    [
        ({}, "_meta"),
        ({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}, "protocolVersion"),
        ({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}, "clientCapabilities"),
    ],
)
async def test_a_request_missing_required_meta_is_invalid_params_echoing_the_id(handler, params, missing):
    connection = Connection(version_header="2026-07-28")
    reply = await handler.handle(request("server/discover", params, request_id=101), connection)
    assert reply["id"] == 101
    assert reply["error"]["code"] == -32602
    assert missing in reply["error"]["message"]


async def test_client_info_is_optional(handler):
    reply = await handler.handle(request("tools/list", {"_meta": STATELESS_META}), Connection())
    assert reply["result"]["resultType"] == "complete"


async def test_an_unsupported_version_names_the_supported_ones(handler):
    reply = await handler.handle(
        stateless("tools/list", meta={"io.modelcontextprotocol/protocolVersion": "1900-01-01"}),
        Connection(version_header="1900-01-01"),
    )
    assert reply["error"] == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {
            "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
            "requested": "1900-01-01",
        },
    }


async def test_meta_is_checked_before_the_method_exists(handler):
    reply = await handler.handle(request("no/such/method", {}), Connection(version_header="2026-07-28"))
    assert reply["error"]["code"] == -32602


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "nope"]
)
async def test_removed_and_unknown_methods_are_method_not_found(handler, method):
    reply = await handler.handle(
        stateless(method, {"uri": "test://a", "level": "info"}, request_id=7), Connection(version_header="2026-07-28")
    )
    assert reply == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": f"Method not found: {method}"}}


async def test_every_result_carries_result_type_and_server_info(handler):
    reply = await handler.handle(stateless("tools/call", {"name": "echo", "arguments": {"text": "hi"}}), Connection())
    assert reply["result"] == {
        "content": [{"type": "text", "text": "hi"}],
        "resultType": "complete",
        "_meta": SERVER_INFO_META,
    }


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("prompts/list", {}),
        ("resources/read", {"uri": "test://a"}),
    ],
)
async def test_cacheable_results_carry_ttl_and_scope(handler, method, params):
    result = (await handler.handle(stateless(method, params), Connection()))["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (5000, "private")


async def test_non_cacheable_results_carry_no_cache_hints(handler):
    result = (
        await handler.handle(stateless("prompts/get", {"name": "greet", "arguments": {"who": "x"}}), Connection())
    )["result"]
    assert "ttlMs" not in result
    assert "cacheScope" not in result


async def test_a_missing_resource_is_invalid_params_with_its_uri(handler):
    reply = await handler.handle(stateless("resources/read", {"uri": "test://missing"}), Connection())
    assert reply["error"] == {
        "code": -32602,
        "message": "Resource not found: test://missing",
        "data": {"uri": "test://missing"},
    }


async def test_a_capability_the_client_did_not_declare_is_minus_32021(handler):
    reply = await handler.handle(stateless("tools/call", {"name": "needs_sampling"}), Connection())
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


async def test_a_declared_capability_lets_the_request_through(handler):
    meta: dict[str, Any] = {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
    reply = await handler.handle(stateless("tools/call", {"name": "needs_sampling"}, meta=meta), Connection())
    assert "result" in reply


async def test_no_log_messages_without_a_requested_level(handler):
    messages = [m async for m in handler.stream(stateless("tools/call", {"name": "progress"}), Connection())]
    assert not [m for m in messages if m.get("method") == "notifications/message"]


async def test_log_messages_at_or_above_the_requested_level_are_sent(handler):
    sent = [
        m
        async for m in handler.stream(
            stateless("tools/call", {"name": "progress"}, meta={"io.modelcontextprotocol/logLevel": "info"}),
            Connection(),
        )
    ]
    assert [m["params"]["level"] for m in sent if m.get("method") == "notifications/message"] == ["info"]
    quiet = [
        m
        async for m in handler.stream(
            stateless("tools/call", {"name": "progress"}, meta={"io.modelcontextprotocol/logLevel": "error"}),
            Connection(),
        )
    ]
    assert not [m for m in quiet if m.get("method") == "notifications/message"]


async def test_an_unknown_log_level_is_invalid_params(handler):
    reply = await handler.handle(
        stateless("tools/list", meta={"io.modelcontextprotocol/logLevel": "shout"}), Connection()
    )
    assert reply["error"]["code"] == -32602


async def test_without_a_header_the_meta_selects_the_stateless_era(handler):
    reply = await handler.handle(stateless("server/discover"), Connection(version_header=None))
    assert reply["result"]["supportedVersions"][0] == "2026-07-28"


async def test_stateless_capabilities_do_not_claim_resource_subscriptions():
    handler = MessageHandler(EchoBackend(features=("resources",)), server_info=SERVER_INFO)
    reply: Any = await handler.handle(stateless("server/discover"), Connection())
    assert reply["result"]["capabilities"] == {"resources": {}, "logging": {}}


@pytest.mark.parametrize(
    ("message", "streams"),
    [
        (stateless("tools/call", {"name": "echo"}), False),
        (stateless("tools/call", {"name": "echo"}, meta={"progressToken": 1}), True),
        (stateless("tools/call", {"name": "echo"}, meta={"io.modelcontextprotocol/logLevel": "info"}), True),
        (stateless("subscriptions/listen", {"notifications": {}}), True),
        (request("tools/call", {"name": "echo"}), True),  # handshake: logs flow by default, tools may ask
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, False),
    ],
)
def test_only_requests_that_can_emit_need_the_streaming_form(handler, message, streams):
    assert handler.may_stream(message, Connection(version_header=None)) is streams
