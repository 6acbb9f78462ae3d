"""The events extension's system checks (E001).

Run as `EventsExtension.check()` by `mcp_django.extensions.check_extensions`.
"""

from __future__ import annotations

from django.core.checks import CheckMessage, Error

from mcp_django.checks.support import setting
from mcp_django.events.conf import events_settings


def check_events() -> list[CheckMessage]:
    """E001: the webhook TTL bounds do not hold the default TTL."""
    try:
        low, default, high = (
            events_settings.EVENTS_WEBHOOK_MIN_TTL,
            events_settings.EVENTS_WEBHOOK_TTL,
            events_settings.EVENTS_WEBHOOK_MAX_TTL,
        )
        ordered = low <= default <= high
    except TypeError:  # a value of the wrong type: mcp_django.E004 reports it
        return []
    if ordered:
        return []
    return [
        Error(
            f"{setting('EVENTS_WEBHOOK_TTL')} is not between the webhook TTL bounds.",
            hint=f"Keep MIN_TTL <= TTL <= MAX_TTL (EVENTS_WEBHOOK_*: {low}, {default}, {high}).",
            id="mcp_django_events.E001",
        )
    ]
