"""MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`): tools' views rendered from Django templates.

Add `"mcp_django.ui"` to `INSTALLED_APPS` and name a template as a tool's view
(`@mcp_django.tool(app="shop/product_card.html")`, a provider's or a toolset's `apps = {tool: ...}`);
docs/apps.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from mcp_django.declarations.apps import APP_MIME_TYPE, App, app_of
from mcp_django.exceptions import DeclarationError
from mcp_django.interceptors.audit import ORIGIN_META
from mcp_django.providers.base import Provider
from mcp_django.scopes import Scope
from mcp_django.toolsets.base import Toolset

__all__ = ["APP_MIME_TYPE", "APP_ORIGIN", "EXTENSION", "ORIGIN_META", "App", "AppTool", "apps_of", "provider_apps"]

EXTENSION: Final = "io.modelcontextprotocol/ui"
"""The extension's identifier, under `capabilities.extensions` on both sides."""

APP_ORIGIN: Final = "app"
"""What the bridge puts under `params._meta["mcp_django/origin"]` of the calls a view makes (a claim, not a proof)."""


@dataclasses.dataclass(frozen=True, slots=True)
class AppTool:
    """A tool an endpoint serves that names a view: the view, the scope that reaches the tool, who declared it.

    Args:
        app: the view.
        scope: the lowest scope that reaches the tool (the tool's, or its provider's when higher).
        owner: `"registry"`, or the id of the provider serving the tool.
    """

    app: App
    scope: Scope
    owner: str = "registry"


def provider_apps(provider: Provider) -> dict[str, App]:
    """The views a provider's tools name, by tool name: a toolset's tools' `app`, else the provider's `apps`.

    An entry of `apps` that is not an app (check `mcp_django.E202` names it) is left out.
    """
    if isinstance(provider, Toolset):
        return {name: tool.app for name, tool in provider.tools.items() if tool.app is not None}
    found: dict[str, App] = {}
    declared = getattr(provider, "apps", None)
    for name, app in declared.items() if isinstance(declared, Mapping) else ():
        try:
            view = app_of(f"provider {getattr(provider, 'id', provider)!r}, tool {name!r}", app)
        except DeclarationError:
            continue
        if view is not None:
            found[str(name)] = view
    return found


def apps_of(endpoint: Any) -> dict[str, AppTool]:
    """The tools the endpoint serves that name a view, by name: its registry's, then its providers'.

    Only this endpoint's own sources count, so a view declared on the adapter endpoint is never served on
    the server endpoint (nor the other way round); a name the registry serves shadows a provider's.
    """
    found: dict[str, AppTool] = {}
    registry = getattr(endpoint, "registry", None)
    if registry is not None:
        for name, tool in registry.tools.items():
            if tool.app is not None:
                found[name] = AppTool(tool.app, tool.scope)
    try:
        providers: tuple[Provider, ...] = tuple(getattr(endpoint, "providers", ()))
    except LookupError:  # an unknown provider id: the endpoint checks report it
        providers = ()
    for provider in providers:
        tools = provider.tools if isinstance(provider, Toolset) else {}
        for name, app in provider_apps(provider).items():
            tool = tools.get(name)
            scope = max(provider.scope, tool.scope) if tool is not None else provider.scope
            found.setdefault(name, AppTool(app, Scope(scope), provider.id or type(provider).__name__))
    return found
