"""Each user's own credentials upstream: a gateway in front of a real MCP server with its own OAuth authorization
server (tests/gateway/oauth_upstream.py, a subprocess), which reports the bearer token each call brought.

Users connect on the site's page (the real views, the real authorization server over HTTP), the tokens are
kept encrypted in the database, and the gateway calls the upstream with the caller's own token.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient, Client
from django.utils import timezone

from mcp_django.client import MCPClient
from mcp_django.client.connection import pool
from mcp_django.gateway.models import UpstreamCredential
from tests.access_support import Caller, make_caller
from tests.conftest import ROOT
from tests.gateway.conftest import serve_module
from tests.gateway.test_gateway import WAIT, send
from tests.http_support import ACCEPT, CLIENT_INFO, request, stateless, stateless_headers

pytestmark = [
    pytest.mark.live,
    pytest.mark.urls("tests.gateway.upstream_urls"),
    pytest.mark.django_db(transaction=True),
]

GATEWAY = "/accounts/mcp"


@pytest.fixture(scope="session")
def upstream_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    logs = tmp_path_factory.mktemp("oauth-upstream")
    with serve_module("tests.gateway.oauth_upstream", logs, "/.well-known/oauth-authorization-server") as base:
        yield base


@pytest.fixture(autouse=True)
def _upstream(settings: Any, upstream_base: str) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "SERVERS": {"accounts": {"URL": f"{upstream_base}/mcp", "AUTH": "oauth"}},
    }
    control(upstream_base, reset=True)


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def control(base: str, **options: Any) -> dict[str, Any]:
    """Tell the upstream's authorization server what to do next; what it has granted so far."""
    answer: dict[str, Any] = httpx2.post(f"{base}/control", json=options, timeout=WAIT).json()
    return answer


def connect_account(caller: Caller, upstream_user: str) -> Client:
    """`caller` connects their account on the site's page, signing in upstream as `upstream_user`."""
    browser = Client()
    browser.force_login(caller.user)
    started = browser.post("/mcp/upstream/accounts/connect")
    assert started.status_code == 302, started.content
    authorize = httpx2.get(f"{started['Location']}&as_user={upstream_user}", timeout=WAIT)
    assert authorize.status_code == 302, authorize.text
    back = urlsplit(authorize.headers["location"])
    done = browser.get(f"{back.path}?{back.query}")
    assert (done.status_code, done["Location"]) == (302, "/mcp/upstream/"), done.content
    return browser


async def whoami(caller: Caller | None) -> dict[str, Any]:
    answer = await asyncio.wait_for(send(GATEWAY, "tools/call", {"name": "whoami"}, caller=caller), WAIT)
    return dict(answer["result"])


def seen(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("isError"), result
    text: str = result["content"][0]["text"]
    return dict(json.loads(text))


def test_connecting_sends_the_user_to_the_authorization_server_with_pkce_the_resource_and_the_challenges_scope(
    upstream_base: str,
) -> None:
    browser = Client()
    browser.force_login(make_caller("alice").user)

    started = browser.post("/mcp/upstream/accounts/connect")

    url = urlsplit(started["Location"])
    query = parse_qs(url.query)
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{upstream_base}/authorize"
    assert query["scope"] == ["tools"]  # the 401's scope, not all of scopes_supported
    assert query["resource"] == [f"{upstream_base}/mcp"]
    assert query["code_challenge_method"] == ["S256"]
    assert query["redirect_uri"] == ["http://testserver/mcp/upstream/accounts/callback"]
    assert len(query["state"][0]) >= 32


async def test_each_callers_call_reaches_the_upstream_with_their_own_token() -> None:
    alice, bob = await sync_to_async(make_caller)("alice"), await sync_to_async(make_caller)("bob")
    await sync_to_async(connect_account)(alice, "alice-upstream")
    await sync_to_async(connect_account)(bob, "bob-upstream")

    by_alice, by_bob = seen(await whoami(alice)), seen(await whoami(bob))

    assert by_alice["user"] == "alice-upstream"
    assert by_bob["user"] == "bob-upstream"
    assert by_alice["token"] != by_bob["token"]
    assert seen(await whoami(alice))["token"] == by_alice["token"]  # kept, not fetched anew


async def test_a_caller_who_has_not_connected_gets_a_tool_error_naming_the_page_to_connect_on(
    upstream_base: str,
) -> None:
    carol = await sync_to_async(make_caller)("carol")

    result = await whoami(carol)

    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "'accounts' needs your own account, which is not connected: connect it at /mcp/upstream/ on this site, "
        "then call again."
    )
    assert control(upstream_base)["grants"] == []


