"""The view under ASGI (Django's AsyncClient): the same answers, and SSE that really streams."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import StreamingHttpResponse
from django.test import AsyncClient

from mcp_django.models import MCPSession
from tests.http_support import ACCEPT, initialize, request, sse_messages, stateless, stateless_headers

# The view reaches the database from another thread, outside a test transaction.
pytestmark = [pytest.mark.urls("tests.http_urls"), pytest.mark.django_db(transaction=True)]


async def apost(client: AsyncClient, body: Any, headers: dict[str, str] | None = None) -> Any:
    return await client.post(
        "/mcp",
        data=json.dumps(body).encode(),
        content_type="application/json",
        headers={"Accept": ACCEPT, **(headers or {})},
    )


async def test_a_stateless_call_is_answered_with_json(async_client: AsyncClient) -> None:
    body = stateless("tools/call", {"name": "echo", "arguments": {"text": "hi"}})

    response = await apost(async_client, body, stateless_headers("tools/call", "echo"))

    assert response.status_code == 200
    assert json.loads(response.content)["result"]["content"] == [{"type": "text", "text": "hi"}]


async def test_progress_streams_as_server_sent_events(async_client: AsyncClient) -> None:
    body = stateless("tools/call", {"name": "count", "arguments": {"steps": 3}}, meta={"progressToken": "p"})

    response = await apost(async_client, body, stateless_headers("tools/call", "count"))

    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"] == "text/event-stream"
    content = b"".join([chunk async for chunk in response.streaming_content])  # type: ignore[union-attr]
    messages = sse_messages(content)
    assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3]
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "counted to 3"}]


async def test_a_session_lives_from_initialize_to_delete(async_client: AsyncClient) -> None:
    opened = await apost(async_client, initialize())
    session = {"Mcp-Session-Id": opened["Mcp-Session-Id"]}

    listed = await apost(async_client, request("tools/list"), session)
    deleted = await async_client.delete("/mcp", headers=session)
    after = await apost(async_client, request("tools/list"), session)

    assert listed.status_code == 200
    assert deleted.status_code == 204
    assert after.status_code == 404
    assert not await MCPSession.objects.aexists()


async def test_bad_json_is_a_parse_error(async_client: AsyncClient) -> None:
    response = await async_client.post("/mcp", data=b"{", content_type="application/json", headers={"Accept": ACCEPT})

    assert response.status_code == 400
    assert json.loads(response.content)["error"]["code"] == -32700
