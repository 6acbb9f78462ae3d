"""Discovery modes on an endpoint (docs/catalogues.md): `search` finds the caller's tools and only theirs,
`grouped` dispatches to them, and every tool is still called by its real name, through the same checks."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from example_project.demo.models import Book
from mcp_django.catalogues import SEARCH_TOOL, Index, grouped_listing, groups
from mcp_django.interceptors import Invocation, ValidationInterceptor
from mcp_django.models import ToolState
from mcp_django.testing import MCPTestClient, assert_mcp_error, assert_tool_error, assert_tool_result
from tests.http_support import HANDSHAKE_VERSION, initialize, post, request, stateless, stateless_headers
from tests.toolsets.conftest import make_user

pytestmark = [pytest.mark.urls("tests.catalogues.urls"), pytest.mark.django_db(transaction=True)]

Era = Literal["handshake", "stateless"]
ERAS: list[Era] = ["handshake", "stateless"]
CALLS_SEEN: list[str] = []


class CallsSeen(ValidationInterceptor):
    """Notes the name of every tool call the interceptor chain sees (where the audit trail's sink sits)."""

    def validate(self, invocation: Invocation) -> bool:
        if invocation.event == "tools/call" and invocation.phase == "request":
            CALLS_SEEN.append(invocation.payload["name"])
        return True


EVERY_BOOK_PERMISSION = ("view_book", "add_book", "change_book", "delete_book")


async def editor() -> Any:
    return await sync_to_async(make_user)("editor", *EVERY_BOOK_PERMISSION, group="mcp-team")


async def found(client: MCPTestClient, query: str, limit: int = 5) -> list[str]:
    result = assert_tool_result(await client.call_tool("search_tools", {"query": query, "limit": limit}))
    return [tool["name"] for tool in result["structuredContent"]["tools"]]


@pytest.mark.parametrize("era", ERAS)
async def test_search_mode_lists_the_search_tool_and_the_pinned_tools_the_caller_may_see(
    books: list[Book], era: Era
) -> None:
    stranger = await sync_to_async(make_user)("stranger")

    as_editor = [tool["name"] for tool in await MCPTestClient("search", user=await editor(), era=era).list_tools()]
    as_stranger = [tool["name"] for tool in await MCPTestClient("search", user=stranger, era=era).list_tools()]

    assert as_editor == ["search_tools", "create_book", "get_catalogue_stats"]
    assert as_stranger == ["search_tools", "get_catalogue_stats"]  # create_book needs TEAM and demo.add_book


@pytest.mark.parametrize("era", ERAS)
async def test_the_search_tool_returns_the_best_tools_definitions_and_a_found_tool_is_called_by_its_name(
    books: list[Book], era: Era
) -> None:
    client = MCPTestClient("search", user=await editor(), era=era)
    flat = {tool["name"]: tool for tool in await MCPTestClient("flat", user=await editor_again(), era=era).list_tools()}

    result = assert_tool_result(await client.call_tool("search_tools", {"query": "delete a book", "limit": 3}))
    definitions = result["structuredContent"]["tools"]
    called = await client.call_tool("list_books", {"author__icontains": "le guin", "order_by": ["year"]})

    assert next(tool["name"] for tool in definitions) == "delete_book"
    assert definitions[0] == flat["delete_book"]  # the whole definition, as a flat list gives it
    assert json.loads(result["content"][0]["text"]) == definitions
    rows = assert_tool_result(called)["structuredContent"]["items"]
    assert [row["title"] for row in rows] == ["The Left Hand of Darkness", "The Dispossessed"]


async def editor_again() -> Any:
    from django.contrib.auth import get_user_model

    return await get_user_model().objects.aget(username="editor")


@pytest.mark.parametrize("era", ERAS)
async def test_a_caller_never_finds_a_tool_they_may_not_call_and_calling_it_by_name_is_refused(
    books: list[Book], era: Era
) -> None:
    reader = await sync_to_async(make_user)("reader", "view_book")
    client = MCPTestClient("search", user=reader, era=era)

    writing = await found(client, "create update delete remove edit add a book", limit=20)
    reading = await found(client, "list the books")
    flat = {tool["name"] for tool in await MCPTestClient("flat", user=reader, era=era).list_tools()}

    assert "list_books" in reading
    assert not {"create_book", "update_book", "delete_book"} & set(writing)
    assert set(writing) <= flat  # what a flat list shows them, and nothing more
    with assert_mcp_error(match="Unknown tool: delete_book"):
        await client.call_tool("delete_book", {"id": books[0].pk})
    assert await Book.objects.filter(pk=books[0].pk).aexists()


async def test_a_tool_the_admin_switched_off_is_never_found_nor_called(books: list[Book]) -> None:
    client = MCPTestClient("search", user=await editor())
    assert "list_books" in await found(client, "list the books")

    await ToolState.objects.acreate(name="list_books", enabled=False)

    assert "list_books" not in await found(client, "list the books", limit=20)
    with assert_mcp_error(match="Unknown tool: list_books"):
        await client.call_tool("list_books", {})


async def test_the_search_tool_refuses_a_missing_query_and_a_limit_out_of_range(books: list[Book]) -> None:
    client = MCPTestClient("search", user=await editor())

    assert_tool_error(await client.call_tool("search_tools", {}), "search_tools needs a query")
    assert_tool_error(await client.call_tool("search_tools", {"query": "x", "limit": 0}), "limit must be")
    assert assert_tool_result(await client.call_tool("search_tools", {"query": "zzz"}))["structuredContent"] == {
        "tools": []
    }


@pytest.mark.parametrize("era", ERAS)
async def test_grouped_mode_lists_a_dispatcher_per_group_and_a_dispatcher_calls_its_action_by_its_real_name(
    books: list[Book], settings: Any, era: Era
) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "INTERCEPTORS": ["tests.catalogues.test_modes.CallsSeen"]}
    CALLS_SEEN.clear()
    client = MCPTestClient("grouped", user=await editor(), era=era)

    listed = {tool["name"]: tool for tool in await client.list_tools()}
    got = await client.call_tool("book", {"action": "get_book", "arguments": {"id": books[0].pk}})
    helped = assert_tool_result(await client.call_tool("book", {"action": "help"}))
    unknown = await client.call_tool("book", {"action": "get_author", "arguments": {}})

    assert {"book", "api_book", "about", "catalogue"} <= set(listed)
    assert "get_book" not in listed
    assert "list_books, get_book, create_book, update_book, delete_book" in listed["book"]["description"]
    assert assert_tool_result(got)["structuredContent"]["title"] == "Dune"
    assert "get_book" in [tool["name"] for tool in helped["structuredContent"]["tools"]]
    assert_tool_error(unknown, "Unknown action 'get_author' of book: one of list_books, get_book")
    assert CALLS_SEEN == ["get_book"]  # the chain (the audit trail's) sees the tool's own call, never the dispatcher's


