"""Approvals in process: the demo's `retire_author` (approval by a holder of demo.delete_book) on `/mcp`.

The worker's run is `mcp_django.tasks.worker.execute`, called in a thread as `manage.py db_worker` calls it;
the admin's decide view is driven with Django's test client (tests/live/test_approvals_live.py drives it from a
real browser, over a real socket, with real workers).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from importlib import import_module
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Permission, User
from django.test import Client, override_settings
from django.utils import timezone

from example_project.demo.models import Book
from mcp_django.protocol.jsonrpc import INVALID_REQUEST, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_django.tasks import store
from mcp_django.tasks.approvals import META, ApprovalClosed, approve
from mcp_django.tasks.methods import EXTENSION
from mcp_django.tasks.models import MCPApproval, MCPTask
from mcp_django.tasks.worker import execute
from mcp_django.testing import MCPTestClient, assert_mcp_error, assert_tool_error, result_text
from mcp_django.urls import endpoint as mcp_endpoint

pytestmark = pytest.mark.django_db(transaction=True)

urlpatterns = [
    *mcp_endpoint("approvals/mcp", name="approvals", registry="mcp_django.tasks.approval_tools.registry"),
    *import_module("example_project.urls").urlpatterns,
]
"""A URLconf (this module): the example project's, and the approvers' tools on an endpoint of their own."""

WAIT_S = 20.0
TASKS: dict[str, Any] = {"extensions": {EXTENSION: {}}}
AUTHOR = "Ursula K. Le Guin"


def books_by(author: str = AUTHOR) -> int:
    return Book.objects.filter(author=author).count()


def staff(name: str, *permissions: str) -> User:
    user = User.objects.create_user(name, password="pw", is_staff=True)
    for permission in ("mcp_django_tasks.view_mcpapproval", *permissions):
        app_label, codename = permission.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return user


@pytest.fixture
def caller() -> User:
    Book.objects.create(title="The Dispossessed", author=AUTHOR, year=1974)
    Book.objects.create(title="The Lathe of Heaven", author=AUTHOR, year=1971)
    return User.objects.create_user("requester")


async def requested(caller: User) -> dict[str, Any]:
    mcp = MCPTestClient("server", user=caller, era="stateless", capabilities=TASKS)
    return await mcp.call_tool("retire_author", {"author": AUTHOR})


async def run_worker(task_id: str) -> None:
    await asyncio.wait_for(sync_to_async(execute, thread_sensitive=False)(task_id), WAIT_S)


def decide(user: User, approval: MCPApproval, **fields: str) -> Any:
    browser = Client()
    browser.force_login(user)
    return browser.post(f"/admin/mcp_django_tasks/mcpapproval/{approval.pk}/decide/", fields)


async def test_a_gated_call_answers_a_working_task_awaiting_approval_with_its_cascade_and_runs_nothing(
    caller: User,
) -> None:
    created = await requested(caller)

    assert created["resultType"] == "task"
    assert created["status"] == "working"
    assert created["statusMessage"].startswith("Awaiting approval by a holder of demo.delete_book: ")
    approval = created["_meta"][META]
    assert approval["state"] == "pending"
    assert approval["approvalUrl"] == "/admin/mcp_django_tasks/mcpapproval/?state__exact=pending"
    assert approval["preview"] == {
        "tool": "retire_author",
        "arguments": {"author": AUTHOR},
        "deletes": {"demo.Book": 2},
    }
    task = await MCPTask.objects.aget(pk=created["taskId"])
    assert task.backend_task_id == store.AWAITING
    assert await sync_to_async(store.next_waiting)(caller.pk, None) is None  # no turn: the workers never see it
    assert await sync_to_async(books_by)() == 2


async def test_an_approved_call_runs_once_for_the_arguments_approved(caller: User) -> None:
    created = await requested(caller)
    approval = await MCPApproval.objects.aget(task_id_text=created["taskId"])
    librarian = await sync_to_async(staff)("librarian", "demo.delete_book")

    answer = await sync_to_async(decide)(librarian, approval, decision="approve", digest=approval.digest)
    assert answer.status_code == 302
    await run_worker(created["taskId"])
    await sync_to_async(Book.objects.create)(title="The Word for World Is Forest", author=AUTHOR, year=1972)
    await run_worker(created["taskId"])  # a second delivery of the job: the approval ran already

    mcp = MCPTestClient("server", user=caller, era="stateless", capabilities=TASKS)
    done = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert done["status"] == "completed"
    assert result_text(done["result"]) == f"Removed 2 book(s) by {AUTHOR}."
    assert await sync_to_async(books_by)() == 1  # the book added after the run is still there: it ran once
    await approval.arefresh_from_db()
    assert approval.state == MCPApproval.State.RAN
    assert [step["step"] for step in approval.history] == ["requested", "approved", "ran", "finished"]
    assert approval.history[0]["by"] == "requester"
    assert approval.history[1]["by"] == "librarian"


async def test_a_user_without_the_permission_is_refused_by_the_server_and_nothing_runs(caller: User) -> None:
    created = await requested(caller)
    approval = await MCPApproval.objects.aget(task_id_text=created["taskId"])
    clerk = await sync_to_async(staff)("clerk")  # sees the approvals, may not decide them

    answer = await sync_to_async(decide)(clerk, approval, decision="approve", digest=approval.digest)

    assert answer.status_code == 403
    await approval.arefresh_from_db()
    assert approval.state == MCPApproval.State.PENDING
    task = await MCPTask.objects.aget(pk=created["taskId"])
    assert task.backend_task_id == store.AWAITING


async def test_a_denied_call_fails_its_task_with_a_structured_denial(caller: User) -> None:
    created = await requested(caller)
    approval = await MCPApproval.objects.aget(task_id_text=created["taskId"])
    librarian = await sync_to_async(staff)("librarian", "demo.delete_book")

    await sync_to_async(decide)(librarian, approval, decision="deny", reason="Not this one")

    mcp = MCPTestClient("server", user=caller, era="stateless", capabilities=TASKS)
    failed = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert failed["status"] == "failed"
    assert failed["error"] == {
        "code": INVALID_REQUEST,
        "message": "The call of retire_author was denied by librarian: Not this one",
        "data": {
            "reason": "approval_denied",
            "tool": "retire_author",
            "authorization": {
                "reason": "insufficient_authorization",
                "authorizationContextId": f"approval_{approval.pk}",
                "remediationHints": [],
            },
        },
    }
    assert await sync_to_async(books_by)() == 2


async def test_an_approval_past_its_ttl_expires_and_can_no_longer_be_approved(caller: User) -> None:
    created = await requested(caller)
    approval = await MCPApproval.objects.aget(task_id_text=created["taskId"])
    await MCPApproval.objects.filter(pk=approval.pk).aupdate(expires_at=timezone.now() - timedelta(seconds=1))

    mcp = MCPTestClient("server", user=caller, era="stateless", capabilities=TASKS)
    failed = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert failed["status"] == "failed"
    assert failed["error"]["data"]["reason"] == "approval_expired"
    librarian = await sync_to_async(staff)("librarian", "demo.delete_book")
    with pytest.raises(ApprovalClosed, match="is expired already"):
        await sync_to_async(approve)(approval.pk, librarian, approval.digest)
    await approval.arefresh_from_db()
    assert [step["step"] for step in approval.history] == ["requested", "expired"]


async def test_an_approval_is_bound_to_the_hash_of_the_arguments_it_was_shown_with(caller: User) -> None:
    created = await requested(caller)
    approval = await MCPApproval.objects.aget(task_id_text=created["taskId"])
    librarian = await sync_to_async(staff)("librarian", "demo.delete_book")
    with pytest.raises(ApprovalClosed, match="not the ones this approval was shown with"):
        await sync_to_async(approve)(approval.pk, librarian, "0" * 64)

    await sync_to_async(approve)(approval.pk, librarian, approval.digest)
    tampered = {"author": "Octavia E. Butler"}  # someone rewrites the stored call after the approval
    await MCPTask.objects.filter(pk=created["taskId"]).aupdate(arguments=tampered)
    await sync_to_async(Book.objects.create)(title="Kindred", author="Octavia E. Butler", year=1979)
    await run_worker(created["taskId"])

    mcp = MCPTestClient("server", user=caller, era="stateless", capabilities=TASKS)
    failed = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert failed["status"] == "failed"
    assert failed["error"]["data"]["reason"] == "approval_arguments_changed"
    assert await sync_to_async(books_by)("Octavia E. Butler") == 1
    await approval.arefresh_from_db()
    assert approval.state == MCPApproval.State.REFUSED


async def test_a_handshake_era_client_is_refused_with_the_approval_link(caller: User) -> None:
    mcp = MCPTestClient("server", user=caller)
    with assert_mcp_error(INVALID_REQUEST, match="runs only once a holder of demo.delete_book approves") as raised:
        await mcp.call_tool("retire_author", {"author": AUTHOR})
    assert raised.value.data["approvalUrl"] == "/admin/mcp_django_tasks/mcpapproval/?state__exact=pending"
    assert raised.value.data["authorization"]["remediationHints"] == [{"type": "url"}]
    assert await MCPApproval.objects.acount() == 0
    assert await sync_to_async(books_by)() == 2


async def test_a_2026_client_without_the_tasks_extension_is_told_to_declare_it(caller: User) -> None:
    mcp = MCPTestClient("server", user=caller, era="stateless", capabilities={})
    with assert_mcp_error(MISSING_REQUIRED_CLIENT_CAPABILITY, match="needs the client capability") as raised:
        await mcp.call_tool("retire_author", {"author": AUTHOR})
    assert raised.value.data["requiredCapabilities"] == {"extensions": {EXTENSION: {}}}
    assert await sync_to_async(books_by)() == 2


async def test_an_approver_decides_through_the_approval_tools_and_whoever_lacks_the_permission_cannot(
    caller: User,
) -> None:
    created = await requested(caller)
    librarian = await sync_to_async(staff)("librarian", "demo.delete_book")
    clerk = await sync_to_async(staff)("clerk")
    with override_settings(ROOT_URLCONF="tests.tasks.test_approvals"):
        as_clerk = MCPTestClient("approvals", user=clerk, era="stateless")
        as_librarian = MCPTestClient("approvals", user=librarian, era="stateless")
        hidden = (await as_clerk.call_tool("list_approvals"))["structuredContent"]["result"]
        (shown,) = (await as_librarian.call_tool("list_approvals"))["structuredContent"]["result"]
        decision = {"approval": shown["approval"], "decision": "approve", "digest": shown["digest"]}
        assert_tool_error(
            await as_clerk.call_tool("decide_approval", decision), "needs the permission demo.delete_book"
        )
        approved = await as_librarian.call_tool("decide_approval", decision)

    assert hidden == []
    assert shown["preview"]["deletes"] == {"demo.Book": 2}
    assert result_text(approved) == "Approved: retire_author runs once a worker is free."
    await run_worker(created["taskId"])
    assert await sync_to_async(books_by)() == 0
