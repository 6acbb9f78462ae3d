"""`search` and `grouped` over stdio: `manage.py mcp_stdio` serving the catalogue tests' endpoints to the official
`mcp` client, in both of its modes (the handshake era and 2026-07-28)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import ROOT

MODES = ["legacy", "2026-07-28"]
TIMEOUT_S = 60


@pytest.fixture(scope="module")
def stdio_env(live_server_env: dict[str, str]) -> dict[str, str]:
    """The example project's migrated, seeded database (its superuser `admin`), with the catalogue endpoints."""
    return {**live_server_env, "DJANGO_SETTINGS_MODULE": "tests.catalogues.stdio_settings"}


def stdio_server(env: dict[str, str], endpoint: str) -> StdioServerParameters:
    args = ["manage.py", "mcp_stdio", "--endpoint", endpoint, "--user", "admin"]
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=ROOT)


@pytest.mark.parametrize("mode", MODES)
async def test_over_stdio_the_official_client_finds_a_tool_by_searching_and_calls_it_by_its_name(
    stdio_env: dict[str, str], mode: str
) -> None:
    async with Client(stdio_server(stdio_env, "search"), mode=mode, read_timeout_seconds=TIMEOUT_S) as session:
        listed = [tool.name for tool in (await session.list_tools()).tools]
        searched = await session.call_tool("search_tools", {"query": "list the books"})
        found: list[dict[str, Any]] = searched.structured_content["tools"]
        listed_books = await session.call_tool("list_books", {"limit": 1})

    assert listed == ["search_tools", "create_book", "get_catalogue_stats"]
    assert "list_books" in [tool["name"] for tool in found]
    assert all("inputSchema" in tool for tool in found)  # definitions, as a flat list gives them
    assert not listed_books.is_error, listed_books
    assert listed_books.structured_content["count"] > 1  # the seeded catalogue


@pytest.mark.parametrize("mode", MODES)
async def test_over_stdio_the_official_client_calls_a_tool_through_its_groups_dispatcher(
    stdio_env: dict[str, str], mode: str
) -> None:
    async with Client(stdio_server(stdio_env, "grouped"), mode=mode, read_timeout_seconds=TIMEOUT_S) as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        got = await session.call_tool("book", {"action": "list_books", "arguments": {"limit": 1}})
        helped = await session.call_tool("book", {"action": "help"})

    assert "book" in listed
    assert "list_books" not in listed
    assert not got.is_error, got
    assert len(got.structured_content["items"]) == 1  # list_books's own result
    assert "list_books" in str(helped.content)
