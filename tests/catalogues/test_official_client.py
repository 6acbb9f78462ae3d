"""`search` and `grouped` through the official `mcp` client over Streamable HTTP, in both of its modes, against
the Django view served by pytest-django's live server: the client finds a tool by searching and calls it,
calls a dispatcher, and a user without the permission never finds the tool nor calls it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from rest_framework.authtoken.models import Token

from example_project.demo.models import Book
from tests.toolsets.conftest import make_user

pytestmark = [pytest.mark.urls("tests.catalogues.urls"), pytest.mark.django_db(transaction=True)]

MODES = ["legacy", "2026-07-28"]


@contextlib.asynccontextmanager
async def official(live_server: Any, path: str, user: Any, mode: str) -> AsyncIterator[Client]:
    token = (await Token.objects.acreate(user=user)).key
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = streamable_http_client(f"{live_server.url}/{path}", http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=30) as session:
            yield session


@pytest.mark.parametrize("mode", MODES)
async def test_the_official_client_finds_a_tool_by_searching_and_calls_it_by_its_name(
    live_server: Any, books: list[Book], mode: str
) -> None:
    editor = await sync_to_async(make_user)("editor", "view_book", "change_book", group="mcp-team")
    async with official(live_server, "search/mcp", editor, mode) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        searched = await client.call_tool("search_tools", {"query": "rename a book"})
        found = [tool["name"] for tool in searched.structured_content["tools"]]
        renamed = await client.call_tool("update_book", {"id": books[0].pk, "title": "Dune Messiah"})

    assert listed == ["search_tools", "create_book", "get_catalogue_stats"]  # the pinned ones, as flat lists them
    assert "update_book" in found
    assert not renamed.is_error, renamed
    assert (await Book.objects.aget(pk=books[0].pk)).title == "Dune Messiah"


@pytest.mark.parametrize("mode", MODES)
async def test_through_the_official_client_a_user_without_the_permission_never_finds_nor_calls_the_tool(
    live_server: Any, books: list[Book], mode: str
) -> None:
    reader = await sync_to_async(make_user)("reader", "view_book")
    async with official(live_server, "search/mcp", reader, mode) as client:
        searched = await client.call_tool("search_tools", {"query": "rename a book", "limit": 20})
        found = {tool["name"] for tool in searched.structured_content["tools"]}
        with pytest.raises(Exception, match="Unknown tool: update_book"):
            await client.call_tool("update_book", {"id": books[0].pk, "title": "Dune Messiah"})

    assert "update_book" not in found
    assert "get_book" in found
    assert (await Book.objects.aget(pk=books[0].pk)).title == "Dune"


@pytest.mark.parametrize("mode", MODES)
async def test_the_official_client_calls_a_tool_through_its_groups_dispatcher(
    live_server: Any, books: list[Book], mode: str
) -> None:
    reader = await sync_to_async(make_user)("reader", "view_book")
    async with official(live_server, "grouped/mcp", reader, mode) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        got = await client.call_tool("book", {"action": "get_book", "arguments": {"id": books[0].pk}})

    assert "book" in listed
    assert "get_book" not in listed
    assert got.structured_content["title"] == "Dune"
