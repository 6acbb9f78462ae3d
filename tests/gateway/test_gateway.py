"""Gateway endpoints served in process (Django's view, the real database) in front of real servers: the
official SDK's server under uvicorn, and the same server as a stdio subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from mcp_django.client.connection import pool
from mcp_django.client.stdio import StdioConnection
from mcp_django.endpoints import Endpoint, get_endpoint
from mcp_django.gateway.extension import remote_sources
from mcp_django.gateway.forwarding import ensure_input_schemas
from mcp_django.models import ToolCallRecord
from tests.access_support import Caller, make_caller
from tests.conftest import ROOT
from tests.gateway.conftest import sdk_stdio_command
from tests.http_support import ACCEPT, initialize, stateless, stateless_headers

KEY = "mcp-django.dev/idempotency-key"
pytestmark = [pytest.mark.live, pytest.mark.urls("tests.gateway.urls"), pytest.mark.django_db(transaction=True)]

WAIT = 20.0
NAME_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/cancel": "taskId",
}


@pytest.fixture(autouse=True)
def _backends(settings: Any, sdk_backend_url: str) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "SERVERS": {
            "sdk": {"URL": sdk_backend_url, "TOKEN": "the-gateways-own-token", "HEADERS": {"X-Gateway": "front"}},
            # Pinned to the handshake era, in which the SDK's server announces list changes on its own.
            "stdio": {"COMMAND": sdk_stdio_command(), "CWD": str(ROOT), "PROTOCOL_VERSION": "2025-06-18"},
        },
    }


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


async def send(
    path: str,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    caller: Caller | None = None,
    headers: dict[str, str] | None = None,
    id: int = 1,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One stateless request through the gateway at `path` (with `meta` in its `_meta`); the JSON-RPC response."""
    params = params or {}
    field = NAME_FIELDS.get(method)
    all_headers = {"Accept": ACCEPT, **stateless_headers(method, params.get(field) if field else None)}
    if caller is not None:
        all_headers.update(caller.headers)
    all_headers.update(headers or {})
    response: Any = await AsyncClient().post(
        path,
        data=json.dumps(stateless(method, params, id=id, meta=meta)).encode(),
        content_type="application/json",
        headers=all_headers,
    )
    answer: dict[str, Any] = json.loads(response.content)
    return answer


async def caller(username: str, **extra: Any) -> Caller:
    return await sync_to_async(make_caller)(username, **extra)


async def test_the_gateway_looks_like_its_backend_to_a_handshake_client() -> None:
    alice = await caller("alice")
    response: Any = await AsyncClient().post(
        "/sdk/mcp",
        data=json.dumps(initialize()).encode(),
        content_type="application/json",
        headers={"Accept": ACCEPT, **alice.headers},
    )
    result = json.loads(response.content)["result"]

    assert result["serverInfo"] == {"name": "sdk-backend", "version": "9.9.9"}
    assert result["instructions"] == "The official SDK behind a gateway."
    assert {"tools", "resources", "prompts"} <= set(result["capabilities"])
    assert "subscribe" not in result["capabilities"]["resources"]  # subscriptions are not forwarded


async def test_server_info_and_instructions_can_be_overridden() -> None:
    alice = await caller("alice")
    discovered = await send("/sdk/front/mcp", "server/discover", caller=alice)

    assert discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "front-door",
        "version": "1.0",
    }
    assert discovered["result"]["instructions"] == "Ask the front door."


async def test_a_call_goes_through_the_chain_to_the_backend_and_into_the_audit_trail() -> None:
    alice = await caller("alice")

    answer = await send(
        "/sdk/mcp", "tools/call", {"name": "echo", "arguments": {"text": "mail a@b.example"}}, caller=alice
    )

    assert answer["result"]["content"] == [{"type": "text", "text": "mail [REDACTED]"}]
    record = await ToolCallRecord.objects.aget(tool="echo")
    assert record.endpoint == "gw-sdk"
    assert record.user_id == alice.user.pk


