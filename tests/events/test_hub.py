"""A hub forwards a remote server's events (SEP-3415): the demo's hub (`/hub/mcp`) composes the catalogue endpoint
(`/books/mcp`) as `books`, both served by uvicorn over real sockets in the test process, the hub reaching its
remote over HTTP like any client. The remote's `book.added` is listed as `books_book.added`, polled and pushed
through the hub."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import override_settings

from mcp_django.client import MCPClient, RemoteError
from mcp_django.client.connection import pool
from mcp_django.events.signatures import new_secret
from tests.events.serving import serving
from tests.events.support import add_book

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 10


@pytest.fixture
def hub_url() -> Iterator[str]:
    with serving() as base_url:
        servers: dict[str, Any] = dict(cast(dict[str, Any], settings.MCP_DJANGO["SERVERS"]))
        servers["books"] = {"URL": f"{base_url}/books/mcp"}
        with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "SERVERS": servers}):
            yield f"{base_url}/hub/mcp"


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def _hub(hub_url: str) -> MCPClient:
    return MCPClient({"URL": hub_url, "PROTOCOL_VERSION": "2026-07-28"}, interceptors=[])


async def test_the_hub_lists_the_remotes_event_types_in_its_namespace(hub_url: str) -> None:
    client = _hub(hub_url)
    discovered = await client.request("server/discover")
    listed = {described["name"]: described for described in await client.list_events()}

    assert "io.modelcontextprotocol/events" in discovered["capabilities"]["extensions"]
    assert listed["books_book.added"]["delivery"] == ["poll", "push"]  # webhooks are not forwarded
    assert "author" in listed["books_book.added"]["inputSchema"]["properties"]


async def test_a_poll_through_the_hub_forwards_the_cursor_and_names_the_occurrences_in_the_namespace(
    hub_url: str,
) -> None:
    client = _hub(hub_url)
    start = await client.poll_events("books_book.added")
    book = await sync_to_async(add_book)("Emma", "Jane Austen", 1815)
    polled = await client.poll_events("books_book.added", {"author": "Jane Austen"}, start["cursor"])
    again = await client.poll_events("books_book.added", {"author": "Jane Austen"}, start["cursor"])

    assert [(each["name"], each["data"]["id"]) for each in polled["events"]] == [("books_book.added", book.pk)]
    assert again["events"] == polled["events"]


async def test_a_push_stream_through_the_hub_relays_the_remotes_occurrences(hub_url: str) -> None:
    async with _hub(hub_url).stream_events("books_book.added") as stream:
        arrived = asyncio.ensure_future(anext(aiter(stream)))
        await asyncio.wait_for(stream.active.wait(), WAIT)
        book = await sync_to_async(add_book)("Emma", "Jane Austen", 1815)
        pushed = await asyncio.wait_for(arrived, WAIT)

    assert (pushed["name"], pushed["data"]["id"]) == ("books_book.added", book.pk)
    assert stream.cursor == pushed["cursor"]


async def test_a_webhook_of_a_forwarded_type_is_unsupported_and_an_unknown_name_in_the_namespace_not_found(
    hub_url: str,
) -> None:
    client = _hub(hub_url)
    await client.list_events()
    with pytest.raises(RemoteError) as unsupported:
        await client.subscribe_events("books_book.added", url="https://example.com/hooks", secret=new_secret())
    with pytest.raises(RemoteError) as unknown:
        await client.poll_events("books_no.such.type")

    assert unsupported.value.code == -32014
    assert unknown.value.code == -32011
