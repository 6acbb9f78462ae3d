"""The official client's OAuth provider (`mcp.client.auth`) against the example project under daphne.

Discovery (401 → RFC 9728 → RFC 8414) → dynamic registration, or a client ID metadata document the test
serves over HTTPS → authorization code + PKCE (the test logs the user in and approves the consent page over
HTTP) → token → `tools/call`, in both eras. Then what a token must not do: reach another endpoint, reach
TEAM tools for a USER grant, outlive its expiry or its revocation.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent

from tests.conftest import LiveServer, serve_example
from tests.live.database_support import server_database
from tests.live.oauth_support import Browser, DocumentServer, MemoryStorage, StreamSafeOAuthProvider
from tests.oauth.support import REDIRECT_URI
from tests.oauth.test_enterprise import id_jag
from tests.oauth.test_machines import key_pair

pytestmark = pytest.mark.live

MODES = ["legacy", "2026-07-28"]

TEAM_TOOL = "reindex_catalogue"
REVOCATION_REACHES_EVERY_WORKER_S = 1.0
"""How long another worker process may still accept a revoked token: its cached copy goes within
`STATE_CHECK_INTERVAL` (0.5 s) and one request (docs/authentication.md, "The credential cache")."""


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocumentServer]:
    with DocumentServer(tmp_path_factory.mktemp("cimd")).running() as server:
        yield server


@pytest.fixture(scope="module")
def idp_key() -> tuple[Any, dict[str, Any]]:
    """The test identity provider's signing key and its JWKS (the site trusts it: tests/live/oauth_settings.py)."""
    return key_pair("idp-live")


@pytest.fixture(scope="module")
def oauth_server(
    live_server_env: dict[str, str],
    documents: DocumentServer,
    idp_key: tuple[Any, dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LiveServer]:
    """The example project with a fetcher that may reach the test's document server, trusting the test's
    identity provider (tests/live/oauth_settings.py)."""
    env = {
        **live_server_env,
        "DJANGO_SETTINGS_MODULE": "tests.live.oauth_settings",
        "SSL_CERT_FILE": str(documents.certificate),
        "MCP_TEST_IDP_JWKS": json.dumps(idp_key[1]),
    }
    with serve_example(env, tmp_path_factory.mktemp("oauth-log")) as server:
        yield server


def metadata() -> OAuthClientMetadata:
    return OAuthClientMetadata(
        client_name="live test client",
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]  # pydantic coerces str to AnyUrl
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )


@contextlib.asynccontextmanager
async def oauth_client(
    server: LiveServer,
    mode: str,
    user: str,
    *,
    path: str = "/mcp",
    storage: MemoryStorage | None = None,
    client_metadata_url: str | None = None,
) -> AsyncIterator[tuple[Client, MemoryStorage, Browser]]:
    """The official client on `path`, authorizing through OAuth as the demo user `user` (password: the name)."""
    storage = storage or MemoryStorage()
    browser = Browser(user, user)
    auth = StreamSafeOAuthProvider(
        server_url=server.url(path),
        client_metadata=metadata(),
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
        client_metadata_url=client_metadata_url,
    )
    async with create_mcp_http_client(auth=auth) as http:
        transport = streamable_http_client(server.url(path), http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=30) as session:
            yield session, storage, browser


