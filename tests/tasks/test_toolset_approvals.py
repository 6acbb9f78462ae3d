"""Approvals on toolsets and by annotation: a `ModelToolset`'s delete previews its cascade and runs once approved
(the worker finds a toolset's tool on the endpoint it was called on); `DESTRUCTIVE_TOOLS_APPROVAL` gates the tools
annotated `destructiveHint`; `cascade` counts what Django's `Collector` would delete."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group, Permission, User
from django.test import override_settings
from rest_framework.authtoken.models import Token

from example_project.demo.models import Book
from mcp_django.safety.approvals import cascade
from mcp_django.tasks.approvals import META, approve
from mcp_django.tasks.methods import EXTENSION
from mcp_django.tasks.models import MCPApproval
from mcp_django.tasks.worker import execute
from mcp_django.testing import MCPTestClient, result_text
from mcp_django.toolsets import ModelToolset
from mcp_django.urls import endpoint

pytestmark = pytest.mark.django_db(transaction=True)

TASKS: dict[str, Any] = {"extensions": {EXTENSION: {}}}


class GatedBooks(ModelToolset):
    id = "tests.tasks.gated_books"
    model = Book
    fields = ["id", "title", "author", "year"]
    actions = ["get", "update", "delete"]
    approval = {"delete_book": "demo.delete_book"}


urlpatterns = endpoint("gated-books/mcp", name="gated-books", mode="adapter", providers=[GatedBooks])
"""A URLconf (this module): the gated toolset, served as the endpoint's provider."""


@pytest.fixture(autouse=True)
def urls() -> Iterator[None]:
    with override_settings(ROOT_URLCONF="tests.tasks.test_toolset_approvals"):
        yield
    gc.collect()  # the toolsets built leave all_toolsets()


def requester() -> User:
    """A caller who may view, change and delete books: a delete still waits for an approval."""
    user = User.objects.create_user("requester")
    codenames = ["view_book", "change_book", "delete_book"]
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="demo", codename__in=codenames))
    return User.objects.get(pk=user.pk)


def librarian() -> User:
    user = User.objects.create_user("librarian")
    user.user_permissions.add(Permission.objects.get(codename="delete_book"))
    return User.objects.get(pk=user.pk)  # without the permission cache


async def test_a_toolsets_delete_waits_for_approval_showing_its_cascade_and_runs_once_approved() -> None:
    book = await Book.objects.acreate(title="Solaris", author="Stanisław Lem", year=1961)
    caller = await sync_to_async(requester)()
    mcp = MCPTestClient("gated-books", user=caller, era="stateless", capabilities=TASKS)

    created = await mcp.call_tool("delete_book", {"id": book.pk})
    assert created["resultType"] == "task", created
    assert created["_meta"][META]["preview"] == {
        "tool": "delete_book",
        "arguments": {"id": book.pk},
        "deletes": {"demo.Book": 1},
    }
    assert await Book.objects.filter(pk=book.pk).aexists()
    changed = await mcp.call_tool("update_book", {"id": book.pk, "year": 1962})
    assert changed["structuredContent"]["year"] == 1962  # the toolset gates its delete only

    approval = await MCPApproval.objects.aget(task_id_text=created["taskId"])
    await sync_to_async(approve)(approval.pk, await sync_to_async(librarian)(), approval.digest)
    await asyncio.wait_for(sync_to_async(execute, thread_sensitive=False)(created["taskId"]), 20)

    done = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert done["status"] == "completed", done
    assert done["result"]["structuredContent"] == {"deleted": True, "id": book.pk}
    assert not await Book.objects.filter(pk=book.pk).aexists()


async def test_the_setting_gates_every_tool_annotated_destructive() -> None:
    book = await Book.objects.acreate(title="Solaris", author="Stanisław Lem", year=1961)
    caller = await sync_to_async(requester)()
    with override_settings(MCP_DJANGO={"DESTRUCTIVE_TOOLS_APPROVAL": "demo.change_book"}):
        mcp = MCPTestClient("gated-books", user=caller, era="stateless", capabilities=TASKS)
        changed = await mcp.call_tool("update_book", {"id": book.pk, "year": 1962})
        fetched = await mcp.call_tool("get_book", {"id": book.pk})

    assert changed["resultType"] == "task"
    assert changed["_meta"][META]["permission"] == "demo.change_book"
    assert (await Book.objects.aget(pk=book.pk)).year == 1961
    assert "Solaris" in result_text(fetched)  # read-only: not gated


def test_cascade_counts_what_deleting_a_user_takes_with_it_and_deletes_nothing() -> None:
    user = User.objects.create_user("leaving")
    user.groups.add(Group.objects.create(name="readers"))
    Token.objects.create(user=user)

    assert cascade(user) == {"auth.User": 1, "auth.User_groups": 1, "authtoken.Token": 1}
    assert cascade(User.objects.filter(username="nobody")) == {}
    assert User.objects.filter(pk=user.pk).exists()
