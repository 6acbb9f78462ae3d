"""The MCP methods every client here offers on top of its own `request`, and the one way to call them from
sync code.

`MCPClient` (a remote server, through the interceptor chain), `testing.MCPTestClient` (an endpoint in
memory) and `testing.MCPHTTPTestClient` (over HTTP) each implement `request`; the rest is written once,
here: `list_*` follow the cursors and return every item, bounded by `max_list_pages`.

`SyncClient(client)` offers the same methods to sync code, each typed as its coroutine method is and run
to completion (`async_to_sync`), with an optional `finish` coroutine run on the same loop after each call.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from asgiref.sync import async_to_sync

from mcp_django.exceptions import MCPCallError

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C", bound="MCPClientMethods")


class MCPClientMethods:
    """The MCP methods on top of `request` (which a subclass implements), each returning the wire result."""

    max_list_pages: int = 1000
    """The most pages a `list_*` call follows before it gives up (`too_many_pages`)."""

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its result."""
        raise NotImplementedError(f"{type(self).__name__} must implement request()")

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """`tools/call`: the `CallToolResult`."""
        return await self.request("tools/call", {"name": name, "arguments": dict(arguments or {})})

    async def list_tools(self) -> list[dict[str, Any]]:
        """`tools/list`: every tool listed, across all pages."""
        return await self._collect("tools/list", "tools")

    async def list_resources(self) -> list[dict[str, Any]]:
        """`resources/list`: every resource, across all pages."""
        return await self._collect("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """`resources/templates/list`: every template, across all pages."""
        return await self._collect("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """`resources/read`."""
        return await self.request("resources/read", {"uri": uri})

    async def list_prompts(self) -> list[dict[str, Any]]:
        """`prompts/list`: every prompt, across all pages."""
        return await self._collect("prompts/list", "prompts")

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> dict[str, Any]:
        """`prompts/get`."""
        return await self.request("prompts/get", {"name": name, "arguments": dict(arguments or {})})

    async def complete(self, ref: Mapping[str, Any], argument: str, value: str) -> dict[str, Any]:
        """`completion/complete` for `argument` of a prompt or template reference: the `completion` object."""
        params = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        completion: dict[str, Any] = (await self.request("completion/complete", params))["completion"]
        return completion

    def too_many_pages(self, method: str) -> Exception:
        """The error a `list_*` call raises after `max_list_pages` pages with a `nextCursor` still."""
        return MCPCallError({"code": 0, "message": f"{method} still has a next page after {self.max_list_pages}"})

    async def _collect(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        for _ in range(self.max_list_pages):
            page = await self.request(method, params)
            items += page.get(key) or []
            cursor = page.get("nextCursor")
            if not cursor:
                return items
            params = {"cursor": cursor}
        raise self.too_many_pages(method)


class synced(Generic[P, R]):  # a decorator-like descriptor, lower case as `property` is
    """A coroutine method of the client, offered by a `SyncClient` as a sync method of the same signature.

    `call_tool = synced(MCPClientMethods.call_tool)` on a facade gives `facade.call_tool(name, arguments)`,
    typed as the coroutine method is (mypy sees its parameters), run to completion by `SyncClient.blocking`.
    """

    def __init__(self, method: Callable[Concatenate[Any, P], Awaitable[R]]) -> None:
        self.name = method.__name__
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, facade: None, owner: type) -> synced[P, R]: ...

    @overload
    def __get__(self, facade: SyncClient[Any], owner: type) -> Callable[P, R]: ...

    def __get__(self, facade: SyncClient[Any] | None, owner: type) -> synced[P, R] | Callable[P, R]:
        if facade is None:
            return self
        method: Callable[P, Awaitable[R]] = getattr(facade.client, self.name)
        return facade.blocking(method)


class SyncClient(Generic[C]):
    """A client's methods, callable from sync code: `SyncClient(client).call_tool(...)`.

    Each call runs on an event loop of its own (`async_to_sync`), so call it from sync code only, never
    from a coroutine. `finish`, when given, runs on that loop after every call, whatever happened (what
    the loop still holds is released there: connections, tasks in flight). Works as a context manager.
    A client with more methods than `MCPClientMethods` offers them on a subclass (`synced(...)` each).
    """

    def __init__(self, client: C, *, finish: Callable[[], Awaitable[None]] | None = None) -> None:
        self.client = client
        self._finish = finish

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def blocking(self, method: Callable[P, Awaitable[R]]) -> Callable[P, R]:
        """`method` (a coroutine function) as a function that runs it to completion, then `finish`."""
        finish = self._finish

        async def run(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return await method(*args, **kwargs)
            finally:
                if finish is not None:
                    await finish()

        return functools.update_wrapper(async_to_sync(run), method)  # its name, docstring and signature

    request = synced(MCPClientMethods.request)
    call_tool = synced(MCPClientMethods.call_tool)
    list_tools = synced(MCPClientMethods.list_tools)
    list_resources = synced(MCPClientMethods.list_resources)
    list_resource_templates = synced(MCPClientMethods.list_resource_templates)
    read_resource = synced(MCPClientMethods.read_resource)
    list_prompts = synced(MCPClientMethods.list_prompts)
    get_prompt = synced(MCPClientMethods.get_prompt)
    complete = synced(MCPClientMethods.complete)
