"""The in-memory test client users get from `mcp_django.testing`."""

from __future__ import annotations

import pytest

import mcp_django
from mcp_django.testing import MCPCallError, MCPTestClient, assert_mcp_error

registry = mcp_django.Registry("testing-client")


@registry.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@registry.tool
async def shout(text: str, ctx: mcp_django.Context) -> str:
    """Shout the text back, with progress."""
    await ctx.report_progress(1, 1)
    await ctx.info("shouting")
    return text.upper()


@registry.resource("memo://today", mime_type="text/plain")
def today() -> str:
    """Today's memo."""
    return "Nothing planned."


@registry.prompt
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello {name}"


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_the_client_lists_and_calls_tools_in_both_eras(era):
    client = MCPTestClient(registry, era=era)
    assert [tool["name"] for tool in await client.list_tools()] == ["add", "ask_name", "ask_name_sync", "shout"]
    result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"result": 5}


async def test_the_client_reads_resources_and_gets_prompts():
    client = MCPTestClient(registry)
    assert (await client.read_resource("memo://today"))["contents"][0]["text"] == "Nothing planned."
    assert (await client.get_prompt("greet", {"name": "Ada"}))["messages"][0]["content"]["text"] == "Hello Ada"


async def test_the_client_collects_the_notifications_a_tool_sends():
    client = MCPTestClient(registry)
    await client.request("tools/call", {"name": "shout", "arguments": {"text": "hi"}, "_meta": {"progressToken": 1}})
    assert [note["method"] for note in client.notifications] == ["notifications/progress", "notifications/message"]


async def test_protocol_errors_raise_with_their_code():
    client = MCPTestClient(registry)
    with assert_mcp_error(-32602, match="missing"):
        await client.call_tool("missing")


def test_sync_code_uses_the_sync_facade():
    client = MCPTestClient(registry)
    assert client.sync.call_tool("add", {"a": 1, "b": 1})["content"][0]["text"] == "2"


def test_the_client_refuses_something_that_is_neither_endpoint_nor_registry():
    with pytest.raises(TypeError, match="needs an Endpoint or a Registry"):
        MCPTestClient("mcp_django.testing.MCPCallError")


@registry.tool
async def ask_name(ctx: mcp_django.Context) -> str:
    """Ask the user for their name, then greet them."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    answer = await ctx.elicit("What is your name?", schema, key="user_name")
    return f"Hello, {answer['content']['name']}!"


@registry.tool
def ask_name_sync(ctx: mcp_django.Context) -> str:
    """Ask the user for their name from sync code, then greet them."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    answer = ctx.elicit_sync("What is your name?", schema)
    roots = ctx.list_roots_sync()
    return f"Hello, {answer['content']['name']} with {len(roots['roots'])} roots!"


def _answer(method: str, params: dict) -> dict:
    if method == "roots/list":
        return {"roots": [{"uri": "file:///work"}]}
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize("era", ["handshake", "stateless"])
@pytest.mark.parametrize("tool", ["ask_name", "ask_name_sync"])
async def test_the_same_asking_tool_works_in_both_eras(era, tool):
    client = MCPTestClient(registry, era=era, on_input=_answer)
    result = await client.call_tool(tool)
    assert result["content"][0]["text"].startswith("Hello, Ada")
    assert not result.get("isError")


async def test_without_the_capability_a_tool_cannot_ask():
    client = MCPTestClient(registry, era="stateless")
    with pytest.raises(MCPCallError) as raised:
        await client.call_tool("ask_name")
    assert raised.value.code == -32021
