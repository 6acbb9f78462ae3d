"""`ModelToolset` with real rows: the demo's `BookToolset` on the adapter endpoint, and toolsets of the tests'
own, served statically on a registry and as an endpoint's provider."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from mcp_types.jsonrpc import INVALID_PARAMS
from rest_framework import serializers

from example_project.demo.models import Book
from mcp_django import Registry
from mcp_django.endpoints import Endpoint
from mcp_django.scopes import Scope
from mcp_django.testing import MCPTestClient, assert_mcp_error, assert_tool_error, assert_tool_result
from mcp_django.toolsets import ModelToolset

ADAPTER = "mcp/adapter"


class UserToolset(ModelToolset):
    """Users, showing only their names: the target of the lookup attacks."""

    id = "tests.toolsets.users"
    model = get_user_model()
    fields = ["id", "username"]
    filters = {"username": ["exact", "icontains"], "groups__name": ["exact", "icontains"]}
    ordering = ["username"]
    check_permissions = False


class ReadOnlyBooks(ModelToolset):
    id = "tests.toolsets.read_only_books"
    model = Book
    fields = "__all__"
    filters = {"year": ["in"], "title": ["istartswith"]}
    page_size = 2
    max_rows = 3
    timeout = 5


class BookSerializer(serializers.ModelSerializer[Book]):
    class Meta:
        model = Book
        fields = ["id", "title", "author", "year"]

    def validate_year(self, value: int) -> int:
        if value > 2100:
            raise serializers.ValidationError("Books from the future are not catalogued.")
        return value

    def update(self, instance: Book, validated_data: dict[str, Any]) -> Book:
        validated_data["summary"] = f"edited by {self.context['request'].user.get_username()}"
        return super().update(instance, validated_data)


class SerializedBooks(ModelToolset):
    id = "tests.toolsets.serialized_books"
    model = Book
    serializer_class = BookSerializer
    actions = ["list", "get", "create", "update"]
    basename = "volume"
    plural = "volumes"


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    """An adapter endpoint of the tests' own toolsets."""
    yield Endpoint(
        "tests/toolsets/mcp",
        name="tests-toolsets",
        mode="adapter",
        providers=[UserToolset, ReadOnlyBooks, SerializedBooks],
    )
    gc.collect()  # the toolsets it built leave all_toolsets() (their tools hold them in cycles)


def titles(result: dict[str, Any]) -> list[str]:
    return [row["title"] for row in assert_tool_result(result)["structuredContent"]["items"]]


