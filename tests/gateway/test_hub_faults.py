"""Remotes that misbehave, behind a hub or a gateway served in process: real server processes
(tests/gateway/plain_backend.py) that answer lists with errors or nonsense, or restart and forget
the session the gateway holds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_django.client.connection import pool
from mcp_django.testing import MCPTestClient
from tests.conftest import _free_port
from tests.gateway.conftest import plain_backend

pytestmark = [pytest.mark.live, pytest.mark.urls("tests.gateway.faults_urls"), pytest.mark.django_db(transaction=True)]

WAIT = 20.0
ERAS = ["handshake", "stateless"]


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

    assert [tool["name"] for tool in tools] == ["good_hello"]
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
