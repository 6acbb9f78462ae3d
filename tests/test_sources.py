"""`DelegatingSource`: a wrapper serves what the wrapped source serves, and forwards all of the contract."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from mcp_django.endpoints import Endpoint
from mcp_django.mounts import Mounted
from mcp_django.overlay import NullOverlay
from mcp_django.registry import Registry
from mcp_django.scopes import Scope
from mcp_django.sources import DelegatingSource, Source
from mcp_django.testing import MCPTestClient

wrapped = Registry("wrapped-by-a-delegating-source")


@wrapped.tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


@wrapped.tool(scope=Scope.TEAM)
def whisper(text: str) -> str:
    """Say it softer (TEAM callers only)."""
    return text.lower()


@wrapped.resource("notes://{name}")
def note(name: str) -> str:
    """One note."""
    return f"note {name}"


@wrapped.prompt
def greet(who: str) -> str:
    """Greet someone."""
    return f"Hello {who}"


wrapped.freeze()


class Delegated(DelegatingSource[Source]):
    """A wrapper that changes nothing."""


class DelegatingOverlay(NullOverlay):
    """Serves every source through a `Delegated` wrapper."""

    def wrap_sources(self, endpoint: Mounted, sources: Sequence[Source]) -> list[Source]:
        return [Delegated(source) for source in sources]


def test_a_delegating_source_forwards_every_method_and_attribute_of_the_source_contract() -> None:
    contract = {name for name in vars(Source) if not name.startswith("_")}

    assert contract - set(vars(DelegatingSource)) == set()
    assert {"list_tools", "get_tool", "complete", "scope", "enabled", "permissions"} <= contract


@pytest.mark.django_db
async def test_an_endpoint_serving_wrapped_sources_answers_as_with_the_sources_themselves() -> None:
    async def answers(overlay: NullOverlay, scope: Scope) -> list[object]:
        endpoint = Endpoint("delegated/mcp", name="delegated", registry=wrapped, allow_anonymous=True, overlay=overlay)
        client = MCPTestClient(endpoint, era="stateless", scope=scope)
        return [
            sorted(tool["name"] for tool in await client.list_tools()),
            await client.call_tool("shout", {"text": "hi"}),
            await client.request("resources/read", {"uri": "notes://a"}),
            await client.request("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}}),
            await client.request(
                "completion/complete",
                {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "A"}},
            ),
        ]

    for scope in (Scope.USER, Scope.TEAM):
        assert await answers(DelegatingOverlay(), scope) == await answers(NullOverlay(), scope)
    assert (await answers(DelegatingOverlay(), Scope.USER))[0] == ["shout"]
    assert (await answers(DelegatingOverlay(), Scope.TEAM))[0] == ["shout", "whisper"]
