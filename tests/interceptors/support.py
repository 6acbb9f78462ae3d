"""Toy interceptors for the tests: each one does one thing and says so in a shared log."""

from __future__ import annotations

import asyncio

import pydantic

from mcp_django.interceptors import (
    InterceptorContext,
    Invocation,
    MutationInterceptor,
    MutationResult,
    SinkInterceptor,
    SinkResult,
    ValidationInterceptor,
    ValidationMessage,
    ValidationResult,
)

LOG: list[tuple[str, ...]] = []
"""What ran, in order: (kind, tag, phase)."""

CONTEXT = InterceptorContext(principal={"type": "anonymous"}, trace_id="t", timestamp="2026-01-01T00:00:00+00:00")


class Tagged(pydantic.BaseModel):
    tag: str = ""


class Step(MutationInterceptor):
    """Appends its tag to payload["steps"]."""

    Options = Tagged

    async def mutate(self, invocation: Invocation) -> MutationResult:
        LOG.append(("mutation", invocation.options.tag, invocation.phase))
        payload = invocation.payload
        payload["steps"] = [*payload.get("steps", []), invocation.options.tag]
        return MutationResult(modified=True, payload=payload)


class SyncStep(MutationInterceptor):
    """A sync mutator: uppercases arguments.text."""

    def mutate(self, invocation: Invocation) -> MutationResult:
        payload = invocation.payload
        payload["arguments"] = {"text": str(payload.get("arguments", {}).get("text", "")).upper()}
        return MutationResult(modified=True, payload=payload)


class Crash(MutationInterceptor):
    """Scribbles on its copy of the payload, then raises."""

    Options = Tagged

    async def mutate(self, invocation: Invocation) -> MutationResult:
        LOG.append(("mutation", invocation.options.tag, invocation.phase))
        invocation.payload["scribbled"] = True
        raise RuntimeError("boom")


class Liar(MutationInterceptor):
    """Says modified=False but returns another payload."""

    async def mutate(self, invocation: Invocation) -> MutationResult:
        return MutationResult(modified=False, payload={"other": True})


class Hang(MutationInterceptor):
    """Never finishes: only a timeout ends it."""

    async def mutate(self, invocation: Invocation) -> MutationResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class VerdictOptions(pydantic.BaseModel):
    tag: str = ""
    valid: bool = True
    severity: str | None = None
    messages: list[tuple[str, str]] = []
    hang: bool = False
    crash: bool = False


class Verdict(ValidationInterceptor):
    """Returns the verdict its options describe (or hangs, or crashes)."""

    Options = VerdictOptions

    async def validate(self, invocation: Invocation) -> ValidationResult:
        options: VerdictOptions = invocation.options
        LOG.append(("validation", options.tag, invocation.phase))
        if options.hang:
            await asyncio.Event().wait()
        if options.crash:
            raise RuntimeError("validator crashed")
        messages = [ValidationMessage(text, severity) for text, severity in options.messages]  # type: ignore[arg-type]
        return ValidationResult(valid=options.valid, severity=options.severity, messages=messages)


class Sees(ValidationInterceptor):
    """Records the payload it was shown."""

    Options = Tagged

    def validate(self, invocation: Invocation) -> bool:
        LOG.append(("validation", invocation.options.tag, invocation.phase, repr(invocation.payload.get("steps"))))
        return True


class Sink(SinkInterceptor):
    """Logs what it observed."""

    Options = Tagged

    async def record(self, invocation: Invocation) -> None:
        context = invocation.context
        LOG.append(("sink", invocation.options.tag, invocation.phase, str(context.outcome)))


class WireSink(Sink):
    """A sink its author lets callers run over the wire (sinks are not invocable by default)."""

    invocable = True


class Witness(ValidationInterceptor):
    """Reports the context it was handed, in its verdict's info."""

    def validate(self, invocation: Invocation) -> ValidationResult:
        context = invocation.context
        info = {"principal": dict(context.principal), "traceId": context.trace_id, "timestamp": context.timestamp}
        return ValidationResult(valid=True, info=info)


class BrokenSink(SinkInterceptor):
    async def record(self, invocation: Invocation) -> SinkResult:
        raise RuntimeError("sink down")


class StripSchemas(MutationInterceptor):
    """Breaks every listed tool's inputSchema."""

    events = ("tools/list",)
    phases = ("response",)

    async def mutate(self, invocation: Invocation) -> MutationResult:
        payload = invocation.payload
        for index, tool in enumerate(payload["tools"]):
            if index % 2:
                tool["inputSchema"] = {"type": "string"}
            else:
                tool.pop("inputSchema", None)
        return MutationResult(modified=True, payload=payload)


class ToolsOnly(ValidationInterceptor):
    """Declares tools/call in the request phase only."""

    events = ("tools/call",)
    phases = ("request",)

    def validate(self, invocation: Invocation) -> bool:
        return True


class BothPriorities(ValidationInterceptor):
    priority = 1
    request_priority = 2

    def validate(self, invocation: Invocation) -> bool:
        return True


class NotAnInterceptor:
    pass
