"""Test your own tools, resources and prompts in memory, the way mcp_django tests itself.

`MCPTestClient` speaks to an endpoint's protocol core directly: no HTTP, no server,
but the same validation, results and errors a real client gets::

    from mcp_django.testing import MCPTestClient

    async def test_add_adds():
        client = MCPTestClient("myapp.mcp.registry", user=some_user)
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert result["structuredContent"] == {"result": 3}

Its methods are the MCP client's own (`mcp_django.client.methods.MCPClientMethods`); sync tests use
`client.sync` (the same methods, through the client's one sync facade, `SyncClient`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import itertools
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Literal

from django.utils.module_loading import import_string

from mcp_django.client.methods import MCPClientMethods, SyncClient
from mcp_django.endpoints import Endpoint, get_endpoint
from mcp_django.endpoints.admission import ADMITTED_SCOPE
from mcp_django.endpoints.sessions import principal_id
from mcp_django.exceptions import MCPCallError
from mcp_django.protocol import Connection, MessageHandler, MethodNotFound
from mcp_django.protocol.context import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
from mcp_django.protocol.versions import LATEST_HANDSHAKE_VERSION, LATEST_STATELESS_VERSION
from mcp_django.registry import Registry
from mcp_django.scopes import Scope, User

_MAX_INPUT_ROUNDS = 10


_UNSET: Any = object()


def result_text(result: dict[str, Any]) -> str:
    """The text of a `CallToolResult` (or `GetPromptResult` message content): its text items, one per line."""
    return "\n".join(item["text"] for item in result.get("content", ()) if item.get("type") == "text")


def assert_tool_result(result: dict[str, Any], *, structured: Any = _UNSET, text: str | None = None) -> dict[str, Any]:
    """Assert that a tool call succeeded and, when given, what it returned; returns the result.

    Args:
        result: a `CallToolResult`, as `call_tool` returns it.
        structured: the expected `structuredContent`, compared whole.
        text: a regular expression the result's text must contain (`re.search`).
    """
    assert not result.get("isError"), f"the tool failed: {result_text(result) or result}"
    if structured is not _UNSET:
        assert result.get("structuredContent") == structured, (
            f"structuredContent {result.get('structuredContent')!r} != {structured!r}"
        )
    if text is not None:
        assert re.search(text, result_text(result)), f"{text!r} not in the tool's text {result_text(result)!r}"
    return result


def assert_tool_error(result: dict[str, Any], match: str | None = None) -> str:
    """Assert that a tool call ended in an error result (`isError`, which the model sees); returns its text.

    Args:
        result: a `CallToolResult`.
        match: a regular expression the error's text must contain (`re.search`).
    """
    assert result.get("isError") is True, f"the tool did not fail: {result}"
    message = result_text(result)
    if match is not None:
        assert re.search(match, message), f"{match!r} not in the tool's error {message!r}"
    return message


@dataclasses.dataclass
class RaisedMCPError:
    """What `assert_mcp_error` caught: `error` is set once the block has raised."""

    error: MCPCallError | None = None

    @property
    def value(self) -> MCPCallError:
        assert self.error is not None, "no MCPCallError was raised yet"
        return self.error


@contextlib.contextmanager
def assert_mcp_error(code: int | None = None, match: str | None = None) -> Iterator[RaisedMCPError]:
    """Assert that the block raises `MCPCallError` (a JSON-RPC error), with `code` and a message matching `match`.

    ::

        with assert_mcp_error(INVALID_PARAMS, match="Unknown tool") as raised:
            await client.call_tool("nope")
        assert raised.value.data is None
    """
    raised = RaisedMCPError()
    try:
        yield raised
    except MCPCallError as error:
        raised.error = error
    else:
        raise AssertionError("no MCPCallError was raised")
    if code is not None:
        assert raised.value.code == code, f"error code {raised.value.code} != {code}: {raised.value.message}"
    if match is not None:
        assert re.search(match, raised.value.message), f"{match!r} not in the error {raised.value.message!r}"


class MCPTestClient(MCPClientMethods):
    """An in-memory MCP client for one endpoint or registry.

    Args:
        target: an `Endpoint`, a `Registry`, a dotted path to either, or the name or path of a
            mounted endpoint (`"mcp"`, `"/mcp/adapter"`).
        user: the user the requests come from; None or `AnonymousUser` for an anonymous caller.
        scope: the scope the caller reaches on an endpoint, as if admission had worked it out
            (a `Scope` or its name); None works it out from `user` as every transport does.
        era: `"handshake"` (an `initialize` handshake opens the conversation) or `"stateless"`
            (every request carries 2026-07-28 `_meta`).
        capabilities: the client capabilities to declare.
        on_input: answers the server's questions (elicitation, sampling, roots): called with the
            request's method and params, returns the result to send back. The client declares the
            capabilities it needs unless `capabilities` says otherwise. In the handshake era it
            answers server-to-client requests; in the 2026 era it answers `input_required` results
            and retries, as the official client does.
    """

    def __init__(
        self,
        target: Endpoint | Registry | str,
        *,
        user: User | None = None,
        scope: Scope | str | None = None,
        era: Literal["handshake", "stateless"] = "handshake",
        capabilities: dict[str, Any] | None = None,
        on_input: Callable[[str, dict[str, Any]], dict[str, Any] | Awaitable[dict[str, Any]]] | None = None,
    ) -> None:
        resolved = _resolve(target) if isinstance(target, str) else target
        if isinstance(resolved, Endpoint):
            self.handler = resolved.handler
            endpoint: Endpoint | None = resolved
        elif isinstance(resolved, Registry):
            self.handler = MessageHandler(resolved.backend(), server_info={"name": "mcp-test", "version": "0"})
            endpoint = None
        else:
            raise TypeError(f"MCPTestClient needs an Endpoint or a Registry, not {type(resolved).__name__}")
        self.era = era
        if capabilities is None:
            capabilities = {"elicitation": {}, "sampling": {}, "roots": {}} if on_input else {}
        self.capabilities = capabilities
        self.on_input = on_input
        # principal_id as the transports set it: input_required states and tasks are bound to it
        self.connection = Connection(
            principal=user, endpoint=endpoint, transport="memory", principal_id=principal_id(user)
        )
        if scope is not None:
            if endpoint is None:
                raise TypeError("MCPTestClient takes a scope only for an endpoint; a registry has no scopes")
            self.connection.extra[ADMITTED_SCOPE] = Scope.parse(scope)
        self.notifications: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._initialized = False
        self.sync = SyncClient(self)
        """The same methods for sync tests: `client.sync.call_tool(...)`."""

    async def initialize(self) -> dict[str, Any]:
        """Run the handshake (only in the handshake era) and return the `InitializeResult`."""
        result = await self._send(
            "initialize",
            {
                "protocolVersion": LATEST_HANDSHAKE_VERSION,
                "capabilities": self.capabilities,
                "clientInfo": {"name": "mcp-django-test", "version": "0"},
            },
        )
        await self.handler.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, self.connection)
        self._initialized = True
        return result

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its result.

        Raises:
            MCPCallError: the server answered with a JSON-RPC error.
        """
        if self.era == "handshake" and not self._initialized and method != "initialize":
            await self.initialize()
        params = dict(params or {})
        if self.era == "stateless":
            params["_meta"] = {
                META_PROTOCOL_VERSION: LATEST_STATELESS_VERSION,
                META_CLIENT_CAPABILITIES: self.capabilities,
                **params.get("_meta", {}),
            }
        return await self._send(method, params)

    async def _send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        for _ in range(_MAX_INPUT_ROUNDS):
            result = await self._send_once(method, params)
            if result.get("resultType") != "input_required" or self.on_input is None:
                return result
            answers = {key: await self._answer(asked) for key, asked in result.get("inputRequests", {}).items()}
            params = {**params, "inputResponses": answers}
            if "requestState" in result:
                params["requestState"] = result["requestState"]
        raise MCPCallError({"code": 0, "message": f"Still asking for input after {_MAX_INPUT_ROUNDS} rounds"})

    async def _answer(self, asked: dict[str, Any]) -> dict[str, Any]:
        assert self.on_input is not None
        answer = self.on_input(asked["method"], asked.get("params", {}))
        return await answer if inspect.isawaitable(answer) else answer

    async def _send_once(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        reply: dict[str, Any] | None = None
        if self.connection.endpoint is not None:  # as every transport does before a message: the admin's state
            await self.connection.endpoint.overlay.refresh()
        async for item in self.handler.stream(message, self.connection):
            if "method" in item and "id" in item:
                await self._reply_to_server(item)
            elif "method" in item:
                self.notifications.append(item)
            else:
                reply = item
        if reply is None:
            raise MCPCallError({"code": 0, "message": "The request was cancelled"})
        if "error" in reply:
            raise MCPCallError(reply["error"])
        return reply["result"]  # type: ignore[no-any-return]

    async def _reply_to_server(self, asked: dict[str, Any]) -> None:
        """Answer a server-to-client request the way a client would: with a result or an error."""
        if self.on_input is None:
            response = MethodNotFound("No on_input").to_response(asked["id"])
        else:
            response = {"jsonrpc": "2.0", "id": asked["id"], "result": await self._answer(asked)}
        await self.handler.handle(response, self.connection)


def _resolve(target: str) -> object:
    """A dotted path's object, or else the mounted endpoint of that name or path."""
    try:
        return import_string(target)
    except ImportError:
        try:
            return get_endpoint(target)
        except LookupError:
            raise LookupError(f"{target!r} is neither a dotted path nor a mounted endpoint's name or path") from None
