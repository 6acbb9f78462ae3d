"""Providers: tools, resources and prompts discovered at run time, and the backend that serves them.

Static declarations (`@mcp_django.tool`) are fixed when Django starts. A provider is for
what depends on data: one tool per catalogue row, one resource per table. Write a class,
name it on your app's config, and mcp_django loads it once, when Django starts::

    # shop/mcp.py
    class ProductTools(ToolProvider):
        id = "shop.products"
        name = "Product tools"
        scope = Scope.TEAM

        def list_tools(self, ctx):
            return [{"name": f"price_{p.sku}", "description": f"The price of {p}",
                     "inputSchema": {"type": "object"}} for p in Product.objects.all()]

        def call_tool(self, name, arguments, ctx):
            return str(Product.objects.get(sku=name.removeprefix("price_")).price)

    # shop/apps.py
    class ShopConfig(AppConfig):
        name = "shop"
        mcp_providers = ["shop.mcp.ProductTools"]

Methods may be sync (they run in a worker thread, so the ORM works) or async. Lists are
asked for on every request, with the caller's `Context`; a call, read or get goes to the
first provider the caller may see that lists the name or URI.

`ProviderBackend` composes any number of sources — providers, and in front of them the
static registry's backend when an endpoint serves both — into the one `Backend` the
protocol core talks to. It is the only place that merges lists and dispatches by name.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final, Protocol

from asgiref.sync import iscoroutinefunction, sync_to_async

from mcp_django import content
from mcp_django.context import Context
from mcp_django.declarations import (
    MAX_COMPLETION_VALUES,
    ToolError,
    UriTemplate,
    _is_call_tool_result,
    _message,
    resource_contents,
    to_content,
)
from mcp_django.exceptions import RegistryFrozen
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InternalError, InvalidParams, MCPError, ResourceNotFound
from mcp_django.scopes import Scope, ScopeResolver
from mcp_django.state import control_state

__all__ = [
    "PromptProvider",
    "Provider",
    "ProviderBackend",
    "ProviderRegistry",
    "ProviderSource",
    "ResourceProvider",
    "ToolProvider",
    "provider_registry",
]

logger = logging.getLogger("mcp_django.providers")


class Provider:
    """Base of every provider: a stable `id`, a human `name` and the minimum `scope` to see anything of it.

    Attributes:
        id: unique across the project and stable across releases (the admin and audit trail
            key on it); empty means the dotted path the app config names the class by.
        name: shown to humans (the admin, the manifest); empty means the class name.
        scope: callers below this scope see nothing of the provider, and reach nothing of it.

    Providers are instantiated once, without arguments, and shared by every request: keep
    no per-request state on `self`.
    """

    id: str = ""
    name: str = ""
    scope: Scope = Scope.USER

    required_methods: ClassVar[tuple[str, ...]] = ()
    """The methods a concrete subclass must override (checked at start-up, `mcp_django.E012`)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id!r}>"

    def complete(
        self, ref: Mapping[str, Any], argument: str, value: str, context_arguments: Mapping[str, str], ctx: Context
    ) -> Iterable[str] | Awaitable[Iterable[str]]:
        """Suggest values for `argument` of a prompt or resource template this provider lists (default: none).

        Args:
            ref: the `ref/prompt` (`name`) or `ref/resource` (`uri`) reference.
            argument: the argument's name.
            value: what the user typed so far.
            context_arguments: the values of the other arguments already given.
            ctx: the request's context.
        """
        return ()

    def _missing(self, method: str) -> NotImplementedError:
        return NotImplementedError(f"{type(self).__name__} must implement {method}()")


class ToolProvider(Provider):
    """Serves tools known only at run time: `list_tools(ctx)` names them, `call_tool(name, arguments, ctx)` runs one.

    `list_tools` returns MCP `Tool` dicts (`name`, `description`, `inputSchema`, ...).
    `call_tool` returns a `CallToolResult` dict, or anything a `@tool` function may return
    (a string, content blocks, ...). Raise `ToolError` for a failure the model should read;
    any other exception becomes an `isError` result too, an `MCPError` a protocol error.
    """

    required_methods = ("list_tools", "call_tool")

    def list_tools(self, ctx: Context) -> Iterable[Mapping[str, Any]] | Awaitable[Iterable[Mapping[str, Any]]]:
        """Return the tools the caller of `ctx` may see, in a stable order."""
        raise self._missing("list_tools")

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> Any:
        """Run the tool `name` (one this provider listed for the caller) and return its result."""
        raise self._missing("call_tool")


