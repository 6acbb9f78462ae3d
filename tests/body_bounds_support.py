"""Every view the package's URLconfs mount, and the body bound each keeps (issue 36, U-5): the audit's walk."""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Iterator, Sequence
from typing import Any

from django.urls import URLPattern, URLResolver

from mcp_django.conf import mcp_settings
from mcp_django.endpoints import Endpoint
from mcp_django.transports.public import is_public_view

PACKAGE_URLCONFS = (
    "mcp_django.urls",
    "mcp_django.oauth.urls",
    "mcp_django.gateway.urls",
    "mcp_django.ui.urls",
    "mcp_django.skills.urls",
    "mcp_django.tasks.urls",
)
"""The URLconfs a project may include from the package (those that do not exist in this version are skipped)."""

SAMPLES = {"path": "mcp"}
"""What a path converter of each kind is given; any other kind gets `"x"`."""


def package_urlconfs() -> list[str]:
    return [name for name in PACKAGE_URLCONFS if importlib.util.find_spec(name) is not None]


def _walk(patterns: Sequence[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            yield route, pattern.callback


def concrete(route: str) -> str:
    """`route` with each `<kind:name>` given a sample value: a path one can request."""
    return "/" + re.sub(r"<(?:(\w+):)?\w+>", lambda found: SAMPLES.get(found.group(1) or "", "x"), route)


def bound_of(view: Any) -> int | None:
    """The most body bytes a request to `view` may bring, or None when nothing bounds it before Django reads it."""
    endpoint = (getattr(view, "view_initkwargs", None) or {}).get("endpoint")
    if isinstance(endpoint, Endpoint):
        return int(mcp_settings.MAX_REQUEST_BYTES)  # the transport reads no further (docs/deployment.md)
    if is_public_view(view):
        return int(mcp_settings.MAX_PUBLIC_REQUEST_BYTES)
    return None


def package_views() -> list[tuple[str, Any]]:
    """(path, view) of every view the package's URLconfs mount, each path once."""
    views: dict[str, Any] = {}
    for name in package_urlconfs():
        for route, view in _walk(importlib.import_module(name).urlpatterns):
            views.setdefault(concrete(route), view)
    return list(views.items())
