"""The events extension's system checks."""

from __future__ import annotations

from django.core.checks import Error
from django.test import override_settings

from mcp_django.events.checks import check_events


def test_a_default_webhook_ttl_outside_its_bounds_is_e001() -> None:
    with override_settings(MCP_DJANGO={"EVENTS_WEBHOOK_TTL": 30}):
        messages = check_events()

    assert messages == [
        Error(
            "MCP_DJANGO['EVENTS_WEBHOOK_TTL'] is not between the webhook TTL bounds.",
            hint="Keep MIN_TTL <= TTL <= MAX_TTL (EVENTS_WEBHOOK_*: 60, 30, 86400).",
            id="mcp_django_events.E001",
        )
    ]


def test_the_default_settings_pass() -> None:
    assert check_events() == []