async def test_a_gateway_answers_an_unconnected_callers_list_with_the_error_naming_the_page() -> None:
    carol = await sync_to_async(make_caller)("carol")

    answer = await asyncio.wait_for(send(GATEWAY, "tools/list", caller=carol), WAIT)

    assert answer["error"]["message"] == (
        "'accounts' needs your own account, which is not connected: connect it at /mcp/upstream/ on this site, "
        "then call again."
    )
    assert answer["error"]["data"] == {"backend": "accounts", "reason": "not_connected", "connect": "/mcp/upstream/"}


async def test_a_hub_leaves_the_server_out_for_a_caller_until_they_connect_then_calls_it_with_their_token() -> None:
    carol = await sync_to_async(make_caller)("carol")
    hub = "/accounts/hub/mcp"

    before = await asyncio.wait_for(send(hub, "tools/list", caller=carol), WAIT)
    await sync_to_async(connect_account)(carol, "carol-upstream")
    after = await asyncio.wait_for(send(hub, "tools/list", caller=carol), WAIT)
    called = await asyncio.wait_for(send(hub, "tools/call", {"name": "acc_whoami"}, caller=carol), WAIT)

    names_before = {tool["name"] for tool in before["result"]["tools"]}
    assert "echo" in names_before  # the local registry answers
    assert "acc_whoami" not in names_before
    assert "acc_whoami" in {tool["name"] for tool in after["result"]["tools"]}
    assert seen(called["result"])["user"] == "carol-upstream"


async def test_an_expired_token_is_refreshed_before_the_call(upstream_base: str) -> None:
    alice = await sync_to_async(make_caller)("alice")
    await sync_to_async(connect_account)(alice, "alice-upstream")
    before = seen(await whoami(alice))["token"]
    await UpstreamCredential.objects.filter(server="accounts").aupdate(expires_at=timezone.now())

    after = seen(await whoami(alice))

    assert after["user"] == "alice-upstream"
    assert after["token"] != before
    assert control(upstream_base)["grants"] == [
        ["authorization_code", "alice-upstream"],
        ["refresh_token", "alice-upstream"],
    ]
    credential = await UpstreamCredential.objects.aget(server="accounts")
    assert credential.expires_at is not None
    assert credential.expires_at > timezone.now()


async def test_a_refresh_the_authorization_server_refuses_forgets_the_tokens_and_asks_to_connect_again(
    upstream_base: str,
) -> None:
    alice = await sync_to_async(make_caller)("alice")
    await sync_to_async(connect_account)(alice, "alice-upstream")
    await UpstreamCredential.objects.filter(server="accounts").aupdate(expires_at=timezone.now())
    control(upstream_base, refuse_refresh=True)

    result = await whoami(alice)

    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "'accounts' needs your own account, which has an expired token the server would not renew: "
        "connect it at /mcp/upstream/ on this site, then call again."
    )
    assert not await UpstreamCredential.objects.filter(server="accounts").aexists()


async def test_a_token_the_upstream_refuses_is_forgotten_and_the_caller_asked_to_connect_again(
    upstream_base: str,
) -> None:
    alice = await sync_to_async(make_caller)("alice")
    await sync_to_async(connect_account)(alice, "alice-upstream")
    seen(await whoami(alice))
    control(upstream_base, revoke=True)

    result = await whoami(alice)

    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "'accounts' needs your own account, which the server refused: connect it at /mcp/upstream/ on this site, "
        "then call again."
    )
    assert not await UpstreamCredential.objects.aexists()


