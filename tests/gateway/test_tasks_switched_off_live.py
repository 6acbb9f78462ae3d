"""A remote server switched off in the admin answers nothing through a gateway, the tasks it started included:
a caller holding the handle of one of its tasks gets "unknown task" for `tasks/get` and `tasks/cancel`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from mcp_django.client.connection import pool
from mcp_django.control.inventory import sync_rows
from mcp_django.gateway.models import RemoteServer
from tests.conftest import LiveServer
from tests.gateway.conftest import CONFORMANCE
from tests.gateway.test_gateway import WAIT, send

pytestmark = [pytest.mark.live, pytest.mark.urls("tests.gateway.tasks_urls"), pytest.mark.django_db(transaction=True)]

DECLARES_TASKS: dict[str, Any] = {
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
}


@pytest.fixture(autouse=True)
def _servers(settings: Any, example_server: LiveServer) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": {"remote-tasks": {"URL": example_server.url(CONFORMANCE)}}}


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


@sync_to_async
def switch(enabled: bool) -> None:
    row = RemoteServer.objects.get(name="remote-tasks")
    row.enabled = enabled
    row.save()


async def tasks(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return await asyncio.wait_for(send("/tasks/mcp", method, params, meta=DECLARES_TASKS), WAIT)


async def test_a_remote_switched_off_answers_no_tasks_get_or_cancel_for_the_handles_it_gave_out() -> None:
    await sync_to_async(sync_rows)(RemoteServer)
    started = await tasks("tools/call", {"name": "slow_compute", "arguments": {"seconds": 30, "label": "switched"}})
    handle = started["result"]["taskId"]
    polled = await tasks("tasks/get", {"taskId": handle})

    await switch(False)
    got, cancelled = await tasks("tasks/get", {"taskId": handle}), await tasks("tasks/cancel", {"taskId": handle})
    await switch(True)
    await tasks("tasks/cancel", {"taskId": handle})

    assert polled["result"]["status"] in ("working", "completed")
    for answer in (got, cancelled):
        assert answer["error"]["message"] == f"Unknown task: {handle}"
