"""The admin for mcp_django: open sessions (read-only) and the scopes groups grant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.http import HttpRequest

from mcp_django.models import GroupScope, MCPSession, ToolCallRecord

if TYPE_CHECKING:
    _SessionAdminBase = admin.ModelAdmin[MCPSession]
    _GroupScopeAdminBase = admin.ModelAdmin[GroupScope]
    _ToolCallAdminBase = admin.ModelAdmin[ToolCallRecord]
else:  # ModelAdmin is generic only in django-stubs
    _SessionAdminBase = _GroupScopeAdminBase = _ToolCallAdminBase = admin.ModelAdmin


@admin.register(MCPSession)
class MCPSessionAdmin(_SessionAdminBase):
    """Sessions are opened by clients, so the admin only lists, inspects and ends (deletes) them."""

    list_display = [
        "short_id",
        "endpoint_name",
        "principal",
        "protocol_version",
        "client_name",
        "initialized",
        "last_seen",
        "expires_at",
    ]
    list_filter = ["endpoint_name", "protocol_version", "initialized"]
    search_fields = ["session_id", "endpoint_name", f"principal__{get_user_model().USERNAME_FIELD}"]
    date_hierarchy = "created"
    readonly_fields = [field.name for field in MCPSession._meta.get_fields() if field.concrete]
    list_select_related = ["principal"]

    @admin.display(description="session")
    def short_id(self, obj: MCPSession) -> str:
        return f"{obj.session_id[:12]}…"

    @admin.display(description="client")
    def client_name(self, obj: MCPSession) -> str:
        info = obj.client_info if isinstance(obj.client_info, dict) else {}
        return " ".join(str(info[key]) for key in ("name", "version") if key in info)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(GroupScope)
class GroupScopeAdmin(_GroupScopeAdminBase):
    """Which group grants which MCP scope; a change applies to each member's next request."""

    list_display = ["group", "scope"]
    list_filter = ["scope"]
    search_fields = ["group__name"]
    list_select_related = ["group"]


@admin.register(ToolCallRecord)
class ToolCallRecordAdmin(_ToolCallAdminBase):
    """The audit trail of tool calls: written by the audit interceptor, read-only here."""

    list_display = ["created", "tool", "user", "endpoint", "outcome", "duration_ms", "origin"]
    list_filter = ["outcome", "endpoint", "origin"]
    search_fields = ["tool", "trace_id", f"user__{get_user_model().USERNAME_FIELD}"]
    date_hierarchy = "created"
    readonly_fields = [field.name for field in ToolCallRecord._meta.get_fields() if field.concrete]
    list_select_related = ["user"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
