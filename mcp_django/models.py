"""Database models of mcp_django."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from mcp_django.scopes import Scope

__all__ = ["GroupScope", "MCPSession", "ToolCallRecord"]


class MCPSession(models.Model):
    """A handshake-era MCP session, opened by `initialize` on one endpoint.

    Rows are written when a session opens, when its state changes (`notifications/initialized`,
    `logging/setLevel`) and, throttled, to push `expires_at` forward while the client is active.
    Requests read sessions through the in-process cache of `mcp_django.sessions.DatabaseSessionStore`.
    """

    session_id = models.CharField(max_length=128, unique=True)
    endpoint_name = models.CharField(max_length=100, help_text="The endpoint the session was opened on.")
    endpoint_path = models.CharField(max_length=255)
    principal = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="mcp_sessions",
        help_text="The user who opened the session; empty for anonymous clients.",
    )
    protocol_version = models.CharField(max_length=32)
    client_info = models.JSONField(null=True, blank=True)
    client_capabilities = models.JSONField(default=dict, blank=True)
    log_level = models.CharField(max_length=16, blank=True, default="")
    initialized = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name = "MCP session"
        verbose_name_plural = "MCP sessions"
        ordering = ["-last_seen"]

    def __str__(self) -> str:
        return f"{self.endpoint_name} session {self.session_id[:8]}…"


class GroupScope(models.Model):
    """Grants every member of a Django auth group an MCP scope (see `mcp_django.scopes`).

    A user's scope is the highest any of their groups grants, here or in `MCP_DJANGO["SCOPE_GROUPS"]`;
    a change applies to the user's next request.
    """

    group = models.OneToOneField(
        "auth.Group",
        on_delete=models.CASCADE,
        related_name="mcp_scope",
        help_text="Every member of this group gets the scope.",
    )
    scope = models.PositiveSmallIntegerField(
        choices=[(scope.value, scope.label) for scope in Scope],
        help_text="user < team < system: members see every tool, resource and prompt up to this scope.",
    )

    class Meta:
        verbose_name = "MCP group scope"
        verbose_name_plural = "MCP group scopes"
        ordering = ["group__name"]

    def __str__(self) -> str:
        return f"{self.group} → {Scope(self.scope).label}"


class ToolCallRecord(models.Model):
    """One tool call, as the audit interceptor saw it (`mcp_django.interceptors.audit`).

    Rows are written off the request path, in batches; arguments are stored as the tool received
    them, after the redaction interceptor (when it runs before the audit sink).
    """

    class Outcome(models.TextChoices):
        OK = "ok", "ok"
        ERROR = "error", "error"
        BLOCKED = "blocked", "blocked"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="mcp_tool_calls",
        help_text="The caller; empty for anonymous clients.",
    )
    endpoint = models.CharField(max_length=100, blank=True, db_index=True)
    tool = models.CharField(max_length=128, db_index=True)
    arguments = models.JSONField(default=dict, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    duration_ms = models.FloatField(help_text="From the start of the request phase to the tool's result.")
    origin = models.CharField(max_length=32, default="agent", help_text="Who made the call: an MCP client's agent.")
    trace_id = models.CharField(max_length=64, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = "MCP tool call"
        verbose_name_plural = "MCP tool calls"
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.tool} ({self.outcome})"