async def test_the_callers_credentials_never_reach_the_backend() -> None:
    alice = await caller("alice")
    sneaky = {"Cookie": "sessionid=the-callers-session", "X-Api-Key": "the-callers-key", "Mcp-Session-Id": "abc"}

    answer = await send(
        "/sdk/mcp", "tools/call", {"name": "seen_headers", "arguments": {}}, caller=alice, headers=sneaky
    )

    seen = answer["result"]["structuredContent"]["headers"]
    assert seen["authorization"] == "Bearer the-gateways-own-token"
    assert seen["x-gateway"] == "front"
    assert "cookie" not in seen
    assert "x-api-key" not in seen
    assert not any(alice.token in value for value in seen.values())


async def test_tool_name_patterns_need_their_scope() -> None:
    alice = await caller("alice")
    root = await caller("root", is_superuser=True)

    alice_tools = {tool["name"] for tool in (await send("/sdk/mcp", "tools/list", caller=alice))["result"]["tools"]}
    root_tools = {tool["name"] for tool in (await send("/sdk/mcp", "tools/list", caller=root))["result"]["tools"]}
    refused = await send("/sdk/mcp", "tools/call", {"name": "slow", "arguments": {"seconds": 0}}, caller=alice)

    assert "slow" not in alice_tools
    assert "echo" in alice_tools
    assert root_tools == alice_tools | {"slow"}
    assert refused["error"] == {"code": -32602, "message": "Unknown tool: slow"}


async def test_a_gateway_with_a_scope_shows_nothing_to_callers_below_it() -> None:
    alice = await caller("alice")
    root = await caller("root", is_superuser=True)

    assert (await send("/team/mcp", "tools/list", caller=alice))["result"]["tools"] == []
    assert (await send("/team/mcp", "tools/list", caller=root))["result"]["tools"]


async def test_a_stdio_backend_is_served_in_either_era_to_the_caller() -> None:
    answer = await send("/stdio/mcp", "tools/call", {"name": "echo", "arguments": {"text": "over stdio"}})

    assert answer["result"]["content"] == [{"type": "text", "text": "over stdio"}]
    assert answer["result"]["resultType"] == "complete"


async def test_the_callers_trace_context_and_baggage_never_reach_the_backend() -> None:
    alice = await caller("alice")
    traced = {
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "tracestate": "vendor=callers-own",
        "baggage": "user.email=alice@example.com",
    }

    answer = await send("/sdk/mcp", "tools/call", {"name": "seen_meta", "arguments": {}}, caller=alice, meta=traced)

    seen = answer["result"]["structuredContent"]["meta"]
    assert "baggage" not in seen
    assert seen.get("tracestate") != "vendor=callers-own"
    assert "4bf92f3577b34da6a3ce929d0e0e4736" not in str(seen.get("traceparent"))


async def test_a_callers_idempotency_key_reaches_the_backend_namespaced_per_caller() -> None:
    alice, bob = await caller("alice"), await caller("bob")
    key = {"mcp-django.dev/idempotency-key": "order-42"}
    params = {"name": "seen_meta", "arguments": {}}

    for_alice = await send("/sdk/mcp", "tools/call", params, caller=alice, meta=key)
    for_bob = await send("/sdk/mcp", "tools/call", params, caller=bob, meta=key)
    unkeyed = await send("/sdk/mcp", "tools/call", params, caller=alice)

    seen = [answer["result"]["structuredContent"]["meta"].get(KEY) for answer in (for_alice, for_bob, unkeyed)]
    assert seen[0] is not None
    assert seen[1] is not None
    assert re.fullmatch("[0-9a-f]{64}", seen[0])
    assert seen[0] != seen[1]
    assert seen[2] is None


