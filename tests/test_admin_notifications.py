"""Clients are told: switching a provider or a tool, or granting a group a scope, sends `tools/list_changed`."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import AsyncClient, Client

from mcp_django.control.state import control_state
from mcp_django.models import GroupScope, ProviderState, ToolState
from mcp_django.scopes import Scope
from tests.http_support import ACCEPT, stateless, stateless_headers

pytestmark = [pytest.mark.urls("tests.admin_urls"), pytest.mark.django_db(transaction=True)]


async def listen(client: AsyncClient, id: int) -> AsyncIterator[dict[str, Any]]:
    body = stateless("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=id)
    response: Any = await client.post(
        "/mcp",
        data=json.dumps(body).encode(),
        content_type="application/json",
        headers={"Accept": ACCEPT, **stateless_headers("subscriptions/listen")},
    )
    async for chunk in response.streaming_content:
        for line in bytes(chunk).decode().splitlines():
            if line.startswith("data: "):
                yield json.loads(line[len("data: ") :])


def switch_in_the_admin(admin: Client, action: str) -> None:
    admin.get("/admin/mcp_django/providerstate/")
    row = ProviderState.objects.get(provider_id="demo.books")
    response = admin.post("/admin/mcp_django/providerstate/", {"action": action, "_selected_action": [row.pk]})
    assert response.status_code == 302


@pytest.mark.parametrize("action", ["disable_selected", "enable_selected"])
async def test_a_listening_client_hears_that_the_tools_changed_when_a_provider_is_switched(
    admin_user: Any, action: str
) -> None:
    control_state.invalidate()
    admin = Client()
    await sync_to_async(admin.force_login)(admin_user)
    if action == "enable_selected":
        await ProviderState.objects.aupdate_or_create(provider_id="demo.books", defaults={"enabled": False})
    stream = listen(AsyncClient(), id=7)
    acknowledged = await asyncio.wait_for(anext(stream), 10)

    reading = asyncio.ensure_future(anext(stream))
    await sync_to_async(switch_in_the_admin)(admin, action)
    changed = await asyncio.wait_for(reading, 10)
    await stream.aclose()  # type: ignore[attr-defined]

    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}


async def test_a_listening_client_hears_that_the_tools_changed_when_a_group_gets_a_scope() -> None:
    control_state.invalidate()
    stream = listen(AsyncClient(), id=8)
    await asyncio.wait_for(anext(stream), 10)

    reading = asyncio.ensure_future(anext(stream))
    group = await Group.objects.acreate(name="operators")
    await GroupScope.objects.acreate(group=group, scope=Scope.TEAM)
    changed = await asyncio.wait_for(reading, 10)
    await stream.aclose()  # type: ignore[attr-defined]

    assert changed["method"] == "notifications/tools/list_changed"


async def test_a_listening_client_hears_that_the_tools_changed_when_a_tool_is_switched_off(admin_user: Any) -> None:
    control_state.invalidate()
    admin = Client()
    await sync_to_async(admin.force_login)(admin_user)
    stream = listen(AsyncClient(), id=9)
    await asyncio.wait_for(anext(stream), 10)

    def switch_off() -> None:
        call_command("mcp_sync", stdout=io.StringIO())  # this URLconf serves tools the database never saw
        admin.get("/admin/mcp_django/toolstate/")
        echo = ToolState.objects.get(name="echo")
        admin.post("/admin/mcp_django/toolstate/", {"action": "disable_selected", "_selected_action": [echo.pk]})

    reading = asyncio.ensure_future(anext(stream))
    await sync_to_async(switch_off)()
    changed = await asyncio.wait_for(reading, 10)
    await stream.aclose()  # type: ignore[attr-defined]

    assert changed["method"] == "notifications/tools/list_changed"
