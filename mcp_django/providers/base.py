"""The provider base classes: what a provider implements, checked at start-up."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from mcp_django.context import Context
from mcp_django.scopes import Scope


class Provider:
    """Base of every provider: a stable `id`, a human `name` and the minimum `scope` to see anything of it.

    Attributes:
        id: unique across the project and stable across releases (the admin and audit trail
            key on it); empty means the dotted path the app config names the class by.
        name: shown to humans (the admin, the manifest); empty means the class name.
        scope: callers below this scope see nothing of the provider, and reach nothing of it.
        permissions: Django permissions (one name or a list) a caller must hold, all of them, to see or
            reach anything of the provider; `permissions_of(item)` adds per listed item.
        atomic: as `@tool(atomic=)` for the provider's sync `call_tool` (a toolset's: for each of its
            tools): None follows `ATOMIC_REQUESTS`, True is atomic on `using` too (default: the
            `default` database), False never (docs/declarations.md).
        using: the database alias (or aliases) `atomic = True` makes the calls atomic on.
        max_output_chars: as `@tool(max_output_chars=)` for each of the provider's (or toolset's) tools that
            sets none of its own; None follows the endpoint's cap (docs/side-effects.md#output-caps).
        apps: the views of the provider's tools for hosts of MCP Apps, by tool name: what `@tool(app=)`
            takes (a template name, an `App` or its keyword arguments); served by `mcp_django.ui` on the
            endpoints that serve the provider (docs/apps.md).

    Providers are instantiated once, without arguments, and shared by every request: keep
    no per-request state on `self`.
    """

    id: str = ""
    name: str = ""
    scope: Scope = Scope.USER
    permissions: str | Sequence[str] = ()
    atomic: bool | None = None
    using: str | Sequence[str] | None = None
    max_output_chars: int | None = None
    apps: Mapping[str, Any] = {}

    required_methods: ClassVar[tuple[str, ...]] = ()
    """The methods a concrete subclass must override (checked at start-up, `mcp_django.E012`)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id!r}>"

    def permissions_of(self, item: Mapping[str, Any]) -> Sequence[str]:
        """The Django permissions one listed tool, resource, template or prompt requires beyond `permissions`.

        The default requires none; override it to guard some items: what the caller lacks is left out of
        its lists and is unknown to calls, reads and gets. Runs on the event loop: look only at `item`.
        """
        return ()

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

    def output_cap_problem(self) -> str | None:
        """What is wrong with `max_output_chars` (check `mcp_django.E026`), or None."""
        cap = self.max_output_chars
        if cap is None or (isinstance(cap, int) and not isinstance(cap, bool) and cap > 0):
            return None
        return f"{type(self).__name__}.max_output_chars must be a positive integer or None."

    def _missing(self, method: str) -> NotImplementedError:
        return NotImplementedError(f"{type(self).__name__} must implement {method}()")


class ToolProvider(Provider):
    """Serves tools known only at run time: `list_tools(ctx)` names them, `call_tool(name, arguments, ctx)` runs one.

    `list_tools` returns MCP `Tool` dicts (`name`, `description`, `inputSchema`, ...).
    `call_tool` returns a `CallToolResult` dict, or anything a `@tool` function may return
    (a string, content blocks, ...). Raise `ToolError` for a failure the model should read;
    any other exception becomes an `isError` result too, an `MCPError` a protocol error.

    A call finds its tool by scanning `list_tools`; a provider that can find one name directly
    may also define `get_tool(name, ctx)`, returning that tool's dict (or None), and a call
    then skips the list.
    """

    required_methods = ("list_tools", "call_tool")

    def list_tools(self, ctx: Context) -> Iterable[Mapping[str, Any]] | Awaitable[Iterable[Mapping[str, Any]]]:
        """Return the tools the caller of `ctx` may see, in a stable order."""
        raise self._missing("list_tools")

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> object:
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

    def read_resource(self, uri: str, ctx: Context) -> object:
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

    def get_prompt(self, name: str, arguments: dict[str, str], ctx: Context) -> object:
        """Render the prompt `name` (one this provider listed for the caller) with `arguments`."""
        raise self._missing("get_prompt")