class ResourceProvider(Provider):
    """Serves resources known only at run time: `list_resources(ctx)` names them, `read_resource(...)` reads one.

    `list_resources` returns MCP `Resource` dicts (`uri`, `name`, `mimeType`, ...);
    `list_resource_templates` (optional) `ResourceTemplate` dicts (`uriTemplate`, `name`, ...).
    `read_resource` is asked only for a URI listed, or matching a listed template, and
    returns a `ReadResourceResult` dict or anything a `@resource` function may return
    (text, bytes, ...); None answers "resource not found".
    """

    required_methods = ("list_resources", "read_resource")

    def list_resources(self, ctx: Context) -> Iterable[Mapping[str, Any]] | Awaitable[Iterable[Mapping[str, Any]]]:
        """Return the resources the caller of `ctx` may see, in a stable order."""
        raise self._missing("list_resources")

    def list_resource_templates(
        self, ctx: Context
    ) -> Iterable[Mapping[str, Any]] | Awaitable[Iterable[Mapping[str, Any]]]:
        """Return the resource templates the caller of `ctx` may see (default: none)."""
        return ()

    def read_resource(self, uri: str, ctx: Context) -> Any:
        """Return the contents at `uri`, or None when there is nothing there."""
        raise self._missing("read_resource")


class PromptProvider(Provider):
    """Serves prompts known only at run time: `list_prompts(ctx)` names them, `get_prompt(...)` renders one.

    `list_prompts` returns MCP `Prompt` dicts (`name`, `description`, `arguments`); required
    arguments are checked before `get_prompt` runs. `get_prompt` returns a `GetPromptResult`
    dict, or what a `@prompt` function may return (a string, messages, content blocks).
    """

    required_methods = ("list_prompts", "get_prompt")

    def list_prompts(self, ctx: Context) -> Iterable[Mapping[str, Any]] | Awaitable[Iterable[Mapping[str, Any]]]:
        """Return the prompts the caller of `ctx` may see, in a stable order."""
        raise self._missing("list_prompts")

    def get_prompt(self, name: str, arguments: dict[str, str], ctx: Context) -> Any:
        """Render the prompt `name` (one this provider listed for the caller) with `arguments`."""
        raise self._missing("get_prompt")


# ------------------------------------------------------------------------------------ the registry

ProviderProblem = tuple[str, str, str]
"""`(check id, message, hint)`: a mistake found while loading providers, reported by a system check."""


class ProviderRegistry:
    """Every provider the installed apps name in `mcp_providers`, keyed by id; loaded once, then frozen."""

    def __init__(self) -> None:
        self._providers: dict[str, Provider] = {}
        self.problems: list[ProviderProblem] = []
        self._frozen = False

    def __repr__(self) -> str:
        return f"<ProviderRegistry: {', '.join(self._providers) or 'empty'}>"

    def __iter__(self) -> Any:
        return iter(self._providers.values())

    def __len__(self) -> int:
        return len(self._providers)

    @property
    def frozen(self) -> bool:
        return self._frozen

    @property
    def providers(self) -> tuple[Provider, ...]:
        """Every provider, in the order the apps (in `INSTALLED_APPS` order) list them."""
        return tuple(self._providers.values())

    def get(self, provider_id: str) -> Provider:
        """Return the provider with this id.

        Raises:
            LookupError: no provider has that id.
        """
        try:
            return self._providers[provider_id]
        except KeyError:
            raise LookupError(f"No MCP provider has the id {provider_id!r}") from None

    def load(self, app_configs: Iterable[Any]) -> None:
        """Register every provider each app config lists in `mcp_providers`; problems go to `problems`."""
        for app_config in app_configs:
            for entry in getattr(app_config, "mcp_providers", None) or ():
                self.add(entry, origin=getattr(app_config, "label", "?"))

    def add(self, entry: Any, *, origin: str = "?") -> Provider | None:
        """Register one provider: a dotted path, a `Provider` subclass, or an instance.

        Returns the registered provider, or None when `entry` is refused (the reason is in `problems`).

        Raises:
            RegistryFrozen: the registry is frozen.
        """
        if self._frozen:
            raise RegistryFrozen("The provider registry is frozen: name providers in an AppConfig's mcp_providers.")
        from django.utils.module_loading import import_string

        where = f"{origin}.mcp_providers"
        path = entry if isinstance(entry, str) else f"{getattr(entry, '__module__', '?')}.{_qualname(entry)}"
        target = entry
        if isinstance(entry, str):
            try:
                target = import_string(entry)
            except ImportError as exc:
                self.problems.append(
                    (
                        "mcp_django.E009",
                        f"{where} names {_short(entry)}, which cannot be imported.",
                        f"Fix the dotted path ({_short(str(exc), 60)}).",
                    )
                )
                return None
        provider = target() if isinstance(target, type) and issubclass(target, Provider) else target
        if not isinstance(provider, (ToolProvider, ResourceProvider, PromptProvider)):
            self.problems.append(
                (
                    "mcp_django.E010",
                    f"{where} names {_short(path)}, which is not a provider.",
                    "Subclass mcp_django.providers.ToolProvider, ResourceProvider or PromptProvider.",
                )
            )
            return None
        missing = [name for name in _required(provider) if _not_overridden(provider, name)]
        if missing:
            self.problems.append(
                (
                    "mcp_django.E012",
                    f"Provider {_short(path)} does not implement {', '.join(missing)}.",
                    f"Override {' and '.join(f'{name}()' for name in missing)} in {type(provider).__name__}.",
                )
            )
            return None
        if not provider.id:
            provider.id = path
        if not provider.name:
            provider.name = type(provider).__name__
        if provider.id in self._providers:
            self.problems.append(
                (
                    "mcp_django.E011",
                    f"Two providers have the id {_short(provider.id)}.",
                    f"Give {_short(path)} an id of its own (class attribute `id`).",
                )
            )
            return None
        self._providers[provider.id] = provider
        return provider

    def freeze(self) -> None:
        """Refuse further providers (called at the end of `MCPDjangoConfig.ready()`)."""
        self._frozen = True


