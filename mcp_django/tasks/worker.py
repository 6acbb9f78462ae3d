"""What a task worker runs: one MCP task, from its row to its result, error or cancellation.

`run_mcp_task` is a task of Django's task framework (`django.tasks` on Django 6, the `django-tasks`
backport on 5.2). With the database backend (`django_tasks_db`) it is picked up by
`manage.py db_worker`, in any process that shares the database, so a task outlives the web process
that accepted it. The tool runs with a `TaskRequestContext`: asking the client for input parks the task
in `input_required` until `tasks/update` brings the answers, progress is stored on the row, and a
`tasks/cancel` seen while it runs cancels the tool's coroutine, and so do `TASK_TIMEOUT` and the
task's `ttlMs` passing (an expired task can no longer be cancelled over MCP).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Mapping
from typing import Any, Final

from mcp_django.protocol.context import Connection, RequestContext
from mcp_django.protocol.inputs import CAPABILITY_OF
from mcp_django.protocol.jsonrpc import InternalError, InvalidRequest, MCPError, Message
from mcp_django.protocol.observers import UNOBSERVED, Observation, compose_observers
from mcp_django.protocol.versions import STATELESS_VERSIONS, Era
from mcp_django.runtime.executor import run_sync
from mcp_django.runtime.time_limits import ToolTimeout
from mcp_django.tasks import store
from mcp_django.tasks.approvals import claim_run, record_outcome
from mcp_django.tasks.conf import tasks_settings
from mcp_django.tasks.methods import served_tools
from mcp_django.tasks.models import MCPTask
from mcp_django.tasks.start import TASK_RUN, take_turns

logger = logging.getLogger("mcp_django.tasks")

POLL_S: Final = 0.2
"""How often a running task looks for a cancellation, and a parked one for its answers."""


def framework() -> Any:
    """Django's task framework: `django.tasks` (Django 6) or the `django_tasks` backport; None without either."""
    for name in ("django.tasks", "django_tasks"):
        with contextlib.suppress(ImportError):
            return importlib.import_module(name)
    return None


class TaskRequestContext(RequestContext):
    """The request context of a tool running as a task in a worker."""

    @property
    def task_id(self) -> str:
        return str(self.connection.extra[TASK_RUN])

    async def request_input(self, requests: Mapping[str, Message]) -> dict[str, Any]:
        """Park the task in `input_required` with `requests` until `tasks/update` answers all of them."""
        for request in requests.values():
            self.require_capability(CAPABILITY_OF[request["method"]])
        active, answers = await run_sync(store.wait_for_input, self.task_id, requests)
        while active:
            if all(key in answers for key in requests):
                return {key: answers[key] for key in requests}
            await asyncio.sleep(POLL_S)
            active, answers = await run_sync(store.pending_answers, self.task_id)
        raise asyncio.CancelledError  # cancelled while it waited

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Store the task's progress on its row (`tasks/get` shows the message as `statusMessage`)."""
        await run_sync(store.record_progress, self.task_id, progress, total, message)
        return True


def execute(task_id: str) -> None:
    """Run the MCP task `task_id` to its end; what the task framework's worker calls."""
    asyncio.run(_execute(task_id))


async def _execute(task_id: str) -> None:
    row = await run_sync(MCPTask.objects.select_related("user").filter(pk=task_id).first)
    if row is None:
        return
    try:
        # else cancelled while it was queued, or an approved call that ran already or whose arguments changed
        if not row.terminal and await run_sync(claim_run, row):
            await _execute_row(row)
            await run_sync(record_outcome, task_id)
    finally:  # its caller's next waiting task takes its place with the workers
        await run_sync(take_turns, row.user_id, row.client_address)


async def _execute_row(row: MCPTask) -> None:
    task_id = row.task_id
    if row.user is not None and not row.user.is_active:
        inactive = InvalidRequest("The user who started this task is no longer active")
        await run_sync(store.finish, task_id, error=inactive.to_error())
        return
    try:
        tool, ctx = await run_sync(_prepare, row)
    except LookupError as missing:
        await run_sync(store.finish, task_id, error=InternalError(str(missing)).to_error())
        return
    with _observed(row, ctx) as observation:
        await _run(row, tool, ctx, observation)