def text_of(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


async def raw_call(server: LiveServer, path: str, token: str) -> httpx2.Response:
    """A stateless tools/list with `token` and nothing else: what an endpoint answers to that token alone."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            }
        },
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(server.url(path), json=body, headers=headers)


@pytest.mark.smoke
@pytest.mark.parametrize("mode", MODES)
async def test_dynamic_registration_then_a_tool_call(oauth_server: LiveServer, mode: str) -> None:
    async with oauth_client(oauth_server, mode, "bob") as (session, storage, browser):
        result = await session.call_tool("search_books", {"query": "Le Guin"})
        tools = {tool.name for tool in (await session.list_tools()).tools}

    assert not result.is_error, result
    assert "The Dispossessed" in text_of(result)
    assert TEAM_TOOL in tools  # bob is TEAM, and the client asked for every scope the metadata offers
    assert storage.client_info is not None
    assert storage.client_info.client_id
    assert storage.tokens is not None
    assert storage.tokens.access_token.startswith("mcp_at_")
    assert storage.tokens.scope == "mcp:user mcp:team"
    assert "Allow live test client to use MCP as bob?" in browser.pages[0]


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_id_metadata_document_instead_of_registration(
    oauth_server: LiveServer, documents: DocumentServer, live_server_env: dict[str, str], mode: str
) -> None:
    path = f"/clients/{mode}.json"
    client_id = documents.base_url + path
    documents.documents[path] = {
        "client_id": client_id,
        "client_name": "metadata document client",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }

    async with oauth_client(oauth_server, mode, "carol", client_metadata_url=client_id) as (session, storage, browser):
        result = await session.call_tool("catalogue_stats", {})

    assert not result.is_error, result
    assert storage.client_info is not None
    assert storage.client_info.client_id == client_id
    assert "Allow metadata document client to use MCP as carol?" in browser.pages[0]
    with server_database(live_server_env) as database:
        ((source,),) = database.rows(
            "SELECT registration_source FROM oauth2_provider_application WHERE client_id = ?", (client_id,)
        )
    assert source == "cimd"
    assert documents.fetches[path] == 1  # fetched once for the authorization and the token exchange: cached


async def test_a_token_for_one_endpoint_is_refused_on_another(oauth_server: LiveServer) -> None:
    async with oauth_client(oauth_server, "2026-07-28", "bob", path="/mcp/adapter") as (session, storage, _):
        assert (await session.list_tools()).tools
    assert storage.tokens is not None
    token = storage.tokens.access_token

    assert (await raw_call(oauth_server, "/mcp/adapter", token)).status_code == 200
    refused = await raw_call(oauth_server, "/mcp", token)

    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert refused.json()["error"]["message"] == "Unauthorized: The access token was not issued for this endpoint."


async def test_a_user_token_never_reaches_team_tools(oauth_server: LiveServer) -> None:
    async with oauth_client(oauth_server, "2026-07-28", "alice") as (session, storage, _):
        tools = {tool.name for tool in (await session.list_tools()).tools}
        with pytest.raises(MCPError, match=f"Unknown tool: {TEAM_TOOL}"):
            await session.call_tool(TEAM_TOOL, {})

    assert storage.tokens is not None
    assert storage.tokens.scope == "mcp:user"
    assert "search_books" in tools
    assert TEAM_TOOL not in tools


async def test_a_revoked_token_is_refused(oauth_server: LiveServer) -> None:
    async with oauth_client(oauth_server, "2026-07-28", "bob") as (session, storage, _):
        assert (await session.list_tools()).tools
    assert storage.tokens is not None
    assert storage.client_info is not None
    token = storage.tokens.access_token
    assert (await raw_call(oauth_server, "/mcp", token)).status_code == 200  # accepted, and cached

    async with httpx2.AsyncClient(timeout=30) as http:
        revoked = await http.post(
            oauth_server.url("/oauth/revoke_token/"),
            data={"token": token, "client_id": storage.client_info.client_id},
        )
    assert revoked.status_code == 200

    # The process that revoked it refuses it at once. Behind a round-robin (tests/production/) the next
    # request may reach another worker, which drops its cached copy within the state interval.
    behind_a_round_robin = bool(getattr(oauth_server, "workers", ()))
    deadline = time.monotonic() + (REVOCATION_REACHES_EVERY_WORKER_S if behind_a_round_robin else 0.0)
    while (refused := await raw_call(oauth_server, "/mcp", token)).status_code == 200:
        assert time.monotonic() < deadline, "the revoked token is still accepted"
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


async def test_an_expired_token_is_refused(oauth_server: LiveServer, live_server_env: dict[str, str]) -> None:
    async with oauth_client(oauth_server, "2026-07-28", "bob") as (session, storage, _):
        assert (await session.list_tools()).tools
    assert storage.tokens is not None
    assert storage.client_info is not None
    async with httpx2.AsyncClient(timeout=30) as http:  # a fresh access token, never presented (never cached)
        refreshed = await http.post(
            oauth_server.url("/oauth/token/"),
            data={
                "grant_type": "refresh_token",
                "refresh_token": storage.tokens.refresh_token,
                "client_id": storage.client_info.client_id,
            },
        )
    assert refreshed.status_code == 200, refreshed.text
    token = refreshed.json()["access_token"]
    with server_database(live_server_env) as database:
        database.execute(
            "UPDATE oauth2_provider_accesstoken SET expires = '2000-01-01 00:00:00' WHERE token_checksum = "
            "(SELECT token_checksum FROM oauth2_provider_accesstoken ORDER BY id DESC LIMIT 1)"
        )

    refused = await raw_call(oauth_server, "/mcp", token)

    assert refused.status_code == 401
    assert refused.json()["error"]["message"] == "Unauthorized: The access token has expired."


def test_the_server_log_is_clean(oauth_server: LiveServer) -> None:
    assert "Traceback" not in Path(oauth_server.log_path).read_text(errors="replace")


def manage(env: dict[str, str], *args: str) -> str:
    """What `manage.py <args>` prints, run against the live server's database."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout


def machine_client(env: dict[str, str], username: str, *options: str) -> tuple[str, str]:
    """`(client_id, secret)` of a new machine client for `username`, made by the management command."""
    out = manage(
        env,
        "mcp_machine_client",
        "create",
        f"live {username} {' '.join(options)}".strip(),
        "--user",
        username,
        *options,
    )
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    return lines["client_id"], lines["client_secret"].split()[0]


async def call_tool(
    server: LiveServer, token: str, name: str, arguments: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A stateless tools/call on /mcp with `token`; the JSON-RPC answer (a result, or the error of an unknown tool)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "machine", "version": "1"},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments or {}, "_meta": meta},
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(server.url("/mcp"), json=body, headers=headers)
    answer: dict[str, Any] = response.json()
    return answer


