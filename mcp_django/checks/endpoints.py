"""Checks of the mounted endpoints: distinct paths and names, known providers, their interceptor lists (and the
settings'), declarations nothing on them delivers, and their own extensions.

A tool declared with `task=` or `app=` needs an extension on the endpoint that serves it; without one it
still works, but not as declared (it runs inline, hosts never see its view): E123, W200. An endpoint's
`extensions=` and `exclude_extensions=` are checked too (E120-E122, E151); the extensions only an
endpoint names run their own checks, as installed ones do in `check_extensions`. Endpoints that serve
remote MCP servers, and interceptor lists that name one (`{"SERVER": ...}`), need the gateway app: E172.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from django.apps import AppConfig, apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcp_django.checks.support import setting, short
from mcp_django.conf import SETTING_NAME


def _endpoints() -> list[Any]:
    from mcp_django.endpoints import mounted_endpoints

    try:
        return mounted_endpoints()
    except Exception:  # a broken URLconf is Django's URL checks' to report
        return []


def _tools_unserved(declares: Callable[[Any], bool], serves: Callable[[Any], bool]) -> list[str]:
    """The names of tools that `declares` picks on mounted endpoints that `serves` says nothing serves them on."""
    served = [endpoint.registry for endpoint in _endpoints() if endpoint.registry is not None and not serves(endpoint)]
    found = (name for registry in served for name, tool in registry.tools.items() if declares(tool))
    return list(dict.fromkeys(found))


@register(Tags.compatibility)
def check_tool_runners(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """E123: tools declared with `task=` on an endpoint where no served extension runs them (they would run inline)."""
    names = _tools_unserved(lambda tool: bool(tool.task), lambda endpoint: endpoint.tool_runner is not None)
    message = f"Tools declared as tasks ({', '.join(names[:3])}), but no extension runs tasks."
    hint = "Add 'mcp_django.tasks' to INSTALLED_APPS (docs/tasks.md), or drop task= from them."
    return [Error(message, hint=hint, id="mcp_django.E123")] if names else []


@register(Tags.compatibility)
def check_approval_runners(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """E124: tools declared with `approval=` on an endpoint where nothing runs approvals (every call refused)."""
    names = _tools_unserved(lambda tool: tool.approval is not None, lambda endpoint: endpoint.tool_runner is not None)
    message = f"Tools need approval ({', '.join(names[:3])}), but no extension runs approvals."
    hint = "Add 'mcp_django.tasks' to INSTALLED_APPS (docs/side-effects.md), or drop approval= from them."
    return [Error(message, hint=hint, id="mcp_django.E124")] if names else []


@register(Tags.compatibility)
def check_app_servers(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """W200: tools with a view (`app=`, a provider's `apps`) on an endpoint that serves no MCP Apps extension."""
    from mcp_django.endpoints import mounted_endpoints
    from mcp_django.ui import EXTENSION, apps_of

    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf is Django's URL checks' to report
        return []
    unserved = (endpoint for endpoint in endpoints if EXTENSION not in endpoint.served_extensions.capabilities)
    names = list(dict.fromkeys(name for endpoint in unserved for name in apps_of(endpoint)))
    message = f"Tools declare apps ({', '.join(names[:3])}), but no extension serves them."
    hint = "Add 'mcp_django.ui' to INSTALLED_APPS (docs/apps.md), or drop app= from them."
    return [Warning(message, hint=hint, id="mcp_django.W200")] if names else []


@register(Tags.compatibility)
def check_endpoint_extensions(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """E120-E122 for an endpoint's `extensions=`, E151 for an `exclude_extensions=` identifier nothing installs,
    then the checks of every extension only endpoints name (each message once)."""
    from mcp_django.extensions import installed_extensions, offered_extensions

    installed = installed_extensions()
    identifiers = {extension.identifier for extension in installed}
    messages: list[CheckMessage] = []
    checked: list[Any] = list(installed)
    for endpoint in _endpoints():
        offered, problems = offered_extensions(endpoint.added_extensions, endpoint.excluded_extensions)
        messages += [Error(message, hint=hint, obj=endpoint, id=id_) for id_, message, hint in problems]
        for identifier in endpoint.excluded_extensions:
            if identifier not in identifiers:
                message = f"Excluded extension {short(identifier, 40)} is not installed."
                hint = f"Name one of: {', '.join(sorted(identifiers))}." if identifiers else "Remove it."
                messages.append(Error(message, hint=hint, obj=endpoint, id="mcp_django.E151"))
        for extension in offered:
            if not any(extension is seen for seen in checked):
                checked.append(extension)
                messages += extension.check()
    unique: list[CheckMessage] = []
    for found in messages:  # two endpoints naming one extension each get an instance: one report
        if found not in unique:
            unique.append(found)
    return unique


@register(Tags.urls)
def check_endpoints(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check the endpoints the root URLconf mounts: distinct paths and names, known provider ids."""
    from django.core.exceptions import ImproperlyConfigured

    from mcp_django.endpoints import endpoint_registry
    from mcp_django.providers import provider_registry

    try:
        registry = endpoint_registry()
    except ImproperlyConfigured as error:
        message, _, hint = str(error).partition("; ")
        return [Error(f"{message}.", hint=f"{hint[:1].upper()}{hint[1:]}", id="mcp_django.E013")]
    except Exception:  # a URLconf that does not import: Django's own URL checks report it
        return []
    messages: list[CheckMessage] = []
    for endpoint in registry:
        for provider_id in endpoint.provider_ids or ():
            if not isinstance(provider_id, str):
                continue
            try:
                provider_registry.get(provider_id)
            except LookupError:
                messages.append(
                    Error(
                        f"Endpoint {endpoint.name!r} names an unknown provider {short(provider_id, 40)}.",
                        hint="Use the id of a provider an app lists in mcp_providers.",
                        id="mcp_django.E014",
                    )
                )
    return messages


INTERCEPTOR_CHECK_IDS: Final[Mapping[str, str]] = {
    "import": "mcp_django.E018",
    "not_interceptor": "mcp_django.E019",
    "priority_both": "mcp_django.E020",
    "duplicate": "mcp_django.E021",
    "widened": "mcp_django.E022",
    "value": "mcp_django.E023",
    "options": "mcp_django.E024",
}
"""The check ID of each kind of interceptor-list problem (`interceptors.config.PROBLEM_KINDS`)."""


@register(Tags.compatibility)
def check_interceptors(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check `MCP_DJANGO["INTERCEPTORS"]` and the interceptor list of every mounted endpoint."""
    from mcp_django.endpoints import mounted_endpoints
    from mcp_django.interceptors.config import plan_problems

    user = getattr(settings, SETTING_NAME, {})
    problems = plan_problems(user.get("INTERCEPTORS", []), setting("INTERCEPTORS")) if isinstance(user, Mapping) else []
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf is Django's URL checks' to report
        endpoints = []
    for endpoint in endpoints:
        if endpoint.interceptors is not None:
            problems += plan_problems(endpoint.interceptors, f"Endpoint {endpoint.name!r} interceptors")
    return [Error(problem.message, hint=problem.hint, id=INTERCEPTOR_CHECK_IDS[problem.kind]) for problem in problems]


def _remote_server_users() -> list[str]:
    """Who uses a remote MCP server: the endpoints naming some (`servers=`, `backend=`), and the interceptor
    lists (the setting's, an endpoint's) with a `{"SERVER": ...}` entry, by name."""
    from mcp_django.conf import mcp_settings

    def names_a_server(config: Any) -> bool:
        entries = config if isinstance(config, (list, tuple)) else ()
        return any(isinstance(entry, Mapping) and "SERVER" in entry for entry in entries)

    users = ["INTERCEPTORS"] if names_a_server(mcp_settings.INTERCEPTORS) else []
    for endpoint in _endpoints():
        if endpoint.servers or names_a_server(endpoint.interceptors):
            users.append(str(endpoint.name))
    return users


@register(Tags.compatibility)
def check_gateway_installed(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """E172: endpoints serve remote servers, or interceptor lists name one, but the gateway app is not installed."""
    if apps.is_installed("mcp_django.gateway"):
        return []
    users = _remote_server_users()
    message = f"Remote servers used ({short(', '.join(users), 18)}), but the gateway app is not installed."
    hint = "Add 'mcp_django.gateway' to INSTALLED_APPS after 'mcp_django', then migrate (docs/gateway.md)."
    return [Error(message, hint=hint, id="mcp_django.E172")] if users else []
