"""Events by push (SEP-3415): an `events/stream` POST over Streamable HTTP in 2026-07-28."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import transaction
from django.test import AsyncClient, override_settings

from mcp_django.events.store import purge
from mcp_django.protocol.context import aclose
from tests.events.support import add_book
from tests.http_support import ACCEPT, stateless, stateless_headers

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 10
"""Seconds any one message may take to arrive."""


async def _open(
    client: AsyncClient, params: dict[str, Any], *, path: str = "/books/mcp", **headers: str
) -> AsyncIterator[dict[str, Any]]:
    response = await client.post(
        path,
        data=json.dumps(stateless("events/stream", params, id=7)).encode(),
        content_type="application/json",
        headers={"Accept": ACCEPT, **stateless_headers("events/stream"), **headers},
    )
    assert response["Content-Type"] == "text/event-stream"

    async def messages() -> AsyncIterator[dict[str, Any]]:
        content = response.streaming_content  # type: ignore[attr-defined]
        try:
            async for chunk in content:
                for line in bytes(chunk).decode().splitlines():
                    if line.startswith("data: ") and line[len("data: ") :]:
                        yield json.loads(line[len("data: ") :])
        finally:  # closing the stream ends the request on the server, as a client going away does
            await aclose(content)

    return messages()


async def _next(stream: AsyncIterator[dict[str, Any]]) -> dict[str, Any]:
    return await asyncio.wait_for(anext(stream), WAIT)


async def test_a_stream_confirms_itself_then_pushes_each_book_added(async_client: AsyncClient) -> None:
    stream = await _open(async_client, {"name": "book.added", "arguments": {}, "cursor": None})
    active = await _next(stream)
    book = await sync_to_async(add_book)()
    pushed = await _next(stream)
    await stream.aclose()  # type: ignore[attr-defined]

    assert active["method"] == "notifications/events/active"
    assert active["params"]["truncated"] is False
    assert active["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}
    assert pushed["method"] == "notifications/events/event"
    assert pushed["params"]["data"] == {"id": book.pk, "title": "Dune", "author": "Frank Herbert", "year": 1965}
    assert pushed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}
    assert int(pushed["params"]["cursor"]) > int(active["params"]["cursor"])


async def test_a_stream_from_a_cursor_replays_what_it_missed_and_filters_by_its_arguments(
    async_client: AsyncClient,
) -> None:
    first = await _open(async_client, {"name": "book.added", "arguments": {}, "cursor": None})
    start = (await _next(first))["params"]["cursor"]
    await first.aclose()  # type: ignore[attr-defined]
    await sync_to_async(add_book)("Emma", "Jane Austen")
    await sync_to_async(add_book)("Dune", "Frank Herbert")

    stream = await _open(async_client, {"name": "book.added", "arguments": {"author": "Jane Austen"}, "cursor": start})
    active = await _next(stream)
    replayed = await _next(stream)
    await sync_to_async(add_book)("Ulysses", "James Joyce")
    await sync_to_async(add_book)("Persuasion", "Jane Austen")
    live = await _next(stream)
    await stream.aclose()  # type: ignore[attr-defined]

    assert active["params"]["cursor"] == start
    assert replayed["params"]["data"]["title"] == "Emma"
    assert live["params"]["data"]["title"] == "Persuasion"


async def test_an_idle_stream_sends_heartbeats_carrying_its_cursor(async_client: AsyncClient) -> None:
    with override_settings(MCP_DJANGO={"EVENTS_HEARTBEAT": 0.05}):
        stream = await _open(async_client, {"name": "book.added", "cursor": None})
        active = await _next(stream)
        heartbeat = await _next(stream)
        await stream.aclose()  # type: ignore[attr-defined]

    assert heartbeat["method"] == "notifications/events/heartbeat"
    assert heartbeat["params"] == {
        "cursor": active["params"]["cursor"],
        "_meta": {"io.modelcontextprotocol/subscriptionId": 7},
    }


@pytest.mark.usefixtures("curated")
async def test_a_subscriber_who_loses_the_permission_is_told_the_subscription_ended_and_gets_nothing_more(
    async_client: AsyncClient,
) -> None:
    from mcp_django.events import emit

    def curator() -> Any:
        user = get_user_model().objects.create_user("curator", password="pw")
        user.user_permissions.add(Permission.objects.get(codename="curate_book"))
        return user

    user = await sync_to_async(curator)()
    await async_client.aforce_login(user)
    with override_settings(MCP_DJANGO={"EVENTS_HEARTBEAT": 0.05}):
        stream = await _open(async_client, {"name": "book.curated", "cursor": None}, path="/mcp")
        await _next(stream)
        await sync_to_async(emit)("book.curated", {"title": "kept"})
        received = await _next(stream)
        while received["method"] == "notifications/events/heartbeat":
            received = await _next(stream)
        await sync_to_async(user.user_permissions.clear)()
        await sync_to_async(emit)("book.curated", {"title": "withheld"})
        after_loss = [await _next(stream)]
        while "method" in after_loss[-1] and len(after_loss) < 100:  # until the stream's result, its last message
            after_loss.append(await _next(stream))

    assert received["params"]["data"] == {"title": "kept"}
    methods = [message.get("method") for message in after_loss]
    assert "notifications/events/event" not in methods  # nothing withheld came
    terminated = after_loss[-2]
    assert terminated["method"] == "notifications/events/terminated"
    assert terminated["params"]["error"]["code"] == -32012
    assert terminated["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}
    assert after_loss[-1]["id"] == 7
    assert "result" in after_loss[-1]


async def test_a_purge_that_overtakes_an_open_stream_is_told_as_a_fresh_active_marking_the_gap(
    async_client: AsyncClient,
) -> None:
    def two_books_and_a_purge() -> None:
        with transaction.atomic():
            add_book("Emma", "Jane Austen", 1815)
            add_book("Persuasion", "Jane Austen", 1817)
            purge("book.added")  # keeps the newest only: Emma's occurrence goes before anyone read it

    stream = await _open(async_client, {"name": "book.added", "cursor": None})
    active = await _next(stream)
    with override_settings(MCP_DJANGO={"EVENTS_MAX_PER_TYPE": 1}):
        await sync_to_async(two_books_and_a_purge)()
    gap = await _next(stream)
    pushed = await _next(stream)
    await stream.aclose()  # type: ignore[attr-defined]

    assert active["params"]["truncated"] is False
    assert gap["method"] == "notifications/events/active"
    assert gap["params"]["truncated"] is True
    assert int(active["params"]["cursor"]) < int(gap["params"]["cursor"]) < int(pushed["params"]["cursor"])
    assert pushed["params"]["data"]["title"] == "Persuasion"


async def test_a_stream_of_a_type_no_longer_declared_is_terminated_as_not_found(async_client: AsyncClient) -> None:
    from mcp_django.events import event, event_types

    @event("book.fleeting")
    def fleeting(book: dict[str, Any]) -> bool:
        """A type that goes away."""
        return True

    try:
        with override_settings(MCP_DJANGO={"EVENTS_HEARTBEAT": 0.05}):
            stream = await _open(async_client, {"name": "book.fleeting", "cursor": None})
            await _next(stream)
            event_types.remove("book.fleeting")
            messages = [await _next(stream)]
            while messages[-1].get("method") == "notifications/events/heartbeat" and len(messages) < 100:
                messages.append(await _next(stream))
            message = messages[-1]
            await stream.aclose()  # type: ignore[attr-defined]
    finally:
        event_types.remove("book.fleeting")

    assert message["method"] == "notifications/events/terminated"
    assert message["params"]["error"] == {"code": -32011, "message": "Event type not found", "data": {"kind": "event"}}
