"""A module named in a fake app config's `mcp_bus_modules` (tests/test_bus.py)."""

from __future__ import annotations

from mcp_django.bus import Bus, Empty, Metadata

support_bus = Bus("support")


@support_bus.action("support.ping")
def ping(target: Empty, payload: Empty, meta: Metadata) -> str:
    """Answer pong."""
    return "pong"
