"""The MCP Apps checks: a view that cannot load is found at start-up (E200, E201), a provider's `apps` entry that
is not an app (E202), an app nothing serves (W200)."""

from __future__ import annotations

from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django.checks.endpoints import check_app_servers
from mcp_django.registry import Registry
from mcp_django.ui.checks import check_app_templates, check_provider_apps
from mcp_django.ui.extension import AppsExtension
from mcp_django.urls import endpoint
from tests.ui.sourced import StockProvider
from tests.ui.support import TEMPLATES

broken_registry = Registry("apps-broken")


@broken_registry.tool(app="apps_test/no_such_template.html")
def lost_card() -> str:
    """A tool whose view's template does not exist."""
    return "lost"


@broken_registry.tool(app="apps_test/missing_static.html")
def unstyled_card() -> str:
    """A tool whose view inlines a static file that does not exist."""
    return "unstyled"


unserved_registry = Registry("apps-unserved")


@unserved_registry.tool(app="apps_test/whoami.html")
def unserved_card() -> str:
    """A tool with an app on an endpoint without the extension."""
    return "unserved"


urlpatterns = [
    *endpoint("broken/mcp", name="apps-broken", registry=broken_registry, extensions=[AppsExtension]),
    *endpoint(
        "unserved/mcp",
        name="apps-unserved",
        registry=unserved_registry,
        exclude_extensions=["io.modelcontextprotocol/ui"],
    ),
]
"""A URLconf (this module): one endpoint whose views cannot load, one whose app no extension serves."""


def test_the_example_projects_apps_load_and_are_served() -> None:
    assert check_app_templates() == []
    assert check_app_servers() == []


def test_check_e200_names_a_missing_template_and_e201_a_missing_inlined_static_file() -> None:
    with override_settings(ROOT_URLCONF="tests.ui.test_checks", TEMPLATES=TEMPLATES):
        messages = check_app_templates()

    assert messages == [
        Error(
            "The app of tool 'lost_card' names a missing template.",
            hint="Create 'apps_test/no_such_template.html' in an app's templates/ or fix app=.",
            obj="apps_test/no_such_template.html",
            id="mcp_django_ui.E200",
        ),
        Error(
            "The app template of tool 'unstyled_card' does not compile.",
            hint="Fix the template: mcp_app_script: static file 'apps_test/no-such-file.js' not found.",
            obj="apps_test/missing_static.html",
            id="mcp_django_ui.E201",
        ),
    ]


def test_check_w200_reports_apps_on_an_endpoint_that_serves_no_apps_extension() -> None:
    with override_settings(ROOT_URLCONF="tests.ui.test_checks"):
        assert check_app_servers() == [
            Warning(
                "Tools declare apps (unserved_card), but no extension serves them.",
                hint="Add 'mcp_django.ui' to INSTALLED_APPS (docs/apps.md), or drop app= from them.",
                id="mcp_django.W200",
            )
        ]


def test_check_e202_names_a_providers_apps_entry_that_is_not_an_app() -> None:
    class WildStock(StockProvider):
        apps = {"stock": {"template": "apps_test/stock.html", "connect_domains": ["*"]}}

    assert check_provider_apps([WildStock(), StockProvider()]) == [
        Error(
            "WildStock: apps['stock'] is not an app.",
            hint=(
                "Fix it: app 'apps_test/stock.html': connect_domains takes origins like "
                "https://cdn.example.com, not '*'."
            ),
            obj=WildStock,
            id="mcp_django.E202",
        )
    ]
