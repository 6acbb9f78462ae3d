"""A URLconf for the `Mcp-Param-*` tests: one tool with `x-mcp-header` arguments, served from each kind of source.

`/registry/mcp` declares it on a registry, `/provider/mcp` has a `ToolProvider` list it, `/toolset/mcp` a
`Toolset` build it, and `/extension/mcp` an extension contribute it as a source of its own; on
`/rewritten/mcp` an interceptor moves every call to `moon` on its way in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated, Any

from django.urls import URLPattern
from pydantic import Field

from mcp_django import Context, Registry, ToolProvider
from mcp_django.declarations import Tool
from mcp_django.extensions import Extension
from mcp_django.interceptors import Invocation, MutationInterceptor, MutationResult
from mcp_django.providers.base import Provider
from mcp_django.sources import Source
from mcp_django.toolsets import Toolset
from mcp_django.urls import endpoint

REGION = {"type": "string", "x-mcp-header": "Region"}
SCHEMA = {"type": "object", "properties": {"region": REGION, "text": {"type": "string"}}}


def where(
    region: Annotated[str | None, Field(json_schema_extra={"x-mcp-header": "Region"})] = None, text: str = ""
) -> str:
    """Say where the call ran."""
    return f"ran in {region}"


declared = Registry("param-headers")
declared.add_tool(Tool(where))
contributed = Registry("param-headers-extension")
contributed.add_tool(Tool(where))


class RegionProvider(ToolProvider):
    """A provider whose one tool mirrors `region` into `Mcp-Param-Region`."""

    id = "regions"

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [{"name": "where", "description": "Say where the call ran.", "inputSchema": SCHEMA}]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        return f"ran in {arguments.get('region')}"


class RegionToolset(Toolset):
    """A toolset whose one tool mirrors `region` into `Mcp-Param-Region`."""

    def build_tools(self) -> Iterable[Tool]:
        return [Tool(where)]


class RegionExtension(Extension):
    """An extension that serves the tool from a source of its own."""

    identifier = "tests/regions"

    def sources(self, endpoint: Any) -> Sequence[Source]:
        return [contributed.source()]


class ToTheMoon(MutationInterceptor):
    """Rewrites `region` to `moon` on the way in."""

    name = "to-the-moon"
    events = ("tools/call",)
    phases = ("request",)

    async def mutate(self, invocation: Invocation) -> MutationResult:
        payload = dict(invocation.payload)
        payload["arguments"] = {**payload.get("arguments", {}), "region": "moon"}
        return MutationResult(modified=True, payload=payload)


def adapter(kind: str, provider: type[Provider]) -> list[URLPattern]:
    """The endpoint `/<kind>/mcp`, serving `provider` alone."""
    return endpoint(
        f"{kind}/mcp", name=f"ph-{kind}", mode="adapter", providers=[provider], allow_anonymous=True, interceptors=[]
    )


urlpatterns = [
    *endpoint("registry/mcp", name="ph-registry", registry=declared, allow_anonymous=True, interceptors=[]),
    *adapter("provider", RegionProvider),
    *adapter("toolset", RegionToolset),
    *endpoint(
        "extension/mcp",
        name="ph-extension",
        registry=Registry("param-headers-empty"),
        extensions=[RegionExtension],
        allow_anonymous=True,
        interceptors=[],
    ),
    *endpoint(
        "rewritten/mcp",
        name="ph-rewritten",
        registry=declared,
        allow_anonymous=True,
        interceptors=["tests.param_header_urls.ToTheMoon"],
    ),
]
