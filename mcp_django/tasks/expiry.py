"""Approvals that ran out of time, and the steps and errors every approval's end shares (`approvals`).

Apart from `approvals` so that the task methods can expire an approval when its caller polls the task
without importing what starts tasks (`approvals` does).
"""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone

from mcp_django.protocol.jsonrpc import InvalidRequest
from mcp_django.tasks import store
from mcp_django.tasks.conf import tasks_settings
from mcp_django.tasks.models import MCPApproval

logger = logging.getLogger("mcp_django.approvals")
State = MCPApproval.State


def expire_overdue(approval: MCPApproval | None = None, *, task_id: str | None = None) -> int:
    """Expire `approval` (or the one of `task_id`, or every pending one) whose `APPROVAL_TTL` has passed: its
    task fails (`data.reason` `approval_expired`). Returns how many expired."""
    now = timezone.now()
    pending = MCPApproval.objects.filter(state=State.PENDING, expires_at__lte=now)
    if approval is not None:
        pending = pending.filter(pk=approval.pk)
    if task_id is not None:
        pending = pending.filter(task_id_text=task_id)
    expired = 0
    for row in pending:
        message = f"The call of {row.tool} was not approved within {tasks_settings.APPROVAL_TTL} s"
        if close(row, State.EXPIRED, "expired", None):
            store.finish(row.task_id_text, error=ended(row, "approval_expired", message))
            expired += 1
    return expired


def close(approval: MCPApproval, to: str, what: str, user: Any, **details: Any) -> bool:
    """Move `approval` from the state it was read in to `to`, recording the step `what`; False if it moved meanwhile."""
    history = [*approval.history, step(what, user, **details)]
    closed = MCPApproval.objects.filter(pk=approval.pk, state=approval.state).update(state=to, history=history)
    if closed:
        logger.info("approval %s of %s (task %s): %s", approval.pk, approval.tool, approval.task_id_text, what)
    return bool(closed)


def step(what: str, user: Any, when: Any = None, **details: Any) -> dict[str, Any]:
    by = None if user is None else user.get_username()
    return {"step": what, "by": by, "at": (when or timezone.now()).isoformat(), **details}


def envelope(approval: MCPApproval | None, *, hint: str | None = None) -> dict[str, Any]:
    """SEP-2643's `authorization` object (the revision of 2026-04-20)."""
    envelope: dict[str, Any] = {"reason": "insufficient_authorization"}
    if approval is not None:
        envelope["authorizationContextId"] = f"approval_{approval.pk}"
    envelope["remediationHints"] = [{"type": hint}] if hint else []
    return envelope


def ended(approval: MCPApproval, reason: str, message: str) -> dict[str, Any]:
    """The task's JSON-RPC error when its approval was denied, expired or refused."""
    data = {"reason": reason, "tool": approval.tool, "authorization": envelope(approval)}
    return InvalidRequest(message, data=data).to_error()
