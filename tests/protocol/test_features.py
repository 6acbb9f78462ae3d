"""Tools, resources, prompts, completion and pagination through the handler, in both eras."""

from __future__ import annotations

import pytest

from mcp_django.protocol import Connection
from tests.protocol.conftest import request, stateless


@pytest.fixture(name="send", params=["handshake", "stateless"])
def _send(request, handler, session):
    era = request.param

    async def send(method, params=None, request_id=1):
        if era == "handshake":
            return await handler.handle(_request(method, params, request_id), session)
        return await handler.handle(stateless(method, params, request_id), Connection(version_header="2026-07-28"))

    return send


_request = request


async def test_tools_list_pages_through_every_tool_with_opaque_cursors(send):
    names, cursor = [], None
    for _ in range(10):
        result = (await send("tools/list", {"cursor": cursor} if cursor else {}))["result"]
        names += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert names == ["tool_000", "tool_001", "tool_002", "echo"]


@pytest.mark.parametrize("cursor", ["garbage", "bWNwZGoxOjk5OQ", 12, "bWNwZGoxOi0x"])
async def test_an_invalid_cursor_is_invalid_params(send, cursor):
    reply = await send("tools/list", {"cursor": cursor})
    assert reply["error"]["code"] == -32602


async def test_an_empty_cursor_is_the_first_page(send):
    assert (await send("tools/list", {"cursor": ""}))["result"]["tools"][0]["name"] == "tool_000"


async def test_calling_an_unknown_tool_is_invalid_params(send):
    reply = await send("tools/call", {"name": "nope"})
    assert reply["error"] == {"code": -32602, "message": "Unknown tool: nope"}


async def test_a_tool_that_raises_is_an_error_result_without_internal_detail(send):
    result = (await send("tools/call", {"name": "boom"}))["result"]
    assert result["isError"] is True
    assert "secret" not in str(result)


async def test_a_tool_result_that_breaks_the_schema_becomes_an_error_result(send):
    result = (await send("tools/call", {"name": "bad_result"}))["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "The tool returned an invalid result"}]


@pytest.mark.parametrize("params", [{}, {"name": 5}, {"name": "echo", "arguments": "x"}])
async def test_malformed_tool_call_params_are_invalid_params(send, params):
    assert (await send("tools/call", params))["error"]["code"] == -32602


async def test_prompts_get_returns_messages_and_rejects_missing_arguments(send):
    ok = (await send("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}}))["result"]
    assert ok["messages"][0]["content"]["text"] == "Hello Ada"
    assert (await send("prompts/get", {"name": "greet"}))["error"]["code"] == -32602
    assert (await send("prompts/get", {"name": "nope"}))["error"]["code"] == -32602


async def test_resources_templates_and_reads(send):
    assert (await send("resources/list"))["result"]["resources"][0]["uri"] == "test://a"
    assert (await send("resources/templates/list"))["result"]["resourceTemplates"][0]["uriTemplate"] == "test://t/{id}"
    assert (await send("resources/read", {"uri": "test://a"}))["result"]["contents"][0]["text"] == "A"


async def test_completions_are_capped_at_one_hundred_values(send):
    params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "x"}}
    completion = (await send("completion/complete", params))["result"]["completion"]
    assert len(completion["values"]) == 100
    assert completion["hasMore"] is True
    assert completion["total"] == 150


async def test_progress_notifications_echo_the_token_and_precede_the_response(send, handler, session):
    messages = [
        m
        async for m in handler.stream(
            _request("tools/call", {"name": "progress", "_meta": {"progressToken": "tok"}}), session
        )
    ]
    progress = [m["params"] for m in messages if m.get("method") == "notifications/progress"]
    assert [p["progress"] for p in progress] == [0, 1, 2]
    assert {p["progressToken"] for p in progress} == {"tok"}
    assert messages[-1]["result"]["content"][0]["text"] == "done"


async def test_no_progress_is_sent_without_a_token(handler, session):
    messages = [m async for m in handler.stream(_request("tools/call", {"name": "progress"}), session)]
    assert not [m for m in messages if m.get("method") == "notifications/progress"]
