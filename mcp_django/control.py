"""The admin's control over what runs: code inventory, state rows, and what a change sets in motion.

`MCPDjangoConfig.ready()` calls `connect()`. From then on, saving or deleting a `ProviderState`,
`InterceptorState` or `GroupScope` row writes a fresh `"state"` stamp (every worker reloads within
`MCP_DJANGO["STATE_CHECK_INTERVAL"]`), deleting an `MCPSession` a fresh `"sessions"` stamp, and once
a provider change commits, every endpoint serving that provider tells its listening clients
`notifications/tools/list_changed` (and the resource and prompt equivalents the provider serves).

The admin shows every provider and interceptor in code, row or not: `sync_rows()` (run when a
change list opens) creates the missing rows with blank fields, which mean "as the code says", and
flags rows whose provider or interceptor is gone (docs/adr/0002-admin-state-rows.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pydantic
from asgiref.sync import async_to_sync
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from mcp_django.conf import mcp_settings
from mcp_django.endpoints import Endpoint, mounted_endpoints
from mcp_django.interceptors.chain import PlanEntry, build_plan
from mcp_django.protocol.context import Connection, RequestContext
from mcp_django.protocol.errors import validation_problems
from mcp_django.protocol.versions import Era
from mcp_django.providers import PromptProvider, Provider, ResourceProvider, ToolProvider, provider_registry
from mcp_django.scopes import Scope
from mcp_django.state import SESSIONS, STATE, bump, control_state

__all__ = [
    "announce_provider",
    "announce_scopes",
    "code_interceptors",
    "code_providers",
    "code_tools",
    "connect",
    "endpoints_serving",
    "interceptor_options_error",
    "list_changed_methods",
    "listed_tools",
    "sync_rows",
]

logger = logging.getLogger("mcp_django.state")


def code_providers() -> list[Provider]:
    """Every provider the installed apps name, in their order."""
    return list(provider_registry.providers)


def _endpoints() -> list[Endpoint]:
    try:
        return mounted_endpoints()
    except Exception:  # a broken URLconf is the checks' business, not the admin's
        return []


def code_interceptors() -> dict[str, PlanEntry]:
    """Every interceptor the settings and the mounted endpoints configure, by name, with its configured policy."""
    configs: list[Any] = [mcp_settings.INTERCEPTORS]
    configs += [endpoint.interceptors for endpoint in _endpoints() if endpoint.interceptors is not None]
    found: dict[str, PlanEntry] = {}
    for config in configs:
        try:
            plan = build_plan(config)
        except Exception:  # the checks report configuration mistakes
            continue
        for entry in plan.entries:
            found.setdefault(entry.name, entry)
    return found


def endpoints_serving(provider_id: str) -> list[Endpoint]:
    """The mounted endpoints whose providers include `provider_id`."""
    serving = []
    for endpoint in _endpoints():
        try:
            if any(provider.id == provider_id for provider in endpoint.providers):
                serving.append(endpoint)
        except LookupError:
            continue
    return serving


def list_changed_methods(provider: Provider) -> list[str]:
    """The list-changed notifications a change of `provider` calls for, by what it serves."""
    methods = []
    for kind, feature in ((ToolProvider, "tools"), (ResourceProvider, "resources"), (PromptProvider, "prompts")):
        if isinstance(provider, kind):
            methods.append(f"notifications/{feature}/list_changed")
    return methods


def announce_provider(provider_id: str) -> None:
    """Tell the clients of every endpoint serving `provider_id` that its lists changed."""
    from mcp_django.notifications import send_notification_sync

    control_state.invalidate()
    try:
        provider = provider_registry.get(provider_id)
    except LookupError:
        return
    for endpoint in endpoints_serving(provider_id):
        for method in list_changed_methods(provider):
            try:
                send_notification_sync(endpoint, method)
            except Exception:
                logger.warning("Could not send %s to %r", method, endpoint, exc_info=True)


def listed_tools(endpoint: Endpoint, scope: Scope = Scope.SYSTEM) -> list[str]:
    """The names of the tools a caller of `scope` gets from `endpoint`'s backend (before the admin's tool switches).

    Raises whatever a provider's `list_tools` raises.
    """

    async def names() -> list[str]:
        async def fixed(ctx: RequestContext) -> Scope:
            return scope

        ctx = RequestContext(
            method="tools/list",
            request_id=None,
            era=Era.STATELESS,
            protocol_version="admin",
            connection=Connection(endpoint=endpoint, transport="admin"),
        )
        return [str(tool.get("name")) for tool in await endpoint.build_backend(fixed).list_tools(ctx)]

    if "tools" not in endpoint.build_backend().capabilities():
        return []
    return list(async_to_sync(names)())


def code_tools() -> dict[str, list[str]]:
    """Every tool a caller of the highest scope sees on some endpoint now, with the names of those endpoints.

    Tools of a provider switched off are not listed, so their rows read "not present" until it is back.
    """
    control_state.refresh_sync()
    tools: dict[str, list[str]] = {}
    for endpoint in _endpoints():
        try:
            names = listed_tools(endpoint)
        except Exception:  # a failing provider: the dashboard shows it, the tool list does without
            logger.warning("Listing the tools of %r failed", endpoint, exc_info=True)
            continue
        for name in names:
            tools.setdefault(name, []).append(endpoint.name)
    return tools


def announce_scopes(features: tuple[str, ...] = ("tools", "resources", "prompts")) -> None:
    """Tell the clients of every endpoint that its lists of `features` may have changed."""
    from mcp_django.notifications import send_notification_sync

    control_state.invalidate()
    for endpoint in _endpoints():
        for feature in sorted(endpoint.handler.features & set(features)):
            try:
                send_notification_sync(endpoint, f"notifications/{feature}/list_changed")
            except Exception:
                logger.warning("Could not send %s list_changed to %r", feature, endpoint, exc_info=True)


def interceptor_options_error(name: str, options: Any) -> str | None:
    """Why the interceptor configured as `name` rejects `options`, or None (also for a name no list configures)."""
    entry = code_interceptors().get(name)
    if entry is None:
        return None
    try:
        type(entry.interceptor).Options.model_validate(options)
    except pydantic.ValidationError as error:
        where, problem, *_ = validation_problems(error)[0]
        return f"{type(entry.interceptor).__name__} rejects these options ({where or 'options'}: {problem})."
    return None


def sync_rows(model: Any) -> None:
    """Give everything in code a row of `model` (blank: the code's defaults) and flag rows of vanished things.

    `model` is `ProviderState`, `InterceptorState` or `ToolState`. Uses `bulk_create` and `update`, which
    send no signals: nothing changes for a client, so no stamp moves.
    """
    from mcp_django.models import InterceptorState, ProviderState, ToolState

    inventory: dict[Any, tuple[str, Callable[[], set[str]]]] = {
        ProviderState: ("provider_id", lambda: {provider.id for provider in code_providers()}),
        InterceptorState: ("name", lambda: set(code_interceptors())),
        ToolState: ("name", lambda: set(code_tools())),
    }
    field, in_code = inventory[model]
    names = in_code()
    existing = set(model.objects.values_list(field, flat=True))
    model.objects.bulk_create([model(**{field: name}) for name in sorted(names - existing)], ignore_conflicts=True)
    model.objects.exclude(**{f"{field}__in": names}).filter(present_in_code=True).update(present_in_code=False)
    model.objects.filter(**{f"{field}__in": names}, present_in_code=False).update(present_in_code=True)


# -- signals ----------------------------------------------------------------------------------------


def _state_changed(sender: Any, **kwargs: Any) -> None:
    bump(STATE)


def _provider_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    bump(STATE)
    provider_id = instance.provider_id
    transaction.on_commit(lambda: announce_provider(provider_id))


def _scope_changed(sender: Any, **kwargs: Any) -> None:
    bump(STATE)
    transaction.on_commit(announce_scopes)


def _tool_changed(sender: Any, **kwargs: Any) -> None:
    bump(STATE)
    transaction.on_commit(lambda: announce_scopes(("tools",)))


def _session_ended(sender: Any, **kwargs: Any) -> None:
    bump(SESSIONS)


def connect() -> None:
    """Connect the signal receivers that move the stamps and announce provider changes (from `ready()`)."""
    from mcp_django.models import GroupScope, InterceptorState, MCPSession, ProviderState, ToolState

    for signal in (post_save, post_delete):
        signal.connect(_provider_changed, sender=ProviderState, dispatch_uid="mcp_django.provider_state")
        signal.connect(_state_changed, sender=InterceptorState, dispatch_uid="mcp_django.interceptor_state")
        signal.connect(_scope_changed, sender=GroupScope, dispatch_uid="mcp_django.group_scope")
        signal.connect(_tool_changed, sender=ToolState, dispatch_uid="mcp_django.tool_state")
    post_delete.connect(_session_ended, sender=MCPSession, dispatch_uid="mcp_django.session_ended")
    mcp_settings.on_reload(control_state.forget_interval)
