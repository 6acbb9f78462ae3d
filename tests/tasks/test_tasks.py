"""The tasks extension in process: the conformance fixture's task tools, the task methods, the worker's run.

The worker's run is `mcp_django.tasks.worker.execute`, called here in a thread as `manage.py db_worker`
calls it (tests/tasks/test_worker_process.py runs the real worker processes).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User

from mcp_django.tasks.methods import EXTENSION
from mcp_django.tasks.models import MCPTask
from mcp_django.tasks.worker import execute
from mcp_django.testing import MCPTestClient, assert_mcp_error, result_text

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 20.0
TASKS: dict[str, Any] = {"extensions": {EXTENSION: {}}, "elicitation": {}}


def client(user: User | None = None, *, capabilities: dict[str, Any] | None = None, **options: Any) -> MCPTestClient:
    return MCPTestClient(
        "conformance",
        user=user,
        era="stateless",
        capabilities=TASKS if capabilities is None else capabilities,
        **options,
    )


async def run_worker(task_id: str) -> None:
    """What a task worker does with the job: run the task to its end (in a thread of its own, as a worker)."""
    await asyncio.wait_for(sync_to_async(execute, thread_sensitive=False)(task_id), WAIT_S)


async def status_becomes(mcp: MCPTestClient, task_id: str, status: str) -> dict[str, Any]:
    async with asyncio.timeout(WAIT_S):
        while True:
            task = await mcp.request("tasks/get", {"taskId": task_id})
            if task["status"] == status:
                return task
            await asyncio.sleep(0.05)


async def test_a_task_tool_answers_a_create_task_result_and_the_worker_completes_it() -> None:
    mcp = client()
    created = await mcp.call_tool("slow_compute", {"seconds": 0, "label": "quick"})
    assert created["resultType"] == "task"
    assert created["status"] == "working"
    assert set(created) >= {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
    assert "result" not in created
    assert "requestState" not in created
    working = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert working["status"] == "working"
    assert "result" not in working

    await run_worker(created["taskId"])

    done = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert done["status"] == "completed"
    assert done["resultType"] == "complete"
    assert result_text(done["result"]) == "Computed quick in 0 s"


async def test_a_tool_error_completes_the_task_with_an_is_error_result() -> None:
    mcp = client()
    created = await mcp.call_tool("failing_job")
    await run_worker(created["taskId"])
    done = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert done["status"] == "completed"
    assert done["result"]["isError"] is True


async def test_a_protocol_error_fails_the_task_with_its_json_rpc_error_and_no_result() -> None:
    mcp = client()
    created = await mcp.call_tool("protocol_error_job")
    await run_worker(created["taskId"])
    failed = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert failed["status"] == "failed"
    assert failed["error"] == {"code": -32603, "message": "protocol_error_job broke, as it always does"}
    assert "result" not in failed


async def test_cancelling_a_running_task_stops_the_tool_and_the_task_stays_cancelled() -> None:
    mcp = client()
    created = await mcp.call_tool("slow_compute", {"seconds": 600})
    worker = asyncio.ensure_future(run_worker(created["taskId"]))
    ack = await mcp.request("tasks/cancel", {"taskId": created["taskId"]})
    assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
    await worker  # the worker notices within its poll interval: far sooner than the tool's 600 s
    cancelled = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert cancelled["status"] == "cancelled"
    assert "result" not in cancelled
    again = await mcp.request("tasks/cancel", {"taskId": created["taskId"]})
    assert again["resultType"] == "complete"


async def test_a_task_asking_for_input_waits_in_input_required_until_tasks_update_answers() -> None:
    mcp = client()
    created = await mcp.call_tool("multi_input")
    worker = asyncio.ensure_future(run_worker(created["taskId"]))
    waiting = await status_becomes(mcp, created["taskId"], "input_required")
    assert set(waiting["inputRequests"]) == {"name", "confirm"}
    assert waiting["inputRequests"]["name"]["method"] == "elicitation/create"

    name_answer = {"action": "accept", "content": {"name": "Ada"}}
    await mcp.request("tasks/update", {"taskId": created["taskId"], "inputResponses": {"name": name_answer}})
    partly = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert partly["status"] == "input_required"
    assert set(partly["inputRequests"]) == {"confirm"}

    confirm = {"action": "accept", "content": {"confirm": True}}
    await mcp.request("tasks/update", {"taskId": created["taskId"], "inputResponses": {"confirm": confirm}})
    await worker
    done = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert done["status"] == "completed"
    assert result_text(done["result"]) == "Got 2 answers"


async def test_task_inputs_are_asked_in_the_request_before_the_task_starts() -> None:
    asked: list[str] = []

    def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": "Grace"}}

    mcp = client(on_input=answer)
    created = await mcp.call_tool("test_tool_with_task")
    assert asked == ["What is your name?"]
    assert created["resultType"] == "task"
    assert "requestState" not in created
    assert "inputRequests" not in created
    await run_worker(created["taskId"])
    done = await mcp.request("tasks/get", {"taskId": created["taskId"]})
    assert result_text(done["result"]) == "Hello from the task, Grace!"


async def test_another_users_task_is_answered_as_an_unknown_task() -> None:
    ada = await User.objects.acreate(username="ada")
    bob = await User.objects.acreate(username="bob")
    created = await client(ada).call_tool("slow_compute", {"seconds": 0})
    task_id = created["taskId"]
    for stranger in (client(bob), client(None)):
        for method, params in (
            ("tasks/get", {"taskId": task_id}),
            ("tasks/cancel", {"taskId": task_id}),
            ("tasks/update", {"taskId": task_id, "inputResponses": {}}),
        ):
            with assert_mcp_error(-32602, match=f"Unknown task: {task_id}"):
                await stranger.request(method, params)
    assert (await client(ada).request("tasks/get", {"taskId": task_id}))["status"] == "working"
    assert await MCPTask.objects.filter(pk=task_id, status="working").aexists()


async def test_a_task_is_unknown_on_another_endpoint() -> None:
    created = await client().call_tool("slow_compute", {"seconds": 0})
    other = MCPTestClient("conformance-view", era="stateless", capabilities=TASKS)
    with assert_mcp_error(-32602, match="Unknown task"):
        await other.request("tasks/get", {"taskId": created["taskId"]})


async def test_without_the_extension_task_methods_are_refused_and_optional_task_tools_run_inline() -> None:
    mcp = client(capabilities={})
    with assert_mcp_error(-32021) as raised:
        await mcp.request("tasks/get", {"taskId": "anything"})
    assert raised.value.data == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    inline = await mcp.call_tool("slow_compute", {"seconds": 0, "label": "inline"})
    assert inline["resultType"] == "complete"
    assert result_text(inline) == "Computed inline in 0 s"
    with assert_mcp_error(-32021, match="runs only as a task"):
        await mcp.call_tool("failing_job")
    assert not await MCPTask.objects.aexists()


async def test_the_extension_is_advertised_in_2026_and_its_methods_do_not_exist_in_the_handshake_era() -> None:
    discovered = await client().request("server/discover")
    assert EXTENSION in discovered["capabilities"]["extensions"]
    handshake = MCPTestClient("conformance", era="handshake", capabilities=TASKS)
    with assert_mcp_error(-32601):
        await handshake.request("tasks/get", {"taskId": "anything"})
    inline = await handshake.call_tool("slow_compute", {"seconds": 0, "label": "handshake"})
    assert result_text(inline) == "Computed handshake in 0 s"


async def test_removed_v1_methods_and_bad_params_get_clear_errors() -> None:
    mcp = client()
    for method in ("tasks/result", "tasks/list"):
        with assert_mcp_error(-32601):
            await mcp.request(method, {"taskId": "x"} if method == "tasks/result" else {})
    with assert_mcp_error(-32602, match="taskId must be a string"):
        await mcp.request("tasks/get", {"taskId": 7})
    created = await mcp.call_tool("slow_compute", {"seconds": 0})
    with assert_mcp_error(-32602, match="inputResponses must be an object"):
        await mcp.request("tasks/update", {"taskId": created["taskId"], "inputResponses": []})


async def test_bad_arguments_are_an_is_error_result_and_start_no_task() -> None:
    result = await client().call_tool("slow_compute", {"seconds": "soon"})
    assert result["isError"] is True
    assert not await MCPTask.objects.aexists()


def test_an_unknown_task_support_value_is_a_declaration_error() -> None:
    import mcp_django

    registry = mcp_django.Registry("bad-task-support")
    with pytest.raises(mcp_django.DeclarationError, match='task must be "optional", "required" or None'):

        @registry.tool(task="sometimes")
        def sometimes() -> str:
            """Never declared."""
            return ""


async def test_a_task_whose_tool_is_no_longer_served_fails_with_a_clear_error() -> None:
    created = await client().call_tool("slow_compute", {"seconds": 0})
    await MCPTask.objects.filter(pk=created["taskId"]).aupdate(tool="retired_tool")
    await run_worker(created["taskId"])
    task = await MCPTask.objects.aget(pk=created["taskId"])
    assert task.status == "failed"
    assert task.error == {"code": -32603, "message": "The tool 'retired_tool' is no longer served on 'conformance'"}
