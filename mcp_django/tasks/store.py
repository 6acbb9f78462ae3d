"""Reading and writing `MCPTask` rows, and their wire form (SEP-2663's `Task` and `DetailedTask`).

Every function here is sync (ORM); async callers go through `mcp_django.runtime.executor.run_sync`. A row is
changed with conditional updates, so a cancellation and a worker finishing the task at the same time
cannot both win: whichever reaches the database first settles the status.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Final

from django.db import transaction
from django.db.models import F, Min, QuerySet, Sum
from django.utils import timezone

from mcp_django.tasks.models import ACTIVE_STATUSES, MCPTask
from mcp_django.tasks.signals import task_finished

Status = MCPTask.Status


def create(
    *,
    user_id: Any,
    endpoint: str,
    tool: str,
    arguments: Mapping[str, Any],
    protocol_version: str,
    client_capabilities: Mapping[str, Any],
    client_info: Mapping[str, Any] | None,
    answers: Mapping[str, Any],
    ttl_ms: int | None,
    poll_interval_ms: int | None,
    trace_context: Mapping[str, str] | None = None,
    client_address: str | None = None,
    awaiting: str | None = None,
) -> MCPTask:
    """Create a working task, waiting its turn (`next_waiting`), or, with `awaiting` (its status message),
    waiting for an approval outside every turn (`AWAITING`); committed when this returns (a `tasks/get`
    right after it finds it)."""
    return MCPTask.objects.create(
        backend_task_id=WAITING if awaiting is None else AWAITING,
        status_message=awaiting or "",
        task_id=secrets.token_urlsafe(18),
        user_id=user_id,
        endpoint=endpoint,
        tool=tool,
        arguments=dict(arguments),
        protocol_version=protocol_version,
        client_capabilities=dict(client_capabilities),
        client_info=dict(client_info) if client_info is not None else None,
        answers=dict(answers),
        ttl_ms=ttl_ms,
        poll_interval_ms=poll_interval_ms,
        trace_context=dict(trace_context or {}),
        client_address=(client_address or "")[:64] if user_id is None else "",
        stored_bytes=json_size(arguments, answers, client_capabilities, client_info),
    )


def of_caller(user_id: Any, client_address: str | None) -> QuerySet[MCPTask]:
    """The tasks of one caller: a user's, or those anonymous callers started from one address."""
    rows = MCPTask.objects.filter(user_id=user_id)
    return rows if user_id is not None else rows.filter(client_address=(client_address or "")[:64])


def stored_bytes(user_id: Any, client_address: str | None) -> int:
    """The bytes the tasks of one caller keep stored, finished ones included."""
    return int(of_caller(user_id, client_address).aggregate(total=Sum("stored_bytes"))["total"] or 0)


WAITING: Final = ""
"""`backend_task_id` of a task waiting its turn: not handed to the task workers yet."""
HANDED: Final = "handed"
"""`backend_task_id` of a task being handed to the task workers (its job's id replaces it)."""
AWAITING: Final = "awaiting-approval"
"""`backend_task_id` of a task waiting for an approval (`mcp_django.tasks.approvals`): in no turn until approved."""


def handed_count(user_id: Any, client_address: str | None, ttl: float | None) -> int:
    """How many active tasks of one caller are with the task workers (queued or running), unexpired.

    A task whose worker died stays active until it expires: only then does it stop counting.
    """
    rows = of_caller(user_id, client_address).filter(status__in=ACTIVE_STATUSES)
    rows = rows.exclude(backend_task_id__in=(WAITING, AWAITING))
    if ttl is not None:
        rows = rows.filter(created_at__gte=timezone.now() - timedelta(seconds=ttl))
    return rows.count()


def next_waiting(user_id: Any, client_address: str | None) -> str | None:
    """Take the oldest task of one caller that waits its turn (marked `HANDED`, so no one else takes it); its id."""
    waiting = of_caller(user_id, client_address).filter(status__in=ACTIVE_STATUSES, backend_task_id=WAITING)
    for task_id in waiting.order_by("created_at").values_list("pk", flat=True)[:5]:
        if MCPTask.objects.filter(pk=task_id, backend_task_id=WAITING).update(backend_task_id=HANDED):
            return str(task_id)
    return None


def find(task_id: Any, *, user_id: Any, endpoint: str) -> MCPTask | None:
    """The caller's live task of that id on that endpoint; None for anyone else's, another endpoint's,
    an expired one, or an unknown id (all answered alike, so a task id reveals nothing to others)."""
    if not isinstance(task_id, str):
        return None
    task = MCPTask.objects.filter(task_id=task_id, user_id=user_id, endpoint=endpoint).first()
    if task is None or task.expired():
        return None
    return task


def cancel(task: MCPTask, message: str = "Cancelled by the client") -> bool:
    """Cancel an active task; False when it had already finished (cancelling a finished task is a no-op)."""
    now = timezone.now()
    changed = MCPTask.objects.filter(pk=task.pk, status__in=ACTIVE_STATUSES).update(
        status=Status.CANCELLED, status_message=message, input_requests={}, updated_at=now
    )
    return bool(changed)


def submit_answers(task: MCPTask, responses: Mapping[str, Any]) -> None:
    """Take the client's answers to the input requests the task waits for; unknown keys are ignored.

    The task goes back to `working` once nothing is pending any more.
    """
    with transaction.atomic():
        row = MCPTask.objects.select_for_update().filter(pk=task.pk).first()
        if row is None or row.status != Status.INPUT_REQUIRED:
            return
        answered = {key: value for key, value in responses.items() if key in row.input_requests}
        if not answered:
            return
        row.answers = {**row.answers, **answered}
        row.input_requests = {key: value for key, value in row.input_requests.items() if key not in answered}
        if not row.input_requests:
            row.status = Status.WORKING
        row.updated_at = timezone.now()
        row.save(update_fields=["answers", "input_requests", "status", "updated_at"])


