"""The Django app of the events extension: `"mcp_django.events"` in `INSTALLED_APPS`, after `"mcp_django"`."""

from __future__ import annotations

from django.apps import AppConfig


class MCPEventsConfig(AppConfig):
    """Installs the events extension (`EventsExtension`), holds its rows (occurrences, webhook subscriptions
    and deliveries), their admin, its settings and its checks."""

    name = "mcp_django.events"
    label = "mcp_django_events"
    verbose_name = "MCP events"
    default_auto_field = "django.db.models.BigAutoField"
    mcp_extensions = ["mcp_django.events.extension.EventsExtension"]
    mcp_settings = ["mcp_django.events.conf.events_settings"]

    def ready(self) -> None:
        # What an emit does once it commits: tell the push streams, wake the webhook deliverer.
        from mcp_django.events import delivery, push  # noqa: F401
