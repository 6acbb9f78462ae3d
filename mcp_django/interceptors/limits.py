"""Limits: a per-user, per-tool rate limit backed by Django's cache, and an argument-size limit."""

from __future__ import annotations

import json
import math
import time

import pydantic
from django.core.cache import caches

from mcp_django.interceptors.base import Invocation, ValidationInterceptor, ValidationMessage, ValidationResult


class RateLimitOptions(pydantic.BaseModel):
    """Options of `RateLimitInterceptor`."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    calls: int = pydantic.Field(60, gt=0, description="Calls allowed per user and tool in each window.")
    per_seconds: int = pydantic.Field(60, gt=0, description="The window, in seconds.")
    cache: str = pydantic.Field("default", description="The CACHES alias that keeps the counters.")
    tools: tuple[str, ...] | None = pydantic.Field(None, description="Limit only these tools (None: all).")


class RateLimitInterceptor(ValidationInterceptor):
    """Refuses a tool call when its caller already made `calls` calls of that tool in the current window.

    Counters live in Django's cache (fixed windows of `per_seconds`), so every worker sharing the
    cache shares the limit; anonymous callers share one counter per tool.
    """

    name = "rate-limit"
    description = "Limits tool calls per user and tool"
    events = ("tools/call",)
    phases = ("request",)
    Options = RateLimitOptions

    async def validate(self, invocation: Invocation) -> ValidationResult | bool:
        options: RateLimitOptions = invocation.options
        tool = str(invocation.payload.get("name", ""))
        if options.tools is not None and tool not in options.tools:
            return True
        caller = invocation.context.principal.get("id", "anonymous")
        now = time.time()
        window = int(now // options.per_seconds)
        key = f"mcp_django:rate:{caller}:{tool}:{options.per_seconds}:{window}"
        cache = caches[options.cache]
        if await cache.aadd(key, 1, timeout=options.per_seconds + 1):
            count = 1
        else:
            try:
                count = await cache.aincr(key)
            except ValueError:  # the counter expired between add and incr: this call opens a new one
                await cache.aset(key, 1, timeout=options.per_seconds + 1)
                count = 1
        if count <= options.calls:
            return True
        message = f"more than {options.calls} calls of {tool!r} in {options.per_seconds}s"
        return ValidationResult(
            valid=False,
            severity="error",
            messages=[ValidationMessage(message)],
            reason=f"rate limit reached: at most {options.calls} calls of {tool!r} every {options.per_seconds} seconds",
            retry_after=max(1, math.ceil((window + 1) * options.per_seconds - now)),
        )


class ArgumentSizeOptions(pydantic.BaseModel):
    """Options of `ArgumentSizeInterceptor`."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    max_bytes: int = pydantic.Field(65_536, gt=0, description="Largest JSON encoding of the arguments, in bytes.")


class ArgumentSizeInterceptor(ValidationInterceptor):
    """Refuses a tool call or prompt whose arguments, encoded as compact UTF-8 JSON, exceed `max_bytes`."""

    name = "argument-size"
    description = "Limits the size of tool and prompt arguments"
    events = ("tools/call", "prompts/get")
    phases = ("request",)
    Options = ArgumentSizeOptions

    async def validate(self, invocation: Invocation) -> ValidationResult | bool:
        options: ArgumentSizeOptions = invocation.options
        arguments = invocation.payload.get("arguments") or {}
        size = len(json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, default=str).encode())
        if size <= options.max_bytes:
            return True
        message = f"arguments are {size} bytes, more than {options.max_bytes}"
        return ValidationResult(
            valid=False,
            severity="error",
            messages=[ValidationMessage(message, path="arguments")],
            reason=f"the arguments are {size} bytes long; send at most {options.max_bytes}",
        )
