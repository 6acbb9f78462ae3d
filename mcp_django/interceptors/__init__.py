"""Interceptors: validation, mutation and sink plug-ins around every MCP operation (SEP-2624).

Configure them like `MIDDLEWARE`, in `MCP_DJANGO["INTERCEPTORS"]` (or per endpoint with
`endpoint(..., interceptors=[...])`); `docs/interceptors.md` describes the format, the
execution order and the built-ins (`mcp_django.interceptors.audit`, `.redaction`, `.limits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp_django.conf import mcp_settings
from mcp_django.interceptors.base import (
    EVENTS,
    PHASES,
    Interceptor,
    InterceptorContext,
    Invocation,
    MutationInterceptor,
    MutationResult,
    NoOptions,
    SinkInterceptor,
    SinkResult,
    ValidationInterceptor,
    ValidationMessage,
    ValidationResult,
)
from mcp_django.interceptors.chain import ChainResult, InterceptorPlan, build_plan
from mcp_django.interceptors.config import InterceptorConfigError
from mcp_django.interceptors.hook import InterceptorHook
from mcp_django.interceptors.invoke import InvocationRecord
from mcp_django.interceptors.protocol import EXTENSION, interceptor_capability, interceptor_methods

__all__ = [
    "EVENTS",
    "PHASES",
    "ChainResult",
    "Interceptor",
    "InterceptorConfigError",
    "InterceptorContext",
    "InterceptorHook",
    "InterceptorPlan",
    "Invocation",
    "InvocationRecord",
    "MutationInterceptor",
    "MutationResult",
    "NoOptions",
    "SinkInterceptor",
    "SinkResult",
    "ValidationInterceptor",
    "ValidationMessage",
    "ValidationResult",
    "build_plan",
    "handler_options",
]


def handler_options(
    interceptors: Sequence[Any] | None = None, *, protocol: bool = False, label: str | None = None
) -> dict[str, Any]:
    """The `MessageHandler` keyword arguments that run an interceptor chain (and, if asked, serve its protocol).

    Args:
        interceptors: the entries; None means `MCP_DJANGO["INTERCEPTORS"]`.
        protocol: also serve `interceptors/list` and `interceptor/invoke` and advertise the extension.
        label: how configuration errors name the list.

    Raises:
        InterceptorConfigError: the list has mistakes (the system checks report them at start-up).
    """
    config = mcp_settings.INTERCEPTORS if interceptors is None else interceptors
    plan = build_plan(
        config,
        label=label or "MCP_DJANGO['INTERCEPTORS']",
        directions=mcp_settings.INTERCEPTOR_DIRECTIONS,
        chain_timeout_ms=mcp_settings.INTERCEPTOR_CHAIN_TIMEOUT_MS,
    )
    options: dict[str, Any] = {}
    if plan:
        options["hook"] = InterceptorHook(plan)
    if protocol:
        options["extra_methods"] = interceptor_methods(plan)
        capability = interceptor_capability(plan)
        if capability["supportedEvents"]:
            options["extensions"] = {EXTENSION: capability}
    return options
