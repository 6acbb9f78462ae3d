"""The attacks of the second hardening round on the authorization server (issue 25's O- and R- items), each
performed over real HTTP (Django's test client, the ASGI fast path, or a socket) against real views and DB."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import Client, override_settings
from oauth2_provider import cimd
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

from mcp_django.asgi import get_asgi_application
from mcp_django.oauth.models import ClientMetadata
from tests.access_support import send
from tests.http_support import stateless, stateless_headers
from tests.oauth.cimd_support import SlowDocumentServer
from tests.oauth.support import REDIRECT_URI, approve, authorize_url, exchange, obtain_token, pkce, register
from tests.oauth.test_oauth import bearer, make_user, refusal
from tests.test_asgi import call

pytestmark = pytest.mark.django_db


@pytest.fixture
def bob() -> Any:
    return make_user("bob", "mcp-team")


# -- O-22: auto-approval is for the endpoint (and scopes) the user approved, never another -----------------


@pytest.mark.parametrize("other", ["http://testserver/mcp/adapter", "http://testserver/guarded/mcp"])
def test_o22_an_approval_for_one_endpoint_auto_approves_no_other(client: Client, bob: Any, other: str) -> None:
    token = obtain_token(bob, resource="http://testserver/mcp")
    client.force_login(bob)

    url = authorize_url(token["client_id"], pkce()[1], resource=other, scope="mcp:user", approval_prompt="auto")
    response = client.get(url)

    assert response.status_code == 200, response.get("Location")  # the consent page, not a code
    assert f"<code>{other}</code>" in response.content.decode()


def test_o22_auto_approval_still_skips_the_page_for_the_endpoint_and_scopes_approved(client: Client, bob: Any) -> None:
    token = obtain_token(bob, resource="http://testserver/mcp", scope="mcp:user")
    client.force_login(bob)

    same = client.get(
        authorize_url(
            token["client_id"], pkce()[1], resource="http://testserver/mcp", scope="mcp:user", approval_prompt="auto"
        )
    )
    wider = client.get(
        authorize_url(
            token["client_id"], pkce()[1], resource="http://testserver/mcp", scope="mcp:team", approval_prompt="auto"
        )
    )

    assert same.status_code == 302
    assert "code" in parse_qs(urlsplit(same["Location"]).query)
    assert wider.status_code == 200


# -- the OAuth server's views refuse a body over MAX_PUBLIC_REQUEST_BYTES before reading it -----------

PUBLIC_LIMIT = 64 * 1024
PUBLIC_PATHS = ["/oauth/register/", "/oauth/token/", "/oauth/login/", "/.well-known/oauth-authorization-server"]


@pytest.mark.parametrize("path", PUBLIC_PATHS)
def test_r4_a_declared_gigabyte_is_413_where_django_serves_the_view(client: Client, path: str) -> None:
    response = client.generic("POST", path, b"{}", content_type="application/json", CONTENT_LENGTH=str(2**30))

    assert response.status_code == 413
    assert response.json()["error"]["message"] == f"Payload Too Large: the body exceeds {PUBLIC_LIMIT} bytes"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", PUBLIC_PATHS)
async def test_r4_the_fast_path_refuses_a_declared_gigabyte_without_asking_for_the_body(path: str) -> None:
    answer = await call(
        get_asgi_application(), "POST", path, headers={"Content-Length": str(2**30)}, chunks=[b"x" * 1024]
    )

    assert answer.status == 413
    assert answer.json()["error"]["message"] == f"Payload Too Large: the body exceeds {PUBLIC_LIMIT} bytes"
    assert answer.receive_calls == 0


@pytest.mark.django_db(transaction=True)
async def test_r4_the_fast_path_stops_reading_a_chunked_body_at_the_limit() -> None:
    chunks = [b" " * 16384] * 64  # 1 MiB, no Content-Length

    answer = await call(get_asgi_application(), "POST", "/oauth/register/", chunks=chunks)

    assert answer.status == 413
    assert answer.receive_calls <= PUBLIC_LIMIT // 16384 + 1


@pytest.mark.django_db(transaction=True)
async def test_r4_a_registration_within_the_limit_still_passes_the_fast_path_to_django() -> None:
    body = {"client_name": "c", "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}

    answer = await call(get_asgi_application(), "POST", "/oauth/register/", body)

    assert answer.status == 201, answer.body
    assert answer.json()["client_name"] == "c"


# -- O-6: the registration limit counts the caller's address, not what it writes in X-Forwarded-For -------


def with_mcp(**overrides: Any) -> Any:
    return override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **overrides})


def register_from(client: Client, forwarded_for: str | None = None) -> int:
    headers = {} if forwarded_for is None else {"X-Forwarded-For": forwarded_for}
    body = json.dumps({"client_name": "c", "redirect_uris": [REDIRECT_URI]})
    return client.post("/oauth/register/", body, content_type="application/json", headers=headers).status_code


def test_o6_a_client_writing_a_new_forwarded_for_each_time_is_still_counted(client: Client) -> None:
    with with_mcp(OAUTH_REGISTRATION_RATE="3/hour"):
        statuses = [register_from(client, f"203.0.113.{n}") for n in range(5)]

    assert statuses == [201, 201, 201, 429, 429]


def test_o6_a_forwarded_for_naming_another_address_does_not_lock_it_out(client: Client) -> None:
    with with_mcp(OAUTH_REGISTRATION_RATE="2/hour"):
        spoofed = [register_from(client, "198.51.100.7") for _ in range(2)]
        victim = register_from(Client(REMOTE_ADDR="198.51.100.7"))

    assert spoofed == [201, 201]
    assert victim == 201


def test_o6_behind_a_proxy_num_proxies_makes_the_forwarded_address_count(client: Client, settings: Any) -> None:
    settings.REST_FRAMEWORK = {**getattr(settings, "REST_FRAMEWORK", {}), "NUM_PROXIES": 1}
    with with_mcp(OAUTH_REGISTRATION_RATE="1/hour"):
        first = [register_from(client, "203.0.113.1"), register_from(client, "203.0.113.1")]
        other = register_from(client, "203.0.113.2")

    assert first == [201, 429]
    assert other == 201


# -- O-32: failed logins on the OAuth login page are throttled per address -------------------------------


def log_in(client: Client, password: str) -> int:
    return client.post("/oauth/login/", {"username": "bob", "password": password}).status_code


def test_o32_past_the_failed_login_rate_even_the_right_password_is_refused(client: Client, bob: Any) -> None:
    wrong = [log_in(client, f"guess{n}") for n in range(5)]

    refused = client.post("/oauth/login/", {"username": "bob", "password": "pw"})

    assert wrong == [200] * 5  # the form again, with its error
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert "Too many failed logins from this address." in refused.content.decode()
    assert "_auth_user_id" not in client.session


def test_o32_a_successful_login_is_not_counted(client: Client, bob: Any) -> None:
    statuses = [log_in(Client(), "pw") for _ in range(8)]

    assert statuses == [302] * 8


# -- O-4, O-5: registration bodies that cost the server -------------------------------------------------


def test_o4_deeply_nested_json_to_registration_is_a_400_not_a_500(client: Client) -> None:
    body = b'{"client_name": ' + b"[" * 30000 + b"]" * 30000 + b"}"

    response = client.post("/oauth/register/", body, content_type="application/json")

    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_client_metadata",
        "error_description": "Request body must be valid JSON",
    }


def test_o5_registration_refuses_more_redirect_uris_than_a_client_needs(client: Client) -> None:
    uris = [f"http://127.0.0.1:{port}/cb" for port in range(1024, 1024 + 11)]

    status, body = register(client, redirect_uris=uris)

    assert status == 400
    assert body["error_description"] == "At most 10 redirect URIs"
    assert not get_application_model().objects.exists()


def test_o5_a_redirect_uri_of_a_megabyte_is_refused(client: Client) -> None:
    status, body = register(client, redirect_uris=["https://app.example/" + "a" * 2000])

    assert status == 400
    assert body["error_description"] == "A redirect URI is longer than 2000 characters"


# -- O-7: an RFC 7592 update must still describe a public MCP client ------------------------------------


def update(client: Client, info: dict[str, Any], token: str | None = None, **metadata: Any) -> Any:
    body = {
        key: value
        for key, value in {"client_name": "c", "redirect_uris": [REDIRECT_URI], **metadata}.items()
        if value is not None
    }
    authorization = f"Bearer {token or info['registration_access_token']}"
    path = urlsplit(info["registration_client_uri"]).path
    return client.put(path, json.dumps(body), content_type="application/json", headers={"Authorization": authorization})


@pytest.mark.parametrize(
    ("metadata", "description"),
    [
        (
            {"redirect_uris": ["http://evil.example/cb"]},
            "Redirect URIs must use https or a loopback address: 'http://evil.example/cb'",
        ),
        (
            {"token_endpoint_auth_method": "client_secret_basic"},
            "Only public clients register here: token_endpoint_auth_method must be none",
        ),
        ({"grant_types": ["client_credentials"]}, "grant_types must include authorization_code"),
    ],
)
def test_o7_an_update_is_held_to_the_registration_rules(
    client: Client, metadata: dict[str, Any], description: str
) -> None:
    _, info = register(client)

    response = update(client, info, **metadata)

    assert response.status_code == 400
    assert response.json() == {"error": "invalid_client_metadata", "error_description": description}
    application = get_application_model().objects.get(client_id=info["client_id"])
    assert application.redirect_uris == REDIRECT_URI
    assert application.client_type == "public"
    assert application.authorization_grant_type == "authorization-code"


def test_o7_an_update_within_the_rules_still_applies_and_stays_public(client: Client) -> None:
    _, info = register(client)

    response = update(client, info, client_name="renamed")  # no auth method: the toolkit alone assumed a secret

    assert response.status_code == 200, response.content
    application = get_application_model().objects.get(client_id=info["client_id"])
    assert (application.name, application.client_type) == ("renamed", "public")


def test_o7_an_update_without_the_registration_token_is_401_whatever_its_body(client: Client) -> None:
    _, info = register(client)

    response = update(client, info, token="not-the-token", redirect_uris=["http://evil.example/cb"])

    assert response.status_code == 401


# -- O-26, O-27: client ID metadata documents --------------------------------------------------------------


@pytest.fixture
def loopback_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one substitute these tests make, as issue 25 found them: the fetcher's public-address check lets
    127.0.0.1 through, so the test's own HTTPS server plays the client's host. Everything else is real."""
    original = cimd._ip_is_public
    monkeypatch.setattr(cimd, "_ip_is_public", lambda ip: ip == "127.0.0.1" or original(ip))


