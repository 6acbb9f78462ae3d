"""Server notifications over HTTP: a handshake session's GET stream, and 2026 `subscriptions/listen` POSTs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from django.test import AsyncClient

from mcp_django.endpoints.sessions import DatabaseSessionStore, get_session_store
from mcp_django.models import MCPSession
from mcp_django.runtime.notifications import send_notification
from tests.http_support import ACCEPT, initialize, request, stateless, stateless_headers

pytestmark = [pytest.mark.urls("tests.http_urls"), pytest.mark.django_db(transaction=True)]


async def apost(client: AsyncClient, body: Any, headers: dict[str, str] | None = None, path: str = "/mcp") -> Any:
    return await client.post(
        path,
        data=json.dumps(body).encode(),
        content_type="application/json",
        headers={"Accept": ACCEPT, **(headers or {})},
    )


async def events(response: Any) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of an SSE response, as they arrive."""
    async for chunk in response.streaming_content:
        for line in bytes(chunk).decode().splitlines():
            if line.startswith("data: ") and line[len("data: ") :]:  # a priming event's data is empty
                yield json.loads(line[len("data: ") :])


async def open_session(client: AsyncClient) -> dict[str, str]:
    opened = await apost(client, initialize())
    session = {"Mcp-Session-Id": opened["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"}
    await apost(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


async def first(stream: AsyncIterator[dict[str, Any]], publish: Any) -> dict[str, Any]:
    """Start reading, publish once the reader is waiting, and return what arrives (bounded wait)."""
    reading = asyncio.ensure_future(anext(stream))
    await publish()
    return await asyncio.wait_for(reading, 10)


async def test_a_session_advertises_list_changes_when_notifications_can_flow(async_client: AsyncClient) -> None:
    opened = await apost(async_client, initialize())
    capabilities = json.loads(opened.content)["result"]["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"listChanged": True, "subscribe": True}


async def test_the_get_stream_carries_list_changes_and_subscribed_updates_only(async_client: AsyncClient) -> None:
    session = await open_session(async_client)
    await apost(async_client, request("resources/subscribe", {"uri": "test://greeting"}), session)
    response = await async_client.get("/mcp", headers={"Accept": "text/event-stream", **session})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    stream = events(response)

    async def publish() -> None:
        await send_notification("tests", "notifications/resources/updated", {"uri": "test://elsewhere"})
        await send_notification("tests", "notifications/prompts/list_changed")
        await send_notification("tests", "notifications/resources/updated", {"uri": "test://greeting"})

    assert (await first(stream, publish))["method"] == "notifications/prompts/list_changed"
    updated = await asyncio.wait_for(anext(stream), 10)
    assert updated == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "test://greeting"},
    }
    await stream.aclose()  # type: ignore[attr-defined]


async def test_subscriptions_are_stored_with_the_session_and_outlive_the_process_cache(
    async_client: AsyncClient,
) -> None:
    session = await open_session(async_client)
    await apost(async_client, request("resources/subscribe", {"uri": "test://greeting"}), session)
    store = get_session_store()
    assert isinstance(store, DatabaseSessionStore)
    store.clear_cache()  # what a restarted worker knows: only the database
    stream = events(await async_client.get("/mcp", headers={"Accept": "text/event-stream", **session}))

    async def publish() -> None:
        await send_notification("tests", "notifications/resources/updated", {"uri": "test://greeting"})

    row = await MCPSession.objects.aget(session_id=session["Mcp-Session-Id"])
    assert row.subscriptions == ["test://greeting"]
    assert (await first(stream, publish))["params"] == {"uri": "test://greeting"}
    await stream.aclose()  # type: ignore[attr-defined]
    await apost(async_client, request("resources/unsubscribe", {"uri": "test://greeting"}), session)
    await row.arefresh_from_db()
    assert row.subscriptions == []


async def test_the_get_stream_of_another_endpoint_hears_nothing_of_this_one(async_client: AsyncClient) -> None:
    opened = await apost(async_client, initialize(), path="/other/mcp")
    session = {"Mcp-Session-Id": opened["Mcp-Session-Id"]}
    response = await async_client.get("/other/mcp", headers={"Accept": "text/event-stream", **session})
    stream = events(response)

    async def publish() -> None:
        await send_notification("tests", "notifications/tools/list_changed")
        await send_notification("other", "notifications/prompts/list_changed")

    assert (await first(stream, publish))["method"] == "notifications/prompts/list_changed"
    await stream.aclose()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 400),
        ({"Mcp-Session-Id": "unknown"}, 404),
        ({"Mcp-Session-Id": "unknown", "Accept": "application/json"}, 406),
    ],
)
async def test_a_get_stream_needs_a_live_session_and_an_event_stream(
    async_client: AsyncClient, headers: dict[str, str], status: int
) -> None:
    response = await async_client.get("/mcp", headers={"Accept": "text/event-stream", **headers})
    assert response.status_code == status
    assert json.loads(response.content)["error"]["code"] == -32600


