"""`DelegatingSource`: a wrapper serves what the wrapped source serves, and forwards all of the contract; and
`CompositeBackend` asks only a namespaced source for a name in its namespace."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from mcp_django import Context, ToolProvider
from mcp_django.endpoints import Endpoint
from mcp_django.endpoints.mounts import Mounted
from mcp_django.endpoints.overlay import NullOverlay
from mcp_django.exceptions import MCPCallError
from mcp_django.extensions import Extension
from mcp_django.protocol.context import RequestContext
from mcp_django.registry import Registry
from mcp_django.scopes import Scope
from mcp_django.sources import Source
from mcp_django.sources.delegating import DelegatingSource
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


# -- one lookup: a namespaced name goes straight to the source whose namespace it is in --------------

asked: list[str] = []


class Local(ToolProvider):
    """A local provider that notes every time it is asked for its tools."""

    id = "local-asked"

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        asked.append("local")
        return [{"name": "here", "inputSchema": {"type": "object"}}]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        return "local"


class Remote:
    """A tool of the namespaced source."""

    param_headers: dict[str, str] = {}

    async def call(self, arguments: Any, request: Any) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "remote"}]}


class Namespaced(Source):
    """A source under the namespace `gh`, as a hub's remote server is."""

    namespace = "gh"

    def capabilities(self) -> dict[str, Any]:
        return {"tools": {}}

    async def list_tools(self, ctx: RequestContext, scope: Scope) -> list[dict[str, Any]]:
        asked.append("gh")
        return [{"name": "gh_there", "inputSchema": {"type": "object"}}]

    def tool_component(self, item: Any) -> Remote:
        return Remote()


class NamespacedExtension(Extension):
    identifier = "tests/namespaced"

    def sources(self, endpoint: Any) -> Sequence[Source]:
        return [Namespaced()]


@pytest.mark.django_db
@pytest.mark.parametrize("overlay", [NullOverlay(), DelegatingOverlay()], ids=["plain", "wrapped"])
async def test_a_namespaced_call_goes_straight_to_its_source_and_asks_no_local_one(overlay: NullOverlay) -> None:
    endpoint = Endpoint(
        "ns/mcp",
        name="ns",
        mode="adapter",
        providers=[Local],
        extensions=[NamespacedExtension],
        overlay=overlay,
        allow_anonymous=True,
    )
    client = MCPTestClient(endpoint, era="stateless")
    asked.clear()

    remote = await client.call_tool("gh_there")
    assert asked == ["gh"]
    local = await client.call_tool("here")
    assert asked == ["gh", "local"]
    assert [remote["content"][0]["text"], local["content"][0]["text"]] == ["remote", "local"]
    with pytest.raises(MCPCallError, match="Unknown tool: gh_here"):
        await client.call_tool("gh_here")  # inside the namespace: its source is asked first
    # the lookup asks gh alone; a listener of refusals (telemetry's, once installed) may then list the others
    assert asked[2] == "gh"


switches_read: list[str] = []


class Switched(DelegatingSource[Source]):
    """A wrapper whose switch notes every read, as the admin's overlay reads its state."""

    @property
    def enabled(self) -> bool:  # type: ignore[override]  # as the admin's overlay: a property over the attribute
        switches_read.append(self.source.namespace or "local")
        return True


class SwitchedOverlay(NullOverlay):
    def wrap_sources(self, endpoint: Mounted, sources: Sequence[Source]) -> list[Source]:
        return [Switched(source) for source in sources]


@pytest.mark.django_db
async def test_a_namespaced_call_reads_no_other_source_s_switch() -> None:
    endpoint = Endpoint(
        "switched/mcp",
        name="switched",
        mode="adapter",
        providers=[Local],
        extensions=[NamespacedExtension],
        overlay=SwitchedOverlay(),
        allow_anonymous=True,
    )
    client = MCPTestClient(endpoint, era="stateless")
    await client.call_tool("here")
    switches_read.clear()

    await client.call_tool("gh_there")
    assert switches_read == ["gh"]
    await client.call_tool("here")
    assert sorted(switches_read) == ["gh", "gh", "local"]  # a name outside every namespace: all are reached
