"""The MCP Apps extension's system checks: every view a mounted endpoint serves must load (E200, E201), and a
provider's `apps` must name apps (E202)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from django.core.checks import CheckMessage, Error

from mcp_django.checks.support import short

if TYPE_CHECKING:
    from mcp_django.providers.base import Provider

_MISSING: Final = "mcp_django_ui.E200"
_BROKEN: Final = "mcp_django_ui.E201"
_NOT_AN_APP: Final = "mcp_django.E202"


def check_app_templates() -> list[CheckMessage]:
    """E200 for an app whose template does not exist, E201 for one that does not compile (a bad tag, a
    static file `{% mcp_app_script %}` or `{% mcp_app_style %}` cannot find): found now, not in a host's iframe."""
    from django.template import TemplateDoesNotExist, TemplateSyntaxError
    from django.template.loader import get_template

    from mcp_django.endpoints import mounted_endpoints
    from mcp_django.ui import apps_of

    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf is Django's URL checks' to report
        return []
    seen: set[str] = set()
    messages: list[CheckMessage] = []
    for endpoint in endpoints:
        for name, tool in apps_of(endpoint).items():
            template = tool.app.template
            if template in seen:
                continue
            seen.add(template)
            try:
                get_template(template)
            except TemplateDoesNotExist:
                messages.append(
                    Error(
                        f"The app of tool {short(name, 24)} names a missing template.",
                        hint=f"Create {short(template, 50)} in an app's templates/ or fix app=.",
                        obj=template,
                        id=_MISSING,
                    )
                )
            except TemplateSyntaxError as error:
                # Django 6.1 puts the template's path before the message (kept as raw_error_message);
                # the check's obj already names the template.
                problem = str(getattr(error, "raw_error_message", None) or error)
                messages.append(
                    Error(
                        f"The app template of tool {short(name, 24)} does not compile.",
                        hint=f"Fix the template: {problem[:90]}.",
                        obj=template,
                        id=_BROKEN,
                    )
                )
    return messages


def check_provider_apps(providers: Iterable[Provider] | None = None) -> list[CheckMessage]:
    """E202 for an entry of a provider's `apps` that is not an app (a toolset reports its own, E202 and E203).

    Args:
        providers: the providers to check; None: every provider the apps register.
    """
    from mcp_django.declarations.apps import app_of
    from mcp_django.exceptions import DeclarationError
    from mcp_django.providers import provider_registry
    from mcp_django.toolsets.base import Toolset

    messages: list[CheckMessage] = []
    for provider in provider_registry.providers if providers is None else providers:
        if isinstance(provider, Toolset):
            continue
        for name, app in provider.apps.items():
            try:
                app_of(f"{type(provider).__name__}.apps[{name!r}]", app)
            except DeclarationError as error:
                messages.append(
                    Error(
                        f"{type(provider).__name__}: apps[{short(name, 30)}] is not an app.",
                        hint=f"Fix it: {str(error)[:100]}.",
                        obj=type(provider),
                        id=_NOT_AN_APP,
                    )
                )
    return messages
