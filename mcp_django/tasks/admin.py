"""The admin's view of the tasks extension: every task, who started it, where it stands; cancel from the list.

Registered by `mcp_django.admin`. Tasks are created by clients and run by workers, so the admin lists,
inspects and cancels them; it neither adds nor edits one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest

from mcp_django.tasks import store
from mcp_django.tasks.models import MCPTask

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
