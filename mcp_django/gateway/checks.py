"""The gateway's system checks: the server each gateway endpoint names (E031).

`SERVERS` entries themselves are checked with the interceptor entries (`interceptor_checks`: E040, E041).
Registered by `MCPDjangoConfig.ready()` beside those of `mcp_django.checks` (where every other ID lives).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, register

from mcp_django.checks_support import setting as _setting
from mcp_django.checks_support import short as _short
from mcp_django.conf import mcp_settings
from mcp_django.endpoints import mounted_endpoints
from mcp_django.gateway.connection import config_problems
from mcp_django.gateway.endpoint import GatewayEndpoint

__all__ = ["check_gateways"]


@register(Tags.urls)
def check_gateways(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check the server each gateway endpoint names (E031)."""
    servers = mcp_settings.SERVERS if isinstance(mcp_settings.SERVERS, Mapping) else {}
    messages: list[CheckMessage] = []
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf: check_endpoints and Django's URL checks report it
        return messages
    for endpoint in endpoints:
        specs = endpoint.server_specs() if isinstance(endpoint, GatewayEndpoint) else ()
        for spec in specs:
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
                    id="mcp_django.E031",
                )
            )
    return messages
