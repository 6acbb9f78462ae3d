"""System checks of the remote servers: `SERVERS` and the interceptor lists' `{"SERVER": ...}` entries.

IDs `mcp_django_gateway.E040` to `E042` and `W040` (docs/checks.md); `MCPDjangoConfig.ready()` registers them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcp_django.conf import SETTING_NAME
from mcp_django.gateway.interceptor_servers import server_problems

_SERVERS: Final = f"{SETTING_NAME}['SERVERS']"
_HINT: Final = "Give URL or COMMAND, and optional HEADERS, TOKEN, FAIL_OPEN, TIMEOUT (docs/gateway.md)."


@register(Tags.compatibility)
def check_interceptor_servers(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check `SERVERS` and every `{"SERVER": ...}` entry of the interceptor lists."""
    user = getattr(settings, SETTING_NAME, {})
    if not isinstance(user, Mapping):
        return []  # mcp_django.E001
    servers = user.get("SERVERS", {})
    if not isinstance(servers, Mapping) or not all(isinstance(name, str) and name for name in servers):
        hint = "Map each server's name to {'URL': ...} or {'COMMAND': [...]}."
        return [Error(f"{_SERVERS} must be a dict of names to servers.", hint=hint, id="mcp_django_gateway.E040")]
    messages: list[CheckMessage] = [
        Error(f"{_SERVERS}[{name!r}] {problem}.", hint=_HINT, id="mcp_django_gateway.E041")
        for name, config in servers.items()
        for problem in server_problems(config)
    ]
    for label, config in _lists(user):
        for index, raw in enumerate(config):
            if isinstance(raw, Mapping) and "SERVER" in raw:
                messages += _check_entry(f"{label}[{index}]", raw, servers)
    return messages


def _lists(user: Mapping[str, Any]) -> list[tuple[str, Any]]:
    from mcp_django.endpoints import mounted_endpoints

    lists: list[tuple[str, Any]] = [(f"{SETTING_NAME}['INTERCEPTORS']", user.get("INTERCEPTORS", []))]
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf is Django's URL checks' to report
        endpoints = []
    lists += [(f"Endpoint {e.name!r} interceptors", e.interceptors) for e in endpoints if e.interceptors is not None]
    return [(label, config) for label, config in lists if isinstance(config, (list, tuple))]


def _check_entry(where: str, raw: Mapping[str, Any], servers: Mapping[str, Any]) -> list[CheckMessage]:
    spec = raw["SERVER"]
    if set(raw) != {"SERVER"}:
        hint = "Set FAIL_OPEN and TIMEOUT on the server, in SERVERS."
        return [Error(f"{where} has keys besides SERVER.", hint=hint, id="mcp_django_gateway.E042")]
    if isinstance(spec, str):
        if spec in servers or spec == "*":
            return []
        hint = "Add it to SERVERS, or as an MCP remote server in the admin."
        return [Warning(f"{where} names no server of SERVERS.", hint=hint, id="mcp_django_gateway.W040")]
    problems = server_problems(spec)
    if problems:
        return [Error(f"{where} SERVER {problems[0]}.", hint=_HINT, id="mcp_django_gateway.E042")]
    return []
