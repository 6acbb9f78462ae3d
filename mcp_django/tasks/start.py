"""Starting a task: what a task-capable tool's call does when the client declared the tasks extension.

`Tool.call` hands over here once the arguments are valid. The server decides (SEP-2663: the client
sends no hint): a tool declared `task="optional"` or `"required"` runs as a task for a client that
declared `io.modelcontextprotocol/tasks`; without it an optional one runs inline as any call, and a
required one is refused with `-32021`. The tool's `task_inputs` are gathered first, in the request
(an `input_required` round trip in 2026), so a task only starts once it has them. The row is committed
and the job enqueued before the `CreateTaskResult` leaves.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Final

from django.utils.module_loading import import_string

from mcp_django.endpoints.admission import CLIENT_ADDRESS
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InternalError, InvalidParams, InvalidRequest
from mcp_django.protocol.versions import Era
from mcp_django.runtime.executor import run_sync
from mcp_django.tasks import store
from mcp_django.tasks.conf import tasks_settings
from mcp_django.tasks.methods import negotiated, require_extension
from mcp_django.tasks.models import MCPTask

logger = logging.getLogger("mcp_django.tasks")

TASK_RUN: Final = "mcp_django.task"
"""`Connection.extra` key holding the id of the task a worker is running (the tool then runs inline)."""
WORKER_TASK: Final = "mcp_django.tasks.worker.run_mcp_task"
"""The job the task framework runs, loaded by name as its workers load it (the worker imports the endpoints)."""


async def start_task(
    tool: Any, arguments: Mapping[str, Any], ctx: RequestContext, *, support: str, inputs: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Start `tool` as a task and return its `CreateTaskResult`; None when the call runs inline instead.

    Raises:
        MissingClientCapability: a `required` tool called in 2026 by a client without the extension.
        InputRequired: the tool's `task_inputs` are not all answered yet (2026).
    """
    if TASK_RUN in ctx.connection.extra:
        return None  # this is the task's own run, in the worker
    if not negotiated(ctx):
        if support == "required" and ctx.era is Era.STATELESS:
            require_extension(ctx, f"The tool {tool.name!r} runs only as a task and")
        return None
    answers = await ctx.request_input(inputs) if inputs else {}
    task = await task_for_call(tool, arguments, ctx, answers=answers)
    return {"resultType": "task", **store.envelope(task)}


async def task_for_call(
    tool: Any,
    arguments: Mapping[str, Any],
    ctx: RequestContext,
    *,
    answers: Mapping[str, Any],
    awaiting: str | None = None,
) -> MCPTask:
    """`create_task` for a call of `tool` by `ctx`'s caller: its principal (else its address), endpoint, era,
    client and trace context."""
    user_id = ctx.connection.principal_id
    return await run_sync(
        create_task,
        awaiting=awaiting,
        user_id=user_id,
        client_address=None if user_id is not None else ctx.connection.extra.get(CLIENT_ADDRESS),
        endpoint=getattr(ctx.endpoint, "name", ""),
        tool=tool.name,
        arguments=arguments,
        protocol_version=ctx.protocol_version,
        client_capabilities=ctx.client_capabilities,
        client_info=ctx.client_info,
        answers=answers,
        trace_context=trace_context(),
    )


def trace_context() -> dict[str, str]:
    """The current OpenTelemetry trace context (the call's span, with the telemetry extension), as W3C headers.

    Empty without the OpenTelemetry API or outside any trace. The worker's run of the task continues it.
    """
    try:
        from opentelemetry import propagate
    except ImportError:
        return {}
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


_NOT_QUEUED: Final = "The task could not be queued"


def create_task(*, awaiting: str | None = None, **fields: Any) -> MCPTask:
    """Create a task within its caller's limits and queue it when its turn comes; with `awaiting` (its status
    message), one that waits for an approval first (`approvals`), readable `APPROVAL_TTL` seconds longer.

    Raises:
        InvalidParams, InvalidRequest: over a limit (`TASK_MAX_BYTES`, the active or stored quotas).
        InternalError: the task could not be queued.
    """
    _purge_now_and_then()
    _check_size(fields)
    # Counted, then created: two starts racing at the limit may both pass, so the overshoot is bounded by one
    # caller's concurrency. A transaction around both delayed the task workers' first claims by seconds on SQLite.
    _check_quota(fields["user_id"])
    _check_stored(fields)
    ttl, interval = tasks_settings.TASK_TTL, tasks_settings.TASK_POLL_INTERVAL
    if ttl is not None and awaiting is not None:
        ttl += tasks_settings.APPROVAL_TTL
    task = store.create(
        **fields,
        ttl_ms=None if ttl is None else round(ttl * 1000),
        poll_interval_ms=round(interval * 1000),
        awaiting=awaiting,
    )
    take_turns(task.user_id, task.client_address)
    task.refresh_from_db()  # a backend that runs it right away (ImmediateBackend) has finished it already
    if task.status == MCPTask.Status.FAILED and (task.error or {}).get("message") == _NOT_QUEUED:
        raise InternalError(_NOT_QUEUED)
    return task


