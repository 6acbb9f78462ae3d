"""The discovery modes' operation hooks: what `tools/list` shows and what `tools/call` reaches, per mode.

- `search`: `tools/list` shows the search tool (and the tools the site pins); the search tool ranks the
  caller's catalogue by BM25 (`ranking`) and returns the best matches' definitions.
- `grouped`: `tools/list` shows one dispatcher tool per group of tools (a hub remote's namespace, a
  toolset's model); calling it with `action` (a tool's name) and `arguments` calls that tool.

The caller's catalogue is always what a flat `tools/list` would give them (`visible_tools`): the endpoint's
pipeline re-entered for them (the admin's switches, then the interceptor chain, then the backend: scopes,
permissions, remotes), never a list of its own. A tool is called by its real name through the same
pipeline, whether listed or not: one lookup in the `CompositeBackend`, checked as any call, audited under
its own name (a dispatcher's call is never audited as such: it re-enters as the tool's own call).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Final, Literal

from mcp_django.catalogues.ranking import Index
from mcp_django.protocol import MessageHandler
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.hooks import CallNext
from mcp_django.protocol.results import tool_error

Mode = Literal["flat", "search", "grouped"]
MODES: Final[tuple[Mode, ...]] = ("flat", "search", "grouped")

SEARCH_NAME: Final = "search_tools"
SEARCH_LIMIT: Final = 20
SEARCH_TOOL: Final[Mapping[str, Any]] = {
    "name": SEARCH_NAME,
    "description": (
        "Find this server's tools for a task: returns the best matches' definitions, best first. "
        "Then call a found tool by its name."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The task, in words"},
            "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_LIMIT, "default": 5},
        },
        "required": ["query"],
    },
}
HELP: Final = "help"

_reentered: ContextVar[bool] = ContextVar("mcp_django_catalogues_reentered", default=False)


async def visible_tools(ctx: RequestContext) -> list[dict[str, Any]]:
    """Every tool the caller may see here, as a flat `tools/list` gives it: the endpoint's pipeline re-entered,
    page by page, with the discovery modes out of the way."""
    handler: MessageHandler = ctx.endpoint.handler
    token = _reentered.set(True)
    try:
        tools: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        while True:
            page = await handler.perform("tools/list", params, ctx)
            tools += page.get("tools", [])
            if not page.get("nextCursor"):
                return tools
            params = {"cursor": page["nextCursor"]}
    finally:
        _reentered.reset(token)


async def _call_directly(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """`tools/call` of a tool by its real name, through the endpoint's whole pipeline, as if the client sent it."""
    token = _reentered.set(True)
    try:
        handler: MessageHandler = ctx.endpoint.handler
        return await handler.perform("tools/call", params, ctx)
    finally:
        _reentered.reset(token)


