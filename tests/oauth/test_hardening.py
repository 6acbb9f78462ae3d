"""The attacks of the second hardening round on the authorization server (issue 25's O- and R- items), each
performed over real HTTP (Django's test client, the ASGI fast path, or a socket) against real views and DB."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from tests.oauth.support import authorize_url, obtain_token, pkce
from tests.oauth.test_oauth import make_user

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
