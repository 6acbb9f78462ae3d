"""Output caps on a remote tool: a hub in process in front of the official SDK's server over HTTP caps what its
`echo` answers as it caps a local tool's result (`mcp_django.runtime.output_caps`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from mcp_django import Registry
from mcp_django.client.connection import pool
from mcp_django.endpoints import Endpoint
from mcp_django.runtime.output_caps import TRUNCATED
from mcp_django.testing import MCPTestClient, assert_tool_error

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

LONG = "z" * 200


@pytest.fixture(autouse=True)
def _servers(settings: Any, sdk_backend_url: str) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": {"sdk": {"URL": sdk_backend_url}}}


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def hub(name: str, **options: Any) -> Endpoint:
    local = Registry(f"{name}-local")
    local.freeze()
    return Endpoint(f"{name}/mcp", name=name, registry=local, servers=["sdk"], allow_anonymous=True, **options)


async def test_a_remote_tool_s_structured_result_over_the_hub_s_cap_is_refused(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    within = await mcp_client(hub("cap-hub-wide", tool_output_max_chars=1000)).call_tool("sdk_echo", {"text": LONG})
    over = await mcp_client(hub("cap-hub", tool_output_max_chars=50)).call_tool("sdk_echo", {"text": LONG})

    assert within["content"][0]["text"] == LONG  # the SDK's str tool answers text and structured content
    assert within["structuredContent"] == {"result": LONG}
    assert_tool_error(over, "The result of tool sdk_echo is 4\\d\\d characters, over this server's limit of 50")


async def test_a_remote_tool_s_text_result_over_the_hub_s_cap_is_truncated_with_the_marker(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    result = await mcp_client(hub("cap-hub-text", tool_output_max_chars=50)).call_tool(
        "sdk_repeat", {"text": "z", "times": 200}
    )

    assert result["content"][0]["text"].startswith("z" * 50 + "\n\n[Truncated by the server: 50 of 200 characters")
    assert result["_meta"][TRUNCATED] == {"shownChars": 50, "totalChars": 200}
