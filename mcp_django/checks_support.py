"""What every system check module writes its messages with: a setting's name, a value cut short.

`mcp_django.checks` and the checks of the extensions and the gateway share these, so their messages
name settings and quote values alike.
"""

from __future__ import annotations

from typing import Any

from mcp_django.conf import SETTING_NAME

__all__ = ["setting", "short"]


def short(value: Any, limit: int = 30) -> str:
    """`repr(value)`, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def setting(key: str) -> str:
    """How a message names a key of the settings dict: `MCP_DJANGO['KEY']`."""
    return f"{SETTING_NAME}[{key!r}]"
