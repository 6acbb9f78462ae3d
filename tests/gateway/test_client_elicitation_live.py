"""`MCPClient(elicitation=...)` against the example project's conformance fixture under daphne: its
`test_elicitation` tool asks a question, in the handshake era on the call's own stream and in 2026-07-28
as an `input_required` result; the handler's answer reaches the tool either way."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from mcp_django.client import MCPClient, RemoteError
from mcp_django.client.connection import pool
from tests.conftest import LiveServer
from tests.gateway.conftest import CONFORMANCE

pytestmark = pytest.mark.live


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_the_handler_answers_the_servers_question_and_the_tool_gets_its_answer(
    example_server: LiveServer, version: str
) -> None:
    asked: list[Mapping[str, Any]] = []

    async def answer(params: Mapping[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"username": "alice", "email": "alice@example.com"}}

    server = {"URL": example_server.url(CONFORMANCE), "PROTOCOL_VERSION": version}
    result = await MCPClient(server, interceptors=[], elicitation=answer).call_tool(
        "test_elicitation", {"message": "Who?"}
    )

    assert [params["message"] for params in asked] == ["Who?"]
    assert not result.get("isError"), result
    assert "alice@example.com" in result["content"][0]["text"]


async def test_without_a_handler_the_client_declares_no_elicitation_and_the_tool_cannot_ask(
    example_server: LiveServer,
) -> None:
    server = {"URL": example_server.url(CONFORMANCE), "PROTOCOL_VERSION": "2026-07-28"}

    with pytest.raises(RemoteError) as refused:
        await MCPClient(server, interceptors=[]).call_tool("test_elicitation", {"message": "Who?"})

    assert refused.value.code == -32021  # MissingRequiredClientCapability
    assert refused.value.data == {"requiredCapabilities": {"elicitation": {}}}
