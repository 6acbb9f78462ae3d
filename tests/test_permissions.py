"""`permissions=`: Django permissions on tools, resources, prompts, providers and toolsets, with real users and rows.

A caller without a required permission sees nothing of what requires it, and what it cannot see answers
exactly as an unknown name; a permission granted or revoked (in the admin too) counts at the next call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import Client
from mcp_types.jsonrpc import INVALID_PARAMS

from example_project.demo.models import Book
from mcp_django import Registry
from mcp_django.declarations import DeclarationError
from mcp_django.endpoints import Endpoint
from mcp_django.providers import ToolProvider
from mcp_django.scopes import Scope
from mcp_django.testing import MCPTestClient, assert_mcp_error, assert_tool_result
from mcp_django.toolsets import ModelToolset

pytestmark = pytest.mark.django_db(transaction=True)

registry = Registry("permissions")


@registry.tool(permissions="demo.change_book")
def retitle(book_id: int, title: str) -> str:
    """Give a book another title."""
    Book.objects.filter(pk=book_id).update(title=title)
    return f"retitled {book_id}"


@registry.tool(permissions=["demo.change_book", "demo.delete_book"])
def withdraw(book_id: int) -> str:
    """Withdraw a book (needs both permissions)."""
    return f"withdrew {book_id}"


@registry.tool
def open_tool() -> str:
    """A tool anyone reaching the registry may call."""
    return "open"


@registry.resource("perm://ledger", permissions="demo.change_book")
def ledger() -> str:
    """The ledger."""
    return "ledger"


@registry.resource("perm://ledger/{year}", permissions="demo.change_book")
def ledger_year(year: int) -> str:
    """One year of the ledger."""
    return f"ledger {year}"


@registry.prompt(permissions="demo.change_book")
def edit_advice(title: str) -> str:
    """Advice on editing a book."""
    return f"Edit {title} carefully."


registry.freeze()
ENDPOINT = Endpoint("perm/mcp", name="permissions", registry=registry)


def user(username: str, *codenames: str, **extra: Any) -> Any:
    made = get_user_model().objects.create_user(username, password=username, **extra)
    made.user_permissions.add(*Permission.objects.filter(content_type__app_label="demo", codename__in=codenames))
    return get_user_model().objects.get(pk=made.pk)


async def names(client: MCPTestClient) -> list[str]:
    return [tool["name"] for tool in await client.list_tools()]


async def test_a_caller_without_the_permission_sees_none_of_it_and_each_answers_as_unknown(
    mcp_client: Callable[..., MCPTestClient], mcp_era: str
) -> None:
    stranger = await sync_to_async(user)("stranger")
    client = mcp_client(ENDPOINT, user=stranger, era=mcp_era)

    assert await names(client) == ["open_tool"]
    assert await client.list_resources() == []
    assert await client.list_prompts() == []
    with assert_mcp_error(INVALID_PARAMS, match="^Unknown tool: retitle$"):
        await client.call_tool("retitle", {"book_id": 1, "title": "x"})
    with assert_mcp_error(match="not found"):
        await client.read_resource("perm://ledger")
    with assert_mcp_error(match="not found"):
        await client.read_resource("perm://ledger/1999")
    with assert_mcp_error(INVALID_PARAMS, match="^Unknown prompt: edit_advice$"):
        await client.get_prompt("edit_advice", {"title": "Dune"})


async def test_a_caller_with_the_permission_lists_calls_reads_and_gets(
    mcp_client: Callable[..., MCPTestClient], mcp_era: str
) -> None:
    editor = await sync_to_async(user)("editor", "change_book")
    client = mcp_client(ENDPOINT, user=editor, era=mcp_era)

    assert await names(client) == ["open_tool", "retitle"]  # withdraw needs delete_book too
    assert_tool_result(await client.call_tool("retitle", {"book_id": 1, "title": "x"}), text="^retitled 1$")
    with assert_mcp_error(INVALID_PARAMS, match="^Unknown tool: withdraw$"):
        await client.call_tool("withdraw", {"book_id": 1})
    assert [item["uri"] for item in await client.list_resources()] == ["perm://ledger"]
    assert (await client.read_resource("perm://ledger/1999"))["contents"][0]["text"] == "ledger 1999"
    assert (await client.get_prompt("edit_advice", {"title": "Dune"}))["messages"][0]["content"]["text"] == (
        "Edit Dune carefully."
    )


async def test_every_permission_of_a_list_is_required_and_a_superuser_holds_them_all(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    both = await sync_to_async(user)("both", "change_book", "delete_book")
    root = await sync_to_async(get_user_model().objects.create_superuser)("root", "root@example.com", "root")

    assert await names(mcp_client(ENDPOINT, user=both)) == ["open_tool", "retitle", "withdraw"]
    assert await names(mcp_client(ENDPOINT, user=root)) == ["open_tool", "retitle", "withdraw"]


async def test_an_inactive_user_and_an_anonymous_caller_hold_no_permission(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    gone = await sync_to_async(user)("gone", "change_book", is_active=False)
    anonymous = mcp_client(ENDPOINT, scope=Scope.SYSTEM)

    assert await names(mcp_client(ENDPOINT, user=gone, scope=Scope.USER)) == ["open_tool"]
    assert await names(anonymous) == ["open_tool"]


async def test_a_permission_granted_or_revoked_counts_at_the_next_call_for_the_same_user_object(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    stranger = await sync_to_async(user)("stranger")
    client = mcp_client(ENDPOINT, user=stranger)  # one user object for every request, as the credential cache keeps it
    change_book = await Permission.objects.aget(content_type__app_label="demo", codename="change_book")
    assert not await sync_to_async(stranger.has_perm)("demo.change_book")  # Django caches the answer on the object

    await stranger.user_permissions.aadd(change_book)
    assert await names(client) == ["open_tool", "retitle"]
    assert_tool_result(await client.call_tool("retitle", {"book_id": 1, "title": "x"}))
    await stranger.user_permissions.aremove(change_book)
    assert await names(client) == ["open_tool"]
    with assert_mcp_error(INVALID_PARAMS, match="^Unknown tool: retitle$"):
        await client.call_tool("retitle", {"book_id": 1, "title": "x"})


def test_a_permission_taken_from_a_group_in_the_admin_counts_at_the_next_call() -> None:
    librarians = Group.objects.create(name="librarians")
    change_book = Permission.objects.get(content_type__app_label="demo", codename="change_book")
    librarians.permissions.add(change_book)
    member = user("member")
    member.groups.add(librarians)
    client = MCPTestClient(ENDPOINT, user=member)
    assert_tool_result(_sync(client.call_tool)("retitle", {"book_id": 1, "title": "x"}))

    get_user_model().objects.create_superuser("admin", "admin@example.com", "admin")
    admin = Client()
    admin.login(username="admin", password="admin")
    changed = admin.post(f"/admin/auth/group/{librarians.pk}/change/", {"name": "librarians", "permissions": []})

    assert changed.status_code == 302, changed.content[:500]
    assert not librarians.permissions.exists()
    with assert_mcp_error(INVALID_PARAMS, match="^Unknown tool: retitle$"):
        _sync(client.call_tool)("retitle", {"book_id": 1, "title": "x"})


def _sync(method: Callable[..., Any]) -> Callable[..., Any]:
    from asgiref.sync import async_to_sync

    return async_to_sync(method)


class Guarded(ToolProvider):
    """Requires demo.view_book for anything, and demo.delete_book for its tool `purge`."""

    id = "tests.permissions.guarded"
    permissions = "demo.view_book"
    tools = ({"name": "peek", "inputSchema": {"type": "object"}}, {"name": "purge", "inputSchema": {"type": "object"}})

    def list_tools(self, ctx: Any) -> Any:
        return self.tools

    def permissions_of(self, item: Any) -> list[str]:
        return ["demo.delete_book"] if item["name"] == "purge" else []

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Any) -> str:
        return f"{name} done"


class GuardedBooks(ModelToolset):
    id = "tests.permissions.books"
    model = Book
    fields = ["id", "title"]
    actions = ["list"]
    permissions = "demo.change_book"


PROVIDED = Endpoint("perm/adapter", name="permissions-adapter", mode="adapter", providers=[Guarded, GuardedBooks])


async def test_a_provider_requires_its_permissions_for_everything_and_per_item_for_some(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    stranger, viewer, purger = [
        await sync_to_async(user)(name, *codenames)
        for name, codenames in (("stranger", ()), ("viewer", ("view_book",)), ("purger", ("view_book", "delete_book")))
    ]

    assert await names(mcp_client(PROVIDED, user=stranger)) == []
    assert await names(mcp_client(PROVIDED, user=viewer)) == ["peek"]
    assert await names(mcp_client(PROVIDED, user=purger)) == ["peek", "purge"]
    with assert_mcp_error(INVALID_PARAMS, match="^Unknown tool: purge$"):
        await mcp_client(PROVIDED, user=viewer).call_tool("purge")
    with assert_mcp_error(INVALID_PARAMS, match="^Unknown tool: peek$"):
        await mcp_client(PROVIDED, user=stranger).call_tool("peek")
    assert_tool_result(await mcp_client(PROVIDED, user=purger).call_tool("purge"), text="^purge done$")


async def test_a_toolsets_permissions_guard_each_of_its_tools_beside_the_model_permissions(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    viewer = await sync_to_async(user)("viewer", "view_book")
    changer = await sync_to_async(user)("changer", "view_book", "change_book")

    assert "list_books" not in await names(mcp_client(PROVIDED, user=viewer))
    assert "list_books" in await names(mcp_client(PROVIDED, user=changer))
    assert GuardedBooks().tools["list_books"].permissions == ("demo.change_book",)


def test_permissions_are_a_name_or_a_list_of_names() -> None:
    with pytest.raises(DeclarationError, match=r"^tool 'bad': permissions must be a permission name or a list"):
        Registry("bad").tool(permissions=[3], name="bad")(open_tool)  # type: ignore[list-item]  # the mistake