async def test_a_dispatcher_refuses_an_action_the_caller_may_not_call(books: list[Book]) -> None:
    reader = await sync_to_async(make_user)("reader", "view_book")
    client = MCPTestClient("grouped", user=reader)

    listed = {tool["name"]: tool for tool in await client.list_tools()}
    refused = await client.call_tool("book", {"action": "delete_book", "arguments": {"id": books[0].pk}})

    assert "delete_book" not in listed["book"]["description"]
    assert_tool_error(refused, "Unknown action 'delete_book' of book")
    assert await Book.objects.filter(pk=books[0].pk).aexists()


@pytest.mark.parametrize("era", ERAS)
def test_search_finds_a_tool_and_it_is_called_through_the_django_view_in_both_eras(books: list[Book], era: Era) -> None:
    from rest_framework.authtoken.models import Token

    user = make_user("editor", *EVERY_BOOK_PERMISSION, group="mcp-team")
    auth = {"Authorization": f"Bearer {Token.objects.create(user=user).key}"}
    client = Client()
    if era == "handshake":
        opened = post(client, initialize(), auth, path="/search/mcp")
        auth["Mcp-Session-Id"] = opened["Mcp-Session-Id"]

    def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if era == "handshake":
            body, headers = request(method, params), {**auth, "MCP-Protocol-Version": HANDSHAKE_VERSION}
        else:
            body, headers = stateless(method, params), {**auth, **stateless_headers(method, params.get("name"))}
        response = post(client, body, headers, path="/search/mcp")
        assert response.status_code == 200, response.content
        return dict(json.loads(response.content))["result"]

    listed = send("tools/list", {})
    searched = send("tools/call", {"name": "search_tools", "arguments": {"query": "show one book"}})
    called = send("tools/call", {"name": "get_book", "arguments": {"id": books[0].pk}})

    assert [tool["name"] for tool in listed["tools"]] == ["search_tools", "create_book", "get_catalogue_stats"]
    assert "get_book" in [tool["name"] for tool in searched["structuredContent"]["tools"]]
    assert called["structuredContent"]["title"] == "Dune"


def test_bm25_ranks_by_name_description_and_parameter_names_and_counts_a_verb_s_synonyms() -> None:
    tools: list[dict[str, Any]] = [
        {"name": "list_books", "description": "List the books.", "inputSchema": {"properties": {"author": {}}}},
        {"name": "update_book", "description": "Change one book.", "inputSchema": {"properties": {"title": {}}}},
        {"name": "delete_book", "description": "Delete one book."},
    ]
    index = Index(tools)

    assert next(tool["name"] for tool in index.search("rename a book's title", 3)) == "update_book"
    assert [tool["name"] for tool in index.search("books by this author", 1)] == ["list_books"]
    assert [tool["name"] for tool in index.search("remove book 3", 1)] == ["delete_book"]
    assert index.search("weather", 5) == []


def test_groups_follow_namespaces_dotted_names_nouns_then_first_words() -> None:
    names = ["list_books", "get_book", "about_dune", "about_emma", "gh_create_issue", "gh_list_prs", "cat.stats"]
    names += ["cat.rename", "ping", "book"]
    tools = [{"name": name} for name in names]

    found = {group: [tool["name"] for tool in members] for group, members in groups(tools, ("gh",)).items()}
    listed = [tool["name"] for tool in grouped_listing(tools, ("gh",))]

    # "book" is a tool of its own, so list_books and get_book stay as they are
    assert found == {
        "about": ["about_dune", "about_emma"],
        "gh": ["gh_create_issue", "gh_list_prs"],
        "cat": ["cat.stats", "cat.rename"],
    }
    assert listed == ["list_books", "get_book", "about", "gh", "cat", "ping", "book"]
    assert SEARCH_TOOL["name"] == "search_tools"
