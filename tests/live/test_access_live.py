"""Providers, scopes and authentication through the official ``mcp`` client, as the demo users alice, bob and carol."""

from __future__ import annotations

import json

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import LiveServer
from tests.live.test_official_client import client, text_of

pytestmark = pytest.mark.live

MODES = ["legacy", "2026-07-28", "auto"]
STATIC = {"search_books", "books_by", "catalogue_stats", "catalogue_report", "show_book", "rate_book", "retire_author"}
BOOK_TOOLS = {"about_dune", "about_foundation", "about_hyperion", "about_neuromancer", "about_the_dispossessed"}


async def tool_names(server: LiveServer, mode: str, path: str, user: str) -> set[str]:
    async with client(server, mode, path, user=user) as session:
        return {tool.name for tool in (await session.list_tools()).tools}


@pytest.mark.parametrize("mode", MODES)
async def test_each_demo_user_sees_their_own_adapter_tools(example_server: LiveServer, mode: str) -> None:
    alice = await tool_names(example_server, mode, "/mcp/adapter", "alice")
    bob = await tool_names(example_server, mode, "/mcp/adapter", "bob")
    carol = await tool_names(example_server, mode, "/mcp/adapter", "carol")

    assert alice >= BOOK_TOOLS
    assert not any(name.startswith(("books_by_", "count_")) for name in alice)
    team_only = {name for name in bob if name.startswith(("books_by_", "catalogue.book."))}
    team_only |= {"create_book", "update_book", "delete_book"}  # the demo's BookToolset: write_scope TEAM
    team_only |= {"suggest_book"}  # the demo's BookNinjaTools: write_scope TEAM
    assert bob - alice == team_only
    assert not any(name.startswith("count_") for name in bob)
    assert {"count_demo_book", "count_auth_user"} <= carol - bob
    assert alice < bob < carol


@pytest.mark.parametrize("mode", MODES)
async def test_each_demo_user_sees_the_static_tools_of_their_scope_and_permissions(
    example_server: LiveServer, mode: str
) -> None:
    # and of their permissions: curate_book needs demo.curate_book (alice's), import_books demo.add_book (bob's group)
    assert await tool_names(example_server, mode, "/mcp", "alice") == {*STATIC, "curate_book"}
    assert await tool_names(example_server, mode, "/mcp", "bob") == {*STATIC, "reindex_catalogue", "import_books"}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_data_driven_tool_answers_and_knows_its_caller(example_server: LiveServer, mode: str) -> None:
    async with client(example_server, mode, "/mcp/adapter", user="bob") as session:
        about = await session.call_tool("about_dune", {})
        books = await session.call_tool("books_by_ursula_k_le_guin", {})

    assert text_of(about).startswith("Dune (Frank Herbert, 1965)")
    assert (
        text_of(books)
        == "Ursula K. Le Guin, asked by bob (team): The Left Hand of Darkness (1969); The Dispossessed (1974)"
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_adapter_tool_is_unknown_on_the_server_endpoint_and_back(
    example_server: LiveServer, mode: str
) -> None:
    async with client(example_server, mode, "/mcp") as session:
        with pytest.raises(MCPError) as on_server:
            await session.call_tool("about_dune", {})
    async with client(example_server, mode, "/mcp/adapter") as session:
        with pytest.raises(MCPError) as on_adapter:
            await session.call_tool("search_books", {})

    assert (on_server.value.code, str(on_server.value)) == (-32602, "Unknown tool: about_dune")
    assert (on_adapter.value.code, str(on_adapter.value)) == (-32602, "Unknown tool: search_books")


@pytest.mark.parametrize("path", ["/mcp", "/mcp/adapter"])
async def test_a_request_without_a_token_gets_401_with_the_metadata_challenge(
    example_server: LiveServer, path: str
) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            example_server.url(path),
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
        )
        metadata_url = example_server.url(f"/.well-known/oauth-protected-resource{path}")
        metadata = await http.get(metadata_url)

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    assert response.json()["error"]["code"] == -32600
    assert metadata.json()["resource"] == example_server.url(path)


async def test_the_official_client_without_a_token_is_refused(example_server: LiveServer) -> None:
    with pytest.raises(Exception):  # noqa: B017, PT011 - the client surfaces the 401 in its own way per version
        async with client(example_server, "2026-07-28", "/mcp/adapter", user=None) as session:
            await session.list_tools()


async def test_a_bad_token_is_refused_as_invalid(example_server: LiveServer) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            example_server.url("/mcp"),
            content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            headers={
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "Authorization": "Bearer not-a-demo-token",
            },
        )

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token", resource_metadata="')


async def test_the_manifest_lists_the_endpoints_their_modes_and_the_hubs_sources(example_server: LiveServer) -> None:
    async with httpx2.AsyncClient() as http:
        manifest = (await http.get(example_server.url("/mcp/.well-known/endpoints"))).json()

    modes = {entry["path"]: entry["mode"] for entry in manifest["endpoints"]}
    hub = next(entry for entry in manifest["endpoints"] if entry["path"] == "/hub/mcp")
    assert hub["sources"][0] == {"kind": "providers", "name": "demo.books", "namespace": ""}  # local ones first
    remotes = [source for source in hub["sources"] if source["kind"] != "providers"]
    assert {source.pop("health") for source in remotes} <= {"unknown", "up", "degraded", "down"}  # as last seen
    assert remotes == [
        {"kind": "remote", "name": "conformance", "namespace": "conf"},
        {"kind": "remote", "name": "books", "namespace": "books"},
    ]
    assert modes == {
        "/books/mcp": "server",
        "/hub/mcp": "adapter",
        "/conformance/mcp": "server",
        "/conformance/view/mcp": "server",
        "/gateway/mcp": "gateway",
        "/gateway/chain/mcp": "gateway",
        "/guarded/mcp": "server",
        "/interceptors/mcp": "server",
        "/mcp": "server",
        "/mcp/adapter": "adapter",
    }
    assert [entry["path"] for entry in manifest["endpoints"]] == sorted(modes)


async def test_a_session_opened_by_one_user_is_404_for_another(example_server: LiveServer) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    async with httpx2.AsyncClient() as http:
        opened = await http.post(
            example_server.url("/mcp"),
            content=json.dumps(initialize),
            headers={**headers, "Authorization": f"Bearer {example_server.tokens['alice']}"},
        )
        hijack = await http.post(
            example_server.url("/mcp"),
            content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            headers={
                **headers,
                "Authorization": f"Bearer {example_server.tokens['carol']}",
                "Mcp-Session-Id": opened.headers["Mcp-Session-Id"],
                "MCP-Protocol-Version": "2025-11-25",
            },
        )

    assert opened.status_code == 200
    assert hijack.status_code == 404
