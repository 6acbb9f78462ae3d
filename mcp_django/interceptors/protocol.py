"""The SEP-2624 wire protocol: `interceptors/list`, `interceptor/invoke` and the capability advertising them.

An extension on the seam (`InterceptorsExtension`), served only where it is installed
(`MCP_DJANGO["EXTENSIONS"]`) or named (`endpoint(..., extensions=[InterceptorsExtension])`), and only
for the interceptors of the endpoint's own list that allow it (`Interceptor.invocable`: not sinks,
never the audit sink); the others are absent from the list and unknown to `interceptor/invoke`. What
the server stamps on an invocation's context (principal, trace id, timestamp) is the server's own,
whatever the caller sends. Errors follow the newer SEP text, which defines no codes of its own:
`-32602` for an unknown name, a hook the interceptor does not advertise or bad params, `-32603` for a
failed invocation (the exception stays in the server's log), with `data.reason = "timeout"` when it
timed out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import pydantic

from mcp_django.extensions import Extension
from mcp_django.interceptors.base import PHASES, Invocation
from mcp_django.interceptors.chain import InterceptorPlan
from mcp_django.interceptors.config import PlanEntry
from mcp_django.interceptors.hook import context_for
from mcp_django.protocol import InternalError, InvalidParams, RequestContext
from mcp_django.protocol.errors import validation_problems
from mcp_django.protocol.features import MethodSpec, Server

__all__ = ["EXTENSION", "InterceptorsExtension", "interceptor_capability", "interceptor_methods"]

EXTENSION: Final = "io.modelcontextprotocol/interceptors"


class InterceptorsExtension(Extension):
    """SEP-2624's `interceptors/list` and `interceptor/invoke` on an endpoint, for its list's local interceptors.

    Served where some interceptor of the endpoint's list can be invoked over the wire (the capability's
    `supportedEvents` is not empty); the remote servers' interceptors a list names are theirs to serve.
    """

    identifier = EXTENSION

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """`{"supportedEvents": [...]}`, the union of the events the invocable interceptors hook; None without any."""
        plan = _plan(endpoint)
        capability = None if plan is None else interceptor_capability(plan)
        return capability if capability and capability["supportedEvents"] else None

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        plan = _plan(endpoint)
        return () if plan is None else interceptor_methods(plan)


def _plan(endpoint: Any) -> InterceptorPlan | None:
    """The plan of the endpoint's local interceptors, as its chain runs them (the admin's changes applied)."""
    chain = getattr(endpoint, "chain_options", None)
    return None if chain is None else chain().get("plan")


def interceptor_capability(plan: InterceptorPlan) -> dict[str, Any]:
    """The `io.modelcontextprotocol/interceptors` capability: `supportedEvents`, the union of the events
    the invocable interceptors hook (empty when none is)."""
    return {"supportedEvents": sorted({event for entry in _invocable(plan) for event in entry.events})}


def _invocable(plan: InterceptorPlan) -> list[PlanEntry]:
    """The entries a caller may list and invoke over the wire."""
    return [entry for entry in plan.entries if entry.interceptor.invocable]


def interceptor_methods(plan: InterceptorPlan) -> tuple[MethodSpec, MethodSpec]:
    """The two wire methods, serving the interceptors of `plan`."""

    async def list_interceptors(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        event = params.get("event")
        if event is not None and (not isinstance(event, str) or not event or "*" in event):
            raise InvalidParams("Invalid params: event must be one event name, not a pattern")
        if params.get("cursor") is not None:
            raise InvalidParams("Invalid params: unknown interceptors/list cursor")
        entries = [entry for entry in _invocable(plan) if event is None or entry.hooks_event(event)]
        return {"interceptors": [entry.descriptor() for entry in entries]}

    async def invoke_interceptor(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        name, event, phase, payload = (params.get(key) for key in ("name", "event", "phase", "payload"))
        if not isinstance(name, str):
            raise InvalidParams("Invalid params: name is required")
        entry = plan.get(name)
        if entry is None or not entry.interceptor.invocable:
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
        invocation = Invocation(event, phase, payload, options, context_for(ctx))
        record = await plan.invoke(entry, invocation, timeout_ms)
        if record.error == "timeout":
            data = {"interceptor": name, "reason": "timeout", "timeoutMs": timeout_ms, "phase": phase}
            raise InternalError("Interceptor timed out", data=data)
        if record.error is not None or record.result is None:
            # What went wrong stays in the server's log: an exception's text may reveal anything.
            raise InternalError("Interceptor invocation failed", data={"interceptor": name, "reason": "error"})
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
