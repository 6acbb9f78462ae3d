"""The admin's list of upstream connections: who is connected to what, never a token; disconnecting ends them."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from mcp_django.client.auth.authorization import Discovery, Registration
from mcp_django.gateway.models import UpstreamCredential
from mcp_django.gateway.upstream import save_tokens

pytestmark = [pytest.mark.urls("tests.admin_urls"), pytest.mark.django_db]

DISCOVERY = Discovery(
    resource="https://mcp.example.com/mcp",
    issuer="https://auth.example.com",
    authorization_endpoint="https://auth.example.com/authorize",
    token_endpoint="https://auth.example.com/token",
    registration_endpoint=None,
    scopes=("repo",),
)
CHANGELIST = "/admin/mcp_django_gateway/upstreamcredential/"


@pytest.fixture
def connected() -> UpstreamCredential:
    alice = get_user_model().objects.create_user("alice")
    token = {"access_token": "at-secret-alice", "refresh_token": "rt-secret-alice", "scope": "repo"}
    return save_tokens(alice, "github", DISCOVERY, Registration("site", "client-secret"), token)


@pytest.fixture
def admin_browser() -> Client:
    browser = Client()
    browser.force_login(get_user_model().objects.create_superuser("root", password="x"))
    return browser


def test_the_admin_lists_who_is_connected_to_what_without_a_token(
    connected: UpstreamCredential, admin_browser: Client
) -> None:
    listed = admin_browser.get(CHANGELIST).content.decode()
    shown = admin_browser.get(f"{CHANGELIST}{connected.pk}/change/").content.decode()

    assert "alice" in listed
    assert "github" in listed
    assert "https://auth.example.com" in shown
    for secret in ("at-secret-alice", "rt-secret-alice", "client-secret", connected.secret):
        assert secret not in listed
        assert secret not in shown


def test_the_admins_disconnect_action_ends_the_connection(connected: UpstreamCredential, admin_browser: Client) -> None:
    data: dict[str, Any] = {"action": "disconnect", "_selected_action": [connected.pk]}

    answer = admin_browser.post(CHANGELIST, data)

    assert answer.status_code == 302
    assert not UpstreamCredential.objects.exists()
