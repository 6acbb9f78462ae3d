"""Forwarding one request to a remote MCP server on a caller's behalf, in the caller's era.

What `RemoteSource` (and so every gateway and hub) does with each operation: the caller's progress
token and log level go along (never its raw trace context); the remote's progress and log messages come back on the
caller's stream (its list changes sent there go to the endpoint's listening clients); a remote's
questions (a 2026 remote's `input_required`, a handshake-era remote's own requests: `questions`) are
asked of the caller in the caller's era; the result loses what belongs to the remote's era
(`resultType`, cache hints), which the core adds again for the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from mcp_django.client.limits import call_deadline, input_rounds
from mcp_django.client.remote import NotForwardable, RemoteConnection
from mcp_django.exceptions import RemoteError
from mcp_django.gateway.questions import (
    AskingRelay,
    Forwarded,
    Relay,
    asked_in_rounds,
    screen_questions,
    screen_url_error,
)
from mcp_django.gateway.task_handles import outer_task
from mcp_django.protocol.context import META_LOG_LEVEL, RequestContext
from mcp_django.protocol.jsonrpc import URL_ELICITATION_REQUIRED
from mcp_django.protocol.versions import Era
from mcp_django.safety.idempotency import META_KEY as IDEMPOTENCY_KEY
from mcp_django.safety.idempotency import key_of, remote_key
from mcp_django.tasks.methods import EXTENSION as TASKS
from mcp_django.tasks.methods import negotiated

_ERA_FIELDS: Final = frozenset({"resultType", "ttlMs", "cacheScope"})
_STATE_KEY: Final = "gateway.requestState"
_FORWARDED_META: Final = ("progressToken",)
"""The caller's `_meta` that goes along. Not its trace context (`traceparent`, `tracestate`, `baggage`): that
would tie a third party's traces to the caller's and hand it the caller's baggage; the telemetry extension,
when installed, sends the gateway's own span's context instead (docs/observability.md)."""
_ASKABLE: Final = ("elicitation", "sampling", "roots")
"""The client capabilities declared for the caller: the endpoint relays those questions (`input_required`)."""


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


def with_outer_uris(result: Mapping[str, Any], outer: Callable[[str], str]) -> dict[str, Any]:
    """`result` (a tool's or a prompt's) with the URI of each resource link and embedded resource made `outer(uri)`.

    A hub namespaces a remote's URIs (`gh+repo://...`): a link in a result must be readable through it.
    """
    out = dict(result)
    if isinstance(out.get("content"), list):
        out["content"] = [_outer_block(block, outer) for block in out["content"]]
    if isinstance(out.get("messages"), list):
        out["messages"] = [_outer_message(message, outer) for message in out["messages"]]
    return out


def _outer_message(message: Any, outer: Callable[[str], str]) -> Any:
    if not isinstance(message, dict) or "content" not in message:
        return message
    content = message["content"]
    blocks = [_outer_block(block, outer) for block in content] if isinstance(content, list) else None
    return {**message, "content": blocks if blocks is not None else _outer_block(content, outer)}


def _outer_block(block: Any, outer: Callable[[str], str]) -> Any:
    if not isinstance(block, dict):
        return block
    if block.get("type") == "resource_link" and isinstance(block.get("uri"), str):
        return {**block, "uri": outer(block["uri"])}
    embedded = block.get("resource")
    if block.get("type") == "resource" and isinstance(embedded, dict) and isinstance(embedded.get("uri"), str):
        return {**block, "resource": {**embedded, "uri": outer(embedded["uri"])}}
    return block


def local_result(result: Mapping[str, Any], *, task: bool = False) -> dict[str, Any]:
    """A remote result without what belongs to the remote's era; the core adds the caller's.

    `task`: a task's envelope, whose `ttlMs` is the task's lifetime rather than a cache hint, and whose
    `resultType` stays when it is `"task"` (a `CreateTaskResult`).
    """
    dropped = _ERA_FIELDS - {"ttlMs"} if task else _ERA_FIELDS
    out = {key: value for key, value in result.items() if key not in dropped}
    if task and result.get("resultType") == "task":
        out["resultType"] = "task"
    meta = out.get("_meta")
    if isinstance(meta, dict):
        meta = {key: value for key, value in meta.items() if not key.startswith("io.modelcontextprotocol/")}
        if meta:
            out["_meta"] = meta
        else:
            del out["_meta"]
    return out


def passed_extensions(connection: RemoteConnection, ctx: RequestContext) -> dict[str, Any]:
    """The caller's extension declarations the remote is told of: the tasks extension, when both sides have it."""
    remote = connection.capabilities.get("extensions")
    if negotiated(ctx) and isinstance(remote, Mapping) and TASKS in remote:
        return {"extensions": {TASKS: {}}}
    return {}