def wait_for_input(task_id: str, requests: Mapping[str, Any]) -> tuple[bool, dict[str, Any]]:
    """Record that the task waits for `requests` (by key); returns (still active, answers so far)."""
    with transaction.atomic():
        row = MCPTask.objects.select_for_update().filter(pk=task_id).first()
        if row is None or row.status not in ACTIVE_STATUSES:
            return False, {}
        pending = {key: dict(request) for key, request in requests.items() if key not in row.answers}
        if pending:
            row.input_requests = {**row.input_requests, **pending}
            row.status = Status.INPUT_REQUIRED
            row.updated_at = timezone.now()
            row.save(update_fields=["input_requests", "status", "updated_at"])
        return True, dict(row.answers)


def pending_answers(task_id: str) -> tuple[bool, dict[str, Any]]:
    """(still active, the answers so far) of a task."""
    row = MCPTask.objects.filter(pk=task_id).values("status", "answers").first()
    if row is None or row["status"] not in ACTIVE_STATUSES:
        return False, {}
    return True, dict(row["answers"])


def is_active(task_id: str) -> bool:
    """Whether the task is still working or waiting for input (not finished, not cancelled)."""
    return MCPTask.objects.filter(pk=task_id, status__in=ACTIVE_STATUSES).exists()


def running(task_id: str) -> bool:
    """Whether the worker should go on running the task: active and not expired.

    An active task whose `ttlMs` has passed can no longer be seen or cancelled over MCP, so it is
    cancelled here (`Expired`), and the worker stops it.
    """
    row = MCPTask.objects.filter(pk=task_id, status__in=ACTIVE_STATUSES).only("created_at", "ttl_ms").first()
    if row is None:
        return False
    if row.expired():
        cancel(row, "Expired: its ttlMs passed before it finished")
        return False
    return True


def active_count(user_id: Any) -> int:
    """How many tasks of `user_id` (None: of every anonymous caller together) are working or waiting for input."""
    return MCPTask.objects.filter(user_id=user_id, status__in=ACTIVE_STATUSES).count()


def json_size(*values: Any) -> int:
    """The bytes `values` take as JSON, as the database stores them."""
    return sum(len(json.dumps(value, separators=(",", ":"), default=str)) for value in values)


def purge_expired(now: datetime | None = None) -> int:
    """Delete every task whose `ttlMs` has passed (whatever its status); return how many."""
    now = now or timezone.now()
    shortest = MCPTask.objects.filter(ttl_ms__isnull=False).aggregate(shortest=Min("ttl_ms"))["shortest"]
    if shortest is None:
        return 0
    candidates = MCPTask.objects.filter(ttl_ms__isnull=False, created_at__lt=now - timedelta(milliseconds=shortest))
    expired = [task.pk for task in candidates.only("created_at", "ttl_ms").iterator() if task.expired(now)]
    deleted = 0
    for start in range(0, len(expired), 500):
        deleted += MCPTask.objects.filter(pk__in=expired[start : start + 500]).delete()[0]
    return deleted


def record_progress(task_id: str, progress: float, total: float | None, message: str | None) -> None:
    """Store the task's latest progress (what `tasks/get` reports as its status message)."""
    fields: dict[str, Any] = {"progress": progress, "progress_total": total, "updated_at": timezone.now()}
    if message is not None:
        fields["status_message"] = message
    MCPTask.objects.filter(pk=task_id, status__in=ACTIVE_STATUSES).update(**fields)


def finish(task_id: str, *, result: Mapping[str, Any] | None = None, error: Mapping[str, Any] | None = None) -> bool:
    """Settle an active task as completed (with `result`) or failed (with `error`); False if it was cancelled."""
    status = Status.FAILED if error is not None else Status.COMPLETED
    changed = MCPTask.objects.filter(pk=task_id, status__in=ACTIVE_STATUSES).update(
        stored_bytes=F("stored_bytes") + json_size(error if error is not None else result),
        status=status,
        result=dict(result) if result is not None and error is None else None,
        error=dict(error) if error is not None else None,
        input_requests={},
        updated_at=timezone.now(),
    )
    if changed and task_finished.has_listeners(MCPTask):
        task_finished.send(MCPTask, task=MCPTask.objects.get(pk=task_id))
    return bool(changed)


def envelope(task: MCPTask) -> dict[str, Any]:
    """SEP-2663's `Task`: what a `CreateTaskResult` carries at its top level."""
    data: dict[str, Any] = {
        "taskId": task.task_id,
        "status": str(task.status),
        "createdAt": _iso(task.created_at),
        "lastUpdatedAt": _iso(task.updated_at),
        "ttlMs": task.ttl_ms,
    }
    if task.poll_interval_ms:
        data["pollIntervalMs"] = task.poll_interval_ms
    if task.status_message:
        data["statusMessage"] = task.status_message
    return data


def detailed(task: MCPTask) -> dict[str, Any]:
    """SEP-2663's `DetailedTask`: the envelope, plus the result, the error or the pending input requests."""
    data = envelope(task)
    if task.status == Status.COMPLETED and task.result is not None:
        data["result"] = task.result
    elif task.status == Status.FAILED and task.error is not None:
        data["error"] = task.error
    elif task.status == Status.INPUT_REQUIRED:
        data["inputRequests"] = task.input_requests
    return data


def _iso(moment: Any) -> str:
    return str(moment.isoformat().replace("+00:00", "Z"))
