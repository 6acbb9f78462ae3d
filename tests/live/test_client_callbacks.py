"""The official client answers a tool's questions over real HTTP, in both eras.

Handshake era (`legacy`): the tool's request goes to the client on the call's SSE stream and the
client's callback answers in another POST. 2026 era: the call answers `input_required`, the client
runs the same callback and retries. Same tool code either way (example_project/conformance/mcp.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import types

from tests.conftest import LiveServer
from tests.live.test_official_client import client, text_of

pytestmark = pytest.mark.live

ENDPOINT = "/conformance/mcp"
ERAS = ["legacy", "2026-07-28"]


async def answer_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada", "username": "ada", "email": "ada@example.com"})


async def answer_sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    asked = params.messages[0].content
    question = asked.text if isinstance(asked, types.TextContent) else "?"
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"echo: {question}"), model="test-model"
    )


async def answer_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult.model_validate({"roots": [{"uri": "file:///work/one"}, {"uri": "file:///work/two"}]})


CALLBACKS: dict[str, Any] = {
    "elicitation_callback": answer_elicitation,
    "sampling_callback": answer_sampling,
    "list_roots_callback": answer_roots,
}


@pytest.mark.parametrize("mode", ERAS)
async def test_an_elicitation_is_answered_by_the_clients_callback(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode, ENDPOINT, user=None, **CALLBACKS) as session:
        result = await session.call_tool("test_input_required_result_elicitation", {})
    assert not result.is_error, result
    assert text_of(result) == "Hello, Ada!"


@pytest.mark.parametrize("mode", ERAS)
async def test_sampling_is_answered_by_the_clients_model(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode, ENDPOINT, user=None, **CALLBACKS) as session:
        result = await session.call_tool("test_sampling", {"prompt": "What is MCP?"})
    assert not result.is_error, result
    assert text_of(result) == "LLM response: echo: What is MCP?"


@pytest.mark.parametrize("mode", ERAS)
async def test_roots_are_listed_by_the_client(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode, ENDPOINT, user=None, **CALLBACKS) as session:
        result = await session.call_tool("test_input_required_result_list_roots", {})
    assert not result.is_error, result
    assert text_of(result) == "Client exposed 2 root(s)."


@pytest.mark.parametrize("mode", ERAS)
async def test_several_rounds_of_questions_reach_the_end(example_server: LiveServer, mode: str) -> None:
    async def colour_or_name(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ada", "color": "teal"})

    options = {**CALLBACKS, "elicitation_callback": colour_or_name}
    async with client(example_server, mode, ENDPOINT, user=None, **options) as session:
        result = await session.call_tool("test_input_required_result_multi_round", {})
    assert text_of(result) == "Ada likes teal."


async def test_a_prompt_asks_before_it_is_built_in_the_2026_era(example_server: LiveServer) -> None:
    async def context_answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"context": "library"})

    async with client(
        example_server, "2026-07-28", ENDPOINT, user=None, elicitation_callback=context_answer
    ) as session:
        prompt = await session.get_prompt("test_input_required_result_prompt")
    block = prompt.messages[0].content
    assert isinstance(block, types.TextContent)
    assert block.text == "Use this context: library"
