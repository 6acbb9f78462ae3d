"""`AppsExtension`: MCP Apps (`io.modelcontextprotocol/ui`) on the extension seam.

Served on an endpoint whose registry or providers declare a tool with a view (`app=`, `apps = {...}`).
What a client gets depends on what it declared (`extensions["io.modelcontextprotocol/ui"]` with
`mimeTypes` naming `text/html;profile=mcp-app`, in `initialize` or in each request's `_meta`): such a
client sees each tool's `_meta.ui.resourceUri` and can list and read the `ui://` resources; any other
client sees the tools exactly as without the extension (but for app-only tools, hidden), and no `ui://` resource.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from mcp_django.declarations.apps import APP_MIME_TYPE, App
from mcp_django.extensions import Extension
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.hooks import CallNext, OperationHook
from mcp_django.protocol.jsonrpc import InvalidParams
from mcp_django.runtime.executor import run_sync
from mcp_django.scopes import Scope
from mcp_django.sources import ResourceComponent, Source
from mcp_django.ui import APP_ORIGIN, EXTENSION, ORIGIN_META, AppTool, apps_of

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

LANGUAGE_META: Final = "mcp_django/language"
"""The `_meta` key of a `resources/read` naming the language to render the view in (BCP 47, `"fr-CA"`)."""


def negotiated(ctx: RequestContext) -> bool:
    """Whether the client declared the extension with the app MIME type, in either era.

    Handshake-era clients of SDKs without `extensions` in their schema declare it under `experimental`.
    """
    for key in ("extensions", "experimental"):
        declared = ctx.client_capabilities.get(key)
        ui = declared.get(EXTENSION) if isinstance(declared, Mapping) else None
        if isinstance(ui, Mapping):
            types = ui.get("mimeTypes")
            if isinstance(types, (list, tuple)) and APP_MIME_TYPE in types:
                return True
    return False


def from_app(params: Mapping[str, Any]) -> bool:
    """Whether a request's `_meta` says an app's view made it (the bridge's marker: a claim, not a proof)."""
    meta = params.get("_meta")
    return isinstance(meta, Mapping) and meta.get(ORIGIN_META) == APP_ORIGIN


class AppToolsHook:
    """Adds each app's `_meta.ui` to its tool in `tools/list`, and applies the tools' `visibility`.

    A client that negotiated the extension sees `_meta.ui` on the tools with a view; any other client
    does not see app-only tools (`visibility: ["app"]`) at all, and calling one answers as an unknown
    tool. A call to an app-only tool must carry the bridge's marker (`_meta["mcp_django/origin"] = "app"`),
    and a call with the marker must name a tool apps may call. The marker is the client's claim: this
    keeps a model from calling the tools its host should have hidden, it does not authorize anything.
    """

    __slots__ = ("app_only", "metas", "model_only")

    def __init__(self, tools: Mapping[str, AppTool]) -> None:
        self.metas = {name: tool.app.tool_meta() for name, tool in tools.items()}
        visible = {name: tool.app.visibility for name, tool in tools.items() if tool.app.visibility is not None}
        self.app_only = frozenset(name for name, who in visible.items() if "model" not in who)
        self.model_only = frozenset(name for name, who in visible.items() if "app" not in who)

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        if method == "tools/call":
            self._admit_call(params, ctx)
            return await call_next(params)
        result = await call_next(params)
        if method != "tools/list":
            return result
        listed = result.get("tools")
        if not isinstance(listed, list):
            return result
        if not negotiated(ctx):
            if not self.app_only:
                return result
            kept = [tool for tool in listed if not (isinstance(tool, Mapping) and tool.get("name") in self.app_only)]
            return {**result, "tools": kept}
        # Copies: the listed dicts are the declarations' own wire forms, shared by every caller.
        tools = [self._with_app(tool) if isinstance(tool, Mapping) else tool for tool in listed]
        return {**result, "tools": tools}

    def _admit_call(self, params: Mapping[str, Any], ctx: RequestContext) -> None:
        name = params.get("name")
        if name in self.app_only:
            if not negotiated(ctx):
                raise InvalidParams(f"Unknown tool: {name}")  # what a client that cannot list it gets
            if not from_app(params):
                raise InvalidParams(f"Tool {name} is called by its app's view only (visibility: app)")
        elif name in self.model_only and from_app(params):
            raise InvalidParams(f"Tool {name} is not callable from an app's view (visibility: model)")

    def _with_app(self, tool: Mapping[str, Any]) -> Mapping[str, Any]:
        meta = self.metas.get(str(tool.get("name")))
        if meta is None:
            return tool
        own = tool.get("_meta")
        return {**tool, "_meta": {**(own if isinstance(own, Mapping) else {}), **meta}}


class AppSource(Source):
    """Serves the apps of an endpoint's tools as `ui://` resources, to clients that negotiated the extension.

    A view is listed and read by callers who reach one of the tools naming it (their scope covers the
    tool's); everyone else gets exactly what an unknown URI gets.
    """

    __slots__ = ("tools",)

    distinct = True
    scope = Scope.USER

    def __init__(self, tools: Mapping[str, AppTool]) -> None:
        self.tools = dict(tools)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {', '.join(self.tools)}>"

    def capabilities(self) -> dict[str, Any]:
        return {"resources": {}}

    def apps(self, ctx: RequestContext, scope: Scope) -> dict[str, App]:
        """The views this caller reaches, by URI, in the order of their first tool."""
        if not negotiated(ctx):
            return {}
        found: dict[str, App] = {}
        for tool in self.tools.values():
            if scope >= tool.scope:
                found.setdefault(tool.app.uri, tool.app)
        return found

    async def list_resources(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return [app.resource() for app in self.apps(ctx, scope).values()]

    async def get_resource(self, uri: str, ctx: RequestContext, scope: Scope) -> ResourceComponent | None:
        app = self.apps(ctx, scope).get(uri)
        return None if app is None else AppView(app, scope)

    async def match_resource_template(
        self, uri: str, ctx: RequestContext, scope: Scope
    ) -> tuple[ResourceComponent, dict[str, str]] | None:
        return None


class AppView:
    """Renders one app's template for one caller."""

    __slots__ = ("app", "scope")

    def __init__(self, app: App, scope: Scope) -> None:
        self.app = app
        self.scope = scope

    async def read(self, uri: str, variables: Mapping[str, str], request: RequestContext) -> Mapping[str, Any]:
        """The view's HTML, rendered now with the caller's user, scope and language, and its `_meta.ui`."""
        language = request.meta.get(LANGUAGE_META)
        html = await run_sync(
            render_app, self.app, request, self.scope, language if isinstance(language, str) else None
        )
        content = {"uri": uri, "mimeType": APP_MIME_TYPE, "text": html, "_meta": self.app.resource_meta()}
        return {"contents": [content]}


def render_app(app: App, ctx: RequestContext, scope: Scope, language: str | None = None) -> str:
    """The app's template rendered by Django's template engine for the caller of `ctx`.

    The context has `user` (an `AnonymousUser` for an anonymous caller), `scope`, `endpoint`,
    `settings` and `app`; with a `language` (from the read's `_meta`) Django's translation machinery
    renders in it, when it is one of `LANGUAGES`, else in `LANGUAGE_CODE`.
    """
    from django.conf import settings
    from django.contrib.auth.models import AnonymousUser
    from django.template.loader import get_template
    from django.utils import translation

    context = {
        "user": ctx.principal if ctx.principal is not None else AnonymousUser(),
        "scope": scope,
        "endpoint": ctx.endpoint,
        "settings": settings,
        "app": app,
    }
    template = get_template(app.template)
    chosen = _supported(language) if language else None
    with translation.override(chosen or translation.get_language() or settings.LANGUAGE_CODE):
        return template.render(context)


def _supported(language: str) -> str | None:
    from django.utils import translation

    try:
        return translation.get_supported_language_variant(language.replace("_", "-").lower())
    except LookupError:
        return None


class AppsExtension(Extension):
    """MCP Apps: tools' views rendered from Django templates, served as `ui://` resources."""

    identifier = EXTENSION

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """`{"mimeTypes": [...]}` where the endpoint serves a tool with an app; None elsewhere."""
        if getattr(endpoint, "mode", None) == "gateway" or not apps_of(endpoint):
            return None
        return {"mimeTypes": [APP_MIME_TYPE]}

    def hooks(self, endpoint: Any) -> Sequence[OperationHook]:
        return (AppToolsHook(apps_of(endpoint)),)

    def sources(self, endpoint: Any) -> Sequence[Source]:
        return (AppSource(apps_of(endpoint)),)

    def check(self) -> list[CheckMessage]:
        from mcp_django.ui.checks import check_app_templates, check_provider_apps

        return [*check_provider_apps(), *check_app_templates()]
