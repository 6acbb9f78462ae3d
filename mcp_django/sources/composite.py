"""The one backend that serves any number of sources.

`CompositeBackend` serves sources, in order of precedence, as the protocol core's `Backend`,
for every endpoint mode: `server` serves `[registry]`, `adapter` the providers, `combined`
both, the registry first. It is the one place that works out the caller's scope, decides
which sources the caller reaches, merges lists and dispatches a call, read, get or
completion to the first source that has the name or URI. A source's own items may ask for
more scope than the source (the registry's declarations do): it is given the caller's scope
and answers only with what that scope reaches.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from mcp_django.permissions import permitted
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InvalidParams, ResourceNotFound
from mcp_django.protocol.meta import check_param_headers
from mcp_django.runtime.concurrency import at_once
from mcp_django.runtime.output_caps import capped
from mcp_django.runtime.time_limits import call_within_limit
from mcp_django.scopes import Scope, ScopeResolver
from mcp_django.sources import Items, ResourceComponent, Source

C = TypeVar("C")


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

    async def reach(
        self, ctx: RequestContext, among: tuple[Source, ...] | None = None
    ) -> tuple[Scope, tuple[Source, ...]]:
        """The caller's scope and the sources it reaches (of `among`, else of all), in order: the one scope and
        permission check on sources."""
        scope = Scope.SYSTEM if self.scopes is None else await self.scopes(ctx)
        if scope is None:
            return Scope.USER, ()
        candidates = self.sources if among is None else among
        reached = tuple(source for source in candidates if source.enabled and source.scope <= scope)
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

    def _asked(self, name: str) -> tuple[Source, ...]:
        """The sources that may serve the tool or prompt `name`: only the one whose namespace it is in, else all.

        A hub's remote server serves `ns_name` and no local source may (check E143), so a namespaced call
        goes straight to its remote: the other sources' switches, scopes and permissions are not even read.
        """
        owner = self.namespaces.get(name.partition("_")[0]) if self.namespaces else None
        return self.sources if owner is None else (owner,)

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
        scope, sources = await self.reach(ctx, self._asked(name))
        found = await _first(sources, lambda source: source.get_tool(name, ctx, scope))
        if found is None:
            await self._refused("tools/call", name, ctx, scope, lambda source: source.get_tool(name, ctx, Scope.SYSTEM))
            raise InvalidParams(f"Unknown tool: {name}")
        tool = found[1]
        if ctx.connection.param_headers is not None:  # a stateless call over HTTP: its headers mirror arguments
            check_param_headers(ctx.connection.param_headers, tool.param_headers)
        return capped(tool, name, await call_within_limit(tool, name, arguments, ctx), ctx)

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
        scope, sources = await self.reach(ctx, self._asked(name))
        found = await _first(sources, lambda source: source.get_prompt(name, ctx, scope))
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
