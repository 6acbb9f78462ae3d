"""Approvals decided over MCP: `list_approvals` and `decide_approval`, for an approver's own client.

`registry` holds the two tools; mount it on an endpoint of its own for approvers::

    *endpoint("approvals/mcp", name="approvals", registry="mcp_django.tasks.approval_tools.registry")

Each call is the caller's: `list_approvals` shows the pending approvals whose permission the caller holds,
`decide_approval` decides one through `approvals.approve`/`deny`, with the same checks as the admin (the
permission, the hash of the arguments shown, one decision). Whoever lacks the permission gets an error
result and nothing is decided. docs/side-effects.md#approvals.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from django.core.exceptions import PermissionDenied
from pydantic import Field

from mcp_django.context import Context
from mcp_django.declarations import ToolError
from mcp_django.permissions import fresh_user
from mcp_django.registry import Registry
from mcp_django.tasks import approvals, expiry
from mcp_django.tasks.models import MCPApproval

registry = Registry("mcp_django.tasks.approval_tools")
"""The approvers' tools (mount it with `registry=`)."""


@registry.tool(annotations={"readOnlyHint": True})
def list_approvals(ctx: Context) -> list[dict[str, Any]]:
    """The tool calls waiting for an approval that you may decide: each with its preview and the hash
    (`digest`) to name when you approve it."""
    expiry.expire_overdue()
    user = fresh_user(ctx.user)
    pending = MCPApproval.objects.filter(state=MCPApproval.State.PENDING).select_related("requested_by")
    return [
        {
            "approval": row.pk,
            "tool": row.tool,
            "requestedBy": row.requested_by.get_username() if row.requested_by is not None else None,
            "permission": row.permission,
            "preview": row.preview,
            "digest": row.digest,
            "expiresAt": row.expires_at.isoformat(),
        }
        for row in pending.order_by("created_at")[:100]
        if user.has_perm(row.permission)
    ]


@registry.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False})
def decide_approval(
    ctx: Context,
    approval: Annotated[int, Field(description="The approval's number, from list_approvals")],
    decision: Literal["approve", "deny"],
    digest: Annotated[str, Field(description="To approve: the digest list_approvals showed")] = "",
    reason: Annotated[str, Field(max_length=2000, description="To deny: why, shown to the caller")] = "",
) -> str:
    """Approve a waiting tool call (it then runs once, with the arguments you were shown) or deny it."""
    user = fresh_user(ctx.user)
    try:
        if decision == "approve":
            row = approvals.approve(approval, user, digest)
            return f"Approved: {row.tool} runs once a worker is free."
        row = approvals.deny(approval, user, reason)
        return f"Denied: {row.tool} will not run."
    except PermissionDenied as refused:
        raise ToolError(str(refused)) from None
    except approvals.ApprovalClosed as closed:
        raise ToolError(str(closed)) from None
