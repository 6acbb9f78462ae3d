"""The admin for mcp_django, the control room: providers and interceptors switched on and off, the scopes groups
grant, open sessions (revocable), the audit trail of tool calls, and a dashboard (docs/admin.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.admin.utils import model_ngettext
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.translation import ngettext

# mcp_django.control.inventory and .dashboard are imported where they are used: they load the endpoints, the
# interceptors, the gateway and the MCP client, which Django's app loading (every management command) never needs.
from mcp_django.models import (
    ControlRoom,
    GroupScope,
    IdempotentCall,
    InterceptorState,
    MCPSession,
    ProviderState,
    ScopedState,
    ToolCallRecord,
    ToolState,
)
from mcp_django.providers import provider_registry

if TYPE_CHECKING:
    _SessionAdminBase = admin.ModelAdmin[MCPSession]
    _GroupScopeAdminBase = admin.ModelAdmin[GroupScope]
    _ToolCallAdminBase = admin.ModelAdmin[ToolCallRecord]
    _ProviderStateAdminBase = admin.ModelAdmin[ProviderState]
    _InterceptorStateAdminBase = admin.ModelAdmin[InterceptorState]
    _ControlRoomAdminBase = admin.ModelAdmin[ControlRoom]
    _ToolStateAdminBase = admin.ModelAdmin[ToolState]
    _IdempotentCallAdminBase = admin.ModelAdmin[IdempotentCall]
else:  # ModelAdmin is generic only in django-stubs
    _SessionAdminBase = _GroupScopeAdminBase = _ToolCallAdminBase = _IdempotentCallAdminBase = admin.ModelAdmin
    _ProviderStateAdminBase = _InterceptorStateAdminBase = _ControlRoomAdminBase = _ToolStateAdminBase = (
        admin.ModelAdmin
    )


@admin.register(MCPSession)
class MCPSessionAdmin(_SessionAdminBase):
    """Sessions are opened by clients, so the admin only lists, inspects and revokes (deletes) them.

    A revoked session is answered 404 on its next request, on every worker within a second
    (deleting the row moves the `"sessions"` stamp; `mcp_django.control.state`).
    """

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
    actions = ["revoke_sessions"]

    @admin.action(description="Revoke selected sessions (their next request gets 404)", permissions=["delete"])
    def revoke_sessions(self, request: HttpRequest, queryset: QuerySet[MCPSession]) -> None:
        revoked = queryset.delete()[1].get(MCPSession._meta.label, 0)
        self.message_user(request, f"Revoked {revoked} session(s).", messages.SUCCESS)

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

    list_display = ["created", "tool", "user", "endpoint", "colored_outcome", "duration_ms", "origin"]
    list_filter = ["outcome", "endpoint", "tool", ("user", admin.RelatedOnlyFieldListFilter), "created", "origin"]
    search_fields = ["tool", "trace_id", f"user__{get_user_model().USERNAME_FIELD}"]
    date_hierarchy = "created"
    readonly_fields = [field.name for field in ToolCallRecord._meta.get_fields() if field.concrete]
    list_select_related = ["user"]

    @admin.display(description="outcome", ordering="outcome")
    def colored_outcome(self, obj: ToolCallRecord) -> str:
        if obj.outcome == ToolCallRecord.Outcome.OK:
            return obj.outcome
        return format_html('<strong style="color: #ba2121">{}</strong>', obj.outcome)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(IdempotentCall)
class IdempotentCallAdmin(_IdempotentCallAdminBase):
    """The idempotency keys callers sent with tool calls and the results a retry gets back: read-only; deleting
    a key makes its next retry run the tool again (docs/side-effects.md)."""

    list_display = ["started", "key", "tool", "principal", "endpoint", "state", "expires"]
    list_filter = ["state", "endpoint", "tool", "started"]
    search_fields = ["key", "tool", "principal"]
    date_hierarchy = "started"
    readonly_fields = [field.name for field in IdempotentCall._meta.get_fields() if field.concrete]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class StateAdminMixin:
    """Rows come from code (`manage.py mcp_sync`, and after every `migrate`), so nothing is ever added here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


class ScopedStateAdminMixin:
    """The admin of a `ScopedState`: its minimum scope listed as set here, or as what applies without a row's."""

    @admin.display(description="minimum scope", ordering="min_scope")
    def effective_scope(self, obj: ScopedState) -> str:
        return obj.scope_label(self.unset_scope(obj))

    def unset_scope(self, obj: Any) -> str:
        """What the minimum scope is when the row sets none."""
        raise NotImplementedError(f"{type(self).__name__} must implement unset_scope()")