async def test_list_filters_orders_and_pages_through_real_rows(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    client = mcp_client(ADAPTER, user=reader)

    result = await client.call_tool("list_books", {"author__icontains": "le guin", "order_by": ["-year"]})
    assert titles(result) == ["The Dispossessed", "The Left Hand of Darkness"]

    page = (await client.call_tool("list_books", {"year__gte": 1970, "limit": 1, "offset": 1}))["structuredContent"]
    assert [row["title"] for row in page["items"]] == ["Neuromancer"]  # Meta.ordering: title
    assert (page["count"], page["offset"], page["limit"], page["next_offset"]) == (3, 1, 1, 2)
    last = (await client.call_tool("list_books", {"year__gte": 1970, "offset": 2}))["structuredContent"]
    assert last["items"] == [
        {"id": books[3].pk, "title": "The Dispossessed", "author": "Ursula K. Le Guin", "year": 1974, "summary": ""}
    ]
    assert last["next_offset"] is None


async def test_get_returns_one_row_and_a_missing_one_is_an_error_result(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    client = mcp_client(ADAPTER, user=reader)

    dune = assert_tool_result(await client.call_tool("get_book", {"id": books[0].pk}))["structuredContent"]
    assert (dune["title"], dune["year"]) == ("Dune", 1965)
    assert_tool_error(await client.call_tool("get_book", {"id": 999_999}), "^No book with id 999999.$")


async def test_a_list_never_returns_more_than_max_rows(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, books: list[Book], reader: Any
) -> None:
    client = mcp_client(endpoint, user=reader)
    tool = next(tool for tool in await client.list_tools() if tool["name"] == "list_books")
    assert tool["inputSchema"]["properties"]["limit"]["maximum"] == 3

    page = (await client.call_tool("list_books"))["structuredContent"]
    assert (len(page["items"]), page["limit"], page["next_offset"]) == (2, 2, 2)  # page_size
    assert len((await client.call_tool("list_books", {"limit": 3}))["structuredContent"]["items"]) == 3
    assert_tool_error(
        await client.call_tool("list_books", {"limit": 4}),
        "^Invalid arguments for tool list_books: limit: Input should be less than or equal to 3$",
    )


async def test_writing_tools_are_served_only_when_asked_for(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, editor: Any
) -> None:
    names = {tool["name"] for tool in await mcp_client(endpoint, user=editor).list_tools()}

    assert {"list_books", "get_book"} <= names
    assert not {"create_book", "update_book", "delete_book"} & names
    assert {"list_volumes", "get_volume", "create_volume", "update_volume"} <= names
    assert "delete_volume" not in names


async def test_create_update_and_delete_with_the_model_permissions(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], editor: Any
) -> None:
    client = mcp_client(ADAPTER, user=editor)

    created = await client.call_tool("create_book", {"title": "Solaris", "author": "Stanisław Lem", "year": 1961})
    row = assert_tool_result(created)["structuredContent"]
    assert await Book.objects.filter(pk=row["id"], title="Solaris", summary="").aexists()

    updated = await client.call_tool("update_book", {"id": row["id"], "summary": "An ocean that thinks."})
    assert assert_tool_result(updated)["structuredContent"] == {**row, "summary": "An ocean that thinks."}
    assert (await Book.objects.aget(pk=row["id"])).year == 1961  # left out: unchanged

    deleted = await client.call_tool("delete_book", {"id": row["id"]})
    assert_tool_result(deleted, structured={"deleted": True, "id": row["id"]})
    assert not await Book.objects.filter(pk=row["id"]).aexists()


async def test_writes_are_validated_by_the_model_form_and_missing_fields_by_the_schema(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], editor: Any
) -> None:
    client = mcp_client(ADAPTER, user=editor)

    assert_tool_error(
        await client.call_tool("create_book", {"title": "x" * 201, "author": "A", "year": 2000}),
        r"^Invalid book: title: Ensure this value has at most 200 characters \(it has 201\).$",
    )
    assert_tool_error(
        await client.call_tool("create_book", {"title": "Untitled"}),
        "^Invalid arguments for tool create_book: author: Field required; year: Field required$",
    )
    assert_tool_error(
        await client.call_tool("update_book", {"id": books[0].pk, "year": -1}),
        "^Invalid book: year: Ensure this value is greater than or equal to 0.$",
    )
    assert await Book.objects.acount() == len(books)


async def test_a_caller_without_the_model_permission_is_refused_with_an_error_result(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], stranger: Any, reader: Any
) -> None:
    denied = await mcp_client(ADAPTER, user=stranger).call_tool("list_books")
    assert_tool_error(denied, "^Permission denied: viewing books needs the demo.view_book permission.$")

    # reader reaches the writing tools' scope here (SYSTEM), but has only the view permission
    client = mcp_client(ADAPTER, user=reader, scope="SYSTEM")
    assert_tool_error(
        await client.call_tool("create_book", {"title": "T", "author": "A", "year": 1}),
        "^Permission denied: adding books needs the demo.add_book permission.$",
    )
    assert_tool_error(
        await client.call_tool("delete_book", {"id": books[0].pk}),
        "^Permission denied: deleting books needs the demo.delete_book permission.$",
    )
    assert await Book.objects.acount() == len(books)


