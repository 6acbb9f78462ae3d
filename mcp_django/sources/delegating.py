"""The base of every source that stands in for another (the admin's switches)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from mcp_django.permissions import Permissions
from mcp_django.protocol.context import RequestContext
from mcp_django.scopes import Scope
from mcp_django.sources import (
    Items,
    PromptComponent,
    ResourceComponent,
    Source,
    SourceDescription,
    ToolComponent,
)

S = TypeVar("S", bound=Source)


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
