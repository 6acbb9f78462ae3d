"""Approvals that need no session: a gated call answers with a task that runs once an approver says yes.

A tool that needs approval (`@tool(approval=...)`, a toolset's `approval`, or `DESTRUCTIVE_TOOLS_APPROVAL`
for tools annotated `destructiveHint`; `rule_for`) is not run when its call arrives. For a client that
declared the tasks extension (2026-07-28) the call answers a task (SEP-2848's shape: the task stays
`working` while the approval is decided out of band) and an `MCPApproval` row holding the preview (the
arguments and what the tool's preview adds, a delete's cascade) and the SHA-256 of the tool name and
arguments. The task waits outside the workers' queue (`store.AWAITING`) until:

- an approver holding the named permission approves it (the admin, `approve`): it joins its caller's
  queue (`start.take_turns`), and the worker runs it once (`claim_run`: the approval turns `ran` in one
  conditional update, and only for the arguments it was approved for);
- an approver denies it (`deny`), or `APPROVAL_TTL` passes (`expire_overdue`): the task fails with a
  structured error carrying SEP-2643's `authorization` envelope.

Everyone else (the handshake era, a client without the extension) is refused, the refusal naming where
approvals are decided. Each step is appended to the approval's `history`, with who took it and when.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Final
from urllib.parse import urljoin

from django.core.exceptions import PermissionDenied
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InvalidRequest, MissingClientCapability
from mcp_django.protocol.versions import Era
from mcp_django.runtime.executor import run_sync
from mcp_django.safety.approvals import Approval
from mcp_django.safety.idempotency import digest_of
from mcp_django.tasks import store
from mcp_django.tasks.conf import tasks_settings
from mcp_django.tasks.expiry import close, ended, envelope, expire_overdue, step
from mcp_django.tasks.methods import EXTENSION, negotiated
from mcp_django.tasks.models import MCPApproval, MCPTask

logger = logging.getLogger("mcp_django.approvals")

META: Final = "mcp-django.dev/approval"
"""The `_meta` member of a gated call's `CreateTaskResult`: the approval's state, preview and link."""
State = MCPApproval.State


def rule_for(tool: Any) -> Approval | None:
    """The approval `tool` needs: its own (or its toolset's), else `DESTRUCTIVE_TOOLS_APPROVAL`'s for a tool
    annotated `destructiveHint: true`; None when calls of it run without one."""
    if tool.approval is not None:
        return tool.approval  # type: ignore[no-any-return]
    permission = tasks_settings.DESTRUCTIVE_TOOLS_APPROVAL
    return Approval(permission) if permission and tool.destructive else None


class ApprovalClosed(Exception):
    """The approval cannot be decided any more (already decided, expired, its task gone) or not as asked."""


def approvals_url(site: str | None) -> str:
    """Where approvals are decided: the admin's list of pending ones (absolute when `site` is known)."""
    try:
        path = reverse("admin:mcp_django_tasks_mcpapproval_changelist") + "?state__exact=pending"
    except NoReverseMatch:
        return ""
    return urljoin(site, path) if site else path


async def request_approval(
    tool: Any, rule: Approval, arguments: Mapping[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    """Answer a gated call with a task awaiting approval, or refuse it where the client cannot hold a task.

    Raises:
        MissingClientCapability: a 2026-07-28 client that did not declare the tasks extension.
        InvalidRequest: a handshake-era client (tasks are served in 2026-07-28 only).
    """
    link = approvals_url(ctx.connection.site)
    if not negotiated(ctx):
        data = {"reason": "approval_required", "approvalUrl": link, "authorization": envelope(None, hint="url")}
        what = f"The tool {tool.name!r} runs only once a holder of {rule.permission} approves it ({link})"
        if ctx.era is Era.STATELESS:
            raise MissingClientCapability(
                f"{what}; that needs the client capability extensions['{EXTENSION}']",
                data={**data, "requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )
        raise InvalidRequest(f"{what}; that needs a 2026-07-28 client with the tasks extension", data=data)
    preview = await run_sync(_preview, tool, rule, arguments, ctx)
    from mcp_django.tasks.start import task_for_call

    status = f"Awaiting approval by a holder of {rule.permission}: {link}"
    task = await task_for_call(tool, arguments, ctx, answers={}, awaiting=status)
    approval = await run_sync(_record, task, rule, preview)
    meta = {"state": str(approval.state), "permission": rule.permission, "approvalUrl": link, "preview": preview}
    meta["expiresAt"] = approval.expires_at.isoformat().replace("+00:00", "Z")
    return {"resultType": "task", **store.envelope(task), "_meta": {META: meta}}


def _preview(tool: Any, rule: Approval, arguments: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """What the approver is shown: the arguments, and what the rule's (or the tool's) preview adds."""
    preview: dict[str, Any] = {"tool": tool.name, "arguments": dict(arguments)}
    adds = rule.preview or tool.approval_preview
    if adds is not None:
        try:
            preview.update(adds(arguments, ctx))
        except Exception as error:  # the approver is told; the call still waits for a decision
            logger.exception("The approval preview of %s failed", tool.name)
            preview["previewError"] = f"{type(error).__name__}: {error}"
    return preview


def _record(task: MCPTask, rule: Approval, preview: Mapping[str, Any]) -> MCPApproval:
    now = timezone.now()
    return MCPApproval.objects.create(
        task=task,
        task_id_text=task.task_id,
        endpoint=task.endpoint,
        tool=task.tool,
        permission=rule.permission,
        digest=digest_of(task.tool, task.arguments),
        preview=dict(preview),
        requested_by_id=task.user_id,
        expires_at=now + timedelta(seconds=tasks_settings.APPROVAL_TTL),
        history=[step("requested", task.user, now)],
        created_at=now,
    )


def _decide(approval_id: Any, user: Any, to: str, digest: str | None = None, **fields: Any) -> MCPApproval:
    """Move a pending approval to `to` for `user`, once: only the first of two racing decisions wins.

    Raises:
        PermissionDenied: `user` does not hold the approval's permission.
        ApprovalClosed: it was decided already, it expired, its task ended, or `digest` is not the call's.
    """
    approval = MCPApproval.objects.select_related("task").filter(pk=approval_id).first()
    if approval is None:
        raise ApprovalClosed("No such approval")
    if not user.has_perm(approval.permission):
        raise PermissionDenied(f"Deciding this approval needs the permission {approval.permission}")
    if digest is not None and digest != approval.digest:
        raise ApprovalClosed("The arguments are not the ones this approval was shown with")
    if approval.state != State.PENDING:
        raise ApprovalClosed(f"This approval is {approval.get_state_display()} already")
    if expire_overdue(approval):
        raise ApprovalClosed("This approval expired before it was decided")
    task = approval.task
    if task is None or task.terminal:
        close(approval, State.WITHDRAWN, "withdrawn", None)
        raise ApprovalClosed("Its task was cancelled or is gone")
    now = timezone.now()
    history = [*approval.history, step(to, user, now, **({"reason": fields["reason"]} if "reason" in fields else {}))]
    won = MCPApproval.objects.filter(pk=approval.pk, state=State.PENDING).update(
        state=to, decided_by=user, decided_at=now, history=history, **fields
    )
    if not won:
        raise ApprovalClosed("Someone else decided this approval first")
    approval.refresh_from_db()
    logger.info("approval %s of %s (task %s): %s by %s", approval.pk, approval.tool, task.task_id, to, user)
    return approval


def approve(approval_id: Any, user: Any, digest: str) -> MCPApproval:
    """Approve the call for the arguments whose hash the approver was shown (`digest`); it then runs once.

    Raises:
        PermissionDenied: `user` does not hold the approval's permission.
        ApprovalClosed: it is no longer pending, or `digest` is not the call's.
    """
    approval = _decide(approval_id, user, State.APPROVED, digest=digest)
    task = approval.task
    assert task is not None  # checked by _decide
    message = f"Approved by {user.get_username()}; running once a worker is free"
    MCPTask.objects.filter(pk=task.pk, backend_task_id=store.AWAITING).update(
        backend_task_id=store.WAITING, status_message=message, updated_at=timezone.now()
    )
    from mcp_django.tasks.start import take_turns

    take_turns(task.user_id, task.client_address)
    return approval


def deny(approval_id: Any, user: Any, reason: str = "") -> MCPApproval:
    """Deny the call: its task fails with a structured denial (`data.reason` `approval_denied`).

    Raises:
        PermissionDenied: `user` does not hold the approval's permission.
        ApprovalClosed: it is no longer pending.
    """
    approval = _decide(approval_id, user, State.DENIED, reason=reason[:2000])
    why = f": {reason}" if reason else ""
    message = f"The call of {approval.tool} was denied by {user.get_username()}{why}"
    store.finish(approval.task_id_text, error=ended(approval, "approval_denied", message))
    return approval


def claim_run(task: MCPTask) -> bool:
    """Whether the worker may run `task` now: True for a task needing no approval, and once (never again)
    for an approved one whose arguments are still those approved. A task whose arguments changed since
    fails (`data.reason` `approval_arguments_changed`) and is not run."""
    approval = MCPApproval.objects.filter(task_id_text=task.task_id).first()
    if approval is None:
        return True
    if approval.state != State.APPROVED:
        return False
    if digest_of(task.tool, task.arguments) != approval.digest:
        if close(approval, State.REFUSED, "refused", None, detail="the arguments changed after the approval"):
            message = f"The call of {approval.tool} changed after it was approved; it was not run"
            store.finish(task.task_id, error=ended(approval, "approval_arguments_changed", message))
        return False
    return close(approval, State.RAN, "ran", None)


def record_outcome(task_id: str) -> None:
    """Append how the approved run ended (the task's status) to its approval's history."""
    approval = MCPApproval.objects.filter(task_id_text=task_id, state=State.RAN).first()
    status = MCPTask.objects.filter(pk=task_id).values_list("status", flat=True).first()
    if approval is not None:
        history = [*approval.history, step("finished", None, outcome=str(status))]
        MCPApproval.objects.filter(pk=approval.pk).update(history=history)
