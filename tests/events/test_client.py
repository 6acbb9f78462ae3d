"""`MCPClient` consumes events (SEP-3415) over real sockets: the project served by uvicorn on a thread of the test
process, so what the test emits (a Book saved) is what the client polls, is pushed, reaches a webhook."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.authtoken.models import Token

from example_project.demo.hooks import RECEIVED
from mcp_django.client import MCPClient, RemoteError
from mcp_django.client.connection import pool
from tests.events.serving import serving
from tests.events.support import add_book, until

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 10


@pytest.fixture
def base_url() -> Iterator[str]:
    with serving() as url:
        yield url


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def _books(base_url: str, **entry: Any) -> MCPClient:
    return MCPClient({"URL": f"{base_url}/books/mcp", "PROTOCOL_VERSION": "2026-07-28", **entry}, interceptors=[])


async def test_the_client_lists_the_event_types_with_their_schemas(base_url: str) -> None:
    listed = await _books(base_url).list_events()

    book_added = next(described for described in listed if described["name"] == "book.added")
    assert book_added["delivery"] == ["poll", "push", "webhook"]
    assert "author" in book_added["inputSchema"]["properties"]


async def test_a_poll_from_now_then_from_its_cursor_returns_the_book_added_and_resumes_from_any_cursor(
    base_url: str,
) -> None:
    client = _books(base_url)
    start = await client.poll_events("book.added")
    book = await sync_to_async(add_book)("Emma", "Jane Austen", 1815)
    first = await client.poll_events("book.added", cursor=start["cursor"])
    again = await client.poll_events("book.added", cursor=start["cursor"])
    filtered = await client.poll_events("book.added", {"author": "Frank Herbert"}, start["cursor"])

    assert start["events"] == []
    assert [occurrence["data"]["id"] for occurrence in first["events"]] == [book.pk]
    assert again["events"] == first["events"]  # the same cursor, the same answer: a lost answer is asked again
    assert filtered["events"] == []
    assert filtered["cursor"] == first["cursor"]


async def test_a_stream_pushes_each_book_added_and_its_cursor_resumes_a_poll(base_url: str) -> None:
    client = _books(base_url)
    async with client.stream_events("book.added") as stream:
        occurrences = aiter(stream)
        arrived = asyncio.ensure_future(anext(occurrences))
        await asyncio.wait_for(stream.active.wait(), WAIT)
        first = await sync_to_async(add_book)("Emma", "Jane Austen", 1815)
        pushed = await asyncio.wait_for(arrived, WAIT)
        resume_from = stream.cursor
    second = await sync_to_async(add_book)("Persuasion", "Jane Austen", 1817)
    missed = await client.poll_events("book.added", cursor=resume_from)

    assert pushed["data"]["id"] == first.pk
    assert pushed["name"] == "book.added"
    assert resume_from == pushed["cursor"]
    assert [occurrence["data"]["id"] for occurrence in missed["events"]] == [second.pk]


async def test_a_stream_from_a_cursor_replays_what_came_after_it_first(base_url: str) -> None:
    client = _books(base_url)
    start = (await client.poll_events("book.added"))["cursor"]
    book = await sync_to_async(add_book)("Emma", "Jane Austen", 1815)

    async with client.stream_events("book.added", {"author": "Jane Austen"}, start) as stream:
        replayed = await asyncio.wait_for(anext(aiter(stream)), WAIT)

    assert replayed["data"]["id"] == book.pk
    assert stream.truncated is False


async def test_a_stream_of_a_type_the_caller_may_not_see_raises_the_servers_error(base_url: str) -> None:
    with pytest.raises(RemoteError) as refused:
        async with _books(base_url).stream_events("no.such.type") as stream:
            await asyncio.wait_for(anext(aiter(stream)), WAIT)

    assert refused.value.code == -32011


async def test_a_webhook_the_client_subscribes_reaches_the_projects_receiver_which_verifies_its_signature(
    base_url: str,
) -> None:
    user = await sync_to_async(get_user_model().objects.create_user)("subscriber", password="pw")
    token = await sync_to_async(Token.objects.create)(user=user)
    headers = {"Authorization": f"Token {token.key}"}
    client = MCPClient(
        {"URL": f"{base_url}/mcp", "PROTOCOL_VERSION": "2026-07-28", "HEADERS": headers}, interceptors=[]
    )
    RECEIVED.clear()
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "EVENTS_WEBHOOK_ALLOWED_HOSTS": ["127.0.0.1"]}):
        subscribed = await client.subscribe_events(
            "book.added", url=f"{base_url}/hooks/books", secret=settings.DEMO_WEBHOOK_SECRET
        )
        book = await sync_to_async(add_book)("Emma", "Jane Austen", 1815)
        assert await sync_to_async(until)(lambda: len(RECEIVED) > 0)
        await client.unsubscribe_events(subscribed["id"])

    delivery = RECEIVED[0]
    assert delivery.subscription_id == subscribed["id"]
    assert delivery.name == "book.added"
    assert delivery.data["id"] == book.pk
    assert delivery.message_id == delivery.occurrence["eventId"]


async def test_a_client_made_from_the_server_card_url_reaches_the_server_it_describes(base_url: str) -> None:
    client = await MCPClient.from_server_card(
        f"{base_url}/books/mcp/server-card", entry={"PROTOCOL_VERSION": "2026-07-28"}, interceptors=[]
    )

    assert client.server.url == f"{base_url}/books/mcp"
    assert client.server.name.endswith("/books")
    assert any(described["name"] == "book.added" for described in await client.list_events())
