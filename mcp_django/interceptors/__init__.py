"""Interceptors: validation, mutation and sink plug-ins around every MCP operation (SEP-2624).

Configure them like `MIDDLEWARE`, in `MCP_DJANGO["INTERCEPTORS"]` (or per endpoint with
`endpoint(..., interceptors=[...])`); `docs/interceptors.md` describes the format, the
execution order and the built-ins (`mcp_django.interceptors.audit`, `.redaction`, `.limits`).
SEP-2624's wire methods are an extension an endpoint serves when asked (`.protocol.InterceptorsExtension`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp_django.conf import mcp_settings
from mcp_django.interceptors.base import (
    EVENTS,
    PHASES,
    Interceptor,
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
from mcp_django.interceptors.chain import ChainResult, InterceptorPlan, build_plan
from mcp_django.interceptors.config import InterceptorConfigError
from mcp_django.interceptors.hook import InterceptorHook
from mcp_django.interceptors.invoke import InvocationRecord

if TYPE_CHECKING:
    from mcp_django.interceptors.base import NoOptions

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
    "chain_plan",
    "handler_options",
]


def __getattr__(name: str) -> Any:
    """`NoOptions`, built when first asked for (`mcp_django.interceptors.base.LazyOptions`)."""
    if name == "NoOptions":
        from mcp_django.interceptors import base

        return base.NoOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def chain_plan(interceptors: Sequence[Any] | None = None, *, label: str | None = None) -> InterceptorPlan:
    """The plan of a list of local interceptors, with the settings' directions and chain timeout.

    Args:
        interceptors: the entries; None means `MCP_DJANGO["INTERCEPTORS"]`.
        label: how configuration errors name the list.

    Raises:
        InterceptorConfigError: the list has mistakes (the system checks report them at start-up).
    """
    return build_plan(
        mcp_settings.INTERCEPTORS if interceptors is None else interceptors,
        label=label or "MCP_DJANGO['INTERCEPTORS']",
        directions=mcp_settings.INTERCEPTOR_DIRECTIONS,
        chain_timeout=mcp_settings.INTERCEPTOR_CHAIN_TIMEOUT,
    )


def handler_options(interceptors: Sequence[Any] | None = None, *, label: str | None = None) -> dict[str, Any]:
    """The `MessageHandler` keyword arguments that run a chain of local interceptors: `hook`, when there is one.

    An endpoint's chain may also name remote interceptor servers: `mcp_django.extensions.chain_options`
    builds that one. SEP-2624's wire methods are an extension (`interceptors.protocol.InterceptorsExtension`).

    Raises:
        InterceptorConfigError: the list has mistakes (the system checks report them at start-up).
    """
    plan = chain_plan(interceptors, label=label)
    return {"hook": InterceptorHook(plan)} if plan else {}
