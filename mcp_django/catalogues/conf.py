"""The `MCP_DJANGO` key of the catalogues extension (docs/catalogues.md), read through `catalogue_settings`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_django.catalogues.modes import MODES
from mcp_django.conf import MCPSettings


def mode_entry(value: Any) -> tuple[str, tuple[str, ...]] | None:
    """`(mode, pinned tool names)` of one `CATALOGUES` value (`"search"`, `{"MODE": "search", "PINNED": [...]}`);
    None when it is neither."""
    if isinstance(value, str):
        return (value, ()) if value in MODES else None
    if not isinstance(value, Mapping) or set(value) - {"MODE", "PINNED"} or value.get("MODE") not in MODES:
        return None
    pinned = value.get("PINNED", ())
    if isinstance(pinned, str) or not isinstance(pinned, (list, tuple)) or not all(isinstance(p, str) for p in pinned):
        return None
    return value["MODE"], tuple(pinned)


def _valid(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(k, str) and mode_entry(v) for k, v in value.items())


catalogue_settings: Final = MCPSettings(
    # Each endpoint's discovery mode, by endpoint name: "flat" (the default), "search" or "grouped", or
    # {"MODE": "search", "PINNED": ["tool", ...]} (tools listed besides the search tool).
    {"CATALOGUES": {}},
    owner="mcp_django.catalogues",
    rules={"CATALOGUES": (_valid, "a dict of endpoint names to modes")},
)
