"""Checks of what the apps declare and load: registries' names, providers, buses, and the admin's state rows.

Registered by `MCPDjangoConfig.ready()`; IDs are documented in `docs/checks.md`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcp_django.checks.support import short


@register(Tags.compatibility)
def check_registries(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check every registry's tool, resource and prompt names against MCP's rules."""
    from mcp_django.registry import all_registries

    return [
        Error(
            error,
            hint=f"Rename or fix it in the {registry.name!r} registry.",
            obj=registry,
            id="mcp_django.E008",
        )
        for registry in all_registries()
        for error in registry.name_errors()
    ]


@register(Tags.compatibility)
def check_providers(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Report what went wrong loading the apps' `mcp_providers`: imports, types, methods, duplicate ids."""
    from mcp_django.providers import provider_registry

    return [Error(message, hint=hint, id=check_id) for check_id, message, hint in provider_registry.problems]


@register(Tags.compatibility)
def check_bus_providers(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Warn about bus providers without a whitelist: they expose every action of their bus to MCP clients."""
    from mcp_django.bus import BusProvider
    from mcp_django.endpoints import mounted_endpoints
    from mcp_django.providers import provider_registry

    providers = list(provider_registry)
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf is Django's URL checks' to report
        endpoints = []
    for endpoint in endpoints:
        try:
            served = endpoint.providers
        except LookupError:  # an unknown provider id is mcp_django.E014
            continue
        providers += served
    seen: set[str] = set()
    messages: list[CheckMessage] = []
    for provider in providers:
        if isinstance(provider, BusProvider) and provider.actions is None and provider.id not in seen:
            seen.add(provider.id)
            messages.append(
                Warning(
                    f"Bus provider {short(provider.id, 40)} exposes every action of its bus.",
                    hint=f"Set {type(provider).__name__}.actions to glob patterns, or ['*'] to mean it.",
                    obj=provider,
                    id="mcp_django.W002",
                )
            )
    return messages


@register(Tags.database)
def check_state_rows(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Warn about admin state rows naming a provider or interceptor no longer in code (they have no effect).

    A database check: it runs with `manage.py check --database default` and before `migrate`.
    """
    if not kwargs.get("databases"):
        return []
    from mcp_django.control.inventory import code_interceptors, code_providers
    from mcp_django.models import InterceptorState, ProviderState

    try:
        stale = [
            ("provider", name)
            for name in ProviderState.objects.exclude(provider_id__in=[p.id for p in code_providers()])
            .order_by("provider_id")
            .values_list("provider_id", flat=True)
        ]
        stale += [
            ("interceptor", name)
            for name in InterceptorState.objects.exclude(name__in=list(code_interceptors()))
            .order_by("name")
            .values_list("name", flat=True)
        ]
    except Exception:  # no tables yet: migrate has not run
        return []
    return [
        Warning(
            f"The MCP {kind} row {short(name, 40)} names nothing in code.",
            hint="Delete the row in the admin, or restore what it names.",
            id="mcp_django.W010",
        )
        for kind, name in stale
    ]