def document_for(client_id: str, **metadata: Any) -> dict[str, Any]:
    return {
        "client_id": client_id,
        "client_name": "metadata document client",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **metadata,
    }


def served_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **metadata: Any) -> tuple[SlowDocumentServer, str]:
    """A local HTTPS server that answers at once with a metadata document (the `metadata` over
    `document_for`'s), trusted by the fetcher; and the client id, the document's URL."""
    server = SlowDocumentServer(tmp_path, drip_from="body", interval=0)
    client_id = server.base_url + "/client.json"
    server.document = document_for(client_id, **metadata)
    monkeypatch.setenv("SSL_CERT_FILE", str(server.certificate))
    return server, client_id


FETCH_TIMEOUT_S = 1
FETCH_DONE_WITHIN_S = 4.0
"""The fetch's deadline and a bound on the whole authorization request around it (a drip takes 30 s)."""


@pytest.mark.parametrize("drip_from", ["body", "headers"])
def test_o26_a_document_sent_a_byte_at_a_time_is_given_up_at_the_fetch_timeout(
    client: Client,
    bob: Any,
    loopback_host: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    drip_from: str,
) -> None:
    server = SlowDocumentServer(tmp_path, drip_from=drip_from, interval=0.1)
    client_id = server.base_url + "/client.json"
    server.document = document_for(client_id)
    monkeypatch.setenv("SSL_CERT_FILE", str(server.certificate))
    client.force_login(bob)
    provider = {**settings.OAUTH2_PROVIDER, "CIMD_FETCH_TIMEOUT_SECONDS": FETCH_TIMEOUT_S}

    with (
        server.running(),
        override_settings(OAUTH2_PROVIDER=provider),
        caplog.at_level(logging.INFO, "oauth2_provider.cimd"),
    ):
        started = time.monotonic()
        response = client.get(authorize_url(client_id, pkce()[1], resource="http://testserver/mcp"))
        elapsed = time.monotonic() - started

    assert elapsed < FETCH_DONE_WITHIN_S
    assert response.status_code == 400
    assert "client_id document not fetched within 1 s" in caplog.text
    assert not get_application_model().objects.filter(client_id=client_id).exists()


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        ({"redirect_uris": ["http://evil.example/cb"]}, "Redirect URIs must use https or a loopback address"),
        ({"redirect_uris": [REDIRECT_URI] * 11}, "At most 10 redirect URIs"),
        ({"response_types": ["token"]}, "Only the code response type is supported"),
        ({"application_type": "web"}, "A web client's redirect URIs must use https, not a loopback address"),
    ],
)
def test_o27_a_client_id_metadata_document_is_held_to_the_registration_rules(
    client: Client,
    bob: Any,
    loopback_host: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    metadata: dict[str, Any],
    problem: str,
) -> None:
    server, client_id = served_document(tmp_path, monkeypatch, **metadata)
    client.force_login(bob)

    with server.running(), caplog.at_level(logging.INFO, "oauth2_provider.cimd"):
        response = client.get(authorize_url(client_id, pkce()[1], resource="http://testserver/mcp"))

    assert response.status_code == 400
    assert f"client metadata not accepted: {problem}" in caplog.text
    assert not get_application_model().objects.filter(client_id=client_id).exists()