async def test_a_get_on_an_endpoint_without_sessions_is_not_allowed(async_client: AsyncClient) -> None:
    response = await async_client.get("/stateless/mcp", headers={"Accept": "text/event-stream"})
    assert response.status_code == 405
    assert response["Allow"] == "POST"


async def test_a_listen_post_acknowledges_then_relays_what_it_asked_for(async_client: AsyncClient) -> None:
    body = stateless("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=9)
    response = await apost(async_client, body, stateless_headers("subscriptions/listen"))
    assert response["Content-Type"] == "text/event-stream"
    stream = events(response)
    ack = await asyncio.wait_for(anext(stream), 10)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}

    async def publish() -> None:
        await send_notification("tests", "notifications/prompts/list_changed")
        await send_notification("tests", "notifications/tools/list_changed")

    changed = await first(stream, publish)
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 9}
    await stream.aclose()  # type: ignore[attr-defined]


async def test_subscribing_beyond_the_caller_s_scope_answers_as_for_an_unknown_resource(
    async_client: AsyncClient,
) -> None:
    session = await open_session(async_client)  # anonymous: USER, and test://secret is SYSTEM

    secret = await apost(async_client, request("resources/subscribe", {"uri": "test://secret"}), session)
    unknown = await apost(async_client, request("resources/subscribe", {"uri": "test://nowhere"}), session)
    stream = events(await async_client.get("/mcp", headers={"Accept": "text/event-stream", **session}))

    async def publish() -> None:
        await send_notification("tests", "notifications/resources/updated", {"uri": "test://secret"})
        await send_notification("tests", "notifications/prompts/list_changed")

    assert json.loads(secret.content)["error"] == {
        "code": -32002,
        "message": "Resource not found: test://secret",
        "data": {"uri": "test://secret"},
    }
    assert json.loads(unknown.content)["error"]["code"] == -32002
    assert (await first(stream, publish))["method"] == "notifications/prompts/list_changed"
    await stream.aclose()  # type: ignore[attr-defined]


async def test_a_listen_naming_a_resource_beyond_the_caller_s_scope_hears_nothing_of_it(
    async_client: AsyncClient,
) -> None:
    wanted = {"toolsListChanged": True, "resourceSubscriptions": ["test://secret", "test://greeting"]}
    body = stateless("subscriptions/listen", {"notifications": wanted}, id=9)
    stream = events(await apost(async_client, body, stateless_headers("subscriptions/listen")))
    ack = await asyncio.wait_for(anext(stream), 10)

    async def publish() -> None:
        await send_notification("tests", "notifications/resources/updated", {"uri": "test://secret"})
        await send_notification("tests", "notifications/resources/updated", {"uri": "test://greeting"})

    assert ack["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": ["test://greeting"]}
    assert (await first(stream, publish))["params"]["uri"] == "test://greeting"
    await stream.aclose()  # type: ignore[attr-defined]


async def sse_events(response: Any) -> AsyncIterator[tuple[str, str]]:
    """(id, data) of every event of an SSE response, the priming event's empty data included."""
    event_id, data = "", None
    async for chunk in response.streaming_content:
        for line in bytes(chunk).decode().split("\n"):
            if line.startswith("id: "):
                event_id = line[len("id: ") :]
            elif line.startswith("data:"):
                data = line[len("data:") :].strip()
            elif line == "" and data is not None:
                yield event_id, data
                event_id, data = "", None


