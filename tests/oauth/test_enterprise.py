"""Enterprise sign-in (SEP-990): ID-JAGs signed by a test identity provider's key, over the real token endpoint.

Each assertion is a real JWT signed with an EC key made here; the site trusts the key's issuer through
`OAUTH_TRUSTED_ISSUERS` (JWKS by value; the URL form is the JWKS cache's, tests/oauth/test_keys.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Iterator
from io import StringIO
from typing import Any

import jwt
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from oauth2_provider.models import get_access_token_model

from mcp_django.oauth.enterprise import JWT_BEARER
from mcp_django.oauth.machines import create_machine_client
from mcp_django.oauth.models import LinkedIdentity, MachineClient
from tests.access_support import send
from tests.oauth.support import register
from tests.oauth.test_machines import MCP, assertion, basic, jwt_fields, key_pair
from tests.oauth.test_oauth import TEAM_TOOL, bearer, make_user, tool_names, with_mcp

pytestmark = pytest.mark.django_db

IDP = "https://idp.example.com"
AS_ISSUER = "http://testserver"


@pytest.fixture
def idp_key() -> tuple[Any, dict[str, Any]]:
    return key_pair("idp-1")


def trusting(jwks: dict[str, Any], **entry: Any) -> Any:
    return with_mcp(OAUTH_TRUSTED_ISSUERS={IDP: {"JWKS": jwks, **entry}})


@pytest.fixture
def trusted(idp_key: tuple[Any, dict[str, Any]]) -> Iterator[None]:
    with trusting(idp_key[1]):
        yield


@pytest.fixture
def enterprise_client() -> tuple[str, str]:
    """A machine client allowed identity assertions: `(client_id, secret)`."""
    machine, secret = create_machine_client("Chat", make_user("chat-app"), identity_assertions=True)
    assert secret is not None
    return machine.application.client_id, secret


def id_jag(private: Any, presenter: str, *, kid: str = "idp-1", typ: str = "oauth-id-jag+jwt", **claims: Any) -> str:
    now = int(time.time())
    body = {
        "iss": IDP,
        "sub": "U0194",
        "email": "bob@example.com",
        "aud": AS_ISSUER,
        "resource": MCP,
        "client_id": presenter,
        "jti": str(uuid.uuid4()),
        "iat": now,
        "exp": now + 120,
    }
    payload = json.dumps({**body, **claims}).encode()  # any claim type: PyJWT's encode checks some
    return jwt.api_jws.encode(payload, private, algorithm="ES256", headers={"kid": kid, "typ": typ})


def encoded(part: dict[str, Any]) -> bytes:
    return base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=")


def exchange(client: Client, credentials: tuple[str, str], assertion: str, **fields: str) -> tuple[int, dict[str, Any]]:
    data = {"grant_type": JWT_BEARER, "assertion": assertion, **fields}
    response = client.post("/oauth/token/", data=data, headers={"Authorization": basic(*credentials)})
    assert response["Content-Type"].startswith("application/json"), response.content
    return response.status_code, json.loads(response.content)


@pytest.fixture
def bob() -> Any:
    return make_user("bob", "mcp-team", email="bob@example.com")


@pytest.mark.usefixtures("trusted")
def test_a_valid_assertion_gets_a_token_for_its_user_that_calls_team_tools(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str], bob: Any
) -> None:
    signed = id_jag(idp_key[0], enterprise_client[0])
    status, token = exchange(client, enterprise_client, signed, scope="mcp:user mcp:team")

    assert status == 200, token
    assert (token["scope"], "refresh_token" in token) == ("mcp:user mcp:team", False)
    stored = get_access_token_model().objects.get()
    assert (stored.user, stored.resource) == (bob, [MCP])
    assert TEAM_TOOL in tool_names(client, token)


@pytest.mark.usefixtures("trusted")
def test_the_token_is_capped_by_the_users_scope_and_the_assertions_scope(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    make_user("carol", email="carol@example.com")
    capped_by_user = id_jag(idp_key[0], enterprise_client[0], email="carol@example.com")
    status, token = exchange(client, enterprise_client, capped_by_user, scope="mcp:team")
    assert (status, token.get("scope")) == (200, "mcp:user"), token
    assert TEAM_TOOL not in tool_names(client, token)

    make_user("dave", "mcp-team", email="dave@example.com")
    capped_by_idp = id_jag(idp_key[0], enterprise_client[0], email="dave@example.com", scope="mcp:user")
    status, token = exchange(client, enterprise_client, capped_by_idp, scope="mcp:user mcp:team")
    assert (status, token.get("scope")) == (200, "mcp:user"), token


@pytest.mark.usefixtures("trusted", "bob")
@pytest.mark.parametrize(
    ("claims", "error"),
    [
        pytest.param({"exp": int(time.time()) - 120, "iat": int(time.time()) - 240}, "invalid_grant", id="expired"),
        pytest.param({"nbf": int(time.time()) + 600}, "invalid_grant", id="not-yet-valid"),
        pytest.param({"iat": int(time.time()) + 600, "exp": int(time.time()) + 700}, "invalid_grant", id="future-iat"),
        pytest.param({"exp": int(time.time()) + 3600}, "invalid_grant", id="long-lived"),
        pytest.param({"aud": "https://other-as.example.com"}, "invalid_grant", id="another-audience"),
        pytest.param({"client_id": "someone-else"}, "invalid_grant", id="another-client"),
        pytest.param({"iss": "https://evil.example.com"}, "invalid_grant", id="untrusted-issuer"),
        pytest.param({"iss": ["https://idp.example.com"]}, "invalid_grant", id="issuer-not-a-string"),
        pytest.param({"sub": 42}, "invalid_grant", id="sub-not-a-string"),
        pytest.param({"scope": ["mcp:user"]}, "invalid_grant", id="scope-not-a-string"),
        pytest.param({"resource": ["http://testserver/mcp"]}, "invalid_grant", id="resource-not-a-string"),
        pytest.param({"exp": "tomorrow"}, "invalid_grant", id="exp-not-a-number"),
        pytest.param({"resource": "http://testserver/mcp/nowhere"}, "invalid_target", id="not-an-endpoint"),
        pytest.param({"resource": "https://other.example.com/mcp"}, "invalid_target", id="another-site"),
        pytest.param({"email": "nobody@example.com"}, "invalid_grant", id="unknown-subject"),
    ],
)
def test_an_assertion_with_wrong_claims_is_refused_with_an_oauth_error(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str], claims: dict[str, Any], error: str
) -> None:
    status, body = exchange(client, enterprise_client, id_jag(idp_key[0], enterprise_client[0], **claims))

    assert (status, body["error"]) == (400, error), body
    assert not get_access_token_model().objects.exists()


@pytest.mark.usefixtures("trusted", "bob")
def test_an_assertion_without_a_jti_is_refused(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    now = int(time.time())
    body: dict[str, Any] = {"iss": IDP, "sub": "U0194", "email": "bob@example.com", "aud": AS_ISSUER, "resource": MCP}
    body |= {"client_id": enterprise_client[0], "iat": now, "exp": now + 60}
    signed = jwt.encode(body, idp_key[0], algorithm="ES256", headers={"kid": "idp-1", "typ": "oauth-id-jag+jwt"})

    status, answer = exchange(client, enterprise_client, signed)

    assert (status, answer["error"]) == (400, "invalid_grant"), answer


@pytest.mark.usefixtures("trusted", "bob")
def test_an_assertion_signed_by_an_untrusted_key_is_refused(client: Client, enterprise_client: tuple[str, str]) -> None:
    stranger, _ = key_pair("idp-1")

    status, body = exchange(client, enterprise_client, id_jag(stranger, enterprise_client[0]))

    assert (status, body["error"]) == (400, "invalid_grant"), body


@pytest.mark.usefixtures("trusted", "bob")
def test_a_replayed_assertion_is_refused(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    signed = id_jag(idp_key[0], enterprise_client[0])
    assert exchange(client, enterprise_client, signed)[0] == 200

    status, body = exchange(client, enterprise_client, signed)

    assert (status, body["error"]) == (400, "invalid_grant"), body
    assert "used before" in body["error_description"]


@pytest.mark.usefixtures("trusted", "bob")
def test_an_assertion_signed_with_a_shared_secret_algorithm_is_refused(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    now = int(time.time())
    body: dict[str, Any] = {"iss": IDP, "sub": "U0194", "email": "bob@example.com", "aud": AS_ISSUER}
    body |= {"resource": MCP, "client_id": enterprise_client[0], "jti": str(uuid.uuid4()), "iat": now, "exp": now + 60}
    header = {"alg": "HS256", "kid": "idp-1", "typ": "oauth-id-jag+jwt"}
    signing_input = b".".join(encoded(part) for part in (header, body))
    public_as_secret = json.dumps(idp_key[1]["keys"][0]).encode()  # the classic algorithm confusion
    signature = hmac.new(public_as_secret, signing_input, hashlib.sha256).digest()
    signed = (signing_input + b"." + base64.urlsafe_b64encode(signature).rstrip(b"=")).decode()

    status, answer = exchange(client, enterprise_client, signed)

    assert (status, answer["error"]) == (400, "invalid_grant"), answer


@pytest.mark.usefixtures("trusted", "bob")
def test_a_jwt_that_is_not_an_id_jag_is_refused(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    status, body = exchange(client, enterprise_client, id_jag(idp_key[0], enterprise_client[0], typ="JWT"))

    assert (status, body["error"]) == (400, "invalid_grant"), body


@pytest.mark.usefixtures("trusted", "bob")
@pytest.mark.parametrize("assertion", ["", "not-a-jwt", "a.b.c"])
def test_a_missing_or_malformed_assertion_is_an_oauth_error_not_a_500(
    client: Client, enterprise_client: tuple[str, str], assertion: str
) -> None:
    status, body = exchange(client, enterprise_client, assertion)

    assert status == 400, body
    assert body["error"] in {"invalid_request", "invalid_grant"}


@pytest.mark.usefixtures("trusted", "bob")
def test_the_client_must_authenticate_and_be_allowed_identity_assertions(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    client_id, _ = enterprise_client
    status, body = exchange(client, (client_id, "wrong secret"), id_jag(idp_key[0], client_id))
    assert (status, body["error"]) == (401, "invalid_client"), body

    machine, secret = create_machine_client("CI", make_user("ci-bot", "mcp-team"))
    assert secret is not None
    other = (machine.application.client_id, secret)
    status, body = exchange(client, other, id_jag(idp_key[0], other[0]))
    assert (status, body["error"]) == (400, "unauthorized_client"), body


@pytest.mark.usefixtures("trusted", "bob")
def test_a_resource_asked_for_must_be_the_assertions(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    signed = id_jag(idp_key[0], enterprise_client[0])

    status, body = exchange(client, enterprise_client, signed, resource="http://testserver/mcp/adapter")

    assert (status, body["error"]) == (400, "invalid_target"), body


def test_an_unknown_subject_is_refused_unless_the_issuer_creates_users(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    with trusting(idp_key[1], USERS="linked"):
        status, body = exchange(client, enterprise_client, id_jag(idp_key[0], enterprise_client[0], sub="U7"))
    assert (status, body["error"]) == (400, "invalid_grant"), body
    assert not get_user_model().objects.filter(email="bob@example.com").exists()

    with trusting(idp_key[1], USERS="linked", CREATE_USERS=True):
        status, token = exchange(client, enterprise_client, id_jag(idp_key[0], enterprise_client[0], sub="U7"))
        assert status == 200, token
        link = LinkedIdentity.objects.get(issuer=IDP, subject="U7")
        assert (link.user.email, link.user.has_usable_password()) == ("bob@example.com", False)
        again = id_jag(idp_key[0], enterprise_client[0], sub="U7", email="changed@example.com")
        assert exchange(client, enterprise_client, again)[0] == 200
    assert get_access_token_model().objects.filter(user=link.user).count() == 2


def test_a_linked_identity_signs_in_as_its_user_whatever_the_email_says(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str], bob: Any
) -> None:
    LinkedIdentity.objects.create(issuer=IDP, subject="U0194", user=bob)
    with trusting(idp_key[1], USERS="linked"):
        status, token = exchange(client, enterprise_client, id_jag(idp_key[0], enterprise_client[0], email="x@y.z"))

    assert status == 200, token
    assert get_access_token_model().objects.get().user == bob


@pytest.mark.usefixtures("bob")
def test_without_trusted_issuers_the_grant_is_neither_advertised_nor_honoured(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    metadata = json.loads(client.get("/.well-known/oauth-authorization-server").content)
    assert JWT_BEARER not in metadata["grant_types_supported"]

    status, body = exchange(client, enterprise_client, id_jag(idp_key[0], enterprise_client[0]))

    assert (status, body["error"]) == (400, "invalid_grant"), body


@pytest.mark.usefixtures("trusted")
def test_the_metadata_lists_the_jwt_bearer_grant_while_an_issuer_is_trusted(client: Client) -> None:
    metadata = json.loads(client.get("/.well-known/oauth-authorization-server").content)

    assert JWT_BEARER in metadata["grant_types_supported"]
    assert "client_credentials" in metadata["grant_types_supported"]


def test_the_admin_creates_a_client_allowed_identity_assertions_and_lists_linked_identities(
    client: Client, bob: Any
) -> None:
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    LinkedIdentity.objects.create(issuer=IDP, subject="U0194", user=bob)
    form = {"name": "Chat", "service_user": bob.pk, "auth_method": "client_secret_basic", "jwks": "null"}

    page = client.post("/admin/mcp_django_oauth/machineclient/add/", {**form, "identity_assertions": "on"}, follow=True)

    assert page.status_code == 200
    assert MachineClient.objects.get(application__name="Chat").identity_assertions
    listing = client.get("/admin/mcp_django_oauth/linkedidentity/").content.decode()
    assert "U0194" in listing
    assert IDP in listing


def test_the_admin_client_list_shows_each_registered_clients_application_type(client: Client) -> None:
    status, _ = register(client, application_type="web", redirect_uris=["https://app.example/callback"])
    assert status == 201
    client.force_login(make_user("root", is_staff=True, is_superuser=True))

    listing = client.get("/admin/oauth2_provider/application/").content.decode()

    assert '<td class="field-application_type">web</td>' in listing


def test_the_management_command_creates_a_client_allowed_identity_assertions() -> None:
    make_user("chat-app")

    call_command(
        "mcp_machine_client", "create", "Chat", "--user", "chat-app", "--identity-assertions", stdout=StringIO()
    )

    assert MachineClient.objects.get(application__name="Chat").identity_assertions


@pytest.mark.usefixtures("trusted")
def test_a_superuser_is_never_reached_by_email_only_by_a_linked_identity(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str]
) -> None:
    root = make_user("root", email="root@example.com", is_superuser=True)
    status, body = exchange(client, enterprise_client, id_jag(idp_key[0], enterprise_client[0], email=root.email))
    assert (status, body["error"]) == (400, "invalid_grant"), body

    LinkedIdentity.objects.create(issuer=IDP, subject="U-root", user=root)
    with trusting(idp_key[1], USERS="linked"):
        status, token = exchange(client, enterprise_client, id_jag(idp_key[0], enterprise_client[0], sub="U-root"))
    assert status == 200, token


@pytest.mark.usefixtures("trusted")
def test_a_private_key_jwt_client_presents_an_assertion_too(client: Client, idp_key: tuple[Any, Any], bob: Any) -> None:
    private, jwks = key_pair("client-1")
    machine, _ = create_machine_client(
        "Chat keys",
        make_user("chat-app"),
        auth_method=MachineClient.PRIVATE_KEY_JWT,
        jwks=jwks,
        identity_assertions=True,
    )
    client_id = machine.application.client_id
    data = {
        "grant_type": JWT_BEARER,
        "assertion": id_jag(idp_key[0], client_id),
        **jwt_fields(assertion(client_id, private, kid="client-1")),
    }

    response = client.post("/oauth/token/", data=data)

    assert response.status_code == 200, response.content
    assert get_access_token_model().objects.get().user == bob


def test_the_endpoints_advertise_enterprise_managed_authorization_only_while_an_issuer_is_trusted(
    client: Client, idp_key: tuple[Any, Any], enterprise_client: tuple[str, str], bob: Any
) -> None:
    extension = "io.modelcontextprotocol/enterprise-managed-authorization"
    with trusting(idp_key[1]):
        _, token = exchange(client, enterprise_client, id_jag(idp_key[0], enterprise_client[0]))
        trusted = json.loads(send(client, "server/discover", headers=bearer(token)).content)
    untrusted = json.loads(send(client, "server/discover", headers=bearer(token)).content)

    assert trusted["result"]["capabilities"]["extensions"][extension] == {}
    assert extension not in untrusted["result"]["capabilities"]["extensions"]