async def test_the_write_scope_hides_writing_tools_from_callers_below_it(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    client = mcp_client(ADAPTER, user=reader)  # USER; write_scope is TEAM
    names = {tool["name"] for tool in await client.list_tools()}

    assert {"list_books", "get_book"} <= names
    assert not {"create_book", "update_book", "delete_book"} & names
    with assert_mcp_error(INVALID_PARAMS, "Unknown tool: delete_book"):
        await client.call_tool("delete_book", {"id": books[0].pk})
    assert await Book.objects.acount() == len(books)


async def test_lookups_the_toolset_does_not_declare_are_refused(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, reader: Any
) -> None:
    client = mcp_client(endpoint, user=reader)
    prefix = "^Invalid arguments for tool list_users: "

    for attack in ("password__startswith", "password", "username__regex", "groups__name__startswith", "is_superuser"):
        result = await client.call_tool("list_users", {attack: "pbkdf2"})
        assert_tool_error(result, f"{prefix}{attack}: Extra inputs are not permitted$")
    assert_tool_error(
        await client.call_tool("list_users", {"order_by": ["password"]}),
        prefix + "order_by.0: Input should be 'username' or '-username'$",
    )
    rows = (await client.call_tool("list_users", {"username__icontains": "read"}))["structuredContent"]["items"]
    assert rows == [{"id": reader.pk, "username": "reader"}]  # no password, no other column


async def test_a_serializer_shows_rows_and_validates_writes(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, books: list[Book], editor: Any
) -> None:
    client = mcp_client(endpoint, user=editor)
    tools = {tool["name"]: tool for tool in await client.list_tools()}
    assert sorted(tools["create_volume"]["inputSchema"]["required"]) == ["author", "title", "year"]
    assert "summary" not in tools["get_volume"]["outputSchema"]["properties"]

    row = (await client.call_tool("get_volume", {"id": books[0].pk}))["structuredContent"]
    assert row == {"id": books[0].pk, "title": "Dune", "author": "Frank Herbert", "year": 1965}
    assert_tool_error(
        await client.call_tool("update_volume", {"id": books[0].pk, "year": 3000}),
        "^Invalid book: year: Books from the future are not catalogued.$",
    )
    updated = await client.call_tool("update_volume", {"id": books[0].pk, "title": "Dune (1965)"})
    assert assert_tool_result(updated)["structuredContent"]["title"] == "Dune (1965)"
    assert (await Book.objects.aget(pk=books[0].pk)).summary == "edited by editor"  # context["request"].user


async def test_a_toolset_registered_statically_serves_its_tools_from_a_registry(books: list[Book], reader: Any) -> None:
    registry = Registry("toolsets-static")
    ReadOnlyBooks.register(registry)
    client = MCPTestClient(registry, user=reader)

    assert sorted(tool["name"] for tool in await client.list_tools()) == ["get_book", "list_books"]
    assert titles(await client.call_tool("list_books", {"limit": 1})) == ["Dune"]
    assert registry.tools["list_books"].scope is Scope.USER
    assert registry.tools["get_book"].timeout == 5
    del registry, client
    gc.collect()


async def test_a_permission_granted_or_revoked_counts_at_the_next_call_for_the_same_user_object(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], stranger: Any
) -> None:
    from django.contrib.auth.models import Permission

    client = mcp_client(ADAPTER, user=stranger)  # one user object for every call, as the credential cache keeps it
    view_book = await Permission.objects.aget(content_type__app_label="demo", codename="view_book")
    assert_tool_error(await client.call_tool("list_books"), "^Permission denied")

    await stranger.user_permissions.aadd(view_book)
    assert_tool_result(await client.call_tool("list_books"))
    await stranger.user_permissions.aremove(view_book)
    assert_tool_error(await client.call_tool("list_books"), "^Permission denied")


async def test_in_lookups_and_filters_across_a_to_many_relation(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, books: list[Book], reader: Any, editor: Any
) -> None:
    client = mcp_client(endpoint, user=reader)

    found = await client.call_tool("list_books", {"year__in": [1951, 1965, 2000], "limit": 3})
    assert titles(found) == ["Dune", "Foundation"]
    assert_tool_error(
        await client.call_tool("list_books", {"year__in": ["soon"]}),
        "^Invalid arguments for tool list_books: year__in.0: Input should be a valid integer",
    )
    await editor.groups.acreate(name="second-team")  # two of editor's groups match: still one row
    team = (await client.call_tool("list_users", {"groups__name__icontains": "team"}))["structuredContent"]
    assert (team["items"], team["count"]) == ([{"id": editor.pk, "username": "editor"}], 1)


async def test_T5_an_offset_past_what_databases_hold_is_refused_before_the_query(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    client = mcp_client(ADAPTER, user=reader)
    for offset in (2**31, 2**63, 10**30):
        text = assert_tool_error(await client.call_tool("list_books", {"offset": offset}))
        assert text.startswith("Invalid arguments for tool list_books: offset: Input should be less than or equal")
        assert "mismatch" not in text
        assert "SQLite" not in text
    page = assert_tool_result(await client.call_tool("list_books", {"offset": 2**31 - 1}))["structuredContent"]
    assert (page["items"], page["next_offset"]) == ([], None)


@pytest.mark.django_db
async def test_T5_a_database_error_in_a_tool_reaches_the_caller_without_its_text() -> None:
    from django.db import connection

    registry = Registry("t5")

    @registry.tool
    def broken_report() -> str:
        """Query a table that is not there."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT secret_column FROM secret_table_t5")
        return "unreachable"

    text = assert_tool_error(await MCPTestClient(registry).call_tool("broken_report"))
    assert text == "Error executing tool broken_report: the database could not run it"
