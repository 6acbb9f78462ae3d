"""Authentication on every request: tokens (Bearer and Token), 401 challenges, RFC 9728 metadata, overrides."""

from __future__ import annotations

import base64
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from mcp_django.auth import AuthRequest, TokenAuthentication, authenticate
from tests.access_support import Caller, names, send
from tests.http_support import initialize, post, request

pytestmark = [pytest.mark.urls("tests.access_urls"), pytest.mark.django_db]

CHALLENGE = 'Bearer resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"'


def test_a_bearer_token_authenticates(client: Client, alice: Caller) -> None:
    assert names(client, "tools/list", caller=alice)


def test_a_token_header_authenticates_too(client: Client, alice: Caller) -> None:
    response = send(client, "tools/list", headers={"Authorization": f"Token {alice.token}"})

    assert response.status_code == 200


def test_a_request_without_credentials_gets_401_with_the_resource_metadata_challenge(client: Client) -> None:
    response = send(client, "tools/list")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == CHALLENGE
    assert json.loads(response.content) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Unauthorized: Authentication credentials were not provided."},
    }


def test_the_challenge_names_the_metadata_of_the_endpoint_asked(client: Client) -> None:
    response = send(client, "tools/list", path="/mcp/adapter/")

    assert response["WWW-Authenticate"] == (
        'Bearer resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp/adapter"'
    )


@pytest.mark.parametrize("header", ["Bearer not-a-token", "Token", "Bearer a b"])
def test_bad_credentials_get_401_invalid_token(client: Client, header: str) -> None:
    response = send(client, "tools/list", headers={"Authorization": header})

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == CHALLENGE.replace("Bearer ", 'Bearer error="invalid_token", ')
    assert json.loads(response.content)["error"]["message"].startswith("Unauthorized: Invalid token")


def test_an_inactive_users_token_is_refused(client: Client, alice: Caller) -> None:
    get_user_model().objects.filter(pk=alice.user.pk).update(is_active=False)

    assert send(client, "tools/list", caller=alice).status_code == 401


def test_credentials_are_checked_on_every_request_not_only_initialize(client: Client, alice: Caller) -> None:
    opened = post(client, initialize(), alice.headers)
    session = {**alice.headers, "Mcp-Session-Id": opened["Mcp-Session-Id"]}
    assert post(client, request("tools/list"), session).status_code == 200

    Token.objects.filter(key=alice.token).delete()
    refused = post(client, request("tools/list"), session)

    assert refused.status_code == 401
    assert refused["WWW-Authenticate"].startswith('Bearer error="invalid_token"')


def test_delete_and_get_need_credentials_too(client: Client) -> None:
    assert client.delete("/mcp").status_code == 401
    assert client.get("/mcp").status_code == 401


def test_an_anonymous_endpoint_serves_callers_without_credentials_at_the_user_scope(client: Client) -> None:
    assert names(client, "tools/list", path="/open/mcp") == ["awhoami", "echo", "whoami"]


def test_a_token_on_an_anonymous_endpoint_still_identifies_its_user(client: Client, carol: Caller) -> None:
    assert "system_purge" in names(client, "tools/list", path="/open/mcp", caller=carol)


def test_an_endpoint_can_use_its_own_authentication_classes(client: Client, alice: Caller) -> None:
    alice.user.set_password("s3cret")
    alice.user.save()
    basic = base64.b64encode(b"alice:s3cret").decode()

    assert send(client, "tools/list", path="/basic/mcp", headers={"Authorization": f"Basic {basic}"}).status_code == 200
    assert send(client, "tools/list", path="/basic/mcp", caller=alice).status_code == 401


def test_the_session_of_a_logged_in_user_authenticates(client: Client, alice: Caller) -> None:
    client.force_login(alice.user)

    assert send(client, "tools/list").status_code == 200


@override_settings(MCP_DJANGO={"DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.BasicAuthentication"]})
def test_the_default_authentication_classes_come_from_the_setting(client: Client, alice: Caller) -> None:
    assert send(client, "tools/list", caller=alice).status_code == 401


def test_the_protected_resource_metadata_describes_the_endpoint(client: Client) -> None:
    response = client.get("/.well-known/oauth-protected-resource/mcp/adapter")

    assert response.status_code == 200
    assert response.json() == {
        "resource": "http://testserver/mcp/adapter",
        "bearer_methods_supported": ["header"],
        "resource_name": "mcp-django-example",
    }


@override_settings(MCP_DJANGO={"AUTHORIZATION_SERVERS": ["https://auth.example.com"]})
def test_the_metadata_names_the_authorization_servers_of_the_setting(client: Client) -> None:
    metadata = client.get("/.well-known/oauth-protected-resource/mcp").json()

    assert metadata["authorization_servers"] == ["https://auth.example.com"]
    assert metadata["resource"] == "http://testserver/mcp"


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource/mcp", "/mcp/.well-known/endpoints"])
def test_a_page_on_any_origin_may_read_the_public_metadata(client: Client, path: str) -> None:
    response = client.get(path, headers={"Origin": "https://inspector.example"})

    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("path", ["open/mcp", "nowhere", "mcp/adapter/deeper"])
def test_no_metadata_for_anonymous_endpoints_or_paths_without_an_endpoint(client: Client, path: str) -> None:
    assert client.get(f"/.well-known/oauth-protected-resource/{path}").status_code == 404


def test_bearer_and_token_are_both_accepted_by_the_token_class(alice: Caller) -> None:
    authenticators = [TokenAuthentication()]

    for scheme in ("Bearer", "bearer", "Token"):
        request = AuthRequest.from_headers({"Authorization": f"{scheme} {alice.token}"})
        assert authenticate(authenticators, request) == alice.user
    assert authenticate(authenticators, AuthRequest.from_headers({"Authorization": "Basic eA=="})) is None
    assert authenticate(authenticators, AuthRequest.from_headers({})) is None
