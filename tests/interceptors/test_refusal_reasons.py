"""A refusal the model can act on: the built-in limits say why a call was refused and when to try again."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache

from mcp_django.interceptors.hook import REFUSED_TOOL_CALL
from mcp_django.testing import MCPCallError
from tests.interceptors import support
from tests.interceptors.test_endpoints import client, text_of
from tests.interceptors.tools import RECEIVED

LIMIT = {"CLASS": "mcp_django.interceptors.limits.RateLimitInterceptor", "OPTIONS": {"calls": 2, "per_seconds": 3600}}
SIZE = {"CLASS": "mcp_django.interceptors.limits.ArgumentSizeInterceptor", "OPTIONS": {"max_bytes": 20}}


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    cache.clear()
    RECEIVED.clear()
    yield
    cache.clear()
    RECEIVED.clear()


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_rate_limited_call_says_so_and_when_to_try_again(era: str) -> None:
    mcp = client([LIMIT], era=era)
    for _ in range(2):
        assert not (await mcp.call_tool("echo", {"text": "hi"})).get("isError")

    refused = await mcp.call_tool("echo", {"text": "hi"})

    assert refused["isError"] is True
    text = text_of(refused)
    found = re.fullmatch(
        r"The server refused this tool call: rate limit reached: at most 2 calls of 'echo' every 3600 seconds\. "
        r"Try again in (\d+) seconds\.",
        text,
    )
    assert found is not None, text
    assert 1 <= int(found.group(1)) <= 3600
    assert RECEIVED == ["hi", "hi"]


async def test_an_oversized_call_says_how_large_it_may_be() -> None:
    refused = await client([SIZE]).call_tool("echo", {"text": "x" * 40})

    assert text_of(refused) == ("The server refused this tool call: the arguments are 51 bytes long; send at most 20.")


async def test_a_refused_prompt_carries_the_reason_in_the_errors_data() -> None:
    with pytest.raises(MCPCallError) as raised:
        await client([SIZE]).get_prompt("greet", {"name": "x" * 40})

    assert raised.value.message == "Invalid params: refused by the server's policy"
    assert raised.value.data == {"reason": "the arguments are 51 bytes long; send at most 20"}


async def test_a_refusal_without_a_reason_stays_generic() -> None:
    refuse: dict[str, Any] = {"CLASS": support.Verdict, "EVENTS": ["tools/call"], "OPTIONS": {"valid": False}}

    refused = await client([refuse]).call_tool("echo", {"text": "hi"})

    assert text_of(refused) == REFUSED_TOOL_CALL


async def test_a_call_refused_because_a_check_timed_out_says_to_try_again() -> None:
    hang = {"CLASS": support.Hang, "EVENTS": ["tools/call"], "TIMEOUT": 0.02}

    refused = await client([hang]).call_tool("echo", {"text": "hi"})

    assert text_of(refused) == (
        "The server refused this tool call: the server's checks of this call did not finish in time; try again shortly."
    )
