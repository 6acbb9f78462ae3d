"""Syncing the admin's tool rows with what the endpoints list: `migrate` stays off the network, `mcp_sync` and
the admin's button ask the remote servers too, and a sync that did not hear from one flags none of its rows."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.test import Client

from mcp_django.control.inventory import code_tools, mounted
from mcp_django.control.state import control_state
from mcp_django.gateway.extension import remote_sources
from mcp_django.models import ToolState

pytestmark = pytest.mark.django_db

TOOLS = "/admin/mcp_django/toolstate/"
SYNC = "/admin/mcp_django/toolstate/sync/"
# The demo's gateways front a server nothing serves here (tests/conftest.py points them at a closed port).
UNREACHABLE = "Backend '{}' unavailable: ConnectError: All connection attempts failed"


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    control_state.invalidate()
    yield
    control_state.invalidate()


def remote_health() -> dict[str, str]:
    return {source.name: source.health.state for endpoint in mounted() for source in remote_sources(endpoint)}


@pytest.mark.urls("tests.admin_urls")
def test_a_sync_that_heard_every_endpoint_flags_the_rows_of_tools_gone() -> None:
    ToolState.objects.create(name="gone_tool")

    call_command("mcp_sync", stdout=io.StringIO())

    assert ToolState.objects.get(name="gone_tool").present_in_code is False


@pytest.mark.urls("example_project.urls")
def test_mcp_sync_names_what_it_did_not_hear_from_and_flags_no_tool_row() -> None:
    ToolState.objects.create(name="conf_echo_sync_test")  # a remote's tool, as a sync while it answered left it
    out = io.StringIO()

    call_command("mcp_sync", stdout=out)

    lines = out.getvalue().splitlines()
    assert (
        "  not heard from endpoint 'gateway' ("
        + UNREACHABLE.format("conformance")
        + "): its tools' rows are kept as they are"
        in lines
    )
    assert (
        "  not heard from endpoint 'gateway-chain' ("
        + UNREACHABLE.format("gateway")
        + "): its tools' rows are kept as they are"
        in lines
    )
    assert next(line for line in lines if line.startswith("MCP tools:")).endswith(
        ", 0 no longer in code, 0 back in code"
    )
    assert ToolState.objects.get(name="conf_echo_sync_test").present_in_code is True
    assert "Traceback" not in out.getvalue()


@pytest.mark.urls("example_project.urls")
def test_migrate_asks_no_remote_server_and_keeps_their_rows() -> None:
    ToolState.objects.create(name="conf_echo_sync_test")
    for endpoint in mounted():
        endpoint.forget_sources()

    call_command("migrate", verbosity=0)

    assert remote_health()
    assert set(remote_health().values()) == {"unknown"}
    assert ToolState.objects.get(name="conf_echo_sync_test").present_in_code is True
    assert code_tools(remote=False).unheard == {f"remote server {name!r}": "not asked" for name in remote_health()}


@pytest.mark.urls("example_project.urls")
def test_the_admin_button_syncs_and_says_what_it_did_not_hear_from(admin_client: Client) -> None:
    ToolState.objects.all().delete()

    page = admin_client.get(TOOLS).content.decode()
    answer = admin_client.post(SYNC, follow=True)

    assert "Sync with code and remote servers" in page
    assert answer.redirect_chain == [(TOOLS, 302)]
    said = [str(message) for message in answer.context["messages"]]
    assert f"Not heard from endpoint 'gateway' ({UNREACHABLE.format('conformance')}): its rows kept." in said
    assert said[-1] == "Synced with the code and the remote servers."
    created = [line for line in said if line.startswith("MCP tools: ")]
    assert created == [f"MCP tools: {ToolState.objects.count()} created, 0 no longer in code, 0 back in code"]
    assert ToolState.objects.count() > 0


@pytest.mark.urls("tests.admin_urls")
def test_the_button_is_a_post_for_staff_who_may_change_tool_rows(
    admin_client: Client, django_user_model: type[User]
) -> None:
    viewer = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.set(Permission.objects.filter(codename="view_toolstate"))
    client = Client()
    client.force_login(viewer)
    ToolState.objects.create(name="gone_tool")

    assert admin_client.get(SYNC).status_code == 405
    assert "Sync with code and remote servers" not in client.get(TOOLS).content.decode()
    assert client.post(SYNC).status_code == 403
    assert ToolState.objects.get(name="gone_tool").present_in_code is True  # nothing synced
