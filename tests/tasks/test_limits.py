"""What one caller can make the task workers hold is bounded (issue 25: K-5, K-6, K-7, K-8).

Each test performs the probe's attack on the conformance endpoint's task tools, with the limit
lowered so the attack is small, and fails without the bound.
"""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from mcp_django.tasks.models import MCPTask
from mcp_django.testing import MCPTestClient, assert_mcp_error
from tests.tasks.test_tasks import TASKS, client, run_worker

pytestmark = pytest.mark.django_db(transaction=True)


def limits(**overrides: Any) -> Any:
    return override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **overrides})


async def test_K5_a_caller_cannot_queue_more_active_tasks_than_its_quota() -> None:
    anonymous = client()
    user = await sync_to_async(User.objects.create_user)("k5")
    with limits(TASK_MAX_ACTIVE_ANONYMOUS=2, TASK_MAX_ACTIVE_PER_USER=1):
        first = await anonymous.call_tool("slow_compute", {"seconds": 600})
        await anonymous.call_tool("slow_compute", {"seconds": 600})
        with assert_mcp_error(-32600, match="Too Many Tasks: at most 2 active tasks for anonymous callers"):
            await anonymous.call_tool("slow_compute", {"seconds": 600})
        # another caller's quota is its own, and a finished task frees its place
        signed_in = MCPTestClient("conformance", user=user, era="stateless", capabilities=TASKS)
        assert (await signed_in.call_tool("slow_compute", {"seconds": 0}))["resultType"] == "task"
        with assert_mcp_error(-32600, match="at most 1 active tasks for one user"):
            await signed_in.call_tool("slow_compute", {"seconds": 0})
        await anonymous.request("tasks/cancel", {"taskId": first["taskId"]})
        assert (await anonymous.call_tool("slow_compute", {"seconds": 600}))["resultType"] == "task"
    assert await sync_to_async(MCPTask.objects.count)() == 4


async def test_K6_a_task_that_runs_past_task_timeout_is_stopped_and_fails_with_a_timeout() -> None:
    mcp = client()
    created = await mcp.call_tool("slow_compute", {"seconds": 1e9})
    with limits(TASK_TIMEOUT=0.5):
        await run_worker(created["taskId"])  # returns: the worker is free again
    failed = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == -32603
    assert failed["error"]["data"] == {"reason": "timeout", "timeoutSeconds": 0.5}


async def test_K7_a_task_whose_ttl_passes_while_it_runs_is_stopped() -> None:
    mcp = client()
    with limits(TASK_TTL=0.4):
        created = await mcp.call_tool("slow_compute", {"seconds": 600})
        await run_worker(created["taskId"])  # the worker stops it once the ttl has passed
        with assert_mcp_error(-32602, match="Unknown task"):  # no longer reachable over MCP
            await mcp.request("tasks/cancel", {"taskId": created["taskId"]})
    row = await sync_to_async(MCPTask.objects.get)(pk=created["taskId"])
    assert row.status == MCPTask.Status.CANCELLED
    assert row.status_message == "Expired: its ttlMs passed before it finished"


async def test_K8_task_arguments_over_task_max_bytes_are_refused_and_store_nothing() -> None:
    mcp = client()
    with limits(TASK_MAX_BYTES=10_000), assert_mcp_error(-32602, match="a task stores at most 10000 bytes"):
        await mcp.call_tool("slow_compute", {"seconds": 0, "label": "x" * 20_000})
    assert await sync_to_async(MCPTask.objects.count)() == 0


async def test_K8_a_task_result_over_task_max_bytes_is_not_stored() -> None:
    mcp = client()
    with limits(TASK_MAX_BYTES=3_000):
        created = await mcp.call_tool("slow_compute", {"seconds": 0, "label": "x" * 2_000})
        await run_worker(created["taskId"])
    failed = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert failed["status"] == "failed"
    assert failed["error"]["message"] == "The result of slow_compute is over the 3000 bytes a task stores"
    row = await sync_to_async(MCPTask.objects.get)(pk=created["taskId"])
    assert row.result is None


def _age(task_id: str, hours: int) -> None:
    MCPTask.objects.filter(pk=task_id).update(created_at=timezone.now() - timedelta(hours=hours))


