"""A registry the interceptor tests serve: an echo tool that remembers what it received."""

from __future__ import annotations

from mcp_django import Registry

registry = Registry("interceptor-tests")

RECEIVED: list[str] = []
"""Every text the echo tool was called with."""


@registry.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    RECEIVED.append(text)
    return text


@registry.resource("memo://today", name="today", mime_type="text/plain")
def today() -> str:
    """Today's memo."""
    return "Call 555-123-4567 or mail boss@example.com"


@registry.prompt
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello {name}"
