"""The credential and scope caches: no query in the steady state, and every change seen by the next request."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client, override_settings
from rest_framework import authentication
from rest_framework.authtoken.models import Token

from mcp_django.auth import TokenAuthentication, is_authorization_only
from mcp_django.control.state import control_state
from mcp_django.endpoints.auth_cache import AUTH, AuthCache, auth_cache
from mcp_django.models import GroupScope, StateVersion
from mcp_django.scopes import GroupScopePolicy, Scope, get_scope_policy
from tests.access_support import Caller, names, result, send, text

pytestmark = [pytest.mark.urls("tests.access_urls"), pytest.mark.django_db]

TEAM_TOOL = "team_report"
SYSTEM_TOOL = "system_purge"


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    clock, real = Clock(), auth_cache.clock
    auth_cache.clock = clock
    yield clock
    auth_cache.clock = real


@pytest.fixture
def steady() -> Iterator[None]:
    """The admin's state stamp read once and not again during the test, whatever the machine's speed."""
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "STATE_CHECK_INTERVAL": 60, "INTERCEPTORS": []}):
        control_state.invalidate()
        yield
    control_state.invalidate()


def call(client: Client, caller: Caller, tool: str = "whoami") -> Any:
    return send(client, "tools/call", {"name": tool, "arguments": {}}, caller=caller)


# -- the steady state --------------------------------------------------------------------------------


def test_a_token_authenticated_call_costs_the_token_and_scope_queries_once_then_none(
    client: Client, alice: Caller, bob: Caller, steady: None, django_assert_num_queries: Any
) -> None:
    call(client, alice)  # warm up: the endpoint's handler is built and the state stamp read

    with django_assert_num_queries(2):  # bob's first request: his token, then his groups' scope
        assert call(client, bob).status_code == 200
    for _ in range(3):
        with django_assert_num_queries(0):
            response = call(client, bob)
            assert response.status_code == 200
    assert "user=bob scope=team" in text(response.json()["result"])


def test_the_cache_never_keys_an_entry_by_the_raw_token(client: Client, bob: Caller) -> None:
    call(client, bob)

    assert len(auth_cache) == 2  # bob's credential and bob's scope
    assert bob.token not in repr(auth_cache._credentials)


def test_a_refused_token_is_not_cached_so_a_token_issued_later_works_at_once(client: Client) -> None:
    key = "f" * 40
    headers = {"Authorization": f"Bearer {key}"}
    assert send(client, "tools/list", headers=headers).status_code == 401

    Token.objects.create(key=key, user=get_user_model().objects.create_user("erin"))

    assert send(client, "tools/list", headers=headers).status_code == 200


# -- every change reaches the next request ----------------------------------------------------------------


def test_a_deleted_token_is_refused_at_the_next_request(client: Client, bob: Caller) -> None:
    assert call(client, bob).status_code == 200

    Token.objects.filter(key=bob.token).delete()

    assert call(client, bob).status_code == 401


def test_a_user_removed_from_a_group_loses_its_scope_at_the_next_request(client: Client, bob: Caller) -> None:
    assert TEAM_TOOL in names(client, "tools/list", caller=bob)

    bob.user.groups.remove(Group.objects.get(name="mcp-team"))

    assert TEAM_TOOL not in names(client, "tools/list", caller=bob)


def test_a_user_added_to_a_group_from_the_groups_side_gains_its_scope(client: Client, alice: Caller) -> None:
    assert TEAM_TOOL not in names(client, "tools/list", caller=alice)

    Group.objects.get_or_create(name="mcp-team")[0].user_set.add(alice.user)

    assert TEAM_TOOL in names(client, "tools/list", caller=alice)


def test_a_group_scope_changed_or_deleted_applies_at_the_next_request(client: Client, carol: Caller) -> None:
    assert SYSTEM_TOOL in names(client, "tools/list", caller=carol)

    grant = GroupScope.objects.get(group__name="mcp-system")
    grant.scope = Scope.TEAM
    grant.save()
    listed = names(client, "tools/list", caller=carol)
    assert SYSTEM_TOOL not in listed
    assert TEAM_TOOL in listed

    grant.delete()

    assert TEAM_TOOL not in names(client, "tools/list", caller=carol)


def test_a_deleted_group_takes_its_scope_with_it(client: Client, carol: Caller) -> None:
    assert SYSTEM_TOOL in names(client, "tools/list", caller=carol)

    Group.objects.get(name="mcp-system").delete()

    assert SYSTEM_TOOL not in names(client, "tools/list", caller=carol)


def test_a_deactivated_user_is_refused_at_the_next_request(client: Client, bob: Caller) -> None:
    assert call(client, bob).status_code == 200

    bob.user.is_active = False
    bob.user.save()

    assert call(client, bob).status_code == 401


def test_a_new_password_refuses_the_old_basic_credentials_at_the_next_request(client: Client) -> None:
    user = get_user_model().objects.create_user("dora", password="old-secret")
    basic = {"Authorization": "Basic " + base64.b64encode(b"dora:old-secret").decode()}
    assert send(client, "tools/list", path="/basic/mcp", headers=basic).status_code == 200
    assert len(auth_cache) == 2  # Basic credentials are cached too (no password hashing per request)

    user.set_password("new-secret")
    user.save()

    assert send(client, "tools/list", path="/basic/mcp", headers=basic).status_code == 401


def test_a_login_does_not_drop_the_caches(client: Client, bob: Caller) -> None:
    call(client, bob)

    client.force_login(bob.user)  # writes last_login only

    assert len(auth_cache) == 2


def test_a_change_moves_the_auth_stamp_so_other_workers_drop_their_caches(bob: Caller) -> None:
    before = StateVersion.objects.filter(key=AUTH).values_list("version", flat=True).first()

    bob.user.groups.clear()

    assert StateVersion.objects.get(key=AUTH).version != before


async def test_a_worker_drops_its_caches_when_it_sees_the_auth_stamp_move() -> None:
    auth_cache.remember_credential("seen elsewhere", object(), generation=auth_cache.generation)
    control_state.stamps = {AUTH: 1}

    control_state._apply({AUTH: 2}, None)  # what a refresh does when another worker bumped the stamp

    assert auth_cache.credential("seen elsewhere") is None


# -- the TTL -------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("steady")  # only the TTL may end the cached answer, however slow the machine
def test_a_change_no_signal_announces_applies_when_the_ttl_runs_out(client: Client, bob: Caller, clock: Clock) -> None:
    assert call(client, bob).status_code == 200

    get_user_model().objects.filter(pk=bob.user.pk).update(is_active=False)  # QuerySet.update sends no signal
    clock.now += 59
    assert call(client, bob).status_code == 200  # still the cached answer
    clock.now += 1

    assert call(client, bob).status_code == 401


@pytest.mark.usefixtures("steady")
def test_a_scope_changed_behind_the_signals_back_applies_when_the_ttl_runs_out(
    client: Client, carol: Caller, clock: Clock
) -> None:
    assert SYSTEM_TOOL in names(client, "tools/list", caller=carol)

    GroupScope.objects.filter(group__name="mcp-system").update(scope=Scope.USER)
    assert SYSTEM_TOOL in names(client, "tools/list", caller=carol)
    clock.now += 60

    assert SYSTEM_TOOL not in names(client, "tools/list", caller=carol)


def test_a_ttl_of_zero_turns_the_cache_off(client: Client, bob: Caller, django_assert_num_queries: Any) -> None:
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "AUTH_CACHE_TTL": 0, "STATE_CHECK_INTERVAL": 60}):
        call(client, bob)
        for _ in range(2):
            with django_assert_num_queries(2):
                call(client, bob)
        assert len(auth_cache) == 0


def test_a_credential_that_expires_sooner_than_the_ttl_is_kept_only_that_long(clock: Clock) -> None:
    cache = AuthCache(clock)
    with override_settings(MCP_DJANGO={"AUTH_CACHE_TTL": 60}):
        cache.remember_credential("key", "user", generation=cache.generation, lifetime=5)
        clock.now += 4.9
        assert cache.credential("key") == "user"
        clock.now += 0.1

        assert cache.credential("key") is None


def test_a_result_worked_out_across_a_clear_is_not_kept() -> None:
    generation = auth_cache.generation  # a request starts authenticating
    auth_cache.clear()  # meanwhile the token is deleted

    auth_cache.remember_credential("key", "stale user", generation=generation)

    assert auth_cache.credential("key") is None


def test_the_cache_holds_at_most_max_entries() -> None:
    class SmallCache(AuthCache):
        max_entries = 3

    cache = SmallCache()
    for number in range(5):
        cache.remember_credential(number, number, generation=cache.generation)

    assert [cache.credential(number) for number in range(5)] == [None, None, 2, 3, 4]


# -- which classes are cached ------------------------------------------------------------------------------


def test_session_authentication_still_works_and_is_never_cached(client: Client, bob: Caller) -> None:
    client.force_login(bob.user)

    assert names(client, "tools/list")
    assert auth_cache._credentials == {}


class CustomTokenAuthentication(authentication.TokenAuthentication):
    """A project's subclass of a class that reads headers only."""


