"""The official ``mcp`` Python client against the example project under daphne, in all three modes.

``legacy`` runs the 2025-11-25 ``initialize`` handshake (with a session), ``2026-07-28`` pins the
stateless era without a probe, and ``auto`` probes ``server/discover`` first, as clients do by default.
``/mcp`` and ``/mcp/adapter`` need a token: the client sends one of the demo users' as a bearer token
(carol, who reaches every scope, unless a test names another user).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import LoggingMessageNotificationParams, PromptReference, TextContent, TextResourceContents

from tests.conftest import LiveServer

pytestmark = pytest.mark.live

MODES = ["legacy", "2026-07-28", "auto"]
DEMO_TOOLS = {"search_books", "catalogue_stats", "reindex_catalogue"}
EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}
# Resource not found: -32002 in the handshake era, -32602 (with data.uri) from 2026-07-28 on.
RESOURCE_NOT_FOUND = {"legacy": -32002, "2026-07-28": -32602, "auto": -32602}


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.asynccontextmanager
async def client(
    server: LiveServer, mode: str, path: str = "/mcp", *, user: str | None = "carol", **options: Any
) -> AsyncIterator[Client]:
    """The official client connected to `path`, authenticated as the demo user `user` (None: no credentials)."""
    headers = {"Authorization": f"Bearer {server.tokens[user]}"} if user is not None else {}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(server.url(path), http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=30, **options) as session:
            yield session


def text_of(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


@pytest.mark.smoke
async def test_the_client_connects_at_the_version_its_mode_selects(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode) as session:
        assert session.protocol_version == EXPECTED_VERSION[mode]
        if mode != "2026-07-28":  # a pinned client synthesizes its discover result instead of asking
            assert session.server_info is not None
            assert session.server_info.name == "mcp-django-example"
            assert session.server_capabilities.tools is not None


async def test_the_demo_tools_are_listed_and_the_fixture_tools_are_not(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) >= DEMO_TOOLS
    assert not any(name.startswith("test_") for name in tools), "conformance fixtures leaked onto /mcp"
    assert tools["search_books"].description
    assert tools["search_books"].input_schema["properties"]["query"]["type"] == "string"


@pytest.mark.smoke
async def test_a_sync_tool_reads_the_django_models(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode) as session:
        result = await session.call_tool("search_books", {"query": "Le Guin"})
    assert not result.is_error, result
    text = text_of(result)
    assert "The Dispossessed" in text
    assert "The Left Hand of Darkness" in text
    assert "Dune" not in text


async def test_a_tool_returning_a_pydantic_model_gives_structured_content(
    example_server: LiveServer, mode: str
) -> None:
    async with client(example_server, mode) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        result = await session.call_tool("catalogue_stats", {})
    assert listed["catalogue_stats"].output_schema is not None
    assert "books" in listed["catalogue_stats"].output_schema["properties"]
    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["books"] == 6
    assert result.structured_content["authors"] == 5
    assert result.structured_content["oldest"]["title"] == "Foundation"
    assert json.loads(text_of(result))["books"] == 6


async def test_invalid_arguments_come_back_as_a_tool_error_naming_the_field(
    example_server: LiveServer, mode: str
) -> None:
    async with client(example_server, mode) as session:
        result = await session.call_tool("search_books", {"limit": "many"})
    assert result.is_error
    assert "limit" in text_of(result)


async def test_progress_notifications_reach_the_progress_callback(example_server: LiveServer, mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with client(example_server, mode) as session:
        result = await session.call_tool("reindex_catalogue", {"steps": 3}, progress_callback=on_progress)
    assert text_of(result) == "Reindexed the catalogue in 3 batches."
    assert seen == [(1, 3, "batch 1 of 3"), (2, 3, "batch 2 of 3"), (3, 3, "batch 3 of 3")]


async def test_resources_and_templates_are_listed_and_read(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode) as session:
        resources = {resource.uri: resource for resource in (await session.list_resources()).resources}
        templates = [template.uri_template for template in (await session.list_resource_templates()).resource_templates]
        listing = await session.read_resource("demo://books")
        books = json.loads(_text_contents(listing).text)
        first = await session.read_resource(f"demo://books/{books[0]['id']}")
    assert "demo://books" in resources
    assert resources["demo://books"].mime_type == "application/json"
    assert templates == ["demo://books/{book_id}"]
    assert len(books) == 6
    book = json.loads(_text_contents(first).text)
    assert book["title"] == books[0]["title"]
    assert book["summary"]


async def test_a_missing_resource_is_the_error_of_the_connected_era(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode) as session:
        with pytest.raises(MCPError) as raised:
            await session.read_resource("demo://books/999999")
    assert raised.value.code == RESOURCE_NOT_FOUND[mode]


async def test_an_unknown_tool_is_an_invalid_params_error(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode) as session:
        with pytest.raises(MCPError) as raised:
            await session.call_tool("test_simple_text", {})  # a conformance fixture: unknown on /mcp
    assert raised.value.code == -32602


async def test_prompts_are_listed_rendered_and_completed(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode) as session:
        prompts = {prompt.name: prompt for prompt in (await session.list_prompts()).prompts}
        rendered = await session.get_prompt("review_book", {"title": "Dune"})
        completed = await session.complete(
            PromptReference(type="ref/prompt", name="review_book"), {"name": "title", "value": "d"}
        )
    assert [argument.name for argument in prompts["review_book"].arguments or []] == ["title"]
    message = rendered.messages[0]
    assert message.role == "user"
    assert isinstance(message.content, TextContent)
    assert "Frank Herbert" in message.content.text
    assert completed.completion.values == ["Dune"]


async def test_the_conformance_endpoint_serves_its_own_registry(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode, "/conformance/mcp") as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        simple = await session.call_tool("test_simple_text", {})
        failing = await session.call_tool("test_error_handling", {})
        static = await session.read_resource("test://static-text")
    assert "test_simple_text" in names
    assert not names & DEMO_TOOLS, "demo tools leaked onto the conformance endpoint"
    assert text_of(simple) == "This is a simple text response for testing."
    assert failing.is_error
    assert text_of(failing) == "This tool intentionally returns an error for testing"
    assert _text_contents(static).text == "This is the content of the static text resource."


async def test_log_messages_reach_the_logging_callback(example_server: LiveServer, mode: str) -> None:
    logged: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        logged.append(params)

    # 2026-07-28 requests opt in to log messages per request; handshake sessions default to sending them.
    async with client(example_server, mode, "/conformance/mcp", logging_callback=on_log, log_level="info") as session:
        result = await session.call_tool("test_tool_with_logging", {})
    assert text_of(result) == "Tool with logging executed successfully"
    assert [entry.data for entry in logged] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert {entry.level for entry in logged} == {"info"}


def _text_contents(result: Any) -> TextResourceContents:
    contents = result.contents[0]
    assert isinstance(contents, TextResourceContents), contents
    return contents
