"""The MCP Apps extension's system checks: every view a mounted endpoint serves must load (E200, E201)."""

from __future__ import annotations

from typing import Final

from django.core.checks import CheckMessage, Error

from mcp_django.checks_support import short

__all__ = ["check_app_templates"]

_MISSING: Final = "mcp_django.E200"
_BROKEN: Final = "mcp_django.E201"


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
            assert tool.app is not None
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
