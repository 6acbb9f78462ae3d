"""A remote server's MCP Apps data (SEP-1865, `_meta.ui`), made safe to pass on.

A remote tool names its view (`_meta.ui.resourceUri`, a `ui://` URI) and a view's resource asks the
host for more than its default sandbox (`_meta.ui.csp`: domains it may reach; `permissions`: camera,
microphone...; `domain`: an origin of its own). Passed on unchanged, a remote could point its tool at
a view of the site's own (which the host would then render, with the site's tools, on the remote's
data) and grant its views what the site's checks would refuse. So:

- through a hub (a namespace), a remote tool loses its `_meta.ui` (its view's URI would not be the
  remote's any more, and might be one of the site's), and a tool only views may call
  (`visibility` without `"model"`) is not listed;
- everywhere, a remote resource's `_meta.ui` loses `csp`, `permissions` and `domain`: the host shows
  a remote view in its default, most restricted sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

_UI: Final = "ui"
_LEGACY_URI: Final = "ui/resourceUri"
_WIDENING: Final = frozenset({"csp", "permissions", "domain"})
"""What a view's resource may ask the host for beyond its default sandbox."""


def remote_tool(tool: dict[str, Any], namespaced: bool) -> dict[str, Any] | None:
    """`tool` as a hub (`namespaced`) or a gateway passes it on; None for a tool a hub does not list."""
    meta = tool.get("_meta")
    if not namespaced or not isinstance(meta, Mapping) or not (_UI in meta or _LEGACY_URI in meta):
        return tool
    ui = meta.get(_UI)
    visibility = ui.get("visibility") if isinstance(ui, Mapping) else None
    if isinstance(visibility, list) and "model" not in visibility:
        return None  # for its view, which is not passed on
    kept = {key: value for key, value in meta.items() if key not in (_UI, _LEGACY_URI)}
    out = {key: value for key, value in tool.items() if key != "_meta"}
    return {**out, "_meta": kept} if kept else out


def remote_resource(item: Any) -> Any:
    """A listed resource or a read content of a remote, its `_meta.ui` without what would widen the sandbox."""
    meta = item.get("_meta") if isinstance(item, dict) else None
    ui = meta.get(_UI) if isinstance(meta, Mapping) else None
    if not isinstance(meta, Mapping) or not isinstance(ui, Mapping) or not _WIDENING & set(ui):
        return item
    narrowed = {key: value for key, value in ui.items() if key not in _WIDENING}
    return {**item, "_meta": {**meta, _UI: narrowed}}
