"""`ProviderSource`: one provider as a source of components, and the components it serves.

A provider only lists (and runs what it listed); its source finds a name or URI by scanning
those lists (a `ToolProvider` may define `get_tool(name, ctx)` to answer one name directly),
runs sync methods in a worker thread, and converts what they return through `mcp_django.runtime.results`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from asgiref.sync import iscoroutinefunction

from mcp_django.context import Context
from mcp_django.declarations.django_values import evaluate, needs_evaluation
from mcp_django.permissions import parse_permissions, permitted
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.errors import internal_errors
from mcp_django.protocol.jsonrpc import InvalidParams, MCPError, ResourceNotFound
from mcp_django.protocol.meta import param_headers_of
from mcp_django.protocol.results import completion
from mcp_django.providers.base import PromptProvider, Provider, ResourceProvider, ToolProvider
from mcp_django.runtime import results
from mcp_django.runtime.executor import run_sync
from mcp_django.runtime.transactions import unit_of_work
from mcp_django.scopes import Scope
from mcp_django.sources import Source, ToolComponent

logger = logging.getLogger("mcp_django.providers")

_METHODS = {
    ToolProvider: ("list_tools", "call_tool", "get_tool"),
    ResourceProvider: ("list_resources", "list_resource_templates", "read_resource"),
    PromptProvider: ("list_prompts", "get_prompt"),
}


def _runner(method: Callable[..., Any], unit: Callable[..., Any] | None = None) -> Callable[..., Awaitable[Any]]:
    """Async methods as they are; sync ones through `run_sync` (a worker thread, where the ORM works).

    Either way, a QuerySet or model instances they return are evaluated where the ORM may run
    (`declarations.django_values.evaluate`). A sync method with a `unit` (`call_tool`) runs as a unit
    of work (`mcp_django.runtime.transactions.unit_of_work`).
    """
    if iscoroutinefunction(method):
        return functools.partial(_evaluated_async, method)
    call = functools.partial(_evaluated, method)
    if unit is not None:
        return functools.partial(run_sync, functools.partial(unit, call, results.is_failure))
    return functools.partial(run_sync, call)


def _evaluated(method: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    return evaluate(method(*args, **kwargs))


async def _evaluated_async(method: Callable[..., Awaitable[Any]], /, *args: Any, **kwargs: Any) -> Any:
    value = await method(*args, **kwargs)
    return await run_sync(evaluate, value) if needs_evaluation(value) else value


def _items(value: Any, what: str, provider: Provider) -> Sequence[Mapping[str, Any]]:
    """A provider's list as a sequence of dicts; anything else is the provider's bug, reported as such.

    The items are not copied: the core copies the page it sends (`MessageHandler.page`), so nothing
    downstream changes what the provider holds.
    """
    items = value if isinstance(value, (list, tuple)) else list(value or ())
    for item in items:
        if type(item) is not dict and not isinstance(item, Mapping):
            raise TypeError(f"{provider!r}: {what}() must return MCP {what.removeprefix('list_')} dicts")
    return items


class ProviderSource(Source):
    """Adapts one provider to `Source`: runs its sync or async methods; its components convert what they return."""

    __slots__ = ("_per_item", "_run", "permissions", "provider")

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        names = [name for kind, methods in _METHODS.items() if isinstance(provider, kind) for name in methods]
        self._run: dict[str, Callable[..., Awaitable[Any]]] = {
            name: _runner(
                getattr(provider, name), unit_of_work(provider.atomic, provider.using) if name == "call_tool" else None
            )
            for name in (*names, "complete")
            if callable(getattr(provider, name, None))
        }
        try:
            self.permissions = parse_permissions(provider.permissions)
        except TypeError:  # reported by check E191; until fixed, a name no one but a superuser holds
            self.permissions = (f"invalid permissions {provider.permissions!r}",)
        self._per_item = type(provider).permissions_of is not Provider.permissions_of

    def __repr__(self) -> str:
        return f"<ProviderSource {self.provider.id!r}>"

    @property
    def scope(self) -> Scope:  # type: ignore[override]  # a property over the base's class attribute
        """The provider's minimum scope, as the code says (the admin's overlay may override it and `enabled`)."""
        return self.provider.scope

    def manifest(self) -> dict[str, Any]:
        return {"kind": "providers", "name": self.provider.id, "namespace": ""}

    # -- serving

    async def run(self, method: str, *args: Any) -> Any:
        """Run the provider's `method`, in a worker thread when it is sync."""
        return await self._run[method](*args)

    def capabilities(self) -> dict[str, Any]:
        served: dict[str, Any] = {}
        if isinstance(self.provider, ToolProvider):
            served["tools"] = {}
        if isinstance(self.provider, ResourceProvider):
            served["resources"] = {}
        if isinstance(self.provider, PromptProvider):
            served["prompts"] = {}
        if isinstance(self.provider, (ResourceProvider, PromptProvider)):
            served["completions"] = {}
        return served

    async def _list(self, method: str, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        if method not in self._run:
            return []
        items = _items(await self._run[method](Context(ctx)), method, self.provider)
        return await self._permitted(ctx, items) if self._per_item else items

    async def _permitted(self, ctx: RequestContext, items: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
        """The items whose own permissions (`Provider.permissions_of`) the caller holds."""
        return await permitted(ctx, items, lambda item: parse_permissions(self.provider.permissions_of(item)))

    async def list_tools(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return await self._list("list_tools", ctx)

    async def list_resources(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return await self._list("list_resources", ctx)

    async def list_resource_templates(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return await self._list("list_resource_templates", ctx)

    async def list_prompts(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return await self._list("list_prompts", ctx)

    async def get_tool(self, name: str, ctx: RequestContext, scope: Scope) -> ToolComponent | None:
        if "get_tool" not in self._run:
            return await super().get_tool(name, ctx, scope)
        item = await self._run["get_tool"](name, Context(ctx))
        if item is not None and self._per_item and not await self._permitted(ctx, [item]):
            return None
        return None if item is None else self.tool_component(item)

    def tool_component(self, item: Mapping[str, Any]) -> ProviderTool:
        return ProviderTool(self, str(item.get("name", "")), param_headers_of(item.get("inputSchema")))

    def resource_component(self, item: Mapping[str, Any]) -> ProviderResource:
        mime_type = item.get("mimeType")
        return ProviderResource(self, mime_type if isinstance(mime_type, str) else None)

    def prompt_component(self, item: Mapping[str, Any]) -> ProviderPrompt:
        return ProviderPrompt(self, item)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        with internal_errors(logger, "Completion of %s by provider %s raised", argument, self.provider.id):
            suggestions = await self._run["complete"](ref, argument, value, dict(context_arguments), Context(ctx))
        return completion(suggestions)


class ProviderTool:
    """A tool a provider listed: `call` runs the provider's `call_tool`."""

    __slots__ = ("name", "param_headers", "source")

    def __init__(self, source: ProviderSource, name: str, param_headers: Mapping[str, str]) -> None:
        self.source = source
        self.name = name
        self.param_headers = param_headers

    @property
    def max_output_chars(self) -> int | None:
        """The provider's cap on what one call returns (`runtime.output_caps`)."""
        return self.source.provider.max_output_chars

    async def call(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> dict[str, Any]:
        try:
            value = await self.source.run("call_tool", self.name, dict(arguments or {}), Context(request))
        except MCPError:
            raise
        except Exception as exc:
            where = f"Tool {self.name} of provider {self.source.provider.id}"
            return results.tool_failure(self.name, exc, logger, where)
        return results.tool_result(value, self.name)


class ProviderResource:
    """A resource or template a provider listed: `read` runs the provider's `read_resource`."""

    __slots__ = ("mime_type", "source")

    def __init__(self, source: ProviderSource, mime_type: str | None) -> None:
        self.source = source
        self.mime_type = mime_type

    async def read(self, uri: str, variables: Mapping[str, str], request: RequestContext) -> dict[str, Any]:
        with results.component_errors(logger, "Resource %s of provider %s raised", uri, self.source.provider.id):
            value = await self.source.run("read_resource", uri, Context(request))
        if value is None:
            raise ResourceNotFound(uri)
        if results.is_read_resource_result(value):
            return dict(value)
        return results.read_result(value, uri, self.mime_type)


class ProviderPrompt:
    """A prompt a provider listed: `get` checks its listed required arguments, then runs `get_prompt`."""

    __slots__ = ("listed", "source")

    def __init__(self, source: ProviderSource, listed: Mapping[str, Any]) -> None:
        self.source = source
        self.listed = listed

    async def get(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> dict[str, Any]:
        name, given = str(self.listed.get("name", "")), dict(arguments or {})
        required = [
            str(argument.get("name"))
            for argument in self.listed.get("arguments") or ()
            if isinstance(argument, Mapping) and argument.get("required") and argument.get("name") not in given
        ]
        if required:
            raise InvalidParams(f"Missing required arguments for prompt {name}: {', '.join(required)}")
        description = self.listed.get("description")
        with results.component_errors(logger, "Prompt %s of provider %s raised", name, self.source.provider.id):
            value = await self.source.run("get_prompt", name, given, Context(request))
            return results.prompt_result(value, description if isinstance(description, str) else None)
