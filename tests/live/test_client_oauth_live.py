"""`MCPClient`'s own OAuth against the package's authorization server: the live example site (daphne) protects
its endpoint, answers the client's first request with 401 and a challenge, and issues client credentials
tokens to machine clients made with `mcp_machine_client`.

The client finds the authorization server from the 401 alone, gets a token for its service user (with
`client_secret_basic` or `private_key_jwt`), and sends the request again; a gateway whose `SERVERS`
entry says `"AUTH": {"TYPE": "client_credentials", ...}` does the same for every caller, with nobody
connecting an account.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization

from mcp_django.client import ClientCredentials, ClientKey, MCPClient, OAuthClientAuth
from mcp_django.client.connection import pool
from mcp_django.exceptions import BackendUnavailable
from tests.conftest import LiveServer
from tests.gateway.test_gateway import WAIT, send
from tests.live import test_oauth_live as site
from tests.live.test_oauth_live import TEAM_TOOL, machine_client, manage
from tests.oauth.test_machines import key_pair

pytestmark = [
    pytest.mark.live,
    pytest.mark.urls("tests.live.client_auth_urls"),
    pytest.mark.django_db(transaction=True),
]

SCOPES = ("mcp:user", "mcp:team")
documents, idp_key, oauth_server = site.documents, site.idp_key, site.oauth_server  # the live site's fixtures


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def tool_names(tools: list[dict[str, Any]]) -> set[str]:
    return {tool["name"] for tool in tools}


@pytest.mark.parametrize(("user", "reaches_team"), [("bob", True), ("alice", False)])
async def test_a_client_with_client_credentials_lists_team_tools_only_as_a_team_service_user(
    oauth_server: LiveServer, live_server_env: dict[str, str], user: str, reaches_team: bool
) -> None:
    client_id, secret = machine_client(live_server_env, user)
    auth = OAuthClientAuth(ClientCredentials(client_id, secret=secret), scopes=SCOPES)
    client = MCPClient({"URL": oauth_server.url("/mcp")}, interceptors=[], auth=auth)

    assert (TEAM_TOOL in tool_names(await client.list_tools())) is reaches_team
    # The second request brings the cached token: no second 401, no second token request.
    assert (TEAM_TOOL in tool_names(await client.list_tools())) is reaches_team


async def test_a_client_with_a_private_key_jwt_gets_a_token_and_calls_a_team_tool(
    oauth_server: LiveServer, live_server_env: dict[str, str], tmp_path: Path
) -> None:
    private, jwks = key_pair("client-live")
    (tmp_path / "jwks.json").write_text(json.dumps(jwks))
    out = manage(
        live_server_env,
        "mcp_machine_client",
        "create",
        "live jwt",
        "--user",
        "bob",
        "--jwks-file",
        str(tmp_path / "jwks.json"),
    )
    client_id = dict(line.split(": ", 1) for line in out.splitlines())["client_id"]
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    auth = OAuthClientAuth(ClientCredentials(client_id, key=ClientKey(pem, "ES256", "client-live")), scopes=SCOPES)
    client = MCPClient({"URL": oauth_server.url("/mcp")}, interceptors=[], auth=auth)

    result = await client.call_tool(TEAM_TOOL, {})

    assert result["content"][0]["text"] == "Reindexed the catalogue in 4 batches.", result


async def test_a_wrong_secret_is_a_refusal_that_names_the_token_endpoints_answer(
    oauth_server: LiveServer, live_server_env: dict[str, str]
) -> None:
    client_id, _secret = machine_client(live_server_env, "bob")
    auth = OAuthClientAuth(ClientCredentials(client_id, secret="not-the-secret"), scopes=SCOPES)
    client = MCPClient({"URL": oauth_server.url("/mcp")}, interceptors=[], auth=auth)

    with pytest.raises(BackendUnavailable) as refused:
        await client.list_tools()

    assert refused.value.data["reason"] == "refused"
    assert "the authorization server refused: invalid_client" in str(refused.value)


async def test_a_gateway_with_client_credentials_upstream_serves_machine_callers_with_nobody_connected(
    oauth_server: LiveServer, live_server_env: dict[str, str], settings: Any
) -> None:
    client_id, secret = machine_client(live_server_env, "bob")
    auth = {"TYPE": "client_credentials", "CLIENT_ID": client_id, "CLIENT_SECRET": secret, "SCOPES": list(SCOPES)}
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "SERVERS": {"site": {"URL": oauth_server.url("/mcp"), "AUTH": auth}},
    }

    listed = await asyncio.wait_for(send("/machine/mcp", "tools/list"), WAIT)
    called = await asyncio.wait_for(send("/machine/mcp", "tools/call", {"name": TEAM_TOOL, "arguments": {}}), WAIT)

    assert TEAM_TOOL in tool_names(listed["result"]["tools"]), listed
    assert called["result"]["content"][0]["text"] == "Reindexed the catalogue in 4 batches.", called
