"""The admin as control room: provider and interceptor state, sessions, the audit trail, the dashboard, permissions."""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client, override_settings
from django.utils import timezone

from example_project.demo.models import Book
from mcp_django.checks.declarations import check_state_rows
from mcp_django.control.state import control_state
from mcp_django.models import InterceptorState, MCPSession, ProviderState, StateVersion, ToolCallRecord, ToolState
from mcp_django.providers import provider_registry
from tests.http_support import ACCEPT, initialize, request, stateless, stateless_headers

pytestmark = [pytest.mark.urls("tests.admin_urls"), pytest.mark.django_db]

PROVIDERS = "/admin/mcp_django/providerstate/"
INTERCEPTORS = "/admin/mcp_django/interceptorstate/"
DASHBOARD = "/admin/mcp_django/controlroom/"
TOOLS = "/admin/mcp_django/toolstate/"
REDACTION = "mcp_django.interceptors.redaction.RedactionInterceptor"


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    """Every test starts from what its database says (the process's snapshot outlives a test's rollback)."""
    control_state.invalidate()
    yield
    control_state.invalidate()


@pytest.fixture
def book() -> Book:
    return Book.objects.create(title="Dune", author="Frank Herbert", year=1965)


def mcp(client: Client, method: str, params: dict[str, Any] | None = None, name: str | None = None) -> dict[str, Any]:
    """One stateless request to the control endpoint, anonymous; the reply's JSON."""
    response = client.post(
        "/mcp",
        data=json.dumps(stateless(method, params)),
        content_type="application/json",
        headers={"Accept": ACCEPT, **stateless_headers(method, name)},
    )
    reply: dict[str, Any] = json.loads(response.content)
    return reply


def tool_names(client: Client) -> set[str]:
    return {tool["name"] for tool in mcp(client, "tools/list")["result"]["tools"]}


def provider_row(provider_id: str, admin_client: Client) -> ProviderState:
    admin_client.get(PROVIDERS)  # opening the change list gives every provider in code its row
    return ProviderState.objects.get(provider_id=provider_id)


def act(admin_client: Client, url: str, action: str, *rows: Any) -> Any:
    return admin_client.post(url, {"action": action, "_selected_action": [row.pk for row in rows]}, follow=True)


def staff(django_user_model: type[User], *permissions: str) -> Client:
    user = django_user_model.objects.create_user("staffer", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=permissions, content_type__app_label="mcp_django"))
    client = Client()
    client.force_login(user)
    return client


# -- providers --------------------------------------------------------------------------------------


def test_the_provider_change_list_shows_every_provider_in_code_with_its_defaults(admin_client: Client) -> None:
    page = admin_client.get(PROVIDERS).content.decode()

    for provider_id in ("demo.books", "demo.authors", "demo.models"):
        assert provider_id in page
    books = ProviderState.objects.get(provider_id="demo.books")
    assert (books.enabled, books.min_scope, books.present_in_code) == (True, None, True)
    assert "user (code)" in page
    assert "Disable selected providers" in page


def test_opening_the_change_list_moves_no_stamp(admin_client: Client) -> None:
    admin_client.get(PROVIDERS)
    admin_client.get(INTERCEPTORS)
    assert not StateVersion.objects.exists()


def test_a_row_for_a_provider_no_longer_in_code_is_flagged_warned_about_and_filterable(admin_client: Client) -> None:
    ProviderState.objects.create(provider_id="shop.gone", enabled=False)
    call_command("mcp_sync", stdout=io.StringIO())

    flagged = admin_client.get(PROVIDERS + "?present_in_code__exact=0").content.decode()
    warnings = check_state_rows(databases=["default"])

    assert ProviderState.objects.get(provider_id="shop.gone").present_in_code is False
    assert "shop.gone" in flagged
    assert "demo.books" not in flagged
    # (the example URLconf's interceptor lists, synced at migrate, name nothing in this test's URLconf)
    warnings = [w for w in warnings if "interceptor row" not in w.msg]
    assert [(w.id, w.msg) for w in warnings] == [
        ("mcp_django.W010", "The MCP provider row 'shop.gone' names nothing in code.")
    ]
    assert warnings[0].hint == "Delete the row in the admin, or restore what it names."


def test_disabling_a_provider_in_the_admin_hides_its_tools_and_enabling_brings_them_back(
    admin_client: Client, book: Book
) -> None:
    client = Client()
    books = provider_row("demo.books", admin_client)
    before = tool_names(client)

    act(admin_client, PROVIDERS, "disable_selected", books)
    while_off = tool_names(client)
    call = mcp(client, "tools/call", {"name": "about_dune", "arguments": {}}, name="about_dune")
    act(admin_client, PROVIDERS, "enable_selected", books)
    after = tool_names(client)

    assert {"echo", "about_dune"} <= before
    assert "about_dune" not in while_off
    assert "echo" in while_off
    assert call["error"]["message"] == "Unknown tool: about_dune"
    assert after == before


