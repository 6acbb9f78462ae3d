"""The SEP-2624 wire protocol: `interceptors/list`, `interceptor/invoke` and the capability advertising them.

An endpoint serves it only when asked (`endpoint(..., interceptor_protocol=True)`). Errors follow
the newer SEP text, which defines no codes of its own: `-32602` for an unknown name, a hook the
interceptor does not advertise or bad params, `-32603` for a failed invocation, with
`data.reason = "timeout"` when it timed out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pydantic

from mcp_django.interceptors.base import PHASES, InterceptorContext, Invocation
from mcp_django.interceptors.chain import InterceptorPlan
from mcp_django.interceptors.hook import context_for
from mcp_django.protocol import InternalError, InvalidParams, RequestContext
from mcp_django.protocol.errors import validation_problems
from mcp_django.protocol.features import MethodSpec, Server

__all__ = ["EXTENSION", "interceptor_capability", "interceptor_methods"]

EXTENSION: Final = "io.modelcontextprotocol/interceptors"


def interceptor_capability(plan: InterceptorPlan) -> dict[str, Any]:
    """The `io.modelcontextprotocol/interceptors` capability: `supportedEvents`, the union of hooked events."""
    return {"supportedEvents": plan.supported_events()}


def interceptor_methods(plan: InterceptorPlan) -> tuple[MethodSpec, MethodSpec]:
    """The two wire methods, serving the interceptors of `plan`."""

    async def list_interceptors(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        event = params.get("event")
        if event is not None and (not isinstance(event, str) or not event or "*" in event):
            raise InvalidParams("Invalid params: event must be one event name, not a pattern")
        if params.get("cursor") is not None:
            raise InvalidParams("Invalid params: unknown interceptors/list cursor")
        entries = [entry for entry in plan.entries if event is None or entry.hooks_event(event)]
        return {"interceptors": [entry.descriptor() for entry in entries]}

    async def invoke_interceptor(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        name, event, phase, payload = (params.get(key) for key in ("name", "event", "phase", "payload"))
        if not isinstance(name, str):
            raise InvalidParams("Invalid params: name is required")
        entry = plan.get(name)
        if entry is None:
            raise InvalidParams(f"Interceptor {name!r} not found", data={"name": name})
        if not isinstance(event, str) or phase not in PHASES or not isinstance(payload, dict):
            raise InvalidParams("Invalid params: event, phase and an object payload are required")
        if not entry.hooks(event, phase):
            hooks = entry.descriptor()["hooks"]
            data = {"name": name, "event": event, "phase": phase, "advertisedHooks": hooks}
            raise InvalidParams(f"Interceptor {name!r} does not hook {event} ({phase})", data=data)
        timeout_ms = params.get("timeoutMs", entry.timeout_ms)
        if timeout_ms is not None and (
            not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool) or timeout_ms < 1
        ):
            raise InvalidParams("Invalid params: timeoutMs must be a positive integer")
        options = entry.options
        if params.get("config") is not None:
            try:
                options = type(entry.interceptor).Options.model_validate(params["config"])
            except pydantic.ValidationError as error:
                raise InvalidParams(f"Invalid params: config: {validation_problems(error)[0].message}") from None
        invocation = Invocation(event, phase, payload, options, _context(ctx, params.get("context")))
        record = await plan.invoke(entry, invocation, timeout_ms)
        if record.error == "timeout":
            data = {"interceptor": name, "reason": "timeout", "timeoutMs": timeout_ms, "phase": phase}
            raise InternalError("Interceptor timed out", data=data)
        if record.error is not None or record.result is None:
            raise InternalError("Interceptor invocation failed", data={"interceptor": name, "reason": record.error})
        return {
            **record.result.to_wire(),
            "interceptor": name,
            "phase": phase,
            "durationMs": round(record.duration_ms, 3),
        }

    return (
        MethodSpec("interceptors/list", list_interceptors, operation=False),
        MethodSpec("interceptor/invoke", invoke_interceptor, operation=False),
    )


def _context(ctx: RequestContext, sent: Any) -> InterceptorContext:
    """The caller's own context; a `traceId`/`timestamp` the invoker sent is kept, its principal is not trusted."""
    context = context_for(ctx)
    if not isinstance(sent, dict):
        return context
    trace_id, timestamp = sent.get("traceId"), sent.get("timestamp")
    return InterceptorContext(
        principal=context.principal,
        user=context.user,
        trace_id=trace_id if isinstance(trace_id, str) and trace_id else context.trace_id,
        timestamp=timestamp if isinstance(timestamp, str) and timestamp else context.timestamp,
        endpoint=context.endpoint,
    )
