"""`{% load mcp_apps %}`: the bridge script and static files, inlined into an app's HTML.

Hosts load a view from its HTML alone, in a sandbox whose origin is not the site's, under a CSP that
allows only the origins the app declares: a `{% static %}` URL would need the site's static origin in
`resource_domains` (and an absolute `STATIC_URL`). Inlined, a view needs no origin at all.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

from django import template
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

BRIDGE: Final = "mcp_django/ui/bridge.js"
"""The bridge script's static path (shipped in this app's `static/`)."""


def static_text(path: str) -> str | None:
    """The text of the static file at `path`, as the staticfiles finders find it; None when none does."""
    from django.contrib.staticfiles import finders

    found = finders.find(path)
    if isinstance(found, list):
        found = found[0] if found else None
    if not found:
        return None
    return Path(found).read_text(encoding="utf-8")


def _inlined(element: str, text: str) -> SafeString:
    # The file's own text must not close the element it is inlined into.
    closing = re.compile(rf"</({element})", re.IGNORECASE)
    escaped = closing.sub(r"<\\/\1", text)
    return mark_safe(f"<{element}>{escaped}</{element}>")


class InlineNode(template.Node):
    """Renders one static file as an inline `<script>` or `<style>`."""

    def __init__(self, element: str, path: template.base.FilterExpression) -> None:
        self.element = element
        self.path = path

    def render(self, context: template.Context) -> str:
        path = str(self.path.resolve(context))
        text = static_text(path)
        if text is None:
            raise template.TemplateSyntaxError(f"static file {path!r} not found")
        return _inlined(self.element, text)


def _inline_tag(element: str) -> Any:
    def compile_tag(parser: template.base.Parser, token: template.base.Token) -> InlineNode:
        bits = token.split_contents()
        if len(bits) != 2:
            raise template.TemplateSyntaxError(f"{bits[0]} takes one static path")
        path = parser.compile_filter(bits[1])
        literal = path.var if not path.filters and isinstance(path.var, str) else None
        # A literal path is looked up when the template compiles: the system check then names it.
        if literal is not None and static_text(literal) is None:
            raise template.TemplateSyntaxError(f"{bits[0]}: static file {literal!r} not found")
        return InlineNode(element, path)

    return compile_tag


register.tag("mcp_app_script", _inline_tag("script"))
register.tag("mcp_app_style", _inline_tag("style"))


@register.simple_tag
def mcp_app_bridge() -> SafeString:
    """The bridge to the host (`window.mcpApp`), inlined as a `<script>`."""
    text = static_text(BRIDGE)
    if text is None:  # the app's own static file: only a broken install lacks it
        raise template.TemplateSyntaxError(f"{BRIDGE} not found: is 'mcp_django.ui' in INSTALLED_APPS?")
    return _inlined("script", text)
