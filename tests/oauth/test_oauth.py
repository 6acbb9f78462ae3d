"""The site as the OAuth 2.1 authorization server of its MCP endpoints (mcp_django.oauth), over real views and DB.

The live tests (tests/live/test_oauth_live.py) run the official client through the same flow under daphne.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model

from mcp_django.oauth.grants import OAUTH_SCOPES
from tests.access.test_auth_cache import Clock
from tests.access_support import send
from tests.oauth.support import REDIRECT_URI, authorize_url, exchange, hidden_fields, obtain_token, pkce, register

pytestmark = pytest.mark.django_db

TEAM_TOOL = "reindex_catalogue"


def with_mcp(**overrides: Any) -> Any:
    return override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **overrides})


def make_user(username: str, group: str | None = None, **extra: Any) -> Any:
    user = get_user_model().objects.create_user(username, password="pw", **extra)
    if group is not None:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


@pytest.fixture
def alice() -> Any:
    return make_user("alice")


@pytest.fixture
def bob() -> Any:
    return make_user("bob", "mcp-team")


def bearer(token: dict[str, Any] | str) -> dict[str, str]:
    value = token if isinstance(token, str) else token["access_token"]
    return {"Authorization": f"Bearer {value}"}


def tool_names(client: Client, token: dict[str, Any], path: str = "/mcp") -> set[str]:
    response = send(client, "tools/list", path=path, headers=bearer(token))
    assert response.status_code == 200, response.content
    return {tool["name"] for tool in json.loads(response.content)["result"]["tools"]}


def refusal(response: Any) -> str:
    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    return str(json.loads(response.content)["error"]["message"])


# -- discovery -------------------------------------------------------------------------------------


def test_the_authorization_server_metadata_offers_what_mcp_clients_use(client: Client) -> None:
    metadata = client.get("/.well-known/oauth-authorization-server").json()

    assert metadata["issuer"] == "http://testserver"
    assert metadata["authorization_endpoint"] == "http://testserver/oauth/authorize/"
    assert metadata["token_endpoint"] == "http://testserver/oauth/token/"
    assert metadata["registration_endpoint"] == "http://testserver/oauth/register/"
    assert metadata["revocation_endpoint"] == "http://testserver/oauth/revoke_token/"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["response_types_supported"] == ["code"]
    assert metadata["grant_types_supported"] == ["authorization_code", "refresh_token", "client_credentials"]
    assert metadata["token_endpoint_auth_methods_supported"] == ["none", "client_secret_basic", "private_key_jwt"]
    assert "ES256" in metadata["token_endpoint_auth_signing_alg_values_supported"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert set(metadata["scopes_supported"]) == {"mcp:user", "mcp:team", "mcp:system"}


def test_the_protected_resource_metadata_names_this_site_as_the_authorization_server(client: Client) -> None:
    metadata = client.get("/.well-known/oauth-protected-resource/mcp/adapter").json()

    assert metadata == {
        "resource": "http://testserver/mcp/adapter",
        "bearer_methods_supported": ["header"],
        "resource_name": "mcp-django-example",
        "authorization_servers": ["http://testserver"],
        "scopes_supported": ["mcp:user", "mcp:team", "mcp:system"],
    }


# -- registration ----------------------------------------------------------------------------------


def test_a_public_client_registers_without_a_secret(client: Client) -> None:
    status, body = register(client, token_endpoint_auth_method=None)

    assert status == 201, body
    assert body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body
    application = get_application_model().objects.get(client_id=body["client_id"])
    assert application.client_type == "public"
    assert application.redirect_uris == REDIRECT_URI


def test_one_address_registering_past_the_rate_is_answered_429_and_stores_nothing(client: Client) -> None:
    applications = get_application_model().objects
    with with_mcp(OAUTH_REGISTRATION_RATE="3/hour"):
        answers = [register(client) for _ in range(3)]
        assert [status for status, _ in answers] == [201, 201, 201]

        flood = [
            client.post(
                "/oauth/register/", data=json.dumps({"redirect_uris": [REDIRECT_URI]}), content_type="application/json"
            )
            for _ in range(20)
        ]
        assert {response.status_code for response in flood} == {429}
        assert 3500 <= int(flood[0]["Retry-After"]) <= 3600
        retry_after = flood[0]["Retry-After"]
        assert json.loads(flood[0].content) == {
            "error": "temporarily_unavailable",
            "error_description": f"Too many client registrations from this address; retry in {retry_after} s.",
        }
        assert applications.count() == 3

        elsewhere = Client(REMOTE_ADDR="192.0.2.7")
        status, _ = register(elsewhere)
        assert status == 201
        assert applications.count() == 4


def test_registration_is_not_counted_with_the_rate_set_to_none(client: Client) -> None:
    with with_mcp(OAUTH_REGISTRATION_RATE=None):
        assert {register(client)[0] for _ in range(40)} == {201}


@pytest.mark.parametrize(
    ("metadata", "description"),
    [
        (
            {"token_endpoint_auth_method": "client_secret_basic"},
            "Only public clients register here: token_endpoint_auth_method must be none",
        ),
        (
            {"redirect_uris": ["http://app.example.com/callback"]},
            "Redirect URIs must use https or a loopback address: 'http://app.example.com/callback'",
        ),
        (
            {"redirect_uris": ["myapp://callback"]},
            "Redirect URIs must use https or a loopback address: 'myapp://callback'",
        ),
        ({"redirect_uris": []}, "redirect_uris must be a non-empty array"),
        (
            {"grant_types": ["client_credentials"]},
            "grant_types must include authorization_code",
        ),
        ({"response_types": ["token"]}, "Only the code response type is supported"),
    ],
)
def test_registration_refuses_what_an_mcp_client_must_not_get(
    client: Client, metadata: dict[str, Any], description: str
) -> None:
    status, body = register(client, **metadata)

    assert status == 400
    assert body == {"error": "invalid_client_metadata", "error_description": description}
    assert not get_application_model().objects.exists()


def test_https_and_every_loopback_form_are_accepted_redirect_uris(client: Client) -> None:
    uris = ["https://app.example.com/cb", "http://localhost:8080/cb", "http://[::1]:9/cb", "http://127.0.0.1/cb"]

    status, body = register(client, redirect_uris=uris)

    assert status == 201, body
    assert body["redirect_uris"] == uris


# -- authorization ---------------------------------------------------------------------------------


def test_a_user_logged_out_is_sent_to_the_login_page_first(client: Client) -> None:
    _, info = register(client)
    url = authorize_url(info["client_id"], pkce()[1], resource="http://testserver/mcp")

    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/oauth/login/?next=/oauth/authorize/")
    assert client.get(response["Location"]).status_code == 200


@pytest.mark.parametrize(
    ("resource", "extra", "error"),
    [
        (None, {}, "invalid_target: Name the MCP endpoint the token is for in the resource parameter (RFC 8707)."),
        (
            "http://testserver/conformance/mcp",
            {},
            "invalid_target: http://testserver/conformance/mcp is not an MCP endpoint of this site that accepts "
            "OAuth tokens.",
        ),
        (
            "http://elsewhere.example/mcp",
            {},
            "invalid_target: http://elsewhere.example/mcp is not an MCP endpoint of this site that accepts OAuth "
            "tokens.",
        ),
        (
            "http://testserver/mcp",
            {"code_challenge_method": "plain"},
            "invalid_request: PKCE with code_challenge_method=S256 is required.",
        ),
    ],
)
def test_the_consent_page_refuses_requests_this_server_does_not_grant(
    client: Client, alice: Any, resource: str | None, extra: dict[str, str], error: str
) -> None:
    _, info = register(client)
    client.force_login(alice)

    response = client.get(authorize_url(info["client_id"], pkce()[1], resource=resource, **extra))

    assert response.status_code == 400
    assert error in response.content.decode().replace("&#x27;", "'")


def test_the_consent_page_shows_the_endpoint_and_only_the_scopes_the_user_has(client: Client, alice: Any) -> None:
    _, info = register(client)
    client.force_login(alice)

    page = client.get(authorize_url(info["client_id"], pkce()[1], resource="http://testserver/mcp")).content.decode()

    assert "<code>http://testserver/mcp</code>" in page
    assert "Use the MCP tools open to every user, as you" in page
    shown = page.replace("&#x27;", "'")
    for above in ("mcp:team", "mcp:system"):  # by their descriptions (a random token may spell "team")
        assert OAUTH_SCOPES[above] not in shown
        assert f'value="{above}"' not in page
    assert 'name="scope" value="mcp:user"' in page


def test_a_token_reaches_the_endpoint_it_was_issued_for_at_its_users_scope(client: Client, bob: Any) -> None:
    token = obtain_token(bob)

    assert token["scope"] == "mcp:user mcp:team"
    assert token["access_token"].startswith("mcp_at_")
    assert TEAM_TOOL in tool_names(client, token)


def test_a_token_for_one_endpoint_is_refused_on_another(client: Client, bob: Any) -> None:
    token = obtain_token(bob, resource="http://testserver/mcp")
    assert tool_names(client, token)  # accepted, and now cached for /mcp

    message = refusal(send(client, "tools/list", path="/mcp/adapter", headers=bearer(token)))

    assert message == "Unauthorized: The access token was not issued for this endpoint."


def test_a_token_presented_through_another_host_is_refused(client: Client, bob: Any, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["testserver", "other.example"]
    token = obtain_token(bob)

    response = send(client, "tools/list", headers={**bearer(token), "Host": "other.example"})

    assert refusal(response) == "Unauthorized: The access token was not issued for this endpoint."


def test_a_user_token_never_reaches_team_tools(client: Client, bob: Any) -> None:
    token = obtain_token(bob, scope="mcp:user")

    assert token["scope"] == "mcp:user"
    assert TEAM_TOOL not in tool_names(client, token)
    call = send(client, "tools/call", {"name": TEAM_TOOL, "arguments": {}}, headers=bearer(token))
    assert "error" in json.loads(call.content), call.content


def test_a_user_asking_for_more_than_they_have_gets_their_own_scope(client: Client, alice: Any) -> None:
    token = obtain_token(alice, scope="mcp:team mcp:system")

    assert token["scope"] == "mcp:user"
    assert TEAM_TOOL not in tool_names(client, token)


def test_a_token_follows_its_user_losing_a_group(client: Client, bob: Any) -> None:
    token = obtain_token(bob)
    assert TEAM_TOOL in tool_names(client, token)

    bob.groups.clear()

    assert TEAM_TOOL not in tool_names(client, token)


def test_a_tokens_permissions_are_its_users_read_at_each_request(client: Client, alice: Any) -> None:
    token = obtain_token(alice)  # the demo's curate_book requires demo.curate_book
    assert "curate_book" not in tool_names(client, token)

    alice.user_permissions.add(Permission.objects.get(content_type__app_label="demo", codename="curate_book"))

    assert "curate_book" in tool_names(client, token)


def test_an_expired_token_is_refused(client: Client, bob: Any) -> None:
    token = obtain_token(bob)
    get_access_token_model().objects.update(expires=timezone.now() - timedelta(seconds=1))

    assert refusal(send(client, "tools/list", headers=bearer(token))) == "Unauthorized: The access token has expired."


def test_a_revoked_token_is_refused_at_the_next_request(client: Client, bob: Any) -> None:
    token = obtain_token(bob)
    assert tool_names(client, token)  # cached from here on

    revoked = client.post(
        "/oauth/revoke_token/", data={"token": token["access_token"], "client_id": token["client_id"]}
    )

    assert revoked.status_code == 200
    assert refusal(send(client, "tools/list", headers=bearer(token))).startswith("Unauthorized: Invalid token")


def test_a_refresh_token_gets_a_new_access_token(client: Client, bob: Any) -> None:
    token = obtain_token(bob)

    response = client.post(
        "/oauth/token/",
        data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"], "client_id": token["client_id"]},
    )

    assert response.status_code == 200, response.content
    fresh = response.json()
    assert fresh["access_token"] != token["access_token"]
    assert TEAM_TOOL in tool_names(client, fresh)


def test_the_registration_access_token_is_no_mcp_token(client: Client) -> None:
    _, info = register(client)

    response = send(client, "tools/list", headers=bearer(info["registration_access_token"]))

    assert response.status_code == 401


def test_the_admin_lists_clients_and_revoking_one_ends_its_tokens(client: Client, bob: Any) -> None:
    token = obtain_token(bob)
    assert tool_names(client, token)
    staff = Client()
    staff.force_login(make_user("root", is_staff=True, is_superuser=True))
    application = get_application_model().objects.get(client_id=token["client_id"])

    listing = staff.get("/admin/oauth2_provider/application/")
    assert token["client_id"] in listing.content.decode()
    staff.post(
        "/admin/oauth2_provider/application/",
        {"action": "revoke_clients", "_selected_action": [application.pk]},
    )

    assert not get_application_model().objects.exists()
    assert refusal(send(client, "tools/list", headers=bearer(token))).startswith("Unauthorized: Invalid token")


def test_a_client_id_metadata_document_on_a_private_address_is_never_fetched(
    client: Client, alice: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client.force_login(alice)
    client_id = "https://127.0.0.1:9/client.json"

    with caplog.at_level(logging.INFO, logger="oauth2_provider.cimd"):
        response = client.get(authorize_url(client_id, pkce()[1], resource="http://testserver/mcp"))

    assert response.status_code == 400
    assert "invalid_request: Invalid client_id parameter value." in response.content.decode()
    assert "client_id host resolves to a non-public address (127.0.0.1)" in caplog.text
    assert not get_application_model().objects.filter(client_id=client_id).exists()


@pytest.mark.parametrize(
    "metadata",
    [
        {"response_types": 5},
        {"response_types": "code"},
        {"grant_types": "authorization_code"},
        {"redirect_uris": "https://app.example.com/cb"},
        {"redirect_uris": [5]},
        {"redirect_uris": ["http://[::1/cb"]},
        {"token_endpoint_auth_method": ["none"]},
    ],
)
def test_malformed_registration_metadata_is_a_400_not_a_500(client: Client, metadata: dict[str, Any]) -> None:
    status, body = register(client, **metadata)

    assert status == 400
    assert body["error"] == "invalid_client_metadata"


@pytest.mark.parametrize("resource", ["http://[::1/mcp", "http://testserver:99999/mcp", "not a uri", ""])
def test_a_malformed_resource_is_refused_not_a_500(client: Client, alice: Any, resource: str) -> None:
    _, info = register(client)
    client.force_login(alice)

    response = client.get(authorize_url(info["client_id"], pkce()[1], resource=resource))

    assert response.status_code == 400
    assert "invalid_target" in response.content.decode()


def test_a_scope_edited_into_the_consent_form_is_capped_again(client: Client, alice: Any) -> None:
    _, info = register(client)
    verifier, challenge = pkce()
    client.force_login(alice)
    url = authorize_url(info["client_id"], challenge, resource="http://testserver/mcp")
    page = client.get(url).content.decode()

    fields = {**hidden_fields(page), "scope": "mcp:system", "allow": "Allow"}
    code = parse_qs(urlsplit(client.post(url, data=fields)["Location"]).query)["code"][0]
    status, token = exchange(Client(), info["client_id"], code, verifier, "http://testserver/mcp")

    assert status == 200, token
    assert token["scope"] == "mcp:user"


@pytest.mark.usefixtures("steady")  # only the token's expiry may end the cached answer, however slow the machine
def test_a_cached_token_is_not_kept_past_its_expiry(client: Client, bob: Any, clock: Clock) -> None:
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "AUTH_CACHE_TTL": 10**6}):  # longer than the token
        token = obtain_token(bob)
        row = get_access_token_model().objects.get(scope__startswith="mcp:")
        lifetime = (row.expires - timezone.now()).total_seconds()
        assert tool_names(client, token)  # accepted and cached, for the token's remaining life at most
        get_access_token_model().objects.update(expires=timezone.now() - timedelta(seconds=1))  # no signal

        clock.now += lifetime - 60
        assert tool_names(client, token)  # still the cached answer
        clock.now += 61

        message = refusal(send(client, "tools/list", headers=bearer(token)))

    assert message == "Unauthorized: The access token has expired."
