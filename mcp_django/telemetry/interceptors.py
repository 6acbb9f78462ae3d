"""What the chain's `phase_ran` signal tells: a span for each interceptor that ran (a child of the operation's
span), refusals by interceptors (`mcp_django.refusals`) and the audit rows stored (`mcp_django.audit.rows`)."""

from __future__ import annotations

import time
from typing import Any, Final

from opentelemetry import metrics, trace

from mcp_django.interceptors.base import MutationResult, SinkResult, ValidationResult
from mcp_django.interceptors.chain import ChainResult
from mcp_django.interceptors.limits import RateLimitInterceptor
from mcp_django.interceptors.signals import phase_ran
from mcp_django.telemetry import semconv
from mcp_django.telemetry.semconv import METHOD_NAME

# The convention has no names for interceptors (SEP-2624): ours, under the package's own namespace.
INTERCEPTOR_NAME: Final = "mcp_django.interceptor.name"
INTERCEPTOR_TYPE: Final = "mcp_django.interceptor.type"
INTERCEPTOR_PHASE: Final = "mcp_django.interceptor.phase"
INTERCEPTOR_MODE: Final = "mcp_django.interceptor.mode"
VERDICT: Final = "mcp_django.interceptor.verdict"

_UID: Final = "mcp_django.telemetry.interceptors"


def connect(tracer: trace.Tracer, refusals: metrics.Counter, audit_rows: metrics.Counter) -> None:
    """Trace every phase of every interceptor chain with `tracer`, and count its refusals and audit rows
    (once per process: later calls change nothing)."""

    def receiver(sender: Any, chain: ChainResult, **kwargs: Any) -> None:
        count(chain, refusals, audit_rows)
        spans(tracer, chain)

    phase_ran.connect(receiver, weak=False, dispatch_uid=_UID)


def spans(tracer: trace.Tracer, chain: ChainResult) -> None:
    """One INTERNAL span per invocation of `chain`, under the current span, named `interceptor {name}`.

    The phase has just ended: each span starts when the phase started (validations run concurrently;
    mutations and sinks one after another, so theirs start a little later than shown) and lasts as
    long as the invocation did.
    """
    current = trace.get_current_span()
    if not current.is_recording():
        return
    ended = time.time_ns()
    started = ended - int(chain.total_duration_ms * 1e6)
    for entry, result, error, duration_ms in chain.outcomes:
        verdict = error if error is not None else _verdict(result)
        attributes = {
            METHOD_NAME: chain.event,
            INTERCEPTOR_NAME: entry.name,
            INTERCEPTOR_TYPE: entry.type,
            INTERCEPTOR_PHASE: chain.phase,
            INTERCEPTOR_MODE: entry.mode,
            VERDICT: verdict,
        }
        span = tracer.start_span(f"interceptor {entry.name}", start_time=started, attributes=attributes)
        if error is not None:
            span.set_status(trace.Status(trace.StatusCode.ERROR, error))
            span.set_attribute("error.type", "timeout" if error == "timeout" else "_OTHER")
        span.end(end_time=started + int(duration_ms * 1e6))


def count(chain: ChainResult, refusals: metrics.Counter, audit_rows: metrics.Counter) -> None:
    """A refusal when the phase blocked the operation (`rate_limit` when a rate limit said no, else
    `interceptor`), and each audit row by what became of it (`committed`, `spooled`, `dropped`)."""
    if chain.blocked:
        limited = any(
            isinstance(entry.interceptor, RateLimitInterceptor)
            and isinstance(result, ValidationResult)
            and not result.valid
            for entry, result, _, _ in chain.outcomes
        )
        reason = "rate_limit" if limited else "interceptor"
        refusals.add(1, {semconv.REFUSAL_REASON: reason, METHOD_NAME: chain.event})
    for _, result, _, _ in chain.outcomes:
        stored = result.info.get("stored") if isinstance(result, SinkResult) and result.info else None
        if isinstance(stored, str):
            audit_rows.add(1, {semconv.AUDIT_OUTCOME: stored})


def _verdict(result: ValidationResult | MutationResult | SinkResult | None) -> str:
    if isinstance(result, ValidationResult):
        return "valid" if result.valid else "invalid"
    if isinstance(result, MutationResult):
        return "modified" if result.modified else "unchanged"
    if isinstance(result, SinkResult):
        return "recorded" if result.recorded else "not_recorded"
    return "none"
