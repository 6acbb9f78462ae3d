"""Output caps (`mcp_django.runtime.output_caps`): a result over its cap is truncated with a marker the model
reads, or refused; the tool's cap wins over the endpoint's, the endpoint's over the setting. In memory; a remote
tool's result is capped in tests/gateway/test_output_caps_remote.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import override_settings

from example_project.demo.models import Book
from mcp_django import Context, DeclarationError, Registry, ToolProvider
from mcp_django.declarations import Tool
from mcp_django.endpoints import Endpoint
from mcp_django.providers.registry import ProviderRegistry
from mcp_django.runtime.output_caps import TRUNCATED
from mcp_django.testing import MCPTestClient, assert_tool_error
from mcp_django.toolsets import ModelToolset

registry = Registry("output-caps")
LONG = "x" * 100


@registry.tool(structured_output=False)
def long_text() -> str:
    """A hundred characters."""
    return LONG


@registry.tool(structured_output=False, max_output_chars=40)
def long_text_capped_at_40() -> str:
    """A hundred characters, its own cap 40."""
    return LONG


@registry.tool(structured_output=False)
def two_blocks() -> list[dict[str, Any]]:
    """A text block and an image after it."""
    return [{"type": "text", "text": "y" * 30}, {"type": "image", "data": "A" * 50, "mimeType": "image/png"}]


@registry.tool
def structured() -> dict[str, str]:
    """Structured content over the cap."""
    return {"value": LONG}


registry.freeze()


def endpoint(name: str, **options: Any) -> Endpoint:
    return Endpoint(f"{name}/mcp", name=name, registry=registry, allow_anonymous=True, **options)


CAPPED = endpoint("caps", tool_output_max_chars=10)
REFUSING = endpoint("caps-refuse", tool_output_max_chars=10, tool_output_overflow="refuse")
UNCAPPED = endpoint("caps-none")


async def test_a_result_over_the_endpoint_s_cap_is_truncated_with_a_marker_the_model_reads(
    mcp_client: Callable[..., MCPTestClient], mcp_era: str
) -> None:
    result = await mcp_client(CAPPED, era=mcp_era).call_tool("long_text")

    text = result["content"][0]["text"]
    assert text.startswith("x" * 10 + "\n\n[Truncated by the server: 10 of 100 characters shown.")
    assert "x" * 11 not in text
    assert result["_meta"][TRUNCATED] == {"shownChars": 10, "totalChars": 100}
    assert result.get("isError") is not True


async def test_a_result_within_its_cap_is_untouched(mcp_client: Callable[..., MCPTestClient]) -> None:
    result = await mcp_client(UNCAPPED).call_tool("long_text")
    assert result["content"] == [{"type": "text", "text": LONG}]
    assert TRUNCATED not in result.get("_meta", {})


async def test_the_tool_s_own_cap_wins_over_the_endpoint_s(mcp_client: Callable[..., MCPTestClient]) -> None:
    result = await mcp_client(CAPPED).call_tool("long_text_capped_at_40")
    assert result["_meta"][TRUNCATED] == {"shownChars": 40, "totalChars": 100}


async def test_the_setting_caps_an_endpoint_without_its_own(mcp_client: Callable[..., MCPTestClient]) -> None:
    with override_settings(MCP_DJANGO={"TOOL_OUTPUT_MAX_CHARS": 25}):
        result = await mcp_client(UNCAPPED).call_tool("long_text")
    assert result["_meta"][TRUNCATED] == {"shownChars": 25, "totalChars": 100}


async def test_blocks_past_the_cap_are_dropped(mcp_client: Callable[..., MCPTestClient]) -> None:
    result = await mcp_client(endpoint("caps-blocks", tool_output_max_chars=40)).call_tool("two_blocks")

    assert [block["type"] for block in result["content"]] == ["text"]
    assert result["content"][0]["text"].startswith("y" * 30 + "\n\n[Truncated by the server: 30 of ")


async def test_refuse_answers_an_error_saying_how_large_the_result_was(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    result = await mcp_client(REFUSING).call_tool("long_text")
    assert_tool_error(result, "The result of tool long_text is 100 characters, over this server.s limit of 10")


async def test_a_structured_result_over_its_cap_is_refused_even_when_truncating(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    result = await mcp_client(CAPPED).call_tool("structured")
    assert_tool_error(result, "The result of tool structured is")
    assert "structuredContent" not in result


@pytest.mark.parametrize("cap", [0, -1, 1.5, True, "10"])
def test_a_cap_that_is_not_a_positive_integer_is_refused_where_it_is_declared(cap: Any) -> None:
    def tool() -> str:
        """A tool."""
        return ""

    with pytest.raises(DeclarationError, match="max_output_chars must be a positive integer"):
        Tool(tool, max_output_chars=cap)
    with pytest.raises(ValueError, match="tool_output_max_chars must be a positive integer or None"):
        endpoint("caps-bad", tool_output_max_chars=cap)


def test_an_overflow_other_than_truncate_or_refuse_is_refused() -> None:
    with pytest.raises(ValueError, match="tool_output_overflow must be 'truncate', 'refuse' or None"):
        endpoint("caps-bad", tool_output_overflow="cut")


# -- a provider's or toolset's cap: for each of its tools without one of their own -----------------------


class LongProvider(ToolProvider):
    id = "output-caps-provider"
    max_output_chars = 25

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [{"name": "provided", "inputSchema": {"type": "object"}}]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        return LONG


class CappedBooks(ModelToolset):
    model = Book
    fields = ["id", "title"]
    actions = ["get"]
    basename = "capped_book"
    check_permissions = False
    max_output_chars = 30


async def test_a_provider_s_cap_bounds_each_of_its_tools(mcp_client: Callable[..., MCPTestClient]) -> None:
    provider = Endpoint(
        "caps-provider/mcp", name="caps-provider", mode="adapter", providers=[LongProvider], allow_anonymous=True
    )

    text = (await mcp_client(provider).call_tool("provided"))["content"][0]["text"]

    assert text.startswith("x" * 25 + "\n\n[Truncated by the server: 25 of 100 characters shown."), text


@pytest.mark.django_db(transaction=True)
async def test_a_toolset_s_cap_bounds_each_of_its_tools_without_one_of_their_own(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    book = await Book.objects.acreate(title="T" * 200, author="A", year=2020)
    toolset = Endpoint(
        "caps-toolset/mcp", name="caps-toolset", mode="adapter", providers=[CappedBooks], allow_anonymous=True
    )

    result = await mcp_client(toolset).call_tool("get_capped_book", {"id": book.pk})

    assert result.get("isError"), result  # structured content over its cap is refused, never cut
    assert "over this server's limit of 30" in result["content"][0]["text"]


@pytest.mark.parametrize("cap", [0, 1.5, True, "10"])
def test_a_provider_s_or_toolset_s_cap_that_is_not_a_positive_integer_is_check_e026(cap: Any) -> None:
    class BadProvider(LongProvider):
        id = "output-caps-bad"
        max_output_chars = cap

    class BadBooks(CappedBooks):
        max_output_chars = cap

    registry = ProviderRegistry()
    registry.add(BadProvider, origin="tests")
    toolset = BadBooks()

    expected = ("mcp_django.E026", "{}.max_output_chars must be a positive integer or None.")
    assert [(problem[0], problem[1]) for problem in registry.problems] == [
        (expected[0], expected[1].format("BadProvider"))
    ]
    assert [(problem[0], problem[1]) for problem in toolset.problems] == [(expected[0], expected[1].format("BadBooks"))]
    assert toolset.tools == {}
