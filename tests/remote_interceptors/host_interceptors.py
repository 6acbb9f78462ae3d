"""Interceptors the test interceptor server hosts (host_urls.py): each does one visible thing."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_django.interceptors import (
    Invocation,
    MutationInterceptor,
    MutationResult,
    SinkInterceptor,
    ValidationInterceptor,
    ValidationResult,
)


def _strings(value: Any, change: Any) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {key: _strings(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [_strings(item, change) for item in value]
    return value


class Guard(ValidationInterceptor):
    """Refuses a tool call whose arguments say 'forbidden'."""

    name = "guard"
    events = ("tools/call",)
    phases = ("request",)

    def validate(self, invocation: Invocation) -> ValidationResult:
        if "forbidden" in str(invocation.payload.get("arguments")):
            return ValidationResult(valid=False, reason="the word 'forbidden' is not allowed")
        return ValidationResult(valid=True)


class Rewrite(MutationInterceptor):
    """Rewrites 'secret' to '[hidden]' in a tool call's arguments (exactly that case)."""

    name = "rewrite"
    events = ("tools/call",)
    phases = ("request",)
    priority = 10

    def mutate(self, invocation: Invocation) -> MutationResult:
        payload = invocation.payload
        arguments = _strings(payload.get("arguments", {}), lambda text: text.replace("secret", "[hidden]"))
        return MutationResult(
            modified=arguments != payload.get("arguments", {}), payload={**payload, "arguments": arguments}
        )


class Stall(ValidationInterceptor):
    """Takes a minute to decide (only a timeout ends it sooner)."""

    name = "stall"
    events = ("tools/call",)
    phases = ("request",)

    async def validate(self, invocation: Invocation) -> bool:
        await asyncio.sleep(60)
        return True


class StallingSink(SinkInterceptor):
    """Takes a minute to record a call's result."""

    name = "stalling-sink"
    events = ("tools/call",)
    phases = ("response",)
    # hosted to be run by other servers' chains, so it opts in to `interceptor/invoke`
    invocable = True

    async def record(self, invocation: Invocation) -> None:
        await asyncio.sleep(60)
