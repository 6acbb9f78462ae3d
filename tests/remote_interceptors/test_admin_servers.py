"""The admin's "MCP remote servers" as interceptor servers: the page, and what its rows do to SERVERS."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings

from mcp_django.control.state import control_state
from mcp_django.gateway.interceptor_servers import configured_servers
from mcp_django.gateway.models import RemoteServer
from mcp_django.models import StateVersion

pytestmark = [pytest.mark.urls("tests.admin_urls"), pytest.mark.django_db]

PAGE = "/admin/mcp_django_gateway/remoteserver/"
GUARD = {"URL": "https://guard.example/mcp", "TOKEN": "t", "TIMEOUT": 1}


@pytest.fixture(autouse=True)
def guard_in_settings() -> Iterator[None]:
    control_state.invalidate()
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "SERVERS": {"guard": GUARD}}):
        yield
    control_state.invalidate()
    control_state.refresh_sync()  # the snapshot forgets this test's rows


def servers() -> dict[str, Any]:
    control_state.invalidate()
    control_state.refresh_sync()
    return {name: (s.remote and s.remote.url, s.fail_open, s.timeout_ms) for name, s in configured_servers().items()}


def test_the_page_lists_rows_and_says_which_servers_the_settings_name(admin_client: Client) -> None:
    RemoteServer.objects.create(name="guard", fail_open=True)
    RemoteServer.objects.create(name="extra", url="https://extra.example/mcp")
    page = admin_client.get(PAGE).content.decode()
    assert "yes: https://guard.example/mcp" in page
    assert "no: added here (give its URL)" in page


def test_adding_a_server_in_the_admin_moves_the_stamp_and_adds_it(admin_client: Client) -> None:
    response = admin_client.post(
        PAGE + "add/",
        {
            "name": "extra",
            "url": "https://extra.example/mcp",
            "enabled": "on",
            "interceptors_enabled": "on",
            "fail_open": "unknown",
        },
    )
    assert response.status_code == 302
    assert StateVersion.objects.filter(key="state").exists()
    assert servers() == {
        "guard": ("https://guard.example/mcp", False, 1000),
        "extra": ("https://extra.example/mcp", False, 5000),
    }


def test_a_row_amends_or_switches_off_a_server_of_the_settings() -> None:
    RemoteServer.objects.create(name="guard", url="https://other.example/mcp", fail_open=True, timeout=0.3)
    assert servers() == {"guard": ("https://other.example/mcp", True, 300)}
    RemoteServer.objects.filter(name="guard").update(interceptors_enabled=False)
    RemoteServer.objects.get(name="guard").save()  # the signal moves the stamp
    assert servers() == {}


def test_a_new_row_without_a_url_adds_nothing() -> None:
    RemoteServer.objects.create(name="nowhere")
    assert servers() == {"guard": ("https://guard.example/mcp", False, 1000)}


def test_the_two_switches_of_a_remote_server_are_separate_actions(admin_client: Client) -> None:
    row = RemoteServer.objects.create(name="guard")
    admin_client.post(PAGE, {"action": "disable_interceptors", "_selected_action": [row.pk]})
    interceptors_off = RemoteServer.objects.get(pk=row.pk)
    admin_client.post(PAGE, {"action": "disable_selected", "_selected_action": [row.pk]})
    both_off = RemoteServer.objects.get(pk=row.pk)

    assert (interceptors_off.enabled, interceptors_off.interceptors_enabled) == (True, False)
    assert servers() == {}  # its interceptors run nowhere
    assert (both_off.enabled, both_off.interceptors_enabled) == (False, False)
