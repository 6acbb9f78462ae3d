"""Interceptors: validation, mutation and sink plug-ins around every MCP operation (SEP-2624).

Configure them like `MIDDLEWARE`, in `MCP_DJANGO["INTERCEPTORS"]` (or per endpoint with
`endpoint(..., interceptors=[...])`); `docs/interceptors.md` describes the format, the
execution order and the built-ins (`mcp_django.interceptors.audit`, `.redaction`, `.limits`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.core.exceptions import ImproperlyConfigured

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
from mcp_django.interceptors.config import InterceptorConfigError, is_server_entry
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
    "chain_options",
    "handler_options",
    "register_server_entries",
]

ServerEntries = Callable[[Sequence[Any], Sequence[Any], str], Any]
"""Builds the hook running a chain whose list names remote servers: `(local entries, whole list, label)`."""
_server_entries: list[ServerEntries] = []


def register_server_entries(builder: ServerEntries) -> None:
    """Install what runs the `{"SERVER": ...}` entries of interceptor lists (the gateway package, at `ready()`).

    The chain is built here, in `interceptors/`, whatever its entries; how a remote server's
    interceptors are listed and invoked is the remote package's, so the core imports none of it.
    """
    _server_entries[:] = [builder]


def chain_options(config: Any, *, protocol: bool = False, label: str | None = None) -> dict[str, Any]:
    """`handler_options` for a list that may also name remote interceptor servers (`{"SERVER": ...}`).

    Local entries build the plan as `handler_options` does; when the list names servers, the hook
    the registered builder returns runs the merged chain instead. The wire methods (`protocol`) serve
    the list's local interceptors only.

    Raises:
        InterceptorConfigError: the list has mistakes.
        ImproperlyConfigured: it names servers and no package registered what runs them.
    """
    if not isinstance(config, (list, tuple)) or not any(is_server_entry(raw) for raw in config):
        return handler_options(config, protocol=protocol, label=label)
    local = [raw for raw in config if not is_server_entry(raw)]
    options = handler_options(local, protocol=protocol, label=label)
    if not _server_entries:
        raise ImproperlyConfigured(f"{label or 'The interceptor list'} names servers, and no package runs them")
    hook = _server_entries[0](local, config, label or "MCP_DJANGO['INTERCEPTORS']")
    if hook is not None:
        options["hook"] = hook
    return options


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
        chain_timeout=mcp_settings.INTERCEPTOR_CHAIN_TIMEOUT,
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
