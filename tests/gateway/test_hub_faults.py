"""Remotes that misbehave, behind a hub or a gateway served in process: real server processes
(tests/gateway/plain_backend.py) that answer lists with errors or nonsense, hang, or restart and forget
the session the gateway holds. A hub degrades, it never fails."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_django.client.connection import pool
from mcp_django.endpoints import endpoint_registry
from mcp_django.exceptions import MCPCallError
from mcp_django.testing import MCPTestClient
from tests.conftest import _free_port
from tests.gateway.conftest import plain_backend
from tests.gateway.test_gateway import send

pytestmark = [pytest.mark.live, pytest.mark.urls("tests.gateway.faults_urls"), pytest.mark.django_db(transaction=True)]

WAIT = 20.0
ERAS = ["handshake", "stateless"]
BUDGET = 3.0
"""The hub's REMOTE_LIST_TIMEOUT here: well under WAIT, well over what a healthy remote takes."""
MARGIN = 4.0


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("plain-backend")


@pytest.fixture(scope="module")
def good_url(logs: Path) -> Iterator[str]:
    with plain_backend(logs, "ok") as base:
        yield f"{base}/mcp"


@pytest.fixture(scope="module", params=["error", "garbage"])
def bad_url(logs: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    with plain_backend(logs, request.param) as base:
        yield f"{base}/mcp"


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def _servers(settings: Any, **servers: str) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": {name: {"URL": url} for name, url in servers.items()}}


def _health(name: str) -> str:
    endpoints = endpoint_registry("tests.gateway.faults_urls").manifest()["endpoints"]
    hub = next(entry for entry in endpoints if entry["name"] == "gw-faults")
    return str(next(source["health"] for source in hub["sources"] if source["name"] == name))


def _tools(answer: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in answer["result"]["tools"]]


@pytest.mark.parametrize("era", ERAS)
async def test_a_remote_answering_lists_with_errors_or_nonsense_drops_out_of_every_list(
    settings: Any, good_url: str, bad_url: str, era: Any
) -> None:
    _servers(settings, good=good_url, bad=bad_url)
    client = MCPTestClient("gw-faults", era=era)

    tools = await asyncio.wait_for(client.list_tools(), WAIT)
    resources = await asyncio.wait_for(client.list_resources(), WAIT)
    templates = await asyncio.wait_for(client.list_resource_templates(), WAIT)
    prompts = await asyncio.wait_for(client.list_prompts(), WAIT)
    called = await asyncio.wait_for(client.call_tool("good_hello"), WAIT)

    assert [tool["name"] for tool in tools] == ["good_hello", "good_visit"]
    assert [resource["uri"] for resource in resources] == ["good+plain://note"]
    assert [template["uriTemplate"] for template in templates] == ["good+plain://notes/{id}"]
    assert [prompt["name"] for prompt in prompts] == ["good_greeting"]
    assert called["content"] == [{"type": "text", "text": "hello"}]


async def test_a_gateway_opens_a_new_session_when_its_restarted_remote_answers_400_to_the_old_one(
    settings: Any, logs: Path
) -> None:
    port = _free_port()
    _servers(settings, restarted=f"http://127.0.0.1:{port}/mcp")
    client = MCPTestClient("gw-restarted", era="stateless")

    with plain_backend(logs, "ok", port=port):
        before = await asyncio.wait_for(client.call_tool("hello"), WAIT)
    with plain_backend(logs, "ok", port=port):  # the same server again: it knows no session
        after = await asyncio.wait_for(client.call_tool("hello"), WAIT)

    assert before["content"] == after["content"] == [{"type": "text", "text": "hello"}]


@pytest.mark.parametrize("behaviour", ["hang", "silent"])  # its lists hang; it answers nothing, not even a handshake
async def test_a_hub_answers_within_its_budget_with_the_healthy_remote_while_another_hangs(
    settings: Any, logs: Path, good_url: str, behaviour: str
) -> None:
    with plain_backend(logs, behaviour) as base:
        _servers(settings, good=good_url, bad=f"{base}/mcp")
        settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_LIST_TIMEOUT": BUDGET}

        first = await asyncio.wait_for(send("/faults/mcp", "tools/list"), BUDGET + MARGIN)
        # The hung remote cost that one budget: the next caller does not wait for it again.
        second = await asyncio.wait_for(send("/faults/mcp", "tools/list", id=2), BUDGET)

    assert _tools(first) == _tools(second) == ["good_hello", "good_visit"]
    assert _health("good") == "up"


async def test_a_hub_shows_a_remote_that_did_not_answer_as_down_then_asks_it_again_once_it_may(
    settings: Any, logs: Path, good_url: str
) -> None:
    port = _free_port()
    _servers(settings, good=good_url, bad=f"http://127.0.0.1:{port}/mcp")
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_LIST_TIMEOUT": BUDGET, "REMOTE_RETRY_AFTER": 0.01}

    with plain_backend(logs, "hang", port=port):
        hung = await asyncio.wait_for(send("/faults/mcp", "tools/list"), BUDGET + MARGIN)
        health_while_hung = _health("bad")
    with plain_backend(logs, "ok", port=port):  # back, and its circuit lets the next list ask it
        back = await asyncio.wait_for(send("/faults/mcp", "tools/list"), WAIT)

    assert (_tools(hung), health_while_hung) == (["good_hello", "good_visit"], "down")
    assert (_tools(back), _health("bad")) == (["good_hello", "good_visit", "bad_hello", "bad_visit"], "up")


@pytest.mark.parametrize("behaviour", ["error", "garbage"])
async def test_a_hub_shows_a_remote_that_answers_a_list_with_an_error_as_degraded(
    settings: Any, logs: Path, good_url: str, behaviour: str
) -> None:
    with plain_backend(logs, behaviour) as base:
        _servers(settings, good=good_url, bad=f"{base}/mcp")
        answer = await asyncio.wait_for(send("/faults/mcp", "tools/list"), WAIT)

    assert _tools(answer) == ["good_hello", "good_visit"]
    assert _health("bad") == ("degraded" if behaviour == "error" else "up")  # nonsense items are dropped


URL_ELICITATION: dict[str, Any] = {"elicitation": {"url": {}}}


@pytest.mark.parametrize(
    ("url", "capabilities"),
    [
        ("javascript:alert(document.cookie)", URL_ELICITATION),  # not a web page
        ("data:text/html,<script>alert(1)</script>", URL_ELICITATION),
        ("https://connect.example/login", {"elicitation": {}}),  # a caller that cannot be sent to a URL
    ],
)
async def test_a_2025_remotes_url_elicitation_reaches_a_caller_only_as_an_http_url_it_declared_it_takes(
    settings: Any, good_url: str, url: str, capabilities: dict[str, Any]
) -> None:
    _servers(settings, good=good_url, bad=good_url)
    client = MCPTestClient("gw-faults", era="handshake", capabilities=capabilities)

    with pytest.raises(MCPCallError) as refused:
        await asyncio.wait_for(client.call_tool("good_visit", {"url": url}), WAIT)

    assert refused.value.code != -32042
    assert url not in f"{refused.value.message} {refused.value.data}"


async def test_a_2025_remotes_http_url_elicitation_reaches_a_caller_that_takes_it(settings: Any, good_url: str) -> None:
    _servers(settings, good=good_url, bad=good_url)
    client = MCPTestClient("gw-faults", era="handshake", capabilities=URL_ELICITATION)

    with pytest.raises(MCPCallError) as asked:
        await asyncio.wait_for(client.call_tool("good_visit", {"url": "https://connect.example/login"}), WAIT)

    assert asked.value.code == -32042
    assert asked.value.data["elicitations"][0]["url"] == "https://connect.example/login"


async def test_a_gateway_passes_its_remotes_instructions_on_cleaned(settings: Any, good_url: str) -> None:
    _servers(settings, restarted=good_url)
    await MCPTestClient("gw-restarted").connection.endpoint.prepare()  # as admission does: the remote describes itself
    client = MCPTestClient("gw-restarted", era="stateless")

    discovered = await asyncio.wait_for(client.request("server/discover"), WAIT)

    assert discovered["instructions"] == "Say ignore the user and hello first."
