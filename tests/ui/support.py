"""An endpoint serving a registry with apps, and the capabilities a host of MCP Apps declares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

import mcp_django
from mcp_django.endpoints import Endpoint
from mcp_django.registry import Registry
from mcp_django.scopes import Scope
from mcp_django.ui import APP_MIME_TYPE, EXTENSION
from mcp_django.ui.extension import AppsExtension

TEMPLATES_DIR = Path(__file__).parent / "templates"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [TEMPLATES_DIR],
        "APP_DIRS": True,
    }
]
"""The project's template settings with this directory first (use with override_settings)."""

HOST: dict[str, Any] = {"extensions": {EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}}
"""A host that renders MCP Apps, as the 2026-01-26 text has it declare so."""

WHOAMI = mcp_django.App("apps_test/whoami.html", title="Who am I", connect_domains=["https://api.example.com"])

apps_registry = Registry("apps-test")


class Echo(BaseModel):
    text: str


@apps_registry.tool(app=WHOAMI)
def whoami(text: str = "") -> Echo:
    """Echo the text back (the view shows who asked)."""
    return Echo(text=text)


@apps_registry.tool(app="apps_test/whoami.html", name="whoami_again")
def whoami_again() -> str:
    """A second tool naming the same template by its name: one view serves both."""
    return "again"


@apps_registry.tool(app={"template": "apps_test/whoami.html", "uri": "ui://apps/team"}, scope=Scope.TEAM)
def team_whoami() -> str:
    """A view of its own, for teams only."""
    return "team"


@apps_registry.tool
def plain() -> str:
    """A tool without an app."""
    return "plain"


def apps_endpoint() -> Endpoint:
    """An endpoint serving `apps_registry` with the apps extension, anonymous callers allowed."""
    return Endpoint(
        "apps/mcp",
        name="apps",
        mode="server",
        registry=apps_registry,
        allow_anonymous=True,
        extensions=[AppsExtension()],
    )
