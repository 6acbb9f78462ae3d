"""Database models of mcp_django."""

from __future__ import annotations

from django.conf import settings
from django.db import models

__all__ = ["MCPSession"]


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
