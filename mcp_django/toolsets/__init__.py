"""Django models, DRF views, django-ninja APIs and admin actions as MCP tools (docs/toolsets.md).

`ModelToolset`, `APIToolset`, `NinjaToolset` (docs/ninja.md) and `AdminActionsToolset` (docs/admin-actions.md).

A toolset is a `ToolProvider` whose tools are ordinary declared `Tool`s, built once: name the class in an
app's `mcp_providers` to serve it on the adapter endpoint, or call `MyToolset.register()` in an app's
`mcp.py` to declare its tools on the server endpoint's registry.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_django.toolsets.admin_actions import AdminActionsToolset
    from mcp_django.toolsets.base import Toolset, all_toolsets
    from mcp_django.toolsets.drf import VIEWSET_ACTIONS, APIToolset
    from mcp_django.toolsets.model import ACTIONS, ModelToolset
    from mcp_django.toolsets.ninja import NinjaToolset

# Each name is imported from its module when first asked for: a project that uses no toolset (and every
# process that only runs the toolsets' system checks) does not load the four kinds of them.
_HOMES = {
    "ACTIONS": "model",
    "VIEWSET_ACTIONS": "drf",
    "APIToolset": "drf",
    "AdminActionsToolset": "admin_actions",
    "ModelToolset": "model",
    "NinjaToolset": "ninja",
    "Toolset": "base",
    "all_toolsets": "base",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ACTIONS",
    "VIEWSET_ACTIONS",
    "APIToolset",
    "AdminActionsToolset",
    "ModelToolset",
    "NinjaToolset",
    "Toolset",
    "all_toolsets",
]
