"""The gateway's admin: one row per remote MCP server, who has connected their own account to which, and the
pinned definitions of remote tools and prompts (a changed one approved here, its diff shown).

`RemoteServerAdmin` switches a server's tools, resources and prompts (in every gateway and hub in front of
it) and its interceptors (in every chain that names it) on and off, each on its own, sets its minimum
scope, and amends or adds an interceptor server; `UpstreamCredentialAdmin` lists connections, never a
token, and ends them. docs/admin.md.
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html

from mcp_django.admin import ScopedStateAdminMixin, switch_actions
from mcp_django.client.conf import client_settings
from mcp_django.client.servers import location
from mcp_django.control import inventory
from mcp_django.gateway.extension import remote_sources
from mcp_django.gateway.models import RemoteDefinition, RemoteServer, UpstreamCredential

if TYPE_CHECKING:
    _RemoteServerAdminBase = admin.ModelAdmin[RemoteServer]
    _UpstreamCredentialAdminBase = admin.ModelAdmin[UpstreamCredential]
    _RemoteDefinitionAdminBase = admin.ModelAdmin[RemoteDefinition]
else:  # ModelAdmin is generic only in django-stubs
    _RemoteServerAdminBase = _UpstreamCredentialAdminBase = _RemoteDefinitionAdminBase = admin.ModelAdmin


@admin.register(RemoteServer)
class RemoteServerAdmin(ScopedStateAdminMixin, _RemoteServerAdminBase):
    """Every server of `MCP_DJANGO["SERVERS"]` (and those added here), its two switches, its scope and its
    interceptor settings; every worker serves a change within a second (docs/gateway.md).

    Rows come from the settings (`mcp_sync`, and after `migrate`); one added here is an interceptor server,
    given by its URL. Its change page asks the server for its tools (within its connect timeout): whether it
    answers.
    """

    list_display = [
        "name",
        "in_settings",
        "endpoints",
        "enabled",
        "effective_scope",
        "interceptors_enabled",
        "url",
        "fail_open",
        "timeout",
        "present_in_code",
        "updated",
    ]
    list_filter = ["enabled", "interceptors_enabled", "present_in_code", "min_scope", "fail_open"]
    search_fields = ["name", "url"]
    fieldsets = [
        (None, {"fields": ["name", "in_settings", "endpoints", "reachable", "health"]}),
        ("Its tools, resources and prompts", {"fields": ["enabled", "min_scope"]}),
        ("Its interceptors", {"fields": ["interceptors_enabled", "url", "headers", "fail_open", "timeout"]}),
    ]
    readonly_fields = ["in_settings", "endpoints", "reachable", "health"]
    actions = ["enable_selected", "disable_selected", "enable_interceptors", "disable_interceptors"]

    enable_selected, disable_selected = switch_actions("remote servers")
    enable_interceptors, disable_interceptors = switch_actions("servers' interceptors", "interceptors_enabled")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "name"] if obj is not None and obj.present_in_code else fields

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "url":
            kwargs["assume_scheme"] = "https"  # a URL typed without a scheme
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    @admin.display(description="in settings")
    def in_settings(self, obj: RemoteServer) -> str:
        configured = client_settings.SERVERS.get(obj.name) if obj.name else None
        if not isinstance(configured, dict):
            return "no: added here (give its URL)"
        return f"yes: {location(configured) or 'misconfigured'}"

    @admin.display(description="endpoints")
    def endpoints(self, obj: RemoteServer) -> str:
        return ", ".join(inventory.code_remote_servers().get(obj.name, ())) or "—"

    def unset_scope(self, obj: RemoteServer) -> str:
        return "each endpoint's"

    @admin.display(description="reachable, and its tools")
    def reachable(self, obj: RemoteServer) -> str:
        return inventory.probe_remote_server(obj.name) if obj.pk is not None else "—"

    @admin.display(description="health in each endpoint (this worker)")
    def health(self, obj: RemoteServer) -> str:
        """What each endpoint serving it as a source last saw of it (`gateway.health`): state, why, next try."""
        seen = [
            f"{endpoint.name}: {source.health.summary()}"
            for endpoint in inventory.mounted()
            for source in remote_sources(endpoint)
            if source.name == obj.name
        ]
        return "; ".join(seen) or "—"


@admin.register(UpstreamCredential)
class UpstreamCredentialAdmin(_UpstreamCredentialAdminBase):
    """Who has connected their own account to which remote server: read-only, never a token; deleting disconnects."""

    list_display = ["user", "server", "issuer", "scope", "expires_at", "created", "updated"]
    list_filter = ["server", "issuer"]
    search_fields = ["server", f"user__{get_user_model().USERNAME_FIELD}"]
    fields = ("user", "server", "issuer", "scope", "expires_at", "created", "updated")
    readonly_fields = fields
    list_select_related = ["user"]
    actions = ["disconnect"]

    @admin.action(description="Disconnect the selected accounts", permissions=["delete"])
    def disconnect(self, request: HttpRequest, queryset: QuerySet[UpstreamCredential]) -> None:
        count, _ = queryset.delete()
        self.message_user(request, f"{count} connection(s) ended: those users must connect again.", messages.SUCCESS)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(RemoteDefinition)
class RemoteDefinitionAdmin(_RemoteDefinitionAdminBase):
    """Remote tools, prompts, resources and templates as pinned (`gateway.pinning`): a changed or new one is
    withheld from every gateway and hub until approved here; its page shows what changed. Approving is recorded
    in the row's history."""

    list_display = ["name", "kind", "server", "state", "changed_at", "approved_by", "approved_at"]
    list_filter = ["state", "server", "kind"]
    search_fields = ["name", "server"]
    fields = ("server", "kind", "name", "state", "changes", "first_seen", "changed_at", "approved_by", "approved_at")
    readonly_fields = fields
    actions = ["approve"]

    @admin.display(description="what changed (approved → listed now)")
    def changes(self, obj: RemoteDefinition) -> str:
        if obj.seen is None:
            return "—"
        return format_html('<pre style="white-space: pre-wrap">{}</pre>', definition_diff(obj.approved, obj.seen))

    @admin.action(description="Approve the new definitions (serve them from now on)", permissions=["change"])
    def approve(self, request: HttpRequest, queryset: QuerySet[RemoteDefinition]) -> None:
        approved = 0
        for row in queryset.exclude(state=RemoteDefinition.State.PINNED):
            what, diff = row.get_state_display().partition(":")[0], definition_diff(row.approved, row.seen)
            row.approved, row.approved_digest = row.seen, row.seen_digest
            row.seen, row.seen_digest, row.state = None, "", RemoteDefinition.State.PINNED
            row.approved_by, row.approved_at = request.user, timezone.now()  # type: ignore[assignment]
            row.save()
            self.log_change(request, row, f"Approved the {what} definition:\n{diff}")
            approved += 1
        self.message_user(request, f"{approved} definition(s) approved: served from now on.", messages.SUCCESS)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is None and super().has_change_permission(request)  # the action, never the form


def definition_diff(approved: Any, seen: Any) -> str:
    """A unified diff of two definitions as indented JSON (keys sorted); None (a new item's approved one) is empty."""

    def lines(value: Any) -> list[str]:
        return [] if value is None else json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    return "\n".join(difflib.unified_diff(lines(approved), lines(seen), "approved", "listed now", lineterm=""))
