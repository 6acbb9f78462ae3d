"""The demo's toolsets through the official ``mcp`` client against the example project under daphne.

Only refusals and reads, so the shared live server's catalogue (one adapter tool per book) stays as seeded.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import TextContent

from tests.conftest import LiveServer

pytestmark = pytest.mark.live


@contextlib.asynccontextmanager
async def adapter(server: LiveServer, user: str, mode: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {server.tokens[user]}"}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(server.url("/mcp/adapter"), http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=30) as session:
            yield session


def text(result: object) -> str:
    block = result.content[0]  # type: ignore[attr-defined]  # a CallToolResult
    assert isinstance(block, TextContent), block
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_client_lists_filters_and_is_refused_by_permissions_and_the_serializer(
    example_server: LiveServer, mode: str
) -> None:
    async with adapter(example_server, "alice", mode) as alice:
        names = {tool.name for tool in (await alice.list_tools()).tools}
        assert {"list_books", "get_book", "list_api_books", "get_catalogue_stats"} <= names
        assert "create_book" not in names  # TEAM and above

        found = await alice.call_tool("list_books", {"author__icontains": "le guin", "order_by": ["year"]})
        assert not found.is_error
        assert [row["title"] for row in found.structured_content["items"]] == [
            "The Left Hand of Darkness",
            "The Dispossessed",
        ]
        refused = await alice.call_tool("create_api_book", {"title": "Solaris", "author": "S. Lem", "year": 1961})
        assert refused.is_error
        assert text(refused) == "403 Forbidden: You do not have permission to perform this action."
        attack = await alice.call_tool("list_books", {"summary__startswith": "A"})
        assert attack.is_error
        expected = "Invalid arguments for tool list_books: summary__startswith: Extra inputs are not permitted"
        assert text(attack) == expected

    async with adapter(example_server, "bob", mode) as bob:
        future = await bob.call_tool("create_api_book", {"title": "Later", "author": "Someone", "year": 3000})
        assert future.is_error
        assert text(future) == "400 Bad Request: year: A catalogued book cannot come from the future."
        denied = await bob.call_tool("delete_book", {"id": 1})
        assert denied.is_error
        assert text(denied) == "Permission denied: deleting books needs the demo.delete_book permission."
