"""Emitters as declarations: the admin's actions (`emit_on_admin_action`, from the `LogEntry` the admin writes)
and finished tasks (`emit_on_task_finished`, from the tasks extension's `task_finished`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.db.models.signals import post_save
from django.test import Client
from typing_extensions import TypedDict

from mcp_django.events import emit_on_admin_action, emit_on_task_finished, event, event_types
from mcp_django.events.models import EventOccurrence
from mcp_django.tasks import store
from mcp_django.tasks.models import MCPTask
from mcp_django.tasks.signals import task_finished
from tests.events.support import add_book

pytestmark = pytest.mark.django_db(transaction=True)


class AdminAction(TypedDict):
    action: str
    model: str
    objectId: str
    objectRepr: str
    user: str
    message: str


class TaskEnded(TypedDict):
    taskId: str
    tool: str
    status: str
    endpoint: str


@pytest.fixture
def book_edited() -> Iterator[None]:
    @event("book.edited")
    def edited(change: AdminAction) -> bool:
        """A book was changed in the admin."""
        return True

    from example_project.demo.models import Book

    emit_on_admin_action("book.edited", model=Book, actions=("change", "deletion"))
    try:
        yield
    finally:
        post_save.disconnect(sender=LogEntry, dispatch_uid="mcp_django.events:book.edited:admin:demo.Book")
        event_types.remove("book.edited")


@pytest.fixture
def report_done() -> Iterator[None]:
    @event("report.done")
    def done(task: TaskEnded) -> bool:
        """A catalogue report task ended."""
        return True

    emit_on_task_finished("report.done", tools=["catalogue_report"])
    try:
        yield
    finally:
        task_finished.disconnect(dispatch_uid="mcp_django.events:report.done:tasks:('catalogue_report',)")
        event_types.remove("report.done")


def _occurrences(name: str) -> list[dict[str, Any]]:
    return list(EventOccurrence.objects.filter(name=name).order_by("id").values_list("data", flat=True))


def test_a_change_and_a_deletion_in_the_admin_emit_and_an_addition_does_not(
    admin_client: Client, book_edited: None
) -> None:
    book = add_book("Emma", "Jane Austen", 1815)
    changed = admin_client.post(
        f"/admin/demo/book/{book.pk}/change/",
        {"title": "Emma", "author": "Jane Austen", "year": 1816, "summary": "", "_save": "Save"},
    )
    deleted = admin_client.post(f"/admin/demo/book/{book.pk}/delete/", {"post": "yes"})
    added = admin_client.post(
        "/admin/demo/book/add/", {"title": "Persuasion", "author": "Jane Austen", "year": 1817, "summary": ""}
    )

    assert (changed.status_code, deleted.status_code, added.status_code) == (302, 302, 302)
    emitted = _occurrences("book.edited")
    assert [(each["action"], each["model"], each["objectId"], each["user"]) for each in emitted] == [
        ("change", "demo.book", str(book.pk), "admin"),
        ("deletion", "demo.book", str(book.pk), "admin"),
    ]
    assert emitted[0]["objectRepr"] == "Emma (Jane Austen, 1816)"
    assert "Year" in emitted[0]["message"]


def _task(task_id: str, tool: str) -> MCPTask:
    return MCPTask.objects.create(task_id=task_id, endpoint="server", tool=tool, protocol_version="2026-07-28")


def test_a_task_of_the_named_tool_that_completes_or_fails_emits_and_others_do_not(report_done: None) -> None:
    for task_id, tool in (
        ("t1", "catalogue_report"),
        ("t2", "catalogue_report"),
        ("t3", "other"),
        ("t4", "catalogue_report"),
    ):
        _task(task_id, tool)
    store.finish("t1", result={"content": []})
    store.finish("t2", error={"code": -32603, "message": "boom"})
    store.finish("t3", result={"content": []})
    store.cancel(MCPTask.objects.get(pk="t4"))
    store.finish("t4", result={"content": []})  # already cancelled: not settled, nothing emitted

    assert _occurrences("report.done") == [
        {"taskId": "t1", "tool": "catalogue_report", "status": "completed", "endpoint": "server"},
        {"taskId": "t2", "tool": "catalogue_report", "status": "failed", "endpoint": "server"},
    ]
