"""The demo's anonymous hub (`/hub/mcp`) lists only what an anonymous caller may run (its remotes are down here)."""

from __future__ import annotations

import pytest

from example_project.demo.models import Book
from mcp_django.testing import MCPTestClient, assert_tool_result

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_anonymous_hub_lists_only_tools_an_anonymous_caller_may_run() -> None:
    await Book.objects.acreate(title="Dune", author="Frank Herbert", year=1965)
    client = MCPTestClient("hub")

    tools = sorted(tool["name"] for tool in await client.list_tools())

    assert tools == ["about_dune", "catalogue.stats"]
    for name in tools:
        assert_tool_result(await client.call_tool(name, {}))