async def test_K8_expired_tasks_are_purged_by_the_command_and_when_a_task_starts() -> None:
    mcp = client()
    old = await mcp.call_tool("slow_compute", {"seconds": 0})
    await run_worker(old["taskId"])
    fresh = await mcp.call_tool("slow_compute", {"seconds": 0})
    await sync_to_async(_age)(old["taskId"], 2)  # TASK_TTL is an hour

    output = io.StringIO()
    await sync_to_async(call_command)("mcp_cleartasks", stdout=output)
    assert output.getvalue() == "1 expired MCP task(s) deleted.\n"
    assert await sync_to_async(lambda: list(MCPTask.objects.values_list("pk", flat=True)))() == [fresh["taskId"]]

    await sync_to_async(_age)(fresh["taskId"], 2)
    with limits(TASK_PURGE_INTERVAL=0):
        started = await mcp.call_tool("slow_compute", {"seconds": 0})
    assert await sync_to_async(lambda: list(MCPTask.objects.values_list("pk", flat=True)))() == [started["taskId"]]


def _handed(task_id: str) -> bool:
    return MCPTask.objects.filter(pk=task_id).exclude(backend_task_id="").exists()


async def test_K5_a_callers_backlog_waits_its_turn_and_never_in_front_of_another_caller() -> None:
    anonymous = client()
    user = await sync_to_async(User.objects.create_user)("k5-fair")
    signed_in = MCPTestClient("conformance", user=user, era="stateless", capabilities=TASKS)
    with limits(TASK_MAX_RUNNING_ANONYMOUS=1):
        backlog = [(await anonymous.call_tool("slow_compute", {"seconds": 0}))["taskId"] for _ in range(3)]
        other = (await signed_in.call_tool("slow_compute", {"seconds": 0}))["taskId"]

        handed = [await sync_to_async(_handed)(task_id) for task_id in backlog]
        assert handed == [True, False, False]  # the workers' queue holds one of the backlog
        assert await sync_to_async(_handed)(other)  # and the other caller's task beside it, not behind it

        await run_worker(backlog[0])  # when it ends, the next of its caller's tasks takes its place
        assert [await sync_to_async(_handed)(task_id) for task_id in backlog[1:]] == [True, False]


async def test_K8_finished_tasks_count_against_their_callers_stored_bytes_until_they_expire() -> None:
    mcp = client()
    user = await sync_to_async(User.objects.create_user)("k8-stored")
    signed_in = MCPTestClient("conformance", user=user, era="stateless", capabilities=TASKS)
    with limits(TASK_MAX_STORED_BYTES_ANONYMOUS=30_000, TASK_MAX_STORED_BYTES_PER_USER=30_000):
        first = await mcp.call_tool("slow_compute", {"seconds": 0, "label": "x" * 9_000})
        await run_worker(first["taskId"])  # its arguments and its result: about 18 KB, kept once finished
        with assert_mcp_error(
            -32600,
            match="Too Much Stored: the tasks of one anonymous client address keep at most 30000 bytes",
        ):
            await mcp.call_tool("slow_compute", {"seconds": 0, "label": "x" * 9_000})
        assert (await signed_in.call_tool("slow_compute", {"seconds": 0, "label": "x" * 9_000}))["resultType"] == "task"

        await sync_to_async(_age)(first["taskId"], 2)  # expired (TASK_TTL is an hour): purged, no longer counted
        assert (await mcp.call_tool("slow_compute", {"seconds": 0, "label": "x" * 9_000}))["resultType"] == "task"
    row = await sync_to_async(MCPTask.objects.filter(user=None).get)()
    assert row.stored_bytes > 9_000


async def test_a_deactivated_users_queued_task_does_not_run() -> None:
    user = await sync_to_async(User.objects.create_user)("leaver")
    signed_in = MCPTestClient("conformance", user=user, era="stateless", capabilities=TASKS)
    created = await signed_in.call_tool("slow_compute", {"seconds": 0, "label": "never"})
    user.is_active = False
    await sync_to_async(user.save)()

    await run_worker(created["taskId"])

    row = await sync_to_async(MCPTask.objects.get)(pk=created["taskId"])
    assert row.status == MCPTask.Status.FAILED
    assert row.error == {"code": -32600, "message": "The user who started this task is no longer active"}
    assert row.result is None