def _page(ctx: RequestContext, tools: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
    handler: MessageHandler = ctx.endpoint.handler
    return handler.page("tools", tools, params)


def _found(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A `CallToolResult` carrying tool definitions: as JSON text for the model, and as structured content."""
    listed = [dict(tool) for tool in tools]
    return {"content": [{"type": "text", "text": json.dumps(listed)}], "structuredContent": {"tools": listed}}


class ModeHook:
    """A discovery mode's operation hook: `tools/list` answered by `listing()`, `tools/call` by `call()`;
    every other operation, and every one the modes re-enter the pipeline with, goes on as it came."""

    __slots__ = ()

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        if _reentered.get() or method not in ("tools/list", "tools/call"):
            return await call_next(params)
        if method == "tools/list":
            return _page(ctx, await self.listing(ctx), params)
        return await self.call(params, ctx, call_next)

    async def listing(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        """What `tools/list` shows the caller (paged as any list)."""
        raise NotImplementedError(f"{type(self).__name__} must define listing()")

    async def call(self, params: dict[str, Any], ctx: RequestContext, call_next: CallNext) -> dict[str, Any]:
        """The result of `tools/call`; `call_next(params)` for a call of a tool by its own name."""
        raise NotImplementedError(f"{type(self).__name__} must define call()")


class SearchHook(ModeHook):
    """`search` mode: `tools/list` shows the search tool and the pinned tools; the search tool ranks the
    caller's catalogue; every other call goes on as it came."""

    __slots__ = ("pinned",)

    def __init__(self, pinned: Sequence[str] = ()) -> None:
        self.pinned = frozenset(pinned)

    async def listing(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        pinned = [tool for tool in await visible_tools(ctx) if tool["name"] in self.pinned] if self.pinned else []
        return [SEARCH_TOOL, *pinned]

    async def call(self, params: dict[str, Any], ctx: RequestContext, call_next: CallNext) -> dict[str, Any]:
        if params.get("name") != SEARCH_NAME:
            return await call_next(params)
        arguments = params.get("arguments") or {}
        query, limit = arguments.get("query"), arguments.get("limit", 5)
        if not isinstance(query, str) or not query.strip():
            return tool_error(f"{SEARCH_NAME} needs a query: the task, in words.")
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= SEARCH_LIMIT:
            return tool_error(f"{SEARCH_NAME}: limit must be a whole number from 1 to {SEARCH_LIMIT}.")
        return _found(Index(await visible_tools(ctx)).search(query, limit))


def _keys(name: str, namespaces: Sequence[str]) -> tuple[str, str]:
    """A tool's two candidate groups: the noun after its verb, in the singular (`list_books`, `get_book`:
    `book`), and its first word (`about_dune`: `about`); a hub remote's namespace (`gh_create_issue`: `gh`)
    or the part before a dot (`catalogue.stats`: `catalogue`) is both."""
    for namespace in namespaces:
        if namespace and name.startswith(f"{namespace}_"):
            return namespace, namespace
    if "." in name:
        return (name.partition(".")[0],) * 2
    first, _, noun = name.partition("_")
    noun = noun or name
    return (noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun), first


def groups(tools: Sequence[Mapping[str, Any]], namespaces: Sequence[str] = ()) -> dict[str, list[Mapping[str, Any]]]:
    """The groups of two tools or more, in the catalogue's order, whose name no tool has: by noun (a toolset's
    `list_books`, `get_book`, ...: `book`) where two tools share one, else by first word, else none."""
    keyed = [(tool, _keys(tool["name"], namespaces)) for tool in tools]
    names = {tool["name"] for tool in tools}
    found: dict[str, list[Mapping[str, Any]]] = {}
    for position in (0, 1):
        counts = Counter(keys[position] for tool, keys in keyed)
        rest = []
        for tool, keys in keyed:
            key = keys[position]
            if counts[key] > 1 and key not in names:
                found.setdefault(key, []).append(tool)
            else:
                rest.append((tool, keys))
        keyed = rest
    return found


def _dispatcher(group: str, members: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    actions = ", ".join(tool["name"] for tool in members)
    return {
        "name": group,
        "description": (
            f"The {group} tools: {actions}. Call one with action (its name) and arguments (its arguments); "
            f"action {HELP} returns their definitions."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"action": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["action"],
        },
    }


def grouped_listing(tools: Sequence[Mapping[str, Any]], namespaces: Sequence[str] = ()) -> list[dict[str, Any]]:
    """What `grouped` mode lists of `tools`: a dispatcher for each group, where its first member was, and
    the tools of no group as they are."""
    grouped = groups(tools, namespaces)
    first = {id(members[0]): group for group, members in grouped.items()}
    members = {id(tool) for group in grouped.values() for tool in group}
    listed: list[dict[str, Any]] = []
    for tool in tools:
        if id(tool) in first:
            listed.append(_dispatcher(first[id(tool)], grouped[first[id(tool)]]))
        elif id(tool) not in members:
            listed.append(dict(tool))
    return listed


class GroupedHook(ModeHook):
    """`grouped` mode: `tools/list` shows a dispatcher per group; a dispatcher's call is its action's call."""

    __slots__ = ("namespaces",)

    def __init__(self, namespaces: Sequence[str] = ()) -> None:
        self.namespaces = tuple(sorted(namespaces, key=len, reverse=True))

    async def listing(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return grouped_listing(await visible_tools(ctx), self.namespaces)

    async def call(self, params: dict[str, Any], ctx: RequestContext, call_next: CallNext) -> dict[str, Any]:
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, Mapping) or "action" not in arguments:
            return await call_next(params)  # no dispatcher's call: no listing needed
        tools = await visible_tools(ctx)
        members = groups(tools, self.namespaces).get(params.get("name", ""))
        if members is None:
            return await call_next(params)  # a tool of its own (or no tool: the backend says so as for any name)
        action = arguments["action"]
        if action == HELP:
            return _found(members)
        if action not in {tool["name"] for tool in members}:
            names = ", ".join(tool["name"] for tool in members)
            return tool_error(f"Unknown action {action!r} of {params['name']}: one of {names}, or {HELP}.")
        inner = arguments.get("arguments") or {}
        return await _call_directly(ctx, {**params, "name": action, "arguments": inner})
