"""The extension's visibility rule, as far as a server can apply it, and the view's calls in the audit trail.

Hosts hide app-only tools from the model and refuse a view's calls to model-only tools (2026-01-26, "Visibility").
The server cannot tell a view's call from the model's: the bridge marks its calls with
`_meta["mcp_django/origin"] = "app"`, a claim any client can make. So this guards against a model calling a tool
its host should have hidden; it is not a security boundary.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_django.models import ToolCallRecord
from mcp_django.testing import MCPTestClient, assert_mcp_error
from tests.ui.sourced import adapter_endpoint
from tests.ui.support import HOST

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.parametrize("era", ["handshake", "stateless"])]

AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"
FROM_APP = {"mcp_django/origin": "app"}


def client(era: str, capabilities: dict[str, Any] | None = HOST, **options: Any) -> MCPTestClient:
    return MCPTestClient(adapter_endpoint(**options), era=era, capabilities=capabilities)  # type: ignore[arg-type]


async def call(mcp: MCPTestClient, name: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return await mcp.request("tools/call", params)


async def test_a_client_without_the_extension_neither_sees_nor_calls_an_app_only_tool(era: str) -> None:
    mcp = client(era, capabilities={})

    names = [tool["name"] for tool in await mcp.list_tools()]

    assert "restock" not in names
    assert {"stock", "shelf", "count"} <= set(names)
    with assert_mcp_error(match="Unknown tool: restock"):
        await call(mcp, "restock", FROM_APP)


async def test_a_host_lists_the_app_only_tool_and_its_view_calls_it(era: str) -> None:
    mcp = client(era)

    names = [tool["name"] for tool in await mcp.list_tools()]
    result = await call(mcp, "restock", FROM_APP)

    assert "restock" in names
    assert result["content"] == [{"type": "text", "text": "restock done"}]


async def test_a_call_to_an_app_only_tool_without_the_views_marker_is_refused(era: str) -> None:
    mcp = client(era)

    with assert_mcp_error(match="called by its app's view only"):
        await call(mcp, "restock")
    with assert_mcp_error(match="called by its app's view only"):
        await call(mcp, "restock", {"mcp_django/origin": "agent"})


async def test_a_views_call_to_a_model_only_tool_is_refused_and_the_model_still_calls_it(era: str) -> None:
    mcp = client(era)

    with assert_mcp_error(match="not callable from an app's view"):
        await call(mcp, "shelf", FROM_APP)
    assert (await call(mcp, "shelf"))["content"] == [{"type": "text", "text": "three books"}]


async def test_the_audit_trail_records_a_views_call_as_coming_from_the_app(era: str) -> None:
    mcp = client(era, interceptors=[AUDIT])

    await call(mcp, "stock", FROM_APP)
    await call(mcp, "stock")
    await call(mcp, "count", {"mcp_django/origin": "the-admin-itself"})  # not an origin a call may claim

    rows = [(row.tool, row.origin) async for row in ToolCallRecord.objects.order_by("created", "id")]
    assert rows == [("stock", "app"), ("stock", "agent"), ("count", "agent")]
