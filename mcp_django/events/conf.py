"""The `MCP_DJANGO` keys of the events extension (docs/events.md), read through `events_settings`.

Named on `MCPEventsConfig.mcp_settings`, so `manage.py check` accepts and checks them. Durations are in
seconds.
"""

from __future__ import annotations

from typing import Any, Final

from mcp_django.checks.support import is_number, is_positive_int
from mcp_django.conf import MCPSettings


def _seconds(value: Any) -> bool:
    return is_number(value) and value > 0


_SECONDS: Final = (_seconds, "a positive number of seconds")
_COUNT: Final = (is_positive_int, "a positive integer")

events_settings: Final = MCPSettings(
    {
        # How long occurrences are kept for replay, and at most how many of one event type; older ones go
        # (a cursor from before them then reads `truncated: true`).
        "EVENTS_RETENTION": 7 * 24 * 3600,
        "EVENTS_MAX_PER_TYPE": 10_000,
        # At most this many occurrences in one poll answer (a client asks for fewer with maxEvents), and the
        # pause a poll answer suggests (nextPollMs) when nothing more is waiting.
        "EVENTS_MAX_BATCH": 100,
        "EVENTS_POLL_INTERVAL": 5,
        # The keep-alive of a push stream: a heartbeat carrying the cursor at least this often.
        "EVENTS_HEARTBEAT": 15,
        # Webhook subscriptions: the lifetime a subscription gets unless the client asks for another (it
        # refreshes before it lapses), the bounds of what it may ask, attempts per delivery (with
        # exponential backoff from EVENTS_WEBHOOK_BACKOFF seconds) and the seconds one POST may take.
        "EVENTS_WEBHOOK_TTL": 1800,
        "EVENTS_WEBHOOK_MIN_TTL": 60,
        "EVENTS_WEBHOOK_MAX_TTL": 24 * 3600,
        "EVENTS_WEBHOOK_ATTEMPTS": 6,
        "EVENTS_WEBHOOK_BACKOFF": 2,
        "EVENTS_WEBHOOK_TIMEOUT": 10,
        # Callback hosts that may resolve to loopback or private addresses (a receiver on this machine in
        # development); every other callback must be a public https URL.
        "EVENTS_WEBHOOK_ALLOWED_HOSTS": [],
    },
    owner="mcp_django.events",
    rules={
        "EVENTS_RETENTION": _SECONDS,
        "EVENTS_MAX_PER_TYPE": _COUNT,
        "EVENTS_MAX_BATCH": _COUNT,
        "EVENTS_POLL_INTERVAL": _SECONDS,
        "EVENTS_HEARTBEAT": _SECONDS,
        "EVENTS_WEBHOOK_TTL": _SECONDS,
        "EVENTS_WEBHOOK_MIN_TTL": _SECONDS,
        "EVENTS_WEBHOOK_MAX_TTL": _SECONDS,
        "EVENTS_WEBHOOK_ATTEMPTS": _COUNT,
        "EVENTS_WEBHOOK_BACKOFF": (lambda v: is_number(v) and v >= 0, "a number of seconds >= 0"),
        "EVENTS_WEBHOOK_TIMEOUT": _SECONDS,
        "EVENTS_WEBHOOK_ALLOWED_HOSTS": (
            lambda v: isinstance(v, (list, tuple)) and all(isinstance(host, str) and host for host in v),
            "a list of host names",
        ),
    },
)