def take_turns(user_id: Any, client_address: str | None) -> None:
    """Hand one caller's oldest waiting tasks to the task workers while fewer than its running cap are there.

    Called when a task starts and when one ends: so the workers' queue holds at most
    `TASK_MAX_RUNNING_PER_USER` (or, per anonymous address, `..._ANONYMOUS`) tasks of one caller, and
    one caller's backlog waits here, never in front of another's.
    """
    anonymous = user_id is None
    cap = tasks_settings.TASK_MAX_RUNNING_ANONYMOUS if anonymous else tasks_settings.TASK_MAX_RUNNING_PER_USER
    while cap is None or store.handed_count(user_id, client_address, tasks_settings.TASK_TTL) < cap:
        task_id = store.next_waiting(user_id, client_address)
        if task_id is None:
            return
        _enqueue(task_id)


def _enqueue(task_id: str) -> None:
    run_mcp_task = import_string(WORKER_TASK)
    try:
        job = run_mcp_task.using(backend=tasks_settings.TASK_BACKEND).enqueue(task_id)
    except Exception:
        logger.exception("MCP task %s could not be queued", task_id)
        store.finish(task_id, error=InternalError(_NOT_QUEUED).to_error())
        return
    MCPTask.objects.filter(pk=task_id).update(backend_task_id=str(job.id)[:64])


def _check_size(fields: Mapping[str, Any]) -> None:
    """Refuse a task whose stored arguments, answers and client data are over `TASK_MAX_BYTES`."""
    limit = tasks_settings.TASK_MAX_BYTES
    stored = ("arguments", "answers", "client_capabilities", "client_info")
    if store.json_size(*(fields[key] for key in stored)) > limit:
        raise InvalidParams(f"Invalid params: a task stores at most {limit} bytes of arguments and client data")


def _check_quota(user_id: Any) -> None:
    """Refuse a task beyond `TASK_MAX_ACTIVE_PER_USER` (or, for anonymous callers together, `..._ANONYMOUS`)."""
    limit = tasks_settings.TASK_MAX_ACTIVE_ANONYMOUS if user_id is None else tasks_settings.TASK_MAX_ACTIVE_PER_USER
    if limit is None or store.active_count(user_id) < limit:
        return
    who = "anonymous callers" if user_id is None else "one user"
    raise InvalidRequest(f"Too Many Tasks: at most {limit} active tasks for {who}; cancel one or let one finish")


def _check_stored(fields: Mapping[str, Any]) -> None:
    """Refuse a task that would take its caller past `TASK_MAX_STORED_BYTES_PER_USER` (or `..._ANONYMOUS`,
    per address), counting what its tasks keep stored, finished ones included, once the expired are purged."""
    user_id, address = fields["user_id"], fields["client_address"]
    anonymous = user_id is None
    limit = (
        tasks_settings.TASK_MAX_STORED_BYTES_ANONYMOUS if anonymous else tasks_settings.TASK_MAX_STORED_BYTES_PER_USER
    )
    if limit is None:
        return
    size = store.json_size(*(fields[key] for key in ("arguments", "answers", "client_capabilities", "client_info")))
    if store.stored_bytes(user_id, address) + size <= limit:
        return
    store.purge_expired()
    if store.stored_bytes(user_id, address) + size <= limit:
        return
    who = "one anonymous client address" if anonymous else "one user"
    raise InvalidRequest(
        f"Too Much Stored: the tasks of {who} keep at most {limit} bytes; let finished ones expire (ttlMs) first"
    )


_last_purge = 0.0


def _purge_now_and_then() -> None:
    """Delete the expired tasks, at most once per `TASK_PURGE_INTERVAL` seconds in this process."""
    global _last_purge
    interval = tasks_settings.TASK_PURGE_INTERVAL
    now = time.monotonic()
    if interval is None or (_last_purge and now - _last_purge < interval):
        return
    _last_purge = now
    store.purge_expired()
