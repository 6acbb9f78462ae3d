"""The example project's hub (`/hub/mcp`) through the official ``mcp`` client, in both eras: the demo's
providers (local), the conformance fixture of another daphne (`conf_*`) and the front's own catalogue
endpoint through loopback (`books_*`); then the other daphne is stopped and the hub keeps answering."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent

from tests.conftest import LiveServer, serve_example, stop_process
from tests.gateway.conftest import CONFORMANCE, GatewayServers

pytestmark = pytest.mark.live

WAIT = 30.0


@pytest.fixture(scope="module")
def hub_servers(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayServers]:
    """`front`'s hub composes `back`'s conformance fixture and `front`'s own `/books/mcp`; `back` may be stopped.

    The hub waits up to `WAIT` for a remote's listing (5 s by default): on a loaded machine the just-started
    `back`'s first handshake and listing took longer, and the hub rightly left its tools out."""
    logs = tmp_path_factory.mktemp("hub-log")
    with serve_example(live_server_env, logs) as back:
        front_env = {
            **live_server_env,
            "MCP_EXAMPLE_GATEWAY_BACKEND_URL": back.url(CONFORMANCE),
            "MCP_EXAMPLE_REMOTE_LIST_TIMEOUT": str(WAIT),
        }
        with serve_example(front_env, logs) as front:
            yield GatewayServers(front, back, front_env)


@contextlib.asynccontextmanager
async def hub(front: LiveServer, mode: str) -> AsyncIterator[Client]:
    async with create_mcp_http_client() as http:
        transport = streamable_http_client(front.url("/hub/mcp"), http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=WAIT) as session:
            yield session


def text_of(result: Any) -> str:
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_hub_lists_and_calls_local_tools_and_those_of_two_remotes(
    hub_servers: GatewayServers, mode: str
) -> None:
    async with hub(hub_servers.front, mode) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        remote = await session.call_tool("conf_test_simple_text", {})
        loopback = await session.call_tool("books_search_books", {"query": "no such title"})
        local = await session.call_tool(next(name for name in names if name.startswith("about_")), {})

    assert any(name.startswith("about_") for name in names)  # the demo's providers, local
    assert {"conf_test_simple_text", "books_search_books", "books_catalogue_stats"} <= set(names)
    assert "books_reindex_catalogue" not in names  # TEAM on the catalogue endpoint; the hub is anonymous
    assert text_of(remote) == "This is a simple text response for testing."
    assert text_of(loopback) == "No book matches 'no such title'."
    assert not local.is_error


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_with_one_remote_stopped_the_hub_answers_with_the_other_and_its_own(
    hub_servers: GatewayServers, mode: str
) -> None:
    stop_process(hub_servers.back.process)  # a real process stopped: the conformance fixture is gone

    async with hub(hub_servers.front, mode) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        loopback = await session.call_tool("books_search_books", {"query": "no such title"})
        with pytest.raises(MCPError) as gone:
            await session.call_tool("conf_test_simple_text", {})

    assert not [name for name in names if name.startswith("conf_")]
    assert "books_search_books" in names
    assert any(name.startswith("about_") for name in names)
    assert text_of(loopback) == "No book matches 'no such title'."
    assert gone.value.error.message.startswith("Backend 'conformance' unavailable: ")  # a clear error, no hang