async def test_the_callback_refuses_a_state_this_session_did_not_start(upstream_base: str) -> None:
    alice = await sync_to_async(make_caller)("alice")

    def attack() -> Any:
        # Mallory starts a flow in her own browser and hands alice the answer meant for it (login CSRF).
        browser = Client()
        browser.force_login(alice.user)
        started = browser.post("/mcp/upstream/accounts/connect")
        authorize = httpx2.get(f"{started['Location']}&as_user=mallory", timeout=WAIT)
        back = urlsplit(authorize.headers["location"])
        forged = back.query.replace("state=", "state=forged")
        return browser.get(f"{back.path}?{forged}")

    refused = await sync_to_async(attack)()

    assert refused.status_code == 400
    assert b"this answer is not for a connection you started here" in refused.content
    assert not await UpstreamCredential.objects.aexists()
    assert control(upstream_base)["grants"] == []  # the code was never exchanged


async def test_metadata_naming_an_authorization_server_on_an_internal_address_is_not_fetched(
    upstream_base: str,
) -> None:
    alice = await sync_to_async(make_caller)("alice")
    control(upstream_base, authorization_server="https://169.254.169.254")

    def connect() -> Any:
        browser = Client()
        browser.force_login(alice.user)
        return browser.post("/mcp/upstream/accounts/connect")

    refused = await sync_to_async(connect)()

    assert refused.status_code == 502
    assert b"accounts cannot be connected: &#x27;169.254.169.254&#x27; resolves to a non-public address" in (
        refused.content
    )


async def test_the_tokens_are_not_stored_in_the_clear_and_survive_a_secret_key_rotation(settings: Any) -> None:
    alice = await sync_to_async(make_caller)("alice")
    await sync_to_async(connect_account)(alice, "alice-upstream")
    token = seen(await whoami(alice))["token"]
    credential = await UpstreamCredential.objects.aget(server="accounts")
    assert token not in credential.secret
    assert "rt-alice" not in credential.secret

    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "a-new-secret-key-after-the-rotation-0123456789abcdefghijklmnop"
    await pool.aclose()

    assert seen(await whoami(alice))["token"] == token

    settings.SECRET_KEY_FALLBACKS = []
    result = await whoami(alice)
    assert result["isError"] is True  # no key opens it: connect again
    assert not await UpstreamCredential.objects.aexists()


async def test_the_connect_page_shows_who_is_connected_and_disconnects() -> None:
    alice = await sync_to_async(make_caller)("alice")
    browser = await sync_to_async(connect_account)(alice, "alice-upstream")

    page = await sync_to_async(browser.get)("/mcp/upstream/")
    assert page.status_code == 200
    assert b"connected since" in page.content
    await sync_to_async(browser.post)("/mcp/upstream/accounts/disconnect")

    assert not await UpstreamCredential.objects.aexists()
    assert (await whoami(alice))["isError"] is True


URL_ELICITATION: dict[str, Any] = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}}}
CONNECT_QUESTION = "mcp_django.upstream.connect-0"


async def call_asking(caller: Caller, params: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """A stateless `tools/call` of `whoami` by a client that declares URL-mode elicitation; the response."""
    body = stateless("tools/call", {"name": "whoami", **params}, meta=meta)
    headers = {"Accept": ACCEPT, **stateless_headers("tools/call", "whoami"), **caller.headers}
    response: Any = await AsyncClient().post(
        GATEWAY, data=json.dumps(body).encode(), content_type="application/json", headers=headers
    )
    return dict(json.loads(response.content))


async def test_a_2026_client_that_opens_urls_is_sent_to_the_connect_page_and_its_retry_succeeds_once_connected(
    upstream_base: str,
) -> None:
    carol = await sync_to_async(make_caller)("carol")

    asked = (await call_asking(carol, {}, URL_ELICITATION))["result"]
    await sync_to_async(connect_account)(carol, "carol-upstream")
    answers = {"inputResponses": {CONNECT_QUESTION: {"action": "accept"}}, "requestState": asked["requestState"]}
    retried = (await call_asking(carol, answers, URL_ELICITATION))["result"]

    assert asked["resultType"] == "input_required"
    assert asked["inputRequests"] == {
        CONNECT_QUESTION: {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "'accounts' needs your own account. Connect it on this site, then come back here.",
                "url": "http://testserver/mcp/upstream/?server=accounts",
            },
        }
    }
    assert seen(retried)["user"] == "carol-upstream"


