"""Machine clients (SEP-1046): client credentials with client_secret_basic and private_key_jwt, over real views.

The live test (tests/live/test_oauth_live.py) gets a token with httpx under daphne and calls a TEAM tool.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from io import StringIO
from typing import Any
from urllib.parse import urlsplit

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from django.core.management import call_command
from django.test import Client
from oauth2_provider.models import get_access_token_model

from mcp_django.oauth.machines import ASSERTION_TYPE, create_machine_client
from mcp_django.oauth.models import ClientMetadata, MachineClient
from tests.access_support import send
from tests.oauth.support import REDIRECT_URI, register
from tests.oauth.test_oauth import TEAM_TOOL, bearer, make_user, tool_names, with_mcp

pytestmark = pytest.mark.django_db

MCP = "http://testserver/mcp"
TOKEN_URL = "http://testserver/oauth/token/"


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


def token_request(client: Client, *, authorization: str | None = None, **fields: str) -> tuple[int, dict[str, Any]]:
    data = {"grant_type": "client_credentials", "resource": MCP, "scope": "mcp:user mcp:team", **fields}
    data = {key: value for key, value in data.items() if value}
    headers = {"Authorization": authorization} if authorization else {}
    response = client.post("/oauth/token/", data=data, headers=headers)
    return response.status_code, json.loads(response.content)


def key_pair(kid: str = "k1") -> tuple[Any, dict[str, Any]]:
    private = ec.generate_private_key(ec.SECP256R1())
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
    return private, {"keys": [{**public, "kid": kid, "use": "sig", "alg": "ES256"}]}


def assertion(client_id: str, private: Any, *, kid: str = "k1", **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": client_id, "sub": client_id, "aud": "http://testserver", "iat": now, "exp": now + 60}
    body["jti"] = str(uuid.uuid4())
    return jwt.encode({**body, **claims}, private, algorithm="ES256", headers={"kid": kid})


def jwt_fields(signed: str) -> dict[str, str]:
    return {"client_assertion_type": ASSERTION_TYPE, "client_assertion": signed}


@pytest.fixture
def service() -> Any:
    return make_user("ci-bot", "mcp-team")


@pytest.fixture
def secret_client(service: Any) -> tuple[str, str]:
    machine, secret = create_machine_client("CI", service)
    assert secret is not None
    return machine.application.client_id, secret


@pytest.fixture
def jwt_client(service: Any) -> tuple[str, Any]:
    private, jwks = key_pair()
    machine, secret = create_machine_client("CI keys", service, auth_method=MachineClient.PRIVATE_KEY_JWT, jwks=jwks)
    assert secret is None
    return machine.application.client_id, private


def test_a_machine_client_gets_a_token_with_client_secret_basic_and_reaches_team_tools(
    client: Client, secret_client: tuple[str, str]
) -> None:
    status, token = token_request(client, authorization=basic(*secret_client))

    assert status == 200, token
    assert token["scope"] == "mcp:user mcp:team"
    assert "refresh_token" not in token
    assert TEAM_TOOL in tool_names(client, token)


def test_a_machine_client_gets_a_token_with_private_key_jwt(client: Client, jwt_client: tuple[str, Any]) -> None:
    client_id, private = jwt_client

    status, token = token_request(client, **jwt_fields(assertion(client_id, private)))

    assert status == 200, token
    assert TEAM_TOOL in tool_names(client, token)


def test_an_assertion_may_name_the_token_endpoint_as_its_audience(client: Client, jwt_client: tuple[str, Any]) -> None:
    client_id, private = jwt_client

    status, token = token_request(client, **jwt_fields(assertion(client_id, private, aud=TOKEN_URL)))

    assert status == 200, token


def test_a_service_user_without_team_gets_only_its_own_scope(client: Client) -> None:
    machine, secret = create_machine_client("Reader", make_user("reader-bot"))
    assert secret is not None

    status, token = token_request(client, authorization=basic(machine.application.client_id, secret))

    assert status == 200, token
    assert token["scope"] == "mcp:user"
    assert TEAM_TOOL not in tool_names(client, token)
    call = send(client, "tools/call", {"name": TEAM_TOOL, "arguments": {}}, headers=bearer(token))
    assert "error" in json.loads(call.content), call.content


@pytest.mark.parametrize(
    "claims",
    [
        pytest.param({"exp": int(time.time()) - 120}, id="expired"),
        pytest.param({"aud": "https://other.example/oauth/token/"}, id="another-audience"),
        pytest.param({"exp": int(time.time()) + 3600}, id="long-lived"),
        pytest.param({"sub": "someone-else"}, id="sub-not-the-client"),
    ],
)
def test_an_assertion_with_wrong_claims_is_refused(
    client: Client, jwt_client: tuple[str, Any], claims: dict[str, Any]
) -> None:
    client_id, private = jwt_client

    status, body = token_request(client, **jwt_fields(assertion(client_id, private, **claims)))

    assert (status, body["error"]) == (401, "invalid_client")
    assert not get_access_token_model().objects.exists()


def test_an_assertion_signed_by_an_untrusted_key_is_refused(client: Client, jwt_client: tuple[str, Any]) -> None:
    client_id, _ = jwt_client
    stranger, _ = key_pair()

    status, body = token_request(client, **jwt_fields(assertion(client_id, stranger)))

    assert (status, body["error"]) == (401, "invalid_client")


def test_an_unsigned_or_hmac_assertion_is_refused(client: Client, jwt_client: tuple[str, Any]) -> None:
    client_id, _ = jwt_client
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": "http://testserver", "exp": now + 60, "jti": "x"}

    for signed in (jwt.encode(claims, "", algorithm="none"), jwt.encode(claims, "k" * 32, algorithm="HS256")):
        status, body = token_request(client, **jwt_fields(signed))
        assert (status, body["error"]) == (401, "invalid_client")


def test_a_replayed_assertion_is_refused(client: Client, jwt_client: tuple[str, Any]) -> None:
    client_id, private = jwt_client
    signed = assertion(client_id, private)
    assert token_request(client, **jwt_fields(signed))[0] == 200

    status, body = token_request(client, **jwt_fields(signed))

    assert (status, body["error"]) == (401, "invalid_client")
    assert get_access_token_model().objects.count() == 1


def test_a_private_key_jwt_client_cannot_use_a_secret(client: Client, service: Any) -> None:
    _, jwks = key_pair()
    machine, _ = create_machine_client("Keys only", service, auth_method=MachineClient.PRIVATE_KEY_JWT, jwks=jwks)
    application = machine.application
    # Even a secret the client somehow knows (set here by hand) is no way in.
    application.client_secret = "known-secret"
    application.save()

    status, body = token_request(client, authorization=basic(application.client_id, "known-secret"))

    assert (status, body["error"]) == (401, "invalid_client")


def test_a_secret_in_the_body_is_refused_for_client_secret_basic(
    client: Client, secret_client: tuple[str, str]
) -> None:
    client_id, secret = secret_client

    status, body = token_request(client, client_id=client_id, client_secret=secret)

    assert (status, body["error"]) == (401, "invalid_client")


def test_a_jwks_url_on_a_private_address_is_never_fetched(client: Client, service: Any) -> None:
    private, _ = key_pair()
    machine, _ = create_machine_client(
        "Keys by URL", service, auth_method=MachineClient.PRIVATE_KEY_JWT, jwks_uri="https://127.0.0.1/jwks.json"
    )

    status, body = token_request(client, **jwt_fields(assertion(machine.application.client_id, private)))

    assert (status, body["error"]) == (401, "invalid_client")


@pytest.mark.parametrize(
    "resource",
    [
        pytest.param("", id="none"),
        pytest.param("https://other.example/mcp", id="another-site"),
        pytest.param("http://testserver/not-mcp", id="not-an-endpoint"),
    ],
)
def test_a_token_is_bound_to_an_mcp_endpoint_of_this_site(
    client: Client, secret_client: tuple[str, str], resource: str
) -> None:
    status, body = token_request(client, authorization=basic(*secret_client), resource=resource)

    assert (status, body["error"]) == (400, "invalid_target")


def test_a_machine_token_for_one_endpoint_is_refused_on_another(client: Client, secret_client: tuple[str, str]) -> None:
    status, token = token_request(client, authorization=basic(*secret_client))
    assert status == 200, token

    response = send(client, "tools/list", path="/mcp/adapter", headers=bearer(token))

    assert response.status_code == 401


def test_a_revoked_client_is_refused_at_once(client: Client, secret_client: tuple[str, str]) -> None:
    _, token = token_request(client, authorization=basic(*secret_client))
    assert TEAM_TOOL in tool_names(client, token)  # accepted, and cached

    call_command("mcp_machine_client", "revoke", secret_client[0], stdout=StringIO())

    assert send(client, "tools/list", headers=bearer(token)).status_code == 401
    assert token_request(client, authorization=basic(*secret_client))[0] == 401


def test_the_command_creates_and_lists_a_client_for_a_service_user(client: Client, service: Any) -> None:
    out = StringIO()
    call_command("mcp_machine_client", "create", "Nightly", "--user", "ci-bot", stdout=out)
    lines = dict(line.split(": ", 1) for line in out.getvalue().splitlines())
    client_id, secret = lines["client_id"], lines["client_secret"].split()[0]

    listing = StringIO()
    call_command("mcp_machine_client", "list", stdout=listing)

    assert f"{client_id}\tNightly\tci-bot\tclient_secret_basic" in listing.getvalue()
    assert token_request(client, authorization=basic(client_id, secret))[0] == 200


def test_the_admin_creates_lists_and_revokes_machine_clients(client: Client, service: Any) -> None:
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    page = client.post(
        "/admin/mcp_django_oauth/machineclient/add/",
        {"name": "Backoffice", "service_user": service.pk, "auth_method": "client_secret_basic", "jwks": "null"},
        follow=True,
    )
    assert page.status_code == 200
    shown = [str(message) for message in page.context["messages"]]
    machine = MachineClient.objects.get(application__name="Backoffice")
    assert any(machine.application.client_id in message and "client_secret" in message for message in shown), shown
    listing = client.get("/admin/mcp_django_oauth/machineclient/")
    assert "Backoffice" in listing.content.decode()

    client.post(
        "/admin/mcp_django_oauth/machineclient/",
        {"action": "revoke_machine_clients", "_selected_action": [machine.pk]},
    )

    assert not MachineClient.objects.exists()


def test_token_requests_past_the_rate_are_429_and_store_nothing(client: Client, secret_client: tuple[str, str]) -> None:
    with with_mcp(OAUTH_TOKEN_RATE="2/minute"):
        assert [token_request(client, authorization=basic(*secret_client))[0] for _ in range(2)] == [200, 200]
        response = client.post(
            "/oauth/token/",
            data={"grant_type": "client_credentials", "resource": MCP},
            HTTP_AUTHORIZATION=basic(*secret_client),
        )

    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert json.loads(response.content)["error"] == "temporarily_unavailable"
    assert get_access_token_model().objects.count() == 2


def test_one_client_is_limited_from_every_address(client: Client, secret_client: tuple[str, str]) -> None:
    with with_mcp(OAUTH_TOKEN_RATE="2/minute"):
        statuses = [
            client.post(
                "/oauth/token/",
                data={"grant_type": "client_credentials", "resource": MCP},
                HTTP_AUTHORIZATION=basic(*secret_client),
                REMOTE_ADDR=f"10.0.0.{n}",
            ).status_code
            for n in range(3)
        ]

    assert statuses == [200, 200, 429]


# -- application_type (SEP-837) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("application_type", "redirect_uri", "kept"),
    [
        ("native", "http://127.0.0.1:33418/callback", "native"),
        ("native", "https://app.example/callback", "native"),
        ("web", "https://app.example/callback", "web"),
        (None, "http://127.0.0.1:33418/callback", "native"),
        (None, "https://app.example/callback", "web"),
    ],
)
def test_registration_keeps_the_application_type_its_redirect_uris_fit(
    client: Client, application_type: str | None, redirect_uri: str, kept: str
) -> None:
    status, body = register(client, application_type=application_type, redirect_uris=[redirect_uri])

    assert status == 201, body
    assert body["application_type"] == kept


def test_the_application_type_is_stored_with_the_client_and_read_back_and_updated(client: Client) -> None:
    status, info = register(client, application_type="web", redirect_uris=["https://app.example/callback"])
    assert status == 201, info
    assert ClientMetadata.objects.get(application__client_id=info["client_id"]).application_type == "web"
    path = urlsplit(info["registration_client_uri"]).path
    authorization = {"Authorization": f"Bearer {info['registration_access_token']}"}

    read = json.loads(client.get(path, headers=authorization).content)
    assert read["application_type"] == "web"

    body = {"client_name": "c", "redirect_uris": [REDIRECT_URI], "application_type": "native"}
    updated = client.put(path, json.dumps(body), content_type="application/json", headers=authorization)
    assert (updated.status_code, json.loads(updated.content)["application_type"]) == (200, "native")
    assert ClientMetadata.objects.get(application__client_id=info["client_id"]).application_type == "native"


@pytest.mark.parametrize(
    ("application_type", "redirect_uri", "description"),
    [
        (
            "web",
            "http://127.0.0.1:33418/callback",
            "A web client's redirect URIs must use https, not a loopback address: 'http://127.0.0.1:33418/callback'",
        ),
        (
            "web",
            "https://localhost/callback",
            "A web client's redirect URIs must use https, not a loopback address: 'https://localhost/callback'",
        ),
        ("spa", "https://app.example/callback", "application_type must be native or web"),
        (
            "native",
            "http://evil.example/cb",
            "Redirect URIs must use https or a loopback address: 'http://evil.example/cb'",
        ),
    ],
)
def test_registration_refuses_redirect_uris_the_application_type_does_not_allow(
    client: Client, application_type: str, redirect_uri: str, description: str
) -> None:
    status, body = register(client, application_type=application_type, redirect_uris=[redirect_uri])

    assert (status, body) == (400, {"error": "invalid_client_metadata", "error_description": description})


def test_an_endpoint_taking_oauth_tokens_advertises_the_client_credentials_extension(
    client: Client, secret_client: tuple[str, str]
) -> None:
    _, token = token_request(client, authorization=basic(*secret_client))

    discovered = json.loads(send(client, "server/discover", headers=bearer(token)).content)

    assert discovered["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/oauth-client-credentials"] == {}


def test_a_request_refused_for_its_client_is_not_counted_against_its_address(
    client: Client, secret_client: tuple[str, str], service: Any
) -> None:
    other, other_secret = create_machine_client("Other", service)
    assert other_secret is not None
    with with_mcp(OAUTH_TOKEN_RATE="2/minute"):
        for address in ("10.0.0.1", "10.0.0.2"):
            client.post(
                "/oauth/token/",
                {"grant_type": "client_credentials", "resource": MCP},
                headers={"Authorization": basic(*secret_client)},
                REMOTE_ADDR=address,
            )
        refused = client.post(
            "/oauth/token/",
            {"grant_type": "client_credentials", "resource": MCP},
            headers={"Authorization": basic(*secret_client)},
            REMOTE_ADDR="10.0.0.3",
        )
        # 10.0.0.3's refused request counted nowhere: it has its two requests left for another client.
        statuses = [
            client.post(
                "/oauth/token/",
                {"grant_type": "client_credentials", "resource": MCP},
                headers={"Authorization": basic(other.application.client_id, other_secret)},
                REMOTE_ADDR="10.0.0.3",
            ).status_code
            for _ in range(2)
        ]

    assert refused.status_code == 429
    assert statuses == [200, 200]


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"client_assertion": "not.a.jwt"}, id="garbage"),
        pytest.param({"client_assertion": ""}, id="empty"),
        pytest.param({"client_assertion_type": "urn:other", "client_assertion": "x"}, id="another-type"),
        pytest.param({"client_assertion": "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOjEsInN1YiI6MX0.c2ln"}, id="iss-not-a-string"),
    ],
)
def test_a_malformed_assertion_is_401_not_a_500(
    client: Client, jwt_client: tuple[str, Any], fields: dict[str, str]
) -> None:
    status, body = token_request(client, **{"client_assertion_type": ASSERTION_TYPE, **fields})

    assert (status, body["error"]) == (401, "invalid_client")
