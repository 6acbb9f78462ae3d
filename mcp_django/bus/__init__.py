"""The command bus: actions with pydantic `target` and `payload`, middleware by priority, results as values.

`mcp_django.bus.core` is the bus itself and knows nothing of MCP; `mcp_django.bus.provider`
serves a bus's whitelisted actions as MCP tools, stamping `origin="agent"` on every dispatch.
See docs/bus.md.
"""

from typing import TYPE_CHECKING, Any

from mcp_django.bus.core import (
    HANDLER_FAILED,
    INVALID_PAYLOAD,
    INVALID_TARGET,
    UNKNOWN_ACTION,
    Action,
    Bus,
    BusFrozen,
    CallNext,
    Command,
    Err,
    Metadata,
    Middleware,
    Ok,
    Result,
    all_buses,
    current_metadata,
    default_bus,
    load_bus_modules,
)
from mcp_django.bus.provider import BusProvider
from mcp_django.exceptions import ActionError

if TYPE_CHECKING:
    from mcp_django.bus.core import Empty

__all__ = [
    "HANDLER_FAILED",
    "INVALID_PAYLOAD",
    "INVALID_TARGET",
    "UNKNOWN_ACTION",
    "Action",
    "ActionError",
    "Bus",
    "BusFrozen",
    "BusProvider",
    "CallNext",
    "Command",
    "Empty",
    "Err",
    "Metadata",
    "Middleware",
    "Ok",
    "Result",
    "all_buses",
    "current_metadata",
    "default_bus",
    "load_bus_modules",
]


def __getattr__(name: str) -> Any:
    """`Empty`, built when first asked for (`mcp_django.bus.core`: no pydantic model is made at start-up)."""
    if name == "Empty":
        from mcp_django.bus import core

        return core.Empty
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