def test_a_minimum_scope_set_in_the_admin_hides_the_provider_from_lower_scopes(
    admin_client: Client, book: Book
) -> None:
    books = provider_row("demo.books", admin_client)

    response = admin_client.post(f"{PROVIDERS}{books.pk}/change/", {"enabled": "on", "min_scope": "2"})

    assert response.status_code == 302
    assert "about_dune" not in tool_names(Client())  # anonymous callers have the user scope


def test_a_client_reads_no_state_while_the_stamp_interval_has_not_passed(
    django_assert_num_queries: Any, admin_client: Client
) -> None:
    client = Client()
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "STATE_CHECK_INTERVAL": 60}):  # a slow machine too
        mcp(client, "tools/call", {"name": "echo", "arguments": {"text": "warm"}}, name="echo")

        with django_assert_num_queries(0):
            reply = mcp(client, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}, name="echo")

    assert reply["result"]["content"][0]["text"] == "hi"


def test_an_interval_of_zero_reads_the_stamp_before_every_operation(django_assert_num_queries: Any) -> None:
    client = Client()
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "STATE_CHECK_INTERVAL": 0}):
        mcp(client, "tools/call", {"name": "echo", "arguments": {"text": "warm"}}, name="echo")
        with django_assert_num_queries(1):
            mcp(client, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}, name="echo")


def test_a_change_is_read_once_the_interval_has_passed_without_a_local_hint(admin_client: Client, book: Book) -> None:
    client = Client()
    books = provider_row("demo.books", admin_client)
    assert "about_dune" in tool_names(client)

    ProviderState.objects.filter(pk=books.pk).update(enabled=False)  # no signal: only the stamp tells
    StateVersion.objects.update_or_create(key="state", defaults={"version": 12345})
    deadline = time.monotonic() + 2
    while "about_dune" in tool_names(client):
        assert time.monotonic() < deadline, "the change was not seen within two seconds"


def test_disabling_a_tool_in_the_admin_makes_it_unknown_and_enabling_brings_it_back(
    admin_client: Client, book: Book
) -> None:
    client = Client()
    call_command("mcp_sync", stdout=io.StringIO())  # this URLconf serves tools the migrated database never saw
    page = admin_client.get(TOOLS).content.decode()
    echo = ToolState.objects.get(name="echo")

    act(admin_client, TOOLS, "disable_selected", echo)
    while_off = tool_names(client)
    call = mcp(client, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}, name="echo")
    act(admin_client, TOOLS, "enable_selected", echo)

    assert "about_dune" in page  # a provider's tool has its row too
    assert "echo" not in while_off
    assert "about_dune" in while_off
    assert call["error"]["message"] == "Unknown tool: echo"
    assert "echo" in tool_names(client)


# -- interceptors -----------------------------------------------------------------------------------


@pytest.fixture
def redacting() -> Iterator[None]:
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "INTERCEPTORS": [REDACTION]}):
        yield


def echoed(client: Client, text: str) -> str:
    reply = mcp(client, "tools/call", {"name": "echo", "arguments": {"text": text}}, name="echo")
    return str(reply["result"]["content"][0]["text"])


@pytest.mark.usefixtures("redacting")
def test_disabling_an_interceptor_stops_it_and_audit_mode_stops_its_effect(admin_client: Client) -> None:
    client = Client()
    call_command("mcp_sync", stdout=io.StringIO())  # these settings name an interceptor the database never saw
    admin_client.get(INTERCEPTORS)
    row = InterceptorState.objects.get(name="redact")
    redacted = echoed(client, "mail ann@example.com")

    act(admin_client, INTERCEPTORS, "disable_selected", row)
    while_off = echoed(client, "mail ann@example.com")
    act(admin_client, INTERCEPTORS, "enable_selected", row)
    admin_client.post(f"{INTERCEPTORS}{row.pk}/change/", {"enabled": "on", "mode": "audit", "fail_open": "unknown"})
    audited = echoed(client, "mail ann@example.com")

    assert "ann@example.com" not in redacted
    assert while_off == "mail ann@example.com"
    assert audited == "mail ann@example.com"