def _qualname(entry: Any) -> str:
    kind = entry if isinstance(entry, type) else type(entry)
    return getattr(kind, "__qualname__", repr(entry))


def _short(text: str, limit: int = 50) -> str:
    quoted = repr(text)
    return quoted if len(quoted) <= limit else f"{quoted[: limit - 4]}...'"


def _required(provider: Provider) -> list[str]:
    names: list[str] = []
    for base in (ToolProvider, ResourceProvider, PromptProvider):
        if isinstance(provider, base):
            names += [name for name in base.required_methods if name not in names]
    return names


def _not_overridden(provider: Provider, name: str) -> bool:
    implementation = getattr(type(provider), name, None)
    return any(implementation is getattr(base, name, None) for base in (ToolProvider, ResourceProvider, PromptProvider))


provider_registry = ProviderRegistry()
"""The project's providers, loaded from every app's `mcp_providers` by `MCPDjangoConfig.ready()`."""


# ------------------------------------------------------------------------------------ serving


class Source(Protocol):
    """What `ProviderBackend` composes: a `Backend` with a minimum `scope` (a registry's backend, a provider)."""

    @property
    def scope(self) -> Scope: ...

    def capabilities(self) -> dict[str, Any]: ...

    async def list_tools(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]: ...

    async def call_tool(self, name: str, arguments: Mapping[str, Any], ctx: RequestContext) -> Mapping[str, Any]: ...

    async def list_resources(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]: ...

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]: ...

    async def read_resource(self, uri: str, ctx: RequestContext) -> Mapping[str, Any]: ...

    async def list_prompts(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]: ...

    async def get_prompt(self, name: str, arguments: Mapping[str, str], ctx: RequestContext) -> Mapping[str, Any]: ...

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]: ...