async def test_a_2026_client_is_asked_again_while_the_user_has_not_connected_and_a_decline_ends_with_the_error() -> (
    None
):
    carol = await sync_to_async(make_caller)("carol")
    first = (await call_asking(carol, {}, URL_ELICITATION))["result"]

    accepted = {"inputResponses": {CONNECT_QUESTION: {"action": "accept"}}, "requestState": first["requestState"]}
    again = (await call_asking(carol, accepted, URL_ELICITATION))["result"]
    declined = {
        "inputResponses": {"mcp_django.upstream.connect-1": {"action": "decline"}},
        "requestState": again["requestState"],
    }
    ended = (await call_asking(carol, declined, URL_ELICITATION))["result"]

    assert list(again["inputRequests"]) == ["mcp_django.upstream.connect-1"]
    assert ended["isError"] is True
    assert ended["content"][0]["text"].startswith("'accounts' needs your own account, which is not connected")


async def test_a_2026_client_without_url_elicitation_gets_the_tool_error() -> None:
    carol = await sync_to_async(make_caller)("carol")

    result = (await call_asking(carol, {}, {}))["result"]

    assert result["isError"] is True


async def test_a_2025_11_25_client_that_opens_urls_gets_the_url_elicitation_required_error() -> None:
    carol = await sync_to_async(make_caller)("carol")
    client = AsyncClient()
    headers = {"Accept": ACCEPT, **carol.headers}
    hello = request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"url": {}}}, "clientInfo": CLIENT_INFO},
    )
    opened: Any = await client.post(GATEWAY, data=json.dumps(hello), content_type="application/json", headers=headers)
    session = {"Mcp-Session-Id": opened["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25", **headers}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await client.post(GATEWAY, data=json.dumps(initialized), content_type="application/json", headers=session)
    called: Any = await client.post(
        GATEWAY,
        data=json.dumps(request("tools/call", {"name": "whoami"}, id=2)),
        content_type="application/json",
        headers=session,
    )
    error = (
        json.loads(called.content.decode().split("data: ")[-1])
        if called["Content-Type"].startswith("text/event-stream")
        else json.loads(called.content)
    )

    assert error["error"]["code"] == -32042
    [elicitation] = error["error"]["data"]["elicitations"]
    assert elicitation["mode"] == "url"
    assert elicitation["url"] == "http://testserver/mcp/upstream/?server=accounts"
    assert len(elicitation["elicitationId"]) == 32


async def test_the_connect_page_a_client_sends_the_user_to_puts_that_server_first_and_says_why() -> None:
    carol = await sync_to_async(make_caller)("carol")
    browser = Client()
    await sync_to_async(browser.force_login)(carol.user)

    page = await sync_to_async(browser.get)("/mcp/upstream/?server=accounts")

    assert b'class="asked"' in page.content
    assert b"Your MCP client sent you here: connect this account, then go back to it." in page.content


async def test_mcp_client_calls_with_the_given_users_own_token_and_refuses_to_call_for_nobody() -> None:
    alice, bob = await sync_to_async(make_caller)("alice"), await sync_to_async(make_caller)("bob")
    await sync_to_async(connect_account)(alice, "alice-upstream")
    await sync_to_async(connect_account)(bob, "bob-upstream")

    by_alice = seen(await MCPClient("accounts", user=alice.user).call_tool("whoami"))
    by_bob = seen(await MCPClient("accounts", user=bob.user).call_tool("whoami"))
    with pytest.raises(ValueError, match="pass user=") as nobody:
        MCPClient("accounts")

    assert (by_alice["user"], by_bob["user"]) == ("alice-upstream", "bob-upstream")
    assert str(nobody.value) == (
        "MCPClient('accounts'): the server signs each user in (AUTH 'oauth'): "
        "pass user= to call it with that user's own token"
    )


def test_two_workers_refreshing_one_expired_token_at_once_spend_its_refresh_token_once(
    upstream_base: str, live_server_env: dict[str, str]
) -> None:
    """On the live server's database: SQLite here, PostgreSQL in tests/production (row locks)."""
    env = {**live_server_env, "DJANGO_SETTINGS_MODULE": "tests.gateway.upstream_settings"}
    env["MCP_TEST_UPSTREAM_URL"] = upstream_base
    worker = [sys.executable, "-m", "tests.gateway.refresh_worker"]
    subprocess.run([*worker, "connect", "alice", "alice-upstream"], cwd=ROOT, env=env, check=True, timeout=WAIT)
    subprocess.run([*worker, "expire", "alice"], cwd=ROOT, env=env, check=True, timeout=WAIT)
    control(upstream_base, refresh_delay=0.5)  # both read the expired row before the first refresh is back

    workers = [
        subprocess.Popen([*worker, "token", "alice"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    tokens = [process.communicate(timeout=WAIT)[0].strip() for process in workers]

    assert [process.returncode for process in workers] == [0, 0]
    assert tokens[0] == tokens[1]
    assert tokens[0].startswith("at-alice-upstream-")
    assert control(upstream_base)["grants"] == [
        ["authorization_code", "alice-upstream"],
        ["refresh_token", "alice-upstream"],
    ]


async def test_a_gateway_to_a_server_of_users_own_accounts_serves_the_settings_server_info_not_the_remotes() -> None:
    carol = await sync_to_async(make_caller)("carol")

    discovered = (await asyncio.wait_for(send(GATEWAY, "server/discover", caller=carol), WAIT))["result"]

    # Nobody's connection describes the remote (it is 'oauth-upstream'): the site's own info is served.
    assert discovered["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "mcp-django-example",
        "version": "0.1.0",
    }
    assert "instructions" not in discovered  # a gateway's are the remote's, and nobody asked it


async def test_an_interceptor_chains_server_entry_is_invoked_with_each_callers_own_token(upstream_base: str) -> None:
    alice, bob = await sync_to_async(make_caller)("alice"), await sync_to_async(make_caller)("bob")
    await sync_to_async(connect_account)(alice, "alice-upstream")
    await sync_to_async(connect_account)(bob, "bob-upstream")
    chain = [{"SERVER": "accounts"}]

    by_alice = seen(await MCPClient("accounts", interceptors=chain, user=alice.user).call_tool("whoami"))
    by_bob = seen(await MCPClient("accounts", interceptors=chain, user=bob.user).call_tool("whoami"))

    assert (by_alice["user"], by_bob["user"]) == ("alice-upstream", "bob-upstream")
    assert control(upstream_base)["interceptions"] == [
        ["interceptors/list", "alice-upstream"],  # listed once, by the first caller, for every chain
        ["interceptor/invoke", "alice-upstream"],
        ["interceptor/invoke", "bob-upstream"],
    ]


async def test_a_client_with_an_elicitation_handler_listens_on_the_servers_stream_and_still_gets_its_answers(
    settings: Any, upstream_base: str
) -> None:
    servers = {"accounts": {"URL": f"{upstream_base}/mcp", "AUTH": "oauth", "PROTOCOL_VERSION": "2025-11-25"}}
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": servers}  # the handshake era: a GET stream first
    alice = await sync_to_async(make_caller)("alice")
    await sync_to_async(connect_account)(alice, "alice-upstream")

    async def never(params: Any) -> dict[str, Any]:
        raise AssertionError("nothing is asked")

    client = MCPClient("accounts", user=alice.user, elicitation=never)
    result = await asyncio.wait_for(client.call_tool("whoami"), WAIT)

    assert seen(result)["user"] == "alice-upstream"
