"""The demo's toolsets on the adapter endpoint, with the permissions `seed_demo` grants."""

from __future__ import annotations

import io
from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.management import call_command

from mcp_django.testing import MCPTestClient, assert_tool_error, assert_tool_result


async def test_seed_demo_grants_each_demo_user_the_book_permissions_the_toolset_checks(
    mcp_client: Callable[..., MCPTestClient], transactional_db: None
) -> None:
    await sync_to_async(call_command)("seed_demo", stdout=io.StringIO())
    demo_users = get_user_model().objects.filter(username__in=["alice", "bob", "carol"])
    users = {user.username: user async for user in demo_users}

    alice = mcp_client("mcp/adapter", user=users["alice"])
    assert_tool_result(await alice.call_tool("list_books", {"title__icontains": "dune"}), text='"title":"Dune"')
    assert "create_book" not in {tool["name"] for tool in await alice.list_tools()}

    bob = mcp_client("mcp/adapter", user=users["bob"])
    created = await bob.call_tool("create_book", {"title": "Solaris", "author": "Stanisław Lem", "year": 1961})
    book_id = assert_tool_result(created)["structuredContent"]["id"]
    assert_tool_error(await bob.call_tool("delete_book", {"id": book_id}), "needs the demo.delete_book permission")

    carol = mcp_client("mcp/adapter", user=users["carol"])
    assert_tool_result(await carol.call_tool("delete_book", {"id": book_id}))


async def test_seed_demo_s_users_reach_the_ninja_api_and_its_superuser_the_admin_s_actions(
    mcp_client: Callable[..., MCPTestClient], transactional_db: None
) -> None:
    await sync_to_async(call_command)("seed_demo", stdout=io.StringIO())
    users = {user.username: user async for user in get_user_model().objects.filter(username__in=["alice", "admin"])}

    alice = mcp_client("mcp/adapter", user=users["alice"])
    assert_tool_result(await alice.call_tool("find_books", {"author": "herbert"}), text='"title": "Dune"')
    assert_tool_error(await alice.call_tool("book_changelist", {}), "the admin site lets in active staff users only")

    admin = mcp_client("mcp/adapter", user=users["admin"])
    listed = assert_tool_result(await admin.call_tool("book_changelist", {"search": "dune"}))
    assert [row["title"] for row in listed["structuredContent"]["rows"]] == ["Dune"]


async def test_the_demos_import_books_adds_all_or_none_without_atomic_requests(
    mcp_client: Callable[..., MCPTestClient], transactional_db: None
) -> None:
    from django.conf import settings

    from example_project.demo.models import Book

    await sync_to_async(call_command)("seed_demo", stdout=io.StringIO())
    bob = await get_user_model().objects.aget(username="bob")  # seed_demo grants him demo.add_book
    assert not any(database.get("ATOMIC_REQUESTS") for database in settings.DATABASES.values())
    books = [{"title": "A Book Not Yet There", "author": "Someone", "year": 2001}]
    books.append({"title": "Dune", "author": "Frank Herbert", "year": 1965})  # seeded: the call fails here

    failed = await mcp_client("mcp", user=bob).call_tool("import_books", {"books": books})

    assert_tool_error(failed, "'Dune', is already in the catalogue: nothing added.")
    assert not await Book.objects.filter(title="A Book Not Yet There").aexists()