def _runner(method: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """Async methods as they are; sync ones through `sync_to_async` (a worker thread, where the ORM works)."""
    return method if iscoroutinefunction(method) else sync_to_async(method)


def _items(value: Any, what: str, provider: Provider) -> list[dict[str, Any]]:
    """A provider's list as a list of dicts; anything else is the provider's bug, reported as such."""
    items = list(value or ())
    if not all(isinstance(item, Mapping) for item in items):
        raise TypeError(f"{provider!r}: {what}() must return MCP {what.removeprefix('list_')} dicts")
    return [dict(item) for item in items]


class ProviderSource:
    """Adapts one provider to the `Source` interface: runs its sync or async methods, converts what they return."""

    __slots__ = ("_run", "provider")

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self._run: dict[str, Callable[..., Awaitable[Any]]] = {
            name: _runner(getattr(provider, name))
            for name in (
                "list_tools",
                "call_tool",
                "list_resources",
                "list_resource_templates",
                "read_resource",
                "list_prompts",
                "get_prompt",
                "complete",
            )
            if callable(getattr(provider, name, None))
        }

    def __repr__(self) -> str:
        return f"<ProviderSource {self.provider.id!r}>"

    @property
    def scope(self) -> Scope:
        """The provider's minimum scope: the admin's override (`ProviderState`), else the code's."""
        return control_state.provider_scope(self.provider.id, self.provider.scope)

    @property
    def enabled(self) -> bool:
        """False when the admin switched the provider off: it then serves nothing."""
        return control_state.provider_enabled(self.provider.id)

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

    async def _list(self, method: str, ctx: RequestContext) -> list[dict[str, Any]]:
        if method not in self._run:
            return []
        return _items(await self._run[method](Context(ctx)), method, self.provider)

    async def list_tools(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._list("list_tools", ctx)

    async def call_tool(self, name: str, arguments: Mapping[str, Any], ctx: RequestContext) -> Mapping[str, Any]:
        try:
            value = await self._run["call_tool"](name, dict(arguments or {}), Context(ctx))
        except MCPError:
            raise
        except ToolError as exc:
            return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
        except Exception as exc:
            logger.exception("Tool %s of provider %s raised", name, self.provider.id)
            return {"content": [{"type": "text", "text": f"Error executing tool {name}: {exc}"}], "isError": True}
        if isinstance(value, content.ToolResult) or _is_call_tool_result(value):
            return dict(value)
        return {"content": to_content(value, name)}

    async def list_resources(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._list("list_resources", ctx)

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._list("list_resource_templates", ctx)

    async def read_resource(self, uri: str, ctx: RequestContext, mime_type: str | None = None) -> Mapping[str, Any]:
        try:
            value = await self._run["read_resource"](uri, Context(ctx))
        except MCPError:
            raise
        except Exception:
            logger.exception("Resource %s of provider %s raised", uri, self.provider.id)
            raise InternalError() from None
        if value is None:
            raise ResourceNotFound(uri)
        if isinstance(value, Mapping) and isinstance(value.get("contents"), list):
            return dict(value)
        return {"contents": resource_contents(value, uri, mime_type)}

    async def list_prompts(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._list("list_prompts", ctx)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str], ctx: RequestContext, listed: Mapping[str, Any] | None = None
    ) -> Mapping[str, Any]:
        listed = listed or {}
        required = [
            str(argument.get("name"))
            for argument in listed.get("arguments") or ()
            if isinstance(argument, Mapping) and argument.get("required") and argument.get("name") not in arguments
        ]
        if required:
            raise InvalidParams(f"Missing required arguments for prompt {name}: {', '.join(required)}")
        try:
            value = await self._run["get_prompt"](name, dict(arguments), Context(ctx))
            if isinstance(value, Mapping) and "messages" in value:
                result = dict(value)
            else:
                items = value if isinstance(value, list | tuple) else [value]
                result = {"messages": [_message(item) for item in items]}
        except MCPError:
            raise
        except Exception:
            logger.exception("Prompt %s of provider %s raised", name, self.provider.id)
            raise InternalError() from None
        if "description" not in result and listed.get("description"):
            result = {"description": listed["description"], **result}
        return result

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        name, value = str(argument.get("name", "")), str(argument.get("value", ""))
        try:
            suggestions = await self._run["complete"](ref, name, value, dict(context_arguments), Context(ctx))
        except MCPError:
            raise
        except Exception:
            logger.exception("Completion of %s by provider %s raised", name, self.provider.id)
            raise InternalError() from None
        values = [str(item) for item in suggestions or ()]
        return {
            "values": values[:MAX_COMPLETION_VALUES],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETION_VALUES,
        }


@functools.lru_cache(maxsize=1024)
def _template(uri_template: str) -> UriTemplate | None:
    try:
        return UriTemplate(uri_template)
    except Exception:  # a provider listed a template RFC 6570 rejects: it matches nothing
        return None


_FEATURES: Final = ("tools", "resources", "prompts", "completions")


class ProviderBackend:
    """Serves several sources as one `Backend`: lists merge, and the first source listing a name serves it.

    Sources are asked in order, and only those the caller's scope reaches; for two items of
    the same name (or URI), the earlier source's wins. An endpoint serving the static
    registry and providers puts the registry's backend first, so static declarations win.
    Whatever no visible source lists answers exactly as an unknown name.

    Args:
        sources: `RegistryBackend`s and `ProviderSource`s, in order of precedence.
        scopes: works out the caller's scope for a request; None means the caller sees nothing.
    """

    __slots__ = ("_features", "scopes", "sources")

    def __init__(self, sources: Sequence[Source], scopes: ScopeResolver) -> None:
        self.sources = tuple(sources)
        self.scopes = scopes
        self._features = tuple(frozenset(source.capabilities()) for source in self.sources)

    def __repr__(self) -> str:
        return f"<ProviderBackend {list(self.sources)!r}>"

    def capabilities(self) -> dict[str, Any]:
        served: dict[str, Any] = {}
        for source in self.sources:
            for feature, value in source.capabilities().items():
                if feature in _FEATURES:
                    served.setdefault(feature, dict(value))
        return served

    async def _visible(self, ctx: RequestContext, feature: str) -> list[Source]:
        scope = await self.scopes(ctx)
        if scope is None:
            return []
        return [
            source
            for source, features in zip(self.sources, self._features, strict=True)
            if feature in features and source.scope <= scope and getattr(source, "enabled", True)
        ]

    async def _merged(self, ctx: RequestContext, feature: str, method: str, key: str) -> list[Mapping[str, Any]]:
        seen: set[Any] = set()
        merged: list[Mapping[str, Any]] = []
        for source in await self._visible(ctx, feature):
            for item in await getattr(source, method)(ctx):
                if item.get(key) not in seen:
                    seen.add(item.get(key))
                    merged.append(item)
        return merged

    async def _owner(
        self, ctx: RequestContext, feature: str, method: str, key: str, value: str
    ) -> tuple[Source, Mapping[str, Any]] | None:
        """The first visible source whose `method` list has an item with `key` == `value`, and that item."""
        return await self._first(ctx, feature, method, lambda item: item.get(key) == value)

    async def _first(
        self, ctx: RequestContext, feature: str, method: str, matches: Callable[[Mapping[str, Any]], bool]
    ) -> tuple[Source, Mapping[str, Any]] | None:
        """The first visible source whose `method` list has an item that `matches`, and that item."""
        for source in await self._visible(ctx, feature):
            for item in await getattr(source, method)(ctx):
                if matches(item):
                    return source, item
        return None

    async def list_tools(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._merged(ctx, "tools", "list_tools", "name")

    async def call_tool(self, name: str, arguments: Mapping[str, Any], ctx: RequestContext) -> Mapping[str, Any]:
        found = await self._owner(ctx, "tools", "list_tools", "name", name)
        if found is None:
            raise InvalidParams(f"Unknown tool: {name}")
        return await found[0].call_tool(name, arguments, ctx)

    async def list_resources(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._merged(ctx, "resources", "list_resources", "uri")

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._merged(ctx, "resources", "list_resource_templates", "uriTemplate")

    async def read_resource(self, uri: str, ctx: RequestContext) -> Mapping[str, Any]:
        found = await self._owner(ctx, "resources", "list_resources", "uri", uri)
        if found is None:
            found = await self._template_owner(ctx, uri)
        if found is None:
            raise ResourceNotFound(uri)
        source, item = found
        if isinstance(source, ProviderSource):
            mime_type = item.get("mimeType")
            return await source.read_resource(uri, ctx, mime_type if isinstance(mime_type, str) else None)
        return await source.read_resource(uri, ctx)

    async def _template_owner(self, ctx: RequestContext, uri: str) -> tuple[Source, Mapping[str, Any]] | None:
        def matches(item: Mapping[str, Any]) -> bool:
            template = _template(str(item.get("uriTemplate", "")))
            return template is not None and template.match(uri) is not None

        return await self._first(ctx, "resources", "list_resource_templates", matches)

    async def list_prompts(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._merged(ctx, "prompts", "list_prompts", "name")

    async def get_prompt(self, name: str, arguments: Mapping[str, str], ctx: RequestContext) -> Mapping[str, Any]:
        found = await self._owner(ctx, "prompts", "list_prompts", "name", name)
        if found is None:
            raise InvalidParams(f"Unknown prompt: {name}")
        source, item = found
        if isinstance(source, ProviderSource):
            return await source.get_prompt(name, arguments, ctx, item)
        return await source.get_prompt(name, arguments, ctx)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        found: tuple[Source, Mapping[str, Any]] | None
        if ref.get("type") == "ref/prompt":
            target = str(ref.get("name", ""))
            found = await self._owner(ctx, "prompts", "list_prompts", "name", target)
            if found is None:
                raise InvalidParams(f"Unknown prompt: {target}")
        elif ref.get("type") == "ref/resource":
            target = str(ref.get("uri", ""))
            found = await self._owner(ctx, "resources", "list_resource_templates", "uriTemplate", target)
            found = found or await self._owner(ctx, "resources", "list_resources", "uri", target)
            if found is None:
                raise InvalidParams(f"Unknown resource: {target}")
        else:
            raise InvalidParams(f"Unknown reference type: {ref.get('type')}")
        return await found[0].complete(ref, argument, context_arguments, ctx)
