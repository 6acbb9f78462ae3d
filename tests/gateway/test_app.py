"""The gateway is an app of its own (`mcp_django.gateway`): a project that uses remote servers without it is
told so (E172), and `include("mcp_django.urls")` mounts its pages only while it is installed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.checks import Error
from django.test import override_settings
from django.urls import clear_url_caches, reverse

from mcp_django.checks.endpoints import check_gateway_installed
from mcp_django.urls import app_urlpatterns

WITHOUT_GATEWAY = [app for app in settings.INSTALLED_APPS if app != "mcp_django.gateway"]
HINT = "Add 'mcp_django.gateway' to INSTALLED_APPS after 'mcp_django', then migrate (docs/gateway.md)."


@pytest.fixture
def without_gateway() -> Iterator[None]:
    # MCP_DJANGO as it is, so what was read from the apps (their extensions) is read again, in and after
    with override_settings(INSTALLED_APPS=WITHOUT_GATEWAY, MCP_DJANGO={**settings.MCP_DJANGO}):
        clear_url_caches()
        yield
    clear_url_caches()


@pytest.mark.urls("tests.gateway.upstream_urls")
@pytest.mark.usefixtures("without_gateway")
def test_e172_an_endpoint_serving_a_remote_server_without_the_gateway_app() -> None:
    assert check_gateway_installed() == [
        Error(
            "Remote servers used ('gw-accounts-hu...), but the gateway app is not installed.",
            hint=HINT,
            id="mcp_django.E172",
        )
    ]


@pytest.mark.urls("tests.http_urls")
@pytest.mark.usefixtures("without_gateway")
def test_e172_an_interceptor_list_naming_a_server_without_the_gateway_app() -> None:
    chain = ["mcp_django.interceptors.audit.AuditSinkInterceptor", {"SERVER": "guard"}]
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "INTERCEPTORS": chain}):
        messages = check_gateway_installed()

    assert [(message.id, message.msg) for message in messages] == [
        ("mcp_django.E172", "Remote servers used ('INTERCEPTORS'), but the gateway app is not installed.")
    ]


@pytest.mark.urls("tests.http_urls")
@pytest.mark.usefixtures("without_gateway")
def test_a_project_without_remote_servers_needs_no_gateway_app() -> None:
    assert check_gateway_installed() == []


@pytest.mark.urls("tests.gateway.upstream_urls")
def test_the_gateway_app_installed_is_all_e172_asks() -> None:
    assert check_gateway_installed() == []


@pytest.mark.urls("mcp_django.urls")
def test_the_packages_urls_mount_the_upstream_pages_while_the_gateway_app_is_installed() -> None:
    assert reverse("mcp-upstream") == "/mcp/upstream/"
    assert reverse("mcp-upstream-connect", args=["accounts"]) == "/mcp/upstream/accounts/connect"


@pytest.mark.usefixtures("without_gateway")
def test_without_the_gateway_app_the_packages_urls_have_no_upstream_pages() -> None:
    mounted = [pattern.urlconf_name for pattern in app_urlpatterns()]
    assert [urlconf for urlconf in mounted if "gateway" in getattr(urlconf, "__name__", str(urlconf))] == []
    assert mounted  # the other installed apps' URLs (discovery's) are still there: the filter reads something
