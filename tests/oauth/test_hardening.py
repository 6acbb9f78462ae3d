"""The attacks of the second hardening round on the authorization server (issue 25's O- and R- items), each
performed over real HTTP (Django's test client, the ASGI fast path, or a socket) against real views and DB."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from mcp_django.asgi import get_asgi_application
from tests.oauth.support import REDIRECT_URI, authorize_url, obtain_token, pkce
from tests.oauth.test_oauth import make_user
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
