"""The gateway's system checks: the server each gateway endpoint names (E031), hubs (E141 to E143), the
bound on one forwarded call (W160), and remote definitions served unpinned (W250).

`SERVERS` entries themselves are checked with the interceptor entries (`interceptor_checks`: E040, E041).
Registered by `MCPDjangoConfig.ready()`; the IDs are the gateway's, `mcp_django_gateway.*`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcp_django.checks.support import is_number
from mcp_django.checks.support import setting as _setting
from mcp_django.checks.support import short as _short
from mcp_django.client.conf import client_settings
from mcp_django.client.servers import config_problems
from mcp_django.endpoints import Endpoint, mounted_endpoints
from mcp_django.gateway.extension import entry_problems, is_hub, remote_sources
from mcp_django.gateway.source import NAMESPACE


@register(Tags.urls)
def check_gateways(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check the server each gateway endpoint names (E031)."""
    servers = client_settings.SERVERS if isinstance(client_settings.SERVERS, Mapping) else {}
    messages: list[CheckMessage] = []
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf: check_endpoints and Django's URL checks report it
        return messages
    for endpoint in endpoints:
        for spec in (source.spec for source in remote_sources(endpoint)):
            if isinstance(spec, str) and spec not in servers:
                problem = f"no {_setting('SERVERS')} entry {_short(spec, 30)}"
            elif isinstance(spec, Mapping) and config_problems(spec):
                problem = config_problems(spec)[0]
            else:
                continue
            messages.append(
                Error(
                    f"Gateway endpoint {endpoint.name!r}'s server: {problem}.",
                    hint="Name a SERVERS entry, or pass a dict with a URL or a COMMAND.",
                    id="mcp_django_gateway.E031",
                )
            )
    return messages


@register(Tags.urls)
def check_hubs(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check each hub's `servers=` entries (E141), namespaces (E142) and local names inside them (E143)."""
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf: check_endpoints and Django's URL checks report it
        return []
    messages: list[CheckMessage] = []
    for endpoint in endpoints:
        if endpoint.servers and is_hub(endpoint):
            messages += _hub_problems(endpoint)
    return messages


def _hub_problems(hub: Endpoint) -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    hint = "A SERVERS name, or {'SERVER': ..., 'NAMESPACE': 'gh'} (docs/federation.md)."
    for index, entry in enumerate(hub.servers):
        for problem in entry_problems(entry):
            messages.append(
                Error(f"Hub {hub.name!r} servers[{index}]: {problem}.", hint=hint, id="mcp_django_gateway.E141")
            )
    sources = remote_sources(hub)
    for source in sources:
        if source.namespace and not NAMESPACE.fullmatch(source.namespace):
            problem = f"namespace {_short(source.namespace)} is not a letter, then letters, digits or '-'"
            messages.append(Error(f"Hub {hub.name!r}: {problem}.", hint=hint, id="mcp_django_gateway.E141"))
    counts: dict[str, int] = {}
    for source in sources:
        counts[source.namespace] = counts.get(source.namespace, 0) + 1
    for namespace, count in counts.items():
        if count > 1 or (not namespace and len(hub.sources()) > 1):
            shown = _short(namespace) if namespace else "'' (none)"
            messages.append(
                Error(
                    f"Hub {hub.name!r}: namespace {shown} is given to {count} of its sources.",
                    hint="Give each remote server of a hub a NAMESPACE of its own.",
                    id="mcp_django_gateway.E142",
                )
            )
    registry = hub.registry
    local = [*registry.tools, *registry.prompts] if registry is not None else []
    for source in sources:
        for name in local:
            if source.namespace and source.inner_name(name) is not None:
                messages.append(
                    Error(
                        f"Hub {hub.name!r}: local {_short(name)} is in the namespace of {_short(source.name)}.",
                        hint="Rename the tool or prompt, or give the server another NAMESPACE.",
                        id="mcp_django_gateway.E143",
                    )
                )
    return messages


@register(Tags.compatibility)
def check_remote_call_timeout(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """W160: a forwarded operation must end before one remote answer may even arrive."""
    call, read = client_settings.REMOTE_CALL_TIMEOUT, client_settings.REMOTE_READ_TIMEOUT
    if not (is_number(call) and is_number(read) and 0 < call < read):
        return []  # fine, or E004
    return [
        Warning(
            f"{_setting('REMOTE_CALL_TIMEOUT')} is shorter than REMOTE_READ_TIMEOUT.",
            hint="A forwarded call would end before its answer is due: raise it, or lower the other.",
            id="mcp_django_gateway.W160",
        )
    ]


@register(Tags.security)
def check_remote_definitions(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """W250: with remote servers configured, their tools' definitions are trusted rather than pinned."""
    servers = client_settings.SERVERS
    if client_settings.REMOTE_DEFINITIONS != "trust" or not (isinstance(servers, Mapping) and servers):
        return []
    return [
        Warning(
            f"{_setting('REMOTE_DEFINITIONS')} is 'trust': remote tool changes go unreviewed.",
            hint="Use 'pin' (the default): a changed definition then waits for an admin's approval.",
            id="mcp_django_gateway.W250",
        )
    ]
