"""`InterceptorHook`: the protocol core's `OperationHook` that runs an interceptor plan around each operation."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from datetime import UTC, datetime
from typing import Any, Final

from mcp_django.interceptors.base import InterceptorContext, ValidationResult
from mcp_django.interceptors.chain import ChainResult, InterceptorPlan
from mcp_django.interceptors.signals import phase_ran
from mcp_django.protocol import CallNext, InternalError, InvalidParams, MCPError, RequestContext
from mcp_django.protocol.results import tool_error

logger = logging.getLogger("mcp_django.interceptors")

_CANCELLED: Final = {"error": {"code": -32800, "message": "Request cancelled: the client went away"}}
"""What the response phase's sinks observe of an operation whose caller went away (nobody gets it)."""

_observing: set[asyncio.Future[None]] = set()
"""The sink runs of cancelled operations still under way."""


def _sinks_done(run: asyncio.Future[None]) -> None:
    _observing.discard(run)
    if not run.cancelled() and run.exception() is not None:
        logger.error("The sinks of a cancelled operation failed", exc_info=run.exception())


REFUSED_TOOL_CALL: Final = "The server refused this tool call."
"""The text of a refused `tools/call` whose refusal gives no reason; interceptor messages only go to the log."""


class InterceptorHook:
    """Runs the request phase, the operation, then the response phase; a blocked phase refuses the operation.

    A refused `tools/call` is an `isError` result with a generic text, or the blocking verdict's
    `reason` and `retry_after`; any other refused method is a JSON-RPC error (`-32602` when request
    validation refused it, `-32603` otherwise), whose `data` carries the reason when there is one. Sinks of the
    response phase also observe refusals, protocol errors and operations whose caller went away
    (`cancelled`), with `context.outcome` saying which.
    """

    def __init__(self, plan: InterceptorPlan) -> None:
        self.plan = plan

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        if not self.plan.intercepts(method):
            return await call_next(params)
        return await self.around(method, params, context_for(ctx), call_next)

    async def around(
        self, method: str, params: dict[str, Any], context: InterceptorContext, call_next: CallNext
    ) -> dict[str, Any]:
        """Run the chain around `call_next` for a caller described by `context` (an outgoing request's too).

        A phase nothing hooks is skipped (no result, no context built), unless `phase_ran` has receivers.
        """
        plan = self.plan
        if not plan.intercepts(method):
            return await call_next(params)
        compiled = plan.compiled_event(method)
        for gate in compiled.gates:
            gate.interceptor.admits(method)
        started = time.perf_counter()
        before, after = compiled.request, compiled.response
        if before.passes or phase_ran.receivers:
            request = await plan.run_compiled(before, params, context)
            if request.status != "success":
                return await self._refuse(request, _with(context, request=params), started)
            params = request.final_payload
        try:
            result = await call_next(params)
        except asyncio.CancelledError:
            # The caller went away (a disconnect, `notifications/cancelled`) while the operation ran: the
            # sinks still see it (a sync tool runs on to its end). In a task of their own, as this one is
            # being cancelled; the task keeps a reference until it is done.
            if after.sinks:
                cancelled = _responding(context, params, "cancelled", started)
                sinks = asyncio.ensure_future(plan.run_sinks(method, "response", _CANCELLED, cancelled))
                _observing.add(sinks)
                sinks.add_done_callback(_sinks_done)
            raise
        except MCPError as error:
            if after.sinks:
                timed_out = isinstance(error.data, dict) and error.data.get("reason") == "timeout"
                failed = _responding(context, params, "timeout" if timed_out else "error", started)
                await plan.run_sinks(method, "response", {"error": error.to_error()}, failed)
            raise
        if after.passes or phase_ran.receivers:
            context = _responding(context, params, "error" if result.get("isError") else "ok", started)
            response = await plan.run_compiled(after, result, context)
            if response.status != "success":
                return await self._refuse(response, context, started)
            result = response.final_payload
        if method == "tools/list":
            repair_input_schemas(result)
        return result

    async def _refuse(self, chain: ChainResult, context: InterceptorContext, started: float) -> dict[str, Any]:
        logger.warning(
            "Interceptors refused %s (%s phase, %s at %s): %s",
            chain.event,
            chain.phase,
            chain.status,
            (chain.aborted_at or {}).get("interceptor"),
            "; ".join(chain.messages()) or "no messages",
        )
        told = _told(chain)
        data: dict[str, Any] | None = None
        if told is not None:
            data = {"reason": told.reason}
            if told.retry_after is not None:
                data["retryAfter"] = told.retry_after
        error: MCPError = (
            InvalidParams("Invalid params: refused by the server's policy", data=data)
            if chain.status == "validation_failed" and chain.phase == "request"
            else InternalError(data=data)
        )
        refusal = tool_error(refusal_text(told)) if chain.event == "tools/call" else {"error": error.to_error()}
        if not chain.sinks_ran or chain.phase == "request":
            blocked = _with(context, outcome="blocked", duration_ms=(time.perf_counter() - started) * 1000)
            await self.plan.run_sinks(chain.event, "response", refusal, blocked)
        if chain.event == "tools/call":
            return refusal
        raise error


