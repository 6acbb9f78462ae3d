"""`MCPClient(auth=OAuthClientAuth(AuthorizationCode(...)))`: the connection's own OAuth flow, with real httpx
against a real MCP server behind its own authorization server (tests/gateway/oauth_upstream.py, a subprocess).

The first request gets the 401; the client discovers the authorization server from its challenge,
registers (RFC 7591), sends the user agent to authorize (here headless: the test's authorization
endpoint redirects at once), checks the answer, exchanges the code, and sends the request again. The
token is cached; a revoked one brings a 401 that the client answers with a new flow.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from mcp_django.client import MCPClient
from mcp_django.client.auth.oauth import AuthorizationCode, OAuthClientAuth
from mcp_django.client.connection import pool
from mcp_django.exceptions import BackendUnavailable
from tests.gateway.test_gateway import WAIT
from tests.gateway.test_upstream_oauth import control, upstream_base  # noqa: F401  # the upstream's fixture

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
async def _close_the_pool(upstream_base: str) -> AsyncIterator[None]:  # noqa: F811
    control(upstream_base, reset=True)
    yield
    await pool.aclose()


def as_user(user: str, visits: list[str]) -> Any:
    """A headless user agent signing in upstream as `user`: follows the authorization URL, returns where it lands."""

    def user_agent(url: str) -> str:
        visits.append(url)
        answer = httpx2.get(f"{url}&as_user={user}", follow_redirects=False, timeout=WAIT)
        assert answer.status_code == 302, answer.text
        return answer.headers["location"]

    return user_agent


def whoami(result: dict[str, Any]) -> dict[str, Any]:
    structured: dict[str, Any] = result["structuredContent"]
    return structured


async def test_the_first_401_runs_the_code_flow_and_the_token_is_kept_for_the_next_calls(
    upstream_base: str,  # noqa: F811
) -> None:
    visits: list[str] = []
    auth = OAuthClientAuth(AuthorizationCode(as_user("alice", visits)))
    client = MCPClient({"URL": f"{upstream_base}/mcp"}, interceptors=[], auth=auth)

    first = whoami(await client.call_tool("whoami"))
    second = whoami(await client.call_tool("whoami"))

    assert first["user"] == second["user"] == "alice"
    assert first["token"] == second["token"]
    assert len(visits) == 1
    query = parse_qs(urlsplit(visits[0]).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["resource"] == [f"{upstream_base}/mcp"]


async def test_a_revoked_token_is_replaced_by_a_new_flow_on_its_401(upstream_base: str) -> None:  # noqa: F811
    visits: list[str] = []
    auth = OAuthClientAuth(AuthorizationCode(as_user("bob", visits)))
    client = MCPClient({"URL": f"{upstream_base}/mcp"}, interceptors=[], auth=auth)
    before = whoami(await client.call_tool("whoami"))

    control(upstream_base, revoke=True)
    after = whoami(await client.call_tool("whoami"))

    assert after["user"] == "bob"
    assert after["token"] != before["token"]
    assert len(visits) in (1, 2)  # refreshed with the refresh token, or authorized again


async def test_a_user_agent_that_comes_back_with_another_state_is_refused(upstream_base: str) -> None:  # noqa: F811
    def forged(url: str) -> str:
        return as_user("eve", [])(url).replace("state=", "state=forged")

    client = MCPClient(
        {"URL": f"{upstream_base}/mcp"}, interceptors=[], auth=OAuthClientAuth(AuthorizationCode(forged))
    )

    with pytest.raises(BackendUnavailable) as refused:
        await client.call_tool("whoami")

    assert "OAuth: the answer is not for this authorization request (state)" in str(refused.value)
