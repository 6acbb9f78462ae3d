"""Registries of static declarations, and the source that serves one (`RegistrySource`).

A `Registry` collects the tools, resources, prompts and completions declared on
it; `mcp_django.default_registry` is the one the module-level decorators use.
Declarations happen at import time (the app's `ready()` imports each app's
`mcp.py`), then the registry is frozen so that nothing changes while it serves.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, overload

from mcp_django import content
from mcp_django.declarations import (
    NAME_PATTERN,
    App,
    Approval,
    Completion,
    CompletionRef,
    Icon,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
    function_name,
    lean,
)
from mcp_django.declarations.common import allowed, reached
from mcp_django.exceptions import RegistryFrozen
from mcp_django.permissions import Permissions, granted, permitted
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.results import completion
from mcp_django.scopes import Scope, ScopeResolver
from mcp_django.sources import Source
from mcp_django.sources.composite import CompositeBackend

if TYPE_CHECKING:
    import mcp_types

F = TypeVar("F", bound=Callable[..., Any])

_registries: list[weakref.ref[Registry]] = []


def all_registries() -> list[Registry]:
    """Return every `Registry` still alive, in creation order."""
    alive = [registry for ref in _registries if (registry := ref()) is not None]
    _registries[:] = [weakref.ref(registry) for registry in alive]
    return alive


class Registry:
    """A named collection of tools, resources, prompts and completions.

    Args:
        name: shown in error messages and system checks.
    """

    def __init__(self, name: str = "default") -> None:
        self.name = name
        self._tools: dict[str, Tool] = {}
        self._resources: dict[str, Resource] = {}
        self._templates: dict[str, ResourceTemplate] = {}
        self._prompts: dict[str, Prompt] = {}
        self._completions: dict[CompletionRef, Completion] = {}
        self._duplicates: list[str] = []
        self._frozen = False
        self._lists: dict[tuple[Scope, bool], dict[str, tuple[dict[str, Any], ...]]] = {}
        self._guarded: dict[str, dict[str, Permissions]] = {kind: {} for kind in _LIST_KEYS}
        self._backend: RegistryBackend | None = None
        self._source: RegistrySource | None = None
        _registries.append(weakref.ref(self))

    def __repr__(self) -> str:
        resources = len(self._resources) + len(self._templates)
        counts = f"{len(self._tools)} tools, {resources} resources, {len(self._prompts)} prompts"
        return f"<Registry {self.name!r}: {counts}>"

    @property
    def tools(self) -> Mapping[str, Tool]:
        return MappingProxyType(self._tools)

    @property
    def resources(self) -> Mapping[str, Resource]:
        """Fixed-URI resources by URI."""
        return MappingProxyType(self._resources)

    @property
    def resource_templates(self) -> Mapping[str, ResourceTemplate]:
        """Resource templates by URI template."""
        return MappingProxyType(self._templates)

    @property
    def prompts(self) -> Mapping[str, Prompt]:
        return MappingProxyType(self._prompts)

    @property
    def completions(self) -> Mapping[CompletionRef, Completion]:
        return MappingProxyType(self._completions)

    @property
    def frozen(self) -> bool:
        return self._frozen

    def _check_open(self, what: str) -> None:
        if self._frozen:
            raise RegistryFrozen(
                f"Registry {self.name!r} is frozen: cannot declare {what}. Declare tools, resources and prompts "
                "in a module loaded before the app registry is ready (an app's mcp.py)."
            )

    def _store(self, table: dict[Any, Any], key: Any, item: Any, what: str, kind: str = "") -> None:
        self._check_open(what)
        if key in table:
            self._duplicates.append(f"{what} is declared twice ({_origin(table[key].fn)} and {_origin(item.fn)})")
            return
        table[key] = item
        if kind and item.permissions:
            self._guarded[kind][key] = item.permissions
        self._lists.clear()

    def add_tool(self, tool: Tool) -> Tool:
        """Register an already-built `Tool`."""
        self._store(self._tools, tool.name, tool, f"tool {tool.name!r}", "tools")
        return tool

    def add_resource(self, resource: Resource) -> Resource:
        """Register an already-built `Resource` or `ResourceTemplate`."""
        if isinstance(resource, ResourceTemplate):
            what = f"resource template {resource.uri!r}"
            self._store(self._templates, resource.uri, resource, what, "resource_templates")
        else:
            self._store(self._resources, resource.uri, resource, f"resource {resource.uri!r}", "resources")
        return resource

    def add_prompt(self, prompt: Prompt) -> Prompt:
        """Register an already-built `Prompt`."""
        self._store(self._prompts, prompt.name, prompt, f"prompt {prompt.name!r}", "prompts")
        return prompt

    def add_completion(self, completion: Completion) -> Completion:
        """Register an already-built `Completion`."""
        kind, target, argument = completion.ref
        what = f"completion for {kind.removeprefix('ref/')} {target!r} argument {argument!r}"
        self._store(self._completions, completion.ref, completion, what)
        return completion

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | mcp_types.ToolAnnotations | None = None,
        icons: Sequence[Icon | mcp_types.Icon] | None = None,
        meta: Mapping[str, Any] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured_output: bool | None = None,
        scope: Scope | str = Scope.USER,
        permissions: str | Sequence[str] | None = None,
        atomic: bool | None = None,
        using: str | Sequence[str] | None = None,
        timeout: float | None = None,
        max_output_chars: int | None = None,
        task: str | None = None,
        task_inputs: Mapping[str, Mapping[str, Any]] | None = None,
        app: str | App | Mapping[str, Any] | None = None,
        approval: str | Approval | None = None,
    ) -> Callable[[F], F]: ...

    def tool(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Declare a function as a tool; usable bare (`@tool`) or called (`@tool(name=...)`).

        The input schema comes from the parameters' type hints (descriptions from
        the docstring's `Args:` section or `Annotated[..., Field(description=...)]`);
        a parameter annotated `Context` receives the request context instead.
        The output schema comes from the return annotation. `scope` is the minimum
        `Scope` a caller needs to see and call it; `timeout` the seconds a call may run.
        See `Tool` for the options.
        """

        def declare(function: F) -> F:
            self._check_open(f"tool {options.get('name') or function_name(function)!r}")
            self.add_tool(Tool(function, **options))
            return function

        return declare(fn) if fn is not None else declare

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = "text/plain",
        size: int | None = None,
        icons: Sequence[Icon | mcp_types.Icon] | None = None,
        annotations: content.Annotations | mcp_types.Annotations | None = None,
        meta: Mapping[str, Any] | None = None,
        scope: Scope | str = Scope.USER,
        permissions: str | Sequence[str] | None = None,
    ) -> Callable[[F], F]:
        """Declare a function as the resource at `uri`, or for every URI matching it when it is a template.

        A URI with `{...}` expressions is an RFC 6570 template; its variables are
        passed to the function as keyword arguments. The function returns a
        string (text), bytes (a base64 blob), `content.resource_contents()`
        dicts, or None for "not found". `scope` is the minimum `Scope` a caller needs to see and read it.
        """

        options: dict[str, Any] = {"name": name, "title": title, "description": description, "mime_type": mime_type}
        options |= {"size": size, "icons": icons, "annotations": annotations, "meta": meta}
        options |= {"scope": scope, "permissions": permissions}

        def declare(function: F) -> F:
            self._check_open(f"resource {uri!r}")
            if "{" in uri:
                self.add_resource(ResourceTemplate(function, uri, **options))
            else:
                self.add_resource(Resource(function, uri, **options))
            return function

        return declare

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Icon | mcp_types.Icon] | None = None,
        meta: Mapping[str, Any] | None = None,
        scope: Scope | str = Scope.USER,
        permissions: str | Sequence[str] | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Declare a function as a prompt; usable bare or called. Its parameters are the prompt's arguments.

        `scope` is the minimum `Scope` a caller needs to see and get it.
        """

        def declare(function: F) -> F:
            self._check_open(f"prompt {options.get('name') or function_name(function)!r}")
            self.add_prompt(Prompt(function, **options))
            return function

        return declare(fn) if fn is not None else declare

    def completion(self, *, prompt: str | None = None, resource: str | None = None, argument: str) -> Callable[[F], F]:
        """Declare a function that completes `argument` of a prompt or of a resource template.

        The function takes `(value)` or `(value, context_arguments)` (and optionally
        a `Context`) and returns an iterable of strings.
        """

        def declare(function: F) -> F:
            self._check_open(f"completion for {argument!r}")
            self.add_completion(Completion(function, prompt=prompt, resource=resource, argument=argument))
            return function

        return declare

    def freeze(self) -> None:
        """Refuse further declarations. The lists the backend serves are computed when first asked for (`lists`):
        a tool's definition compiles on first use (`declarations.signatures.plain_annotation`), which a
        management command that never serves MCP does not pay (issue 34)."""
        self._frozen = True

    def compile(self) -> None:
        """Compute the lists for every scope now (a serving process does, before its first listing)."""
        for scope in Scope:
            self.lists(scope)

    def name_errors(self) -> list[str]:
        """Return a message for each name MCP's rules reject, each duplicate and each dangling completion.

        Tool and prompt names must match `^[A-Za-z0-9_.-]{1,128}$`.
        """
        errors: list[str] = []
        for kind, names in (("tool", self._tools), ("prompt", self._prompts)):
            errors += [
                f"{kind} name {name!r} must be 1-128 characters of A-Z a-z 0-9 _ - ."
                for name in names
                if not NAME_PATTERN.fullmatch(name)
            ]
        errors += self._duplicates
        for kind, target, argument in self._completions:
            if kind == "ref/prompt":
                prompt = self._prompts.get(target)
                if prompt is None:
                    errors.append(f"completion names unknown prompt {target!r}")
                elif argument not in prompt.argument_names:
                    errors.append(f"completion names unknown argument {argument!r} of prompt {target!r}")
            else:
                template = self._templates.get(target)
                if template is None and target not in self._resources:
                    errors.append(f"completion names unknown resource {target!r}")
                elif template is not None and argument not in template.signature.names:
                    errors.append(f"completion names unknown argument {argument!r} of resource {target!r}")
        return errors

    def lists(self, scope: Scope = Scope.SYSTEM, *, verbose: bool = False) -> Mapping[str, tuple[dict[str, Any], ...]]:
        """The wire lists a caller of `scope` sees (`verbose`: tools as built, not lean), sorted; computed once."""
        lists = self._lists.get((scope, verbose))
        if lists is None:
            tools = (tool.definition(verbose) for _, tool in sorted(self._tools.items()) if reached(tool, scope))
            lists = self._lists[scope, verbose] = {
                "tools": tuple(tools),
                "resources": tuple(
                    item.wire
                    for item in sorted(self._resources.values(), key=lambda r: (r.name, r.uri))
                    if reached(item, scope)
                ),
                "resource_templates": tuple(
                    item.wire
                    for item in sorted(self._templates.values(), key=lambda r: (r.name, r.uri))
                    if reached(item, scope)
                ),
                "prompts": tuple(prompt.wire for _, prompt in sorted(self._prompts.items()) if reached(prompt, scope)),
            }
        return lists

    def capabilities(self) -> dict[str, Any]:
        """The `ServerCapabilities` this registry can serve."""
        capabilities: dict[str, Any] = {}
        if self._tools:
            capabilities["tools"] = {}
        if self._resources or self._templates:
            capabilities["resources"] = {}
        if self._prompts:
            capabilities["prompts"] = {}
        if self._prompts or self._templates:
            capabilities["completions"] = {}
        return capabilities

    def backend(self, scopes: ScopeResolver | None = None) -> RegistryBackend:
        """Return the protocol `Backend` serving this registry.

        Args:
            scopes: works out the caller's scope for a request (an endpoint's `resolve_scope`);
                the backend then serves only what that scope reaches, and nothing to a caller
                without scope. Without it every declaration is served to everyone: use that
                only in process (tests), never behind a transport.
        """
        if scopes is not None:
            return RegistryBackend(self, scopes)
        if self._backend is None:
            self._backend = RegistryBackend(self)
        return self._backend

    def source(self) -> RegistrySource:
        """This registry as a source of components (for a `CompositeBackend`)."""
        if self._source is None:
            self._source = RegistrySource(self)
        return self._source

    def matching_template(
        self, uri: str, scope: Scope = Scope.SYSTEM
    ) -> tuple[ResourceTemplate, dict[str, str]] | None:
        """Return the first template a caller of `scope` reaches that `uri` matches, and the variables it binds."""
        for template in self._templates.values():
            if reached(template, scope) is None:
                continue
            variables = template.template.match(uri)
            if variables is not None:
                return template, variables
        return None


_LIST_KEYS: Final = {"tools": "name", "resources": "uri", "resource_templates": "uriTemplate", "prompts": "name"}
"""Each list the registry serves, and the member naming an item of it."""


def _origin(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


class RegistrySource(Source):
    """A `Registry` as a source: its lists are computed once per scope, its lookups are dict lookups.

    Every declaration carries its own minimum scope, and may require Django permissions; the source
    answers only with those the caller's scope reaches and whose permissions it holds.
    """

    __slots__ = ("registry",)

    distinct = True

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def __repr__(self) -> str:
        return f"<RegistrySource {self.registry.name!r}>"

    def capabilities(self) -> dict[str, Any]:
        return self.registry.capabilities()

    def manifest(self) -> dict[str, Any]:
        return {"kind": "registry", "name": self.registry.name, "namespace": ""}

    async def _list(self, kind: str, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        items = self.registry.lists(scope, verbose=lean.verbose(ctx))[kind]
        guarded, key = self.registry._guarded[kind], _LIST_KEYS[kind]
        return await permitted(ctx, items, lambda item: guarded.get(item[key], ())) if guarded else items

    async def list_tools(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return await self._list("tools", ctx, scope)

    async def list_resources(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return await self._list("resources", ctx, scope)

    async def list_resource_templates(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return await self._list("resource_templates", ctx, scope)

    async def list_prompts(self, ctx: RequestContext, scope: Scope) -> Sequence[Mapping[str, Any]]:
        return await self._list("prompts", ctx, scope)

    async def get_tool(self, name: str, ctx: RequestContext, scope: Scope) -> Tool | None:
        return await allowed(self.registry._tools.get(name), ctx, scope)

    async def get_prompt(self, name: str, ctx: RequestContext, scope: Scope) -> Prompt | None:
        return await allowed(self.registry._prompts.get(name), ctx, scope)

    async def get_resource(self, uri: str, ctx: RequestContext, scope: Scope) -> Resource | None:
        return await allowed(self.registry._resources.get(uri), ctx, scope)

    async def get_resource_template(
        self, uri_template: str, ctx: RequestContext, scope: Scope
    ) -> ResourceTemplate | None:
        return await allowed(self.registry._templates.get(uri_template), ctx, scope)

    async def match_resource_template(
        self, uri: str, ctx: RequestContext, scope: Scope
    ) -> tuple[ResourceTemplate, dict[str, str]] | None:
        found = self.registry.matching_template(uri, scope)
        return found if found is None or await granted(ctx, found[0].permissions) else None

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        kind: Literal["ref/prompt", "ref/resource"]
        if ref.get("type") == "ref/prompt":
            kind, target = "ref/prompt", str(ref.get("name", ""))
        else:
            kind, target = "ref/resource", str(ref.get("uri", ""))
        declared = self.registry._completions.get((kind, target, argument))
        if declared is None:
            return completion(())
        return await declared.complete(value, context_arguments, ctx)


class RegistryBackend(CompositeBackend):
    """The `Backend` serving one registry alone: a `CompositeBackend` over its `RegistrySource`."""

    __slots__ = ()

    def __init__(self, registry: Registry, scopes: ScopeResolver | None = None) -> None:
        super().__init__([registry.source()], scopes)

    @property
    def registry(self) -> Registry:
        source = self.sources[0]
        assert isinstance(source, RegistrySource)
        return source.registry


default_registry = Registry("default")
"""The registry the module-level `mcp_django.tool`, `resource`, `prompt` and `completion` declare on."""
