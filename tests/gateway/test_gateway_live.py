"""The official ``mcp`` client through the example project's gateways, in both eras: `/gateway/mcp` of one
daphne in front of another daphne's conformance fixture, and `/gateway/chain/mcp` in front of that gateway."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent, TextResourceContents

from tests.conftest import ROOT
from tests.gateway.conftest import GatewayServers, mcp_stdio_command
from tests.http_support import ACCEPT, stateless, stateless_headers

pytestmark = pytest.mark.live

WAIT = 30.0
PATHS = ["/gateway/mcp", "/gateway/chain/mcp"]
EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}


@contextlib.asynccontextmanager
async def client(servers: GatewayServers, path: str, mode: str, **options: Any) -> AsyncIterator[Client]:
    async with create_mcp_http_client() as http:
        transport = streamable_http_client(servers.front.url(path), http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=WAIT, **options) as session:
            yield session


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
async def test_the_official_client_uses_the_backend_through_the_gateway(
    gateway_servers: GatewayServers, path: str, mode: str
) -> None:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with client(gateway_servers, path, mode) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        called = await session.call_tool("test_simple_text", {})
        with_progress = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        resource = await session.read_resource("test://static-text")
        prompt = await session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("no_such_tool", {})
        version = session.protocol_version
        server_info = session.server_info

    assert version == EXPECTED_VERSION[mode]
    if mode != "2026-07-28":  # a pinned client synthesizes its discover result instead of asking
        assert server_info is not None
        assert server_info.name == "mcp-django-example"  # the backend's, mirrored
    assert {"test_simple_text", "test_tool_with_progress", "json_schema_2020_12_tool"} <= tools
    assert isinstance(called.content[0], TextContent)
    assert called.content[0].text == "This is a simple text response for testing."
    assert not with_progress.is_error
    assert seen == [0, 50, 100]
    assert isinstance(resource.contents[0], TextResourceContents)
    assert resource.contents[0].text == "This is the content of the static text resource."
    assert "arg1='a', arg2='b'" in json.dumps(prompt.model_dump(mode="json"))
    assert unknown.value.error.code == -32602


async def test_the_backends_list_changed_travels_back_through_both_gateways(gateway_servers: GatewayServers) -> None:
    chain = gateway_servers.front.url("/gateway/chain/mcp")
    headers = {"Accept": ACCEPT, **stateless_headers("subscriptions/listen")}
    body = stateless("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=11)
    async with (
        httpx2.AsyncClient(timeout=WAIT) as http,
        http.stream("POST", chain, json=body, headers=headers) as stream,
    ):
        messages = _messages(stream)
        acknowledged = await asyncio.wait_for(anext(messages), WAIT)
        assert acknowledged["method"] == "notifications/subscriptions/acknowledged"

        async def announce_until_heard() -> dict[str, Any]:
            # Each gateway opens its own listen stream to its backend in the background: announce until
            # the chain is complete and the announcement comes back.
            waiting = asyncio.ensure_future(anext(messages))
            while True:
                call = stateless("tools/call", {"name": "test_trigger_tool_change", "arguments": {}}, id=12)
                call_headers = {"Accept": ACCEPT, **stateless_headers("tools/call", "test_trigger_tool_change")}
                answered = await http.post(chain, json=call, headers=call_headers)
                assert answered.json()["result"]["content"][0]["text"] == "tool list changed"
                done, _ = await asyncio.wait({waiting}, timeout=1.0)
                if done:
                    return waiting.result()

        changed = await asyncio.wait_for(announce_until_heard(), WAIT)

    assert changed == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 11}},
    }


async def _messages(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    async for event in httpx2.EventSource(response):
        if event.data:
            yield json.loads(event.data)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_mcp_stdio_serving_a_gateway_is_a_transparent_stdio_proxy(
    gateway_servers: GatewayServers, mode: str
) -> None:
    command, *args = mcp_stdio_command("gateway-chain")
    keep = ("DJANGO_SETTINGS_MODULE", "MCP_EXAMPLE_DB", "MCP_EXAMPLE_BASE_URL", "MCP_EXAMPLE_GATEWAY_BACKEND_URL")
    env = {key: gateway_servers.front_env[key] for key in keep if key in gateway_servers.front_env}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=ROOT)

    async with Client(stdio_client(params), mode=mode, read_timeout_seconds=WAIT) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        called = await session.call_tool("test_simple_text", {})

    assert "test_simple_text" in tools
    assert isinstance(called.content[0], TextContent)
    assert called.content[0].text == "This is a simple text response for testing."


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_chained_gateway_runs_the_demo_guard_on_the_projects_interceptor_server(
    gateway_servers: GatewayServers, mode: str
) -> None:
    async with client(gateway_servers, "/gateway/chain/mcp", mode) as session:
        refused = await session.call_tool("test_sampling", {"prompt": "a forbidden prompt"})

    assert refused.is_error is True
    assert isinstance(refused.content[0], TextContent)
    assert refused.content[0].text == "The server refused this tool call."  # the remote guard, before the backend