async def test_a_handshake_stream_starts_with_a_priming_event_and_ends_with_the_response(
    async_client: AsyncClient,
) -> None:
    session = await open_session(async_client)
    call = request("tools/call", {"name": "count", "arguments": {"steps": 2}, "_meta": {"progressToken": 1}})
    response = await apost(async_client, call, session)
    events = [event async for event in sse_events(response)]
    assert events[0][1] == ""
    assert events[0][0].endswith(".0")
    assert json.loads(events[-1][1])["result"]["content"][0]["text"] == "counted to 2"


async def test_a_stream_the_server_closes_is_resumed_with_last_event_id(async_client: AsyncClient) -> None:
    session = await open_session(async_client)
    response = await apost(async_client, request("tools/call", {"name": "reconnect", "arguments": {}}, id=5), session)
    before = [event async for event in sse_events(response)]
    assert [json.loads(data).get("params", {}).get("data") for _, data in before[1:]] == ["before"]

    resumed = await async_client.get(
        "/mcp", headers={"Accept": "text/event-stream", "Last-Event-ID": before[-1][0], **session}
    )
    after = [json.loads(data) async for _, data in sse_events(resumed)]
    assert after[0]["params"]["data"] == "after"
    assert after[-1]["id"] == 5
    assert after[-1]["result"]["content"][0]["text"] == "reconnected"


async def test_a_dropped_connection_does_not_cancel_a_handshake_request(async_client: AsyncClient) -> None:
    session = await open_session(async_client)
    call = request("tools/call", {"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": 1}}, id=6)
    response = await apost(async_client, call, session)
    stream = sse_events(response)
    priming = await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]  # the client went away

    resumed = await async_client.get(
        "/mcp", headers={"Accept": "text/event-stream", "Last-Event-ID": priming[0], **session}
    )
    replayed = [json.loads(data) async for _, data in sse_events(resumed)]
    assert [m["params"]["progress"] for m in replayed if m.get("method") == "notifications/progress"] == [1, 2, 3]
    assert replayed[-1]["result"]["content"][0]["text"] == "counted to 3"


@pytest.mark.parametrize("last_event_id", ["nope", "0123456789abcdef.1"])
async def test_an_unknown_last_event_id_is_not_found(async_client: AsyncClient, last_event_id: str) -> None:
    session = await open_session(async_client)
    response = await async_client.get(
        "/mcp", headers={"Accept": "text/event-stream", "Last-Event-ID": last_event_id, **session}
    )
    assert response.status_code == 404


async def test_another_session_cannot_resume_a_stream(async_client: AsyncClient) -> None:
    session = await open_session(async_client)
    response = await apost(async_client, request("tools/call", {"name": "reconnect", "arguments": {}}), session)
    before = [event async for event in sse_events(response)]
    other = await open_session(async_client)
    resumed = await async_client.get(
        "/mcp", headers={"Accept": "text/event-stream", "Last-Event-ID": before[-1][0], **other}
    )
    assert resumed.status_code == 404


async def test_a_get_stream_is_primed_at_once_before_any_notification(async_client: AsyncClient) -> None:
    session = await open_session(async_client)
    response: Any = await async_client.get("/mcp", headers={"Accept": "text/event-stream", **session})
    chunks = aiter(response.streaming_content)

    priming = bytes(await asyncio.wait_for(anext(chunks), 10))  # nothing was published

    event_id, retry, data = priming.decode().split("\n")[:3]
    assert event_id.startswith("id: ")
    assert (retry, data) == ("retry: 1000", "data: ")
    await chunks.aclose()


async def test_a_client_reconnecting_to_a_get_stream_gets_a_new_one(async_client: AsyncClient) -> None:
    session = await open_session(async_client)
    response: Any = await async_client.get("/mcp", headers={"Accept": "text/event-stream", **session})
    chunks = aiter(response.streaming_content)
    priming = bytes(await asyncio.wait_for(anext(chunks), 10)).decode()
    await chunks.aclose()
    last_event_id = priming.split("\n")[0].removeprefix("id: ")

    again: Any = await async_client.get(
        "/mcp", headers={"Accept": "text/event-stream", "Last-Event-ID": last_event_id, **session}
    )

    assert again.status_code == 200
    assert again["Content-Type"] == "text/event-stream"
    await aiter(again.streaming_content).aclose()
