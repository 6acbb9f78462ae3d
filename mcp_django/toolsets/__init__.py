"""Django models, DRF views, django-ninja APIs and admin actions as MCP tools (docs/toolsets.md).

`ModelToolset`, `APIToolset`, `NinjaToolset` (docs/ninja.md) and `AdminActionsToolset` (docs/admin-actions.md).

A toolset is a `ToolProvider` whose tools are ordinary declared `Tool`s, built once: name the class in an
app's `mcp_providers` to serve it on the adapter endpoint, or call `MyToolset.register()` in an app's
`mcp.py` to declare its tools on the server endpoint's registry.
"""

from mcp_django.toolsets.admin_actions import AdminActionsToolset
from mcp_django.toolsets.base import Toolset, all_toolsets
from mcp_django.toolsets.drf import VIEWSET_ACTIONS, APIToolset
from mcp_django.toolsets.model import ACTIONS, ModelToolset
from mcp_django.toolsets.ninja import NinjaToolset

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
