"""`mcp_django.client`: the intercepting client runs the merged chain around its own requests to a real server."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings

from mcp_django.client import BackendUnavailable, MCPClient, SyncMCPClient
from mcp_django.interceptors.hook import REFUSED_TOOL_CALL
from mcp_django.protocol import MCPError
from tests.conftest import LiveServer
from tests.interceptors.support import SyncStep

pytestmark = pytest.mark.live

SHOUT = {"CLASS": SyncStep, "NAME": "shout", "EVENTS": ["tools/call"], "PHASES": ["request"], "PRIORITY": 20}


def text_of(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def plain(server: LiveServer) -> dict[str, Any]:
    """The echo tool's server, which runs no interceptors of its own."""
    return {"URL": server.url("/plain/mcp")}


async def test_the_client_runs_remote_and_local_interceptors_around_its_tool_calls(
    interceptor_host: LiveServer,
) -> None:
    url = interceptor_host.url("/host/mcp")
    client = MCPClient(plain(interceptor_host), interceptors=[{"SERVER": {"URL": url}}, SHOUT])
    assert text_of(await client.call_tool("echo", {"text": "a secret"})) == "A [HIDDEN]"  # rewrite (10), shout (20)
    refused = await MCPClient(plain(interceptor_host), interceptors=[{"SERVER": {"URL": url}}]).call_tool(
        "echo", {"text": "forbidden"}
    )
    assert refused["isError"] is True
    assert text_of(refused) == REFUSED_TOOL_CALL
    assert [tool["name"] for tool in await client.list_tools()] == ["echo"]


async def test_the_client_follows_the_settings_chain_by_default(interceptor_host: LiveServer) -> None:
    url = interceptor_host.url("/host/mcp")
    chain = {"INTERCEPTORS": [{"SERVER": "guard"}], "SERVERS": {"guard": {"URL": url}}}
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **chain}):
        refused = await MCPClient(plain(interceptor_host)).call_tool("echo", {"text": "forbidden"})
    assert refused["isError"] is True
    assert text_of(await MCPClient(plain(interceptor_host)).call_tool("echo", {"text": "forbidden"})) == "forbidden"


async def test_a_refused_request_other_than_a_tool_call_raises(interceptor_host: LiveServer, closed_url: str) -> None:
    client = MCPClient(plain(interceptor_host), interceptors=[{"SERVER": {"URL": closed_url}}])
    with pytest.raises(MCPError) as refused:
        await client.list_tools()
    assert refused.value.data["server"] == closed_url


async def test_an_unreachable_server_raises_backend_unavailable(closed_url: str) -> None:
    with pytest.raises(BackendUnavailable):
        await MCPClient({"URL": closed_url, "CONNECT_TIMEOUT": 2}, interceptors=[]).list_tools()


def test_the_sync_client_works_from_sync_code(interceptor_host: LiveServer) -> None:
    url = interceptor_host.url("/host/mcp")
    with SyncMCPClient(plain(interceptor_host), interceptors=[{"SERVER": {"URL": url}}]) as client:
        assert text_of(client.call_tool("echo", {"text": "a secret"})) == "a [hidden]"
        assert client.call_tool("echo", {"text": "forbidden"})["isError"] is True
    with SyncMCPClient({"URL": url}, interceptors=[]) as client:
        listed = client.list_interceptors()
    assert [interceptor["name"] for interceptor in listed["interceptors"]] == ["guard", "rewrite"]