async def test_a_stdio_backend_starts_with_its_env_and_a_safe_few_of_djangos_variables_not_its_secrets(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_KEY", "the-sites-own-secret")
    monkeypatch.setenv("DATABASE_URL", "postgres://user:password@db/site")
    servers = settings.MCP_DJANGO["SERVERS"]
    given = {**servers["stdio"], "ENV": {"GIVEN_TO_IT": "yes"}}
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": {**servers, "stdio": given}}

    answer = await asyncio.wait_for(send("/stdio/mcp", "tools/call", {"name": "environment"}), WAIT)

    names = set(answer["result"]["structuredContent"]["result"])
    assert {"GIVEN_TO_IT", "PATH"} <= names
    assert not names & {"SECRET_KEY", "DATABASE_URL", "DJANGO_SETTINGS_MODULE", "MCP_DJANGO_SERVERS"}


async def test_a_backend_that_is_down_gives_a_clear_error_not_a_hang() -> None:
    answer = await asyncio.wait_for(send("/down/mcp", "tools/call", {"name": "echo", "arguments": {}}), WAIT)

    assert answer["error"]["code"] == -32603
    assert answer["error"]["message"].startswith("Backend 'gateway gw-down' unavailable: ")
    assert answer["error"]["data"] == {"backend": "gateway gw-down", "reason": "unreachable"}


async def test_a_backend_killed_mid_call_fails_that_call_and_serves_the_next() -> None:
    await send("/stdio/mcp", "tools/list")
    endpoint = get_endpoint("gw-stdio")
    assert isinstance(endpoint, Endpoint)
    connection = remote_sources(endpoint)[0].connection
    assert isinstance(connection, StdioConnection)
    assert connection._process is not None
    call = asyncio.ensure_future(send("/stdio/mcp", "tools/call", {"name": "slow", "arguments": {"seconds": 60}}))
    await asyncio.sleep(1.0)  # the call is on its way; killed before or after it arrives, it must fail cleanly

    os.kill(connection._process.pid, signal.SIGKILL)
    failed = await asyncio.wait_for(call, WAIT)
    again = await send("/stdio/mcp", "tools/call", {"name": "echo", "arguments": {"text": "back"}})

    assert failed["error"]["data"] == {"backend": "stdio", "reason": "closed"}
    assert again["result"]["content"] == [{"type": "text", "text": "back"}]


async def test_the_backends_list_changed_reaches_a_listening_client() -> None:
    body = stateless("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=7)
    response: Any = await AsyncClient().post(
        "/stdio/mcp",
        data=json.dumps(body).encode(),
        content_type="application/json",
        headers={"Accept": ACCEPT, **stateless_headers("subscriptions/listen")},
    )
    stream = _messages(response)
    acknowledged = await asyncio.wait_for(anext(stream), WAIT)
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"

    waiting = asyncio.ensure_future(anext(stream))
    await send("/stdio/mcp", "tools/call", {"name": "announce", "arguments": {}})
    changed = await asyncio.wait_for(waiting, WAIT)

    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}


async def _messages(response: Any) -> AsyncIterator[dict[str, Any]]:
    async for chunk in response.streaming_content:
        for line in bytes(chunk).decode().splitlines():
            if line.startswith("data: ") and line[6:].strip():
                yield json.loads(line[6:])


def test_missing_or_invalid_input_schemas_are_listed_as_object_schemas() -> None:
    tools = [
        {"name": "missing"},
        {"name": "empty", "inputSchema": {}},
        {"name": "string", "inputSchema": {"type": "string"}},
        {"name": "text", "inputSchema": "not-an-object"},
        {"name": "fine", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
    ]

    repaired = ensure_input_schemas({"tools": tools, "nextCursor": "c"})

    assert [tool["inputSchema"] for tool in repaired["tools"]] == [
        {"type": "object"},
        {"type": "object"},
        {"type": "object"},
        {"type": "object"},
        {"type": "object", "properties": {"a": {"type": "string"}}},
    ]
    assert repaired["nextCursor"] == "c"
    assert ensure_input_schemas({"other": 1}) == {"other": 1}
