"""Sources of components: what a source is, and what it hands out.

A *source* is where tools, resources and prompts come from: the static registry
(`mcp_django.registry.RegistrySource`) or a provider (`mcp_django.providers.ProviderSource`).
It lists what a caller sees and finds one *component* by name or URI; a component is one
tool, resource or prompt that runs (`call`, `read`, `get`). Declarations (`Tool`,
`Resource`, `Prompt`) are the registry's components; a provider's are built from its
listed dicts. A remote server is a source too (`mcp_django.gateway.source`).

The rest of the package: `composite.CompositeBackend` serves any number of sources as the
protocol core's `Backend`; `delegating.DelegatingSource` is the base of every wrapper of a
source (the admin's switches).

Adding a backend operation means: the `Backend` protocol method, a `CompositeBackend` method,
and (when it acts on a component) the component method on the declaration, on the provider's
component and on the remote one (`mcp_django.gateway.source`). A new `Source` method is also
forwarded by `DelegatingSource`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from mcp_django.declarations.uri_templates import UriTemplate
from mcp_django.permissions import Permissions
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.results import completion
from mcp_django.scopes import Scope

__all__ = [
    "Items",
    "PromptComponent",
    "ResourceComponent",
    "Source",
    "SourceDescription",
    "ToolComponent",
    "compiled_template",
]

Items = Sequence[Mapping[str, Any]]


class SourceDescription(Protocol):
    """What a source says about itself (a remote server, in its handshake): a gateway mirrors it."""

    @property
    def server_info(self) -> Mapping[str, Any] | None: ...

    @property
    def instructions(self) -> str | None: ...


class ToolComponent(Protocol):
    """One tool, ready to run (`mcp_django.declarations.Tool`, a provider's tool, a remote server's)."""

    @property
    def param_headers(self) -> Mapping[str, str]:
        """Its `x-mcp-header` arguments: argument -> `Mcp-Param-` header suffix (`protocol.meta.param_headers_of`)."""
        ...

    async def call(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> Mapping[str, Any]:
        """Run the tool and return its `CallToolResult` (failures are `isError` results)."""
        ...


class ResourceComponent(Protocol):
    """One resource or resource template, ready to read."""

    async def read(self, uri: str, variables: Mapping[str, str], request: RequestContext) -> Mapping[str, Any]:
        """Return the `ReadResourceResult` for `uri` (`variables`: what a template bound).

        Raises:
            ResourceNotFound: nothing is there.
        """
        ...


class PromptComponent(Protocol):
    """One prompt, ready to render."""

    async def get(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> Mapping[str, Any]:
        """Return the `GetPromptResult`.

        Raises:
            InvalidParams: a required argument is missing or invalid.
        """
        ...


@functools.lru_cache(maxsize=1024)
def compiled_template(uri_template: str) -> UriTemplate | None:
    """The matcher of a listed URI template, compiled once; None for one RFC 6570 rejects (it matches nothing)."""
    try:
        return UriTemplate(uri_template)
    except Exception:
        return None


def _listed(items: Items, key: str, value: str) -> Mapping[str, Any] | None:
    return next((item for item in items if item.get(key) == value), None)


class Source:
    """Where components come from: lists what a caller of a scope sees, and finds one by name or URI.

    Subclasses implement `capabilities()`, the lists they serve, and the `*_component()` makers
    for the items they list; the lookups default to scanning the lists. A source that finds one
    item directly (a dict lookup) overrides the lookups, so a call does not list everything.
    Every method gets the request and the caller's scope, already checked against `scope`.

    Attributes:
        scope: callers below it reach nothing of the source.
        permissions: Django permissions a caller must hold, all of them, to reach anything of the source.
        enabled: False serves nothing.
        distinct: the lists never repeat a name or URI (the backend then need not merge them).
        namespace: "" or the prefix of every name the source serves (`<namespace>_<name>`, a hub's remote
            server); a name with that prefix is only ever this source's, so the backend asks no other.
    """

    __slots__ = ()

    scope: Scope = Scope.USER
    permissions: Permissions = ()
    enabled: bool = True
    distinct: bool = False
    namespace: str = ""

    def capabilities(self) -> dict[str, Any]:
        """The features (`tools`, `resources`, `prompts`, `completions`) this source serves."""
        raise NotImplementedError(f"{type(self).__name__} must implement capabilities()")

    async def prepare(self) -> object:
        """Get ready to serve; an endpoint awaits it, for each source that overrides it, when it admits a caller.

        A remote server connects and reads what it says about itself (`description`). Default: nothing.
        """
        return None

    def description(self) -> SourceDescription | None:
        """What the source said about itself when last prepared, or None (default: it says nothing)."""
        return None

    def forget(self) -> None:
        """Forget what `prepare` learned and what was resolved from the settings (the endpoint was reset)."""

    def manifest(self) -> dict[str, Any]:
        """How the endpoints manifest names this source: `{"kind", "name", "namespace"}`."""
        return {"kind": "source", "name": type(self).__name__, "namespace": ""}

    async def list_tools(self, ctx: RequestContext, scope: Scope) -> Items:
        return ()

    async def list_resources(self, ctx: RequestContext, scope: Scope) -> Items:
        return ()

    async def list_resource_templates(self, ctx: RequestContext, scope: Scope) -> Items:
        return ()

    async def list_prompts(self, ctx: RequestContext, scope: Scope) -> Items:
        return ()

    async def get_tool(self, name: str, ctx: RequestContext, scope: Scope) -> ToolComponent | None:
        """The tool called `name`, or None."""
        item = _listed(await self.list_tools(ctx, scope), "name", name)
        return None if item is None else self.tool_component(item)

    async def get_prompt(self, name: str, ctx: RequestContext, scope: Scope) -> PromptComponent | None:
        """The prompt called `name`, or None."""
        item = _listed(await self.list_prompts(ctx, scope), "name", name)
        return None if item is None else self.prompt_component(item)

    async def get_resource(self, uri: str, ctx: RequestContext, scope: Scope) -> ResourceComponent | None:
        """The resource at exactly `uri` (not a template's), or None."""
        item = _listed(await self.list_resources(ctx, scope), "uri", uri)
        return None if item is None else self.resource_component(item)

    async def get_resource_template(
        self, uri_template: str, ctx: RequestContext, scope: Scope
    ) -> ResourceComponent | None:
        """The resource template declared as exactly `uri_template`, or None."""
        item = _listed(await self.list_resource_templates(ctx, scope), "uriTemplate", uri_template)
        return None if item is None else self.resource_component(item)

    async def match_resource_template(
        self, uri: str, ctx: RequestContext, scope: Scope
    ) -> tuple[ResourceComponent, dict[str, str]] | None:
        """The first resource template `uri` matches, and the variables it binds; or None."""
        for item in await self.list_resource_templates(ctx, scope):
            template = compiled_template(str(item.get("uriTemplate", "")))
            variables = None if template is None else template.match(uri)
            if variables is not None:
                return self.resource_component(item), variables
        return None

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        """The `completion` member for `argument` of a prompt or template this source serves (default: none)."""
        return completion(())

    def tool_component(self, item: Mapping[str, Any]) -> ToolComponent:
        """The component running a tool this source listed."""
        raise NotImplementedError(f"{type(self).__name__} lists tools but does not implement tool_component()")

    def resource_component(self, item: Mapping[str, Any]) -> ResourceComponent:
        """The component reading a resource (or template) this source listed."""
        raise NotImplementedError(f"{type(self).__name__} lists resources but does not implement resource_component()")

    def prompt_component(self, item: Mapping[str, Any]) -> PromptComponent:
        """The component rendering a prompt this source listed."""
        raise NotImplementedError(f"{type(self).__name__} lists prompts but does not implement prompt_component()")
