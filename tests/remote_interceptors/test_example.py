"""The example project: its interceptor server (/interceptors/mcp), and /guarded/mcp running its guard remotely."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.test import override_settings

from mcp_django.client import MCPClient
from mcp_django.endpoints import mounted_endpoints
from mcp_django.interceptors.audit import flush_audit_log
from mcp_django.interceptors.hook import REFUSED_TOOL_CALL
from mcp_django.testing import MCPTestClient
from tests.conftest import LiveServer

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_server(example_server: LiveServer) -> Iterator[None]:
    """`SERVERS["demo"]` pointing at the live example project's interceptor server."""
    demo = {"demo": {"URL": example_server.url("/interceptors/mcp"), "TIMEOUT": 2}}
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "SERVERS": demo}):
        yield


async def test_the_demo_interceptor_server_lists_its_guard(example_server: LiveServer) -> None:
    listed = await MCPClient({"URL": example_server.url("/interceptors/mcp")}, interceptors=[]).list_interceptors()
    assert [(i["name"], i["type"]) for i in listed["interceptors"]] == [("demo-guard", "validation")]


@pytest.mark.usefixtures("demo_server")
async def test_the_guarded_endpoint_runs_the_demo_guard_remotely() -> None:
    [guarded] = [endpoint for endpoint in mounted_endpoints() if endpoint.name == "guarded"]
    user: Any = await sync_to_async(User.objects.create_superuser)("root", "root@example.com", "pw")
    client = MCPTestClient(guarded, user=user)
    refused = await client.call_tool("search_books", {"query": "forbidden"})
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == REFUSED_TOOL_CALL
    found = await client.call_tool("search_books", {"query": "dune"})
    assert "isError" not in found or found["isError"] is False
    assert await sync_to_async(flush_audit_log)()
