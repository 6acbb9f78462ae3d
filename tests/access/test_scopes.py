"""Scopes: the order, parsing, and a user's scope from superuser status, SCOPE_GROUPS and GroupScope rows."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Group
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from mcp_django.models import GroupScope
from mcp_django.scopes import GroupScopePolicy, Scope
from tests.access_support import Caller, send

pytestmark = pytest.mark.django_db


def test_scopes_are_ordered_user_team_system() -> None:
    assert Scope.USER < Scope.TEAM < Scope.SYSTEM
    assert [scope.label for scope in Scope] == ["user", "team", "system"]


@pytest.mark.parametrize(("value", "scope"), [("team", Scope.TEAM), ("SYSTEM", Scope.SYSTEM), (0, Scope.USER)])
def test_a_scope_parses_from_its_name_in_any_case_or_its_number(value: object, scope: Scope) -> None:
    assert Scope.parse(value) is scope


@pytest.mark.parametrize("value", ["admin", 7, True, None])
def test_anything_else_is_not_a_scope(value: object) -> None:
    with pytest.raises(ValueError, match="is not a scope; use one of USER, TEAM, SYSTEM"):
        Scope.parse(value)


def test_a_scope_prints_as_its_name_and_formats_as_a_number_on_request() -> None:
    assert f"{Scope.TEAM}" == str(Scope.TEAM) == "TEAM"
    assert f"{Scope.SYSTEM:>8}" == "  SYSTEM"
    assert f"{Scope.TEAM:d}" == "1"
    assert int(Scope.TEAM) == 1


def test_a_group_scope_takes_a_name_as_the_setting_does(alice: Caller) -> None:
    group = Group.objects.create(name="ops")

    row = GroupScope.objects.create(group=group, scope="SYSTEM")
    alice.user.groups.add(group)

    assert row.scope is Scope.SYSTEM
    assert GroupScope.objects.get(pk=row.pk).scope is Scope.SYSTEM
    assert GroupScope.objects.filter(scope="system").get() == row
    assert GroupScopePolicy().scope_of(alice.user) is Scope.SYSTEM


def test_a_group_scope_refuses_what_is_no_scope() -> None:
    with pytest.raises(ValueError, match="'admin' is not a scope; use one of USER, TEAM, SYSTEM"):
        GroupScope(group=Group.objects.create(name="ops"), scope="admin")


def test_the_admin_form_of_a_group_scope_stores_the_scope_chosen() -> None:
    from django.forms import modelform_factory

    form = modelform_factory(GroupScope, fields=["group", "scope"])(
        {"group": Group.objects.create(name="ops").pk, "scope": "1"}
    )

    assert form.is_valid(), form.errors
    assert form.save().scope is Scope.TEAM


def test_an_authenticated_user_without_groups_is_user(alice: Caller) -> None:
    assert GroupScopePolicy().scope_of(alice.user) is Scope.USER


def test_a_setting_maps_a_group_to_team(bob: Caller) -> None:
    assert GroupScopePolicy().scope_of(bob.user) is Scope.TEAM


def test_a_group_scope_row_grants_its_scope(carol: Caller) -> None:
    assert GroupScopePolicy().scope_of(carol.user) is Scope.SYSTEM


def test_the_highest_scope_of_all_groups_wins(bob: Caller, carol: Caller) -> None:
    bob.user.groups.add(Group.objects.get(name="mcp-system"))

    assert GroupScopePolicy().scope_of(bob.user) is Scope.SYSTEM


def test_a_superuser_is_system_without_a_query() -> None:
    root = get_user_model().objects.create_superuser("root")

    with CaptureQueriesContext(connection) as queries:
        assert GroupScopePolicy().scope_of(root) is Scope.SYSTEM
    assert len(queries) == 0


def test_anonymous_and_inactive_users_have_no_scope() -> None:
    inactive = get_user_model().objects.create_user("gone", is_active=False)

    assert GroupScopePolicy().scope_of(AnonymousUser()) is None
    assert GroupScopePolicy().scope_of(None) is None
    assert GroupScopePolicy().scope_of(inactive) is None


def test_working_out_a_scope_costs_one_query(carol: Caller) -> None:
    with CaptureQueriesContext(connection) as queries:
        GroupScopePolicy().scope_of(carol.user)

    assert len(queries) == 1


@pytest.mark.django_db(transaction=True)
async def test_the_async_lookup_agrees_with_the_sync_one(carol: Caller, bob: Caller, alice: Caller) -> None:
    policy = GroupScopePolicy()

    assert [await policy.ascope_of(caller.user) for caller in (alice, bob, carol)] == [
        Scope.USER,
        Scope.TEAM,
        Scope.SYSTEM,
    ]


@override_settings(MCP_DJANGO={"SCOPE_GROUPS": {"mcp-team": "SYSTEM"}})
def test_a_settings_change_applies_without_a_restart(bob: Caller) -> None:
    assert GroupScopePolicy().scope_of(bob.user) is Scope.SYSTEM


def test_a_group_scope_shows_its_group_and_scope(carol: Caller) -> None:
    assert str(GroupScope.objects.get()) == "mcp-system → system"


@pytest.mark.urls("tests.access_urls")
def test_a_stateless_list_costs_the_token_and_the_scope_query_once_then_none(
    client: Client, alice: Caller, bob: Caller, django_assert_num_queries: Any
) -> None:
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "STATE_CHECK_INTERVAL": 60, "INTERCEPTORS": []}):
        send(client, "tools/list", caller=alice)  # warm up: the endpoint's handler is built, the state stamp read

        # bob's first request: the token, then the scope (mcp_django.endpoints.auth_cache)
        with django_assert_num_queries(2):
            assert send(client, "tools/list", caller=bob).status_code == 200
        with django_assert_num_queries(0):
            assert send(client, "tools/list", caller=bob).status_code == 200