def switch_actions(items: str, field: str = "enabled") -> tuple[Any, Any]:
    """The `enable_selected` and `disable_selected` actions of an admin whose rows switch on and off.

    Args:
        items: what the rows are, as the actions' descriptions name them ("providers").
        field: the switch, a boolean field of the rows.
    """

    @admin.action(description=f"Enable selected {items}", permissions=["change"])
    def enable_selected(model_admin: Any, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        _switch(model_admin, request, queryset, field, True)

    @admin.action(description=f"Disable selected {items}", permissions=["change"])
    def disable_selected(model_admin: Any, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        _switch(model_admin, request, queryset, field, False)

    return enable_selected, disable_selected


def _switch(model_admin: Any, request: HttpRequest, queryset: QuerySet[Any], field: str, enabled: bool) -> None:
    """Switch the rows of `queryset` on or off, one save each (signals: the stamp moves, clients hear of it)."""
    changed = 0
    for row in queryset:
        if getattr(row, field) != enabled:
            setattr(row, field, enabled)
            row.save(update_fields=[field, "updated"])
            changed += 1
    if enabled:
        message = ngettext("Enabled %(count)d %(items)s.", "Enabled %(count)d %(items)s.", changed)
    else:
        message = ngettext("Disabled %(count)d %(items)s.", "Disabled %(count)d %(items)s.", changed)
    items = model_ngettext(queryset, changed)  # the model's verbose name, singular or plural, as Django's actions say
    model_admin.message_user(request, message % {"count": changed, "items": items}, messages.SUCCESS)


@admin.register(ProviderState)
class ProviderStateAdmin(StateAdminMixin, ScopedStateAdminMixin, _ProviderStateAdminBase):
    """Every provider in code, on or off, with its minimum scope; a change applies everywhere within a second."""

    list_display = [
        "provider_id",
        "provider_name",
        "serves",
        "enabled",
        "effective_scope",
        "endpoints",
        "present_in_code",
        "updated",
    ]
    list_filter = ["enabled", "present_in_code", "min_scope"]
    search_fields = ["provider_id"]
    fields = ["provider_id", "provider_name", "serves", "endpoints", "code_scope", "enabled", "min_scope"]
    readonly_fields = ["provider_id", "provider_name", "serves", "endpoints", "code_scope"]
    actions = ["enable_selected", "disable_selected"]

    enable_selected, disable_selected = switch_actions("providers")

    @staticmethod
    def _provider(obj: ProviderState) -> Any:
        try:
            return provider_registry.get(obj.provider_id)
        except LookupError:
            return None

    @admin.display(description="name")
    def provider_name(self, obj: ProviderState) -> str:
        provider = self._provider(obj)
        return provider.name if provider is not None else "(not in code)"

    @admin.display(description="serves")
    def serves(self, obj: ProviderState) -> str:
        provider = self._provider(obj)
        if provider is None:
            return "—"
        from mcp_django.control import inventory

        return ", ".join(method.split("/")[1] for method in inventory.list_changed_methods(provider))

    @admin.display(description="endpoints")
    def endpoints(self, obj: ProviderState) -> str:
        from mcp_django.control import inventory

        return ", ".join(endpoint.name for endpoint in inventory.endpoints_serving(obj.provider_id)) or "—"

    @admin.display(description="code's scope")
    def code_scope(self, obj: ProviderState) -> str:
        provider = self._provider(obj)
        return provider.scope.label if provider is not None else "—"

    def unset_scope(self, obj: ProviderState) -> str:
        return f"{self.code_scope(obj)} (code)"


@admin.register(InterceptorState)
class InterceptorStateAdmin(StateAdminMixin, _InterceptorStateAdminBase):
    """Every configured interceptor, switched on or off, its mode, fail-open, priority and options overridden."""

    list_display = [
        "name",
        "interceptor_class",
        "kind",
        "enabled",
        "effective_mode",
        "effective_fail_open",
        "effective_priority",
        "present_in_code",
        "updated",
    ]
    list_filter = ["enabled", "present_in_code", "mode"]
    search_fields = ["name"]
    fields = ["name", "interceptor_class", "kind", "configured", "enabled", "mode", "fail_open", "priority", "options"]
    readonly_fields = ["name", "interceptor_class", "kind", "configured"]
    actions = ["enable_selected", "disable_selected"]

    enable_selected, disable_selected = switch_actions("interceptors")

    @staticmethod
    def _entry(obj: InterceptorState) -> Any:
        from mcp_django.control import inventory

        return inventory.code_interceptors().get(obj.name)

    @admin.display(description="class")
    def interceptor_class(self, obj: InterceptorState) -> str:
        entry = self._entry(obj)
        return type(entry.interceptor).__name__ if entry is not None else "(not in code)"

    @admin.display(description="type")
    def kind(self, obj: InterceptorState) -> str:
        entry = self._entry(obj)
        return entry.type if entry is not None else "—"

    @admin.display(description="as configured")
    def configured(self, obj: InterceptorState) -> str:
        entry = self._entry(obj)
        if entry is None:
            return "—"
        return (
            f"mode {entry.mode}, fail open {entry.fail_open}, priority {entry.priority_hint}, "
            f"options {entry.options.model_dump(mode='json')}"
        )

    @admin.display(description="mode")
    def effective_mode(self, obj: InterceptorState) -> str:
        entry = self._entry(obj)
        return obj.mode or (f"{entry.mode} (configured)" if entry is not None else "—")

    @admin.display(description="fail open")
    def effective_fail_open(self, obj: InterceptorState) -> str:
        entry = self._entry(obj)
        if obj.fail_open is not None:
            return "yes" if obj.fail_open else "no"
        return ("yes" if entry.fail_open else "no") + " (configured)" if entry is not None else "—"

    @admin.display(description="priority")
    def effective_priority(self, obj: InterceptorState) -> str:
        entry = self._entry(obj)
        if obj.priority is not None:
            return str(obj.priority)
        return f"{entry.priority_hint} (configured)" if entry is not None else "—"


@admin.register(ToolState)
class ToolStateAdmin(StateAdminMixin, _ToolStateAdminBase):
    """Every tool some endpoint lists (static or a provider's), switched on or off by name on every endpoint."""

    list_display = ["name", "enabled", "required_permissions", "present_in_code", "updated"]
    list_filter = ["enabled", "present_in_code"]
    search_fields = ["name"]
    fields = ["name", "enabled", "required_permissions"]
    readonly_fields = ["name", "required_permissions"]
    actions = ["enable_selected", "disable_selected"]

    @admin.display(description="requires permissions")
    def required_permissions(self, obj: ToolState) -> str:
        """What a caller must hold besides the scope (`permissions=`; a provider's own are not shown)."""
        from mcp_django.control import inventory

        return ", ".join(inventory.tool_permissions().get(obj.name, ())) or "—"

    enable_selected, disable_selected = switch_actions("tools")

    def get_urls(self) -> list[URLPattern]:
        sync = path("sync/", self.admin_site.admin_view(self.sync_view), name="mcp_django_toolstate_sync")
        return [sync, *super().get_urls()]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        context = {"can_sync": self.has_change_permission(request), **(extra_context or {})}
        return super().changelist_view(request, context)

    def sync_view(self, request: HttpRequest) -> HttpResponse:
        """POST: sync every inventory row with the code and the remote servers, as `manage.py mcp_sync` does."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_change_permission(request):
            raise PermissionDenied
        from mcp_django.control import inventory

        for synced in inventory.sync_inventory():
            if synced.created or synced.flagged or synced.restored:
                self.message_user(request, synced.summary(), messages.SUCCESS)
            for what, why in synced.unheard.items():
                self.message_user(request, f"Not heard from {what} ({why}): its rows kept.", messages.WARNING)
        self.message_user(request, "Synced with the code and the remote servers.", messages.INFO)
        return HttpResponseRedirect(reverse("admin:mcp_django_toolstate_changelist"))


@admin.register(ControlRoom)
class ControlRoomAdmin(_ControlRoomAdminBase):
    """The MCP dashboard, for staff with `mcp_django.view_dashboard`; the model has no table."""

    def get_urls(self) -> list[URLPattern]:
        return [path("", self.admin_site.admin_view(self.dashboard_view), name="mcp_django_controlroom_changelist")]

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        user = request.user
        return bool(user.is_active and user.is_staff and user.has_perm("mcp_django.view_dashboard"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def dashboard_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        from mcp_django.control.dashboard import dashboard_context

        context = {
            **self.admin_site.each_context(request),
            "title": "MCP dashboard",
            "opts": self.model._meta,
            **dashboard_context(),
        }
        return TemplateResponse(request, "admin/mcp_django/dashboard.html", context)
