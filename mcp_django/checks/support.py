"""What every system check module writes its messages with: a setting's name, a value cut short.

`mcp_django.checks` and the checks of the extensions and the gateway share these, so their messages
name settings and quote values alike.
"""

from __future__ import annotations

from typing import Any

from mcp_django.conf import SETTING_NAME


def short(value: Any, limit: int = 30) -> str:
    """`repr(value)`, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def setting(key: str) -> str:
    """How a message names a key of the settings dict: `MCP_DJANGO['KEY']`."""
    return f"{SETTING_NAME}[{key!r}]"


def is_int(value: Any) -> bool:
    """An int, and not a bool (which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An int or a float, and not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_positive_int(value: Any) -> bool:
    """An int above zero, and not a bool."""
    return is_int(value) and value > 0


def type_name(value: Any) -> str:
    """The name of the value's type, as a message quotes it."""
    return type(value).__name__
