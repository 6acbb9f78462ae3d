"""Sources of components, and the one backend that serves any number of them.

A *source* is where tools, resources and prompts come from: the static registry
(`mcp_django.registry.RegistrySource`) or a provider (`mcp_django.providers.ProviderSource`).
It lists what a caller sees and finds one *component* by name or URI; a component is one
tool, resource or prompt that runs (`call`, `read`, `get`). Declarations (`Tool`,
`Resource`, `Prompt`) are the registry's components; a provider's are built from its
listed dicts.

`CompositeBackend` serves sources, in order of precedence, as the protocol core's `Backend`,
for every endpoint mode: `server` serves `[registry]`, `adapter` the providers, `combined`
both, the registry first. It is the one place that works out the caller's scope, decides
which sources the caller reaches, merges lists and dispatches a call, read, get or
completion to the first source that has the name or URI. A source's own items may ask for
more scope than the source (the registry's declarations do): it is given the caller's scope
and answers only with what that scope reaches.

Adding a backend operation means: the `Backend` protocol method, a `CompositeBackend` method,
and (when it acts on a component) the component method on the declaration, on the provider's
component and on the remote one (`mcp_django.gateway.source`): a remote server is a source too.
A new `Source` method is also forwarded by `DelegatingSource`, which every wrapper of a source
(the admin's switches) subclasses.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

from mcp_django.declarations.resources import UriTemplate
from mcp_django.permissions import Permissions, permitted
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InvalidParams, ResourceNotFound
from mcp_django.protocol.meta import check_param_headers
from mcp_django.runtime.concurrency import at_once
from mcp_django.runtime.results import completion
from mcp_django.runtime.time_limits import call_within_limit
from mcp_django.scopes import Scope, ScopeResolver

Items = Sequence[Mapping[str, Any]]
C = TypeVar("C")
S = TypeVar("S", bound="Source")


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


class DelegatingSource(Source, Generic[S]):
    """A source that stands in for another and passes it every operation; a subclass overrides what it changes.

    The admin's switches wrap providers and remote servers this way (`mcp_django.control.overlay`), so
    what the wrapped source remembers stays in one place. A new `Source` method is forwarded here, once
    for every wrapper. `DelegatingSource[ProviderSource]` types `source` as the one it wraps.
    """

    __slots__ = ("source",)

    def __init__(self, source: S) -> None:
        self.source = source

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.source!r}>"

    @property
    def scope(self) -> Scope:  # type: ignore[override]  # a property over the base's class attribute
        return self.source.scope

    @property
    def permissions(self) -> Permissions:  # type: ignore[override]  # a property over the base's class attribute
        return self.source.permissions

    @property
    def enabled(self) -> bool:  # type: ignore[override]  # a property over the base's class attribute
        return self.source.enabled

    @property
    def distinct(self) -> bool:  # type: ignore[override]  # a property over the base's class attribute
        return self.source.distinct

    @property
    def namespace(self) -> str:  # type: ignore[override]  # a property over the base's class attribute
        return self.source.namespace

    def capabilities(self) -> dict[str, Any]:
        return self.source.capabilities()

    async def prepare(self) -> object:
        return await self.source.prepare()

    def description(self) -> SourceDescription | None:
        return self.source.description()

    def forget(self) -> None:
        self.source.forget()

    def manifest(self) -> dict[str, Any]:
        return self.source.manifest()

    async def list_tools(self, ctx: RequestContext, scope: Scope) -> Items:
        return await self.source.list_tools(ctx, scope)

    async def list_resources(self, ctx: RequestContext, scope: Scope) -> Items:
        return await self.source.list_resources(ctx, scope)

    async def list_resource_templates(self, ctx: RequestContext, scope: Scope) -> Items:
        return await self.source.list_resource_templates(ctx, scope)

    async def list_prompts(self, ctx: RequestContext, scope: Scope) -> Items:
        return await self.source.list_prompts(ctx, scope)

    async def get_tool(self, name: str, ctx: RequestContext, scope: Scope) -> ToolComponent | None:
        return await self.source.get_tool(name, ctx, scope)

    async def get_prompt(self, name: str, ctx: RequestContext, scope: Scope) -> PromptComponent | None:
        return await self.source.get_prompt(name, ctx, scope)

    async def get_resource(self, uri: str, ctx: RequestContext, scope: Scope) -> ResourceComponent | None:
        return await self.source.get_resource(uri, ctx, scope)

    async def get_resource_template(
        self, uri_template: str, ctx: RequestContext, scope: Scope
    ) -> ResourceComponent | None:
        return await self.source.get_resource_template(uri_template, ctx, scope)

    async def match_resource_template(
        self, uri: str, ctx: RequestContext, scope: Scope
    ) -> tuple[ResourceComponent, dict[str, str]] | None:
        return await self.source.match_resource_template(uri, ctx, scope)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        return await self.source.complete(ref, argument, value, context_arguments, ctx)

    def tool_component(self, item: Mapping[str, Any]) -> ToolComponent:
        return self.source.tool_component(item)

    def resource_component(self, item: Mapping[str, Any]) -> ResourceComponent:
        return self.source.resource_component(item)

    def prompt_component(self, item: Mapping[str, Any]) -> PromptComponent:
        return self.source.prompt_component(item)


_FEATURES: Final = ("tools", "resources", "prompts", "completions")


class CompositeBackend:
    """Serves sources as one `Backend`: lists merge, and the first source that has a name or URI serves it.

    Sources are asked in order (a list asks them all at once), and only those the caller's scope reaches;
    for two items of the same name (or URI), the earlier source's wins, so static declarations put first win.
    Whatever no reachable source has answers exactly as an unknown name.

    Args:
        sources: in order of precedence.
        scopes: works out the caller's scope for a request (an endpoint's `resolve_scope`); None
            there means the caller sees nothing. Without a resolver every caller is SYSTEM: use
            that only in process (tests), never behind a transport.
    """

    __slots__ = ("namespaces", "scopes", "sources")

    def __init__(self, sources: Sequence[Source], scopes: ScopeResolver | None = None) -> None:
        self.sources = tuple(sources)
        self.scopes = scopes
        self.namespaces = {source.namespace: source for source in self.sources if source.namespace}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {list(self.sources)!r}>"

    def capabilities(self) -> dict[str, Any]:
        served: dict[str, Any] = {}
        for source in self.sources:
            for feature, value in source.capabilities().items():
                if feature in _FEATURES:
                    served.setdefault(feature, dict(value))
        return served

    async def reach(self, ctx: RequestContext) -> tuple[Scope, tuple[Source, ...]]:
        """The caller's scope and the sources it reaches, in order: the one scope and permission check on sources."""
        scope = Scope.SYSTEM if self.scopes is None else await self.scopes(ctx)
        if scope is None:
            return Scope.USER, ()
        reached = tuple(source for source in self.sources if source.enabled and source.scope <= scope)
        if any(source.permissions for source in reached):
            reached = tuple(await permitted(ctx, reached, lambda source: source.permissions))
        return scope, reached

    async def _refused(
        self, method: str, name: str, ctx: RequestContext, scope: Scope, lookup: Callable[[Source], Awaitable[Any]]
    ) -> None:
        """Send `refusals.refused` when what the caller did not find is there for a caller of SYSTEM scope.

        Only on the way to "Unknown ...", and only while someone listens: the second lookup asks every
        enabled source whose permissions the caller holds (a permission refusal is not a scope one).
        """
        from mcp_django.runtime.refusals import refused  # Django, imported on this way only

        if scope is Scope.SYSTEM or not refused.has_listeners(type(self)):
            return
        sources = tuple(source for source in self.sources if source.enabled)
        try:
            if any(source.permissions for source in sources):
                sources = tuple(await permitted(ctx, sources, lambda source: source.permissions))
            found = await _first(sources, lookup)
        except Exception:  # a source the caller does not reach failed: its answer is "unknown" all the same
            return
        if found is not None:
            refused.send(type(self), reason="scope", method=method, name=name, scope=scope)

    def _asked(self, name: str, sources: tuple[Source, ...]) -> tuple[Source, ...]:
        """The sources to ask for the tool or prompt `name`: only the one whose namespace it is in, else all.

        A hub's remote server serves `ns_name` and no local source may (check E143), so a namespaced call
        goes straight to its remote instead of asking every local provider first.
        """
        owner = self.namespaces.get(name.partition("_")[0]) if self.namespaces else None
        if owner is None:
            return sources
        return (owner,) if owner in sources else ()

    async def _merged(self, ctx: RequestContext, method: str, key: str) -> Items:
        scope, sources = await self.reach(ctx)
        lists: list[Items] = await at_once([getattr(source, method)(ctx, scope) for source in sources])
        if len(lists) == 1 and (sources[0].distinct or len({item.get(key) for item in lists[0]}) == len(lists[0])):
            return lists[0]
        seen: set[Any] = set()
        merged: list[Mapping[str, Any]] = []
        for listed in lists:
            for item in listed:
                if item.get(key) not in seen:
                    seen.add(item.get(key))
                    merged.append(item)
        return merged

    async def list_tools(self, ctx: RequestContext) -> Items:
        return await self._merged(ctx, "list_tools", "name")

    async def call_tool(self, name: str, arguments: Mapping[str, Any], ctx: RequestContext) -> Mapping[str, Any]:
        scope, sources = await self.reach(ctx)
        found = await _first(self._asked(name, sources), lambda source: source.get_tool(name, ctx, scope))
        if found is None:
            await self._refused("tools/call", name, ctx, scope, lambda source: source.get_tool(name, ctx, Scope.SYSTEM))
            raise InvalidParams(f"Unknown tool: {name}")
        tool = found[1]
        if ctx.connection.param_headers is not None:  # a stateless call over HTTP: its headers mirror arguments
            check_param_headers(ctx.connection.param_headers, tool.param_headers)
        return await call_within_limit(tool, name, arguments, ctx)

    async def list_resources(self, ctx: RequestContext) -> Items:
        return await self._merged(ctx, "list_resources", "uri")

    async def list_resource_templates(self, ctx: RequestContext) -> Items:
        return await self._merged(ctx, "list_resource_templates", "uriTemplate")

    async def read_resource(self, uri: str, ctx: RequestContext) -> Mapping[str, Any]:
        found = await self._resource(uri, ctx)
        if found is None:
            raise ResourceNotFound(uri)
        component, variables = found
        return await component.read(uri, variables, ctx)

    async def readable(self, uri: str, ctx: RequestContext) -> bool:
        return await self._resource(uri, ctx) is not None

    async def _resource(self, uri: str, ctx: RequestContext) -> tuple[ResourceComponent, Mapping[str, str]] | None:
        """What serves `uri` for the caller (a resource, else the first matching template) and its variables."""
        scope, sources = await self.reach(ctx)
        fixed = await _first(sources, lambda source: source.get_resource(uri, ctx, scope))
        if fixed is not None:
            return fixed[1], {}
        matched = await _first(sources, lambda source: source.match_resource_template(uri, ctx, scope))
        return None if matched is None else matched[1]

    async def list_prompts(self, ctx: RequestContext) -> Items:
        return await self._merged(ctx, "list_prompts", "name")

    async def get_prompt(self, name: str, arguments: Mapping[str, str], ctx: RequestContext) -> Mapping[str, Any]:
        scope, sources = await self.reach(ctx)
        found = await _first(self._asked(name, sources), lambda source: source.get_prompt(name, ctx, scope))
        if found is None:
            await self._refused(
                "prompts/get", name, ctx, scope, lambda source: source.get_prompt(name, ctx, Scope.SYSTEM)
            )
            raise InvalidParams(f"Unknown prompt: {name}")
        return await found[1].get(arguments, ctx)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        owner: tuple[Source, Any] | None
        scope, sources = await self.reach(ctx)
        if ref.get("type") == "ref/prompt":
            target = str(ref.get("name", ""))
            owner = await _first(sources, lambda source: source.get_prompt(target, ctx, scope))
            if owner is None:
                raise InvalidParams(f"Unknown prompt: {target}")
        elif ref.get("type") == "ref/resource":
            target = str(ref.get("uri", ""))
            owner = await _first(sources, lambda source: source.get_resource_template(target, ctx, scope))
            owner = owner or await _first(sources, lambda source: source.get_resource(target, ctx, scope))
            if owner is None:
                raise InvalidParams(f"Unknown resource: {target}")
        else:
            raise InvalidParams(f"Unknown reference type: {ref.get('type')}")
        name, value = str(argument.get("name", "")), str(argument.get("value", ""))
        return await owner[0].complete(ref, name, value, context_arguments, ctx)


async def _first(sources: Sequence[Source], lookup: Callable[[Source], Awaitable[C | None]]) -> tuple[Source, C] | None:
    """The first source whose `lookup` finds something, and what it found."""
    for source in sources:
        found = await lookup(source)
        if found is not None:
            return source, found
    return None
