"""The `Backend` of a gateway endpoint: every operation forwarded to one remote MCP server.

The protocol core serves the gateway's clients in their era and runs the endpoint's hooks (the admin's
switches, the interceptor chain, the audit trail) around each operation; this backend is what the
innermost call reaches. It adds what a gateway must:

- the caller's reach: the endpoint's minimum scope, then per tool-name pattern (`tool_scopes`);
- a tool whose `inputSchema` is missing or not an object schema is listed as `{"type": "object"}`;
- lists are fetched whole (following the remote cursors), cleaned and bounded (`listing.Listing`),
  and paged again by the core;
- a forwarded operation is bounded in input rounds and wall time (`limits`);
- progress and log messages of a forwarded request reach the caller's stream;
- a remote `input_required` (2026-07-28) is asked of the caller in the caller's era: carried through
  the gateway's own signed `requestState` for a 2026 client, asked on the stream of a handshake one;
- results lose the remote's era-bound fields (`resultType`, cache hints, its `serverInfo`), which the
  core adds again for the caller's era.

Only the gateway's own credentials (settings) reach the remote server; nothing of the caller's request
but the operation's params does.
"""

from __future__ import annotations

import fnmatch
import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django.conf import mcp_settings
from mcp_django.gateway.connection import NotForwardable, RemoteConnection, RemoteError, RemoteServer, connect
from mcp_django.gateway.limits import call_deadline, input_rounds, remember
from mcp_django.gateway.listing import Listing
from mcp_django.protocol.context import META_LOG_LEVEL, RequestContext
from mcp_django.protocol.jsonrpc import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND_LEGACY,
    InvalidParams,
    Message,
    ResourceNotFound,
)
from mcp_django.protocol.meta import param_headers_of
from mcp_django.scopes import Scope, ScopeResolver

__all__ = ["FEATURES", "GatewayBackend", "ensure_input_schemas"]

logger = logging.getLogger("mcp_django.gateway")

FEATURES: Final = ("tools", "resources", "prompts", "completions")
"""The server features a gateway forwards (logging and subscriptions are the gateway's own)."""
_ERA_FIELDS: Final = frozenset({"resultType", "ttlMs", "cacheScope"})
_STATE_KEY: Final = "gateway.requestState"
_FORWARDED_META: Final = ("progressToken", "traceparent", "tracestate", "baggage")
_ASKABLE: Final = ("elicitation", "sampling", "roots")
"""The client capabilities a gateway declares for its caller: it relays those questions (`input_required`)."""


def ensure_input_schemas(result: Mapping[str, Any]) -> dict[str, Any]:
    """`result` (a `tools/list` result) with every missing or invalid `inputSchema` made `{"type": "object"}`."""
    tools = result.get("tools")
    if not isinstance(tools, list):
        return dict(result)
    return {**result, "tools": [_with_input_schema(tool) for tool in tools]}


def _with_input_schema(tool: Any) -> Any:
    if not isinstance(tool, dict):
        return tool
    schema = tool.get("inputSchema")
    if isinstance(schema, dict) and schema.get("type") == "object":
        return tool
    return {**tool, "inputSchema": {"type": "object"}}