async def forward(
    connection: RemoteConnection,
    method: str,
    params: Mapping[str, Any],
    ctx: RequestContext,
    listener: Relay | None = None,
) -> dict[str, Any]:
    """Send one request on the caller's behalf: its progress and logs come back on the caller's stream.

    `listener` hears what the remote says about the request (a plain `Relay` by default: the remote's
    questions are refused; `forward_asking` passes one that asks the caller).
    """
    meta = {key: ctx.meta[key] for key in _FORWARDED_META if key in ctx.meta}
    level = ctx.log_level if ctx.log_level is not None or ctx.era is not Era.HANDSHAKE else "debug"
    if level is not None:  # a handshake caller that set no level takes every message: a 2026 remote is asked for all
        meta[META_LOG_LEVEL] = level
    key = key_of({"_meta": ctx.meta}, ctx) if method == "tools/call" else None
    if key is not None:  # the caller's idempotency key goes on, namespaced per caller
        meta[IDEMPOTENCY_KEY] = remote_key(key, ctx)
    try:
        return await connection.request(
            method,
            params,
            meta=meta,
            on_notification=listener if listener is not None else Relay(ctx, connection),
            client_capabilities={
                **{key: ctx.client_capabilities[key] for key in _ASKABLE if key in ctx.client_capabilities},
                **passed_extensions(connection, ctx),
            },
        )
    except RemoteError as error:
        if error.code == URL_ELICITATION_REQUIRED:
            screen_url_error(error, ctx, connection.server.name)
        raise


async def forward_asking(
    connection: RemoteConnection, method: str, params: Mapping[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    """`forward` for the methods that may answer `input_required`: the caller answers, in its era.

    A 2026 caller gets the remote's questions as the endpoint's own `input_required` (the remote's
    `requestState` rides inside the endpoint's signed one; a handshake-era remote's own requests
    wait meanwhile in a `questions.ParkedCall`); a handshake caller is asked on its stream.
    Bounded in input rounds (`REMOTE_MAX_INPUT_ROUNDS`) and wall time (`REMOTE_CALL_TIMEOUT`): `limits`.
    """
    outgoing = {key: value for key, value in params.items() if key not in ("inputResponses", "requestState")}
    state = ctx.state.get(_STATE_KEY)
    responses = dict(ctx.answers) if state is not None else {}
    server = connection.server.name
    async with call_deadline(server, method):
        for _ in input_rounds(server, method):
            request = dict(outgoing)
            if state is not None:
                request["requestState"] = state
            if responses:
                request["inputResponses"] = responses
            if ctx.era is Era.STATELESS:
                result = await asked_in_rounds(ctx, connection, _sending(connection, method, request, ctx))
            else:
                result = await forward(connection, method, request, ctx, AskingRelay(ctx, connection))
            if result.get("resultType") == "task":
                return outer_task(local_result(result, task=True), server, ctx)
            if result.get("resultType") != "input_required":
                return local_result(result)
            asked = result.get("inputRequests") or {}
            state = result.get("requestState")
            ctx.state[_STATE_KEY] = state
            if not isinstance(asked, dict) or not asked:
                responses = {}
                continue  # a state-only round: send it back as it is
            screen_questions(asked, ctx, server)
            try:
                responses = await ctx.request_input(asked)
            except RuntimeError as error:
                detail = f"The backend asks for input this caller cannot be asked for: {error}"
                raise NotForwardable(detail) from None
    raise AssertionError("unreachable")  # pragma: no cover (input_rounds raises after its last round)


def _sending(connection: RemoteConnection, method: str, params: Mapping[str, Any], ctx: RequestContext) -> Forwarded:
    async def sent(listener: Relay) -> dict[str, Any]:
        return await forward(connection, method, params, ctx, listener)

    return sent
