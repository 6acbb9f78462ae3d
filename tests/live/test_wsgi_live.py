"""The example project under gunicorn's sync worker (WSGI, one worker, a real socket): the WSGI fast path
(`example_project.wsgi`, `mcp_django.wsgi`) with the official `mcp` client in both eras, DRF tokens and
scopes as on the Django view, progress as server-sent events, and the rest of the site served by Django."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import TextContent

from tests.conftest import LiveServer, _database_env, fresh_database, serve_example
from tests.live.test_fast_path_live import call

pytestmark = pytest.mark.live

EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}


@pytest.fixture(scope="module")
def gunicorn_server(seeded_database: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The example project served by ``gunicorn --worker-class sync --workers 1 example_project.wsgi:application``."""
    folder = tmp_path_factory.mktemp("wsgi-live")
    env = _database_env(fresh_database(seeded_database, folder))
    with serve_example(env, folder, server="gunicorn") as server:
        yield server


@contextlib.asynccontextmanager
async def client(server: LiveServer, mode: str, user: str) -> AsyncIterator[Client]:
    """The official client on `/mcp`, with the demo user `user`'s DRF token."""
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {server.tokens[user]}"}) as http:
        transport = streamable_http_client(server.url("/mcp"), http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=30) as session:
            yield session


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_client_calls_a_sync_orm_tool_with_a_drf_token_in_both_eras(
    gunicorn_server: LiveServer, mode: str
) -> None:
    async with client(gunicorn_server, mode, "carol") as session:
        result = await session.call_tool("search_books", {"query": "Le Guin"})
        version = session.protocol_version

    assert version == EXPECTED_VERSION[mode]
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, TextContent)
    assert "Le Guin" in block.text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_each_user_sees_the_tools_their_scope_and_permissions_allow(
    gunicorn_server: LiveServer, mode: str
) -> None:
    async with client(gunicorn_server, mode, "alice") as session:
        alice = {tool.name for tool in (await session.list_tools()).tools}
    async with client(gunicorn_server, mode, "bob") as session:
        bob = {tool.name for tool in (await session.list_tools()).tools}

    assert "curate_book" in alice - bob  # demo.curate_book: alice's permission
    assert "reindex_catalogue" in bob - alice  # Scope.TEAM: bob's team


async def test_a_caller_without_a_token_is_refused_401_on_the_fast_path(gunicorn_server: LiveServer) -> None:
    body, headers = call("search_books")
    async with httpx2.AsyncClient() as http:
        response = await http.post(gunicorn_server.url("/mcp"), content=body, headers=headers)

    assert response.status_code == 401
    assert "resource_metadata=" in response.headers["www-authenticate"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "x-frame-options" not in response.headers  # no middleware ran


async def test_the_rest_of_the_site_is_served_by_django_with_its_middleware(gunicorn_server: LiveServer) -> None:
    body, headers = call("test_simple_text")
    async with httpx2.AsyncClient() as http:
        admin = await http.get(gunicorn_server.url("/admin/login/"))
        view = await http.post(gunicorn_server.url("/conformance/view/mcp"), content=body, headers=headers)

    assert admin.status_code == 200
    assert admin.headers["x-frame-options"] == "DENY"
    assert view.status_code == 200
    assert view.json()["result"]["content"][0]["text"] == "This is a simple text response for testing."
    assert view.headers["x-frame-options"] == "DENY"


async def test_progress_reaches_the_client_as_server_sent_events(gunicorn_server: LiveServer) -> None:
    body, headers = call("test_tool_with_progress", {"progressToken": "p"})
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        http.stream("POST", gunicorn_server.url("/conformance/mcp"), content=body, headers=headers) as response,
    ):
        assert response.headers["content-type"] == "text/event-stream"
        text = (await response.aread()).decode()

    messages = [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]
    assert [message["params"]["progress"] for message in messages[:-1]] == [0, 50, 100]
    assert messages[-1]["result"]["content"][0]["text"] == "p"
