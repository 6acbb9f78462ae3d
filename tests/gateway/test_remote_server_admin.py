"""The admin's say over remote servers (`RemoteServer` rows): switched off or scoped up, a server's tools leave
every hub and gateway in front of it at the next request; the admin lists them and asks each for its tools."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from mcp_django.client.connection import pool
from mcp_django.control.inventory import sync_rows
from mcp_django.gateway.models import RemoteServer
from mcp_django.scopes import Scope
from tests.conftest import ROOT
from tests.gateway.conftest import sdk_stdio_command
from tests.gateway.test_gateway import WAIT, send

pytestmark = [pytest.mark.live, pytest.mark.urls("tests.gateway.urls"), pytest.mark.django_db(transaction=True)]

CHANGELIST = "/admin/mcp_django_gateway/remoteserver/"


@pytest.fixture(autouse=True)
def _servers(settings: Any, sdk_backend_url: str) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "SERVERS": {
            "sdk": {"URL": sdk_backend_url},
            "stdio": {
                "COMMAND": sdk_stdio_command(),
                "CWD": str(ROOT),
                "PROTOCOL_VERSION": "2025-06-18",
                "CONNECT_TIMEOUT": WAIT,
            },
            "nowhere": {"URL": "http://127.0.0.1:9/mcp", "CONNECT_TIMEOUT": 3},
        },
        # A Python process over stdio may take more than the default 5 s to answer its handshake on a loaded
        # machine (11 s seen; the default connect timeout is 10 s): left out of the first list, it would stay
        # out for REMOTE_RETRY_AFTER.
        "REMOTE_LIST_TIMEOUT": WAIT,
    }


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


async def hub_tools() -> set[str]:
    answer = await asyncio.wait_for(send("/hub/mcp", "tools/list"), WAIT)
    return {tool["name"] for tool in answer["result"]["tools"]}


@sync_to_async
def set_state(name: str, **fields: Any) -> None:
    row = RemoteServer.objects.get(name=name)
    for field, value in fields.items():
        setattr(row, field, value)
    row.save()  # as the admin saves it: the stamp moves


async def test_a_remote_server_switched_off_leaves_the_hub_and_comes_back_when_switched_on() -> None:
    await sync_to_async(sync_rows)(RemoteServer)
    before = await hub_tools()

    await set_state("sdk", enabled=False)
    off = await hub_tools()
    call = await asyncio.wait_for(send("/hub/mcp", "tools/call", {"name": "sdk_echo", "arguments": {}}), WAIT)
    await set_state("sdk", enabled=True)

    assert "sdk_echo" in before
    assert not [name for name in off if name.startswith("sdk_")]
    assert {"echo", "io_echo"} <= off  # the local tools and the other remote still answer
    assert call["error"]["message"] == "Unknown tool: sdk_echo"
    assert await hub_tools() == before


async def test_a_remote_servers_minimum_scope_set_in_the_admin_hides_it_from_callers_below() -> None:
    await sync_to_async(sync_rows)(RemoteServer)

    await set_state("stdio", min_scope=Scope.SYSTEM)

    names = await hub_tools()  # the hub's anonymous callers have the USER scope
    assert not [name for name in names if name.startswith("io_")]
    assert "sdk_echo" in names


@pytest.mark.urls("tests.gateway.admin_urls")
def test_the_admin_lists_every_server_with_its_endpoints_and_tells_which_answers(admin_client: Client) -> None:
    sync_rows(RemoteServer)
    rows = {row.name: row.pk for row in RemoteServer.objects.filter(present_in_code=True)}

    listing = admin_client.get(CHANGELIST).content.decode()
    answering = admin_client.get(f"{CHANGELIST}{rows['sdk']}/change/").content.decode()
    silent = admin_client.get(f"{CHANGELIST}{rows['nowhere']}/change/").content.decode()

    assert set(rows) == {"sdk", "stdio", "nowhere"}
    assert "gw-front, gw-hub, gw-sdk, gw-team" in listing  # the endpoints serving "sdk" as a source
    assert re.search(r"yes, \d+ tools: [^<]*\becho\b", answering)
    assert "no: Backend &#x27;nowhere&#x27; unavailable" in silent


@pytest.mark.urls("tests.gateway.admin_urls")
async def test_the_admin_shows_what_each_hub_last_saw_of_a_remote_and_why(admin_client: Client) -> None:
    await sync_to_async(sync_rows)(RemoteServer)
    await hub_tools()  # the hub asks every remote: "nowhere" is not among them, "sdk" answers
    rows = {row.name: row.pk async for row in RemoteServer.objects.filter(present_in_code=True)}

    page = (await sync_to_async(admin_client.get)(f"{CHANGELIST}{rows['sdk']}/change/")).content.decode()

    assert re.search(r"gw-hub: up since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", page)
    assert "gw-sdk: " in page  # a gateway in front of it too, whatever it saw so far
