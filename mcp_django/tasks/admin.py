"""The admin's view of the tasks extension: every task, who started it, where it stands; cancel from the list;
and the approvals tool calls wait for, approved or denied on their page (`MCPApprovalAdmin`).

Tasks are created by clients and run by workers, so the admin lists, inspects and cancels them; it
neither adds nor edits one.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
)
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from mcp_django.tasks import approvals, expiry, store
from mcp_django.tasks.models import MCPApproval, MCPTask

if TYPE_CHECKING:
    _TaskAdminBase = admin.ModelAdmin[MCPTask]
else:  # ModelAdmin is generic only in django-stubs
    _TaskAdminBase = admin.ModelAdmin


@admin.register(MCPTask)
class MCPTaskAdmin(_TaskAdminBase):
    """Lists every MCP task; the "Cancel" action cancels the active ones among those selected."""

    list_display = ["task_id", "tool", "user", "endpoint", "status", "status_message", "created_at", "updated_at"]
    list_filter = ["status", "endpoint", "tool", ("user", admin.RelatedOnlyFieldListFilter), "created_at"]
    search_fields = ["task_id", "tool", f"user__{get_user_model().USERNAME_FIELD}"]
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in MCPTask._meta.get_fields() if field.concrete]
    list_select_related = ["user"]
    actions = ["cancel_tasks"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Cancel the selected tasks", permissions=["change"])
    def cancel_tasks(self, request: HttpRequest, queryset: QuerySet[MCPTask]) -> None:
        cancelled = sum(store.cancel(task, "Cancelled in the admin") for task in queryset)
        self.message_user(
            request, f"Cancelled {cancelled} task(s); finished ones were left as they were.", messages.SUCCESS
        )


if TYPE_CHECKING:
    _ApprovalAdminBase = admin.ModelAdmin[MCPApproval]
else:  # ModelAdmin is generic only in django-stubs
    _ApprovalAdminBase = admin.ModelAdmin


@admin.register(MCPApproval)
class MCPApprovalAdmin(_ApprovalAdminBase):
    """Tool calls waiting for an approval, and those decided: approve or deny a pending one on its page.

    The page shows the call's preview (its arguments, a delete's cascade) and its history. The buttons post
    to `decide/`, which decides only for a user holding the approval's permission (else 403), and only for
    the arguments whose hash the page showed (`approvals.approve`). Every decision is also written to the
    admin's history (`LogEntry`).
    """

    list_display = ["created_at", "tool", "requested_by", "permission", "state", "decided_by", "expires_at"]
    list_filter = ["state", "tool", "permission", "created_at"]
    search_fields = ["tool", "task_id_text", f"requested_by__{get_user_model().USERNAME_FIELD}"]
    date_hierarchy = "created_at"
    fields = (
        *("tool", "endpoint", "task_id_text", "requested_by", "permission", "state", "shown", "digest"),
        *("expires_at", "decided_by", "decided_at", "reason", "steps"),
    )
    readonly_fields = fields
    list_select_related = ["requested_by", "decided_by"]
    change_form_template = "admin/mcp_django_tasks/mcpapproval/change_form.html"

    @admin.display(description="preview")
    def shown(self, obj: MCPApproval) -> str:
        return format_html('<pre style="white-space: pre-wrap">{}</pre>', json.dumps(obj.preview, indent=2))

    @admin.display(description="history")
    def steps(self, obj: MCPApproval) -> str:
        return format_html('<pre style="white-space: pre-wrap">{}</pre>', json.dumps(obj.history, indent=2))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # decided through `decide/`, never edited

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the approvals' audit trail

    def get_urls(self) -> list[URLPattern]:
        decide = self.admin_site.admin_view(self.decide_view)
        name = f"{MCPApproval._meta.app_label}_{MCPApproval._meta.model_name}_decide"
        return [path("<path:object_id>/decide/", decide, name=name), *super().get_urls()]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        expiry.expire_overdue()
        return super().changelist_view(request, extra_context)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        row = MCPApproval.objects.filter(pk=object_id).first() if object_id.isdigit() else None
        if row is not None and expiry.expire_overdue(row):
            row.refresh_from_db()
        can_decide = row is not None and row.state == MCPApproval.State.PENDING
        can_decide = can_decide and row is not None and request.user.has_perm(row.permission)
        context = {**(extra_context or {}), "can_decide": can_decide, "approval_row": row}
        return super().change_view(request, object_id, form_url, context)

    def decide_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Approve or deny (POST `decision`, `digest`, `reason`); refused with 403 without the permission."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not object_id.isdigit():
            raise Http404
        decision = request.POST.get("decision")
        try:
            if decision == "approve":
                row = approvals.approve(int(object_id), request.user, request.POST.get("digest", ""))
                self.log_change(request, row, f"Approved the call of {row.tool} (arguments {row.digest[:12]}…)")
                self.message_user(request, f"Approved: {row.tool} runs once a worker is free.", messages.SUCCESS)
            elif decision == "deny":
                reason = request.POST.get("reason", "").strip()
                row = approvals.deny(int(object_id), request.user, reason)
                self.log_change(request, row, f"Denied the call of {row.tool}" + (f": {reason}" if reason else ""))
                self.message_user(request, f"Denied: {row.tool} will not run.", messages.SUCCESS)
            else:
                return HttpResponseBadRequest("decision must be approve or deny")
        except approvals.ApprovalClosed as closed:
            self.message_user(request, str(closed), messages.ERROR)
        except PermissionDenied:
            raise
        change = f"admin:{MCPApproval._meta.app_label}_{MCPApproval._meta.model_name}_change"
        return HttpResponseRedirect(reverse(change, args=[object_id]))
