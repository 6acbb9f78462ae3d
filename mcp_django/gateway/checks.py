"""The gateway's system checks: `GATEWAYS` entries (E030) and the backend each gateway endpoint names (E031).

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
    """Check `GATEWAYS` entries (E030) and the backend each gateway endpoint names (E031)."""
    gateways = mcp_settings.GATEWAYS if isinstance(mcp_settings.GATEWAYS, Mapping) else {}
    messages: list[CheckMessage] = [
        Error(
            f"{_setting('GATEWAYS')}[{_short(name, 40)}]: {problems[0]}.",
            hint="Give it a URL or a COMMAND, and only the keys docs/gateway.md lists.",
            id="mcp_django.E030",
        )
        for name, config in gateways.items()
        if (problems := config_problems(config))
    ]
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf: check_endpoints and Django's URL checks report it
        return messages
    for endpoint in endpoints:
        spec = endpoint.backend_spec if isinstance(endpoint, GatewayEndpoint) else None
        if isinstance(spec, str) and spec not in gateways:
            problem = f"no {_setting('GATEWAYS')} entry {_short(spec, 30)}"
        elif isinstance(spec, Mapping) and config_problems(spec):
            problem = config_problems(spec)[0]
        else:
            continue
        messages.append(
            Error(
                f"Gateway endpoint {endpoint.name!r}'s backend: {problem}.",
                hint="Name a GATEWAYS entry, or pass a dict with a URL or a COMMAND.",
                id="mcp_django.E031",
            )
        )
    return messages
