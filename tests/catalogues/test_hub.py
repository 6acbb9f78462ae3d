"""Discovery modes on a hub: a remote's namespaced tools are searched, grouped under their namespace and called
like the local ones (the remote is a registry of this process behind the MCP client, `InProcess`); through the
official client over HTTP; over a WebSocket; and behind a gateway, which forwards the search and the calls of the
tools it finds."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from django.utils.module_loading import import_string
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from mcp_django import Registry
from mcp_django.catalogues import CatalogueExtension
from mcp_django.client.connection import pool
from mcp_django.endpoints import Endpoint
from mcp_django.scopes import Scope
from mcp_django.testing import MCPTestClient, assert_tool_result
from tests.client.backends import InProcess

pytestmark = pytest.mark.django_db(transaction=True)

weather = Registry("weather")


@weather.tool
def forecast(city: str) -> str:
    """Tomorrow's weather forecast for a city."""
    return f"sun in {city}"


@weather.tool
def alerts(region: str) -> list[str]:
    """Storm and flood alerts in force in a region."""
    return [f"no alert in {region}"]


local = Registry("local")


@local.tool
def echo(text: str) -> str:
    """Return the text."""
    return text


@pytest.fixture(autouse=True)
def _weather_server(settings: Any) -> None:
    remote = {"BACKEND": "tests.client.backends.InProcess", "REGISTRY": "tests.catalogues.test_hub.weather"}
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": {**settings.MCP_DJANGO["SERVERS"], "weather": remote}}


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def hub(mode: str) -> Endpoint:
    return Endpoint(
        "hub/mcp",
        name=f"hub-{mode}",
        registry=local,
        allow_anonymous=True,
        interceptors=[],
        servers=[{"SERVER": "weather", "NAMESPACE": "wx"}],
        extensions=[CatalogueExtension(mode)],
    )


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_search_on_a_hub_finds_a_remotes_namespaced_tool_and_calls_it(era: Any) -> None:
    client = MCPTestClient(hub("search"), era=era)

    listed = [tool["name"] for tool in await client.list_tools()]
    found = assert_tool_result(await client.call_tool("search_tools", {"query": "weather forecast for Oslo"}))
    called = await client.call_tool("wx_forecast", {"city": "Oslo"})

    assert listed == ["search_tools"]
    assert found["structuredContent"]["tools"][0]["name"] == "wx_forecast"
    assert_tool_result(called, text="sun in Oslo")


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_grouped_on_a_hub_gathers_a_remotes_tools_under_its_namespace(era: Any) -> None:
    client = MCPTestClient(hub("grouped"), era=era)

    listed = {tool["name"]: tool for tool in await client.list_tools()}
    called = await client.call_tool("wx", {"action": "wx_alerts", "arguments": {"region": "Nordland"}})

    assert sorted(listed) == ["echo", "wx"]
    assert "The wx tools: wx_alerts, wx_forecast." in listed["wx"]["description"]
    assert_tool_result(called, text="no alert in Nordland")


@pytest.mark.urls("tests.catalogues.hub_urls")
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_client_searches_a_hub_and_calls_a_remotes_tool_directly_and_through_its_dispatcher(
    live_server: Any, mode: str
) -> None:
    async with official(f"{live_server.url}/hub/search/mcp", mode) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        found = await client.call_tool("search_tools", {"query": "weather forecast for Oslo"})
        called = await client.call_tool("wx_forecast", {"city": "Oslo"})
    async with official(f"{live_server.url}/hub/grouped/mcp", mode) as client:
        grouped = sorted(tool.name for tool in (await client.list_tools()).tools)
        dispatched = await client.call_tool("wx", {"action": "wx_alerts", "arguments": {"region": "Nordland"}})

    assert listed == ["search_tools"]
    assert found.structured_content is not None
    assert found.structured_content["tools"][0]["name"] == "wx_forecast"
    assert [block.text for block in called.content if isinstance(block, TextContent)] == ["sun in Oslo"]
    assert grouped == ["echo", "wx"]
    assert not dispatched.is_error, dispatched
    assert dispatched.structured_content == {"result": ["no alert in Nordland"]}


@contextlib.asynccontextmanager
async def official(url: str, mode: str) -> AsyncIterator[Client]:
    """The official `mcp` client over Streamable HTTP, as an anonymous caller."""
    async with Client(streamable_http_client(url), mode=mode, read_timeout_seconds=30) as session:
        yield session


async def test_search_over_a_websocket_finds_and_calls_a_tool_in_both_eras() -> None:
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator
    from django.contrib.auth.models import AnonymousUser

    from mcp_django.routing import websocket_endpoint

    socket = WebsocketCommunicator(
        URLRouter(websocket_endpoint("ws/mcp", endpoint=hub("search"))), "/ws/mcp", subprotocols=["mcp"]
    )
    socket.scope["user"] = AnonymousUser()
    assert (await socket.connect())[0]
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    answers = []
    try:
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"_meta": meta, "name": "search_tools", "arguments": {"query": "storm alerts"}},
            },
            {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": init},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "wx_alerts", "arguments": {"region": "Troms"}},
            },
        ):
            await socket.send_json_to(message)
            if "id" in message:
                answers.append((await socket.receive_json_from(timeout=10))["result"])
    finally:
        await socket.disconnect()

    assert [tool["name"] for tool in answers[0]["tools"]] == ["search_tools"]
    assert answers[1]["structuredContent"]["tools"][0]["name"] == "wx_alerts"
    assert answers[3]["structuredContent"] == {"result": ["no alert in Troms"]}


class EndpointInProcess(InProcess):
    """`{"BACKEND": "tests.catalogues.test_hub.EndpointInProcess", "ENDPOINT": "<dotted path to an Endpoint>"}`:
    an endpoint of this process, its extensions and all, behind the MCP client, to an anonymous caller."""

    config_keys = frozenset({"ENDPOINT"})

    @classmethod
    def config_problems(cls, config: Mapping[str, Any]) -> list[str]:
        return [] if isinstance(config.get("ENDPOINT"), str) else ["ENDPOINT must be the dotted path to an Endpoint"]

    @classmethod
    def location(cls, config: Mapping[str, Any]) -> str:
        return f"endpoint {config['ENDPOINT']}"

    async def _start(self) -> None:
        served: Endpoint = import_string(dict(self.server.options)["ENDPOINT"])
        self._handler = served.handler
        self._peer = served.connection(None, transport="memory", admitted_scope=Scope.USER)


UPSTREAM = Endpoint(
    "upstream/mcp",
    name="upstream",
    registry=weather,
    allow_anonymous=True,
    interceptors=[],
    extensions=[CatalogueExtension("search")],
)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_gateway_in_front_of_a_search_endpoint_forwards_the_search_and_the_found_tools_call(era: Any) -> None:
    gateway = Endpoint(
        "gateway/mcp",
        name="search-gateway",
        backend={
            "BACKEND": "tests.catalogues.test_hub.EndpointInProcess",
            "ENDPOINT": "tests.catalogues.test_hub.UPSTREAM",
        },
        allow_anonymous=True,
        interceptors=[],
    )
    client = MCPTestClient(gateway, era=era)

    listed = [tool["name"] for tool in await client.list_tools()]
    found = assert_tool_result(await client.call_tool("search_tools", {"query": "storm alerts"}))
    called = await client.call_tool("alerts", {"region": "Finnmark"})

    assert listed == ["search_tools"]
    assert found["structuredContent"]["tools"][0]["name"] == "alerts"
    assert_tool_result(called, text="no alert in Finnmark")
