"""The admin lists MCP tasks and cancels the active ones it is asked to."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from mcp_django.tasks import store
from mcp_django.tasks.models import MCPTask

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/mcp_django_tasks/mcptask/"


def make_task(user: User | None, tool: str = "catalogue_report") -> MCPTask:
    return store.create(
        user_id=None if user is None else user.pk,
        endpoint="server",
        tool=tool,
        arguments={"seconds": 60},
        protocol_version="2026-07-28",
        client_capabilities={},
        client_info=None,
        answers={},
        ttl_ms=60_000,
        poll_interval_ms=500,
    )


def test_the_admin_lists_tasks_with_who_started_them(admin_client: Client) -> None:
    ada = User.objects.create(username="ada")
    task = make_task(ada)
    page = admin_client.get(CHANGELIST).content.decode()
    assert task.task_id in page
    assert "catalogue_report" in page
    assert "ada" in page
    assert admin_client.get(f"{CHANGELIST}add/").status_code == 403


def test_the_cancel_action_cancels_active_tasks_and_leaves_finished_ones(admin_client: Client) -> None:
    running = make_task(None)
    finished = make_task(None, tool="greet")
    store.finish(finished.task_id, result={"content": []})
    response = admin_client.post(
        CHANGELIST, {"action": "cancel_tasks", "_selected_action": [running.pk, finished.pk]}, follow=True
    )
    assert "Cancelled 1 task(s); finished ones were left as they were." in response.content.decode()
    running.refresh_from_db()
    finished.refresh_from_db()
    assert running.status == "cancelled"
    assert running.status_message == "Cancelled in the admin"
    assert finished.status == "completed"