def test_o27_a_document_within_the_rules_still_reaches_the_consent_page(
    client: Client, bob: Any, loopback_host: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, client_id = served_document(tmp_path, monkeypatch)
    client.force_login(bob)

    with server.running():
        response = client.get(authorize_url(client_id, pkce()[1], resource="http://testserver/mcp"))

    assert response.status_code == 200, response.content
    assert "metadata document client" in response.content.decode()


@pytest.mark.parametrize(
    ("metadata", "stored"),
    [
        ({}, "native"),  # none declared: the loopback redirect URI makes it a native client
        ({"application_type": "native"}, "native"),
        ({"application_type": "web", "redirect_uris": ["https://client.example/callback"]}, "web"),
    ],
)
def test_o27_a_client_id_metadata_documents_application_type_is_stored_as_a_registrations_is(
    client: Client,
    bob: Any,
    loopback_host: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    metadata: dict[str, Any],
    stored: str,
) -> None:
    server, client_id = served_document(tmp_path, monkeypatch, **metadata)
    client.force_login(bob)
    redirect = {"redirect_uri": metadata.get("redirect_uris", [REDIRECT_URI])[0]}

    with server.running():
        client.get(authorize_url(client_id, pkce()[1], resource="http://testserver/mcp", **redirect))

    application = get_application_model().objects.get(client_id=client_id)
    assert ClientMetadata.objects.get(application=application).application_type == stored


# -- O-12: a replayed code revokes what its first exchange got (RFC 6749 §4.1.2) ---------------------------


def code_and_client(user: Any, resource: str = "http://testserver/mcp") -> tuple[str, str, str]:
    """A fresh authorization code for `user`: `(client_id, code, verifier)`."""
    browser = Client()
    _, info = register(browser)
    verifier, challenge = pkce()
    browser.force_login(user)
    return info["client_id"], approve(browser, authorize_url(info["client_id"], challenge, resource=resource)), verifier


def refresh(client_id: str, refresh_token: str) -> Any:
    data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    return Client().post("/oauth/token/", data=data)


def test_o12_a_replayed_code_revokes_the_tokens_of_its_first_exchange(client: Client, bob: Any) -> None:
    client_id, code, verifier = code_and_client(bob)
    status, first = exchange(Client(), client_id, code, verifier, "http://testserver/mcp")
    assert status == 200, first
    assert send(client, "tools/list", headers=bearer(first)).status_code == 200

    replay_status, replay = exchange(Client(), client_id, code, verifier, "http://testserver/mcp")

    assert (replay_status, replay["error"]) == (400, "invalid_grant")
    assert send(client, "tools/list", headers=bearer(first)).status_code == 401
    assert refresh(client_id, first["refresh_token"]).status_code == 400


def test_o12_the_replay_revokes_tokens_refreshed_from_the_first_exchange_too(client: Client, bob: Any) -> None:
    client_id, code, verifier = code_and_client(bob)
    _, first = exchange(Client(), client_id, code, verifier, "http://testserver/mcp")
    refreshed = refresh(client_id, first["refresh_token"]).json()

    exchange(Client(), client_id, code, verifier, "http://testserver/mcp")

    assert send(client, "tools/list", headers=bearer(refreshed)).status_code == 401


def test_o12_a_code_never_issued_revokes_nothing(client: Client, bob: Any) -> None:
    token = obtain_token(bob)
    client_id = token["client_id"]

    status, _ = exchange(Client(), client_id, "not-a-code", "v" * 43, "http://testserver/mcp")

    assert status == 400
    assert send(client, "tools/list", headers=bearer(token)).status_code == 200


# -- O-17: no Host (or an empty one) is no way around a token's host binding ------------------------------


def test_o17_without_a_host_the_view_compares_the_servers_own_name(client: Client, bob: Any, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["testserver", "other.example"]
    token = obtain_token(bob)  # for http://testserver/mcp
    served_elsewhere = Client(SERVER_NAME="other.example")

    missing = send(served_elsewhere, "tools/list", headers=bearer(token))
    own_name = send(client, "tools/list", headers=bearer(token))  # no Host either, the server named testserver

    assert refusal(missing) == "Unauthorized: The access token was not issued for this endpoint."
    assert own_name.status_code == 200
    # An empty Host never reaches the view: Django answers it 400 (DisallowedHost) first.


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("host", [None, ""])
async def test_o17_on_the_fast_path_a_request_without_a_host_is_refused_a_bound_token(host: str | None) -> None:
    token = await sync_to_async(lambda: obtain_token(make_user("hal", "mcp-team")))()
    body, headers = stateless("tools/list"), stateless_headers("tools/list")

    answer = await call(get_asgi_application(), "POST", "/mcp", body, {**headers, **bearer(token), "Host": host})

    assert answer.status == 401
    assert answer.json()["error"]["message"] == "Unauthorized: The access token was not issued for this endpoint."


# -- O-33: a deactivated user's grants end ---------------------------------------------------------------


def test_o33_a_deactivated_user_can_no_longer_refresh(bob: Any) -> None:
    token = obtain_token(bob)
    bob.is_active = False
    bob.save()

    response = refresh(token["client_id"], token["refresh_token"])

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_o33_a_code_issued_before_deactivation_is_not_exchanged(bob: Any) -> None:
    client_id, code, verifier = code_and_client(bob)
    bob.is_active = False
    bob.save()

    status, body = exchange(Client(), client_id, code, verifier, "http://testserver/mcp")

    assert (status, body["error"]) == (400, "invalid_grant")


# -- O-34: tokens are stored as checksums only (RFC 9700 §4) -------------------------------------------


def test_o34_no_token_the_server_issued_is_stored_in_plaintext(client: Client, bob: Any) -> None:
    token = obtain_token(bob)
    refreshed = refresh(token["client_id"], token["refresh_token"]).json()
    _, registration = register(client)

    access_rows = list(get_access_token_model().objects.values_list("token", flat=True))
    refresh_rows = list(get_refresh_token_model().objects.values_list("token", flat=True))

    assert len(access_rows) == 3  # two registrations', the refreshed one (the code's went with the refresh)
    assert set(access_rows) == {""}
    assert set(refresh_rows) == {""}
    assert send(client, "tools/list", headers=bearer(refreshed)).status_code == 200  # looked up by checksum
    assert registration["registration_access_token"]