@pytest.mark.usefixtures("redacting")
def test_interceptor_options_are_checked_against_the_interceptors_own_options(admin_client: Client) -> None:
    call_command("mcp_sync", stdout=io.StringIO())  # these settings name an interceptor the database never saw
    admin_client.get(INTERCEPTORS)
    row = InterceptorState.objects.get(name="redact")
    url = f"{INTERCEPTORS}{row.pk}/change/"

    refused = admin_client.post(url, {"enabled": "on", "fail_open": "unknown", "options": '{"patterns": ["("]}'})
    accepted = admin_client.post(
        url, {"enabled": "on", "fail_open": "unknown", "options": '{"patterns": ["secret-[0-9]+"]}'}
    )

    assert refused.status_code == 200
    assert "RedactionInterceptor rejects these options" in refused.content.decode()
    assert accepted.status_code == 302
    assert echoed(Client(), "secret-42 and ann@example.com") == "[REDACTED] and ann@example.com"


# -- sessions ---------------------------------------------------------------------------------------


def test_a_revoked_session_is_answered_404_on_its_next_request(admin_client: Client) -> None:
    client = Client()
    opened = client.post(
        "/mcp", data=json.dumps(initialize()), content_type="application/json", headers={"Accept": ACCEPT}
    )
    session = {"Mcp-Session-Id": opened["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25", "Accept": ACCEPT}
    ping = json.dumps(request("ping", id=2))
    alive = client.post("/mcp", data=ping, content_type="application/json", headers=session)

    act(admin_client, "/admin/mcp_django/mcpsession/", "revoke_sessions", MCPSession.objects.get())
    revoked = client.post("/mcp", data=ping, content_type="application/json", headers=session)

    assert (alive.status_code, revoked.status_code) == (200, 404)


# -- the audit trail --------------------------------------------------------------------------------


def test_the_tool_list_shows_the_permissions_each_tool_requires_and_lists_guarded_tools(
    admin_client: Client, book: Book
) -> None:
    call_command("mcp_sync", stdout=io.StringIO())  # rows for every tool, guarded ones included

    page = admin_client.get(TOOLS).content.decode()
    curate = admin_client.get(f"{TOOLS}{ToolState.objects.get(name='curate_book').pk}/change/").content.decode()

    assert ToolState.objects.filter(name__in=["curate_book", "import_books"]).count() == 2
    assert "Requires permissions" in page
    assert "demo.add_book" in page
    assert "demo.curate_book" in curate


def test_tool_call_records_are_read_only_and_filter_by_user_endpoint_tool_outcome_and_date(
    admin_client: Client, admin_user: User
) -> None:
    ToolCallRecord.objects.create(tool="echo", endpoint="control", outcome="ok", duration_ms=1, user=admin_user)
    failed = ToolCallRecord.objects.create(tool="about_dune", endpoint="control", outcome="error", duration_ms=2)
    base = "/admin/mcp_django/toolcallrecord/"

    page = admin_client.get(base).content.decode()
    filtered = admin_client.get(base + "?outcome__exact=error&tool=about_dune&endpoint=control").content.decode()
    by_user = admin_client.get(base + f"?user__id__exact={admin_user.pk}").content.decode()
    dated = admin_client.get(base + f"?created__year={timezone.now().year}").status_code
    change = admin_client.get(f"{base}{failed.pk}/change/").content.decode()

    for title in ("By outcome", "By endpoint", "By tool", "By user", "By created"):
        assert title in page
    assert 'field-tool">about_dune<' in filtered
    assert 'field-tool">echo<' not in filtered
    assert 'field-tool">echo<' in by_user
    assert 'field-tool">about_dune<' not in by_user
    assert dated == 200
    assert 'name="_save"' not in change
    assert admin_client.get(base + "add/").status_code == 403


# -- the dashboard and permissions ------------------------------------------------------------------


def test_the_dashboard_shows_endpoints_providers_interceptors_tool_counts_and_errors(
    admin_client: Client, book: Book
) -> None:
    ToolCallRecord.objects.create(tool="about_dune", endpoint="control", outcome="error", duration_ms=2)
    ToolCallRecord.objects.create(tool="echo", endpoint="control", outcome="ok", duration_ms=1)

    index = admin_client.get("/admin/").content.decode()
    page = admin_client.get(DASHBOARD).content.decode()

    assert DASHBOARD in index
    assert "MCP dashboard" in index
    dashboard = page.split('id="mcp-dashboard"')[1]
    assert "<svg" in dashboard
    assert "1 ok, 1 failed" in dashboard
    assert "<script" not in dashboard
    assert "control" in page
    assert "combined" in page
    assert "demo.books" in page
    assert 'class="mcp-error-row"' in page
    assert "about_dune" in page
    endpoints = page.split('id="mcp-endpoints"')[1].split("</section>")[0]
    counts = [int(n) for n in re.findall(r"<td>(\d+)</td>", endpoints)]
    assert len(counts) == 3
    assert 2 <= counts[0] < counts[1] < counts[2]


def test_staff_without_permissions_see_none_of_the_control_room(django_user_model: type[User]) -> None:
    client = staff(django_user_model)

    assert [client.get(url).status_code for url in (PROVIDERS, INTERCEPTORS, DASHBOARD)] == [403, 403, 403]
    assert DASHBOARD not in client.get("/admin/").content.decode()


def test_view_permission_shows_providers_but_offers_no_action(django_user_model: type[User]) -> None:
    client = staff(django_user_model, "view_providerstate")

    page = client.get(PROVIDERS)
    books = ProviderState.objects.get(provider_id="demo.books")
    refused = client.post(PROVIDERS, {"action": "disable_selected", "_selected_action": [books.pk]})

    assert page.status_code == 200
    assert "Disable selected providers" not in page.content.decode()
    assert refused.status_code in (200, 302)
    assert ProviderState.objects.get(pk=books.pk).enabled


def test_the_dashboard_s_title_follows_the_project_s_admin_branding(admin_client: Client, tmp_path: Any) -> None:
    (tmp_path / "admin").mkdir()
    (tmp_path / "admin" / "base_site.html").write_text(
        '{% extends "admin/base.html" %}{% block title %}{{ title }} | Acme operations{% endblock %}'
    )
    template_settings: dict[str, Any] = dict(settings.TEMPLATES[0])
    templates = [{**template_settings, "DIRS": [tmp_path, *template_settings.get("DIRS", [])]}]
    with override_settings(TEMPLATES=templates):
        page = admin_client.get(DASHBOARD).content.decode()

    assert "<title>MCP dashboard | Acme operations</title>" in page


def test_the_dashboard_needs_its_own_permission(django_user_model: type[User]) -> None:
    client = staff(django_user_model, "view_dashboard")

    assert client.get(DASHBOARD).status_code == 200
    assert client.get(PROVIDERS).status_code == 403


# -- the inventory: rows synced after migrate and by mcp_sync, never by a page view ------------------


def test_opening_a_change_list_creates_no_row(admin_client: Client) -> None:
    ProviderState.objects.filter(provider_id="demo.books").delete()

    page = admin_client.get(PROVIDERS).content.decode()

    assert "demo.authors" in page
    assert not ProviderState.objects.filter(provider_id="demo.books").exists()


def test_mcp_sync_gives_everything_in_code_a_row_flags_vanished_ones_and_says_so() -> None:
    ProviderState.objects.all().delete()
    ProviderState.objects.create(provider_id="shop.gone")
    stamps = set(StateVersion.objects.values_list("key", "version"))
    out = io.StringIO()

    call_command("mcp_sync", stdout=out)

    in_code = [provider.id for provider in provider_registry]
    rows = dict(ProviderState.objects.values_list("provider_id", "present_in_code"))
    assert "demo.books" in in_code
    assert rows == {**dict.fromkeys(in_code, True), "shop.gone": False}
    report = out.getvalue().splitlines()[0]
    assert report == f"MCP providers: {len(in_code)} created, 1 no longer in code, 0 back in code"
    assert set(StateVersion.objects.values_list("key", "version")) == stamps  # blank rows change nothing for clients


def test_the_switch_actions_say_how_many_rows_changed_in_django_s_pluralised_wording(admin_client: Client) -> None:
    books = provider_row("demo.books", admin_client)
    authors = provider_row("demo.authors", admin_client)

    one = act(admin_client, PROVIDERS, "disable_selected", books)
    two = act(admin_client, PROVIDERS, "enable_selected", books, authors)

    assert [str(message) for message in one.context["messages"]] == ["Disabled 1 MCP provider."]
    assert [str(message) for message in two.context["messages"]] == ["Enabled 1 MCP provider."]
    three = act(admin_client, PROVIDERS, "disable_selected", books, authors)
    assert [str(message) for message in three.context["messages"]] == ["Disabled 2 MCP providers."]


def test_migrate_syncs_the_rows() -> None:
    from django.core.management.sql import emit_post_migrate_signal

    ProviderState.objects.all().delete()

    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")

    assert ProviderState.objects.filter(provider_id="demo.books", present_in_code=True).exists()


@override_settings(ROOT_URLCONF="tests.no_such_urlconf")
def test_interceptor_options_are_checked_against_the_rows_class_without_loading_the_urlconf() -> None:
    row = InterceptorState(name="mask", class_path=REDACTION, options={"patterns": ["("]})

    with pytest.raises(ValidationError) as refused:
        row.full_clean()
    InterceptorState(name="gone", class_path="shop.interceptors.Gone", options={"anything": 1}).full_clean()

    assert refused.value.message_dict["options"][0].startswith("RedactionInterceptor rejects these options (patterns")