class HeaderOnlyJWT(authentication.BaseAuthentication):
    mcp_credentials = "authorization"


class APIKeyAuthentication(authentication.BaseAuthentication):
    """Reads `X-API-Key`: served on the fast path, but not cached by the Authorization header."""

    mcp_credentials = "headers"


class ReadsTheBody(authentication.BaseAuthentication):
    """A class mcp_django does not know: it may read anything, so nothing it answers is cached."""


@pytest.mark.parametrize(
    ("authenticator", "header_only"),
    [
        (TokenAuthentication(), True),
        (authentication.TokenAuthentication(), True),
        (authentication.BasicAuthentication(), True),
        (authentication.SessionAuthentication(), False),
        (CustomTokenAuthentication(), True),
        (HeaderOnlyJWT(), True),
        (APIKeyAuthentication(), False),
        (ReadsTheBody(), False),
    ],
)
def test_only_classes_whose_credential_is_the_authorization_header_alone_are_cached(
    authenticator: Any, header_only: bool
) -> None:
    assert is_authorization_only(authenticator) is header_only


# -- the scope policy setting ------------------------------------------------------------------------------


class EveryoneIsTeam(GroupScopePolicy):
    def scope_of(self, user: Any) -> Scope | None:
        return Scope.TEAM if self._counts(user) else None


def test_the_scope_policy_is_the_class_the_setting_names(client: Client, alice: Caller) -> None:
    assert type(get_scope_policy()) is GroupScopePolicy

    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "SCOPE_POLICY": f"{__name__}.EveryoneIsTeam"}):
        assert type(get_scope_policy()) is EveryoneIsTeam
        assert "user=alice scope=team" in text(result(client, "tools/call", {"name": "whoami"}, caller=alice))