def _observed(row: MCPTask, ctx: TaskRequestContext) -> Observation:
    """The run as the endpoint's observers see a message: a `tools/call` (with no id: nobody waits for an
    answer) whose `_meta` is the trace context of the call that started the task, so the telemetry
    extension's span of the run joins the call's trace, and the tool's own spans nest under it."""
    observer = compose_observers(ctx.connection.endpoint.served_extensions.observers)
    if observer is None:
        return UNOBSERVED
    params = {"name": row.tool, "arguments": row.arguments, "_meta": dict(row.trace_context or {})}
    return observer.observe({"jsonrpc": "2.0", "method": "tools/call", "params": params}, ctx.connection)


async def _run(row: MCPTask, tool: Any, ctx: TaskRequestContext, observation: Observation) -> None:
    task_id = row.task_id
    job = asyncio.ensure_future(tool.call(row.arguments, ctx))
    limit = tasks_settings.TASK_TIMEOUT
    deadline = None if limit is None else asyncio.get_running_loop().time() + limit
    while not (await asyncio.wait({job}, timeout=POLL_S))[0]:
        timed_out = deadline is not None and asyncio.get_running_loop().time() >= deadline
        if timed_out or not await run_sync(store.running, task_id):
            job.cancel()
            with contextlib.suppress(BaseException):
                await job
            if timed_out:
                error = ToolTimeout(row.tool, float(limit or 0)).to_error()
                observation.answered({"jsonrpc": "2.0", "error": error})
                await run_sync(store.finish, task_id, error=error)
            return
    try:
        result = job.result()
    except asyncio.CancelledError:
        return  # cancelled while it waited for input: the row already says so
    except MCPError as error:
        observation.answered({"jsonrpc": "2.0", "error": error.to_error()})
        await run_sync(store.finish, task_id, error=error.to_error())
    except Exception:
        logger.exception("MCP task %s (%s) failed", task_id, row.tool)
        observation.answered({"jsonrpc": "2.0", "error": InternalError().to_error()})
        await run_sync(store.finish, task_id, error=InternalError().to_error())
    else:
        observation.answered({"jsonrpc": "2.0", "result": result})
        if store.json_size(result) > tasks_settings.TASK_MAX_BYTES:
            too_large = InternalError(
                f"The result of {row.tool} is over the {tasks_settings.TASK_MAX_BYTES} bytes a task stores"
            )
            await run_sync(store.finish, task_id, error=too_large.to_error())
        else:
            await run_sync(store.finish, task_id, result=result)


def _prepare(row: MCPTask) -> tuple[Any, TaskRequestContext]:
    from mcp_django.endpoints import endpoint_registry

    try:
        endpoint = endpoint_registry().get(row.endpoint)
    except Exception as error:
        raise LookupError(f"The endpoint {row.endpoint!r} is no longer served") from error
    tool = served_tools(endpoint).get(row.tool)
    if tool is None:
        raise LookupError(f"The tool {row.tool!r} is no longer served on {row.endpoint!r}")
    connection = Connection(
        principal=row.user,
        endpoint=endpoint,
        transport="task",
        sessions=False,
        principal_id=None if row.user_id is None else str(row.user_id),
        streaming=False,
        extra={TASK_RUN: row.task_id},
    )
    ctx = TaskRequestContext(
        method="tools/call",
        request_id=None,
        era=Era.STATELESS if row.protocol_version in STATELESS_VERSIONS else Era.HANDSHAKE,
        protocol_version=row.protocol_version,
        connection=connection,
        client_capabilities=row.client_capabilities,
        client_info=row.client_info,
        answers=dict(row.answers),
    )
    return tool, ctx


def _as_task(function: Any) -> Any:
    found = framework()
    return found.task(function) if found is not None else function


@_as_task
def run_mcp_task(task_id: str) -> None:
    """`execute` as a task of Django's task framework (a plain function when neither framework is installed)."""
    execute(task_id)