def _told(chain: ChainResult) -> ValidationResult | None:
    """The first blocking verdict of the phase that gives the client a reason; a timeout's reason; else None."""
    for _entry, result, _error, _duration in chain.outcomes:
        if isinstance(result, ValidationResult) and result.blocks() and result.reason:
            return result
    if chain.status == "timeout" or (chain.aborted_at or {}).get("reason") == "timeout":
        return _TIMED_OUT
    return None


_TIMED_OUT: Final = ValidationResult(
    valid=False, reason="the server's checks of this call did not finish in time; try again shortly"
)


def refusal_text(verdict: ValidationResult | None) -> str:
    """The text of a refused `tools/call`: generic, or the verdict's reason and when to try again."""
    if verdict is None or not verdict.reason:
        return REFUSED_TOOL_CALL
    text = f"{REFUSED_TOOL_CALL[:-1]}: {verdict.reason.rstrip('.')}."
    if verdict.retry_after is not None:
        text += f" Try again in {verdict.retry_after} seconds."
    return text


def context_for(ctx: RequestContext) -> InterceptorContext:
    """The invocation context of an operation: principal, a fresh trace id, the time it started."""
    return caller_context(ctx.principal, getattr(ctx.endpoint, "name", None))


def caller_context(user: Any, endpoint: str | None = None) -> InterceptorContext:
    """The invocation context of an operation by `user` (a Django user, or None): a fresh trace id, the time now."""
    if user is not None and getattr(user, "is_authenticated", False):
        principal: dict[str, Any] = {"type": "user", "id": str(getattr(user, "pk", "") or user)}
    else:
        principal = {"type": "anonymous"}
    return InterceptorContext(
        principal=principal,
        user=user,
        trace_id=_uuid4_hex(),
        timestamp=_timestamp(),
        endpoint=endpoint,
    )


def repair_input_schemas(result: dict[str, Any]) -> None:
    """Give every listed tool whose `inputSchema` is missing or not an object schema `{"type": "object"}`."""
    tools = result.get("tools")
    if not isinstance(tools, list):
        return
    for tool in tools:
        if isinstance(tool, dict):
            schema = tool.get("inputSchema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                tool["inputSchema"] = {"type": "object"}


def _responding(
    context: InterceptorContext, request: dict[str, Any], outcome: str, started: float
) -> InterceptorContext:
    """The response phase's context: the request phase's, with the request the operation ran with and its outcome."""
    duration = (time.perf_counter() - started) * 1000
    return InterceptorContext(
        principal=context.principal,
        user=context.user,
        trace_id=context.trace_id,
        timestamp=context.timestamp,
        endpoint=context.endpoint,
        request=request,
        outcome=outcome,
        duration_ms=duration,
    )


_CONTEXT_FIELDS: Final = tuple(field.name for field in dataclasses.fields(InterceptorContext))


def _with(context: InterceptorContext, **changes: Any) -> InterceptorContext:
    """`dataclasses.replace(context, **changes)` without its per-call introspection (the fields are known)."""
    values = {name: getattr(context, name) for name in _CONTEXT_FIELDS}
    values.update(changes)
    return InterceptorContext(**values)


def _uuid4_hex() -> str:
    """`uuid.uuid4().hex`, without building a `UUID`: 16 random bytes with the version 4 and RFC 4122 variant bits."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40
    raw[8] = raw[8] & 0x3F | 0x80
    return raw.hex()


_second: tuple[int, str] = (0, "")
"""The last whole second `_timestamp` formatted, and how: the date and time part changes once a second."""


def _timestamp() -> str:
    """`datetime.now(UTC).isoformat(timespec="milliseconds")`, formatting the date and time once a second."""
    global _second
    second, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    if second != _second[0]:
        _second = (second, datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S"))
    return f"{_second[1]}.{nanoseconds // 1_000_000:03d}+00:00"
