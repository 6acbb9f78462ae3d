"""A caller who has not connected their account upstream, through the official `mcp` client declaring URL-mode
elicitation, against a live daphne whose gateway fronts the OAuth-protected upstream
(tests/gateway/oauth_upstream.py): the client is given the connect page's URL, the user opens it in a
browser session (logs in, connects as the real pages ask), and the retried call reaches the upstream with
the user's own token."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from mcp.types import ElicitResult, TextContent

from tests.conftest import LiveServer, serve_example
from tests.gateway.conftest import serve_module
from tests.oauth.support import hidden_fields

pytestmark = pytest.mark.live

WAIT = 30.0


@pytest.fixture(scope="module")
def live(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The example project with `SERVERS["accounts"]`, the upstream, and its gateway at /accounts/mcp."""
    logs = tmp_path_factory.mktemp("upstream-live")
    with serve_module("tests.gateway.oauth_upstream", logs, "/.well-known/oauth-authorization-server") as upstream:
        env = {**live_server_env, "DJANGO_SETTINGS_MODULE": "tests.gateway.upstream_settings"}
        with serve_example({**env, "MCP_TEST_UPSTREAM_URL": upstream}, logs) as server:
            yield server


def connect_in_a_browser(url: str, username: str, upstream_user: str) -> str:
    """Open `url` as a person would: log in, press Connect, sign in upstream as `upstream_user`; the last page."""
    with httpx2.Client(timeout=WAIT) as browser:
        page = browser.get(url)
        assert page.status_code == 302, page.text
        login = urljoin(url, page.headers["location"])
        form = browser.get(login)
        done = browser.post(login, data={**hidden_fields(form.text), "username": username, "password": username})
        assert done.status_code == 302, done.text
        page = browser.get(urljoin(url, done.headers["location"]))
        assert 'class="asked"' in page.text
        started = browser.post(urljoin(url, "/mcp/upstream/accounts/connect"), data=hidden_fields(page.text))
        assert started.status_code == 302, started.text
        authorized = browser.get(f"{started.headers['location']}&as_user={upstream_user}")
        back = browser.get(authorized.headers["location"])
        assert back.status_code == 302, back.text
        return browser.get(urljoin(url, back.headers["location"])).text


def whoami(result: Any) -> dict[str, Any]:
    assert not result.is_error, result
    assert isinstance(result.content[0], TextContent)
    return dict(json.loads(result.content[0].text))


async def test_a_2026_client_is_sent_to_the_connect_page_and_its_retried_call_carries_the_users_token(
    live: LiveServer,
) -> None:
    urls: list[str] = []

    async def open_in_browser(context: Any, params: Any) -> ElicitResult:
        urls.append(params.url)
        await asyncio.to_thread(connect_in_a_browser, params.url, "carol", "carol-upstream")
        return ElicitResult(action="accept")

    headers = {"Authorization": f"Token {live.tokens['carol']}"}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(live.url("/accounts/mcp"), http_client=http)
        async with Client(
            transport, mode="2026-07-28", read_timeout_seconds=WAIT, elicitation_callback=open_in_browser
        ) as client:
            result = await client.call_tool("whoami", {})

    assert urls == [live.url("/mcp/upstream/?server=accounts")]
    assert whoami(result)["user"] == "carol-upstream"


async def test_a_2025_11_25_client_gets_url_elicitation_required_and_its_retry_succeeds_once_connected(
    live: LiveServer,
) -> None:
    async def never(context: Any, params: Any) -> ElicitResult:
        raise AssertionError("asked in the handshake era: the error, not a request, carries the URL")

    headers = {"Authorization": f"Token {live.tokens['bob']}"}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(live.url("/accounts/mcp"), http_client=http)
        async with Client(transport, mode="legacy", read_timeout_seconds=WAIT, elicitation_callback=never) as client:
            with pytest.raises(MCPError) as required:
                await client.call_tool("whoami", {})
            [elicitation] = UrlElicitationRequiredError.from_error(required.value.error).elicitations  # -32042
            await asyncio.to_thread(connect_in_a_browser, elicitation.url, "bob", "bob-upstream")
            retried = await client.call_tool("whoami", {})

    assert elicitation.url == live.url("/mcp/upstream/?server=accounts")
    assert whoami(retried)["user"] == "bob-upstream"