@pytest.mark.parametrize(("user", "reaches_team"), [("bob", True), ("alice", False)])
async def test_a_machine_client_with_client_secret_basic_calls_team_tools_only_as_a_team_user(
    oauth_server: LiveServer, live_server_env: dict[str, str], user: str, reaches_team: bool
) -> None:
    client_id, secret = machine_client(live_server_env, user)
    async with httpx2.AsyncClient(timeout=30) as http:
        issued = await http.post(
            oauth_server.url("/oauth/token/"),
            auth=(client_id, secret),
            data={
                "grant_type": "client_credentials",
                "scope": "mcp:user mcp:team",
                "resource": oauth_server.url("/mcp"),
            },
        )
    assert issued.status_code == 200, issued.text

    answer = await call_tool(oauth_server, issued.json()["access_token"], TEAM_TOOL)

    if reaches_team:
        assert answer["result"]["content"][0]["text"] == "Reindexed the catalogue in 4 batches.", answer
    else:
        assert answer["error"]["message"] == f"Unknown tool: {TEAM_TOOL}", answer


async def test_an_enterprise_users_identity_assertion_gets_a_token_that_calls_their_team_tool(
    oauth_server: LiveServer, live_server_env: dict[str, str], idp_key: tuple[Any, dict[str, Any]]
) -> None:
    manage(
        live_server_env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; "
        "User.objects.filter(username='bob').update(email='bob@corp.example')",
    )
    client_id, secret = machine_client(live_server_env, "alice", "--identity-assertions")
    signed = id_jag(
        idp_key[0],
        client_id,
        kid="idp-live",
        email="bob@corp.example",
        aud=oauth_server.base_url,
        resource=oauth_server.url("/mcp"),
    )
    async with httpx2.AsyncClient(timeout=30) as http:
        exchange = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "scope": "mcp:user mcp:team"}
        issued = await http.post(
            oauth_server.url("/oauth/token/"), auth=(client_id, secret), data={**exchange, "assertion": signed}
        )
        replayed = await http.post(
            oauth_server.url("/oauth/token/"), auth=(client_id, secret), data={**exchange, "assertion": signed}
        )
    assert issued.status_code == 200, issued.text
    assert (replayed.status_code, replayed.json()["error"]) == (400, "invalid_grant")

    answer = await call_tool(oauth_server, issued.json()["access_token"], TEAM_TOOL)

    assert answer["result"]["content"][0]["text"] == "Reindexed the catalogue in 4 batches.", answer