def _local_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A remote result without what belongs to the remote's era; the core adds the caller's."""
    out = {key: value for key, value in result.items() if key not in _ERA_FIELDS}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        meta = {key: value for key, value in meta.items() if not key.startswith("io.modelcontextprotocol/")}
        if meta:
            out["_meta"] = meta
        else:
            del out["_meta"]
    return out


class GatewayBackend:
    """Serves one gateway endpoint from the remote server `server`.

    Args:
        server: the remote MCP server.
        capabilities: what the remote server serves (from its handshake), mirrored to the callers.
        scopes: works out the caller's scope for a request (the endpoint's `resolve_scope`).
        scope: the least scope that reaches the endpoint at all.
        tool_scopes: tool-name patterns (`fnmatch`, first match wins) and the least scope that sees them.
        param_headers: filled with each listed tool's `x-mcp-header` arguments and scope, which the
            HTTP transport checks a stateless call's `Mcp-Param-*` headers against (annotated tools
            only, the latest `REMOTE_MAX_LIST_ITEMS` of them).
    """

    def __init__(
        self,
        server: RemoteServer,
        capabilities: Mapping[str, Any],
        scopes: ScopeResolver,
        *,
        scope: Scope = Scope.USER,
        tool_scopes: Sequence[tuple[str, Scope]] = (),
        param_headers: OrderedDict[str, tuple[dict[str, str], Scope]] | None = None,
    ) -> None:
        self.server = server
        self.param_headers = OrderedDict() if param_headers is None else param_headers
        self._capabilities: dict[str, dict[str, Any]] = {name: {} for name in FEATURES if name in capabilities}
        self.scopes = scopes
        self.scope = scope
        self.tool_scopes = tuple(tool_scopes)

    @property
    def connection(self) -> RemoteConnection:
        """The pooled connection to the remote server (this event loop's)."""
        return connect(self.server)

    def capabilities(self) -> dict[str, Any]:
        return {name: dict(value) for name, value in self._capabilities.items()}

    # -- reach -------------------------------------------------------------------------------------

    async def _reach(self, ctx: RequestContext) -> Scope | None:
        scope = await self.scopes(ctx)
        return scope if scope is not None and scope >= self.scope else None

    def tool_scope(self, name: str) -> Scope:
        """The least scope that sees the remote tool `name` (the endpoint's, raised by a matching pattern)."""
        for pattern, scope in self.tool_scopes:
            if fnmatch.fnmatchcase(name, pattern):
                return max(scope, self.scope)
        return self.scope

    # -- forwarding --------------------------------------------------------------------------------

    async def forward(self, method: str, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """Send one request on the caller's behalf: its progress and logs come back on the caller's stream."""
        meta = {key: ctx.meta[key] for key in _FORWARDED_META if key in ctx.meta}
        if ctx.log_level is not None:
            meta[META_LOG_LEVEL] = ctx.log_level
        return await self.connection.request(
            method,
            params,
            meta=meta,
            on_notification=self._relay(ctx),
            client_capabilities={
                key: ctx.client_capabilities[key] for key in _ASKABLE if key in ctx.client_capabilities
            },
        )

    def _relay(self, ctx: RequestContext) -> Any:
        async def relay(message: Message) -> None:
            raw = message.get("params")
            params: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if message.get("method") == "notifications/progress" and ctx.progress_token is not None:
                await ctx.send_notification("notifications/progress", {**params, "progressToken": ctx.progress_token})
            elif message.get("method") == "notifications/message" and ctx.wants_log(str(params.get("level"))):
                await ctx.send_notification("notifications/message", params)

        return relay

    async def forward_asking(self, method: str, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`forward` for the methods that may answer `input_required`: the caller answers, in its era.

        A 2026 caller gets the remote's questions as the gateway's own `input_required` (the remote's
        `requestState` rides inside the gateway's signed one); a handshake caller is asked on its stream.
        """
        outgoing = {key: value for key, value in params.items() if key not in ("inputResponses", "requestState")}
        state = ctx.state.get(_STATE_KEY)
        responses = dict(ctx.answers) if state is not None else {}
        async with call_deadline(self.server.name, method):
            for _ in input_rounds(self.server.name, method):
                request = dict(outgoing)
                if state is not None:
                    request["requestState"] = state
                if responses:
                    request["inputResponses"] = responses
                result = await self.forward(method, request, ctx)
                if result.get("resultType") != "input_required":
                    return _local_result(result)
                asked = result.get("inputRequests") or {}
                state = result.get("requestState")
                ctx.state[_STATE_KEY] = state
                if not isinstance(asked, dict) or not asked:
                    responses = {}
                    continue  # a state-only round: send it back as it is
                try:
                    responses = await ctx.request_input(asked)
                except RuntimeError as error:
                    detail = f"The backend asks for input this caller cannot be asked for: {error}"
                    raise NotForwardable(detail) from None
        raise AssertionError("unreachable")  # pragma: no cover (input_rounds raises after its last round)

    async def _list(self, method: str, key: str, ctx: RequestContext) -> list[Any]:
        listing = Listing(self.server.name, method)
        cursor: str | None = None
        async with call_deadline(self.server.name, method):
            for _ in range(mcp_settings.REMOTE_MAX_LIST_PAGES):
                result = await self.forward(method, {"cursor": cursor} if cursor else {}, ctx)
                if method == "tools/list":
                    result = ensure_input_schemas(result)
                listing.add(result.get(key))
                cursor = result.get("nextCursor")
                if not isinstance(cursor, str) or not cursor:
                    return listing.done()
        raise listing.too_many_pages()

    # -- the Backend protocol ----------------------------------------------------------------------

    async def list_tools(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        reach = await self._reach(ctx)
        if reach is None:
            return []
        tools = await self._list("tools/list", "tools", ctx)
        for tool in tools:
            name = tool["name"]
            annotated = param_headers_of(tool.get("inputSchema"))
            remember(self.param_headers, name, (annotated, self.tool_scope(name)) if annotated else None)
        return [tool for tool in tools if isinstance(tool, dict) and self.tool_scope(str(tool.get("name"))) <= reach]

    async def call_tool(self, name: str, arguments: Mapping[str, Any], ctx: RequestContext) -> Mapping[str, Any]:
        reach = await self._reach(ctx)
        if reach is None or self.tool_scope(name) > reach:
            raise InvalidParams(f"Unknown tool: {name}")
        params = {"name": name, "arguments": dict(arguments)}
        return await self.forward_asking("tools/call", params, ctx)

    async def list_resources(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._list("resources/list", "resources", ctx) if await self._reach(ctx) is not None else []

    async def readable(self, uri: str, ctx: RequestContext) -> bool:
        """Anything may exist on the remote: every caller the endpoint reaches may subscribe to any URI."""
        return await self._reach(ctx) is not None

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        if await self._reach(ctx) is None:
            return []
        return await self._list("resources/templates/list", "resourceTemplates", ctx)

    async def read_resource(self, uri: str, ctx: RequestContext) -> Mapping[str, Any]:
        if await self._reach(ctx) is None:
            raise ResourceNotFound(uri)
        try:
            return await self.forward_asking("resources/read", {"uri": uri}, ctx)
        except RemoteError as error:
            if error.code == RESOURCE_NOT_FOUND_LEGACY or (
                error.code == INVALID_PARAMS and isinstance(error.data, dict) and error.data.get("uri") == uri
            ):
                raise ResourceNotFound(uri) from None
            raise

    async def list_prompts(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return await self._list("prompts/list", "prompts", ctx) if await self._reach(ctx) is not None else []

    async def get_prompt(self, name: str, arguments: Mapping[str, str], ctx: RequestContext) -> Mapping[str, Any]:
        if await self._reach(ctx) is None:
            raise InvalidParams(f"Unknown prompt: {name}")
        return await self.forward_asking("prompts/get", {"name": name, "arguments": dict(arguments)}, ctx)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        if await self._reach(ctx) is None:
            raise InvalidParams("Unknown reference")
        params: dict[str, Any] = {"ref": dict(ref), "argument": dict(argument)}
        if context_arguments:
            params["context"] = {"arguments": dict(context_arguments)}
        result = await self.forward("completion/complete", params, ctx)
        completion = result.get("completion")
        return completion if isinstance(completion, dict) else {"values": []}
